# Loader tests: MPI runs on a dataset packed at test time into a fresh directory.
set(_lt $<TARGET_FILE:test_loader>)
ingot_add_test(NAME mpi.loader_exactly_once LABELS mpi
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/loader.sh ${MPIEXEC_EXECUTABLE} ${_lt} exactly-once)
ingot_add_test(NAME mpi.loader_resume_4_to_2 LABELS mpi
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/loader.sh ${MPIEXEC_EXECUTABLE} ${_lt} resume)
ingot_add_test(NAME mpi.loader_two_loaders LABELS mpi
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/loader.sh ${MPIEXEC_EXECUTABLE} ${_lt} two-loaders)
ingot_add_test(NAME mpi.loader_bad_batch LABELS mpi
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/loader.sh ${MPIEXEC_EXECUTABLE} ${_lt} bad-batch)

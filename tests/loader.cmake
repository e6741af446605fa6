# Loader tests: MPI runs on a dataset packed at test time into a fresh directory.
set(_lt $<TARGET_FILE:test_loader>)
ingot_add_test(NAME mpi.loader_exactly_once LABELS mpi
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/loader.sh ${MPIEXEC_EXECUTABLE} ${_lt} exactly-once)
ingot_add_test(NAME mpi.loader_resume_4_to_2 LABELS mpi
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/loader.sh ${MPIEXEC_EXECUTABLE} ${_lt} resume)
ingot_add_test(NAME mpi.loader_two_loaders LABELS mpi
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/loader.sh ${MPIEXEC_EXECUTABLE} ${_lt} two-loaders)
if(INGOT_FAULT_INJECTION)
  ingot_add_test(NAME mpi.loader_manifest_eio LABELS mpi
                 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/loader.sh ${MPIEXEC_EXECUTABLE} ${_lt} manifest-eio)
endif()
ingot_add_test(NAME mpi.loader_bad_batch LABELS mpi
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/loader.sh ${MPIEXEC_EXECUTABLE} ${_lt} bad-batch)

# This unit test starts MPI in-process (singleton): Open MPI's own allocations are reported as
# leaks at exit (its plugins are unloaded, so they cannot be suppressed by name). Leak
# detection is off for it alone; ASan still checks every access (overflows, use after free).
set_property(TEST unit.test_loader_faults APPEND PROPERTY ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")

foreach(mode e2e stall fmnist epochs budget)
  ingot_add_test(NAME app.ingot_bench_${mode} LABELS mpi
                 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/apps/ingot_bench.sh ${MPIEXEC_EXECUTABLE}
                         $<TARGET_FILE:ingot-bench> $<TARGET_FILE:ingot-manifest> ${mode})
endforeach()

# The same fault and content tests with O_DIRECT reads (aligned staging windows, no scatter).
ingot_add_test(NAME unit.test_loader_faults_direct LABELS unit
               COMMAND test_loader_faults ENV INGOT_DIRECT_IO=y ASAN_OPTIONS=detect_leaks=0)
# MPI singleton in-process, as unit.test_loader_faults: Open MPI's allocations are not leaks.
set_property(TEST unit.test_loader_deadline APPEND PROPERTY ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")

# Two namespaces as hosts, 2 ranks + 1: the same collective calls on nodes of any rank count.
ingot_add_test(NAME mpi.uneven_nodes LABELS mpi TIMEOUT 180
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/uneven_nodes.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:ingot-bench> ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(mpi.uneven_nodes PROPERTIES RESOURCE_LOCK netns)

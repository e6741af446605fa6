# Collectives: the all-reduce and gradient buckets on the MPI backend, at 1 to 4 ranks.
foreach(np 1 2 3 4)
  ingot_add_mpi_test(NAME coll.exact_np${np} NP ${np} COMMAND $<TARGET_FILE:test_allreduce> exact)
endforeach()
ingot_add_mpi_test(NAME coll.buckets NP 4 COMMAND $<TARGET_FILE:test_allreduce> buckets)
ingot_add_mpi_test(NAME coll.buckets_np3 NP 3 COMMAND $<TARGET_FILE:test_allreduce> buckets)
ingot_add_mpi_test(NAME coll.bad NP 4 COMMAND $<TARGET_FILE:test_allreduce> bad)
# Faults (INGOT_TIMEOUT=5s): a stopped rank, with the trainer's MPI_Abort and with only the
# watchdog; a killed rank (the launcher). Each bounded; see coll_fault.sh.
set(_cf ${CMAKE_CURRENT_SOURCE_DIR}/mpi/coll_fault.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_allreduce>)
ingot_add_test(NAME coll.fault_stop LABELS mpi COMMAND ${_cf} stop 12
  "all-reduce \\(8388608 x float32 sum, request 0, mpi backend, 4 ranks\\) not complete after 5.0 s"
  "ending the job")
ingot_add_test(NAME coll.fault_stop_watchdog LABELS mpi COMMAND ${_cf} stop-finalize 20
  "not complete after 5.0 s"
  "watchdog: MPI_Finalize \\(ingot_finalize\\) on rank [0-2] .* has not returned after 5.[0-9] s")
ingot_add_test(NAME coll.fault_kill LABELS mpi COMMAND ${_cf} kill 10 "killing myself")
# Two emulated nodes of 2 ranks (network namespaces): shared memory within, tcp between.
ingot_add_test(NAME coll.two_nodes LABELS mpi TIMEOUT 240
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/coll_nodes.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:test_allreduce> ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(coll.two_nodes PROPERTIES RESOURCE_LOCK netns)
# One rank in-process (an MPI singleton), so the sanitizer tiers (label unit) check the progress
# thread against the trainer's calls.
foreach(mode exact buckets bad)
  ingot_add_test(NAME unit.coll_${mode} LABELS unit COMMAND test_allreduce ${mode}
                 ENV ASAN_OPTIONS=detect_leaks=0)
endforeach()
ingot_add_mpi_test(NAME coll.exact_serialized NP 2 COMMAND $<TARGET_FILE:test_allreduce> exact-serialized)
# By hand (docs/collectives.md): Open MPI's all-reduce flavours, the reason for the ring.
add_executable(mpi_allreduce_modes ${CMAKE_CURRENT_SOURCE_DIR}/perf/mpi_allreduce_modes.c)
target_link_libraries(mpi_allreduce_modes PRIVATE MPI::MPI_C)

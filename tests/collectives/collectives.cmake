# collectives (tests/collectives/<module>/): the all-reduce and gradient buckets on the MPI
# backend at 1 to 4 ranks, faults (a stopped rank, with the trainer's MPI_Abort and with only the
# watchdog; a killed rank), two emulated nodes, one rank in-process (so the sanitizer tiers check
# the progress thread against the trainer's calls), and the NCCL backend on one GPU.
set(_c ${INGOT_TESTS}/collectives)
ingot_test_exe(test_allreduce ${_c}/engine/test_allreduce.c)
foreach(np 1 2 3 4)
  ingot_add_mpi_test(NAME collectives.engine.exact_np${np} NP ${np}
                     COMMAND $<TARGET_FILE:test_allreduce> exact)
endforeach()
ingot_add_mpi_test(NAME collectives.engine.exact_serialized NP 2
                   COMMAND $<TARGET_FILE:test_allreduce> exact-serialized)
ingot_add_mpi_test(NAME collectives.buckets.reduce NP 4 COMMAND $<TARGET_FILE:test_allreduce> buckets)
ingot_add_mpi_test(NAME collectives.buckets.reduce_np3 NP 3 COMMAND $<TARGET_FILE:test_allreduce> buckets)
ingot_add_mpi_test(NAME collectives.engine.bad NP 4 COMMAND $<TARGET_FILE:test_allreduce> bad)
# (engine/coll_fault.sh: each time taken from the line the faulty rank prints before it stops
# or dies, bounded by INGOT_TIMEOUT plus slack; the job's end only by a hang timeout)
set(_cf ${_c}/engine/coll_fault.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_allreduce>)
ingot_add_test(NAME collectives.engine.fault_stop LABELS mpi COMMAND ${_cf} stop)
ingot_add_test(NAME collectives.engine.fault_stop_watchdog LABELS mpi COMMAND ${_cf} stop-finalize)
ingot_add_test(NAME collectives.engine.fault_kill LABELS mpi COMMAND ${_cf} kill)
ingot_add_test(NAME collectives.engine.two_nodes LABELS mpi slow TIMEOUT 240
               COMMAND ${_c}/engine/coll_nodes.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:test_allreduce> ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(collectives.engine.two_nodes PROPERTIES RESOURCE_LOCK netns)
ingot_unit_test(NAME collectives.engine.exact_singleton SRC ${_c}/engine/test_allreduce.c ARGS exact
                ENV ASAN_OPTIONS=detect_leaks=0)
ingot_unit_test(NAME collectives.buckets.singleton SRC ${_c}/engine/test_allreduce.c ARGS buckets
                ENV ASAN_OPTIONS=detect_leaks=0)
ingot_unit_test(NAME collectives.engine.bad_singleton SRC ${_c}/engine/test_allreduce.c ARGS bad
                ENV ASAN_OPTIONS=detect_leaks=0)
# The NCCL backend on one GPU (singleton rank): exact reductions in every dtype, device buckets,
# the MPI backend staging device gradients, and the abort path with a stream that never drains.
ingot_test_exe(test_nccl_coll ${_c}/backend_nccl/test_nccl_coll.c)
foreach(mode exact staged abort)
  ingot_add_test(NAME collectives.backend_nccl.${mode} LABELS gpu COMMAND test_nccl_coll ${mode}
                 ENV ASAN_OPTIONS=detect_leaks=0 INGOT_TIMEOUT=3s)
endforeach()
# By hand (docs/collectives.md): Open MPI's all-reduce flavours, the reason for the ring.
add_executable(mpi_allreduce_modes ${INGOT_TESTS}/perf/mpi_allreduce_modes.c)
target_link_libraries(mpi_allreduce_modes PRIVATE MPI::MPI_C)

# MPI tests of the context (4 ranks, oversubscribed).
ingot_add_mpi_test(NAME mpi.init NP 4 COMMAND $<TARGET_FILE:test_init> ok)
ingot_add_mpi_test(NAME mpi.init_self_mpi NP 4 COMMAND $<TARGET_FILE:test_init> self-mpi)
ingot_add_test(NAME mpi.config_mismatch LABELS mpi
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/config_mismatch.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:test_init>)
# The watchdog: a rank stopped mid-epoch leaves the others in the node window's MPI_Win_free at
# loader destroy; they end past INGOT_TIMEOUT=5s instead of spinning forever.
ingot_add_test(NAME mpi.watchdog_loader_destroy LABELS mpi TIMEOUT 90
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/mpi/stop_loader.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:ingot-bench> ${CMAKE_CURRENT_BINARY_DIR})

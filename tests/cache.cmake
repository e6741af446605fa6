# The peer cache (tests/mpi/test_cache.c through tests/cache/*.sh): 4 ranks on one node with
# each transport set, and on two emulated nodes.
ingot_add_test(NAME cache.node LABELS mpi TIMEOUT 240
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cache/cache.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:test_cache> ${CMAKE_CURRENT_BINARY_DIR} node)
ingot_add_test(NAME cache.two_nodes LABELS mpi TIMEOUT 240
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cache/cache.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:test_cache> ${CMAKE_CURRENT_BINARY_DIR} nodes)
set_tests_properties(cache.two_nodes PROPERTIES RESOURCE_LOCK netns)
# Faults (tests/cache/faults.sh; INGOT_TIMEOUT=5s, INGOT_PEER_TIMEOUT=2s): a rank stopped and
# continued, stopped for good, stopped at create and at destroy, killed, on tcp and on shared
# memory; bad input. Each case prints its detection time.
set(_cache_faults "stop-storage tcp,self" "stop-storage posix,cma,self" "stop-abort tcp,self"
    "stop-abort posix,cma,self" "stop-create" "stop-destroy" "kill tcp,self"
    "kill posix,cma,self" "small" "memavail" "unreachable" "device" "fetch-device"
    "stop-storage tcp,self put" "stop-abort tcp,self put")
if(INGOT_FAULT_INJECTION)
  list(APPEND _cache_faults "corrupt" "refused" "refused tcp,self put" "bad-key")
endif()
foreach(f ${_cache_faults})
  separate_arguments(_args UNIX_COMMAND "${f}")
  string(REPLACE " " "_" _name "${f}")
  string(REPLACE "," "_" _name "${_name}")
  ingot_add_test(NAME cache.fault_${_name} LABELS mpi TIMEOUT 120
                 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cache/faults.sh ${MPIEXEC_EXECUTABLE}
                         $<TARGET_FILE:test_cache> ${CMAKE_CURRENT_BINARY_DIR} ${_args})
endforeach()
# Peer fetch throughput (tests/perf/cache_perf.sh runs it by hand).
ingot_test_exe(cache_fetch ${CMAKE_CURRENT_SOURCE_DIR}/perf/cache_fetch.c)
# ingot-info -t under mpirun names each rank's path to every other.
ingot_add_test(NAME cache.info_paths LABELS mpi
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/cache/info_paths.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:ingot-info>)
# The put protocol after the reader's peer released its destinations (end of a run), on tcp and
# on shared memory.
ingot_test_exe(test_put_release ${CMAKE_CURRENT_SOURCE_DIR}/cache/test_put_release.c)
foreach(tls "tcp,self" "posix,cma,self")
  string(REPLACE "," "_" _name "${tls}")
  ingot_add_mpi_test(NAME cache.put_release_${_name} NP 2 ENV INGOT_PEER_PROTOCOL=put UCX_TLS=${tls}
                     COMMAND $<TARGET_FILE:test_put_release>)
endforeach()

# source (tests/source/<module>/): the byte-source interface, POSIX files and the emulated store;
# the peer cache on 4 ranks (one node with each transport set, two emulated nodes) and its faults
# (tests/source/cache/faults.sh: a rank stopped and continued, stopped for good, stopped at create
# and at destroy, killed, on tcp and on shared memory; bad input); the object store
# (tests/source/objstore/: the byte source over the client, end to end; the client's own tests are
# tests/client/).
set(_s ${INGOT_TESTS}/source)
ingot_unit_test(NAME source.source.chain SRC ${_s}/source/test_source.c)
# The tiers' planning from facts alone, in a process without MPI (source/tier.h).
ingot_unit_test(NAME source.tier.plan SRC ${_s}/tier/test_plan.c)
ingot_test_exe(test_cache ${_s}/cache/test_cache.c)
ingot_add_test(NAME source.cache.node LABELS mpi slow TIMEOUT 240
               COMMAND ${_s}/cache/cache.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_cache>
                       ${CMAKE_CURRENT_BINARY_DIR} node)
ingot_add_test(NAME source.cache.two_nodes LABELS mpi slow TIMEOUT 240
               COMMAND ${_s}/cache/cache.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_cache>
                       ${CMAKE_CURRENT_BINARY_DIR} nodes)
set_tests_properties(source.cache.two_nodes PROPERTIES RESOURCE_LOCK netns)
# Faults (INGOT_TIMEOUT=5s, INGOT_PEER_TIMEOUT=2s); each case prints its detection time.
set(_cache_faults "stop-storage tcp,self" "stop-storage posix,cma,self" "stop-abort tcp,self"
    "stop-abort posix,cma,self" "stop-create" "stop-destroy" "kill tcp,self"
    "kill posix,cma,self" "small" "memavail" "unreachable" "device" "fetch-device"
    "stop-storage tcp,self put" "stop-abort tcp,self put")
if(INGOT_FAULT_INJECTION)
  list(APPEND _cache_faults "corrupt" "refused" "refused tcp,self put" "bad-key" "stop-arrived")
endif()
foreach(f ${_cache_faults})
  separate_arguments(_args UNIX_COMMAND "${f}")
  string(REPLACE " " "_" _name "${f}")
  string(REPLACE "," "_" _name "${_name}")
  string(REPLACE "-" "_" _name "${_name}")
  ingot_add_test(NAME source.cache.fault_${_name} LABELS mpi TIMEOUT 120
                 COMMAND ${_s}/cache/faults.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_cache>
                         ${CMAKE_CURRENT_BINARY_DIR} ${_args})
endforeach()
if(EXISTS ${_s}/objstore/objstore.cmake)
  include(${_s}/objstore/objstore.cmake)
endif()
# The node's disk tier (tests/source/disk/): entries, folder and policy (unit), and through the
# loader on 1 to 4 ranks (disk.sh: one job after another, world sizes, faults, two nodes).
ingot_unit_test(NAME source.disk.entries SRC ${_s}/disk/test_entry.c)
# Fuzzed: the entries' names and headers as a scan and a read find them, the folder's ledger.
ingot_fuzz_target(NAME source.disk.entry SRC ${_s}/disk/fuzz_disk_entry.c
                  CORPUS ${_s}/disk/entry_corpus)
ingot_fuzz_target(NAME source.disk.ledger SRC ${_s}/disk/fuzz_ledger.c
                  CORPUS ${_s}/disk/ledger_corpus)
ingot_unit_test(NAME source.disk.policy SRC ${_s}/disk/test_policy.c)
# A destroy with a long queue of fills, the ledger held by another process: one INGOT_TIMEOUT.
ingot_unit_test(NAME source.disk.destroy_bound SRC ${_s}/disk/test_destroy.c
                ENV ASAN_OPTIONS=detect_leaks=0)
# Several readers through the tier in one process (MPI singleton): the tsan tier's race check.
ingot_unit_test(NAME source.disk.threads SRC ${_s}/disk/test_disk_threads.c
                ENV ASAN_OPTIONS=detect_leaks=0)
# The same with pieces assembled from the misses' parts (the keeper's slots, its completing reads).
ingot_unit_test(NAME source.disk.threads_parts SRC ${_s}/disk/test_disk_threads.c
                ENV ASAN_OPTIONS=detect_leaks=0 INGOT_DISK_CACHE_FILL=parts)
ingot_test_exe(test_disk ${_s}/disk/test_disk.c)
set(_disk_cases "jobs default" "jobs tcp,self" "jobs posix,cma,self" "small" "readonly" "missing" "corrupt"
    "kill" "scan_mid_fill" "two_jobs" "budgets" "erofs_mount" "budget_piece" "modes" "parts" "folder_group"
    "folder_world" "folder_link_own" "folder_link_else" "folder_fanout" "folder_foreign" "shared")
if(INGOT_FAULT_INJECTION)
  list(APPEND _disk_cases "enospc" "nfs" "enospc_mid" "edquot" "erofs" "busy_keeper" "kill_keeper")
endif()
foreach(c ${_disk_cases})
  separate_arguments(_args UNIX_COMMAND "${c}")
  string(REGEX REPLACE "[ ,-]" "_" _name "${c}")
  string(REPLACE "_default" "" _name "${_name}")
  ingot_add_test(NAME source.disk.${_name} LABELS mpi TIMEOUT 120
                 COMMAND ${_s}/disk/disk.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_disk>
                         ${CMAKE_CURRENT_BINARY_DIR} ${_args})
endforeach()
# four jobs of 4 ranks over 125 MB on a 60 MiB tmpfs (root; skipped otherwise)
ingot_add_test(NAME source.disk.room LABELS mpi TIMEOUT 300
               COMMAND ${_s}/disk/disk.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_disk>
                       ${CMAKE_CURRENT_BINARY_DIR} room)
ingot_add_test(NAME source.disk.two_nodes LABELS mpi TIMEOUT 180
               COMMAND ${_s}/disk/disk.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_disk>
                       ${CMAKE_CURRENT_BINARY_DIR} nodes)
set_tests_properties(source.disk.two_nodes PROPERTIES RESOURCE_LOCK netns)
# The disk tier's start-up scan, timed by hand (tests/perf/disk_perf.sh scan); not a test.
ingot_test_exe(disk_scan ${INGOT_TESTS}/perf/disk_scan.c)

# base (tests/base/<module>/): the INGOT_* parser and registry, fault injection, logging and its
# holds, locations (the one parser of paths and URLs), memory, the thread pool, the rings, status
# codes and the error boundary, the watchdog.
set(_b ${INGOT_TESTS}/base)
ingot_unit_test(NAME base.config.parse SRC ${_b}/config/test_config.c)
ingot_fuzz_target(NAME base.config SRC ${_b}/config/fuzz_config.c CORPUS ${_b}/config/corpus)
ingot_unit_test(NAME base.fault.sites SRC ${_b}/fault/test_fault.c)
ingot_unit_test(NAME base.location.parse SRC ${_b}/location/test_location.c)
ingot_fuzz_target(NAME base.location SRC ${_b}/location/fuzz_location.c CORPUS ${_b}/location/corpus)
ingot_unit_test(NAME base.log.lines SRC ${_b}/log/test_log.c)
ingot_unit_test(NAME base.mem.alloc SRC ${_b}/mem/test_mem.c)
ingot_unit_test(NAME base.pool.threads SRC ${_b}/pool/test_pool.c)
ingot_unit_test(NAME base.ring.queues SRC ${_b}/ring/test_ring.c)
ingot_unit_test(NAME base.status.strings SRC ${_b}/status/test_status.c)
ingot_unit_test(NAME base.watchdog.fire SRC ${_b}/watchdog/test_watchdog.c)

# topology (tests/topology/<module>/): discovery's bad inputs, the placement plan over every
# fixture, and node grouping over MPI (4 ranks, this machine and the DGX-like fixture through
# INGOT_TOPOLOGY_XML). The ingot-topo command line is tested with the apps (apps.topo.*).
set(_t ${INGOT_TESTS}/topology)
# Both discover this machine: hwloc's plugins load libraries with dynamic TLS of their own. GCC 12's
# ASan intercepts __tls_get_addr to hand those blocks to LeakSanitizer as roots, and about one run
# in 200 its record holds a range that is not mapped ("DTLS 13 at 0x4a2-0x4000015a4" with
# LSAN_OPTIONS=verbosity=1:log_threads=1): the leak check at exit faults ("Tracer caught signal
# 11") though nothing leaked; CI failed so once. Without the interception LeakSanitizer has fewer
# roots, so it may report more, never less. (ASan ignores an __asan_default_options() that the
# executable does not export, so it is set here.)
set(_topo_asan ASAN_OPTIONS=intercept_tls_get_addr=0)
ingot_unit_test(NAME topology.discover.bad SRC ${_t}/discover/test_topo_bad.c ENV ${_topo_asan})
ingot_unit_test(NAME topology.plan.fixtures SRC ${_t}/plan/test_topo_plan.c ENV ${_topo_asan})
ingot_test_exe(test_topo_node ${_t}/node/test_topo_node.c)
ingot_add_mpi_test(NAME topology.node.group NP 4 TIMEOUT 60 COMMAND $<TARGET_FILE:test_topo_node>)
ingot_add_mpi_test(NAME topology.node.group_dgx NP 4 TIMEOUT 60 COMMAND $<TARGET_FILE:test_topo_node>
                   ENV INGOT_TOPOLOGY_XML=${INGOT_TESTS}/fixtures/topology/dgx-h100.xml)
# The plan benchmark (tests/perf, run by hand; figures in docs/topology.md).
ingot_test_exe(topo_plan_bench ${INGOT_TESTS}/perf/topo_plan_bench.c)

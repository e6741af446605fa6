# topology (tests/topology/<module>/): discovery's bad inputs, the placement plan over every
# fixture, and node grouping over MPI (4 ranks, this machine and the DGX-like fixture through
# INGOT_TOPOLOGY_XML). The ingot-topo command line is tested with the apps (apps.topo.*).
set(_t ${INGOT_TESTS}/topology)
ingot_unit_test(NAME topology.discover.bad SRC ${_t}/discover/test_topo_bad.c)
ingot_unit_test(NAME topology.plan.fixtures SRC ${_t}/plan/test_topo_plan.c)
ingot_test_exe(test_topo_node ${_t}/node/test_topo_node.c)
ingot_add_mpi_test(NAME topology.node.group NP 4 TIMEOUT 60 COMMAND $<TARGET_FILE:test_topo_node>)
ingot_add_mpi_test(NAME topology.node.group_dgx NP 4 TIMEOUT 60 COMMAND $<TARGET_FILE:test_topo_node>
                   ENV INGOT_TOPOLOGY_XML=${INGOT_TESTS}/fixtures/topology/dgx-h100.xml)
# The plan benchmark (tests/perf, run by hand; figures in docs/topology.md).
ingot_test_exe(topo_plan_bench ${INGOT_TESTS}/perf/topo_plan_bench.c)

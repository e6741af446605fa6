# Topology tests beyond the auto-registered unit tests: MPI node grouping on 4 ranks (this
# machine, and the DGX-like fixture through INGOT_TOPOLOGY_XML), and the ingot-topo CLI with
# its JSON parsed by Python.
set(_topo_fixtures ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/topology)

ingot_add_mpi_test(NAME mpi.topo_node NP 4 TIMEOUT 60 COMMAND $<TARGET_FILE:test_topo_node>)
ingot_add_mpi_test(NAME mpi.topo_node_dgx NP 4 TIMEOUT 60 COMMAND $<TARGET_FILE:test_topo_node>
                   ENV INGOT_TOPOLOGY_XML=${_topo_fixtures}/dgx-h100.xml)

ingot_add_test(NAME cli.topo LABELS cli TIMEOUT 60
               COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/topology/topo_cli.sh $<TARGET_FILE:ingot-topo>
                       ${_topo_fixtures} ${INGOT_MPIRUN} ${MPIEXEC_EXECUTABLE})

# The plan benchmark (tests/perf, run by hand; figures in docs/topology.md).
ingot_test_exe(topo_plan_bench ${CMAKE_CURRENT_SOURCE_DIR}/perf/topo_plan_bench.c)

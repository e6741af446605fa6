# The object-store byte source and everything over it, end to end (e2e.py CASE): manifests over
# buckets through the tools, the byte source itself (it_source.c), the loader over a bucket on 2
# ranks, faults, the peer cache, training, Python, the part cache a node's ranks share
# (nodeparts), the dealt order resumed on other layouts of emulated nodes (dealt_resume, under
# tests/netns/nodes.sh: the lock netns too): source.objstore.<case>. Each starts its own
# servers on loopback (the client's test servers, tests/client/objstore/) under the lock
# objstore_ports and the environment of tests/client/client.cmake.
set(_os_dir ${CMAKE_CURRENT_LIST_DIR})
ingot_test_exe(it_source ${_os_dir}/it_source.c)
target_include_directories(it_source PRIVATE ${INGOT_TESTS}/common)

set(_os_e2e ${INGOT_TEST_PYTHON} ${_os_dir}/e2e.py --build ${PROJECT_BINARY_DIR}
            --mpiexec ${MPIEXEC_EXECUTABLE} --apps ${PROJECT_BINARY_DIR}/apps)
set(_os_e2e_slow manifest faults source landing)
set(_os_e2e_mpi loader ranks cache train python nodeparts dealt_resume)
foreach(_c ${_os_e2e_slow})
  ingot_add_test(NAME source.objstore.${_c} LABELS slow TIMEOUT 240 ENV ${INGOT_OBJSTORE_TEST_ENV}
                 COMMAND ${_os_e2e} ${_c})
endforeach()
foreach(_c ${_os_e2e_mpi})
  ingot_add_test(NAME source.objstore.${_c} LABELS mpi TIMEOUT 300 ENV ${INGOT_OBJSTORE_TEST_ENV}
                 COMMAND ${_os_e2e} ${_c})
endforeach()
foreach(_t ${_os_e2e_slow} ${_os_e2e_mpi})
  set_tests_properties(source.objstore.${_t} PROPERTIES RESOURCE_LOCK objstore_ports)
endforeach()
set_tests_properties(source.objstore.dealt_resume PROPERTIES RESOURCE_LOCK "objstore_ports;netns"
                     SKIP_RETURN_CODE 77)

# The locality order's statistical cost on a manifest's labels (tests/perf/order_cost.py).
ingot_test_exe(order_spread ${PROJECT_SOURCE_DIR}/tests/perf/order_spread.c)

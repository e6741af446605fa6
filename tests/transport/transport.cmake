# transport (tests/transport/<module>/): the put protocol after the reader's peer released its
# destinations (end of a run), on tcp and on shared memory. The transport's reads, pings and
# failures are also exercised through the peer cache (source.cache.*) and the tools' fault tests
# (apps.*.peer_stop_*).
ingot_test_exe(test_put_release ${INGOT_TESTS}/transport/requester/test_put_release.c)
foreach(tls "tcp,self" "posix,cma,self")
  string(REPLACE "," "_" _name "${tls}")
  ingot_add_mpi_test(NAME transport.requester.put_release_${_name} NP 2
                     ENV INGOT_PEER_PROTOCOL=put UCX_TLS=${tls} COMMAND $<TARGET_FILE:test_put_release>)
endforeach()
# Peer fetch throughput (tests/perf/cache_perf.sh runs it by hand).
ingot_test_exe(cache_fetch ${INGOT_TESTS}/perf/cache_fetch.c)

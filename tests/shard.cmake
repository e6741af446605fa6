# shard/ tests that drive ingot-manifest and GNU tar / the zstd CLI.
ingot_add_test(NAME shard.gnu_tar LABELS unit TIMEOUT 60
               COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/shard/gnu_tar.sh $<TARGET_FILE:ingot-manifest>)
ingot_add_test(NAME shard.pack LABELS unit TIMEOUT 90
               COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/shard/pack.sh $<TARGET_FILE:ingot-manifest>)
# Benchmark helper run by hand (tests/perf/shard_bench.sh); built, never registered as a test.
ingot_test_exe(perf_shard ${CMAKE_CURRENT_SOURCE_DIR}/perf/perf_shard.c)
ingot_add_test(NAME shard.import LABELS unit TIMEOUT 90
               COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/shard/import.sh $<TARGET_FILE:ingot-manifest>)

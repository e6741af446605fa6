# shard (tests/shard/<module>/): the manifest (open, lookups, every bad input; fuzzed), the order,
# the resume cursor's reader (fuzzed), the tar reader (fuzzed; against GNU tar), zstd frames, and
# ingot-manifest's packing and importing (directories, tars, Fashion-MNIST, torchvision's
# ImageFolder).
set(_s ${INGOT_TESTS}/shard)
ingot_unit_test(NAME shard.manifest.open SRC ${_s}/manifest/test_shard_manifest.c)
ingot_fuzz_target(NAME shard.manifest SRC ${_s}/manifest/fuzz_manifest.c CORPUS ${_s}/manifest/corpus)
ingot_unit_test(NAME shard.order.permutation SRC ${_s}/order/test_shard_order.c)
ingot_unit_test(NAME shard.order.dealt SRC ${_s}/order/test_dealt.c)
ingot_fuzz_target(NAME shard.cursor SRC ${_s}/cursor/fuzz_cursor.c CORPUS ${_s}/cursor/corpus)
ingot_unit_test(NAME shard.tar.parse SRC ${_s}/tar/test_shard_tar.c)
ingot_fuzz_target(NAME shard.tar SRC ${_s}/tar/fuzz_tar.c CORPUS ${_s}/tar/corpus)
ingot_add_test(NAME shard.tar.gnu_tar LABELS cli TIMEOUT 60
               COMMAND sh ${_s}/tar/gnu_tar.sh $<TARGET_FILE:ingot-manifest>)
ingot_unit_test(NAME shard.zstd.decode SRC ${_s}/zstd/test_shard_zstd.c)
ingot_add_test(NAME shard.pack.cli LABELS cli TIMEOUT 90
               COMMAND sh ${_s}/pack/pack.sh $<TARGET_FILE:ingot-manifest>)
ingot_add_test(NAME shard.import.cli LABELS cli TIMEOUT 90
               COMMAND sh ${_s}/import/import.sh $<TARGET_FILE:ingot-manifest>)
# ingot-manifest pack --labels-from-dirs: labels, class names (against torchvision's ImageFolder,
# which INGOT_TEST_REQUIRE_TORCHVISION requires), every rule's refusal.
ingot_add_test(NAME shard.import.image_folder LABELS cli TIMEOUT 60
               ENV ${INGOT_TEST_TORCHVISION_ENV}
               COMMAND bash ${_s}/import/image_folder.sh $<TARGET_FILE:ingot-manifest>
                       ${CMAKE_CURRENT_BINARY_DIR})
# Benchmark helper run by hand (tests/perf/shard_bench.sh); built, never registered as a test.
ingot_test_exe(perf_shard ${INGOT_TESTS}/perf/perf_shard.c)
# The content hash's speed, Debian's baseline build against xxHash's dispatcher (by hand).
ingot_test_exe(hash_speed ${INGOT_TESTS}/perf/hash_speed.c)

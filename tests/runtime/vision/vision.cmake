# runtime/vision (issue 26): the image decode transform alone (unit: decoding against references,
# the draws, every bad input), through the loader (unit, MPI singleton: labels from an ImageFolder,
# determinism across runs, epochs and a resume, bad images named with shard, key and offset), and
# across world sizes (mpi: 1 and 4 ranks give every sample the same output); the transform over
# arbitrary bytes, fuzzed. ingot-train on JPEGs is apps.train.jpeg, the packing of an ImageFolder
# shard.import.image_folder, the Python options python.binding.vision.
set(_vision_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(t decode augment bad)
  ingot_unit_test(NAME runtime.vision.${t} SRC ${_vision_dir}/test_vision_${t}.c)
endforeach()
# MPI singleton in-process: Open MPI's own allocations are not leaks (as runtime.loader.faults).
ingot_unit_test(NAME runtime.vision.loader SRC ${_vision_dir}/test_vision_loader.c
                ENV ASAN_OPTIONS=detect_leaks=0)
# 1 rank and 4 ranks: the same outputs for every sample.
ingot_test_exe(test_vision_mpi ${_vision_dir}/test_vision_mpi.c)
ingot_add_test(NAME runtime.vision.world_size LABELS mpi TIMEOUT 300
               COMMAND sh ${_vision_dir}/vision_mpi.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:test_vision_mpi>)
ingot_fuzz_target(NAME runtime.vision SRC ${_vision_dir}/fuzz_vision.c CORPUS ${_vision_dir}/corpus)
# Benchmark helper run by hand (tests/perf/vision_bench.sh); built, never registered as a test.
ingot_test_exe(perf_vision ${INGOT_TESTS}/perf/perf_vision.c)

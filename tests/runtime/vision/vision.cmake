# runtime/vision (issue 26): the image decode transform alone (unit: decoding against references,
# the draws, every bad input), through the loader (unit, MPI singleton: labels from an ImageFolder,
# determinism across runs, epochs and a resume, bad images named with shard, key and offset), and
# across world sizes (mpi: 1 and 4 ranks give every sample the same output).
set(_vision_dir ${CMAKE_CURRENT_LIST_DIR})
foreach(t decode augment bad loader)
  ingot_test_exe(test_vision_${t} ${_vision_dir}/test_vision_${t}.c)
  target_include_directories(test_vision_${t} PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit)
  ingot_add_test(NAME unit.vision_${t} LABELS unit COMMAND test_vision_${t})
endforeach()
# MPI singleton in-process: Open MPI's own allocations are not leaks (as unit.test_loader_faults).
set_property(TEST unit.vision_loader APPEND PROPERTY ENVIRONMENT "ASAN_OPTIONS=detect_leaks=0")
# 1 rank and 4 ranks: the same outputs for every sample.
ingot_test_exe(test_vision_mpi ${_vision_dir}/test_vision_mpi.c)
target_include_directories(test_vision_mpi PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/unit)
ingot_add_test(NAME mpi.vision_world_size LABELS mpi TIMEOUT 300
               COMMAND sh ${_vision_dir}/vision_mpi.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:test_vision_mpi>)
# ingot-train --decode on JPEG Fashion-MNIST (Pillow) within a point of the P5 run.
ingot_add_test(NAME app.train_jpeg LABELS mpi TIMEOUT 300
               COMMAND bash ${_vision_dir}/train_jpeg.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:ingot-train> $<TARGET_FILE:ingot-manifest> ${PROJECT_SOURCE_DIR}
                       ${CMAKE_CURRENT_BINARY_DIR})
# ingot-manifest pack --labels-from-dirs: labels, class names, every rule's refusal.
ingot_add_test(NAME shard.image_folder LABELS unit TIMEOUT 60
               COMMAND bash ${_vision_dir}/image_folder.sh $<TARGET_FILE:ingot-manifest>
                       ${CMAKE_CURRENT_BINARY_DIR})
# Benchmark helper run by hand (tests/perf/vision_bench.sh); built, never registered as a test.
ingot_test_exe(perf_vision ${CMAKE_CURRENT_SOURCE_DIR}/perf/perf_vision.c)
# ingot.ImageTransform's decode options (skipped without PyTorch or Pillow).
if(INGOT_HAVE_PYTHON)
  ingot_add_test(NAME python.vision LABELS python TIMEOUT 180
                 ENV PYTHONPATH=${PROJECT_BINARY_DIR}/python
                 COMMAND ${Python3_EXECUTABLE} ${_vision_dir}/test_vision.py
                         $<TARGET_FILE:ingot-manifest> ${CMAKE_CURRENT_BINARY_DIR}/python-vision)
endif()
# The transform over arbitrary bytes: replayed over its seeds in every build, fuzzed when
# INGOT_FUZZ=ON (as tests/fuzz's targets; the replay driver is theirs).
set(_vision_corpus ${_vision_dir}/corpus)
ingot_test_exe(fuzz_vision_replay ${_vision_dir}/fuzz_vision.c
               ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/replay.c)
ingot_add_test(NAME fuzz.fuzz_vision.replay LABELS unit COMMAND fuzz_vision_replay ${_vision_corpus})
if(INGOT_FUZZ)
  ingot_test_exe(fuzz_vision ${_vision_dir}/fuzz_vision.c)
  target_compile_options(fuzz_vision PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_vision PRIVATE -fsanitize=fuzzer)
  file(MAKE_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR}/fuzz-work/fuzz_vision)
  ingot_add_test(NAME fuzz.fuzz_vision LABELS fuzz TIMEOUT 600
                 COMMAND fuzz_vision -max_total_time=${INGOT_FUZZ_SECONDS} -rss_limit_mb=2048
                         -error_exitcode=1 -timeout_exitcode=1 -timeout=10
                         ${CMAKE_CURRENT_BINARY_DIR}/fuzz-work/fuzz_vision ${_vision_corpus})
endif()

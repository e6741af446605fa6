# apps (tests/apps/<app>/): each tool end to end, mostly over mpiexec. common/: what every app
# shares (an invalid INGOT_* value refused naming the variable; the public API only; a fault
# every rank sees said once without MPI_Abort; a silent peer ending the job in time); setup/:
# the README's main job through ./setup.sh demo, again and again.
set(_a ${INGOT_TESTS}/apps)
set(_cfg ${_a}/common/invalid_config.sh)
ingot_add_test(NAME apps.info.invalid_config LABELS cli TIMEOUT 60
               COMMAND ${_cfg} $<TARGET_FILE:ingot-info>)
ingot_add_test(NAME apps.topo.invalid_config LABELS cli TIMEOUT 60
               COMMAND ${_cfg} $<TARGET_FILE:ingot-topo> --ranks-per-node 2
                       --xml ${INGOT_TESTS}/fixtures/topology/cpu-2s.xml)
ingot_add_test(NAME apps.manifest.invalid_config LABELS cli TIMEOUT 60
               COMMAND ${_cfg} $<TARGET_FILE:ingot-manifest> pack @TMP@/src -o @TMP@/out)
ingot_add_test(NAME apps.bench.invalid_config LABELS cli TIMEOUT 120
               COMMAND ${_cfg} $<TARGET_FILE:ingot-bench> --generate @TMP@/gen --samples 16
                       --sample-size 1KiB --batch 4 --no-progress)
ingot_add_test(NAME apps.allreduce_bench.invalid_config LABELS cli TIMEOUT 60
               COMMAND ${_cfg} $<TARGET_FILE:ingot-allreduce-bench> --backend mpi -b 8 -e 64 -n 1
                       -w 0)
# The apps' include path is the public one: an internal header of each layer (each one in the
# source tree, and compiling from it) fails to compile there as not found.
ingot_add_test(NAME apps.common.public_api_only LABELS unit TIMEOUT 60
               COMMAND sh ${_a}/common/public_api_only.sh ${CMAKE_C_COMPILER}
                       ${PROJECT_SOURCE_DIR}
                       "$<TARGET_PROPERTY:ingot_apps_common,INTERFACE_INCLUDE_DIRECTORIES>")
# A fault every rank sees the same way: one message from one rank, a non-zero exit, no banner.
ingot_add_test(NAME apps.common.shared_faults LABELS mpi TIMEOUT 240
               COMMAND ${_a}/common/shared_faults.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:ingot-bench> $<TARGET_FILE:ingot-train>
                       $<TARGET_FILE:ingot-allreduce-bench> $<TARGET_FILE:ingot-manifest>
                       ${CMAKE_CURRENT_BINARY_DIR})
# A rank stopped in epoch 2 with the peer cache under INGOT_PEER_FAILURE=abort: ingot-bench (its
# loader destroy) and ingot-train (its next reduction or MPI call) end within INGOT_PEER_TIMEOUT
# plus a few seconds, naming the rank; under 'storage' the job goes on.
foreach(case tcp shm storage train-tcp train-shm)
  string(REPLACE "-" "_" _n "${case}")
  string(REGEX REPLACE "^train_(.*)" "train.peer_stop_\\1" _n "${_n}")
  if(NOT _n MATCHES "^train")
    set(_n "bench.peer_stop_${_n}")
  endif()
  ingot_add_test(NAME apps.${_n} LABELS mpi TIMEOUT 180
                 COMMAND ${_a}/common/peer_stop.sh ${MPIEXEC_EXECUTABLE}
                         $<TARGET_FILE:ingot-bench> $<TARGET_FILE:ingot-train>
                         $<TARGET_FILE:ingot-manifest> ${CMAKE_CURRENT_BINARY_DIR} ${case})
endforeach()
# ingot-bench end to end (4 ranks), JSON parsed by $TEST_PYTHON (Debian's python3).
foreach(mode e2e stall fmnist epochs budget)
  ingot_add_test(NAME apps.bench.${mode} LABELS mpi
                 COMMAND ${_a}/bench/ingot_bench.sh ${MPIEXEC_EXECUTABLE}
                         $<TARGET_FILE:ingot-bench> $<TARGET_FILE:ingot-manifest> ${mode})
endforeach()
foreach(np 1 4)
  ingot_add_test(NAME apps.bench.compute_gpu_${np} LABELS gpu mpi
                 COMMAND sh ${_a}/bench/bench_gpu.sh ${MPIEXEC_EXECUTABLE}
                         $<TARGET_FILE:ingot-bench> $<TARGET_FILE:ingot-info> ${np})
endforeach()
# ingot-allreduce-bench: a small sweep checked row by row, and the ResNet-50 overlap for 3 steps.
set(_arb ${_a}/allreduce_bench/allreduce_bench.sh ${MPIEXEC_EXECUTABLE}
         $<TARGET_FILE:ingot-allreduce-bench>)
ingot_add_test(NAME apps.allreduce_bench.sweep LABELS mpi TIMEOUT 120 COMMAND ${_arb} sweep)
ingot_add_test(NAME apps.allreduce_bench.overlap LABELS mpi TIMEOUT 120 COMMAND ${_arb} overlap)
# ingot-info (it starts MPI in-process, a singleton, to show the all-reduce backend: Open MPI's
# and the static CUDA runtime's allocations at exit are not leaks of ingot's).
ingot_add_test(NAME apps.info.report LABELS unit
               COMMAND ${_a}/info/ingot_info.sh $<TARGET_FILE:ingot-info>
               ENV ASAN_OPTIONS=detect_leaks=0)
# ingot-topo: the plan of fixtures and of this machine, its JSON parsed by Python.
ingot_add_test(NAME apps.topo.report LABELS cli TIMEOUT 60
               COMMAND sh ${_a}/topo/topo_cli.sh $<TARGET_FILE:ingot-topo>
                       ${INGOT_TESTS}/fixtures/topology ${INGOT_MPIRUN} ${MPIEXEC_EXECUTABLE})
# ingot-train on Fashion-MNIST: a short run, SIGUSR1 -> checkpoint -> resume on another world
# size, bad inputs, a killed rank (skipped without dataset-fashion-mnist); on JPEGs within a point
# of the P5 run; on cuBLAS against CBLAS (GPU).
ingot_add_test(NAME apps.train.run LABELS mpi slow TIMEOUT 300
               COMMAND ${_a}/train/train.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:ingot-train>
                       $<TARGET_FILE:ingot-manifest> ${CMAKE_CURRENT_BINARY_DIR})
ingot_add_test(NAME apps.train.jpeg LABELS mpi slow TIMEOUT 300
               COMMAND bash ${_a}/train/train_jpeg.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:ingot-train> $<TARGET_FILE:ingot-manifest> ${PROJECT_SOURCE_DIR}
                       ${CMAKE_CURRENT_BINARY_DIR})
ingot_add_test(NAME apps.train.cublas LABELS gpu mpi
               COMMAND sh ${_a}/train/train_cublas.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:ingot-train> $<TARGET_FILE:ingot-manifest>
                       $<TARGET_FILE:ingot-info> ${CMAKE_CURRENT_BINARY_DIR})
# ingot-train's matrix products without MPI: CBLAS against a reference in double, cuBLAS refused
# cleanly where it cannot run, and (label gpu) cuBLAS against CBLAS.
add_executable(test_train_gemm ${_a}/train/test_train_gemm.c)
target_link_libraries(test_train_gemm PRIVATE ingot_train_model)
target_include_directories(test_train_gemm PRIVATE ${INGOT_TESTS})
foreach(mode cpu refuse)
  ingot_add_test(NAME apps.train.gemm_${mode} LABELS unit TIMEOUT 60 COMMAND test_train_gemm ${mode})
endforeach()
ingot_add_test(NAME apps.train.gemm_cuda LABELS gpu TIMEOUT 120 COMMAND test_train_gemm cuda)
# The README's main job through ./setup.sh demo (reduced): twice in one clone, a second clone at
# the same time, one clone twice at once.
ingot_add_test(NAME apps.setup.demo LABELS mpi slow TIMEOUT 600
               COMMAND ${_a}/setup/setup_demo.sh ${PROJECT_SOURCE_DIR} ${PROJECT_BINARY_DIR}/apps
                       ${CMAKE_CURRENT_BINARY_DIR})
# ingot-cache on a folder a job of tests/source/disk/test_disk filled: list, verify (a damaged
# entry named and removed), evict to a size, clean (a dead writer's temporary, never a live one's),
# bad command lines, folders the tier would not trust.
foreach(case list verify evict clean usage trust)
  ingot_add_test(NAME apps.cache.${case} LABELS cli TIMEOUT 60
                 COMMAND ${_a}/cache/cache_cli.sh $<TARGET_FILE:ingot-cache>
                         $<TARGET_FILE:test_disk> ${CMAKE_CURRENT_BINARY_DIR} ${case})
endforeach()
# ingot-train twice in a row over the node's disk tier: the second run reads nothing from storage.
ingot_add_test(NAME apps.train.disk_twice LABELS mpi TIMEOUT 180
               COMMAND ${_a}/train/train_disk.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:ingot-train>
                       $<TARGET_FILE:ingot-manifest> ${CMAKE_CURRENT_BINARY_DIR})

# ingot-sim's command line: a described job's table and JSON, a node from an hwloc XML, and each
# bad input named.
ingot_add_test(NAME apps.sim.cli LABELS cli TIMEOUT 120
               COMMAND sh ${_a}/sim/sim_cli.sh $<TARGET_FILE:ingot-sim>
                       ${INGOT_TESTS}/fixtures/topology)

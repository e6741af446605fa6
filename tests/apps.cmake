# App tests beyond those of their modules: every app refuses an invalid INGOT_* value (exit 1,
# message naming the variable) for a command line that succeeds without it. Label cli: the apps
# start MPI or UCX, so the sanitizer tiers (label unit) leave them out.
set(_cfg ${CMAKE_CURRENT_SOURCE_DIR}/apps/invalid_config.sh)
ingot_add_test(NAME app.invalid_config.ingot_info LABELS cli TIMEOUT 60
               COMMAND ${_cfg} $<TARGET_FILE:ingot-info>)
ingot_add_test(NAME app.invalid_config.ingot_topo LABELS cli TIMEOUT 60
               COMMAND ${_cfg} $<TARGET_FILE:ingot-topo> --ranks-per-node 2
                       --xml ${CMAKE_CURRENT_SOURCE_DIR}/fixtures/topology/cpu-2s.xml)
ingot_add_test(NAME app.invalid_config.ingot_manifest LABELS cli TIMEOUT 60
               COMMAND ${_cfg} $<TARGET_FILE:ingot-manifest> pack @TMP@/src -o @TMP@/out)
ingot_add_test(NAME app.invalid_config.ingot_bench LABELS cli TIMEOUT 120
               COMMAND ${_cfg} $<TARGET_FILE:ingot-bench> --generate @TMP@/gen --samples 16
                       --sample-size 1KiB --batch 4 --no-progress)
ingot_add_test(NAME app.invalid_config.ingot_allreduce_bench LABELS cli TIMEOUT 60
               COMMAND ${_cfg} $<TARGET_FILE:ingot-allreduce-bench> --backend mpi -b 8 -e 64 -n 1
                       -w 0)
# ingot-allreduce-bench over mpiexec (label mpi, as ingot-bench's runs): a small sweep checked row
# by row, and the ResNet-50 overlap run for 3 steps.
set(_arb ${CMAKE_CURRENT_SOURCE_DIR}/apps/allreduce_bench.sh ${MPIEXEC_EXECUTABLE}
         $<TARGET_FILE:ingot-allreduce-bench>)
ingot_add_test(NAME app.allreduce_bench LABELS mpi TIMEOUT 120 COMMAND ${_arb} sweep)
ingot_add_test(NAME app.allreduce_bench_overlap LABELS mpi TIMEOUT 120 COMMAND ${_arb} overlap)
# The apps' include path is the public one: an internal header fails to compile there.
ingot_add_test(NAME app.public_api_only LABELS unit TIMEOUT 60
               COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/apps/public_api_only.sh
                       ${CMAKE_C_COMPILER}
                       "$<TARGET_PROPERTY:ingot_apps_common,INTERFACE_INCLUDE_DIRECTORIES>")
# ingot-train on Fashion-MNIST: a short run, SIGUSR1 -> checkpoint -> resume on another world
# size, bad inputs, a killed rank (skipped without dataset-fashion-mnist).
ingot_add_test(NAME app.train LABELS mpi TIMEOUT 300
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/apps/train.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:ingot-train> $<TARGET_FILE:ingot-manifest>
                       ${CMAKE_CURRENT_BINARY_DIR})
# ingot-train's matrix products without MPI (tests/apps/test_train_gemm.c): CBLAS against a
# reference in double, cuBLAS refused cleanly where it cannot run, and (label gpu) cuBLAS against
# CBLAS, products and a model trained from the same seed.
add_executable(test_train_gemm ${CMAKE_CURRENT_SOURCE_DIR}/apps/test_train_gemm.c)
target_link_libraries(test_train_gemm PRIVATE ingot_train_model)
target_include_directories(test_train_gemm PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
foreach(mode cpu refuse)
  ingot_add_test(NAME app.train_gemm_${mode} LABELS unit TIMEOUT 60 COMMAND test_train_gemm ${mode})
endforeach()
ingot_add_test(NAME gpu.train_gemm_cuda LABELS gpu TIMEOUT 120 COMMAND test_train_gemm cuda)
# A fault every rank sees the same way (usage, an invalid variable, a missing manifest, a
# checkpoint conflict): one message from one rank, a non-zero exit, no MPI_Abort banner.
ingot_add_test(NAME app.shared_faults LABELS mpi TIMEOUT 240
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/apps/shared_faults.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:ingot-bench> $<TARGET_FILE:ingot-train>
                       $<TARGET_FILE:ingot-allreduce-bench> $<TARGET_FILE:ingot-manifest>
                       ${CMAKE_CURRENT_BINARY_DIR})
# The README's main job through ./setup.sh demo (reduced): twice in one clone, a second clone at
# the same time, one clone twice at once.
ingot_add_test(NAME app.setup_demo LABELS mpi TIMEOUT 600
               COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/apps/setup_demo.sh ${PROJECT_SOURCE_DIR}
                       ${PROJECT_BINARY_DIR}/apps ${CMAKE_CURRENT_BINARY_DIR})
# A rank stopped in epoch 2 with the peer cache under INGOT_PEER_FAILURE=abort: ingot-bench (its
# loader destroy) and ingot-train (its next reduction or MPI call) end within INGOT_PEER_TIMEOUT
# plus a few seconds, naming the rank; under 'storage' the job goes on.
foreach(case tcp shm storage train-tcp train-shm)
  ingot_add_test(NAME app.peer_stop_${case} LABELS mpi TIMEOUT 180
                 COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/apps/peer_stop.sh ${MPIEXEC_EXECUTABLE}
                         $<TARGET_FILE:ingot-bench> $<TARGET_FILE:ingot-train>
                         $<TARGET_FILE:ingot-manifest> ${CMAKE_CURRENT_BINARY_DIR} ${case})
endforeach()

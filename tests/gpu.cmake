# GPU tests (ctest -L gpu): each exits 77 with the reason where no CUDA device is usable, and
# checks for real on a GPU node. They run in the main tier too (skipped on CPU-only machines).
ingot_test_exe(test_gpu ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_gpu.c)
foreach(mode match reuse stream pin nccl oom)
  # match, reuse, stream and oom start MPI in-process (singleton): Open MPI's allocations are not leaks.
  ingot_add_test(NAME gpu.${mode} LABELS gpu COMMAND test_gpu ${mode}
                 ENV ASAN_OPTIONS=detect_leaks=0)
endforeach()
foreach(np 1 4)
  ingot_add_test(NAME gpu.bench_compute_gpu_${np} LABELS gpu mpi
                 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/gpu/bench_gpu.sh ${MPIEXEC_EXECUTABLE}
                         $<TARGET_FILE:ingot-bench> $<TARGET_FILE:ingot-info> ${np})
endforeach()
# PyTorch and ingot in one process (Debian's python3; skipped without PyTorch with CUDA).
ingot_add_test(NAME gpu.torch_coexist LABELS gpu
               COMMAND /usr/bin/python3 ${CMAKE_CURRENT_SOURCE_DIR}/gpu/torch_coexist.py
                       $<TARGET_FILE:ingot> $<TARGET_FILE:ingot-manifest>)
# The NCCL backend on one GPU (singleton rank): exact reductions in every dtype, device buckets,
# the MPI backend staging device gradients, and the abort path with a stream that never drains.
ingot_test_exe(test_nccl_coll ${CMAKE_CURRENT_SOURCE_DIR}/gpu/test_nccl_coll.c)
foreach(mode exact staged abort)
  ingot_add_test(NAME gpu.nccl_${mode} LABELS gpu COMMAND test_nccl_coll ${mode}
                 ENV ASAN_OPTIONS=detect_leaks=0 INGOT_TIMEOUT=3s)
endforeach()
# ingot-train on cuBLAS against CBLAS end to end, 2 ranks (skipped without dataset-fashion-mnist).
ingot_add_test(NAME gpu.train_cublas LABELS gpu mpi
               COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/gpu/train_cublas.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:ingot-train> $<TARGET_FILE:ingot-manifest>
                       $<TARGET_FILE:ingot-info> ${CMAKE_CURRENT_BINARY_DIR})

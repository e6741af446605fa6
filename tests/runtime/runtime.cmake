# runtime (tests/runtime/<module>/): the context (init over 4 ranks, with MPI started by the
# caller, job-wide config mismatches, the launch check, PyTorch in the same process on a GPU),
# the loader (MPI runs on a dataset packed at test time; faults and deadlines in-process; a rank
# stopped before destroy; GPU delivery), the node-shared manifest across uneven emulated nodes, the built-in
# transform, the run-time info's peer paths, and the vision pipeline (tests/runtime/vision/).
set(_r ${INGOT_TESTS}/runtime)
ingot_test_exe(test_init ${_r}/context/test_init.c)
ingot_add_mpi_test(NAME runtime.context.init NP 4 COMMAND $<TARGET_FILE:test_init> ok)
ingot_add_mpi_test(NAME runtime.context.init_self_mpi NP 4 COMMAND $<TARGET_FILE:test_init> self-mpi)
ingot_add_test(NAME runtime.config_check.mismatch LABELS mpi
               COMMAND ${_r}/config_check/config_mismatch.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:test_init>)
# The launch check: singletons whose launcher (torchrun, Slurm, Open MPI, PMI) says the job has
# more processes are refused (unit: no launcher; singleton MPI's allocations are not leaks); the
# same variables with a consistent world are not (mpi).
set(_lc ${_r}/context/launch_check.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_init>)
foreach(launcher torchrun slurm ompi pmi)
  ingot_add_test(NAME runtime.context.launch_${launcher} LABELS unit COMMAND ${_lc} ${launcher}
                 ENV ASAN_OPTIONS=detect_leaks=0)
endforeach()
ingot_add_test(NAME runtime.context.launch_consistent LABELS mpi COMMAND ${_lc} consistent)
# PyTorch and ingot in one process (INGOT_TEST_PYTHON; skipped without PyTorch with CUDA).
ingot_add_test(NAME runtime.context.torch_coexist LABELS gpu python
               COMMAND ${INGOT_TEST_PYTHON} ${_r}/context/torch_coexist.py
                       $<TARGET_FILE:ingot> $<TARGET_FILE:ingot-manifest>)

ingot_test_exe(test_loader ${_r}/loader/test_loader.c)
set(_lt ${_r}/loader/loader.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:test_loader>)
ingot_add_test(NAME runtime.loader.exactly_once LABELS mpi COMMAND ${_lt} exactly-once)
ingot_add_test(NAME runtime.loader.resume_4_to_2 LABELS mpi COMMAND ${_lt} resume)
ingot_add_test(NAME runtime.loader.two_loaders LABELS mpi COMMAND ${_lt} two-loaders)
if(INGOT_FAULT_INJECTION)
  ingot_add_test(NAME runtime.loader.manifest_eio LABELS mpi COMMAND ${_lt} manifest-eio)
endif()
ingot_add_test(NAME runtime.loader.bad_batch LABELS mpi COMMAND ${_lt} bad-batch)
# These unit tests start MPI in-process (singleton): Open MPI's own allocations are reported as
# leaks at exit (its plugins are unloaded, so they cannot be suppressed by name). Leak detection
# is off for them alone; ASan still checks every access (overflows, use after free).
ingot_unit_test(NAME runtime.loader.faults SRC ${_r}/loader/test_loader_faults.c
                ENV ASAN_OPTIONS=detect_leaks=0)
# The same fault and content tests with O_DIRECT reads (aligned staging windows, no scatter).
ingot_unit_test(NAME runtime.loader.faults_direct SRC ${_r}/loader/test_loader_faults.c
                ENV INGOT_DIRECT_IO=y ASAN_OPTIONS=detect_leaks=0)
# Fields hashed as their bytes land: reads cut across fields (1000 bytes), one read per run (0),
# the default pieces.
ingot_unit_test(NAME runtime.loader.landed SRC ${_r}/loader/test_loader_landed.c
                ENV INGOT_HASH_PIECE=1000 ASAN_OPTIONS=detect_leaks=0)
ingot_unit_test(NAME runtime.loader.landed_whole SRC ${_r}/loader/test_loader_landed.c
                ENV INGOT_HASH_PIECE=0 ASAN_OPTIONS=detect_leaks=0)
ingot_unit_test(NAME runtime.loader.landed_default SRC ${_r}/loader/test_loader_landed.c
                ENV ASAN_OPTIONS=detect_leaks=0)
ingot_unit_test(NAME runtime.loader.deadline SRC ${_r}/loader/test_loader_deadline.c
                ENV ASAN_OPTIONS=detect_leaks=0)
# A rank stopped mid-epoch: the others wait for it at loader destroy, which names it past
# INGOT_TIMEOUT=5s (no peer cache to ping it with) and ends the job.
ingot_add_test(NAME runtime.loader.stop_at_destroy LABELS mpi TIMEOUT 90
               COMMAND ${_r}/loader/stop_loader.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:ingot-bench> ${CMAKE_CURRENT_BINARY_DIR})
# GPU delivery (exit 77 with the reason where no CUDA device is usable).
ingot_test_exe(test_gpu ${_r}/loader/test_gpu.c)
foreach(mode match reuse stream pin nccl oom)
  # match, reuse, stream and oom start MPI in-process (singleton): Open MPI's allocations are not leaks.
  ingot_add_test(NAME runtime.loader.gpu_${mode} LABELS gpu COMMAND test_gpu ${mode}
                 ENV ASAN_OPTIONS=detect_leaks=0)
endforeach()

# Two namespaces as hosts, 2 ranks + 1: the same collective calls on nodes of any rank count, and
# the peer cache's budget per node (windows of different sizes).
ingot_add_test(NAME runtime.node_manifest.uneven_nodes LABELS mpi TIMEOUT 180
               COMMAND ${_r}/node_manifest/uneven_nodes.sh ${MPIEXEC_EXECUTABLE}
                       $<TARGET_FILE:ingot-bench> ${CMAKE_CURRENT_BINARY_DIR})
set_tests_properties(runtime.node_manifest.uneven_nodes PROPERTIES RESOURCE_LOCK netns)
ingot_unit_test(NAME runtime.transform.image_norm SRC ${_r}/transform/test_transform.c)
# ingot-info -t under mpirun names each rank's path to every other.
ingot_add_test(NAME runtime.info.peer_paths LABELS mpi
               COMMAND ${_r}/info/info_paths.sh ${MPIEXEC_EXECUTABLE} $<TARGET_FILE:ingot-info>)
include(${_r}/vision/vision.cmake)

# ingot-sim's library without MPI (tests/runtime/sim/): the described dataset, the bad clusters
# and cost files, the exact bytes of each tier, the store's limits. One process per case: the
# INGOT_* variables each case plans under are read once per process.
ingot_test_exe(test_sim ${_r}/sim/test_sim.c)
foreach(_case tables costs)
  ingot_add_test(NAME runtime.sim.${_case} LABELS unit COMMAND test_sim ${_case})
endforeach()
ingot_add_test(NAME runtime.sim.inputs LABELS unit COMMAND test_sim inputs
               ENV INGOT_GPU_SHARING=error)
ingot_add_test(NAME runtime.sim.exact LABELS unit COMMAND test_sim exact
               ENV INGOT_CACHE_BYTES=32MiB)
ingot_add_test(NAME runtime.sim.store LABELS unit COMMAND test_sim store)
ingot_add_test(NAME runtime.sim.parts LABELS unit COMMAND test_sim parts
               ENV INGOT_ORDER=window:4)
ingot_add_test(NAME runtime.sim.disk LABELS unit COMMAND test_sim disk
               ENV INGOT_DISK_CACHE_BYTES=1GiB)
ingot_add_test(NAME runtime.sim.disk_small LABELS unit COMMAND test_sim disk_small
               ENV INGOT_DISK_CACHE_BYTES=12MiB)
ingot_add_test(NAME runtime.sim.disk_lru LABELS unit COMMAND test_sim disk_small
               ENV INGOT_DISK_CACHE_BYTES=12MiB INGOT_DISK_CACHE_POLICY=lru)
ingot_add_test(NAME runtime.sim.disk_bad LABELS unit COMMAND test_sim disk_bad
               ENV INGOT_DISK_CACHE_BYTES=64KiB)
ingot_add_test(NAME runtime.sim.disk_huge LABELS unit COMMAND test_sim disk_huge
               ENV INGOT_DISK_CACHE_BYTES=1GiB)
ingot_add_test(NAME runtime.sim.disk_fill LABELS unit COMMAND test_sim disk_fill
               ENV INGOT_DISK_CACHE_BYTES=12MiB INGOT_DISK_CACHE_FILL=parts)
# ingot-sim against ingot-bench on the same dataset and options, 4 ranks, peer cache on, under
# the full order and the order dealt over 2 canonical nodes: the bytes of each tier per epoch equal.
ingot_add_test(NAME runtime.sim.vs_bench LABELS mpi TIMEOUT 240
               COMMAND ${INGOT_TEST_PYTHON} ${_r}/sim/sim_vs_bench.py ${INGOT_MPIRUN}
                       ${MPIEXEC_EXECUTABLE} $<TARGET_FILE_DIR:ingot-bench>
                       ${CMAKE_CURRENT_BINARY_DIR}/sim-vs-bench)
# The same over an object store (SeaweedFS on loopback): the GETs and their bytes equal too, under
# the global order and under the locality order with its node part cache.
ingot_add_test(NAME runtime.sim.vs_bench_s3 LABELS mpi TIMEOUT 240
               COMMAND ${INGOT_TEST_PYTHON} ${_r}/sim/sim_vs_bench.py ${INGOT_MPIRUN}
                       ${MPIEXEC_EXECUTABLE} $<TARGET_FILE_DIR:ingot-bench>
                       ${CMAKE_CURRENT_BINARY_DIR}/sim-vs-bench-s3 --s3 ${PROJECT_BINARY_DIR})
set_tests_properties(runtime.sim.vs_bench_s3 PROPERTIES RESOURCE_LOCK objstore_ports)

# Slurm (tests/slurm/): a real single-node cluster (slurmctld, slurmd and munged of Debian's
# slurm-wlm 22.05 and munge), started and stopped by tests/slurm/cluster.sh around each test, and
# slurm/ingot-job.sbatch run on it: ingot-info as 4 Open MPI ranks under srun --mpi=pmix, and the
# checkpoint/requeue protocol (SIGUSR1, exit 85, scontrol requeue, SLURM_RESTART_COUNT, resume)
# with tests/slurm/fake_trainer.sh, then slurm/ingot-train.sbatch: ingot-train uninterrupted and
# signalled, requeued and resumed to the same accuracy. Skipped (77) when not root or Slurm/munge
# is not installed. Label mpi: it runs MPI ranks (one at a time: tests/CMakeLists.txt); RESOURCE_LOCK
# slurm.
ingot_add_test(NAME slurm.job.run LABELS mpi slow TIMEOUT 300
               COMMAND ${INGOT_TESTS}/slurm/cluster.sh ${CMAKE_CURRENT_BINARY_DIR}/slurm-job --
                       ${INGOT_TESTS}/slurm/job.sh
                       ${PROJECT_SOURCE_DIR}/slurm/ingot-job.sbatch $<TARGET_FILE:ingot-info>
                       ${PROJECT_SOURCE_DIR}/slurm/ingot-train.sbatch
                       $<TARGET_FILE_DIR:ingot-train>)
set_tests_properties(slurm.job.run PROPERTIES RESOURCE_LOCK slurm)
# kill -9 of a rank of a cached loader under srun --kill-on-bad-exit=1: every survivor ends.
ingot_add_test(NAME slurm.job.cache_kill LABELS mpi TIMEOUT 180
               COMMAND ${INGOT_TESTS}/slurm/cluster.sh ${CMAKE_CURRENT_BINARY_DIR}/slurm-cache-kill --
                       ${INGOT_TESTS}/slurm/cache_kill.sh $<TARGET_FILE:test_cache>)
set_tests_properties(slurm.job.cache_kill PROPERTIES RESOURCE_LOCK slurm)
# ingot_init's launch check on the real cluster: a program run by a 2-task batch script is
# refused naming SLURM_NTASKS; `srun --mpi=none -n 2` goes on as no singleton; `srun --mpi=pmix`
# with 2 tasks and with 1 task in the 2-task allocation is accepted.
ingot_add_test(NAME slurm.job.launch_check LABELS mpi TIMEOUT 180
               COMMAND ${INGOT_TESTS}/slurm/cluster.sh ${CMAKE_CURRENT_BINARY_DIR}/slurm-launch --
                       ${INGOT_TESTS}/slurm/launch.sh $<TARGET_FILE:test_init>)
set_tests_properties(slurm.job.launch_check PROPERTIES RESOURCE_LOCK slurm)

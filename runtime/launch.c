/*
 * launch.c: ingot_init's launch check. A job started by a launcher that is not MPI's (torchrun,
 * srun without --mpi=pmix, a program run by the batch script of a multi-task allocation) gives
 * each process an MPI world of its own (singleton init): each is rank 0 of 1 and would take the
 * whole dataset as its slice, silently. The launchers' own variables tell, so init refuses,
 * naming them.
 *
 * Which variables mean "this process is one of several launched" (checked on Slurm 22.05, Open
 * MPI 4.1 and PyTorch's torchrun):
 *   OMPI_COMM_WORLD_SIZE  set by Open MPI's mpirun in every rank it starts (a singleton sets
 *                         none), so with a world of one it was inherited from a job MPI did not
 *                         join.
 *   PMI_SIZE              the same for PMI launchers: MPICH's and Intel MPI's hydra, srun
 *                         --mpi=pmi2.
 *   WORLD_SIZE            torch.distributed's env:// launchers: torchrun (and
 *                         torch.distributed.launch, accelerate, deepspeed) set it in every
 *                         process, beside RANK and LOCAL_RANK.
 *   SLURM_STEP_NUM_TASKS  inside a job step (srun): the step's task count (srun sets
 *                         SLURM_NTASKS to the same); srun -n 1 in a larger allocation says 1.
 *   SLURM_NTASKS          outside a step (the batch script, an salloc shell: no SLURM_STEP_*
 *                         variable, though SLURM_PROCID is 0): the allocation's task count; a
 *                         program run there is one process of a job that asked for several,
 *                         started without srun.
 * The first two are MPI launchers' own counts: equal to 1, they say this one rank was launched
 * on purpose (mpirun -np 1 inside a 4-task allocation or under torchrun), and the outer
 * launchers' counts (torchrun's, Slurm's) are then not this process' world. Ranks (RANK,
 * SLURM_PROCID, ...) are not counts and are not read; a value that is not a positive integer is
 * another program's business and is not read either. INGOT_CHECK_LAUNCH=n lets such processes
 * run alone.
 */
#include "runtime/launch.h"
#include "base/log.h"
#include "base/status.h"
#include <errno.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct launch_var {
    const char *name;
    const char *unless; /* not read when this variable is set: it holds the closer count */
    const char *who;    /* what set it, said after its value */
    bool mpi;           /* an MPI launcher's own count */
} launch_var_t;

static const launch_var_t launch_vars[] = {
    {"OMPI_COMM_WORLD_SIZE", NULL, "Open MPI's launcher, but MPI did not join its job", true},
    {"PMI_SIZE", NULL, "a PMI launcher: hydra, srun --mpi=pmi2; MPI did not join its job", true},
    {"WORLD_SIZE", NULL, "torchrun", false},
    {"SLURM_STEP_NUM_TASKS", NULL, "srun without --mpi=pmix?", false},
    {"SLURM_NTASKS", "SLURM_STEP_NUM_TASKS", "a Slurm allocation; this process not started by srun",
     false},
};

#define LAUNCH_NVARS INGOT_ARRAY_SIZE(launch_vars)

/* The count @p v holds; 0 when unset, not a positive integer, or overruled by v->unless. */
static long launch_count(const launch_var_t *v)
{
    const char *s = getenv(v->name);
    if (s == NULL || (v->unless != NULL && getenv(v->unless) != NULL) || *s < '0' || *s > '9') {
        return 0;
    }
    char *end;
    errno = 0;
    long n = strtol(s, &end, 10);
    return (*end == '\0' && errno == 0 && n > 0) ? n : 0;
}

/* "NAME=N (who), ..." into @p buf for every count that says more than this process; 0 when none
 * does. An MPI launcher's count of 1 overrules the outer launchers'. */
static size_t launch_seen(char *buf, size_t len)
{
    long count[LAUNCH_NVARS];
    bool mpi_alone = false;
    for (size_t i = 0; i < LAUNCH_NVARS; i++) {
        count[i] = launch_count(&launch_vars[i]);
        mpi_alone |= launch_vars[i].mpi && count[i] == 1;
    }
    size_t used = 0, named = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < LAUNCH_NVARS; i++) {
        const launch_var_t *v = &launch_vars[i];
        if (count[i] <= 1 || (mpi_alone && !v->mpi) || used >= len) {
            continue;
        }
        int n = snprintf(buf + used, len - used, "%s%s=%ld (%s)", named > 0 ? ", " : "", v->name,
                         count[i], v->who);
        used += (n > 0) ? (size_t)n : 0;
        named++;
    }
    return named;
}

ingot_status_t ingot_launch_check(bool refuse)
{
    int world = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    char seen[512];
    if (world != 1 || launch_seen(seen, sizeof(seen)) == 0) {
        return INGOT_OK;
    }
    if (!refuse) {
        ingot_info("INGOT_CHECK_LAUNCH=n: MPI's world is this process alone although %s; it runs "
                   "alone and reads the whole dataset",
                   seen);
        return INGOT_OK;
    }
    return ingot_fail(INGOT_ERR_MISMATCH,
                      "ingot_init: MPI's world is this process alone, but the launcher says the "
                      "job has more: %s. Each process would read the whole dataset; start the "
                      "ranks through MPI: mpirun -np N ..., or srun --mpi=pmix ... (srun -n 1 "
                      "for one process; INGOT_CHECK_LAUNCH=n runs each alone)",
                      seen);
}

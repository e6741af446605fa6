/* How an MPI app ends after a fault (job.h). */
#include "common/job.h"
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* How long the launcher gets to forward this rank's last lines before MPI_Abort's banner: its
 * output and the abort travel different paths to mpirun, and the user should read ours first. */
#define JOB_ABORT_GRACE_NS (250L * 1000 * 1000)

int app_launcher_rank(void)
{
    static const char *const vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID",
                                       "PMI_RANK"};
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        const char *v = getenv(vars[i]);
        if (v != NULL && *v != '\0') {
            return atoi(v);
        }
    }
    return 0;
}

int app_job_agree(int rc, const char *fmt, ...)
{
    char msg[2048] = "";
    if (rc != 0 && fmt != NULL) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof(msg), fmt, ap);
        va_end(ap);
    }
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    int mine[2] = {rc != 0 ? rank : INT_MAX, -rc}, least[2]; /* first failing rank, worst code */
    int failing = rc != 0, nfailing = 0;
    MPI_Allreduce(mine, least, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(&failing, &nfailing, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rc != 0 && rank == least[0] && msg[0] != '\0') {
        if (nfailing > 1) {
            fprintf(stderr, "%s (rank %d; %d ranks failed)\n", msg, rank, nfailing);
        } else {
            fprintf(stderr, "%s\n", msg);
        }
        fflush(stderr);
    } else if (least[1] != 0) {
        /* the others leave a moment later, so that the launcher has the line before it sees
         * a process end (its summary names the first process to exit) */
        struct timespec grace = {0, JOB_ABORT_GRACE_NS};
        nanosleep(&grace, NULL);
    }
    return -least[1];
}

void app_job_abort(int rc)
{
    fflush(NULL);
    struct timespec grace = {0, JOB_ABORT_GRACE_NS};
    nanosleep(&grace, NULL);
    MPI_Abort(MPI_COMM_WORLD, rc);
    exit(rc); /* MPI_Abort does not return; if it did, the exit code still says it failed */
}

/*
 * How an MPI app ends after a fault. A fault every rank sees the same way (a usage error, a bad
 * file, a checkpoint conflict) is agreed on, said once by one rank, and every rank leaves through
 * MPI_Finalize with a non-zero exit code: the user reads one line and the launcher's summary, no
 * abort banner. Only a fault the ranks do not share, where another rank may wait in a collective
 * this one will never join, ends the job with MPI_Abort, after this rank's line.
 */
#ifndef INGOT_APPS_COMMON_JOB_H
#define INGOT_APPS_COMMON_JOB_H

#include <mpi.h>

/** This process's rank as its launcher set it (OMPI_COMM_WORLD_RANK, PMIX_RANK, SLURM_PROCID,
 *  PMI_RANK), readable before MPI starts; 0 when no launcher set one. */
int app_launcher_rank(void);

/**
 * Agree on an outcome over MPI_COMM_WORLD (collective). @p rc is this rank's exit code (0: fine);
 * when it is not 0, @p fmt (printf-style, may be NULL) says why. Every rank returns the largest
 * code of any rank; the message of the lowest failing rank is printed once, on stderr, with how
 * many ranks failed when more than one did.
 */
int app_job_agree(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/** End the whole job after a fault the ranks do not share: flush this rank's output, give the
 *  launcher a moment to forward it ahead of its own banner, then MPI_Abort(@p rc). */
_Noreturn void app_job_abort(int rc);

#endif

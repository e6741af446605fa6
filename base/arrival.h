/*
 * A barrier that names who never came. The collective frees at destroy (a cache window, the
 * node-shared manifest) need every rank; a stopped or dead rank would hold the others in an
 * MPI_Barrier until the watchdog's INGOT_TIMEOUT, and the watchdog cannot say which rank it was.
 *
 * Every rank tells rank 0 it arrived and waits for rank 0's verdict; rank 0 collects arrivals.
 * A rank still missing is asked whether it is alive (the caller's liveness check: the transport
 * pings it, and its progress thread answers while the rank does anything else, so a rank that
 * is merely late is waited for). One that is silent for the silence bound (INGOT_PEER_TIMEOUT
 * under INGOT_PEER_FAILURE=abort) is named at once; without a liveness check, or for a rank
 * that answers, the wait ends at the overall bound (INGOT_TIMEOUT). A rank waiting for rank 0's
 * verdict checks rank 0 the same way. A rank can also stop after it arrived, and the barrier that
 * lets the ranks leave together needs it: when every rank arrived but they cannot leave, rank 0
 * asks them all and names one that is silent ("arrived, then stalled the ranks leaving
 * together"); without a liveness check it says so at the overall bound, naming nobody.
 *
 * A failed arrival leaves the collective impossible: the ranks disagree on who is there, and
 * MPI cannot finalise past a dead rank. So the rank that names the missing one logs one line
 * (rank, host, what it was waiting for) and ends the job with MPI_Abort, as the watchdog does;
 * the others wait for that end, with a backstop.
 */
#ifndef INGOT_BASE_ARRIVAL_H
#define INGOT_BASE_ARRIVAL_H

#include <ingot/status.h>
#include <stdint.h>

/**
 * Liveness check of @p n ranks of the arrival's communicator that have not arrived: set
 * @p silent[i] to 1 for each rank that did not answer by @p deadline_ns (or is already known
 * to be silent), 0 for one that answered. May block until @p deadline_ns.
 */
typedef void (*ingot_arrival_alive_fn_t)(const int *ranks, int n, uint64_t deadline_ns, int *silent,
                                         void *arg);

typedef struct ingot_arrival {
    const void *comm;    /**< an MPI_Comm * (this header needs no <mpi.h>) */
    const char *what;    /**< what every rank arrives at, for the message ("cache: window free") */
    uint64_t timeout_ns; /**< the overall bound (INGOT_TIMEOUT) */
    uint64_t silence_ns; /**< how long a missing rank may be silent; 0: no checks */
    ingot_arrival_alive_fn_t alive;           /**< NULL: no liveness checks (only timeout_ns) */
    void *arg;                                /**< for alive and host */
    const char *(*host)(int rank, void *arg); /**< a rank's host for the message, or NULL */
    /** The job's communicator (an MPI_Comm *): messages number ranks as it does. NULL: comm's */
    const void *job_comm;
} ingot_arrival_t;

/**
 * Wait until every rank of @p a->comm has arrived (collective). INGOT_OK when they all did; a
 * rank found missing ends the job (see above) and this function does not return.
 */
ingot_status_t ingot_mpi_arrive(const ingot_arrival_t *a);

#endif

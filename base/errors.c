/* Error boundary for MPI and CUDA (see errors.h). */
#include "base/errors.h"
#include "base/log.h"
#include <ingot/version.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#if INGOT_BUILD_CUDA
#    include <cuda_runtime_api.h>
#endif

ingot_status_t ingot_mpi_check(int rc, const char *call, const char *what)
{
    if (rc == MPI_SUCCESS) {
        return INGOT_OK;
    }
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, inited = 0;
    MPI_Initialized(&inited); /* MPI_Error_string before MPI_Init aborts under Open MPI 4 */
    if (!inited || MPI_Error_string(rc, text, &len) != MPI_SUCCESS) {
        len = snprintf(text, sizeof(text), "MPI error %d", rc);
    }
    ingot_error("%s (%s) failed: %.*s", call, what, len, text);
    return INGOT_ERR_MPI;
}

/* Size of the communicator of this thread's outermost hold (0: none): agreements over a smaller
 * one (a node's ranks) keep the lines for the agreement over the whole job. */
static _Thread_local int agree_hold_size;

void ingot_mpi_hold_begin(const void *comm)
{
    if (ingot_log_hold_depth() == 0) {
        agree_hold_size = 0;
        MPI_Comm_size(*(const MPI_Comm *)comm, &agree_hold_size);
    }
    ingot_log_hold_begin();
}

void ingot_mpi_hold_end(void)
{
    ingot_log_hold_end();
    if (ingot_log_hold_depth() == 0) {
        agree_hold_size = 0;
    }
}

/* After a failed agreement (every rank of @p comm calls it): which ranks hold error lines and
 * whether theirs are the same; the lines are written once, or by each holder when they differ.
 * Returns the world rank of the first holder (-1: none). */
static int agree_report(MPI_Comm comm)
{
    uint64_t digest = 0;
    unsigned held = ingot_log_held(&digest);
    int world_rank = 0, size = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    MPI_Comm_size(comm, &size);
    /* min over holders of: rank, ~rank (so ~max), digest, ~digest; non-holders send the top */
    uint64_t v[4] = {UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX}, w[4];
    int holders = held > 0, nholders = 0;
    if (held > 0) {
        v[0] = (uint64_t)world_rank;
        v[1] = ~(uint64_t)world_rank;
        v[2] = digest;
        v[3] = ~digest;
    }
    if (INGOT_MPI_CALL("error report", MPI_Allreduce, v, w, 4, MPI_UINT64_T, MPI_MIN, comm) ||
        INGOT_MPI_CALL("error report", MPI_Allreduce, &holders, &nholders, 1, MPI_INT, MPI_SUM,
                       comm)) {
        ingot_log_held_flush(1, NULL);
        return -1;
    }
    if (held > 0 && (agree_hold_size == 0 || size == agree_hold_size)) {
        int same = w[2] == ~w[3];
        char note[96] = "";
        if (same && nholders > 1) {
            snprintf(note, sizeof(note), " (the same on %d ranks: %d..%d)", nholders, (int)w[0],
                     (int)~w[1]);
        }
        ingot_log_held_flush(!same || (uint64_t)world_rank == w[0], note);
    }
    return nholders > 0 ? (int)w[0] : -1;
}

ingot_status_t ingot_mpi_agree(const void *comm, ingot_status_t mine, const char *what)
{
    int local = (int)mine, worst = (int)mine;
    MPI_Comm c = *(const MPI_Comm *)comm;
    ingot_status_t st = INGOT_MPI_CALL(what, MPI_Allreduce, &local, &worst, 1, MPI_INT, MPI_MIN, c);
    if (st != INGOT_OK) {
        return st;
    }
    if (worst == INGOT_OK) {
        return INGOT_OK;
    }
    int first = agree_report(c);
    if (mine == INGOT_OK) { /* the failing rank said why; here it is the last error, not a line */
        char msg[256];
        if (first >= 0) {
            snprintf(msg, sizeof(msg), "%s failed on rank %d: %s", what, first,
                     ingot_status_string((ingot_status_t)worst));
        } else {
            snprintf(msg, sizeof(msg), "%s failed on another rank: %s", what,
                     ingot_status_string((ingot_status_t)worst));
        }
        ingot_last_error_set(msg);
        ingot_info("%s", msg);
    }
    return (ingot_status_t)worst;
}

ingot_status_t ingot_cuda_check(int cuda_error, const char *call, const char *what)
{
    if (cuda_error == 0) {
        return INGOT_OK;
    }
#if INGOT_BUILD_CUDA
    ingot_error("%s (%s) failed: %s", call, what, cudaGetErrorString((cudaError_t)cuda_error));
    cudaGetLastError(); /* do not leave a sticky error for a framework sharing the process */
    return INGOT_ERR_CUDA;
#else
    ingot_error("%s (%s): this build has no CUDA support", call, what);
    return INGOT_ERR_UNSUPPORTED;
#endif
}

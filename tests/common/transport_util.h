/* Helpers of the programs that drive the transport directly (cache/test_put_release.c,
 * perf/cache_fetch.c). */
#ifndef INGOT_TEST_CACHE_TRANSPORT_UTIL_H
#define INGOT_TEST_CACHE_TRANSPORT_UTIL_H

#include "transport/transport.h"
#include <mpi.h>
#include <time.h>

/** An op callback with nothing to do (the caller polls op->pending). */
static inline void transport_util_op_done(ingot_transport_op_t *op)
{
    (void)op;
}

/** MPI_COMM_WORLD's barrier, sleeping between tests: MPI's own would busy-poll a core away from
 *  this rank's progress thread, which serves its peers' reads meanwhile. */
static inline void transport_util_barrier(void)
{
    MPI_Request done;
    MPI_Ibarrier(MPI_COMM_WORLD, &done);
    for (int flag = 0; !flag;) {
        MPI_Test(&done, &flag, MPI_STATUS_IGNORE);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
}

#endif

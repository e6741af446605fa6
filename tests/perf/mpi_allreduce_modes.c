/*
 * Why the MPI backend runs its own ring (docs/collectives.md): Open MPI's all-reduce flavours on
 * the same persistent float32 buffers, one process per rank, run by hand:
 *   mpirun -np N [-x MALLOC_MMAP_MAX_=0] mpi_allreduce_modes BYTES [ITERS]
 * For in-place and out-of-place: blocking MPI_Allreduce, MPI_Iallreduce + MPI_Wait, and a
 * persistent MPIX_Allreduce_init request (Open MPI's extension; MPI_Allreduce_init in MPI 4)
 * started and waited ITERS times. Prints the mean time and busbw (algbw * 2(n-1)/n) of each.
 */
#include <mpi.h>
#include <mpi-ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { BLOCKING, NONBLOCKING, PERSISTENT, MODES };
static const char *const names[MODES] = {"MPI_Allreduce", "MPI_Iallreduce", "persistent"};

static void one(int mode, const float *send, float *recv, int count, MPI_Request *preq)
{
    MPI_Request req;
    switch (mode) {
    case BLOCKING: MPI_Allreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); break;
    case NONBLOCKING:
        MPI_Iallreduce(send, recv, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
        break;
    default: MPI_Start(preq); MPI_Wait(preq, MPI_STATUS_IGNORE);
    }
}

int main(int argc, char **argv)
{
    int level, rank, n;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    if (argc < 2) {
        if (rank == 0) {
            fprintf(stderr, "usage: mpi_allreduce_modes BYTES [ITERS]\n");
        }
        MPI_Finalize();
        return 2;
    }
    int count = (int)(atol(argv[1]) / 4), iters = argc > 2 ? atoi(argv[2]) : 10;
    float *a = malloc((size_t)count * 4), *b = malloc((size_t)count * 4);
    memset(a, 0, (size_t)count * 4); /* pre-fault */
    memset(b, 0, (size_t)count * 4);
    for (int in_place = 1; in_place >= 0; in_place--) {
        const float *send = in_place ? MPI_IN_PLACE : a;
        for (int mode = 0; mode < MODES; mode++) {
            MPI_Request preq = MPI_REQUEST_NULL;
            if (mode == PERSISTENT) {
                MPIX_Allreduce_init(send, b, count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD,
                                    MPI_INFO_NULL, &preq);
            }
            one(mode, send, b, count, &preq);
            MPI_Barrier(MPI_COMM_WORLD);
            double t = MPI_Wtime();
            for (int i = 0; i < iters; i++) {
                one(mode, send, b, count, &preq);
            }
            t = (MPI_Wtime() - t) / iters;
            double tmax;
            MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            if (rank == 0) {
                printf("%d ranks %12d B %-12s %-15s %9.3f ms  busbw %6.2f GB/s\n", n, count * 4,
                       in_place ? "in-place" : "out-of-place", names[mode], tmax * 1e3,
                       (double)count * 4 / tmax * 2 * (n - 1) / n / 1e9);
            }
            if (preq != MPI_REQUEST_NULL) {
                MPI_Request_free(&preq);
            }
        }
    }
    free(a);
    free(b);
    MPI_Finalize();
    return 0;
}

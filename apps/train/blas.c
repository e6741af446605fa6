/*
 * Which BLAS ingot-train's products take (--blas), agreed over the ranks: a run computes on
 * CBLAS or on cuBLAS throughout. auto takes cuBLAS only when every rank can: each step's
 * all-reduce waits for the slowest rank, so one rank left on the CPU would set the pace anyway,
 * and a run that mixed the two could be reproduced by neither.
 */
#include "train/train.h"
#include <stdio.h>

#define BLAS_MSG_MAX 320

/* This rank's products on its placement's GPU: 0 with @p g moved there and what runs in
 * @p msg; -1 with why not in @p msg (naming the rank) and @p g left on the CPU. */
static int blas_cuda_local(ingot_ctx_h ctx, int rank, size_t max_elems, train_gemm_t *g, char *msg,
                           size_t len)
{
    ingot_placement_t pl = {.field_mask = INGOT_PLACEMENT_FIELD_GPU};
    ingot_runtime_info_t info = {.field_mask = INGOT_RUNTIME_INFO_FIELD_CUDA};
    ingot_status_t st = ingot_placement_get(ctx, &pl);
    char why[BLAS_MSG_MAX - 64];
    if (st != INGOT_OK) {
        snprintf(msg, len, "rank %d: ingot_placement_get: %s", rank, ingot_status_string(st));
    } else if (pl.gpu_index < 0) {
        snprintf(msg, len, "the placement of rank %d has no GPU", rank);
    } else if (pl.cuda_device < 0) {
        snprintf(msg, len, "rank %d: CUDA_VISIBLE_DEVICES hides its placement's GPU %d", rank,
                 pl.gpu_index);
    } else if (ingot_runtime_info_query(&info) != INGOT_OK || info.cuda_device_count == 0) {
        /* also where ingot was built without CUDA: the reason says so */
        snprintf(msg, len, "rank %d has no usable CUDA device: %s", rank, info.cuda_reason);
    } else if (train_gemm_open_cuda(g, pl.cuda_device, max_elems, why, sizeof(why)) != 0) {
        snprintf(msg, len, "rank %d: %s", rank, why);
    } else {
        snprintf(msg, len, "%s", why);
        return 0;
    }
    return -1;
}

int train_blas_choose(ingot_ctx_h ctx, train_blas_t want, size_t max_elems, train_gemm_t *g,
                      char *why, size_t len)
{
    if (want == TRAIN_BLAS_CPU) {
        snprintf(why, len, "--blas cpu");
        return 0;
    }
    int rank, world;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    char msg[BLAS_MSG_MAX] = "";
    int ok = blas_cuda_local(ctx, rank, max_elems, g, msg, sizeof(msg)) == 0;
    int first = ok ? world : rank; /* the lowest rank that cannot, or world when all can */
    int cannot = !ok;
    MPI_Allreduce(MPI_IN_PLACE, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &cannot, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    const char *asked = want == TRAIN_BLAS_AUTO ? "auto" : "--blas cuda";
    if (first == world) { /* every rank on its GPU: rank 0's words for the report */
        snprintf(why, len, "%s: %s%s", asked, msg,
                 world > 1 ? " at rank 0; each rank on its placement's GPU" : "");
        return 0;
    }
    train_gemm_close(g);
    if (want == TRAIN_BLAS_CUDA) {
        if (rank == first && cannot > 1) { /* the first rank that cannot says why, once */
            fprintf(stderr, TRAIN_TOOL ": --blas cuda: %s (%d of %d ranks cannot)\n", msg, cannot,
                    world);
        } else if (rank == first) {
            fprintf(stderr, TRAIN_TOOL ": --blas cuda: %s\n", msg);
        }
        return TRAIN_EXIT_FAIL;
    }
    MPI_Bcast(msg, sizeof(msg), MPI_CHAR, first, MPI_COMM_WORLD);
    snprintf(why, len, "auto: %s", msg);
    return 0;
}

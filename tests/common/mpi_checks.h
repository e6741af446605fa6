/*
 * Helpers shared by the MPI loader tests (test_loader.c, test_cache.c, test_disk.c): the dataset
 * (packed once by rank 0), each batch's bytes and labels, one step checked, every sample
 * delivered exactly once over all ranks.
 */
#ifndef INGOT_TEST_MPI_CHECKS_H
#define INGOT_TEST_MPI_CHECKS_H

#include "common/test.h"
#include "common/loader_data.h"
#include <ingot/order.h>
#include <ingot/shard.h>
#include <mpi.h>
#include <unistd.h>
#include <stdint.h>
#include <stdlib.h>

/** The dataset of @p n samples in @p dir/data (zstd members at @p zstd > 0), packed by rank 0
 *  unless it is there; its manifest's path into @p manifest. Collective. */
static inline void check_mpi_dataset(const char *dir, uint64_t n, uint64_t shard_size, int zstd,
                                     char *manifest, size_t len)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    snprintf(manifest, len, "%s/data/manifest.ingot", dir);
    if (rank == 0 && access(manifest, F_OK) != 0) {
        char data[1024];
        snprintf(data, sizeof(data), "%s/data", dir);
        CHECK(data_pack(data, n, shard_size, zstd) == 0);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/** Every sample of @p b: bytes and label as packed, where its data lives (device batches are
 *  copied back first). Exits naming the rank, step and sample otherwise. */
static inline void check_mpi_batch(const ingot_batch_t *b)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    void *copy;
    const uint8_t *data = data_host_bytes(b, &copy);
    for (uint32_t i = 0; i < b->count; i++) {
        if (data_check(b->indices[i], data + b->offsets[i], b->lengths[i], b->labels[i]) != 0) {
            fprintf(stderr, "rank %d step %llu: sample %llu (%s) has wrong bytes or label\n", rank,
                    (unsigned long long)b->step, (unsigned long long)b->indices[i], b->keys[i]);
            exit(1);
        }
    }
    free(copy);
}

/** One step of @p l checked: the next batch is of @p epoch with @p slice samples, each checked
 *  (check_mpi_batch); its indices into @p ids, its record bytes (from @p m) added to *@p records;
 *  released. */
static inline void check_mpi_step(ingot_loader_h l, ingot_manifest_h m, uint64_t epoch,
                                  uint64_t slice, uint64_t *ids, uint64_t *records)
{
    ingot_batch_t b;
    CHECK_OK(ingot_loader_next(l, &b));
    CHECK(b.epoch == epoch && b.count == slice);
    check_mpi_batch(&b);
    for (uint64_t i = 0; i < slice; i++) {
        ids[i] = b.indices[i];
        ingot_sample_info_t si;
        CHECK_OK(ingot_manifest_sample_get(m, b.indices[i], &si));
        *records += si.length;
    }
    CHECK_OK(ingot_loader_release(l, &b));
}

/** The order the shard module computes for @p n samples, independently of the loader. */
static inline ingot_order_h check_mpi_order(uint64_t n, uint64_t global_batch, uint64_t seed)
{
    ingot_order_params_t op = {.field_mask = INGOT_ORDER_PARAM_FIELD_SAMPLES |
                                             INGOT_ORDER_PARAM_FIELD_BATCH |
                                             INGOT_ORDER_PARAM_FIELD_SEED,
                               .sample_count = n,
                               .global_batch = global_batch,
                               .seed = seed};
    ingot_order_h order;
    CHECK_OK(ingot_order_create(&op, &order));
    return order;
}

/** Gather every rank's @p count delivered @p ids at rank 0; there, each of [0, n) must appear
 *  exactly once. Collective over MPI_COMM_WORLD. */
static inline void check_mpi_exactly_once(const uint64_t *ids, int count, uint64_t n)
{
    int rank, world;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    int *counts = calloc((size_t)world, sizeof(int)), *displs = calloc((size_t)world, sizeof(int));
    MPI_Gather(&count, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; rank == 0 && r < world; r++) {
        displs[r] = total;
        total += counts[r];
    }
    uint64_t *all = calloc(total ? (size_t)total : 1, sizeof(uint64_t));
    MPI_Gatherv(ids, count, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK((uint64_t)total == n);
        uint8_t *seen = calloc(n, 1);
        for (int i = 0; i < total; i++) {
            CHECK(all[i] < n && seen[all[i]]++ == 0);
        }
        free(seen);
    }
    free(all);
    free(counts);
    free(displs);
}

#endif

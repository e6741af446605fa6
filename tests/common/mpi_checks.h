/*
 * Helpers shared by the MPI loader tests (test_loader.c, test_cache.c, test_disk.c): the dataset
 * (packed once by rank 0), each batch's bytes and labels, one step checked, every sample
 * delivered exactly once over all ranks (or, in a padded epoch, the tail twice).
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

/** The order the shard module computes for @p n samples, independently of the loader, with the
 *  tail policy @p tail. */
static inline ingot_order_h check_mpi_order_tail(uint64_t n, uint64_t global_batch, uint64_t seed,
                                                 ingot_order_tail_t tail)
{
    ingot_order_params_t op = {
        .field_mask = INGOT_ORDER_PARAM_FIELD_SAMPLES | INGOT_ORDER_PARAM_FIELD_BATCH |
                      INGOT_ORDER_PARAM_FIELD_SEED | INGOT_ORDER_PARAM_FIELD_TAIL,
        .sample_count = n,
        .global_batch = global_batch,
        .seed = seed,
        .tail = tail};
    ingot_order_h order;
    CHECK_OK(ingot_order_create(&op, &order));
    return order;
}

/** The order the shard module computes for @p n samples (the tail dropped). */
static inline ingot_order_h check_mpi_order(uint64_t n, uint64_t global_batch, uint64_t seed)
{
    return check_mpi_order_tail(n, global_batch, seed, INGOT_ORDER_TAIL_DROP);
}

/** Every rank's @p count @p ids gathered at rank 0 (their number into *@p total_p there; NULL
 *  and 0 elsewhere). Collective over MPI_COMM_WORLD. */
static inline uint64_t *check_mpi_gather(const uint64_t *ids, int count, int *total_p)
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
    free(counts);
    free(displs);
    *total_p = total;
    if (rank != 0) {
        free(all);
        return NULL;
    }
    return all;
}

/** Gather every rank's @p count delivered @p ids at rank 0; there, each of [0, n) must appear
 *  exactly once. Collective over MPI_COMM_WORLD. */
static inline void check_mpi_exactly_once(const uint64_t *ids, int count, uint64_t n)
{
    int total;
    uint64_t *all = check_mpi_gather(ids, count, &total);
    if (all != NULL) {
        CHECK((uint64_t)total == n);
        uint8_t *seen = calloc(n, 1);
        for (int i = 0; i < total; i++) {
            CHECK(all[i] < n && seen[all[i]]++ == 0);
        }
        free(seen);
    }
    free(all);
}

/** A padded epoch (INGOT_ORDER_TAIL_PAD) of @p n samples over @p positions (steps times the
 *  global batch, > n): gathered at rank 0, every sample of [0, n) came at least once, and twice
 *  exactly those at the first positions - n positions of @p epoch's @p order (the tail wraps to
 *  the start of the order). Collective over MPI_COMM_WORLD. */
static inline void check_mpi_padded(const uint64_t *ids, int count, ingot_order_h order,
                                    uint64_t epoch, uint64_t n, uint64_t positions)
{
    int total;
    uint64_t *all = check_mpi_gather(ids, count, &total);
    if (all != NULL) {
        CHECK((uint64_t)total == positions && positions > n && positions - n < n);
        uint8_t *seen = calloc(n, 1);
        for (int i = 0; i < total; i++) {
            CHECK(all[i] < n && seen[all[i]]++ < 2);
        }
        for (uint64_t q = 0; q < positions - n; q++) { /* the tail: its second delivery */
            uint64_t id;
            CHECK_OK(ingot_order_at(order, epoch, q, &id));
            CHECK(seen[id]-- == 2);
        }
        for (uint64_t i = 0; i < n; i++) {
            CHECK(seen[i] == 1); /* missing (0), or twice without being in the tail (2) */
        }
        free(seen);
    }
    free(all);
}

#endif

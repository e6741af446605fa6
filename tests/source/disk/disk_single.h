/*
 * The disk tier's tests in one process (MPI singleton): the tier's variables for a folder of the
 * test's own, and every batch of a loader delivered with each sample checked.
 */
#ifndef INGOT_TESTS_DISK_SINGLE_H
#define INGOT_TESTS_DISK_SINGLE_H

#include "common/test.h"
#include "common/loader_data.h"
#include <ingot/loader.h>
#include <stdio.h>
#include <stdlib.h>

/* The tier on, in @p dir (test_tmpdir()/cache, into @p dir of @p len): 64 MiB of pieces of
 * 16 KiB. */
static inline void disk_single_env(char *dir, size_t len)
{
    snprintf(dir, len, "%s/cache", test_tmpdir());
    setenv("INGOT_DISK_CACHE_DIR", dir, 1);
    setenv("INGOT_DISK_CACHE_BYTES", "64MiB", 1);
    setenv("INGOT_DISK_CACHE_PIECE", "16KiB", 1);
}

/* Deliver every batch of the loader's epochs before @p stop (UINT64_MAX: all of them), each sample
 * checked; the samples delivered. */
static inline uint64_t disk_single_drain(ingot_loader_h l, uint64_t stop)
{
    ingot_batch_t b;
    ingot_status_t st;
    uint64_t samples = 0;
    while ((st = ingot_loader_next(l, &b)) == INGOT_OK) {
        if (b.epoch >= stop) {
            CHECK_OK(ingot_loader_release(l, &b));
            return samples;
        }
        for (uint32_t i = 0; i < b.count; i++) {
            CHECK(data_check(b.indices[i], (const uint8_t *)b.data + b.offsets[i], b.lengths[i],
                             b.labels[i]) == 0);
        }
        samples += b.count;
        CHECK_OK(ingot_loader_release(l, &b));
    }
    CHECK(st == INGOT_END_OF_DATA);
    return samples;
}

#endif

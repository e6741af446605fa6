/*
 * The disk tier under several readers in one process (MPI singleton), for ThreadSanitizer: the
 * tier copies hits and misses into the loader's iovecs from every reader thread at once, fields
 * into slots and the tar headers and padding between them into the loader's gap sinks. Stored
 * (not compressed) samples of two fields, so every run is scattered with gaps; a cold epoch
 * (misses, fills written by the keeper's writers) and a warm one (hits), every sample checked.
 * Run by the tsan tier, where a sink shared by the readers is a data race that fails the test.
 */
#include "common/test.h"
#include "common/loader_data.h"
#include <ingot/ingot.h>
#include <ingot/loader.h>
#include <stdio.h>
#include <stdlib.h>

#define N       480
#define BATCH   8
#define EPOCHS  2
#define READERS 4

int main(void)
{
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/cache", test_tmpdir());
    setenv("INGOT_DISK_CACHE_DIR", dir, 1);
    setenv("INGOT_DISK_CACHE_BYTES", "64MiB", 1);
    setenv("INGOT_DISK_CACHE_PIECE", "16KiB", 1);
    const char *m = data_set(test_tmpdir(), "data", N, 64 << 10, 0);
    CHECK(m != NULL);
    ingot_ctx_h ctx;
    CHECK_OK(ingot_init(NULL, &ctx));
    ingot_loader_params_t p = data_params(m, BATCH, 7, 4, READERS, 2);
    p.field_mask |= INGOT_LOADER_PARAM_FIELD_EPOCHS;
    p.epochs = EPOCHS;
    ingot_loader_h l;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    ingot_batch_t b;
    ingot_status_t st;
    uint64_t samples = 0;
    while ((st = ingot_loader_next(l, &b)) == INGOT_OK) {
        for (uint32_t i = 0; i < b.count; i++) {
            CHECK(data_check(b.indices[i], (const uint8_t *)b.data + b.offsets[i], b.lengths[i],
                             b.labels[i]) == 0);
        }
        samples += b.count;
        CHECK_OK(ingot_loader_release(l, &b));
    }
    CHECK(st == INGOT_END_OF_DATA);
    CHECK(samples == (uint64_t)N * EPOCHS);
    ingot_loader_stats_t s = {.field_mask = INGOT_LOADER_STATS_FIELD_DISK};
    CHECK_OK(ingot_loader_stats(l, &s));
    printf("disk tier: hits %llu misses %llu admitted %llu\n", (unsigned long long)s.disk_hits,
           (unsigned long long)s.disk_misses, (unsigned long long)s.disk_admitted);
    CHECK(s.disk_misses > 0 && s.disk_admitted > 0 && s.disk_hits > 0); /* both paths ran */
    ingot_loader_destroy(l);
    ingot_finalize(ctx);
    return 0;
}

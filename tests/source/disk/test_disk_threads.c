/*
 * The disk tier under several readers in one process (MPI singleton), for ThreadSanitizer: the
 * tier copies hits and misses into the loader's iovecs from every reader thread at once, fields
 * into slots and the tar headers and padding between them into the loader's gap sinks. Stored
 * (not compressed) samples of two fields, so every run is scattered with gaps; a cold epoch
 * (misses, fills written by the keeper's writers) and a warm one (hits), every sample checked.
 * Run by the tsan tier, where a sink shared by the readers is a data race that fails the test.
 */
#include "disk_single.h"
#include <ingot/ingot.h>

#define N       480
#define BATCH   8
#define EPOCHS  2
#define READERS 4

int main(void)
{
    char dir[1024];
    disk_single_env(dir, sizeof(dir));
    const char *m = data_set(test_tmpdir(), "data", N, 64 << 10, 0);
    CHECK(m != NULL);
    ingot_ctx_h ctx;
    CHECK_OK(ingot_init(NULL, &ctx));
    ingot_loader_params_t p = data_params(m, BATCH, 7, 4, READERS, 2);
    p.field_mask |= INGOT_LOADER_PARAM_FIELD_EPOCHS;
    p.epochs = EPOCHS;
    ingot_loader_h l;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    uint64_t samples = disk_single_drain(l, UINT64_MAX);
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

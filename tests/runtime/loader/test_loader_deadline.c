/*
 * A read past its deadline (MPI singleton, INGOT_TIMEOUT=200ms): a byte source in front of
 * storage that never completes its first read makes that read time out at its deadline, the
 * step fail with INGOT_ERR_TIMED_OUT, and the staging buffer it holds stay out of service
 * (quarantined) until the source fails the read later; then buffer and request come back.
 * (Falling through a source that answers "retry elsewhere": runtime.loader.faults, whose
 * timeout is long enough for whole epochs on a busy machine.)
 */
#include "common/test.h"
#include "common/loader_data.h"
#include "common/source_test_util.h"
#include "runtime/loader/loader_impl.h"
#include "base/time.h"
#include <ingot/ingot.h>

#define N         64
#define SLICE     4
#define DEADLINE  (200 * INGOT_NSEC_PER_MSEC)
#define SETTLE_NS (5 * INGOT_NSEC_PER_SEC) /* bound on waiting for the pipeline to go idle */

static ingot_ctx_h ctx;
static char log_path[1024];

/* Small batches, one reader and one worker: the first read of the run is known. */
#define PARAMS(_m) data_params((_m), SLICE, 3, 4, 1, 1)

/* Staging buffers in the free queue once the pipeline is idle (bounded wait); whether the
 * quarantined one is among them. */
static size_t staging_free(ingot_loader_h l, const void *quarantined, int *found_p)
{
    uint64_t end = ingot_time_ns() + SETTLE_NS;
    while (ingot_time_ns() < end && (ingot_mpmc_size(&l->read_q) || ingot_mpmc_size(&l->work_q) ||
                                     ingot_mpmc_size(&l->staging_q) < l->nstaging - 1)) {
        usleep(1000);
    }
    usleep(50 * 1000); /* a reader finishing its run puts its buffer back */
    size_t n = 0;
    void *bufs[64], *item;
    *found_p = 0;
    while (n < 64 && ingot_mpmc_try_pop(&l->staging_q, &item)) {
        *found_p |= (item == quarantined);
        bufs[n++] = item;
    }
    for (size_t i = 0; i < n; i++) {
        CHECK(ingot_mpmc_try_push(&l->staging_q, bufs[i]));
    }
    return n;
}

/* The readers' requests held out of service (quarantined). */
static uint32_t busy_requests(ingot_loader_h l)
{
    uint32_t n = 0;
    for (uint32_t r = 0; r < l->nreaders; r++) {
        for (uint32_t i = 0; i < LOADER_REQS_PER_READER; i++) {
            n += atomic_load(&l->rctx[r].reqs[i].busy) != 0;
        }
    }
    return n;
}

static void test_stuck_read(const char *m)
{
    static test_source_t stuck = {.base = {.ops = &test_source_ops}, .stuck = 1};
    ingot_source_t *front = &stuck.base;
    ingot_loader_params_t p = PARAMS(m);
    ingot_loader_h l;
    ingot_batch_t b;
    CHECK_OK(ingot_loader_create_with_sources(ctx, &p, &front, 1, &l));
    uint64_t t0 = ingot_time_ns();
    CHECK_STATUS(ingot_loader_next(l, &b), INGOT_ERR_TIMED_OUT);
    CHECK(ingot_time_ns() - t0 >= DEADLINE - 20 * INGOT_NSEC_PER_MSEC); /* generous bound */
    uint64_t end = ingot_time_ns() + SETTLE_NS;
    while (atomic_load(&stuck.cancels) == 0 && ingot_time_ns() < end) {
        usleep(1000);
    }
    CHECK(atomic_load(&stuck.cancels) == 1 && atomic_load(&stuck.held) != NULL);
    int found;
    CHECK(staging_free(l, stuck.held_buf, &found) == l->nstaging - 1 && !found);
    CHECK(busy_requests(l) == 1);
    char *text = test_read_file(log_path, NULL);
    CHECK_CONTAINS(text, "from stuck:shard-");
    CHECK_CONTAINS(text, "timed out (INGOT_TIMEOUT); its buffer is quarantined until the source "
                         "completes it");
    free(text);
    /* The source fails the read at last: the buffer and the request come back into service. */
    ingot_source_complete(atomic_load(&stuck.held), INGOT_ERR_IO);
    CHECK(staging_free(l, stuck.held_buf, &found) == l->nstaging && found);
    CHECK(busy_requests(l) == 0);
    CHECK_STATUS(ingot_loader_next(l, &b), INGOT_ERR_TIMED_OUT); /* the failure is sticky */
    ingot_loader_destroy(l);
}

int main(void)
{
    snprintf(log_path, sizeof(log_path), "%s/loader.log", test_tmpdir());
    setenv("INGOT_LOG_FILE", log_path, 1);
    setenv("INGOT_TIMEOUT", "200ms", 1);
    CHECK_OK(ingot_init(NULL, &ctx));
    const char *zstd = data_set(test_tmpdir(), "zstd", N, 8 << 10, 3);
    CHECK(zstd != NULL);
    test_stuck_read(zstd); /* zstd: runs go through staging buffers */
    ingot_finalize(ctx);
    return 0;
}

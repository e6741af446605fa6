/*
 * Order, partition and cursor: every epoch is a true permutation; the same seed gives the same
 * global order for world sizes 1..4; tail policies give every rank the same step count; a
 * world size that does not divide the global batch is rejected; locality mode's quality against
 * the full shuffle; cursor resume across world sizes delivers every position exactly once;
 * torn, corrupt or mismatched cursors are errors naming the field.
 */
#include "common/test.h"
#include "base/log.h"
#include <ingot/order.h>
#include "base/status.h"
#include <stdint.h>

static double dabs(double x)
{
    return x < 0 ? -x : x;
}

static ingot_order_h make(uint64_t n, uint64_t b, uint64_t seed, ingot_order_tail_t tail)
{
    ingot_order_params_t p = {
        .field_mask = INGOT_ORDER_PARAM_FIELD_SAMPLES | INGOT_ORDER_PARAM_FIELD_BATCH |
                      INGOT_ORDER_PARAM_FIELD_SEED | INGOT_ORDER_PARAM_FIELD_TAIL,
        .sample_count = n,
        .global_batch = b,
        .seed = seed,
        .tail = tail};
    ingot_order_h o;
    CHECK_OK(ingot_order_create(&p, &o));
    return o;
}

static void check_permutation(ingot_order_h o, uint64_t n, uint64_t epoch, uint64_t *out)
{
    uint8_t *seen = calloc(n, 1);
    for (uint64_t i = 0; i < n; i++) {
        uint64_t x;
        CHECK_OK(ingot_order_at(o, epoch, i, &x));
        CHECK(x < n && !seen[x]);
        seen[x] = 1;
        if (out) out[i] = x;
    }
    free(seen);
}

static void test_permutations(void)
{
    const uint64_t sizes[] = {1, 2, 3, 7, 64, 1000, 4097};
    for (size_t k = 0; k < INGOT_ARRAY_SIZE(sizes); k++) {
        uint64_t n = sizes[k];
        ingot_order_h o = make(n, 1, 42, INGOT_ORDER_TAIL_DROP);
        uint64_t *a = malloc(n * 8), *b = malloc(n * 8), *c = malloc(n * 8);
        check_permutation(o, n, 0, a);
        check_permutation(o, n, 1, b);
        check_permutation(o, n, 0, c);
        CHECK(memcmp(a, c, n * 8) == 0);              /* reproducible */
        if (n >= 64) CHECK(memcmp(a, b, n * 8) != 0); /* epochs differ */
        ingot_order_destroy(o);
        o = make(n, 1, 43, INGOT_ORDER_TAIL_DROP);
        check_permutation(o, n, 0, b);
        if (n >= 64) CHECK(memcmp(a, b, n * 8) != 0); /* seeds differ */
        ingot_order_destroy(o);
        free(a);
        free(b);
        free(c);
    }
}

/* The global order seen through rank slices is the same for world sizes 1..4. */
static void test_world_sizes(void)
{
    const uint64_t n = 1003, batch = 24;
    ingot_order_h o = make(n, batch, 7, INGOT_ORDER_TAIL_PAD);
    uint64_t steps = ingot_order_steps(o);
    CHECK(steps == (n + batch - 1) / batch);
    uint64_t ids[24];
    for (uint32_t world = 1; world <= 4; world++) {
        for (uint64_t s = 0; s < steps; s++) {
            for (uint32_t r = 0; r < world; r++) {
                CHECK_OK(ingot_order_slice(o, 3, s, r, world, ids, INGOT_ARRAY_SIZE(ids)));
                for (uint64_t i = 0; i < batch / world; i++) {
                    uint64_t x;
                    CHECK_OK(ingot_order_at(o, 3, s * batch + r * (batch / world) + i, &x));
                    CHECK(ids[i] == x);
                }
            }
        }
    }
    /* PAD wraps: the last step's tail repeats the start of the order. */
    uint64_t first, wrapped;
    CHECK_OK(ingot_order_at(o, 3, 0, &first));
    CHECK_OK(ingot_order_at(o, 3, n, &wrapped));
    CHECK(first == wrapped);
    CHECK_STATUS(ingot_order_at(o, 3, steps * batch, &first), INGOT_ERR_OUT_OF_RANGE);
    ingot_last_error_clear();
    CHECK_STATUS(ingot_order_slice(o, 0, 0, 0, 5, ids, 24), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "world size 5 must divide the global batch 24");
    ingot_order_destroy(o);
    o = make(n, batch, 7, INGOT_ORDER_TAIL_DROP);
    CHECK(ingot_order_steps(o) == n / batch);
    CHECK_STATUS(ingot_order_slice(o, 0, n / batch, 0, 1, ids, 24), INGOT_ERR_OUT_OF_RANGE);
    ingot_order_destroy(o);
}

/* Mean distinct shards per global batch and Spearman rho between position and sample index. */
static void quality(ingot_order_h o, uint64_t n, uint64_t per_shard, uint64_t batch,
                    double *distinct_p, double *rho_p)
{
    uint8_t *hit = calloc(n / per_shard + 1, 1);
    double d2 = 0, distinct = 0;
    for (uint64_t s = 0; s < n / batch; s++) {
        memset(hit, 0, n / per_shard + 1);
        for (uint64_t i = 0; i < batch; i++) {
            uint64_t p = s * batch + i, x;
            CHECK_OK(ingot_order_at(o, 0, p, &x));
            distinct += !hit[x / per_shard];
            hit[x / per_shard] = 1;
            d2 += ((double)p - (double)x) * ((double)p - (double)x);
        }
    }
    double m = (double)(n / batch * batch);
    *distinct_p = distinct / (double)(n / batch);
    *rho_p = 1.0 - 6.0 * d2 / (m * (m * m - 1.0));
    free(hit);
}

static void test_locality(void)
{
    enum { SHARDS = 100, PER = 100, WINDOW = 4, BATCH = 64 };
    const uint64_t n = SHARDS * PER;
    uint64_t counts[SHARDS];
    for (int i = 0; i < SHARDS; i++) counts[i] = PER;
    ingot_order_params_t p = {
        .field_mask = INGOT_ORDER_PARAM_FIELD_SAMPLES | INGOT_ORDER_PARAM_FIELD_BATCH |
                      INGOT_ORDER_PARAM_FIELD_SEED | INGOT_ORDER_PARAM_FIELD_MODE |
                      INGOT_ORDER_PARAM_FIELD_TAIL,
        .sample_count = n,
        .global_batch = BATCH,
        .seed = 5,
        .tail = INGOT_ORDER_TAIL_PAD,
        .mode = INGOT_ORDER_LOCALITY,
        .shard_samples = counts,
        .shard_count = SHARDS,
        .window = WINDOW};
    ingot_order_h loc, full = make(n, BATCH, 5, INGOT_ORDER_TAIL_PAD);
    CHECK_OK(ingot_order_create(&p, &loc));
    check_permutation(loc, n, 0, NULL);
    check_permutation(loc, n, 1, NULL);
    double dl, rl, df, rf;
    quality(loc, n, PER, BATCH, &dl, &rl);
    quality(full, n, PER, BATCH, &df, &rf);
    printf("shuffle quality (N=%d, %d shards, batch %d, window %d):\n"
           "  full:     %.1f distinct shards per batch, Spearman rho %.4f\n"
           "  locality: %.1f distinct shards per batch, Spearman rho %.4f\n",
           (int)n, SHARDS, BATCH, WINDOW, df, rf, dl, rl);
    CHECK(dl <= 2 * WINDOW && df > 40); /* locality reads few shards per batch */
    CHECK(dabs(rf) < 0.05 && dabs(rl) < 0.2);
    ingot_order_destroy(loc);
    ingot_order_destroy(full);
    counts[0] = 1;
    CHECK_STATUS(ingot_order_create(&p, &loc), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "shard_samples sum to");
}

/* Run an epoch from @p from_step with @p world ranks, counting every id delivered. */
static void run_steps(ingot_order_h o, uint64_t from, uint64_t to, uint32_t world, uint64_t batch,
                      uint32_t *count)
{
    uint64_t ids[64];
    for (uint64_t s = from; s < to; s++) {
        for (uint32_t r = 0; r < world; r++) {
            CHECK_OK(ingot_order_slice(o, 2, s, r, world, ids, INGOT_ARRAY_SIZE(ids)));
            for (uint64_t i = 0; i < batch / world; i++) count[ids[i]]++;
        }
    }
}

static void test_cursor_resume(void)
{
    const uint64_t n = 1000, batch = 24, digest = 0xabcdef, seed = 9;
    char path[4096];
    snprintf(path, sizeof(path), "%s/cursor", test_tmpdir());
    ingot_order_h o = make(n, batch, seed, INGOT_ORDER_TAIL_DROP);
    uint32_t *count = calloc(n, sizeof(*count));
    run_steps(o, 0, 10, 4, batch, count);
    uint64_t skipped[] = {17, 99};
    ingot_cursor_t c = {.manifest_digest = digest,
                        .seed = seed,
                        .epoch = 2,
                        .consumed = 10 * batch,
                        .global_batch = batch,
                        .skipped_count = 2,
                        .skipped = skipped},
                   r;
    CHECK_OK(ingot_cursor_write(path, &c));
    ingot_cursor_expect_t e = {.manifest_digest = digest, .seed = seed, .world_size = 3};
    CHECK_OK(ingot_cursor_read(path, &e, &r));
    CHECK(r.epoch == 2 && r.consumed == 240 && r.skipped_count == 2 && r.skipped[1] == 99);
    run_steps(o, r.consumed / r.global_batch, ingot_order_steps(o), 3, batch, count);
    uint64_t delivered = 0;
    for (uint64_t i = 0; i < n; i++) {
        CHECK(count[i] <= 1); /* never twice */
        delivered += count[i];
    }
    CHECK(delivered == n / batch * batch); /* exactly once for every position of the epoch */
    ingot_cursor_release(&r);
    e.world_size = 5;
    CHECK_STATUS(ingot_cursor_read(path, &e, &r), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(),
                   "field global_batch: 24 is not divisible by the world size 5");
    e.world_size = 2;
    e.seed = 10;
    CHECK_STATUS(ingot_cursor_read(path, &e, &r), INGOT_ERR_MISMATCH);
    CHECK_CONTAINS(ingot_last_error(), "field seed");
    e.seed = seed;
    e.manifest_digest = 1;
    CHECK_STATUS(ingot_cursor_read(path, &e, &r), INGOT_ERR_MISMATCH);
    CHECK_CONTAINS(ingot_last_error(), "field manifest_digest");
    free(count);
    ingot_order_destroy(o);
}

static void rewrite(const char *path, const char *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f && fwrite(data, 1, len, f) == len && fclose(f) == 0);
}

static void test_cursor_corrupt(void)
{
    char path[4096];
    size_t len;
    ingot_cursor_t c = {.manifest_digest = 1, .seed = 2, .consumed = 8, .global_batch = 4}, r;
    snprintf(path, sizeof(path), "%s/cursor2", test_tmpdir());
    CHECK_OK(ingot_cursor_write(path, &c));
    char *good = test_read_file(path, &len);
    char *bad = malloc(len);
    memcpy(bad, good, len);
    bad[40] ^= 1; /* a bit flip in consumed */
    rewrite(path, bad, len);
    CHECK_STATUS(ingot_cursor_read(path, NULL, &r), INGOT_ERR_CORRUPT);
    CHECK_CONTAINS(ingot_last_error(), "field checksum");
    CHECK_CONTAINS(ingot_last_error(), path);
    rewrite(path, good, len / 2); /* torn */
    CHECK_STATUS(ingot_cursor_read(path, NULL, &r), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "truncated");
    memcpy(bad, good, len);
    bad[0] = 'X';
    rewrite(path, bad, len);
    CHECK_STATUS(ingot_cursor_read(path, NULL, &r), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "field magic");
    c.consumed = 6; /* not a whole number of steps */
    CHECK_STATUS(ingot_cursor_write(path, &c), INGOT_ERR_INVALID_PARAM);
    snprintf(path, sizeof(path), "%s/no-such-cursor", test_tmpdir());
    CHECK_STATUS(ingot_cursor_read(path, NULL, &r), INGOT_ERR_NOT_FOUND);
    c.consumed = 8;
    snprintf(path, sizeof(path), "%s/no-such-dir/cursor", test_tmpdir());
    CHECK_STATUS(ingot_cursor_write(path, &c), INGOT_ERR_NOT_FOUND);
    CHECK_CONTAINS(ingot_last_error(), "no-such-dir/cursor.tmp.");
    CHECK_CONTAINS(ingot_last_error(), "create failed");
    free(good);
    free(bad);
}

int main(void)
{
    test_permutations();
    test_world_sizes();
    test_locality();
    test_cursor_resume();
    test_cursor_corrupt();
    return 0;
}

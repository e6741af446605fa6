/*
 * The locality order dealt across canonical nodes (order.h), at scale and at its edges, without
 * data: the order's answers alone.
 *   - nodes:1 is the locality order, bit for bit;
 *   - 4 canonical nodes: every sample once per epoch, each node's positions from one contiguous
 *     run of the shuffled shards (a shard split between two nodes only where a run ends inside
 *     it), each step B/C samples from each node, different epochs dealt differently;
 *   - ranks numbered node by node read only their physical node's canonical nodes (2 physical
 *     nodes carrying 2 each), whatever the ranks per node;
 *   - more canonical nodes than shards (8 over 5): every sample once, shards split by samples;
 *   - PAD: the tail wraps, every sample at least once, no run longer than its share;
 *   - bad input: a batch the nodes do not divide, nodes 0: refused naming the values;
 *   - scale: 1,024 nodes x 8 ranks, 1,000,000 samples in 10,000 shards of uneven sizes, one
 *     epoch: every sample at most once and all but the dropped tail (< B) once, every sample's
 *     bytes dealt to exactly one node, each node's bytes within 5% of the mean, the time said.
 */
#include "common/test.h"
#include "base/mix.h"
#include "base/time.h"
#include <ingot/order.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ingot_order_h make(uint64_t n, uint64_t batch, const uint64_t *per_shard, uint32_t shards,
                          uint32_t window, uint32_t nodes, ingot_order_tail_t tail)
{
    ingot_order_params_t p = {
        .field_mask = INGOT_ORDER_PARAM_FIELD_SAMPLES | INGOT_ORDER_PARAM_FIELD_BATCH |
                      INGOT_ORDER_PARAM_FIELD_SEED | INGOT_ORDER_PARAM_FIELD_TAIL |
                      INGOT_ORDER_PARAM_FIELD_MODE | (nodes ? INGOT_ORDER_PARAM_FIELD_NODES : 0),
        .sample_count = n,
        .global_batch = batch,
        .seed = 42,
        .tail = tail,
        .mode = INGOT_ORDER_LOCALITY,
        .shard_samples = per_shard,
        .shard_count = shards,
        .window = window,
        .nodes = nodes};
    ingot_order_h o = NULL;
    CHECK_OK(ingot_order_create(&p, &o));
    return o;
}

/* Shard of sample @p i (shards hold consecutive indices). */
static uint32_t shard_of(const uint64_t *first, uint32_t shards, uint64_t i)
{
    uint32_t lo = 0, hi = shards;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (first[mid] <= i) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static uint64_t *firsts(const uint64_t *per, uint32_t shards)
{
    uint64_t *f = calloc(shards + 1, sizeof(*f));
    CHECK(f != NULL);
    for (uint32_t s = 0; s < shards; s++) {
        f[s + 1] = f[s] + per[s];
    }
    return f;
}

static void test_one_node_is_locality(void)
{
    uint64_t per[7] = {40, 37, 52, 40, 1, 60, 30}, n = 260;
    ingot_order_h a = make(n, 20, per, 7, 2, 0, INGOT_ORDER_TAIL_PAD);
    ingot_order_h b = make(n, 20, per, 7, 2, 1, INGOT_ORDER_TAIL_PAD);
    for (uint64_t e = 0; e < 3; e++) {
        for (uint64_t p = 0; p < ingot_order_steps(a) * 20; p++) {
            uint64_t x, y;
            CHECK_OK(ingot_order_at(a, e, p, &x));
            CHECK_OK(ingot_order_at(b, e, p, &y));
            CHECK(x == y);
        }
    }
    ingot_order_destroy(a);
    ingot_order_destroy(b);
}

/* Whether the bits of @p m (of @p nodes) form one run, or (PAD wraps) a run through the last
 * node into node 0. */
static int one_run(uint64_t m, uint32_t nodes, int wraps)
{
    uint64_t all = nodes == 64 ? ~0ull : (1ull << nodes) - 1;
    uint64_t low = m & (~m + 1); /* lowest bit */
    int contiguous = ((m + low) & m) == 0;
    uint64_t inv = ~m & all, ilow = inv & (~inv + 1);
    return contiguous || (wraps && inv != 0 && ((inv + ilow) & inv) == 0);
}

/* One epoch of a dealt order (at most 64 canonical nodes): every position's sample and its
 * canonical node, checked. */
static void check_epoch(ingot_order_h o, uint64_t e, uint64_t n, uint64_t batch, uint32_t nodes,
                        const uint64_t *first, uint32_t shards, int exact)
{
    uint64_t steps = ingot_order_steps(o), per = batch / nodes;
    uint8_t *seen = calloc(n, 1);
    uint64_t *mask = calloc(shards, sizeof(uint64_t)); /* per shard: the nodes that read it */
    CHECK(seen && mask && nodes <= 64);
    for (uint64_t p = 0; p < steps * batch; p++) {
        uint64_t i;
        CHECK_OK(ingot_order_at(o, e, p, &i));
        CHECK(i < n);
        CHECK(!exact || !seen[i]); /* exactly once (DROP) */
        seen[i] = 1;
        mask[shard_of(first, shards, i)] |= 1ull << ((p % batch) / per);
    }
    uint64_t split = 0, count = 0;
    for (uint64_t i = 0; i < n; i++) {
        count += seen[i];
    }
    CHECK(count == (exact ? steps * batch : n)); /* PAD: every sample at least once */
    for (uint32_t s = 0; s < shards; s++) {
        /* the nodes a shard is split between are neighbours: the runs are contiguous */
        CHECK(mask[s] == 0 || one_run(mask[s], nodes, !exact));
        split += mask[s] != 0 && (mask[s] & (mask[s] - 1)) != 0;
    }
    CHECK(split <= nodes); /* only where a run ends inside a shard */
    free(seen);
    free(mask);
}

static void test_four_nodes(void)
{
    enum { SHARDS = 40 };
    uint64_t per[SHARDS], n = 0;
    for (uint32_t s = 0; s < SHARDS; s++) {
        per[s] = 20 + (s * 37) % 50;
        n += per[s];
    }
    uint64_t *first = firsts(per, SHARDS);
    ingot_order_h o = make(n, 64, per, SHARDS, 3, 4, INGOT_ORDER_TAIL_DROP);
    for (uint64_t e = 0; e < 3; e++) {
        check_epoch(o, e, n, 64, 4, first, SHARDS, 1);
    }
    uint64_t a, b, differ = 0;
    for (uint64_t p = 0; p < 64; p++) {
        CHECK_OK(ingot_order_at(o, 0, p, &a));
        CHECK_OK(ingot_order_at(o, 1, p, &b));
        differ += a != b;
    }
    CHECK(differ > 32); /* each epoch dealt afresh */
    /* 2 physical nodes x 3 ranks, numbered node by node: node 0's ranks read canonical nodes 0
     * and 1 only (the first half of every step), node 1's the rest */
    ingot_order_h w = make(n, 48, per, SHARDS, 3, 2, INGOT_ORDER_TAIL_DROP);
    uint64_t ids[8];
    uint8_t *mine = calloc(n, 1);
    for (uint64_t s = 0; s < ingot_order_steps(w); s++) {
        for (uint32_t r = 0; r < 6; r++) {
            CHECK_OK(ingot_order_slice(w, 0, s, r, 6, ids, 8));
            for (int k = 0; k < 8; k++) {
                uint64_t want;
                CHECK_OK(ingot_order_at(w, 0, s * 48 + r * 8 + (uint64_t)k, &want));
                CHECK(ids[k] == want);
                mine[ids[k]] = (uint8_t)(1 + r / 3);
            }
        }
    }
    for (uint32_t s = 0, mixed = 0; s < SHARDS; s++, mixed = 0) {
        for (uint64_t i = first[s] + 1; i < first[s + 1]; i++) {
            mixed += mine[i] != 0 && mine[i - 1] != 0 && mine[i] != mine[i - 1];
        }
        CHECK(mixed <= 1); /* a shard read by one node, or cut once between the two */
    }
    free(mine);
    ingot_order_destroy(w);
    ingot_order_destroy(o);
    free(first);
}

static void test_more_nodes_than_shards(void)
{
    uint64_t per[5] = {100, 90, 110, 100, 100}, n = 500;
    uint64_t *first = firsts(per, 5);
    ingot_order_h o = make(n, 64, per, 5, 2, 8, INGOT_ORDER_TAIL_DROP);
    check_epoch(o, 0, n, 64, 8, first, 5, 1);
    ingot_order_destroy(o);
    ingot_order_h pad = make(n, 64, per, 5, 2, 8, INGOT_ORDER_TAIL_PAD);
    check_epoch(pad, 1, n, 64, 8, first, 5, 0);
    ingot_order_destroy(pad);
    free(first);
}

static void test_bad_input(void)
{
    uint64_t per[2] = {50, 50};
    ingot_order_params_t p = {
        .field_mask = INGOT_ORDER_PARAM_FIELD_SAMPLES | INGOT_ORDER_PARAM_FIELD_BATCH |
                      INGOT_ORDER_PARAM_FIELD_MODE | INGOT_ORDER_PARAM_FIELD_NODES,
        .sample_count = 100,
        .global_batch = 30,
        .mode = INGOT_ORDER_LOCALITY,
        .shard_samples = per,
        .shard_count = 2,
        .window = 1,
        .nodes = 4};
    ingot_order_h o;
    CHECK_STATUS(ingot_order_create(&p, &o), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "global batch 30 is not a multiple of the 4 canonical");
    p.nodes = 0;
    CHECK_STATUS(ingot_order_create(&p, &o), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "nodes must be >= 1");
}

static void test_scale(void)
{
    enum { SHARDS = 10000, NODES = 1024, RANKS = 8 };
    const uint64_t batch = (uint64_t)NODES * RANKS * 4;
    uint64_t *per = malloc(SHARDS * sizeof(uint64_t)), n = 0;
    for (uint32_t s = 0; s < SHARDS; s++) { /* uneven shards: 20 to 180 samples */
        per[s] = 20 + ingot_mix64(s) % 161;
        n += per[s];
    }
    uint64_t extra = 1000000 > n ? 1000000 - n : 0; /* exactly 1,000,000 samples */
    per[SHARDS - 1] += extra;
    n += extra;
    CHECK(n == 1000000);
    uint64_t *first = firsts(per, SHARDS);
    uint64_t t0 = ingot_time_ns();
    ingot_order_h o = make(n, batch, per, SHARDS, 2, NODES, INGOT_ORDER_TAIL_DROP);
    uint64_t steps = ingot_order_steps(o), per_rank = batch / (NODES * RANKS);
    uint8_t *seen = calloc(n, 1);
    uint64_t *node_bytes = calloc(NODES, sizeof(uint64_t)), *ids = malloc(per_rank * 8);
    CHECK(seen && node_bytes && ids);
    for (uint64_t s = 0; s < steps; s++) {
        for (uint32_t r = 0; r < NODES * RANKS; r++) {
            CHECK_OK(ingot_order_slice(o, 0, s, r, NODES * RANKS, ids, per_rank));
            for (uint64_t k = 0; k < per_rank; k++) {
                uint64_t i = ids[k];
                CHECK(!seen[i]);
                seen[i] = 1; /* read by one rank, so its bytes dealt to one node */
                node_bytes[r / RANKS] += 100000 + ingot_mix64(i) % 20000; /* 100-120 KB */
            }
        }
    }
    double secs = (double)(ingot_time_ns() - t0) / 1e9;
    uint64_t delivered = 0, total = 0;
    for (uint64_t i = 0; i < n; i++) {
        delivered += seen[i];
    }
    CHECK(delivered == steps * batch && n - delivered < batch); /* only the dropped tail */
    for (uint32_t nd = 0; nd < NODES; nd++) {
        total += node_bytes[nd];
    }
    double mean = (double)total / NODES, worst = 0;
    for (uint32_t nd = 0; nd < NODES; nd++) {
        double dev = ((double)node_bytes[nd] - mean) / mean;
        worst = dev < 0 ? (-dev > worst ? -dev : worst) : (dev > worst ? dev : worst);
    }
    CHECK(worst < 0.05);
    printf("scale: %d nodes x %d ranks, %" PRIu64 " samples in %d shards, %" PRIu64
           " steps: every sample at most once (%" PRIu64 " dropped), each dealt to one node, "
           "node bytes within %.2f%% of the mean, %.2f s\n",
           NODES, RANKS, n, SHARDS, steps, n - delivered, worst * 100, secs);
    ingot_order_destroy(o);
    free(per);
    free(first);
    free(seen);
    free(node_bytes);
    free(ids);
}

int main(void)
{
    test_one_node_is_locality();
    test_four_nodes();
    test_more_nodes_than_shards();
    test_bad_input();
    test_scale();
    return 0;
}

/*
 * Deterministic per-epoch order: a keyed Feistel bijection over the next power of four >= N
 * with cycle walking (a rank maps only its own positions), an optional locality mode (shuffled
 * shards, samples shuffled within windows of shards), the locality order dealt across canonical
 * nodes (order.h: each node a contiguous run of the shuffled shards, windows of its own), and
 * the per-rank partition of a step.
 */
#include <ingot/order.h>
#include "base/param.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/mix.h"
#include "base/status.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/** Feistel rounds: 4 suffice for a pseudo-random permutation (Luby-Rackoff); 6 for margin. */
#define ORDER_ROUNDS     6
#define ORDER_MIN_BITS   2
#define ORDER_GOLDEN     INGOT_MIX_GOLDEN
#define ORDER_TAG_EPOCH  0x65706f6368ull   /* "epoch" */
#define ORDER_TAG_SHARD  0x7368617264ull   /* "shard" */
#define ORDER_TAG_WINDOW 0x77696e646f77ull /* "window" */
#define ORDER_TAG_DEALT  0x6465616c74ull   /* "dealt" */
#define ORDER_NO_EPOCH   UINT64_MAX

/* A piece of a shard in a canonical node's run: samples [first, first + count) of the shard. */
typedef struct deal_piece {
    uint32_t shard;
    uint64_t first, count;
} deal_piece_t;

/* The dealt layout of one epoch (order.h): every canonical node's pieces, node by node in stream
 * order, cut into windows of `window` pieces. */
typedef struct deal {
    uint64_t per_node;     /* M: samples of each node's stream */
    deal_piece_t *pieces;  /* npieces, node-major */
    uint64_t npieces, cap; /* cap: room in pieces and windows */
    uint64_t *win_pos;     /* per window: its first position in its node's stream; + an end per
                              node (win_pos[node_win[c + 1]] is not used: see win_end) */
    uint64_t *win_piece;   /* per window: its first piece (+ one past the last, shared with the
                              next window) */
    uint64_t *node_win;    /* per node: its first window (+ the end) */
    uint64_t nwin;
} deal_t;

typedef struct feistel {
    uint64_t n;
    unsigned half;
    uint64_t mask;
    uint64_t keys[ORDER_ROUNDS];
} feistel_t;

struct ingot_order {
    ingot_order_params_t p;
    uint64_t steps;
    uint64_t *shard_first; /* LOCALITY: first index of each shard */
    uint64_t *shard_count;
    uint32_t *shard_perm; /* LOCALITY: shard order of cached_epoch */
    uint64_t *win_start;  /* LOCALITY: first position of each window (+ end) */
    uint64_t nwin;
    uint64_t cached_epoch;
    deal_t deal; /* LOCALITY over nodes > 1: the layout of cached_epoch */
};

static void feistel_init(feistel_t *f, uint64_t n, uint64_t key)
{
    unsigned bits = ORDER_MIN_BITS;
    while (bits < 64 && (1ull << bits) < n) {
        bits++;
    }
    f->n = n;
    f->half = (bits + 1) / 2;
    f->mask = (f->half >= 32) ? UINT32_MAX : (1ull << f->half) - 1;
    for (unsigned r = 0; r < ORDER_ROUNDS; r++) {
        key = ingot_mix64(key ^ (r * ORDER_GOLDEN));
        f->keys[r] = key;
    }
}

static uint64_t feistel_encrypt(const feistel_t *f, uint64_t x)
{
    uint64_t l = x >> f->half, r = x & f->mask;
    for (unsigned i = 0; i < ORDER_ROUNDS; i++) {
        uint64_t nl = r;
        r = l ^ (ingot_mix64(r ^ f->keys[i]) & f->mask);
        l = nl;
    }
    return (l << f->half) | r;
}

/* Cycle walking: the bijection on [0, 4^half) restricted to [0, n) is a bijection on [0, n). */
static uint64_t feistel_perm(const feistel_t *f, uint64_t i)
{
    uint64_t x = i;
    do {
        x = feistel_encrypt(f, x);
    } while (x >= f->n);
    return x;
}

static uint64_t order_key(const struct ingot_order *o, uint64_t tag, uint64_t epoch, uint64_t w)
{
    return ingot_mix64(ingot_mix64(ingot_mix64(o->p.seed ^ tag) ^ epoch) ^ w);
}

/* ---------------------------------------------------------------- locality */

static ingot_status_t order_locality_init(struct ingot_order *o)
{
    const ingot_order_params_t *p = &o->p;
    uint32_t n = p->shard_count;
    if (p->shard_samples == NULL || n == 0 || p->window == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "order: locality mode needs shard_samples, "
                                                   "shard_count >= 1 and window >= 1");
    }
    o->nwin = (n + p->window - 1) / p->window;
    o->shard_first = ingot_calloc(n, sizeof(uint64_t), "order shards");
    o->shard_count = ingot_calloc(n, sizeof(uint64_t), "order shards");
    o->shard_perm = ingot_calloc(n, sizeof(uint32_t), "order shards");
    o->win_start = ingot_calloc(o->nwin + 1, sizeof(uint64_t), "order windows");
    if (!o->shard_first || !o->shard_count || !o->shard_perm || !o->win_start) {
        return INGOT_ERR_NO_MEMORY;
    }
    uint64_t sum = 0;
    for (uint32_t i = 0; i < n; i++) {
        o->shard_first[i] = sum;
        o->shard_count[i] = p->shard_samples[i];
        sum += p->shard_samples[i];
    }
    if (sum != p->sample_count) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "order: shard_samples sum to %" PRIu64 ", sample_count is %" PRIu64, sum,
                          p->sample_count);
    }
    o->cached_epoch = ORDER_NO_EPOCH;
    return INGOT_OK;
}

/* Shuffle the shards of @p epoch and lay the windows out. O(shards). */
static void order_locality_epoch(struct ingot_order *o, uint64_t epoch)
{
    if (o->cached_epoch == epoch) {
        return;
    }
    feistel_t f;
    feistel_init(&f, o->p.shard_count, order_key(o, ORDER_TAG_SHARD, epoch, 0));
    uint64_t pos = 0;
    for (uint32_t k = 0; k < o->p.shard_count; k++) {
        o->shard_perm[k] = (uint32_t)feistel_perm(&f, k);
        if (k % o->p.window == 0) {
            o->win_start[k / o->p.window] = pos;
        }
        pos += o->shard_count[o->shard_perm[k]];
    }
    o->win_start[o->nwin] = pos;
    o->cached_epoch = epoch;
}

static uint64_t order_locality_at(struct ingot_order *o, uint64_t epoch, uint64_t p)
{
    order_locality_epoch(o, epoch);
    uint64_t lo = 0, hi = o->nwin; /* last window with win_start <= p */
    while (hi - lo > 1) {
        uint64_t mid = lo + (hi - lo) / 2;
        if (o->win_start[mid] <= p) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    uint64_t size = o->win_start[lo + 1] - o->win_start[lo];
    feistel_t f;
    feistel_init(&f, size, order_key(o, ORDER_TAG_WINDOW, epoch, lo));
    uint64_t j = feistel_perm(&f, p - o->win_start[lo]);
    uint64_t k = lo * o->p.window;
    while (j >= o->shard_count[o->shard_perm[k]]) {
        j -= o->shard_count[o->shard_perm[k]];
        k++;
    }
    return o->shard_first[o->shard_perm[k]] + j;
}

/* ---------------------------------------------------------------- dealt over canonical nodes */

/* The dealt layout's room: every node boundary splits at most one shard, and the runs together
 * (steps * B samples) wrap around the shard sequence at most `wraps` times (PAD). */
static ingot_status_t order_deal_init(struct ingot_order *o)
{
    const ingot_order_params_t *p = &o->p;
    uint64_t c = p->nodes, b = p->global_batch;
    if (b % c != 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "order: the global batch %" PRIu64 " is not a multiple of the %" PRIu64
                          " canonical nodes (each gives B/C samples to every step)",
                          b, c);
    }
    deal_t *d = &o->deal;
    d->per_node = o->steps * (b / c);
    uint64_t wraps = (o->steps * b + p->sample_count - 1) / p->sample_count;
    d->cap = (uint64_t)p->shard_count * (wraps + 1) + c + 1;
    d->pieces = ingot_calloc(d->cap, sizeof(*d->pieces), "order pieces");
    d->win_pos = ingot_calloc(d->cap, sizeof(uint64_t), "order windows");
    d->win_piece = ingot_calloc(d->cap + 1, sizeof(uint64_t), "order windows");
    d->node_win = ingot_calloc(c + 1, sizeof(uint64_t), "order nodes");
    if (!d->pieces || !d->win_pos || !d->win_piece || !d->node_win) {
        return INGOT_ERR_NO_MEMORY;
    }
    return INGOT_OK;
}

static void order_deal_free(deal_t *d)
{
    free(d->pieces);
    free(d->win_pos);
    free(d->win_piece);
    free(d->node_win);
}

/* Canonical node @p c's run: @p left samples from shard perm[*k] at offset *off on, in pieces,
 * windows of `window` pieces. */
static void order_deal_node(struct ingot_order *o, uint64_t c, uint64_t *k, uint64_t *off)
{
    deal_t *d = &o->deal;
    uint64_t left = d->per_node, pos = 0, in_window = 0;
    d->node_win[c] = d->nwin;
    if (o->p.shard_count == 0 || o->p.window == 0) {
        return; /* refused at create (order_locality_init): said for the analyser */
    }
    while (left > 0) {
        uint32_t s = o->shard_perm[*k];
        uint64_t avail = o->shard_count[s] - *off, take = avail < left ? avail : left;
        if (take > 0) {
            if (in_window == 0) {
                d->win_pos[d->nwin] = pos;
                d->win_piece[d->nwin++] = d->npieces;
            }
            d->pieces[d->npieces++] = (deal_piece_t){s, *off, take};
            in_window = (in_window + 1) % o->p.window;
            pos += take;
            left -= take;
            *off += take;
        }
        if (*off == o->shard_count[s]) { /* the next shard; PAD wraps to the first */
            *off = 0;
            *k = (*k + 1) % o->p.shard_count;
        }
    }
}

/* Shuffle the shards of @p epoch and deal their samples to the canonical nodes. O(shards + C). */
static void order_deal_epoch(struct ingot_order *o, uint64_t epoch)
{
    if (o->cached_epoch == epoch) {
        return;
    }
    feistel_t f;
    feistel_init(&f, o->p.shard_count, order_key(o, ORDER_TAG_SHARD, epoch, 0));
    for (uint32_t k = 0; k < o->p.shard_count; k++) {
        o->shard_perm[k] = (uint32_t)feistel_perm(&f, k);
    }
    deal_t *d = &o->deal;
    d->npieces = d->nwin = 0;
    uint64_t k = 0, off = 0;
    for (uint64_t c = 0; c < o->p.nodes; c++) {
        order_deal_node(o, c, &k, &off);
    }
    d->node_win[o->p.nodes] = d->nwin;
    d->win_piece[d->nwin] = d->npieces;
    o->cached_epoch = epoch;
}

/* The sample at position @p p (< steps * B) of the dealt order of @p epoch. */
static uint64_t order_deal_at(struct ingot_order *o, uint64_t epoch, uint64_t p)
{
    order_deal_epoch(o, epoch);
    const deal_t *d = &o->deal;
    uint64_t b = o->p.global_batch / o->p.nodes, q = p % o->p.global_batch;
    uint64_t c = q / b, j = (p / o->p.global_batch) * b + q % b;
    uint64_t first = d->node_win[c], lo = first, hi = d->node_win[c + 1];
    while (hi - lo > 1) { /* the node's last window starting at or before j */
        uint64_t mid = lo + (hi - lo) / 2;
        if (d->win_pos[mid] <= j) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    uint64_t end = lo + 1 < d->node_win[c + 1] ? d->win_pos[lo + 1] : d->per_node;
    feistel_t f;
    feistel_init(&f, end - d->win_pos[lo], order_key(o, ORDER_TAG_DEALT ^ c, epoch, lo - first));
    uint64_t x = feistel_perm(&f, j - d->win_pos[lo]), i = d->win_piece[lo];
    while (x >= d->pieces[i].count) {
        x -= d->pieces[i++].count;
    }
    return o->shard_first[d->pieces[i].shard] + d->pieces[i].first + x;
}

/* The sample at position @p p of @p epoch (p < steps * B: PAD wraps to the start). */
static uint64_t order_sample_at(struct ingot_order *o, uint64_t epoch, uint64_t p,
                                const feistel_t *full)
{
    if (o->p.mode != INGOT_ORDER_LOCALITY) {
        return feistel_perm(full, p % o->p.sample_count);
    }
    if (o->p.nodes > 1) {
        return order_deal_at(o, epoch, p);
    }
    return order_locality_at(o, epoch, p % o->p.sample_count);
}

/* ---------------------------------------------------------------- API */

ingot_status_t ingot_order_create(const ingot_order_params_t *params, ingot_order_h *order_p)
{
    const uint64_t need = INGOT_ORDER_PARAM_FIELD_SAMPLES | INGOT_ORDER_PARAM_FIELD_BATCH;
    if (params == NULL || order_p == NULL || (params->field_mask & need) != need ||
        params->sample_count == 0 || params->global_batch == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "order: sample_count and global_batch are "
                                                   "required and must be >= 1");
    }
    struct ingot_order *o = ingot_calloc(1, sizeof(*o), "order");
    if (o == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    uint64_t m = params->field_mask;
    o->p = (ingot_order_params_t){.field_mask = m,
                                  .sample_count = params->sample_count,
                                  .global_batch = params->global_batch};
    o->p.seed = INGOT_PARAM_VALUE(params, seed, INGOT_ORDER_PARAM_FIELD_SEED, 0);
    o->p.tail = INGOT_PARAM_VALUE(params, tail, INGOT_ORDER_PARAM_FIELD_TAIL,
                                  INGOT_ORDER_TAIL_DROP);
    if (m & INGOT_ORDER_PARAM_FIELD_MODE) {
        o->p.mode = params->mode;
        o->p.shard_samples = params->shard_samples;
        o->p.shard_count = params->shard_count;
        o->p.window = params->window;
    }
    o->p.nodes = INGOT_PARAM_VALUE(params, nodes, INGOT_ORDER_PARAM_FIELD_NODES, 1);
    uint64_t n = o->p.sample_count, b = o->p.global_batch;
    o->steps = o->p.tail == INGOT_ORDER_TAIL_PAD ? (n + b - 1) / b : n / b;
    ingot_status_t st = o->p.mode == INGOT_ORDER_LOCALITY ? order_locality_init(o) : INGOT_OK;
    if (st == INGOT_OK && o->p.nodes == 0) {
        st = ingot_fail(INGOT_ERR_INVALID_PARAM, "order: nodes must be >= 1 (canonical nodes)");
    }
    if (st == INGOT_OK && o->p.mode == INGOT_ORDER_LOCALITY && o->p.nodes > 1 && o->steps > 0) {
        st = order_deal_init(o);
    }
    if (st == INGOT_OK && o->steps == 0) {
        st = ingot_fail(INGOT_ERR_INVALID_PARAM,
                        "order: global batch %" PRIu64 " exceeds the %" PRIu64
                        " samples and the tail policy drops it: no step at all",
                        b, n);
    }
    o->p.shard_samples = NULL; /* copied into shard_count */
    if (st != INGOT_OK) {
        ingot_order_destroy(o);
        return st;
    }
    *order_p = o;
    return INGOT_OK;
}

ingot_status_t ingot_order_copy(ingot_order_h o, ingot_order_h *copy_p)
{
    if (o == NULL || copy_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_order_copy: NULL argument");
    }
    ingot_order_params_t p = o->p;
    p.shard_samples = o->shard_count; /* LOCALITY: its own copy of the counts */
    return ingot_order_create(&p, copy_p);
}

void ingot_order_destroy(ingot_order_h o)
{
    if (o == NULL) {
        return;
    }
    free(o->shard_first);
    free(o->shard_count);
    free(o->shard_perm);
    free(o->win_start);
    order_deal_free(&o->deal);
    free(o);
}

uint64_t ingot_order_steps(ingot_order_h o)
{
    return o ? o->steps : 0;
}

ingot_status_t ingot_order_at(ingot_order_h o, uint64_t epoch, uint64_t position, uint64_t *index_p)
{
    if (o == NULL || index_p == NULL || position / o->p.global_batch >= o->steps) {
        return INGOT_ERR_OUT_OF_RANGE;
    }
    feistel_t f;
    if (o->p.mode != INGOT_ORDER_LOCALITY) {
        feistel_init(&f, o->p.sample_count, order_key(o, ORDER_TAG_EPOCH, epoch, 0));
    }
    *index_p = order_sample_at(o, epoch, position, &f);
    return INGOT_OK;
}

ingot_status_t ingot_order_slice(ingot_order_h o, uint64_t epoch, uint64_t step, uint32_t rank,
                                 uint32_t world, uint64_t *ids, size_t cap)
{
    if (o == NULL || ids == NULL || world == 0 || rank >= world || o->p.global_batch % world != 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "order: world size %u must divide the global "
                          "batch %" PRIu64 " and rank %u be below it",
                          world, o ? o->p.global_batch : 0, rank);
    }
    uint64_t per = o->p.global_batch / world;
    if (step >= o->steps) {
        return ingot_fail(INGOT_ERR_OUT_OF_RANGE,
                          "order: step %" PRIu64 " beyond the %" PRIu64 " steps of an epoch", step,
                          o->steps);
    }
    if (cap < per) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE,
                          "order: slice needs %" PRIu64 " entries, %zu "
                          "given",
                          per, cap);
    }
    uint64_t first = step * o->p.global_batch + rank * per;
    feistel_t f; /* keyed once per slice */
    if (o->p.mode != INGOT_ORDER_LOCALITY) {
        feistel_init(&f, o->p.sample_count, order_key(o, ORDER_TAG_EPOCH, epoch, 0));
    }
    for (uint64_t i = 0; i < per; i++) {
        ids[i] = order_sample_at(o, epoch, first + i, &f);
    }
    return INGOT_OK;
}

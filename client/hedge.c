/* Hedged GETs: when to hedge, and the tokens hedges draw on (see hedge.h). */
#include "client/hedge.h"
#include <string.h>

#define HEDGE_TOKENS_CAP_TENTHS (100 * 10) /* at most a hundred hedges saved up */

void ingot_objstore_hedge_init(ingot_objstore_hedge_t *h, uint32_t factor, uint64_t floor_ns,
                               uint64_t ceiling_ns)
{
    memset(h, 0, sizeof(*h));
    h->factor = factor;
    h->floor_ns = floor_ns;
    h->ceiling_ns = ceiling_ns > floor_ns ? ceiling_ns : floor_ns;
    h->tokens_tenths = INGOT_OBJSTORE_HEDGE_TOKENS * 10;
}

static unsigned hedge_class(uint64_t bytes)
{
    unsigned k = 0;
    for (uint64_t kib = bytes >> 10; kib > 1 && k + 1 < INGOT_OBJSTORE_HEDGE_CLASSES; kib >>= 1) {
        k++;
    }
    return k;
}

#define HEDGE_PACE_MIN_BYTES (64 * 1024) /* smaller GETs say more of latency than of pace */
#define HEDGE_MIB            (1024.0 * 1024.0)

static void ring_add(ingot_objstore_hedge_ring_t *r, uint64_t v)
{
    r->v[r->next] = v;
    r->next = (r->next + 1) % INGOT_OBJSTORE_HEDGE_RING;
    r->n += r->n < INGOT_OBJSTORE_HEDGE_RING;
}

/* The value at quantile @p pct (nearest rank) of @p r's values (a sorted copy: 32 values, once
 * per success). */
static uint64_t ring_quantile(const ingot_objstore_hedge_ring_t *r, unsigned pct)
{
    uint64_t v[INGOT_OBJSTORE_HEDGE_RING];
    uint32_t n = r->n;
    memcpy(v, r->v, n * sizeof(v[0]));
    for (uint32_t i = 1; i < n; i++) { /* insertion sort */
        uint64_t x = v[i];
        uint32_t j = i;
        for (; j > 0 && v[j - 1] > x; j--) {
            v[j] = v[j - 1];
        }
        v[j] = x;
    }
    uint32_t rank = (n * pct + 99) / 100;
    return v[rank > 0 ? rank - 1 : 0];
}

/* @p factor times @p expected_ns, within the floor and the ceiling. */
static uint64_t hedge_clamp(const ingot_objstore_hedge_t *h, double expected_ns)
{
    double ns = (double)h->factor * expected_ns;
    return ns >= (double)h->ceiling_ns ? h->ceiling_ns
           : ns <= (double)h->floor_ns ? h->floor_ns
                                       : (uint64_t)ns;
}

void ingot_objstore_hedge_record(ingot_objstore_hedge_t *h, uint64_t bytes, uint64_t ns)
{
    if (bytes >= HEDGE_PACE_MIN_BYTES) {
        ring_add(&h->paces, (uint64_t)((double)ns * HEDGE_MIB / (double)bytes));
        h->pace_median = ring_quantile(&h->paces, 50);
    }
    ingot_objstore_hedge_class_t *c = &h->cls[hedge_class(bytes)];
    ring_add(&c->ns, ns);
    if (c->ns.n >= INGOT_OBJSTORE_HEDGE_MIN_N) {
        c->after_ns = hedge_clamp(h, (double)ring_quantile(&c->ns, 95));
    }
}

uint64_t ingot_objstore_hedge_after_ns(const ingot_objstore_hedge_t *h, uint64_t bytes)
{
    if (h->factor == 0) {
        return UINT64_MAX;
    }
    const ingot_objstore_hedge_class_t *c = &h->cls[hedge_class(bytes)];
    if (c->ns.n >= INGOT_OBJSTORE_HEDGE_MIN_N) {
        return c->after_ns;
    }
    /* not known yet: the client's pace, or the ceiling */
    return h->paces.n > 0 ? hedge_clamp(h, (double)h->pace_median * (double)bytes / HEDGE_MIB)
                          : h->ceiling_ns;
}

void ingot_objstore_hedge_earn(ingot_objstore_hedge_t *h)
{
    if (h->tokens_tenths < HEDGE_TOKENS_CAP_TENTHS) {
        h->tokens_tenths++;
    }
}

int ingot_objstore_hedge_take(ingot_objstore_hedge_t *h)
{
    if (h->tokens_tenths < 10) {
        return 0;
    }
    h->tokens_tenths -= 10;
    return 1;
}

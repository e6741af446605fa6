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

/* The p95 of a class's durations (a copy sorted: 32 values, once per success). */
static uint64_t hedge_p95(const ingot_objstore_hedge_class_t *c)
{
    uint64_t v[INGOT_OBJSTORE_HEDGE_RING];
    uint32_t n = c->n;
    memcpy(v, c->ns, n * sizeof(v[0]));
    for (uint32_t i = 1; i < n; i++) { /* insertion sort */
        uint64_t x = v[i];
        uint32_t j = i;
        for (; j > 0 && v[j - 1] > x; j--) {
            v[j] = v[j - 1];
        }
        v[j] = x;
    }
    return v[(n * 95 + 99) / 100 - 1];
}

#define HEDGE_RATE_MIN_BYTES (64 * 1024) /* smaller GETs say more of latency than of rate */

static double hedge_median(const double *ring, uint32_t n)
{
    double v[INGOT_OBJSTORE_HEDGE_RING];
    memcpy(v, ring, n * sizeof(v[0]));
    for (uint32_t i = 1; i < n; i++) { /* insertion sort */
        double x = v[i];
        uint32_t j = i;
        for (; j > 0 && v[j - 1] > x; j--) {
            v[j] = v[j - 1];
        }
        v[j] = x;
    }
    return v[n / 2];
}

static void hedge_record_rate(ingot_objstore_hedge_t *h, uint64_t bytes, uint64_t ns)
{
    if (bytes < HEDGE_RATE_MIN_BYTES || ns == 0) {
        return;
    }
    h->rate[h->next_rate] = (double)bytes / (double)ns;
    h->next_rate = (h->next_rate + 1) % INGOT_OBJSTORE_HEDGE_RING;
    h->nrate += h->nrate < INGOT_OBJSTORE_HEDGE_RING;
    h->rate_median = hedge_median(h->rate, h->nrate);
}

static uint64_t hedge_clamp(const ingot_objstore_hedge_t *h, double ns)
{
    return ns >= (double)h->ceiling_ns ? h->ceiling_ns
           : ns <= (double)h->floor_ns ? h->floor_ns
                                       : (uint64_t)ns;
}

void ingot_objstore_hedge_record(ingot_objstore_hedge_t *h, uint64_t bytes, uint64_t ns)
{
    hedge_record_rate(h, bytes, ns);
    ingot_objstore_hedge_class_t *c = &h->cls[hedge_class(bytes)];
    c->ns[c->next] = ns;
    c->next = (c->next + 1) % INGOT_OBJSTORE_HEDGE_RING;
    c->n += c->n < INGOT_OBJSTORE_HEDGE_RING;
    if (c->n >= INGOT_OBJSTORE_HEDGE_MIN_N) {
        uint64_t p95 = hedge_p95(c), after = p95 * h->factor;
        after = after / h->factor != p95 || after > h->ceiling_ns ? h->ceiling_ns : after;
        c->after_ns = after < h->floor_ns ? h->floor_ns : after;
    }
}

uint64_t ingot_objstore_hedge_after_ns(const ingot_objstore_hedge_t *h, uint64_t bytes)
{
    if (h->factor == 0) {
        return UINT64_MAX;
    }
    const ingot_objstore_hedge_class_t *c = &h->cls[hedge_class(bytes)];
    if (c->n >= INGOT_OBJSTORE_HEDGE_MIN_N) {
        return c->after_ns;
    }
    /* not known yet: the client's rate, or the ceiling */
    return h->nrate > 0 ? hedge_clamp(h, (double)h->factor * (double)bytes / h->rate_median)
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

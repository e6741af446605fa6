/* Counters and the GET latency histogram of a client (see stats.h). */
#include "client/stats.h"
#include <string.h>

#define SUB 8 /* linear steps per power of two */

unsigned ingot_objstore_latency_bucket(uint64_t us)
{
    if (us < SUB) return (unsigned)us;
    unsigned e = 63u - (unsigned)__builtin_clzll(us); /* us in [2^e, 2^(e+1)), e >= 3 */
    unsigned b = SUB * (e - 2) + (unsigned)((us >> (e - 3)) & (SUB - 1));
    return b < INGOT_OBJSTORE_HIST_BUCKETS ? b : INGOT_OBJSTORE_HIST_BUCKETS - 1;
}

uint64_t ingot_objstore_latency_bucket_mid_us(unsigned b)
{
    if (b < SUB) return b;
    unsigned e = b / SUB + 2, step = b % SUB;
    uint64_t lo = (1ull << e) + ((uint64_t)step << (e - 3));
    return lo + (1ull << (e - 3)) / 2;
}

void ingot_objstore_latency_add(ingot_objstore_counters_t *c, uint64_t ns)
{
    ingot_objstore_count(&c->latency[ingot_objstore_latency_bucket(ns / 1000)], 1);
}

/* The value below which a fraction @p q of the recorded latencies lie, in ns. */
static uint64_t percentile(const uint64_t *h, uint64_t total, double q)
{
    uint64_t rank = (uint64_t)(q * (double)total), seen = 0;
    if (rank >= total) rank = total - 1;
    for (unsigned b = 0; b < INGOT_OBJSTORE_HIST_BUCKETS; b++) {
        seen += h[b];
        if (seen > rank) return ingot_objstore_latency_bucket_mid_us(b) * 1000;
    }
    return 0;
}

void ingot_objstore_counters_snapshot(const ingot_objstore_counters_t *c, ingot_objstore_stats_t *s)
{
    uint64_t h[INGOT_OBJSTORE_HIST_BUCKETS], total = 0;

    memset(s, 0, sizeof(*s));
    s->requests = atomic_load(&c->requests);
    s->failed = atomic_load(&c->failed);
    s->attempts = atomic_load(&c->attempts);
    s->bytes = atomic_load(&c->bytes);
    s->throttle_events = atomic_load(&c->throttle_events);
    s->rate_waits = atomic_load(&c->rate_waits);
    s->hedges = atomic_load(&c->hedges);
    s->hedge_wins = atomic_load(&c->hedge_wins);
    for (unsigned i = 0; i < INGOT_OBJSTORE_RETRY_CLASSES; i++) {
        s->retries[i] = atomic_load(&c->retries[i]);
    }
    for (unsigned b = 0; b < INGOT_OBJSTORE_HIST_BUCKETS; b++) {
        total += h[b] = atomic_load(&c->latency[b]);
    }
    s->latency_count = total;
    if (total > 0) {
        s->latency_p50_ns = percentile(h, total, 0.50);
        s->latency_p99_ns = percentile(h, total, 0.99);
    }
}

/*
 * A client's counters (stats.c): written by its I/O thread, read by any thread as a snapshot
 * (ingot_objstore_stats). The latency histogram has log2 buckets of 8 linear steps each (12.5%
 * resolution) over microseconds, from 1 us to beyond an hour.
 */
#ifndef INGOT_CLIENT_STATS_H
#define INGOT_CLIENT_STATS_H

#include "client/objstore.h"
#include <stdatomic.h>
#include <stdint.h>

#define INGOT_OBJSTORE_HIST_BUCKETS (8 * 40)

typedef struct ingot_objstore_counters {
    _Atomic uint64_t requests, failed, attempts, bytes, throttle_events, rate_waits;
    _Atomic uint64_t hedges, hedge_wins; /* hedge attempts started; requests a hedge finished */
    _Atomic uint64_t retries[INGOT_OBJSTORE_RETRY_CLASSES];
    _Atomic uint64_t latency[INGOT_OBJSTORE_HIST_BUCKETS];
} ingot_objstore_counters_t;

/** Add @p n to @p counter (relaxed: counters order nothing). */
static inline void ingot_objstore_count(_Atomic uint64_t *counter, uint64_t n)
{
    atomic_fetch_add_explicit(counter, n, memory_order_relaxed);
}

/** Add @p n to a client's counter @p _field and to the same counter of @p _req's tally. */
#define INGOT_OBJSTORE_TALLY(_c, _req, _field, _n) \
    do { \
        ingot_objstore_count(&(_c)->counters._field, (_n)); \
        if ((_req)->tally != NULL) ingot_objstore_count(&(_req)->tally->_field, (_n)); \
    } while (0)

/** Record one successful attempt's latency. */
void ingot_objstore_latency_add(ingot_objstore_counters_t *c, uint64_t ns);

/** The histogram bucket of @p us microseconds, and the middle of a bucket (for tests). */
unsigned ingot_objstore_latency_bucket(uint64_t us);
uint64_t ingot_objstore_latency_bucket_mid_us(unsigned bucket);

/** Fill @p s from @p c. */
void ingot_objstore_counters_snapshot(const ingot_objstore_counters_t *c,
                                      ingot_objstore_stats_t *s);

#endif

/*
 * Telemetry of the loader: lock-free log-bucketed latency histograms (8 buckets per octave, so
 * percentiles are within 9%), and a Chrome-trace/Perfetto timeline (INGOT_TRACE) recorded into
 * a buffer preallocated at create and written out at destroy: nothing allocates or prints on
 * the hot path.
 */
#ifndef INGOT_RUNTIME_TELEMETRY_H
#define INGOT_RUNTIME_TELEMETRY_H

#include <ingot/status.h>
#include <stdatomic.h>
#include <stdint.h>

#define INGOT_HIST_SUB     8
#define INGOT_HIST_OCTAVES 48 /* up to 2^48 ns (3 days) */
#define INGOT_HIST_BUCKETS (INGOT_HIST_SUB * INGOT_HIST_OCTAVES)

typedef struct ingot_hist {
    _Atomic uint64_t count;
    _Atomic uint64_t sum_ns;
    _Atomic uint64_t max_ns;
    _Atomic uint64_t buckets[INGOT_HIST_BUCKETS];
} ingot_hist_t;

void ingot_hist_record(ingot_hist_t *h, uint64_t ns);
/** Value at quantile @p q (0..1): the upper edge of the bucket holding it (0 when empty). */
uint64_t ingot_hist_quantile(const ingot_hist_t *h, double q);

typedef enum ingot_trace_stage {
    INGOT_TRACE_READ,
    INGOT_TRACE_VERIFY,
    INGOT_TRACE_DECODE,
    INGOT_TRACE_TRANSFORM,
    INGOT_TRACE_H2D,
    INGOT_TRACE_STALL,
    INGOT_TRACE_PLAN,
    INGOT_TRACE_STAGE_LAST
} ingot_trace_stage_t;

typedef struct ingot_trace ingot_trace_t;

/** Create a trace writing to @p path_pattern (%h, %p, %r expanded) at destroy; room for
 *  @p capacity events (later events are counted as dropped). */
ingot_status_t ingot_trace_create(const char *path_pattern, uint32_t capacity, int rank,
                                  ingot_trace_t **trace_p);
/** Record one complete event (thread-safe, lock-free). Accepts a NULL trace (no tracing). */
void ingot_trace_event(ingot_trace_t *trace, ingot_trace_stage_t stage, uint64_t start_ns,
                       uint64_t end_ns, uint64_t arg);
/** Write the JSON file and free. Accepts NULL. */
ingot_status_t ingot_trace_destroy(ingot_trace_t *trace);

#endif

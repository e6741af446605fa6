/* Histograms and the Chrome-trace writer (see telemetry.h). */
#include "runtime/telemetry.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"
#include "base/time.h"
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

static unsigned hist_bucket(uint64_t ns)
{
    if (ns < INGOT_HIST_SUB) {
        return (unsigned)ns;
    }
    unsigned octave = 63u - (unsigned)__builtin_clzll(ns); /* >= 3 */
    unsigned sub = (unsigned)(ns >> (octave - 3)) & (INGOT_HIST_SUB - 1);
    unsigned b = (octave - 2) * INGOT_HIST_SUB + sub;
    return b < INGOT_HIST_BUCKETS ? b : INGOT_HIST_BUCKETS - 1;
}

static uint64_t hist_upper(unsigned b)
{
    if (b < INGOT_HIST_SUB) {
        return b;
    }
    unsigned octave = b / INGOT_HIST_SUB + 2, sub = b % INGOT_HIST_SUB;
    return ((uint64_t)(INGOT_HIST_SUB + sub + 1) << (octave - 3)) - 1;
}

void ingot_hist_record(ingot_hist_t *h, uint64_t ns)
{
    atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->sum_ns, ns, memory_order_relaxed);
    atomic_fetch_add_explicit(&h->buckets[hist_bucket(ns)], 1, memory_order_relaxed);
    uint64_t max = atomic_load_explicit(&h->max_ns, memory_order_relaxed);
    while (ns > max && !atomic_compare_exchange_weak(&h->max_ns, &max, ns)) {
    }
}

uint64_t ingot_hist_quantile(const ingot_hist_t *h, double q)
{
    uint64_t count = atomic_load(&((ingot_hist_t *)h)->count);
    if (count == 0) {
        return 0;
    }
    uint64_t rank = (uint64_t)(q * (double)(count - 1)) + 1, seen = 0;
    for (unsigned b = 0; b < INGOT_HIST_BUCKETS; b++) {
        seen += atomic_load(&((ingot_hist_t *)h)->buckets[b]);
        if (seen >= rank) {
            uint64_t up = hist_upper(b), max = atomic_load(&((ingot_hist_t *)h)->max_ns);
            return up < max ? up : max;
        }
    }
    return atomic_load(&((ingot_hist_t *)h)->max_ns);
}

/* ---------------------------------------------------------------- trace */

typedef struct trace_event {
    uint64_t start_ns, dur_ns, arg;
    uint32_t tid;
    uint8_t stage;
} trace_event_t;

struct ingot_trace {
    char path[4096];
    int rank;
    uint32_t capacity;
    _Atomic uint32_t next;
    uint64_t origin_ns;
    trace_event_t *events;
};

static const char *const stage_names[INGOT_TRACE_STAGE_LAST] = {
    "read", "verify", "decode", "transform", "h2d", "stall", "plan",
};

ingot_status_t ingot_trace_create(const char *path_pattern, uint32_t capacity, int rank,
                                  ingot_trace_t **trace_p)
{
    ingot_trace_t *t = ingot_calloc(1, sizeof(*t), "trace");
    if (t == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    t->events = ingot_calloc(capacity, sizeof(*t->events), "trace events");
    if (t->events == NULL) {
        free(t);
        return INGOT_ERR_NO_MEMORY;
    }
    ingot_log_expand_path(path_pattern, t->path, sizeof(t->path));
    t->rank = rank;
    t->capacity = capacity;
    t->origin_ns = ingot_time_ns();
    *trace_p = t;
    return INGOT_OK;
}

void ingot_trace_event(ingot_trace_t *t, ingot_trace_stage_t stage, uint64_t start_ns,
                       uint64_t end_ns, uint64_t arg)
{
    if (t == NULL) {
        return;
    }
    uint32_t i = atomic_fetch_add_explicit(&t->next, 1, memory_order_relaxed);
    if (i >= t->capacity) {
        return; /* counted as dropped */
    }
    static _Thread_local uint32_t tid;
    if (tid == 0) {
        tid = (uint32_t)syscall(SYS_gettid);
    }
    t->events[i] = (trace_event_t){.start_ns = start_ns,
                                   .dur_ns = end_ns - start_ns,
                                   .arg = arg,
                                   .tid = tid,
                                   .stage = (uint8_t)stage};
}

ingot_status_t ingot_trace_destroy(ingot_trace_t *t)
{
    if (t == NULL) {
        return INGOT_OK;
    }
    ingot_status_t st = INGOT_OK;
    FILE *f = fopen(t->path, "w");
    if (f == NULL) {
        ingot_error("INGOT_TRACE: cannot write '%s': %s", t->path, strerror(errno));
        st = INGOT_ERR_IO;
    } else {
        uint32_t n = atomic_load(&t->next), kept = n < t->capacity ? n : t->capacity;
        fprintf(f,
                "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"rank\":%d,\"dropped\":%u},"
                "\"traceEvents\":[\n",
                t->rank, n - kept);
        for (uint32_t i = 0; i < kept; i++) {
            const trace_event_t *e = &t->events[i];
            fprintf(f,
                    "%s{\"name\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%u,\"ts\":%.3f,"
                    "\"dur\":%.3f,\"args\":{\"n\":%" PRIu64 "}}\n",
                    i ? "," : "", stage_names[e->stage], t->rank, e->tid,
                    (double)(e->start_ns - t->origin_ns) / 1e3, (double)e->dur_ns / 1e3, e->arg);
        }
        fprintf(f, "]}\n");
        if (fclose(f) != 0) {
            ingot_error("INGOT_TRACE: writing '%s' failed: %s", t->path, strerror(errno));
            st = INGOT_ERR_IO;
        }
    }
    free(t->events);
    free(t);
    return st;
}

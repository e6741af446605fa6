/*
 * The loader's figures, on any thread: stats by field group, the bytes of each epoch by source,
 * the peer cache's report.
 */
#include "runtime/loader/loader_impl.h"
#include "collectives/engine.h"
#include "collectives/config.h"
#include "runtime/context_impl.h"
#include "shard/manifest.h"
#include "runtime/node_manifest.h"
#include "source/cache/cache.h"
#include "source/emulate.h"
#include "source/posix.h"
#include "base/cuda.h"
#include "base/errors.h"
#include "base/field_mask.h"
#include "base/log.h"
#include "base/param.h"
#include "base/mix.h"
#include "base/status.h"
#include "base/time.h"
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define LOADER_DEPTH_DEFAULT 4
#define LOADER_READERS_LOCAL 2 /* page cache / local NVMe: a couple of threads saturate it */
/* A remote store hides its per-request latency only behind many requests in flight (32 x 5 ms
 * requests per 10 ms step need 16+; measured: 8 readers AU 0.48, 32 readers AU 0.998). */
#define LOADER_READERS_REMOTE  32
#define LOADER_TRACE_EVENTS    (1u << 20)
#define LOADER_GAP_SCRATCH_MIN (64u << 10)

/* The members each ingot_loader_stats_field bit covers. */
static const ingot_field_span_t stats_spans[] = {
    INGOT_FIELD_SPAN(INGOT_LOADER_STATS_FIELD_COUNTS, ingot_loader_stats_t, steps, skipped),
    INGOT_FIELD_SPAN(INGOT_LOADER_STATS_FIELD_STALL, ingot_loader_stats_t, wall_ns, stall_p99_ns),
    INGOT_FIELD_SPAN(INGOT_LOADER_STATS_FIELD_STAGES, ingot_loader_stats_t, read_p50_ns,
                     h2d_p99_ns),
    INGOT_FIELD_SPAN(INGOT_LOADER_STATS_FIELD_QUEUES, ingot_loader_stats_t, read_queue_avg,
                     ready_slots_avg),
    INGOT_FIELD_SPAN(INGOT_LOADER_STATS_FIELD_MEMORY, ingot_loader_stats_t, memory_host,
                     minor_faults),
    INGOT_FIELD_SPAN(INGOT_LOADER_STATS_FIELD_THREADS, ingot_loader_stats_t, readers, depth),
    INGOT_FIELD_SPAN(INGOT_LOADER_STATS_FIELD_STORE, ingot_loader_stats_t, store_requests,
                     store_part_hits),
    INGOT_FIELD_SPAN(INGOT_LOADER_STATS_FIELD_DISK, ingot_loader_stats_t, disk_hits,
                     disk_fill_errors)};

/* Every statistic, into a complete struct the caller's field_mask then picks from. */
static void stats_collect(ingot_loader_h l, ingot_loader_stats_t *s)
{
    uint64_t steps = l->next_step ? l->next_step : 1;
    memset(s, 0, sizeof(*s));
    s->steps = l->next_step;
    s->samples = l->samples;
    s->bytes = l->bytes;
    s->bytes_read = atomic_load(&l->bytes_read);
    s->read_requests = atomic_load(&l->read_requests);
    s->skipped = l->epoch_skipped;
    s->wall_ns = l->t_last > l->t_first ? l->t_last - l->t_first : 0;
    s->stall_ns = l->stall_ns;
    s->stall_first_ns = l->stall_first_ns;
#define Q(_h, _f) \
    s->_f##_p50_ns = ingot_hist_quantile(&l->_h, 0.5); \
    s->_f##_p99_ns = ingot_hist_quantile(&l->_h, 0.99)
    Q(h_stall, stall);
    Q(h_read, read);
    Q(h_verify, verify);
    Q(h_decode, decode);
    Q(h_transform, transform);
    Q(h_h2d, h2d);
#undef Q
    s->read_queue_avg = l->read_q_sum / (double)steps;
    s->ready_slots_avg = l->ready_sum / (double)steps;
    s->memory_host = (uint64_t)l->depth * l->slot_bytes + l->staging_mem.map_size;
    s->memory_device = (l->device != INGOT_DEVICE_HOST) ? (uint64_t)l->depth * l->slot_bytes : 0;
    for (uint32_t i = 0; i < l->depth; i++) {
        if (l->slots[i].host.kind != INGOT_MEM_KIND_PAGEABLE) {
            s->memory_pinned += l->slots[i].host.map_size;
        }
    }
    s->minor_faults = (uint64_t)(ingot_loader_minor_faults() - l->faults_at_create);
    s->readers = l->nreaders;
    s->workers = l->nworkers;
    s->depth = l->depth;
    ingot_loader_store_stats(l, s);
    ingot_loader_disk_stats(l, s);
}

ingot_status_t ingot_loader_stats(ingot_loader_h l, ingot_loader_stats_t *stats_p)
{
    if (l == NULL || stats_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_loader_stats: NULL %s",
                          l == NULL ? "loader" : "stats_p");
    }
    ingot_loader_stats_t all;
    stats_collect(l, &all);
    ingot_field_mask_copy(stats_p, &all, stats_p->field_mask, stats_spans,
                          INGOT_ARRAY_SIZE(stats_spans));
    return INGOT_OK;
}

ingot_status_t ingot_loader_epoch_bytes(ingot_loader_h l, uint64_t epoch,
                                        ingot_loader_epoch_bytes_t *bytes_p)
{
    if (l == NULL || bytes_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_loader_epoch_bytes: NULL %s",
                          l == NULL ? "loader" : "bytes_p");
    }
    if (epoch < l->first_epoch || epoch - l->first_epoch >= l->nepochs) {
        return ingot_fail(INGOT_ERR_OUT_OF_RANGE,
                          "ingot_loader_epoch_bytes: epoch %" PRIu64 " is not delivered by this "
                          "loader (epochs %" PRIu64 " to %" PRIu64 ")",
                          epoch, l->first_epoch, l->first_epoch + l->nepochs - 1);
    }
    const _Atomic uint64_t *c = &l->epoch_bytes[(epoch - l->first_epoch) * LOADER_FROM_COUNT];
    *bytes_p = (ingot_loader_epoch_bytes_t){.epoch = epoch,
                                            .bytes_storage = atomic_load(&c[LOADER_FROM_STORAGE]),
                                            .bytes_peer = atomic_load(&c[LOADER_FROM_PEER]),
                                            .bytes_local = atomic_load(&c[LOADER_FROM_LOCAL]),
                                            .bytes_disk = atomic_load(&c[LOADER_FROM_DISK])};
    return INGOT_OK;
}

ingot_status_t ingot_loader_cache_paths(ingot_loader_h l, char *buf, size_t len)
{
    if (l == NULL || buf == NULL || len == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_loader_cache_paths: NULL argument");
    }
    if (l->cache == NULL) {
        snprintf(buf, len, "no peer cache (INGOT_CACHE_BYTES=0)\n");
        return INGOT_ERR_NOT_FOUND;
    }
    ingot_cache_paths(l->cache, buf, len);
    return INGOT_OK;
}

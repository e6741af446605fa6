/*
 * The loader's figures, on any thread: stats by field group, the bytes of each epoch by source,
 * the tiers' figures and reports (each tier writes its own).
 */
#include "runtime/loader/loader_impl.h"
#include "base/field_mask.h"
#include "base/log.h"
#include "base/status.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

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
                     disk_damaged_fills),
    INGOT_FIELD_SPAN(INGOT_LOADER_STATS_FIELD_REREAD, ingot_loader_stats_t, reread_storage,
                     reread_at_rest),
    INGOT_FIELD_SPAN(INGOT_LOADER_STATS_FIELD_HEDGE, ingot_loader_stats_t, store_hedges,
                     store_hedge_wins),
    INGOT_FIELD_SPAN(INGOT_LOADER_STATS_FIELD_VERIFY, ingot_loader_stats_t, bytes_hashed_landing,
                     bytes_hashed_landing)};

/* The members each ingot_loader_store_stats_field bit covers. */
static const ingot_field_span_t store_spans[] = {
    INGOT_FIELD_SPAN(INGOT_LOADER_STORE_STATS_FIELD_COUNTS, ingot_loader_store_stats_t, epoch,
                     gets_per_sample),
    INGOT_FIELD_SPAN(INGOT_LOADER_STORE_STATS_FIELD_NODE, ingot_loader_store_stats_t, node_requests,
                     node_needed)};

/* Samples read over every epoch this loader delivers (the base of requests per sample). */
static uint64_t stats_samples_read(ingot_loader_h l)
{
    uint64_t n = 0;
    for (uint64_t e = 0; e < l->nepochs; e++) {
        n += atomic_load(&l->epoch_reads[e]);
    }
    return n;
}

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
    ingot_tier_chain_stats(l->tiers, s);
    s->reread_storage = atomic_load(&l->rereads[INGOT_TIER_FROM_STORAGE]);
    s->reread_peer = atomic_load(&l->rereads[INGOT_TIER_FROM_PEER]) +
                     atomic_load(&l->rereads[INGOT_TIER_FROM_LOCAL]);
    s->reread_disk = atomic_load(&l->rereads[INGOT_TIER_FROM_DISK]);
    s->reread_at_rest = atomic_load(&l->rereads_at_rest);
    s->bytes_hashed_landing = atomic_load(&l->bytes_landed);
    uint64_t samples = stats_samples_read(l);
    s->store_gets_per_sample = samples ? (double)s->store_requests / (double)samples : 0;
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
    const _Atomic uint64_t *c = &l->epoch_bytes[(epoch - l->first_epoch) * INGOT_TIER_FROM_COUNT];
    *bytes_p = (ingot_loader_epoch_bytes_t){
        .epoch = epoch,
        .bytes_storage = atomic_load(&c[INGOT_TIER_FROM_STORAGE]),
        .bytes_peer = atomic_load(&c[INGOT_TIER_FROM_PEER]),
        .bytes_local = atomic_load(&c[INGOT_TIER_FROM_LOCAL]),
        .bytes_disk = atomic_load(&c[INGOT_TIER_FROM_DISK])};
    return INGOT_OK;
}

/* The report of the tier of @p kind, or @p none (with INGOT_ERR_NOT_FOUND) when there is none. */
static ingot_status_t stats_report(ingot_loader_h l, ingot_tier_kind_t kind, const char *what,
                                   const char *none, char *buf, size_t len)
{
    if (l == NULL || buf == NULL || len == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "%s: NULL argument", what);
    }
    if (ingot_tier_chain_report(l->tiers, kind, buf, len) != INGOT_OK) {
        snprintf(buf, len, "%s\n", none);
        return INGOT_ERR_NOT_FOUND;
    }
    return INGOT_OK;
}

ingot_status_t ingot_loader_cache_paths(ingot_loader_h l, char *buf, size_t len)
{
    return stats_report(l, INGOT_TIER_PEER, "ingot_loader_cache_paths",
                        "no peer cache (INGOT_CACHE_BYTES=0)", buf, len);
}

ingot_status_t ingot_loader_disk_report(ingot_loader_h l, char *buf, size_t len)
{
    return stats_report(l, INGOT_TIER_DISK, "ingot_loader_disk_report",
                        "no disk tier (INGOT_DISK_CACHE_BYTES=0)", buf, len);
}

ingot_status_t ingot_loader_epoch_store(ingot_loader_h l, uint64_t epoch,
                                        ingot_loader_store_stats_t *stats_p)
{
    if (l == NULL || stats_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_loader_epoch_store: NULL argument");
    }
    ingot_loader_store_stats_t r = {.field_mask = stats_p->field_mask};
    ingot_status_t st = ingot_tier_chain_epoch_stats(l->tiers, epoch, &r);
    if (st == INGOT_ERR_NOT_FOUND) {
        return st; /* not an error worth a line: the manifest is local */
    }
    if (st != INGOT_OK || epoch < l->first_epoch || epoch - l->first_epoch >= l->nepochs) {
        return ingot_fail(INGOT_ERR_OUT_OF_RANGE,
                          "ingot_loader_epoch_store: epoch %" PRIu64 " is not delivered by this "
                          "loader",
                          epoch);
    }
    r.samples = atomic_load(&l->epoch_reads[epoch - l->first_epoch]);
    r.gets_per_sample = r.samples ? (double)r.requests / (double)r.samples : 0;
    ingot_field_mask_copy(stats_p, &r, stats_p->field_mask, store_spans,
                          INGOT_ARRAY_SIZE(store_spans));
    return INGOT_OK;
}

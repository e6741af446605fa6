/*
 * The node's disk tier as a tier of the chain (source/tier.h): wanted when INGOT_DISK_CACHE_BYTES
 * is not zero; it decorates storage (its source replaces the chain below), follows the loader's
 * clock (the policy's and prefetcher's "now"), and counts into the loader's statistics.
 */
#include "source/disk/disk_impl.h"

#define disk_of(_t) ((ingot_disk_t *)(_t))

static int tier_wanted(const ingot_tier_plan_t *plan)
{
    return plan->cfg->disk->bytes > 0;
}

static ingot_status_t tier_create(const ingot_tier_plan_t *plan, ingot_source_t **below_p,
                                  ingot_tier_t **tier_p)
{
    ingot_disk_t *d;
    ingot_status_t st = ingot_disk_create(plan, *below_p, &d); /* collective, agreed */
    if (st == INGOT_OK) {
        *below_p = &d->source;
        *tier_p = &d->tier;
    }
    return st;
}

static void tier_advance(ingot_tier_t *t, uint64_t step)
{
    ingot_disk_advance(disk_of(t), step);
}

static int tier_damaged(ingot_tier_t *t, const ingot_sample_info_t *s)
{
    return ingot_disk_damaged(disk_of(t), s);
}

static void tier_stats(const ingot_tier_t *t, ingot_loader_stats_t *s)
{
    ingot_disk_stats_t d;
    ingot_disk_stats(disk_of(t), &d);
    s->disk_hits = d.hits;
    s->disk_remote_hits = d.remote_hits;
    s->disk_misses = d.misses;
    s->disk_bytes = d.bytes_disk;
    s->disk_bytes_below = d.bytes_below;
    s->disk_admitted = d.admitted;
    s->disk_refused = d.refused;
    s->disk_evictions = d.evictions;
    s->disk_prefetched = d.prefetched;
    s->disk_prefetch_bytes = d.prefetch_bytes;
    s->disk_bad_entries = d.bad_entries;
    s->disk_fill_errors = d.fill_errors;
    s->disk_damaged_fills = d.damaged_fills;
}

static const char *tier_report(ingot_tier_t *t, char *buf, size_t len)
{
    return ingot_disk_report(disk_of(t), buf, len);
}

static void tier_destroy(ingot_tier_t *t)
{
    ingot_disk_destroy(disk_of(t));
}

const ingot_tier_ops_t ingot_disk_tier_ops = {.name = "disk",
                                              .kind = INGOT_TIER_DISK,
                                              .wanted = tier_wanted,
                                              .create = tier_create,
                                              .advance = tier_advance,
                                              .damaged = tier_damaged,
                                              .stats = tier_stats,
                                              .report = tier_report,
                                              .destroy = tier_destroy};

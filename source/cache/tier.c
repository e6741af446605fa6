/*
 * The peer cache as a tier read by location (source/tier.h): wanted when INGOT_CACHE_BYTES is not
 * zero; from the epoch after its fill it locates each cached sample at its home (the group) and
 * its offset in the home's window (the key), so the loader's runs are one home's samples in window
 * order; the fill epoch's verified samples fill it.
 */
#include "source/cache/cache_impl.h"

#define cache_of(_t) ((ingot_cache_t *)(_t))

static int tier_wanted(const ingot_tier_plan_t *plan)
{
    return plan->cfg->cache->budget.bytes > 0;
}

static ingot_status_t tier_create(const ingot_tier_plan_t *plan, ingot_source_t **below_p,
                                  ingot_tier_t **tier_p)
{
    (void)below_p; /* read by location: storage stays as it is */
    ingot_cache_t *c;
    ingot_status_t st = ingot_cache_create(plan, &c);
    if (st == INGOT_OK) {
        *tier_p = &c->tier;
    }
    return st;
}

static ingot_source_t *tier_source(ingot_tier_t *t)
{
    return &cache_of(t)->source;
}

static int tier_locates(const ingot_tier_t *t, uint64_t epoch)
{
    return epoch > cache_of(t)->fill_epoch;
}

static int tier_locate(const ingot_tier_t *t, const ingot_sample_info_t *s, ingot_tier_loc_t *loc)
{
    const ingot_cache_t *c = cache_of(t);
    ingot_cache_entry_t e = ingot_cache_entry(c, s->index);
    if (e.home < 0) {
        return 0;
    }
    *loc = (ingot_tier_loc_t){.group = e.home,
                              .from = e.home == c->rank ? INGOT_TIER_FROM_LOCAL
                                                        : INGOT_TIER_FROM_PEER,
                              .device = c->fetch_device >= 0 && e.home != c->rank,
                              .key = e.offset};
    return 1;
}

static int tier_fills(const ingot_tier_t *t, uint64_t epoch)
{
    return epoch == cache_of(t)->fill_epoch;
}

static void tier_fill(ingot_tier_t *t, const ingot_shard_rows_t *rows, const void *stored,
                      int packed)
{
    ingot_cache_fill(cache_of(t), rows, stored, packed);
}

static void tier_corrupt(ingot_tier_t *t, const ingot_sample_info_t *s, int32_t group)
{
    ingot_cache_report_corrupt(cache_of(t), s, group);
}

static int tier_fetch_device(const ingot_tier_t *t)
{
    return cache_of(t)->fetch_device;
}

static const char *tier_report(ingot_tier_t *t, char *buf, size_t len)
{
    return ingot_cache_paths(cache_of(t), buf, len);
}

static void tier_quiesce(ingot_tier_t *t)
{
    ingot_cache_quiesce(cache_of(t));
}

static void tier_destroy(ingot_tier_t *t)
{
    ingot_cache_destroy(cache_of(t));
}

const ingot_tier_ops_t ingot_cache_tier_ops = {.name = "peer cache",
                                               .kind = INGOT_TIER_PEER,
                                               .wanted = tier_wanted,
                                               .create = tier_create,
                                               .source = tier_source,
                                               .locates = tier_locates,
                                               .locate = tier_locate,
                                               .fills = tier_fills,
                                               .fill = tier_fill,
                                               .corrupt = tier_corrupt,
                                               .fetch_device = tier_fetch_device,
                                               .report = tier_report,
                                               .quiesce = tier_quiesce,
                                               .destroy = tier_destroy};

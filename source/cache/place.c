/*
 * The peer cache's placement (cache.h: ingot_cache_place): every sample's home and offset in its
 * window, and the budget that would hold the whole dataset, from facts and numbers alone, so that
 * every rank computes the same table without asking anyone, and a simulator computes it too.
 */
#include "source/cache/cache.h"
#include "base/mem.h"
#include <stdlib.h>

static int cmp_info(const void *a, const void *b)
{
    const ingot_sample_info_t *x = a, *y = b;
    if (x->shard != y->shard) {
        return x->shard < y->shard ? -1 : 1;
    }
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* The budget, of the kind given, that would hold every sample where the fill epoch reads it
 * (@p need: per rank, the bytes it reads first): windows are equal over the job, or over a node,
 * so the largest need sets them. */
static void place_needed(const ingot_cache_place_in_t *in, const uint64_t *need,
                         ingot_cache_placement_t *out)
{
    const ingot_tier_facts_t *f = in->facts;
    int groups = in->per_node ? f->nnodes : 1;
    uint64_t *most = calloc((size_t)groups, sizeof(*most)), *ranks = calloc((size_t)groups, 8);
    for (int r = 0; r < f->world; r++) {
        int g = in->per_node ? f->node_of[r] : 0;
        out->dataset_bytes += need[r];
        if (most != NULL && ranks != NULL && g >= 0 && g < groups) {
            most[g] = need[r] > most[g] ? need[r] : most[g];
            ranks[g]++;
        }
    }
    for (int g = 0; most != NULL && ranks != NULL && g < groups; g++) {
        out->needed = most[g] * ranks[g] > out->needed ? most[g] * ranks[g] : out->needed;
    }
    free(most);
    free(ranks);
}

/* Rank @p r's samples of the fill epoch, in the order it reads them, homed there while its window
 * has room (a prefix: what is read first is kept). */
static ingot_status_t place_rank(const ingot_cache_place_in_t *in, int r, uint64_t *ids,
                                 ingot_sample_info_t *info, uint64_t *need,
                                 ingot_cache_placement_t *out)
{
    uint64_t used = 0;
    int full = 0, me = in->facts->rank, world = in->facts->world;
    for (uint64_t s = in->fill_step; s < in->steps_per_epoch; s++) {
        uint32_t slice = in->slice_of != NULL ? in->slice_of[r] : (uint32_t)r;
        ingot_status_t st = ingot_order_slice(in->order, in->fill_epoch, s, slice, (uint32_t)world,
                                              ids, in->slice);
        for (uint32_t k = 0; k < in->slice && st == INGOT_OK; k++) {
            st = ingot_manifest_sample_get(in->manifest, ids[k], &info[k]);
        }
        if (st != INGOT_OK) {
            return st;
        }
        qsort(info, in->slice, sizeof(*info), cmp_info); /* the order it reads them in */
        for (uint32_t k = 0; k < in->slice; k++) {
            ingot_cache_entry_t *e = &out->entries[info[k].index];
            if (e->home >= 0) {
                /* read again in the fill epoch (a padded tail): its first home keeps it, and a
                 * home that reads it twice fills it twice (counted as such) */
                out->fill_expected += (e->home == r && r == me);
                continue;
            }
            need[r] += info[k].length; /* its home if the windows held everything */
            if (full || used + info[k].length > in->windows[r]) {
                full = 1;
                continue;
            }
            *e = (ingot_cache_entry_t){
                .home = r, .length = (uint32_t)info[k].length, .offset = used};
            used += info[k].length;
            out->cached_samples++;
            out->cached_bytes += info[k].length;
            out->fill_expected += (r == me);
        }
    }
    return INGOT_OK;
}

ingot_status_t ingot_cache_place(const ingot_cache_place_in_t *in, ingot_cache_placement_t *out)
{
    ingot_manifest_info_t mi;
    ingot_status_t st = ingot_manifest_query(in->manifest, &mi);
    if (st != INGOT_OK) {
        return st;
    }
    *out = (ingot_cache_placement_t){.count = mi.sample_count};
    out->entries = ingot_calloc(mi.sample_count ? mi.sample_count : 1, sizeof(*out->entries),
                                "cache table");
    uint64_t *ids = ingot_calloc(in->slice, sizeof(*ids), "cache slice");
    ingot_sample_info_t *info = ingot_calloc(in->slice, sizeof(*info), "cache slice rows");
    uint64_t *need = ingot_calloc((size_t)in->facts->world, sizeof(*need), "cache needs");
    st = (out->entries && ids && info && need) ? INGOT_OK : INGOT_ERR_NO_MEMORY;
    for (uint64_t i = 0; st == INGOT_OK && i < mi.sample_count; i++) {
        out->entries[i].home = -1;
    }
    for (int r = 0; r < in->facts->world && st == INGOT_OK; r++) {
        st = place_rank(in, r, ids, info, need, out);
    }
    if (st == INGOT_OK) {
        place_needed(in, need, out);
    } else {
        free(out->entries);
        out->entries = NULL;
    }
    free(ids);
    free(info);
    free(need);
    return st;
}

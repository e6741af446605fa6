/*
 * The plan a job of the simulated cluster would make, made by the job's own code: the ranks
 * numbered node by node, the order (INGOT_ORDER, dealt over the canonical nodes) and every
 * rank's slice (deal.c), the loader's readers, workers and coalescing gap as it would take them,
 * the peer cache's windows and homes (INGOT_CACHE_BYTES: source/cache/place.c), and over an
 * object store the shards' parts and the node part cache's room (source/objstore/).
 */
#include "runtime/sim/sim_impl.h"
#include "runtime/loader/loader_config.h"
#include "runtime/loader/loader_impl.h"
#include "source/objstore/objstore_source.h"
#include "client/objstore_config.h"
#include "source/storage.h"
#include "base/location.h"
#include "base/log.h"
#include "base/status.h"
#include "base/mem.h"
#include "shard/manifest.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Ranks numbered node by node (a node's ranks consecutive), as mpirun's default mapping by slot
 * and srun's block distribution lay out a job. */
static ingot_status_t plan_ranks(const ingot_sim_cluster_t *c, sim_plan_t *p)
{
    p->nodes = c->nodes;
    p->world = 0;
    for (uint32_t n = 0; n < c->nodes; n++) {
        p->world += c->ranks_of != NULL ? c->ranks_of[n] : c->ranks_per_node;
    }
    if (p->world == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "the cluster has no ranks");
    }
    p->node_of = ingot_calloc(p->world, sizeof(*p->node_of), "sim ranks");
    p->slice_of = ingot_calloc(p->world, sizeof(*p->slice_of), "sim ranks");
    p->node_first = ingot_calloc((size_t)p->nodes + 1, sizeof(*p->node_first), "sim nodes");
    p->node_names = ingot_calloc(p->nodes, INGOT_TOPO_HOST_MAX, "sim nodes");
    if (p->node_of == NULL || p->slice_of == NULL || p->node_first == NULL ||
        p->node_names == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    uint32_t r = 0;
    for (uint32_t n = 0; n < c->nodes; n++) {
        uint32_t k = c->ranks_of != NULL ? c->ranks_of[n] : c->ranks_per_node;
        p->node_first[n] = r;
        for (uint32_t i = 0; i < k; i++) {
            p->node_of[r++] = (int)n;
        }
        snprintf(p->node_names + (size_t)n * INGOT_TOPO_HOST_MAX, INGOT_TOPO_HOST_MAX,
                 SIM_NODE_NAME, n);
    }
    p->node_first[p->nodes] = r;
    p->facts = (ingot_tier_facts_t){.world = (int)p->world,
                                    .rank = 0,
                                    .nnodes = (int)p->nodes,
                                    .node_of = p->node_of,
                                    .node_names = p->node_names};
    return INGOT_OK;
}

/* The order INGOT_ORDER names, dealt as the loader deals it, and every rank's slice. */
static ingot_status_t plan_order(const ingot_sim_job_t *job, sim_plan_t *p,
                                 const ingot_manifest_info_t *mi)
{
    const ingot_loader_config_t *lc;
    INGOT_CHECK(ingot_loader_config(&lc));
    p->mode = lc->order.mode;
    p->window = lc->order.mode == INGOT_ORDER_LOCALITY ? lc->order.window : 0;
    p->order_nodes = p->mode != INGOT_ORDER_LOCALITY ? 0
                     : lc->order.nodes > 0           ? lc->order.nodes
                                                     : p->nodes;
    p->global_batch = job->global_batch != 0 ? job->global_batch : 64 * (uint64_t)p->world;
    if (p->global_batch % p->world != 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "--batch %" PRIu64 " is not a multiple of the %u ranks", p->global_batch,
                          p->world);
    }
    if (p->order_nodes > 0 && p->global_batch % p->order_nodes != 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "INGOT_ORDER deals every step over %u canonical nodes, and the global "
                          "batch %" PRIu64 " is not a multiple of %u",
                          p->order_nodes, p->global_batch, p->order_nodes);
    }
    p->slice = (uint32_t)(p->global_batch / p->world);
    INGOT_CHECK(ingot_loader_order_make(job->manifest, mi, p->global_batch, job->seed,
                                        INGOT_ORDER_TAIL_DROP, p->mode, p->window, p->order_nodes,
                                        &p->order));
    p->steps_per_epoch = ingot_order_steps(p->order);
    if (p->steps_per_epoch == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "%" PRIu64 " samples make no full global batch of %" PRIu64,
                          mi->sample_count, p->global_batch);
    }
    if (p->order_nodes > 1) {
        uint32_t *ranks_of = ingot_calloc((size_t)p->nodes + 1, sizeof(uint32_t), "sim slices");
        uint32_t *first_of = ingot_calloc((size_t)p->nodes + 1, sizeof(uint32_t), "sim slices");
        if (ranks_of == NULL || first_of == NULL) {
            free(ranks_of);
            free(first_of);
            return INGOT_ERR_NO_MEMORY;
        }
        ingot_loader_deal_number(p->node_of, (int)p->world, (int)p->nodes, ranks_of, first_of,
                                 p->slice_of);
        free(ranks_of);
        free(first_of);
    } else {
        for (uint32_t r = 0; r < p->world; r++) {
            p->slice_of[r] = r;
        }
    }
    return INGOT_OK;
}

/* Every sample's record and decoded bytes, read once from the manifest (the steps read arrays). */
static ingot_status_t plan_samples(ingot_manifest_h m, sim_plan_t *p)
{
    size_t n = p->samples ? p->samples : 1;
    p->record = ingot_calloc(n, sizeof(*p->record), "sim samples");
    p->raw = ingot_calloc(n, sizeof(*p->raw), "sim samples");
    p->shard_of = ingot_calloc(n, sizeof(*p->shard_of), "sim samples");
    p->offset = ingot_calloc(n, sizeof(*p->offset), "sim samples");
    if (p->record == NULL || p->raw == NULL || p->shard_of == NULL || p->offset == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (uint64_t i = 0; i < p->samples; i++) {
        ingot_sample_info_t si;
        INGOT_CHECK(ingot_manifest_sample_get(m, i, &si));
        uint64_t raw = 0;
        for (uint32_t f = 0; f < si.field_count; f++) {
            ingot_field_info_t fi;
            INGOT_CHECK(ingot_manifest_field_get(m, &si, f, &fi));
            raw += fi.raw_len;
            p->zstd |= fi.codec == INGOT_CODEC_ZSTD;
        }
        p->record[i] = (uint32_t)si.length;
        p->raw[i] = (uint32_t)raw;
        p->shard_of[i] = si.shard;
        p->offset[i] = si.offset;
    }
    return INGOT_OK;
}

/* What the job holds in a node's memory (its ranks' batch slots, depth + 1 of the largest
 * batch; their peer cache windows; the node's part cache), against the node's --memory. */
static ingot_status_t plan_memory(const ingot_sim_job_t *job, const ingot_sim_cluster_t *c,
                                  const sim_plan_t *p, const uint64_t *windows, uint64_t batch_max)
{
    for (uint32_t n = 0; c->memory > 0 && n < p->nodes; n++) {
        double slots = 0, cache = 0;
        for (uint32_t r = p->node_first[n]; r < p->node_first[n + 1]; r++) {
            slots += (double)(job->depth + 1) * (double)batch_max;
            cache += p->cache_on ? (double)windows[r] : 0;
        }
        double parts = p->parts_on ? (double)p->parts_bytes : 0;
        if (slots + cache + parts > c->memory) {
            return ingot_fail(INGOT_ERR_INVALID_PARAM,
                              "node %u: its %u ranks' batch slots (%.0f bytes), peer cache "
                              "windows (%.0f, INGOT_CACHE_BYTES) and the part cache (%.0f) take "
                              "more than --memory %.0f",
                              n, sim_node_ranks(p, n), slots, cache, parts, c->memory);
        }
    }
    return INGOT_OK;
}

/* The peer cache: every rank's window as the cache sizes it, then every sample's home. */
static ingot_status_t plan_cache(const ingot_sim_job_t *job, const ingot_sim_cluster_t *c,
                                 sim_plan_t *p)
{
    const ingot_cache_config_t *cc;
    INGOT_CHECK(ingot_cache_config(&cc));
    uint64_t *windows = ingot_calloc(p->world, sizeof(*windows), "sim cache windows");
    if (windows == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    uint64_t batch_max = 0;
    for (uint64_t i = 0; i < p->samples; i++) {
        batch_max = p->record[i] > batch_max ? p->record[i] : batch_max;
    }
    batch_max *= p->slice;
    for (uint32_t r = 0; r < p->world; r++) {
        uint64_t share = cc->budget.per_node ? sim_node_ranks(p, (uint32_t)p->node_of[r])
                                             : p->world;
        windows[r] = cc->budget.bytes / share;
        if (cc->budget.bytes > 0 && windows[r] < batch_max) {
            uint64_t w = windows[r];
            free(windows);
            return ingot_fail(INGOT_ERR_INVALID_PARAM,
                              "INGOT_CACHE_BYTES=%s gives rank %u a window of %" PRIu64 " bytes, "
                              "smaller than one batch in flight (%" PRIu64 " bytes)",
                              cc->budget.given, r, w, batch_max);
        }
    }
    ingot_cache_place_in_t in = {.facts = &p->facts,
                                 .windows = windows,
                                 .per_node = cc->budget.per_node,
                                 .manifest = job->manifest,
                                 .order = p->order,
                                 .fill_epoch = 0,
                                 .fill_step = 0,
                                 .steps_per_epoch = p->steps_per_epoch,
                                 .slice = p->slice,
                                 .slice_of = p->slice_of};
    ingot_status_t st = ingot_cache_place(&in, &p->place);
    /* without the cache, the placement of empty windows still says what would hold it all */
    p->cache_on = st == INGOT_OK && cc->budget.bytes > 0;
    st = st == INGOT_OK ? plan_memory(job, c, p, windows, batch_max) : st;
    free(windows);
    return st;
}

/* The object store's part cache, as INGOT_S3_CACHE=auto makes it: under the locality order one
 * per node, sized for the window, so each part its ranks read is fetched once per epoch; under
 * the global order none (each sample its own ranged GET). Other settings are not simulated. */
static ingot_status_t plan_parts(ingot_manifest_h m, int remote, uint32_t depth, sim_plan_t *p)
{
    const ingot_parts_config_t *pc;
    const ingot_objstore_config_t *oc;
    INGOT_CHECK(ingot_parts_config(&pc));
    INGOT_CHECK(ingot_objstore_config(&oc));
    if (!remote) {
        return INGOT_OK;
    }
    if (!pc->budget.is_auto) {
        return ingot_fail(INGOT_ERR_UNSUPPORTED,
                          "INGOT_S3_CACHE=%s: only 'auto' is simulated (docs/sim.md)",
                          pc->budget.given);
    }
    p->parts_on = p->mode == INGOT_ORDER_LOCALITY;
    ingot_manifest_info_t mi;
    INGOT_CHECK(ingot_manifest_query(m, &mi));
    if (p->parts_on) { /* its room, as the source sizes it for a job of this plan */
        ingot_tier_config_t tc;
        INGOT_CHECK(ingot_tier_config(&tc));
        ingot_node_info_t node = {.node_count = (int)p->nodes};
        ingot_tier_plan_t tp = {.node = &node,
                                .cfg = &tc,
                                .manifest = m,
                                .order_mode = p->mode,
                                .order_window = p->window,
                                .order_nodes = p->order_nodes,
                                .global_batch = p->global_batch,
                                .depth = depth};
        ingot_objsrc_shape_t sh;
        int shared;
        INGOT_CHECK(ingot_objsrc_cache_bytes(&tp, &sh, &p->parts_bytes, &shared));
    }
    p->nshards = (uint32_t)mi.shard_count;
    p->part_len = ingot_calloc(mi.shard_count + 1, sizeof(uint64_t), "sim parts");
    p->part0 = ingot_calloc(mi.shard_count + 1, sizeof(uint64_t), "sim parts");
    p->shard_size = ingot_calloc(mi.shard_count + 1, sizeof(uint64_t), "sim parts");
    if (p->part_len == NULL || p->part0 == NULL || p->shard_size == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (uint32_t i = 0; i < mi.shard_count; i++) {
        ingot_shard_info_t si;
        INGOT_CHECK(ingot_manifest_shard_get(m, i, &si));
        p->shard_size[i] = si.size;
        p->part_len[i] = si.size > 0 ? ingot_objsrc_part_len(si.size, oc->part_size) : 1;
        p->part0[i + 1] = p->part0[i] + (si.size + p->part_len[i] - 1) / p->part_len[i];
    }
    return INGOT_OK;
}

/* What the loader's defaults would be on a node of the cluster: readers as storage wants them,
 * workers the node's cores over its ranks (at least one). */
static ingot_status_t plan_threads(const ingot_sim_job_t *job, const ingot_sim_cluster_t *c,
                                   int remote, sim_plan_t *p)
{
    const ingot_loader_config_t *lc;
    INGOT_CHECK(ingot_loader_config(&lc));
    ingot_tier_config_t tc;
    INGOT_CHECK(ingot_tier_config(&tc));
    /* a described dataset over an object store: read as a bucket's would be */
    ingot_location_t bucket = {0};
    const ingot_location_t *loc = ingot_manifest_location(job->manifest);
    if (remote && !ingot_location_is_remote(loc)) {
        INGOT_CHECK(ingot_location_parse("s3://sim/manifest.ingot", 0, &bucket));
        loc = &bucket;
    }
    p->coalesce_gap = lc->coalesce_gap;
    p->readers = job->readers      ? job->readers
                 : lc->readers > 0 ? (uint32_t)lc->readers
                                   : ingot_storage_readers(&tc, loc, p->mode);
    ingot_location_release(&bucket);
    uint32_t most = c->ranks_of != NULL ? 0 : c->ranks_per_node;
    for (uint32_t n = 0; c->ranks_of != NULL && n < c->nodes; n++) {
        most = c->ranks_of[n] > most ? c->ranks_of[n] : most;
    }
    uint32_t share = most > 0 ? c->cores / most : c->cores;
    p->workers = job->workers      ? job->workers
                 : lc->workers > 0 ? (uint32_t)lc->workers
                                   : (share > 0 ? share : 1);
    const ingot_storage_config_t *sc = tc.storage;
    p->map_files = !remote && ingot_storage_map_shards(sc, (int)most, (int)c->cores);
    p->emulate = sc->emulate.bandwidth > 0 || sc->emulate.latency_ns > 0;
    p->emu_bw = (double)sc->emulate.bandwidth;
    p->emu_lat = (double)sc->emulate.latency_ns / 1e9;
    return INGOT_OK;
}

ingot_status_t ingot_sim_plan(const ingot_sim_job_t *job, const ingot_sim_cluster_t *c, int remote,
                              sim_plan_t *p)
{
    *p = (sim_plan_t){0};
    ingot_manifest_info_t mi;
    INGOT_CHECK(ingot_sim_cluster_check(c));
    INGOT_CHECK(ingot_manifest_query(job->manifest, &mi));
    p->samples = mi.sample_count;
    ingot_status_t st = plan_ranks(c, p);
    st = st == INGOT_OK ? plan_threads(job, c, remote, p) : st;
    st = st == INGOT_OK ? plan_order(job, p, &mi) : st;
    st = st == INGOT_OK ? plan_samples(job->manifest, p) : st;
    st = st == INGOT_OK ? plan_parts(job->manifest, remote, job->depth, p) : st;
    st = st == INGOT_OK ? plan_cache(job, c, p) : st;
    if (st != INGOT_OK) {
        ingot_sim_plan_free(p);
    }
    return st;
}

void ingot_sim_plan_free(sim_plan_t *p)
{
    ingot_order_destroy(p->order);
    free(p->place.entries);
    free(p->node_of);
    free(p->slice_of);
    free(p->node_first);
    free(p->node_names);
    free(p->record);
    free(p->raw);
    free(p->shard_of);
    free(p->offset);
    free(p->part_len);
    free(p->part0);
    free(p->shard_size);
    *p = (sim_plan_t){0};
}

/*
 * The object store as the chain's storage (source/tier.h), for a manifest at an s3:// or
 * http(s):// URL: the byte source with its part cache sized for the order, the job-wide check
 * that every rank reads the same bucket through the same endpoint, region and credential source,
 * and the store's figures, in total and per epoch.
 */
#include "source/objstore/objstore_source.h"
#include "client/objstore_config.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/status.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/** The automatic part cache's ceiling. */
#define STORE_CACHE_AUTO_MAX (2ull << 30)

#define store_of(_t) ((ingot_tier_storage_t *)(_t))

static int store_wanted(const ingot_tier_plan_t *plan)
{
    return ingot_location_is_remote(plan->location);
}

/* The canonical nodes a physical node reads (their windows share its part cache). */
static uint64_t store_carried(const ingot_tier_plan_t *plan)
{
    uint64_t nodes = (uint64_t)plan->node->node_count,
             c = plan->order_nodes ? plan->order_nodes : 1;
    return c >= nodes ? (c + nodes - 1) / nodes : 1;
}

/* The parts one canonical node reads at once, in slots (the part cache's unit, shape.slot bytes
 * each): the windows its steps in flight span (a window read, the next ones the planned steps
 * reach into: shards of few samples put several windows in flight), a part straddling two. */
static uint64_t store_slots_in_flight(const ingot_tier_plan_t *plan, const ingot_objsrc_shape_t *sh)
{
    uint64_t c = plan->order_nodes ? plan->order_nodes : 1, window = plan->order_window;
    double per_step = (double)plan->global_batch / (double)c;
    double window_samples = (double)window * (sh->samples_mean > 1 ? sh->samples_mean : 1);
    uint64_t windows = 2 + (uint64_t)((plan->depth + 1) * per_step / window_samples);
    return (windows * window + 1) * sh->parts_max;
}

/* The bytes one window's parts take, for each canonical node the node reads: less, and a
 * window's parts would evict each other within a step. */
static uint64_t store_window_bytes(const ingot_tier_plan_t *plan, const ingot_objsrc_shape_t *sh)
{
    return (uint64_t)plan->order_window * sh->parts_max * sh->slot * store_carried(plan);
}

/* INGOT_S3_CACHE for this job, in *bytes_p. "auto" under the locality order: the node's part
 * cache holds the parts each canonical node the node reads has in flight
 * (store_slots_in_flight), at most 2GiB per canonical node but never less than one window's
 * parts; the global order has none (its reads are scattered over every shard). "SIZE/node": the node's, of that size. A size: this
 * process's own part cache. *node_p: whether the node's ranks share it. */
ingot_status_t ingot_objsrc_cache_bytes(const ingot_tier_plan_t *plan, ingot_objsrc_shape_t *sh,
                                        uint64_t *bytes_p, int *node_p)
{
    const ingot_parts_budget_t *b = &plan->cfg->parts->budget;
    INGOT_CHECK(ingot_objsrc_shape(plan->manifest, plan->cfg->objstore->part_size, sh));
    *node_p = b->per_node;
    *bytes_p = b->is_auto ? 0 : b->bytes;
    if (b->is_auto && plan->order_mode == INGOT_ORDER_LOCALITY) {
        uint64_t bytes = store_slots_in_flight(plan, sh) * sh->slot;
        bytes = (bytes < STORE_CACHE_AUTO_MAX ? bytes : STORE_CACHE_AUTO_MAX) * store_carried(plan);
        *bytes_p = bytes > store_window_bytes(plan, sh) ? bytes : store_window_bytes(plan, sh);
        *node_p = 1;
    }
    return INGOT_OK;
}

/* A part cache of a node must hold one window's parts of each canonical node it reads, or the
 * window's parts would evict each other within a step (refused, naming the variable). */
static ingot_status_t store_check_budget(const ingot_tier_plan_t *plan,
                                         const ingot_objsrc_shape_t *sh, uint64_t bytes)
{
    uint64_t need = store_window_bytes(plan, sh);
    if (plan->order_mode != INGOT_ORDER_LOCALITY || bytes >= need) {
        return INGOT_OK;
    }
    return ingot_fail(INGOT_ERR_NO_RESOURCE,
                      "INGOT_S3_CACHE=%s: the node's part cache cannot hold one window's parts: "
                      "%u shard(s) of up to %" PRIu64 " bytes for each of the %" PRIu64
                      " canonical node(s) this node reads need %" PRIu64 " bytes (%" PRIu64
                      " MiB/node, or 'auto')",
                      plan->cfg->parts->budget.given, plan->order_window, sh->largest,
                      store_carried(plan), need, (need + (1u << 20) - 1) >> 20);
}

static ingot_status_t store_make(const ingot_tier_plan_t *plan, ingot_source_t **src_p)
{
    int node;
    uint64_t bytes;
    ingot_objsrc_shape_t sh;
    INGOT_CHECK(ingot_objsrc_cache_bytes(plan, &sh, &bytes, &node));
    ingot_source_objstore_params_t p = {.manifest = plan->manifest,
                                        .url = plan->location->text,
                                        .nreqs = plan->nreqs,
                                        .iov_max = plan->iov_max,
                                        .cache_bytes = node ? 0 : bytes,
                                        .first_epoch = plan->first_epoch,
                                        .nepochs = plan->nepochs,
                                        .numa_node = plan->numa};
    return ingot_source_objstore_create(&p, src_p);
}

static ingot_status_t store_create(const ingot_tier_plan_t *plan, ingot_source_t **below_p,
                                   ingot_tier_t **tier_p)
{
    int node;
    uint64_t bytes;
    ingot_objsrc_shape_t sh;
    ingot_status_t st = ingot_objsrc_cache_bytes(plan, &sh, &bytes,
                                                 &node); /* alike on every rank */
    st = st == INGOT_OK && node ? store_check_budget(plan, &sh, bytes) : st;
    if (st != INGOT_OK) { /* every rank finds it: said once, by the hold of the loader's create */
        return ingot_mpi_agree(&plan->comm, st, "object store: the node's part cache");
    }
    st = ingot_tier_storage_create(plan, &ingot_objstore_tier_ops, store_make, below_p, tier_p);
    if (st == INGOT_OK && node) { /* collective, agreed: the node's ranks share one part cache */
        st = ingot_source_objstore_share(*below_p, plan, bytes);
        if (st != INGOT_OK) {
            ingot_tier_storage_destroy(*tier_p);
        }
    }
    return st;
}

static ingot_status_t store_check(ingot_tier_t *tier, MPI_Comm comm)
{
    const ingot_source_t *src = store_of(tier)->src;
    ingot_objstore_identity_t oid;
    ingot_store_identity_t id;
    memset(&id, 0, sizeof(id));
    ingot_source_objstore_identity(src, &oid);
    snprintf(id.endpoint, sizeof(id.endpoint), "%s", oid.endpoint);
    snprintf(id.region, sizeof(id.region), "%s", oid.region);
    snprintf(id.credential_source, sizeof(id.credential_source), "%s", oid.credential_source);
    snprintf(id.bucket, sizeof(id.bucket), "%s", ingot_source_objstore_bucket(src));
    return ingot_objstore_check_job(comm, &id);
}

static void store_stats(const ingot_tier_t *t, ingot_loader_stats_t *s)
{
    ingot_objstore_stats_t o;
    const ingot_source_t *src = store_of(t)->src;
    ingot_source_objstore_stats(src, INGOT_SOURCE_OBJSTORE_ALL, &o);
    s->store_requests = o.requests;
    s->store_failed = o.failed;
    s->store_attempts = o.attempts;
    s->store_bytes = o.bytes;
    s->store_retries_throttle = o.retries[INGOT_OBJSTORE_RETRY_THROTTLE];
    s->store_retries_server = o.retries[INGOT_OBJSTORE_RETRY_SERVER];
    s->store_retries_network = o.retries[INGOT_OBJSTORE_RETRY_NETWORK];
    s->store_retries_stall = o.retries[INGOT_OBJSTORE_RETRY_STALL];
    s->store_hedges = o.hedges;
    s->store_hedge_wins = o.hedge_wins;
    s->store_retries_auth = o.retries[INGOT_OBJSTORE_RETRY_AUTH];
    s->store_throttle_events = o.throttle_events;
    s->store_get_p50_ns = o.latency_p50_ns;
    s->store_get_p99_ns = o.latency_p99_ns;
    s->store_part_hits = ingot_source_objstore_part_hits(src);
}

static void store_advance(ingot_tier_t *t, uint64_t step)
{
    ingot_source_objstore_advance(store_of(t)->src, step);
}

static ingot_status_t store_epoch_stats(const ingot_tier_t *t, uint64_t epoch,
                                        ingot_loader_store_stats_t *s)
{
    ingot_objstore_stats_t o;
    if (ingot_source_objstore_stats(store_of(t)->src, epoch, &o) != INGOT_OK) {
        return INGOT_ERR_OUT_OF_RANGE;
    }
    *s = (ingot_loader_store_stats_t){.field_mask = s->field_mask,
                                      .epoch = epoch,
                                      .requests = o.requests,
                                      .failed = o.failed,
                                      .bytes = o.bytes,
                                      .retries_throttle = o.retries[INGOT_OBJSTORE_RETRY_THROTTLE],
                                      .retries_server = o.retries[INGOT_OBJSTORE_RETRY_SERVER],
                                      .retries_network = o.retries[INGOT_OBJSTORE_RETRY_NETWORK],
                                      .retries_stall = o.retries[INGOT_OBJSTORE_RETRY_STALL],
                                      .retries_auth = o.retries[INGOT_OBJSTORE_RETRY_AUTH],
                                      .throttle_events = o.throttle_events,
                                      .get_p50_ns = o.latency_p50_ns,
                                      .get_p99_ns = o.latency_p99_ns};
    (void)ingot_source_objstore_node_epoch(store_of(t)->src, epoch, &s->node_requests,
                                           &s->node_bytes, &s->node_needed); /* 0 without one */
    return INGOT_OK;
}

const ingot_tier_ops_t ingot_objstore_tier_ops = {.name = "object store",
                                                  .kind = INGOT_TIER_OBJSTORE,
                                                  .wanted = store_wanted,
                                                  .create = store_create,
                                                  .check = store_check,
                                                  .advance = store_advance,
                                                  .stats = store_stats,
                                                  .epoch_stats = store_epoch_stats,
                                                  .destroy = ingot_tier_storage_destroy};

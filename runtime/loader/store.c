/*
 * The loader over an object store (manifests at s3:// or http(s):// URLs): the storage source
 * (source/objstore/objstore_source.h) with its part cache sized for the order, the job-wide
 * check that every rank reads the same bucket through the same endpoint, region and credential
 * source, and the store's figures, in total and per epoch.
 */
#include "runtime/loader/loader_impl.h"
#include "runtime/context_impl.h"
#include "runtime/store/store.h"
#include "source/objstore/objstore_source.h"
#include "base/log.h"
#include "base/status.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/** The automatic part cache's ceiling. */
#define STORE_CACHE_AUTO_MAX (2ull << 30)

/* INGOT_S3_CACHE for this loader: "auto" holds window + 2 of the largest shards under the
 * locality order (a window read, the next one starting, a part straddling them), none under the
 * global one (its reads are scattered over every shard). */
static uint64_t store_cache_bytes(ingot_loader_h l, const ingot_objstore_config_t *cfg)
{
    int is_auto;
    uint64_t bytes;
    if (ingot_objstore_cache_parse(cfg->cache, &is_auto, &bytes) != 0 || !is_auto) {
        return bytes;
    }
    if (l->params.order_mode != INGOT_ORDER_LOCALITY) {
        return 0;
    }
    uint64_t largest = 0;
    for (uint32_t s = 0; s < l->minfo.shard_count; s++) {
        ingot_shard_info_t si;
        if (ingot_manifest_shard_get(l->manifest, s, &si) == INGOT_OK && si.size > largest) {
            largest = si.size;
        }
    }
    bytes = ((uint64_t)l->params.order_window + 2) * (largest + cfg->part_size);
    return bytes < STORE_CACHE_AUTO_MAX ? bytes : STORE_CACHE_AUTO_MAX;
}

ingot_status_t ingot_loader_store_create(ingot_loader_h l, ingot_source_t **src_p)
{
    const ingot_objstore_config_t *cfg;
    INGOT_CHECK(ingot_objstore_config(&cfg));
    l->epoch_reads = ingot_calloc(l->nepochs + 1, sizeof(*l->epoch_reads), "epoch reads");
    if (l->epoch_reads == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    ingot_source_objstore_params_t p = {.manifest = l->manifest,
                                        .url = l->params.manifest_path,
                                        .nreqs = l->nreaders * LOADER_REQS_PER_READER,
                                        .iov_max = l->iov_cap,
                                        .cache_bytes = store_cache_bytes(l, cfg),
                                        .first_epoch = l->first_epoch,
                                        .nepochs = l->nepochs,
                                        .numa_node = l->numa_node};
    INGOT_CHECK(ingot_source_objstore_create(&p, src_p));
    l->store = *src_p;
    return INGOT_OK;
}

ingot_status_t ingot_loader_store_check(ingot_loader_h l)
{
    ingot_store_identity_t id;
    memset(&id, 0, sizeof(id));
    if (l->store != NULL) { /* a rank without a store compares as empty: named if others have */
        ingot_objstore_identity_t oid;
        ingot_source_objstore_identity(l->store, &oid);
        snprintf(id.endpoint, sizeof(id.endpoint), "%s", oid.endpoint);
        snprintf(id.region, sizeof(id.region), "%s", oid.region);
        snprintf(id.credential_source, sizeof(id.credential_source), "%s", oid.credential_source);
        snprintf(id.bucket, sizeof(id.bucket), "%s", ingot_source_objstore_bucket(l->store));
    }
    return ingot_store_check_job(l->ctx->comm, &id);
}

static uint64_t store_samples_read(ingot_loader_h l)
{
    uint64_t n = 0;
    for (uint64_t e = 0; l->epoch_reads != NULL && e < l->nepochs; e++) {
        n += atomic_load(&l->epoch_reads[e]);
    }
    return n;
}

void ingot_loader_store_stats(ingot_loader_h l, ingot_loader_stats_t *s)
{
    ingot_objstore_stats_t o;
    if (l->store == NULL) {
        return;
    }
    ingot_source_objstore_stats(l->store, INGOT_SOURCE_OBJSTORE_ALL, &o);
    uint64_t samples = store_samples_read(l);
    s->store_requests = o.requests;
    s->store_failed = o.failed;
    s->store_attempts = o.attempts;
    s->store_bytes = o.bytes;
    s->store_retries_throttle = o.retries[INGOT_OBJSTORE_RETRY_THROTTLE];
    s->store_retries_server = o.retries[INGOT_OBJSTORE_RETRY_SERVER];
    s->store_retries_network = o.retries[INGOT_OBJSTORE_RETRY_NETWORK];
    s->store_retries_stall = o.retries[INGOT_OBJSTORE_RETRY_STALL];
    s->store_retries_auth = o.retries[INGOT_OBJSTORE_RETRY_AUTH];
    s->store_throttle_events = o.throttle_events;
    s->store_get_p50_ns = o.latency_p50_ns;
    s->store_get_p99_ns = o.latency_p99_ns;
    s->store_gets_per_sample = samples ? (double)o.requests / (double)samples : 0;
    s->store_part_hits = ingot_source_objstore_part_hits(l->store);
}

ingot_status_t ingot_loader_epoch_store(ingot_loader_h l, uint64_t epoch,
                                        ingot_loader_store_stats_t *stats_p)
{
    ingot_objstore_stats_t o;
    if (l == NULL || stats_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_loader_epoch_store: NULL argument");
    }
    if (l->store == NULL) {
        return INGOT_ERR_NOT_FOUND; /* not an error worth a line: the manifest is local */
    }
    if (ingot_source_objstore_stats(l->store, epoch, &o) != INGOT_OK) {
        return ingot_fail(INGOT_ERR_OUT_OF_RANGE,
                          "ingot_loader_epoch_store: epoch %" PRIu64 " is not delivered by this "
                          "loader",
                          epoch);
    }
    if (!(stats_p->field_mask & INGOT_LOADER_STORE_STATS_FIELD_COUNTS)) {
        return INGOT_OK;
    }
    uint64_t samples = atomic_load(&l->epoch_reads[epoch - l->first_epoch]);
    ingot_loader_store_stats_t r = {
        .field_mask = stats_p->field_mask,
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
        .get_p99_ns = o.latency_p99_ns,
        .samples = samples,
        .gets_per_sample = samples ? (double)o.requests / (double)samples : 0};
    *stats_p = r;
    return INGOT_OK;
}

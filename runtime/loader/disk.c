/*
 * The loader and the node's disk tier (source/disk/, INGOT_DISK_CACHE_BYTES): created over the
 * storage source, its clock moved by the planner, its counters in the loader's stats and its
 * report. The tier sits between the peer cache and storage (the last source of the chain).
 */
#include "runtime/loader/loader_impl.h"
#include "runtime/context_impl.h"
#include "source/disk/disk.h"
#include "base/log.h"
#include <stdio.h>

ingot_status_t ingot_loader_disk_create(ingot_loader_h l)
{
    ingot_transport_t *t = NULL;
    ingot_status_t st = l->world > 1 ? ingot_ctx_transport(l->ctx, &t) : INGOT_OK; /* agreed */
    if (st != INGOT_OK) {
        return st;
    }
    ingot_disk_params_t p = {.comm = l->ctx->comm,
                             .node = &l->ctx->topo->node,
                             .transport = t,
                             .timeout_ns = l->timeout_ns,
                             .manifest = l->manifest,
                             .order = l->order,
                             .start_step = l->start_step,
                             .total_steps = l->total_steps,
                             .steps_per_epoch = l->steps_per_epoch,
                             .global_batch = l->params.global_batch,
                             .depth = l->depth,
                             .nreqs = l->nreaders * LOADER_REQS_PER_READER,
                             .direct = l->direct_io};
    ingot_source_t **storage = &l->sources[l->nsources - 1];
    ingot_source_t *below = *storage;
    *storage = NULL; /* the tier owns it from the call on, also when it fails */
    st = ingot_disk_create(&p, below, storage);
    if (st != INGOT_OK) {
        l->nsources--;   /* storage went with the tier */
        l->store = NULL; /* the object store too, when it was storage */
        return st;
    }
    l->disk = ingot_disk_of(*storage);
    return INGOT_OK;
}

void ingot_loader_disk_advance(ingot_loader_h l, uint64_t step)
{
    if (l->disk != NULL) {
        ingot_disk_advance(l->disk, step);
    }
}

void ingot_loader_disk_stats(ingot_loader_h l, ingot_loader_stats_t *s)
{
    if (l->disk == NULL) {
        return;
    }
    ingot_disk_stats_t d;
    ingot_disk_stats(l->disk, &d);
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
}

ingot_status_t ingot_loader_disk_report(ingot_loader_h l, char *buf, size_t len)
{
    if (l == NULL || buf == NULL || len == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_loader_disk_report: NULL argument");
    }
    if (l->disk == NULL) {
        snprintf(buf, len, "no disk tier (INGOT_DISK_CACHE_BYTES=0)\n");
        return INGOT_ERR_NOT_FOUND;
    }
    ingot_disk_report(l->disk, buf, len);
    return INGOT_OK;
}

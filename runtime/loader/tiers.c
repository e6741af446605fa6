/*
 * The loader and its tiers (source/tiers.h): the job plan made from the loader's facts (the
 * order, its steps, its requests and memory, where batches go), the chain created from it
 * (collective), and where fetched bytes land when a tier reads into GPU memory.
 */
#include "runtime/loader/loader_impl.h"
#include "runtime/context_impl.h"
#include "shard/manifest.h"
#include "base/cuda.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include <stdlib.h>

/* The context's transport, made at the first tier that needs it (collective, agreed). */
static ingot_status_t tiers_transport(void *arg, ingot_transport_t **t_p)
{
    return ingot_ctx_transport(arg, t_p);
}

/* Why a GPU loader still needs fetched bytes in host memory, or NULL: they may land in the
 * device slot (samples delivered as stored, nothing looks at them on the host). */
static const char *tiers_host_only(ingot_loader_h l)
{
    if (l->params.verify != INGOT_VERIFY_OFF) {
        return "fetched bytes are hash-checked on the host (INGOT_VERIFY=off would let them "
               "land in GPU memory)";
    }
    if (l->params.transform != NULL) {
        return "a transform runs on the host";
    }
    return NULL;
}

/* Where reads land (a tier may register them): staging, the gap scratch, the slots. */
static ingot_tier_dest_t *tiers_dests(ingot_loader_h l, uint32_t *n_p)
{
    ingot_tier_dest_t *dests = ingot_calloc(l->depth + 2, sizeof(*dests), "loader destinations");
    uint32_t n = 0;
    if (dests != NULL) {
        dests[n++] = (ingot_tier_dest_t){l->staging_mem.ptr,
                                         (size_t)l->nstaging * l->staging_bytes};
        dests[n++] = (ingot_tier_dest_t){l->gap_scratch, ingot_loader_gap_bytes(l)};
        for (uint32_t i = 0; i < l->depth; i++) {
            dests[n++] = (ingot_tier_dest_t){l->slots[i].host.ptr, l->slot_bytes};
        }
    }
    *n_p = n;
    return dests;
}

/* A tier reads into GPU memory: the device gap sink and the iovec memory kinds (or host memory
 * after all, warned, when they cannot be had). Not collective: a rank that cannot keeps host
 * memory. */
static void tiers_fetch_device(ingot_loader_h l)
{
    ingot_source_mem_t *mem = ingot_calloc(l->iov_cap, sizeof(*mem), "device iovec kinds");
    ingot_status_t st = mem ? ingot_cuda_malloc_on(l->device, &l->gap_device,
                                                   ingot_loader_gap_bytes(l),
                                                   "loader device gap scratch")
                            : INGOT_ERR_NO_MEMORY;
    if (st != INGOT_OK) {
        free(mem);
        ingot_warn("loader: fetched bytes stay in host memory (%s)", ingot_status_string(st));
        return;
    }
    for (uint32_t i = 0; i < l->iov_cap; i++) {
        mem[i] = INGOT_SOURCE_MEM_DEVICE;
    }
    l->mem_dev = mem;
    l->fetch_device = l->device;
}

/* The job plan of this loader. */
static void tiers_plan(ingot_loader_h l, ingot_tier_plan_t *p)
{
    ingot_ctx_h ctx = l->ctx;
    *p = (ingot_tier_plan_t){.comm = ctx->comm,
                             .node = &ctx->topo->node,
                             .node_pus = ctx->topo->topo != NULL ? ctx->topo->topo->npus : 0,
                             .transport = tiers_transport,
                             .transport_arg = ctx,
                             .timeout_ns = l->timeout_ns,
                             .peer_timeout_ns = ctx->cfg.transport->peer_timeout,
                             .peer_abort = ctx->cfg.transport->peer_failure ==
                                           INGOT_PEER_FAILURE_ABORT,
                             .peer_lost = &ctx->peer_lost,
                             .cfg = &ctx->cfg.tiers,
                             .location = ingot_manifest_location(l->manifest),
                             .manifest = l->manifest,
                             .order = l->order,
                             .order_mode = l->params.order_mode,
                             .order_window = l->params.order_window,
                             .order_nodes = l->order_nodes,
                             .start_step = l->start_step,
                             .total_steps = l->total_steps,
                             .steps_per_epoch = l->steps_per_epoch,
                             .global_batch = l->params.global_batch,
                             .first_epoch = l->first_epoch,
                             .nepochs = l->nepochs,
                             .slice = l->slice,
                             .slice_of = l->slice_of,
                             .depth = l->depth,
                             .nreqs = l->nreaders * LOADER_REQS_PER_READER,
                             .iov_max = l->iov_cap,
                             .stored_max = l->stored_max,
                             .direct_io = l->direct_io,
                             .numa = l->numa_node,
                             .cuda_device = ctx->topo->placement.cuda_device,
                             .gpu_slots = l->device != INGOT_DEVICE_HOST ? l->device : -1,
                             .gpu_host_only = tiers_host_only(l)};
}

ingot_status_t ingot_loader_tiers(ingot_loader_h l, ingot_source_t *const *front, uint32_t nfront)
{
    ingot_tier_plan_t plan;
    tiers_plan(l, &plan);
    ingot_tier_dest_t *dests = tiers_dests(l, &plan.ndests);
    if (dests == NULL) { /* the others' chains fail in the same agreement */
        for (uint32_t i = 0; i < nfront; i++) {
            ingot_source_destroy(front[i]);
        }
        return ingot_mpi_agree(&plan.comm, INGOT_ERR_NO_MEMORY, "tiers");
    }
    plan.dests = dests;
    ingot_status_t st = ingot_tier_chain_create(&plan, front, nfront, &l->tiers); /* collective */
    free(dests); /* a tier that registers them made its own copy */
    if (st != INGOT_OK) {
        return st;
    }
    l->nsources = ingot_tier_chain_sources(l->tiers, &l->sources);
    if (ingot_tier_chain_fetch_device(l->tiers) >= 0) {
        tiers_fetch_device(l);
    }
    return INGOT_OK;
}

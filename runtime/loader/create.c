/*
 * The loader's creation and end, on the trainer's thread: parameters and their defaults, the
 * order and the resume cursor, sizing and memory (memory.c), the tiers (tiers.c), the threads;
 * destroy.
 */
#include "runtime/loader/loader_impl.h"
#include "runtime/context_impl.h"
#include "runtime/node_manifest.h"
#include "base/cuda.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mix.h"
#include "base/param.h"
#include "base/status.h"
#include "base/thread.h"
#include "base/time.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>

#define LOADER_DEPTH_DEFAULT 4

long ingot_loader_minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

/* Where batches go: the placement's GPU when one is usable (else host memory), host memory, or
 * a CUDA device this process must be able to use (checked before anything is allocated). */
static ingot_status_t loader_device(ingot_loader_h l, int device)
{
    l->device = device;
    if (device == INGOT_DEVICE_PLACEMENT) {
        int cuda = l->ctx->topo->placement.cuda_device;
        l->device = (cuda >= 0 && ingot_cuda_usable()) ? cuda : INGOT_DEVICE_HOST;
        return INGOT_OK;
    }
    if (device == INGOT_DEVICE_HOST) {
        return INGOT_OK;
    }
    if (device < 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "ingot_loader_create: device %d: expected a CUDA device index, "
                          "INGOT_DEVICE_HOST (-1) or INGOT_DEVICE_PLACEMENT (-2)",
                          device);
    }
    return ingot_loader_gpu_device_check(device);
}

/* The caller's fields where it set them, the defaults elsewhere. */
#define LOADER_PARAM(_name, _bit, _default) \
    INGOT_PARAM_VALUE(p, _name, INGOT_LOADER_PARAM_FIELD_##_bit, _default)

static void loader_params_defaults(ingot_loader_params_t *q, const ingot_loader_params_t *p,
                                   const ingot_ctx_config_t *cfg)
{
    q->seed = LOADER_PARAM(seed, SEED, 0);
    q->epochs = LOADER_PARAM(epochs, EPOCHS, 1);
    q->depth = LOADER_PARAM(depth, DEPTH, LOADER_DEPTH_DEFAULT);
    q->memory_budget = LOADER_PARAM(memory_budget, MEMORY, cfg->loader->loader_memory);
    q->device = LOADER_PARAM(device, DEVICE, INGOT_DEVICE_PLACEMENT);
    q->transform = LOADER_PARAM(transform, TRANSFORM, NULL);
    q->verify = LOADER_PARAM(verify, VERIFY, cfg->loader->verify);
    q->skip_budget = LOADER_PARAM(skip_budget, VERIFY, (uint64_t)cfg->loader->skip_budget);
    q->cursor = LOADER_PARAM(cursor, CURSOR, NULL);
    q->tail = LOADER_PARAM(tail, TAIL, INGOT_ORDER_TAIL_DROP);
    q->order_mode = LOADER_PARAM(order_mode, ORDER, cfg->loader->order.mode);
    q->order_window = LOADER_PARAM(order_window, ORDER, cfg->loader->order.window);
    q->order_nodes = LOADER_PARAM(order_nodes, ORDER_NODES, cfg->loader->order.nodes);
    q->readers = LOADER_PARAM(readers, THREADS, 0);
    q->workers = LOADER_PARAM(workers, THREADS, 0);
}

/* Defaults for unset fields, and the checks no MPI call is needed for. */
static ingot_status_t loader_params(ingot_loader_h l, const ingot_loader_params_t *p,
                                    const ingot_ctx_config_t *cfg)
{
    l->params = *p;
    ingot_loader_params_t *q = &l->params;
    if (!(p->field_mask & INGOT_LOADER_PARAM_FIELD_MANIFEST) || p->manifest_path == NULL ||
        !(p->field_mask & INGOT_LOADER_PARAM_FIELD_BATCH) || p->global_batch == 0) {
        ingot_error("ingot_loader_create: manifest_path and a non-zero global_batch are required");
        return INGOT_ERR_INVALID_PARAM;
    }
    if (p->global_batch % (uint64_t)l->world != 0) {
        ingot_error("ingot_loader_create: world size %d does not divide global batch %" PRIu64,
                    l->world, p->global_batch);
        return INGOT_ERR_INVALID_PARAM;
    }
    loader_params_defaults(q, p, cfg);
    if (q->epochs == 0 || q->depth < 2 || q->depth > 1024 ||
        (q->transform != NULL && q->sample_out_size == 0) || q->verify > INGOT_VERIFY_OFF) {
        ingot_error("ingot_loader_create: invalid parameters (epochs %" PRIu64 ", depth %u, "
                    "transform %s with sample_out_size %zu, verify %d): epochs >= 1, 2 <= depth "
                    "<= 1024, a transform needs sample_out_size > 0",
                    q->epochs, q->depth, q->transform ? "set" : "unset", q->sample_out_size,
                    (int)q->verify);
        return INGOT_ERR_INVALID_PARAM;
    }
    l->depth = q->depth;
    ingot_status_t st = loader_device(l, q->device);
    if (st != INGOT_OK) {
        return st;
    }
    l->numa_node = (cfg->topo->bind == INGOT_TOPO_BIND_CPUMEM)
                       ? ingot_topo_plan_numa_os_index(l->ctx->topo->topo, l->ctx->topo->plan,
                                                       l->ctx->topo->node.local_rank)
                       : -1;
    l->bind_threads = (cfg->topo->bind != INGOT_TOPO_BIND_NONE);
    l->slice = (uint32_t)(q->global_batch / (uint64_t)l->world);
    l->timeout_ns = cfg->base->timeout_ns;
    l->pacing_ns = cfg->loader->ingest_pacing;
    l->hash_piece = cfg->loader->hash_piece;
    l->coalesce_gap = cfg->loader->coalesce_gap;
    l->direct_io = cfg->loader->direct_io;
    return INGOT_OK;
}


ingot_status_t ingot_loader_order_make(ingot_manifest_h manifest, const ingot_manifest_info_t *mi,
                                       uint64_t global_batch, uint64_t seed,
                                       ingot_order_tail_t tail, ingot_order_mode_t mode,
                                       uint32_t window, uint32_t nodes, ingot_order_h *order_p)
{
    ingot_order_params_t op = {
        .field_mask = INGOT_ORDER_PARAM_FIELD_SAMPLES | INGOT_ORDER_PARAM_FIELD_BATCH |
                      INGOT_ORDER_PARAM_FIELD_SEED | INGOT_ORDER_PARAM_FIELD_TAIL,
        .sample_count = mi->sample_count,
        .global_batch = global_batch,
        .seed = seed,
        .tail = tail};
    uint64_t *per_shard = NULL;
    if (mode == INGOT_ORDER_LOCALITY) {
        per_shard = ingot_calloc(mi->shard_count, sizeof(*per_shard), "shard sample counts");
        if (per_shard == NULL) {
            return INGOT_ERR_NO_MEMORY;
        }
        for (uint32_t s = 0; s < mi->shard_count; s++) {
            ingot_shard_info_t si;
            ingot_manifest_shard_get(manifest, s, &si);
            per_shard[s] = si.sample_count;
        }
        op.field_mask |= INGOT_ORDER_PARAM_FIELD_MODE;
        op.mode = INGOT_ORDER_LOCALITY;
        op.shard_samples = per_shard;
        op.shard_count = (uint32_t)mi->shard_count;
        op.window = window;
        op.field_mask |= INGOT_ORDER_PARAM_FIELD_NODES;
        op.nodes = nodes;
    }
    ingot_status_t st = ingot_order_create(&op, order_p);
    free(per_shard);
    return st;
}

static ingot_status_t loader_order(ingot_loader_h l, const ingot_manifest_info_t *mi)
{
    ingot_status_t st = ingot_loader_order_make(l->manifest, mi, l->params.global_batch,
                                                l->params.seed, l->params.tail,
                                                l->params.order_mode, l->params.order_window,
                                                l->order_nodes, &l->order);
    if (st != INGOT_OK) {
        return st;
    }
    ingot_loader_order_check(l);
    l->steps_per_epoch = ingot_order_steps(l->order);
    if (l->steps_per_epoch == 0) {
        ingot_error("ingot_loader_create: %" PRIu64 " samples make no full global batch of %" PRIu64
                    " (tail policy drop)",
                    mi->sample_count, l->params.global_batch);
        return INGOT_ERR_INVALID_PARAM;
    }
    return INGOT_OK;
}

/* Resume point from a cursor (checked against this manifest, seed and world size). */
static ingot_status_t loader_resume(ingot_loader_h l, const ingot_manifest_info_t *mi)
{
    const ingot_cursor_t *c = l->params.cursor;
    uint64_t end = l->params.epochs * l->steps_per_epoch;
    l->start_step = 0;
    if (c != NULL) {
        if (c->manifest_digest != mi->digest || c->seed != l->params.seed ||
            c->global_batch != l->params.global_batch) {
            ingot_error("resume cursor does not match this loader: manifest digest %016" PRIx64
                        " vs %016" PRIx64 ", seed %" PRIu64 " vs %" PRIu64 ", global batch %" PRIu64
                        " vs %" PRIu64,
                        c->manifest_digest, mi->digest, c->seed, l->params.seed, c->global_batch,
                        l->params.global_batch);
            return INGOT_ERR_MISMATCH;
        }
        uint32_t window = l->params.order_mode == INGOT_ORDER_LOCALITY ? l->params.order_window : 0;
        uint32_t nodes = c->order_window ? (c->order_nodes ? c->order_nodes : 1) : 0;
        if (c->order_window != window || nodes != l->order_nodes) {
            char saved[48], mine[48];
            ingot_error("resume cursor was cut with INGOT_ORDER=%s, this loader uses "
                        "INGOT_ORDER=%s: positions would name other samples (set INGOT_ORDER as "
                        "the saved job did)",
                        ingot_loader_order_text(c->order_window, nodes, saved, sizeof(saved)),
                        ingot_loader_order_text(window, l->order_nodes, mine, sizeof(mine)));
            return INGOT_ERR_MISMATCH;
        }
        if (c->consumed % c->global_batch != 0 ||
            c->consumed / c->global_batch > l->steps_per_epoch) {
            ingot_error("resume cursor: consumed %" PRIu64 " is not a whole number of global "
                        "batches within the epoch (%" PRIu64 " steps of %" PRIu64 ")",
                        c->consumed, l->steps_per_epoch, c->global_batch);
            return INGOT_ERR_FORMAT;
        }
        l->start_step = c->epoch * l->steps_per_epoch + c->consumed / c->global_batch;
        for (uint64_t i = 0; i < c->skipped_count && c->consumed > 0; i++) {
            if (l->skipped_len < l->skipped_cap) {
                l->skipped_ids[l->skipped_len++] = c->skipped[i];
            }
        }
    }
    l->total_steps = (l->start_step < end) ? end - l->start_step : 0;
    return INGOT_OK;
}


/* The loader's threads, each named (the planner; readers and workers numbered). */
static ingot_status_t loader_start(ingot_loader_h l)
{
    char name[16];
    INGOT_CHECK(ingot_thread_start(&l->planner, "ingot-plan", ingot_loader_planner_main, l, 0));
    l->planner_started = 1;
    for (uint32_t i = 0; i < l->nreaders + l->nworkers; i++) {
        int reader = i < l->nreaders;
        void *arg = reader ? (void *)&l->rctx[i] : (void *)&l->wctx[i - l->nreaders];
        snprintf(name, sizeof(name), "ingot-%s%u", reader ? "read" : "work",
                 (reader ? i : i - l->nreaders) & 0xff);
        INGOT_CHECK(ingot_thread_start(&l->threads[i], name,
                                       reader ? ingot_loader_reader_main : ingot_loader_worker_main,
                                       arg, 0));
        l->threads_started++;
    }
    return INGOT_OK;
}

/* Every rank's threads started: hand the planner its slots. No rank reads a byte (a GET, a
 * peer's window) before every rank agreed that its loader exists, so a create that fails or
 * stops on one rank costs the others nothing from below. */
static void loader_go(ingot_loader_h l)
{
    for (uintptr_t i = 0; i < l->depth; i++) {
        ingot_spsc_try_push(&l->free_slots, (void *)i);
    }
}

static void loader_free(ingot_loader_h l)
{
    if (l == NULL) {
        return;
    }
    ingot_abort_raise(&l->abort);
    ingot_spsc_wake_all(&l->free_slots);
    ingot_mpmc_wake_all(&l->read_q);
    ingot_mpmc_wake_all(&l->work_q);
    ingot_mpmc_wake_all(&l->staging_q);
    if (l->planner_started) {
        pthread_join(l->planner, NULL);
    }
    for (uint32_t i = 0; i < l->threads_started; i++) {
        pthread_join(l->threads[i], NULL);
    }
    /* The tiers first: each fails what it still holds, so quarantined buffers and reads landing
     * in the loader's memory come back before that memory is freed. */
    ingot_tier_chain_stop(l->tiers);
    for (uint32_t i = 0; i < l->nfront; i++) {
        ingot_source_destroy(l->front[i]); /* never handed to a chain */
    }
    ingot_loader_gpu_cleanup(l);
    ingot_loader_free_memory(l);
    ingot_tier_chain_destroy(l->tiers); /* collective: no peer reads a tier of this rank */
    ingot_order_destroy(l->order);
    ingot_node_manifest_close(l->ctx, l->manifest, l->manifest_window);
    free(l->slots);
    free(l->slice_ids);
    free(l->wctx);
    free(l->threads);
    free(l->gap_scratch);
    ingot_cuda_free(l->gap_device);
    free((void *)l->mem_dev);
    free(l->skipped_ids);
    free(l->slice_of);
    free(l->plan_loc);
    free(l->plan_located);
    free(l->epoch_bytes);
    free(l->epoch_reads);
    free(l);
}

/* Everything after the shared manifest is open; local to this rank. */
static ingot_status_t loader_setup(ingot_loader_h l, const ingot_ctx_config_t *cfg)
{
    const ingot_manifest_info_t *mi = &l->minfo;
    ingot_status_t st = ingot_manifest_query(l->manifest, &l->minfo); /* once; kept */
    if (st != INGOT_OK || (st = loader_order(l, mi)) != INGOT_OK) {
        return st;
    }
    const ingot_cursor_t *c = l->params.cursor;
    l->skipped_cap = l->params.skip_budget + l->slice + (c ? c->skipped_count : 0);
    l->skipped_ids = ingot_calloc(l->skipped_cap, sizeof(uint64_t), "skipped ids");
    if (l->skipped_ids == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    if ((st = loader_resume(l, mi)) != INGOT_OK || (st = ingot_loader_maxima(l)) ||
        (st = ingot_loader_size(l, cfg)) || (st = ingot_loader_alloc(l, cfg))) {
        return st;
    }
    if (l->device != INGOT_DEVICE_HOST && (st = ingot_loader_gpu_init(l)) != INGOT_OK) {
        return st;
    }
    return INGOT_OK;
}

/* The loader object with its parameters checked, holding the caller's front sources until the
 * tier chain takes them. */
static ingot_status_t loader_new(ingot_ctx_h ctx, const ingot_loader_params_t *params,
                                 ingot_source_t *const *front, uint32_t nfront, ingot_loader_h *l_p)
{
    ingot_loader_h l = ingot_calloc(1, sizeof(*l), "loader");
    ingot_status_t st = (l == NULL) ? INGOT_ERR_NO_MEMORY : INGOT_OK;
    if (st == INGOT_OK && nfront >= INGOT_TIER_SOURCES_MAX) {
        st = ingot_fail(INGOT_ERR_INVALID_PARAM,
                        "ingot_loader_create: %u byte sources, at most %d before storage", nfront,
                        INGOT_TIER_SOURCES_MAX - 1);
    }
    for (uint32_t i = 0; i < nfront; i++) {
        if (st == INGOT_OK) {
            l->front[l->nfront++] = front[i];
        } else {
            ingot_source_destroy(front[i]); /* owned from the call on */
        }
    }
    if (l != NULL) {
        l->ctx = ctx;
        l->rank = ctx->rank;
        l->world = ctx->size;
        l->fetch_device = -1;
        st = st == INGOT_OK ? loader_params(l, params, &ctx->cfg) : st;
        st = st == INGOT_OK ? ingot_loader_deal_params(l) : st;
    }
    if (st != INGOT_OK && l != NULL) {
        loader_free(l);
        l = NULL;
    }
    *l_p = l;
    return st;
}

static ingot_status_t loader_create(ingot_ctx_h ctx, const ingot_loader_params_t *params,
                                    ingot_source_t *const *front, uint32_t nfront,
                                    ingot_loader_h *loader_p)
{
    ingot_loader_h l;
    ingot_status_t st = loader_new(ctx, params, front, nfront, &l);
    if ((st = ingot_mpi_agree(&ctx->comm, st, "ingot_loader_create: parameters")) != INGOT_OK ||
        (st = ingot_loader_deal_slices(l)) != INGOT_OK) { /* collective, agreed */
        loader_free(l);                                   /* accepts NULL */
        return st;
    }
    /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): l != NULL, or agree failed */
    st = ingot_node_manifest_open(ctx, l->params.manifest_path, &l->manifest, &l->manifest_window);
    if (st == INGOT_OK) {
        st = ingot_mpi_agree(&ctx->comm, loader_setup(l, &ctx->cfg), "ingot_loader_create");
    }
    if (st == INGOT_OK) {
        uint32_t n = l->nfront;
        l->nfront = 0;                           /* the chain's from here on, also when it fails */
        st = ingot_loader_tiers(l, l->front, n); /* collective, agreed */
    }
    if (st == INGOT_OK) {
        st = ingot_mpi_agree(&ctx->comm, loader_start(l), "ingot_loader_create: threads");
    }
    if (st != INGOT_OK) {
        loader_free(l);
        return st;
    }
    l->faults_at_create = ingot_loader_minor_faults();
    loader_go(l);
    l->token_key = ingot_mix64(ingot_time_ns() ^ (uint64_t)(uintptr_t)l); /* per loader */
    char d[INGOT_SOURCE_DESCRIBE_MAX];
    ingot_info("loader: %" PRIu64 " steps of %u samples per rank, depth %u, %u readers, %u "
               "workers, storage %s, %zu bytes per slot, device %d",
               l->total_steps, l->slice, l->depth, l->nreaders, l->nworkers,
               ingot_tier_chain_describe(l->tiers, INGOT_SOURCE_ALL, d, sizeof(d)), l->slot_bytes,
               l->device);
    *loader_p = l;
    return INGOT_OK;
}

ingot_status_t ingot_loader_create_with_sources(ingot_ctx_h ctx,
                                                const ingot_loader_params_t *params,
                                                ingot_source_t *const *front, uint32_t nfront,
                                                ingot_loader_h *loader_p)
{
    ingot_mpi_hold_begin(&ctx->comm); /* a fault every rank finds (the manifest) is written once */
    ingot_status_t st = loader_create(ctx, params, front, nfront, loader_p);
    ingot_mpi_hold_end();
    return st;
}

ingot_status_t ingot_loader_create(ingot_ctx_h ctx, const ingot_loader_params_t *params,
                                   ingot_loader_h *loader_p)
{
    if (ctx == NULL || params == NULL || loader_p == NULL) {
        ingot_error("ingot_loader_create: NULL argument");
        return INGOT_ERR_INVALID_PARAM;
    }
    return ingot_loader_create_with_sources(ctx, params, NULL, 0, loader_p);
}

void ingot_loader_destroy(ingot_loader_h l)
{
    if (l == NULL) {
        return;
    }
    if (l->held > 0) {
        ingot_warn("ingot_loader_destroy: %u batch(es) still held; their memory is freed now",
                   l->held);
    }
    if (l->pacing_ns > 0) {
        ingot_info("loader: %" PRIu64 " storage requests paced by INGOT_INGEST_PACING (%" PRIu64
                   " ns each) while gradient reductions ran",
                   atomic_load(&l->paced), l->pacing_ns);
    }
    loader_free(l);
}

/*
 * The loader's public calls: create (sizing, memory, threads), next/release (the trainer's side
 * of the slot ring, with the stall measured), save (the resume cursor), stats, destroy.
 */
#include "runtime/loader_impl.h"
#include "collectives/engine.h"
#include "collectives/config.h"
#include "runtime/context_impl.h"
#include "shard/manifest.h"
#include "runtime/node_manifest.h"
#include "source/cache/cache.h"
#include "source/emulate.h"
#include "source/posix.h"
#include "base/cuda.h"
#include "base/errors.h"
#include "base/field_mask.h"
#include "base/log.h"
#include "base/param.h"
#include "base/mix.h"
#include "base/status.h"
#include "base/time.h"
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define LOADER_DEPTH_DEFAULT 4
#define LOADER_READERS_LOCAL 2 /* page cache / local NVMe: a couple of threads saturate it */
/* A remote store hides its per-request latency only behind many requests in flight (32 x 5 ms
 * requests per 10 ms step need 16+; measured: 8 readers AU 0.48, 32 readers AU 0.998). */
#define LOADER_READERS_REMOTE  32
#define LOADER_TRACE_EVENTS    (1u << 20)
#define LOADER_GAP_SCRATCH_MIN (64u << 10)


static long minor_faults_now(void)
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
    q->order_mode = LOADER_PARAM(order_mode, ORDER, INGOT_ORDER_FULL);
    q->order_window = LOADER_PARAM(order_window, ORDER, 1);
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
    const ingot_collectives_config_t *coll_cfg = NULL;
    l->pacing_ns = (ingot_collectives_config(&coll_cfg) == INGOT_OK) ? coll_cfg->ingest_pacing : 0;
    l->coalesce_gap = cfg->loader->coalesce_gap;
    l->direct_io = cfg->loader->direct_io;
    return INGOT_OK;
}

static uint32_t cpuset_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return 1;
    }
    int n = CPU_COUNT(&set);
    return n > 0 ? (uint32_t)n : 1;
}

/* Largest sample (delivered and stored bytes) and widest sample, which size every buffer: from
 * the manifest's header (version 2, O(1)), or one pass over its sample table (version 1). */
static ingot_status_t loader_maxima(ingot_loader_h l)
{
    ingot_manifest_maxima_t max;
    INGOT_CHECK(ingot_manifest_maxima_get(l->manifest, &max));
    l->sample_bytes_max = max.raw_bytes;
    l->stored_max = max.stored_bytes;
    l->fields_max = max.fields;
    return INGOT_OK;
}

static ingot_status_t loader_order(ingot_loader_h l, const ingot_manifest_info_t *mi)
{
    ingot_order_params_t op = {
        .field_mask = INGOT_ORDER_PARAM_FIELD_SAMPLES | INGOT_ORDER_PARAM_FIELD_BATCH |
                      INGOT_ORDER_PARAM_FIELD_SEED | INGOT_ORDER_PARAM_FIELD_TAIL,
        .sample_count = mi->sample_count,
        .global_batch = l->params.global_batch,
        .seed = l->params.seed,
        .tail = l->params.tail};
    uint64_t *per_shard = NULL;
    if (l->params.order_mode == INGOT_ORDER_LOCALITY) {
        per_shard = ingot_calloc(mi->shard_count, sizeof(*per_shard), "shard sample counts");
        if (per_shard == NULL) {
            return INGOT_ERR_NO_MEMORY;
        }
        for (uint32_t s = 0; s < mi->shard_count; s++) {
            ingot_shard_info_t si;
            ingot_manifest_shard_get(l->manifest, s, &si);
            per_shard[s] = si.sample_count;
        }
        op.field_mask |= INGOT_ORDER_PARAM_FIELD_MODE;
        op.mode = INGOT_ORDER_LOCALITY;
        op.shard_samples = per_shard;
        op.shard_count = (uint32_t)mi->shard_count;
        op.window = l->params.order_window;
    }
    ingot_status_t st = ingot_order_create(&op, &l->order);
    free(per_shard);
    if (st != INGOT_OK) {
        return st;
    }
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

/* Host memory the loader needs, for the budget check (before anything big is allocated). */
static uint64_t loader_memory_need(ingot_loader_h l)
{
    uint64_t meta = (uint64_t)l->slice *
                    (sizeof(ingot_sample_info_t) + 5 * sizeof(uint64_t) + sizeof(int32_t) +
                     sizeof(char *) + 2 + sizeof(uint32_t) + sizeof(loader_run_t));
    meta += (uint64_t)l->slice * l->fields_max * sizeof(ingot_field_info_t);
    uint64_t worker = l->sample_bytes_max + (uint64_t)l->fields_max * sizeof(ingot_field_view_t);
    return (uint64_t)l->depth * (l->slot_bytes + meta) + (uint64_t)l->nstaging * l->staging_bytes +
           (uint64_t)l->nworkers * worker + l->gap_scratch_size;
}

static ingot_status_t loader_size(ingot_loader_h l, const ingot_ctx_config_t *cfg)
{
    const size_t page = 4096;
    size_t per_sample = l->params.transform ? l->params.sample_out_size : l->sample_bytes_max;
    l->slot_bytes = ((size_t)l->slice * per_sample + page - 1) & ~(page - 1);
    if (l->slot_bytes == 0) {
        l->slot_bytes = page;
    }
    size_t run = l->stored_max > LOADER_RUN_BYTES ? l->stored_max : LOADER_RUN_BYTES;
    l->staging_bytes = ((run + page - 1) & ~(page - 1)) + 2 * INGOT_SOURCE_DIRECT_ALIGN;
    l->nreaders = l->params.readers ? l->params.readers
                  : cfg->loader->readers
                      ? (uint32_t)cfg->loader->readers
                      : (strcmp(cfg->loader->storage_emulate, "none") != 0 ? LOADER_READERS_REMOTE
                                                                           : LOADER_READERS_LOCAL);
    l->nworkers = l->params.workers      ? l->params.workers
                  : cfg->loader->workers ? (uint32_t)cfg->loader->workers
                                         : cpuset_cores();
    l->nstaging = l->nreaders + l->nworkers + 1;
    l->gap_scratch_size = l->coalesce_gap > LOADER_GAP_SCRATCH_MIN ? l->coalesce_gap
                                                                   : LOADER_GAP_SCRATCH_MIN;
    l->iov_cap = LOADER_RUN_SAMPLES_MAX * (2 * l->fields_max + 1) + 16;
    uint64_t need = loader_memory_need(l);
    if (need > l->params.memory_budget) {
        ingot_error("ingot_loader_create: depth %u batches of %u samples need %" PRIu64 " bytes "
                    "of host memory (%zu per batch slot, %u staging buffers of %zu) but the "
                    "memory budget is %" PRIu64 " bytes (memory_budget or INGOT_LOADER_MEMORY)",
                    l->depth, l->slice, need, l->slot_bytes, l->nstaging, l->staging_bytes,
                    l->params.memory_budget);
        return INGOT_ERR_NO_RESOURCE;
    }
    return INGOT_OK;
}

static ingot_status_t slot_alloc(ingot_loader_h l, loader_slot_t *slot, uint32_t id)
{
    unsigned flags = INGOT_MEM_F_PREFAULT | INGOT_MEM_F_HUGEPAGE |
                     (l->device != INGOT_DEVICE_HOST ? INGOT_MEM_F_PINNED : 0);
    slot->id = id;
    atomic_init(&slot->state, SLOT_FREE);
    ingot_status_t st = ingot_mem_alloc(l->slot_bytes, flags, l->numa_node, "loader batch slot",
                                        &slot->host);
    if (st != INGOT_OK) {
        return st;
    }
    size_t n = l->slice;
    slot->info = ingot_calloc(n, sizeof(*slot->info), "slot samples");
    slot->fields = ingot_calloc(n * (l->fields_max ? l->fields_max : 1), sizeof(*slot->fields),
                                "slot field rows");
    slot->offsets = ingot_calloc(n, sizeof(uint64_t), "slot offsets");
    slot->lengths = ingot_calloc(n, sizeof(uint64_t), "slot lengths");
    slot->indices = ingot_calloc(n, sizeof(uint64_t), "slot indices");
    slot->skipped_ids = ingot_calloc(n, sizeof(uint64_t), "slot skipped ids");
    slot->labels = ingot_calloc(n, sizeof(int32_t), "slot labels");
    slot->keys = ingot_calloc(n, sizeof(char *), "slot keys");
    slot->skipped = ingot_calloc(n, 1, "slot skip flags");
    slot->scatter = ingot_calloc(n, 1, "slot scatter flags");
    slot->on_device = ingot_calloc(n, 1, "slot device flags");
    slot->sorted = ingot_calloc(n, sizeof(uint32_t), "slot order");
    slot->runs = ingot_calloc(n, sizeof(loader_run_t), "slot runs");
    if (!slot->info || !slot->fields || !slot->offsets || !slot->lengths || !slot->indices ||
        !slot->labels || !slot->keys || !slot->skipped || !slot->scatter || !slot->on_device ||
        !slot->sorted || !slot->runs || !slot->skipped_ids) {
        return INGOT_ERR_NO_MEMORY;
    }
    return INGOT_OK;
}

static void slot_free(loader_slot_t *slot)
{
    ingot_mem_free(&slot->host);
    free(slot->info);
    free(slot->fields);
    free(slot->offsets);
    free(slot->lengths);
    free(slot->indices);
    free(slot->skipped_ids);
    free(slot->labels);
    free(slot->keys);
    free(slot->skipped);
    free(slot->scatter);
    free(slot->on_device);
    free(slot->sorted);
    free(slot->runs);
}

/* Per reader: its completion event, iovecs and requests. */
static ingot_status_t loader_alloc_readers(ingot_loader_h l)
{
    for (uint32_t r = 0; r < l->nreaders; r++) {
        loader_reader_ctx_t *rd = &l->rctx[r];
        rd->loader = l;
        ingot_event_init(&rd->done);
        for (uint32_t i = 0; i < LOADER_REQS_PER_READER; i++) {
            rd->reqs[i].reader = rd;
        }
        rd->iov = ingot_calloc(l->iov_cap, sizeof(*rd->iov), "reader iovecs");
        rd->extents = ingot_calloc(LOADER_RUN_SAMPLES_MAX, sizeof(*rd->extents), "reader extents");
        if (rd->iov == NULL || rd->extents == NULL) {
            return INGOT_ERR_NO_MEMORY;
        }
    }
    return INGOT_OK;
}

/* Per worker: a zstd context over the loader's one dictionary, transform scratch. */
static ingot_status_t loader_alloc_workers(ingot_loader_h l)
{
    ingot_status_t st = ingot_shard_dict_load(l->manifest, &l->dict);
    for (uint32_t w = 0; st == INGOT_OK && w < l->nworkers; w++) {
        loader_worker_ctx_t *wc = &l->wctx[w];
        wc->loader = l;
        if ((st = ingot_shard_codec_init(&wc->codec, l->dict)) != INGOT_OK) {
            return st;
        }
        wc->codec_ready = 1;
        if (l->params.transform != NULL) {
            wc->scratch_size = l->sample_bytes_max ? l->sample_bytes_max : 1;
            wc->scratch = ingot_malloc(wc->scratch_size, "transform scratch");
            wc->views = ingot_calloc(l->fields_max ? l->fields_max : 1, sizeof(*wc->views),
                                     "transform views");
            if (wc->scratch == NULL || wc->views == NULL) {
                return INGOT_ERR_NO_MEMORY;
            }
        }
    }
    return st;
}

/* Storage, the last byte source: POSIX files, behind the emulated store when asked. */
static ingot_status_t loader_sources(ingot_loader_h l, const ingot_ctx_config_t *cfg)
{
    ingot_source_emulation_t emu;
    ingot_source_t *storage;
    char err[256];
    ingot_source_emulation_parse(cfg->loader->storage_emulate, &emu, err, sizeof(err));
    ingot_status_t st = ingot_source_posix_create(l->manifest, l->direct_io, &storage);
    if (st == INGOT_OK && ingot_source_emulation_active(&emu)) {
        st = ingot_source_emulate_create(&emu, storage, l->nreaders * LOADER_REQS_PER_READER,
                                         &storage);
    }
    if (st == INGOT_OK) {
        l->sources[l->nsources++] = storage;
    }
    return st;
}

static ingot_status_t loader_alloc(ingot_loader_h l, const ingot_ctx_config_t *cfg)
{
    ingot_status_t st;
    l->slots = ingot_calloc(l->depth, sizeof(*l->slots), "loader slots");
    l->slice_ids = ingot_calloc(l->slice, sizeof(uint64_t), "loader slice");
    l->wctx = ingot_calloc(l->nworkers, sizeof(*l->wctx), "loader workers");
    l->rctx = ingot_calloc(l->nreaders, sizeof(*l->rctx), "loader readers");
    l->threads = ingot_calloc(l->nreaders + l->nworkers, sizeof(pthread_t), "loader threads");
    l->gap_scratch = ingot_malloc(l->gap_scratch_size, "loader gap scratch");
    l->plan_home = ingot_calloc(l->slice, sizeof(*l->plan_home), "loader plan homes");
    l->plan_woff = ingot_calloc(l->slice, sizeof(*l->plan_woff), "loader plan offsets");
    l->first_epoch = l->start_step / l->steps_per_epoch;
    l->nepochs = l->params.epochs > l->first_epoch ? l->params.epochs - l->first_epoch : 0;
    l->epoch_bytes = ingot_calloc(l->nepochs * LOADER_FROM_COUNT + 1, sizeof(*l->epoch_bytes),
                                  "loader epoch counters");
    if (!l->slots || !l->slice_ids || !l->wctx || !l->rctx || !l->threads || !l->gap_scratch ||
        !l->plan_home || !l->plan_woff || !l->epoch_bytes) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (uint32_t i = 0; i < l->depth; i++) {
        if ((st = slot_alloc(l, &l->slots[i], i)) != INGOT_OK) {
            return st;
        }
    }
    if ((st = ingot_mem_alloc((size_t)l->nstaging * l->staging_bytes,
                              INGOT_MEM_F_PREFAULT | INGOT_MEM_F_HUGEPAGE, -1, "loader staging",
                              &l->staging_mem)) ||
        (st = ingot_spsc_init(&l->free_slots, l->depth)) ||
        (st = ingot_mpmc_init(&l->read_q, (size_t)l->depth * l->slice)) ||
        (st = ingot_mpmc_init(&l->work_q, (size_t)l->depth * l->slice)) ||
        (st = ingot_mpmc_init(&l->staging_q, l->nstaging))) {
        return st;
    }
    for (uint32_t i = 0; i < l->nstaging; i++) {
        ingot_mpmc_try_push(&l->staging_q,
                            (char *)l->staging_mem.ptr + (size_t)i * l->staging_bytes);
    }
    if ((st = loader_alloc_readers(l)) != INGOT_OK || (st = loader_alloc_workers(l)) != INGOT_OK ||
        (st = loader_sources(l, cfg)) != INGOT_OK) {
        return st;
    }
    if (strcmp(cfg->loader->trace, "none") != 0) {
        st = ingot_trace_create(cfg->loader->trace, LOADER_TRACE_EVENTS, l->rank, &l->trace);
    }
    return st;
}

static ingot_status_t loader_start(ingot_loader_h l)
{
    char name[16];
    if (pthread_create(&l->planner, NULL, ingot_loader_planner_main, l) != 0) {
        ingot_error("ingot_loader_create: cannot start the planner thread");
        return INGOT_ERR_NO_RESOURCE;
    }
    l->planner_started = 1;
    pthread_setname_np(l->planner, "ingot-plan");
    for (uint32_t i = 0; i < l->nreaders + l->nworkers; i++) {
        int reader = i < l->nreaders;
        void *arg = reader ? (void *)&l->rctx[i] : (void *)&l->wctx[i - l->nreaders];
        if (pthread_create(&l->threads[i], NULL,
                           reader ? ingot_loader_reader_main : ingot_loader_worker_main,
                           arg) != 0) {
            ingot_error("ingot_loader_create: cannot start thread %u of %u", i,
                        l->nreaders + l->nworkers);
            return INGOT_ERR_NO_RESOURCE;
        }
        l->threads_started++;
        snprintf(name, sizeof(name), "ingot-%s%u", reader ? "read" : "work",
                 (reader ? i : i - l->nreaders) & 0xff);
        pthread_setname_np(l->threads[i], name);
    }
    for (uintptr_t i = 0; i < l->depth; i++) {
        ingot_spsc_try_push(&l->free_slots, (void *)i);
    }
    return INGOT_OK;
}

/* What the readers and workers own: codecs, the dictionary, iovecs. */
static void loader_free_stages(ingot_loader_h l)
{
    for (uint32_t w = 0; l->wctx != NULL && w < l->nworkers; w++) {
        if (l->wctx[w].codec_ready) {
            ingot_shard_codec_release(&l->wctx[w].codec);
        }
        free(l->wctx[w].scratch);
        free(l->wctx[w].views);
    }
    for (uint32_t r = 0; l->rctx != NULL && r < l->nreaders; r++) {
        free(l->rctx[r].iov);
        free(l->rctx[r].extents);
    }
    ingot_shard_dict_destroy(l->dict);
    free(l->rctx);
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
    /* Sources first: each fails what it still holds, so quarantined buffers come back before
     * the memory they point into is freed; the cache's peer reads too. */
    ingot_cache_quiesce(l->cache);
    for (uint32_t i = 0; i < l->nsources; i++) {
        ingot_source_destroy(l->sources[i]);
    }
    ingot_loader_gpu_cleanup(l);
    for (uint32_t i = 0; l->slots != NULL && i < l->depth; i++) {
        slot_free(&l->slots[i]);
    }
    loader_free_stages(l);
    ingot_trace_destroy(l->trace);
    ingot_mem_free(&l->staging_mem);
    ingot_mpmc_cleanup(&l->staging_q);
    ingot_mpmc_cleanup(&l->work_q);
    ingot_mpmc_cleanup(&l->read_q);
    ingot_spsc_cleanup(&l->free_slots);
    ingot_cache_destroy(l->cache); /* collective: no peer reads this window any more */
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
    free(l->plan_home);
    free(l->plan_woff);
    free(l->epoch_bytes);
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
    if ((st = loader_resume(l, mi)) != INGOT_OK || (st = loader_maxima(l)) ||
        (st = loader_size(l, cfg)) || (st = loader_alloc(l, cfg))) {
        return st;
    }
    if (l->device != INGOT_DEVICE_HOST && (st = ingot_loader_gpu_init(l)) != INGOT_OK) {
        return st;
    }
    if (ingot_cache_enabled() && l->direct_io) {
        return ingot_fail(INGOT_ERR_UNSUPPORTED,
                          "ingot_loader_create: INGOT_CACHE_BYTES with INGOT_DIRECT_IO is not "
                          "supported (a sample read again from storage needs no alignment "
                          "slack); set one of them off");
    }
    return INGOT_OK;
}

/* Why a GPU loader still needs fetched bytes in host memory, or NULL: they may land in the
 * device slot (samples delivered as stored, nothing looks at them on the host). */
static const char *loader_host_only(ingot_loader_h l)
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

/* The cache chose GPU memory for fetched bytes: the device gap sink and the iovec memory kinds
 * (or host memory after all, warned, when they cannot be had). */
static void loader_fetch_device(ingot_loader_h l)
{
    ingot_source_mem_t *mem = ingot_calloc(l->iov_cap, sizeof(*mem), "device iovec kinds");
    ingot_status_t st = mem ? ingot_cuda_malloc_on(l->device, &l->gap_device, l->gap_scratch_size,
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

/* The peer cache (collective; every rank returns the same status). */
static ingot_status_t loader_cache(ingot_loader_h l)
{
    /* where reads land (INGOT_PEER_PROTOCOL=put registers them): staging, slots, gap scratch */
    ingot_cache_dest_t *dests = ingot_calloc(l->depth + 2, sizeof(*dests), "loader put dests");
    if (dests == NULL) {
        return ingot_mpi_agree(&l->ctx->comm, INGOT_ERR_NO_MEMORY, "cache: put destinations");
    }
    uint32_t nd = 0;
    dests[nd++] = (ingot_cache_dest_t){l->staging_mem.ptr, (size_t)l->nstaging * l->staging_bytes};
    dests[nd++] = (ingot_cache_dest_t){l->gap_scratch, l->gap_scratch_size};
    for (uint32_t i = 0; i < l->depth; i++) {
        dests[nd++] = (ingot_cache_dest_t){l->slots[i].host.ptr, l->slot_bytes};
    }
    ingot_transport_t *t = NULL;
    ingot_status_t st = ingot_ctx_transport(l->ctx, &t); /* collective, agreed */
    if (st != INGOT_OK) {
        free(dests);
        return st;
    }
    ingot_cache_params_t cp = {.comm = l->ctx->comm,
                               .node = &l->ctx->topo->node,
                               .transport = t,
                               .timeout_ns = l->ctx->cfg.base->timeout_ns,
                               .manifest = l->manifest,
                               .order = l->order,
                               .fill_epoch = l->start_step / l->steps_per_epoch,
                               .fill_step = l->start_step % l->steps_per_epoch,
                               .steps_per_epoch = l->steps_per_epoch,
                               .slice = l->slice,
                               .batch_stored = (uint64_t)l->slice * l->stored_max,
                               .numa = l->numa_node,
                               .cuda_device = l->ctx->topo->placement.cuda_device,
                               .nreqs = l->nreaders * LOADER_REQS_PER_READER,
                               .dests = dests,
                               .ndests = nd,
                               .gpu_slots = l->device != INGOT_DEVICE_HOST ? l->device : -1,
                               .gpu_host_only = loader_host_only(l),
                               .peer_lost = &l->ctx->peer_lost};
    st = ingot_cache_create(&cp, &l->cache);
    free(dests);
    if (st == INGOT_OK && ingot_cache_fetch_device(l->cache) >= 0) {
        loader_fetch_device(l); /* non-collective: a rank that cannot keeps host memory */
    }
    return st;
}

/* The loader object with its parameters checked, holding the caller's front sources. */
static ingot_status_t loader_new(ingot_ctx_h ctx, const ingot_loader_params_t *params,
                                 ingot_source_t *const *front, uint32_t nfront, ingot_loader_h *l_p)
{
    ingot_loader_h l = ingot_calloc(1, sizeof(*l), "loader");
    ingot_status_t st = (l == NULL) ? INGOT_ERR_NO_MEMORY : INGOT_OK;
    if (l != NULL) {
        l->ctx = ctx;
        l->rank = ctx->rank;
        l->world = ctx->size;
        l->fetch_device = -1;
        st = loader_params(l, params, &ctx->cfg);
    }
    if (st == INGOT_OK && nfront >= LOADER_SOURCES_MAX) {
        st = ingot_fail(INGOT_ERR_INVALID_PARAM,
                        "ingot_loader_create: %u byte sources, at most "
                        "%d before storage",
                        nfront, LOADER_SOURCES_MAX - 1);
    }
    for (uint32_t i = 0; l != NULL && i < nfront && st == INGOT_OK; i++) {
        l->sources[l->nsources++] = front[i];
    }
    if (st != INGOT_OK) {
        for (uint32_t i = (l != NULL) ? l->nsources : 0; i < nfront; i++) {
            ingot_source_destroy(front[i]); /* owned from the call on */
        }
        for (uint32_t i = 0; l != NULL && i < l->nsources; i++) {
            ingot_source_destroy(l->sources[i]);
        }
        free(l);
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
    if ((st = ingot_mpi_agree(&ctx->comm, st, "ingot_loader_create: parameters")) != INGOT_OK) {
        loader_free(l); /* accepts NULL */
        return st;
    }
    /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): l != NULL, or agree failed */
    st = ingot_node_manifest_open(ctx, l->params.manifest_path, &l->manifest, &l->manifest_window);
    if (st == INGOT_OK) {
        st = ingot_mpi_agree(&ctx->comm, loader_setup(l, &ctx->cfg), "ingot_loader_create");
    }
    if (st == INGOT_OK && ingot_cache_enabled()) {
        st = loader_cache(l); /* collective, agreed */
    }
    if (st == INGOT_OK) {
        st = ingot_mpi_agree(&ctx->comm, loader_start(l), "ingot_loader_create: threads");
    }
    if (st != INGOT_OK) {
        loader_free(l);
        return st;
    }
    l->faults_at_create = minor_faults_now();
    l->token_key = ingot_mix64(ingot_time_ns() ^ (uint64_t)(uintptr_t)l); /* per loader */
    char d[INGOT_SOURCE_DESCRIBE_MAX];
    ingot_info("loader: %" PRIu64 " steps of %u samples per rank, depth %u, %u readers, %u "
               "workers, storage %s, %zu bytes per slot, device %d",
               l->total_steps, l->slice, l->depth, l->nreaders, l->nworkers,
               ingot_source_describe(l->sources[l->nsources - 1], INGOT_SOURCE_ALL, d, sizeof(d)),
               l->slot_bytes, l->device);
    *loader_p = l;
    return INGOT_OK;
}

ingot_status_t ingot_loader_create_sources(ingot_ctx_h ctx, const ingot_loader_params_t *params,
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
    return ingot_loader_create_sources(ctx, params, NULL, 0, loader_p);
}

typedef struct slot_wait {
    loader_slot_t *slot;
    uint64_t step;
} slot_wait_t;

static bool slot_settled(void *arg)
{
    slot_wait_t *w = arg;
    int state = atomic_load(&w->slot->state);
    return (state == SLOT_READY || state == SLOT_FAILED) && w->slot->step == w->step;
}

static void loader_account_skips(ingot_loader_h l, loader_slot_t *slot)
{
    uint32_t n = atomic_load(&slot->skipped_count);
    if (slot->epoch_step == 0) {
        l->skipped_len = 0; /* a new epoch: the cursor records this epoch's skips only */
        l->epoch_skipped = 0;
        ingot_info("loader: epoch %" PRIu64 " begins (its first batch is handed over)",
                   slot->epoch);
    }
    for (uint32_t i = 0; i < n && l->skipped_len < l->skipped_cap; i++) {
        l->skipped_ids[l->skipped_len++] = slot->skipped_ids[i];
    }
    l->epoch_skipped += n;
    if (l->epoch_skipped > l->params.skip_budget) {
        ingot_error("%" PRIu64 " corrupt samples skipped in epoch %" PRIu64 " on rank %d: more "
                    "than the skip budget of %" PRIu64 " (INGOT_SKIP_BUDGET)",
                    l->epoch_skipped, slot->epoch, l->rank, l->params.skip_budget);
        snprintf(l->failed_msg, sizeof(l->failed_msg), "%s", ingot_last_error());
        l->failed = INGOT_ERR_CORRUPT;
    }
}

/* A batch's token: a bijection of the step keyed per loader, so tokens are unique per step and
 * not valid across loaders (a guard against mistakes, not a secret). */
static uint64_t batch_token(const struct ingot_loader *l, uint64_t step)
{
    return ingot_mix64(l->token_key + step * INGOT_MIX_GOLDEN);
}

static void batch_fill(ingot_loader_h l, loader_slot_t *slot, ingot_batch_t *b)
{
    slot->token = batch_token(l, slot->step);
    *b = (ingot_batch_t){.step = slot->step,
                         .epoch = slot->epoch,
                         .epoch_step = slot->epoch_step,
                         .count = slot->count,
                         .device = l->device,
                         .data = (l->device == INGOT_DEVICE_HOST) ? slot->host.ptr : slot->device,
                         .bytes = slot->bytes,
                         .offsets = slot->offsets,
                         .lengths = slot->lengths,
                         .labels = slot->labels,
                         .indices = slot->indices,
                         .keys = slot->keys,
                         .ready_event = slot->event,
                         .token = slot->token};
}

ingot_status_t ingot_loader_next(ingot_loader_h l, ingot_batch_t *batch_p)
{
    if (l == NULL || batch_p == NULL) {
        return INGOT_ERR_INVALID_PARAM;
    }
    if (l->failed != INGOT_OK) {
        ingot_last_error_set(l->failed_msg);
        return l->failed;
    }
    for (int i = 0; i < l->ctx->ninline_colls; i++) { /* no progress thread: advance them here */
        ingot_collectives_progress(l->ctx->inline_colls[i]);
    }
    if (l->next_step >= l->total_steps) {
        return INGOT_END_OF_DATA;
    }
    if (l->held >= l->depth) {
        ingot_error("ingot_loader_next: all %u batch slots are held; release a batch first",
                    l->depth);
        return INGOT_ERR_NO_RESOURCE;
    }
    uint64_t t0 = ingot_time_ns();
    if (l->t_first == 0) {
        l->t_first = t0;
    }
    l->read_q_sum += (double)ingot_mpmc_size(&l->read_q);
    loader_slot_t *slot = &l->slots[l->next_step % l->depth];
    slot_wait_t w = {.slot = slot, .step = l->next_step};
    l->ready_sum += slot_settled(&w) ? 1.0 : 0.0;
    ingot_status_t st = ingot_event_wait_until(&l->ready, slot_settled, &w, t0 + l->timeout_ns,
                                               &l->abort);
    uint64_t t1 = ingot_time_ns();
    if (st == INGOT_ERR_TIMED_OUT) {
        ingot_error("ingot_loader_next: step %" PRIu64 " not ready after %.1f s (INGOT_TIMEOUT)",
                    l->next_step, (double)(t1 - t0) / 1e9);
    }
    if (st == INGOT_OK && atomic_load(&slot->state) == SLOT_FAILED) {
        st = atomic_load(&slot->status);
        ingot_last_error_set(slot->error); /* detected and logged on a loader thread */
    }
    if (st != INGOT_OK) {
        snprintf(l->failed_msg, sizeof(l->failed_msg), "%s", ingot_last_error());
        l->failed = st;
        return st;
    }
    if (l->next_step == 0) {
        l->stall_first_ns = t1 - t0;
    } else {
        l->stall_ns += t1 - t0;
        ingot_hist_record(&l->h_stall, t1 - t0);
    }
    ingot_trace_event(l->trace, INGOT_TRACE_STALL, t0, t1, l->next_step);
    loader_account_skips(l, slot);
    if (l->failed != INGOT_OK) {
        return l->failed;
    }
    atomic_store(&slot->state, SLOT_HELD);
    batch_fill(l, slot, batch_p);
    l->held++;
    l->next_step++;
    l->samples += slot->count;
    l->bytes += slot->bytes;
    l->t_last = t1;
    return INGOT_OK;
}

/* The held step whose batch carries @p token, or UINT64_MAX. Held steps: [oldest_held, next_step). */
static uint64_t held_step_of(const struct ingot_loader *l, uint64_t token)
{
    for (uint64_t step = l->oldest_held; step < l->next_step; step++) {
        const loader_slot_t *slot = &l->slots[step % l->depth];
        if (atomic_load(&slot->state) == SLOT_HELD && slot->token == token) {
            return step;
        }
    }
    return UINT64_MAX;
}

/* ingot_loader_release(), after @p stream's work when @p after (a device batch's readers). */
static ingot_status_t loader_release(ingot_loader_h l, ingot_batch_t *batch, int after,
                                     void *stream)
{
    if (l == NULL || batch == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_loader_release: NULL %s",
                          l == NULL ? "loader" : "batch");
    }
    uint64_t step = held_step_of(l, batch->token);
    if (step == UINT64_MAX) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "ingot_loader_release: token %016" PRIx64 " (a batch of step %" PRIu64
                          ", as the caller has it) names no batch "
                          "this loader holds: released twice, forged, or from another loader",
                          batch->token, batch->step);
    }
    if (step != l->oldest_held) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "ingot_loader_release: step %" PRIu64
                          " released out of order (step %" PRIu64 " was handed over first and "
                          "is still held)",
                          step, l->oldest_held);
    }
    loader_slot_t *slot = &l->slots[step % l->depth];
    if (after) {
        ingot_status_t st = ingot_loader_gpu_release_after(l, slot, stream);
        if (st != INGOT_OK) {
            return st; /* nothing released: the slot must not be refilled under the stream */
        }
    }
    ingot_loader_gpu_release(l, slot);
    atomic_store(&slot->state, SLOT_FREE);
    l->oldest_held++;
    l->held--;
    ingot_spsc_try_push(&l->free_slots, (void *)(uintptr_t)slot->id); /* room for every slot */
    return INGOT_OK;
}

ingot_status_t ingot_loader_release(ingot_loader_h l, ingot_batch_t *batch)
{
    return loader_release(l, batch, 0, NULL);
}

ingot_status_t ingot_loader_release_after(ingot_loader_h l, ingot_batch_t *batch, void *stream)
{
    return loader_release(l, batch, 1, stream);
}

ingot_status_t ingot_loader_save(ingot_loader_h l, ingot_cursor_t *cursor_p)
{
    if (l == NULL || cursor_p == NULL) {
        return INGOT_ERR_INVALID_PARAM;
    }
    MPI_Comm comm = l->ctx->comm;
    uint64_t mine[2] = {l->next_step, ~l->next_step}, both[2];
    ingot_status_t st = INGOT_MPI_CALL("ingot_loader_save", MPI_Allreduce, mine, both, 2,
                                       MPI_UINT64_T, MPI_MAX, comm);
    if (st != INGOT_OK) {
        return st;
    }
    if (both[0] != ~both[1]) {
        ingot_error("ingot_loader_save: ranks have handed over between %" PRIu64 " and %" PRIu64
                    " steps; save after the same step on every rank",
                    ~both[1], both[0]);
        return INGOT_ERR_MISMATCH;
    }
    uint64_t g = l->start_step + l->next_step;
    int world = l->world, count = (int)l->skipped_len, *counts = NULL, *displs = NULL, total = 0;
    if (g % l->steps_per_epoch == 0) {
        count = 0; /* a fresh epoch has no skips yet */
    }
    counts = ingot_calloc((size_t)world, sizeof(int), "cursor counts");
    displs = ingot_calloc((size_t)world, sizeof(int), "cursor displacements");
    if (counts == NULL || displs == NULL ||
        (st = INGOT_MPI_CALL("ingot_loader_save", MPI_Allgather, &count, 1, MPI_INT, counts, 1,
                             MPI_INT, comm)) != INGOT_OK) {
        free(counts);
        free(displs);
        return counts && displs ? st : INGOT_ERR_NO_MEMORY;
    }
    for (int r = 0; r < world; r++) {
        displs[r] = total;
        total += counts[r];
    }
    uint64_t *all = ingot_calloc(total ? (size_t)total : 1, sizeof(uint64_t), "cursor skips");
    st = (all == NULL) ? INGOT_ERR_NO_MEMORY
                       : INGOT_MPI_CALL("ingot_loader_save", MPI_Allgatherv, l->skipped_ids, count,
                                        MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, comm);
    free(counts);
    free(displs);
    if (st != INGOT_OK) {
        free(all);
        return st;
    }
    *cursor_p = (ingot_cursor_t){.version = INGOT_CURSOR_VERSION,
                                 .manifest_digest = l->minfo.digest,
                                 .seed = l->params.seed,
                                 .epoch = g / l->steps_per_epoch,
                                 .consumed = (g % l->steps_per_epoch) * l->params.global_batch,
                                 .global_batch = l->params.global_batch,
                                 .skipped_count = (uint64_t)total,
                                 .skipped = all};
    return INGOT_OK;
}

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
    INGOT_FIELD_SPAN(INGOT_LOADER_STATS_FIELD_THREADS, ingot_loader_stats_t, readers, depth)};

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
    s->minor_faults = (uint64_t)(minor_faults_now() - l->faults_at_create);
    s->readers = l->nreaders;
    s->workers = l->nworkers;
    s->depth = l->depth;
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
    const _Atomic uint64_t *c = &l->epoch_bytes[(epoch - l->first_epoch) * LOADER_FROM_COUNT];
    *bytes_p = (ingot_loader_epoch_bytes_t){.epoch = epoch,
                                            .bytes_storage = atomic_load(&c[LOADER_FROM_STORAGE]),
                                            .bytes_peer = atomic_load(&c[LOADER_FROM_PEER]),
                                            .bytes_local = atomic_load(&c[LOADER_FROM_LOCAL])};
    return INGOT_OK;
}

ingot_status_t ingot_loader_cache_paths(ingot_loader_h l, char *buf, size_t len)
{
    if (l == NULL || buf == NULL || len == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_loader_cache_paths: NULL argument");
    }
    if (l->cache == NULL) {
        snprintf(buf, len, "no peer cache (INGOT_CACHE_BYTES=0)\n");
        return INGOT_ERR_NOT_FOUND;
    }
    ingot_cache_paths(l->cache, buf, len);
    return INGOT_OK;
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

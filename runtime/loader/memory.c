/*
 * The loader's memory, on the trainer's thread at create: the largest sample and run, how many
 * slots, readers and workers (from the placement's ingest cores), the slot ring (pinned, NUMA
 * placed, GPU buffers where batches go to a GPU), staging and the stages' contexts; freed at
 * destroy.
 */
#include "runtime/loader/loader_impl.h"
#include "runtime/context_impl.h"
#include "shard/manifest.h"
#include "source/storage.h"
#include "base/log.h"
#include "base/status.h"
#include <inttypes.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define LOADER_TRACE_EVENTS    (1u << 20)
#define LOADER_GAP_SCRATCH_MIN (64u << 10)

static uint32_t cpuset_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return 1;
    }
    int n = CPU_COUNT(&set);
    return n > 0 ? (uint32_t)n : 1;
}

/* The workers a rank's loader runs when nothing says otherwise: the process's cpuset, but no
 * more than its share of the node's CPUs (the node's allowed PUs over its ranks), at least 1.
 * Threads are counted per node, not per rank: 22 ranks on 2 cores, unbound, each seeing both,
 * would otherwise run 2 workers each. (Readers keep storage's default: they wait as well as
 * copy, storage.h.) */
static uint32_t loader_core_share(ingot_loader_h l)
{
    uint32_t mine = cpuset_cores();
    const ingot_topo_setup_t *t = l->ctx->topo;
    int ranks = t != NULL ? t->node.local_size : 1;
    int pus = t != NULL && t->topo != NULL ? t->topo->npus : 0;
    if (ranks <= 1 || pus <= 0) {
        return mine;
    }
    uint32_t share = (uint32_t)(pus / ranks);
    share = share < mine ? share : mine;
    return share > 0 ? share : 1;
}

/* Readers when neither the parameters nor INGOT_READERS say: what storage wants in flight. */
static uint32_t loader_readers_default(ingot_loader_h l, const struct ingot_ctx_config *cfg)
{
    return ingot_storage_readers(&cfg->tiers, ingot_manifest_location(l->manifest),
                                 l->params.order_mode);
}

/* Largest sample (delivered and stored bytes) and widest sample, which size every buffer: from
 * the manifest's header (version 2, O(1)), or one pass over its sample table (version 1). */
ingot_status_t ingot_loader_maxima(ingot_loader_h l)
{
    ingot_manifest_maxima_t max;
    INGOT_CHECK(ingot_manifest_maxima_get(l->manifest, &max));
    l->sample_bytes_max = max.raw_bytes;
    l->stored_max = max.stored_bytes;
    l->fields_max = max.fields;
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
           (uint64_t)l->nworkers * worker + ingot_loader_gap_bytes(l);
}

ingot_status_t ingot_loader_size(ingot_loader_h l, const ingot_ctx_config_t *cfg)
{
    const size_t page = 4096;
    size_t per_sample = l->params.transform ? l->params.sample_out_size : l->sample_bytes_max;
    l->slot_bytes = ((size_t)l->slice * per_sample + page - 1) & ~(page - 1);
    if (l->slot_bytes == 0) {
        l->slot_bytes = page;
    }
    size_t run = l->stored_max > LOADER_RUN_BYTES ? l->stored_max : LOADER_RUN_BYTES;
    l->staging_bytes = ((run + page - 1) & ~(page - 1)) + 2 * INGOT_SOURCE_DIRECT_ALIGN;
    l->nreaders = l->params.readers      ? l->params.readers
                  : cfg->loader->readers ? (uint32_t)cfg->loader->readers
                                         : loader_readers_default(l, cfg);
    l->nworkers = l->params.workers      ? l->params.workers
                  : cfg->loader->workers ? (uint32_t)cfg->loader->workers
                                         : loader_core_share(l);
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

/* Per reader: its completion event, iovecs and requests (with their hash states). */
static ingot_status_t loader_alloc_readers(ingot_loader_h l)
{
    for (uint32_t r = 0; r < l->nreaders; r++) {
        loader_reader_ctx_t *rd = &l->rctx[r];
        rd->loader = l;
        ingot_event_init(&rd->done);
        for (uint32_t i = 0; i < LOADER_REQS_PER_READER; i++) {
            rd->reqs[i].reader = rd;
            if (l->params.verify != INGOT_VERIFY_OFF &&
                ingot_shard_stream_init(&rd->reqs[i].landed.stream) != INGOT_OK) {
                return INGOT_ERR_NO_MEMORY;
            }
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

ingot_status_t ingot_loader_alloc(ingot_loader_h l, const ingot_ctx_config_t *cfg)
{
    ingot_status_t st;
    l->slots = ingot_calloc(l->depth, sizeof(*l->slots), "loader slots");
    l->slice_ids = ingot_calloc(l->slice, sizeof(uint64_t), "loader slice");
    l->wctx = ingot_calloc(l->nworkers, sizeof(*l->wctx), "loader workers");
    l->rctx = ingot_calloc(l->nreaders, sizeof(*l->rctx), "loader readers");
    l->threads = ingot_calloc(l->nreaders + l->nworkers, sizeof(pthread_t), "loader threads");
    l->gap_scratch = ingot_malloc(ingot_loader_gap_bytes(l), "loader gap scratch");
    l->plan_loc = ingot_calloc(l->slice, sizeof(*l->plan_loc), "loader plan locations");
    l->plan_located = ingot_calloc(l->slice, 1, "loader plan locations");
    l->first_epoch = l->start_step / l->steps_per_epoch;
    l->nepochs = l->params.epochs > l->first_epoch ? l->params.epochs - l->first_epoch : 0;
    l->epoch_bytes = ingot_calloc(l->nepochs * INGOT_TIER_FROM_COUNT + 1, sizeof(*l->epoch_bytes),
                                  "loader epoch counters");
    l->epoch_reads = ingot_calloc(l->nepochs + 1, sizeof(*l->epoch_reads), "loader epoch reads");
    if (!l->slots || !l->slice_ids || !l->wctx || !l->rctx || !l->threads || !l->gap_scratch ||
        !l->plan_loc || !l->plan_located || !l->epoch_bytes || !l->epoch_reads) {
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
    if ((st = loader_alloc_readers(l)) != INGOT_OK || (st = loader_alloc_workers(l)) != INGOT_OK) {
        return st;
    }
    if (strcmp(cfg->loader->trace, "none") != 0) {
        st = ingot_trace_create(cfg->loader->trace, LOADER_TRACE_EVENTS, l->rank, &l->trace);
    }
    return st;
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
        for (uint32_t i = 0; i < LOADER_REQS_PER_READER; i++) {
            ingot_shard_stream_release(&l->rctx[r].reqs[i].landed.stream);
        }
    }
    ingot_shard_dict_destroy(l->dict);
    free(l->rctx);
}

void ingot_loader_free_memory(ingot_loader_h l)
{
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
}

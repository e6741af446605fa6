/*
 * The loader's threads. The planner turns a free slot into a step's runs; readers issue one
 * storage request per run; workers verify, decode, transform and collate each run's samples;
 * the worker finishing a step's last run completes the slot (and starts its H2D copy).
 */
#include "runtime/loader_impl.h"
#include "source/cache/cache.h"
#include "runtime/context_impl.h"
#include "base/log.h"
#include "base/time.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* Each loader thread runs on the placement's ingest cores when INGOT_BIND asks for binding. */
void ingot_loader_thread_setup(ingot_loader_h l)
{
    if (!l->bind_threads) {
        return;
    }
    const ingot_topo_setup_t *t = l->ctx->topo;
    ingot_status_t st = ingot_topo_bind_thread(t->topo, t->plan, t->node.local_rank, true);
    if (st != INGOT_OK && atomic_exchange(&l->bind_warned, 1) == 0) {
        ingot_warn("loader threads stay unbound: binding to the ingest cores failed (%s)",
                   ingot_status_string(st));
    }
}

/* ---------------------------------------------------------------- planning */

static int cmp_location(const void *a, const void *b, void *arg)
{
    const ingot_sample_info_t *info = arg;
    const ingot_sample_info_t *x = &info[*(const uint32_t *)a], *y = &info[*(const uint32_t *)b];
    if (x->shard != y->shard) {
        return x->shard < y->shard ? -1 : 1;
    }
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* The sample's rows, read from the manifest once per sample: the readers and workers get them
 * with the run (slot->info, slot->fields) and never look them up again. */
static ingot_status_t plan_sample(ingot_loader_h l, loader_slot_t *slot, uint32_t pos,
                                  uint64_t *cursor)
{
    ingot_sample_info_t *info = &slot->info[pos];
    ingot_field_info_t *fields = &slot->fields[(size_t)pos * l->fields_max];
    ingot_status_t st = ingot_shard_rows_get(l->manifest, l->slice_ids[pos], info, fields,
                                             l->fields_max);
    if (st != INGOT_OK) {
        return st;
    }
    /* Delivered size, and whether the stored bytes are exactly what is delivered (then the
     * reader scatters them straight into the slot). */
    uint64_t len = l->params.sample_out_size;
    int scatter = (l->params.transform == NULL && !l->direct_io);
    if (l->params.transform == NULL) {
        len = 0;
        for (uint32_t f = 0; f < info->field_count; f++) {
            len += fields[f].raw_len;
            scatter &= (fields[f].codec == INGOT_CODEC_NONE);
        }
    }
    slot->scatter[pos] = (uint8_t)scatter;
    slot->offsets[pos] = *cursor;
    slot->lengths[pos] = len;
    slot->indices[pos] = info->index;
    slot->labels[pos] = info->label;
    slot->keys[pos] = info->key;
    slot->skipped[pos] = 0;
    slot->on_device[pos] = 0;
    slot->sorted[pos] = pos;
    *cursor += len;
    return INGOT_OK;
}

/* Group the step's samples from sorted position @p from on, sorted by location, into runs of one
 * storage request each (appended to the slot's runs). */
static void plan_runs(ingot_loader_h l, loader_slot_t *slot, uint32_t from)
{
    const uint64_t gap_max = l->coalesce_gap;
    loader_run_t *run = NULL;
    if (from == 0) {
        slot->nruns = 0;
    }
    for (uint32_t k = from; k < slot->nsamples; k++) {
        const ingot_sample_info_t *s = &slot->info[slot->sorted[k]];
        int scatter = slot->scatter[slot->sorted[k]];
        uint64_t end = s->offset + s->length;
        if (run != NULL && run->shard == s->shard && run->scatter == scatter &&
            s->offset >= run->offset + run->length &&
            s->offset - (run->offset + run->length) <= gap_max &&
            run->count < LOADER_RUN_SAMPLES_MAX && end - run->offset <= LOADER_RUN_BYTES) {
            run->length = end - run->offset;
            run->count++;
            continue;
        }
        run = &slot->runs[slot->nruns++];
        *run = (loader_run_t){.slot = slot,
                              .shard = s->shard,
                              .offset = s->offset,
                              .length = s->length,
                              .first = k,
                              .count = 1,
                              .scatter = scatter,
                              .home = -1};
    }
}

/* Epochs after the fill: cached samples first, grouped by home (each rank starting with the
 * home after its own, so the ranks' requests spread over the owners), in window order; then the
 * rest by location. */
static int cmp_cached(const void *a, const void *b, void *arg)
{
    const struct ingot_loader *l = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    int32_t hx = l->plan_home[x], hy = l->plan_home[y];
    if ((hx < 0) != (hy < 0)) {
        return hx < 0 ? 1 : -1;
    }
    if (hx < 0) {
        return cmp_location(a, b, (void *)l->plan_info);
    }
    int rx = (hx - l->rank - 1 + l->world) % l->world,
        ry = (hy - l->rank - 1 + l->world) % l->world;
    if (rx != ry) {
        return rx < ry ? -1 : 1;
    }
    return (l->plan_woff[x] > l->plan_woff[y]) - (l->plan_woff[x] < l->plan_woff[y]);
}

/* Runs of cached samples: one home each, up to LOADER_RUN_BYTES of records. */
static void plan_runs_cached(ingot_loader_h l, loader_slot_t *slot, uint32_t ncached)
{
    loader_run_t *run = NULL;
    for (uint32_t k = 0; k < ncached; k++) {
        uint32_t pos = slot->sorted[k];
        const ingot_sample_info_t *s = &slot->info[pos];
        int scatter = slot->scatter[pos];
        if (run != NULL && run->home == l->plan_home[pos] && run->scatter == scatter &&
            run->count < LOADER_RUN_SAMPLES_MAX && run->length + s->length <= LOADER_RUN_BYTES) {
            run->length += s->length;
            run->count++;
            continue;
        }
        run = &slot->runs[slot->nruns++];
        *run = (loader_run_t){.slot = slot,
                              .shard = s->shard,
                              .length = s->length,
                              .first = k,
                              .count = 1,
                              .scatter = scatter,
                              .cached = 1,
                              .home = l->plan_home[pos]};
    }
}

/* Sort the step's samples and group them into runs. */
static void plan_sort_runs(ingot_loader_h l, loader_slot_t *slot)
{
    uint32_t ncached = 0;
    if (l->cache != NULL && slot->epoch > ingot_cache_fill_epoch(l->cache)) {
        for (uint32_t i = 0; i < slot->nsamples; i++) {
            ingot_cache_entry_t e = ingot_cache_entry(l->cache, slot->info[i].index);
            l->plan_home[i] = e.home;
            l->plan_woff[i] = e.offset;
            ncached += (e.home >= 0);
        }
    }
    if (ncached == 0) {
        qsort_r(slot->sorted, slot->nsamples, sizeof(*slot->sorted), cmp_location, slot->info);
        plan_runs(l, slot, 0);
        return;
    }
    l->plan_info = slot->info;
    qsort_r(slot->sorted, slot->nsamples, sizeof(*slot->sorted), cmp_cached, l);
    slot->nruns = 0;
    plan_runs_cached(l, slot, ncached);
    plan_runs(l, slot, ncached);
}

/* Each run carries the manifest's opaque id of its shard (a peer cache names bytes by it);
 * runs are sorted by shard, so one lookup serves a shard's consecutive runs. */
static ingot_status_t runs_shard_ids(ingot_loader_h l, loader_slot_t *slot)
{
    for (uint32_t r = 0; r < slot->nruns; r++) {
        loader_run_t *run = &slot->runs[r];
        if (r > 0 && run[-1].shard == run->shard) {
            run->shard_id = run[-1].shard_id;
            continue;
        }
        ingot_shard_info_t si;
        ingot_status_t st = ingot_manifest_shard_get(l->manifest, run->shard, &si);
        if (st != INGOT_OK) {
            return st;
        }
        run->shard_id = si.hash;
    }
    return INGOT_OK;
}

/* Record @p st as the step's error unless one is recorded already; the thread that records it
 * detected it, so its last error (ingot_error) is the message ingot_loader_next() hands over. */
static void slot_note_error(loader_slot_t *slot, ingot_status_t st)
{
    int expected = INGOT_OK;
    if (atomic_compare_exchange_strong(&slot->status, &expected, st)) {
        const char *msg = ingot_last_error();
        snprintf(slot->error, sizeof(slot->error), "%s",
                 msg[0] != '\0' ? msg : ingot_status_string(st));
    }
}

/* The step failed: only the planner or the thread completing the step's last run calls this,
 * once per step, after every slot_note_error() of the step (runs_left ordered them). */
static void slot_fail(ingot_loader_h l, loader_slot_t *slot, ingot_status_t st)
{
    slot_note_error(slot, st);
    atomic_store(&slot->state, SLOT_FAILED);
    ingot_event_notify(&l->ready);
}

static ingot_status_t plan_step(ingot_loader_h l, loader_slot_t *slot, uint64_t rel)
{
    uint64_t g = l->start_step + rel, cursor = 0;
    slot->step = rel;
    slot->epoch = g / l->steps_per_epoch;
    slot->epoch_step = g % l->steps_per_epoch;
    slot->nsamples = l->slice;
    atomic_store(&slot->status, INGOT_OK);
    atomic_store(&slot->skipped_count, 0);
    atomic_store(&slot->ndevice, 0);
    ingot_status_t st = ingot_order_slice(l->order, slot->epoch, slot->epoch_step,
                                          (uint32_t)l->rank, (uint32_t)l->world, l->slice_ids,
                                          l->slice);
    for (uint32_t i = 0; i < l->slice && st == INGOT_OK; i++) {
        st = plan_sample(l, slot, i, &cursor);
    }
    if (st != INGOT_OK) {
        return st;
    }
    slot->bytes = cursor;
    plan_sort_runs(l, slot);
    if ((st = runs_shard_ids(l, slot)) != INGOT_OK) {
        return st;
    }
    atomic_store(&slot->runs_left, slot->nruns);
    atomic_store(&slot->state, SLOT_FILLING);
    for (uint32_t r = 0; r < slot->nruns; r++) {
        st = ingot_mpmc_push_wait(&l->read_q, &slot->runs[r], INGOT_DEADLINE_NONE, &l->abort);
        if (st != INGOT_OK) {
            return st; /* aborted: the loader is being destroyed */
        }
    }
    return INGOT_OK;
}

void *ingot_loader_planner_main(void *arg)
{
    ingot_loader_h l = arg;
    ingot_loader_thread_setup(l);
    for (;;) {
        void *item;
        if (ingot_spsc_pop_wait(&l->free_slots, &item, INGOT_DEADLINE_NONE, &l->abort) !=
            INGOT_OK) {
            return NULL;
        }
        if (l->next_plan >= l->total_steps) {
            continue; /* past the last step: nothing to prefetch */
        }
        loader_slot_t *slot = &l->slots[(uintptr_t)item];
        ingot_loader_gpu_reuse(l, slot);
        uint64_t t0 = ingot_time_ns();
        ingot_status_t st = plan_step(l, slot, l->next_plan++);
        ingot_trace_event(l->trace, INGOT_TRACE_PLAN, t0, ingot_time_ns(), slot->step);
        if (st != INGOT_OK && !ingot_abort_is_raised(&l->abort)) {
            slot_fail(l, slot, st);
        }
    }
}

/* ---------------------------------------------------------------- completion */

static void slot_compact(loader_slot_t *slot)
{
    uint32_t out = 0;
    for (uint32_t i = 0; i < slot->nsamples; i++) {
        if (slot->skipped[i]) {
            continue;
        }
        slot->offsets[out] = slot->offsets[i];
        slot->lengths[out] = slot->lengths[i];
        slot->indices[out] = slot->indices[i];
        slot->labels[out] = slot->labels[i];
        slot->keys[out] = slot->keys[i];
        out++;
    }
    slot->count = out;
}

static void slot_complete(ingot_loader_h l, loader_slot_t *slot)
{
    ingot_status_t st = atomic_load(&slot->status);
    slot->count = slot->nsamples;
    if (st == INGOT_OK && atomic_load(&slot->skipped_count) > 0) {
        /* Keep the skipped ids for the cursor before compacting them away. */
        for (uint32_t i = 0, j = 0; i < slot->nsamples; i++) {
            if (slot->skipped[i]) {
                slot->skipped_ids[j++] = slot->indices[i];
            }
        }
        slot_compact(slot);
    }
    if (st == INGOT_OK && l->device != INGOT_DEVICE_HOST) {
        st = ingot_loader_gpu_copy(l, slot);
    }
    if (st != INGOT_OK) {
        slot_fail(l, slot, st);
        return;
    }
    atomic_store(&slot->state, SLOT_READY);
    ingot_event_notify(&l->ready);
}

void ingot_loader_run_done(ingot_loader_h l, loader_run_t *run, ingot_status_t status)
{
    loader_slot_t *slot = run->slot;
    if (run->staging != NULL) {
        ingot_mpmc_push_wait(&l->staging_q, run->staging, INGOT_DEADLINE_NONE, NULL);
        run->staging = NULL;
    }
    if (status != INGOT_OK) {
        slot_note_error(slot, status);
    }
    if (atomic_fetch_sub(&slot->runs_left, 1) == 1) {
        slot_complete(l, slot);
    }
}

/* ---------------------------------------------------------------- readers */

static ingot_status_t process_run(ingot_loader_h l, loader_worker_ctx_t *w, loader_run_t *run);

/* The rows of the sample at slice position @p pos, as the planner read them. */
static ingot_shard_rows_t run_rows(ingot_loader_h l, const loader_slot_t *slot, uint32_t pos)
{
    return (ingot_shard_rows_t){.sample = &slot->info[pos],
                                .fields = &slot->fields[(size_t)pos * l->fields_max]};
}

/* Whether a run's bytes are fetched straight into the device slot: a peer's cached samples,
 * delivered as stored, when the cache's calibration chose GPU memory. */
static int run_to_device(ingot_loader_h l, const loader_run_t *run)
{
    return l->fetch_device >= 0 && run->cached && run->scatter && run->home != l->rank;
}

/* iovecs scattering a run's stored bytes: fields into their slot positions (in the device slot
 * when @p device), gaps to scratch. */
static int build_scatter(ingot_loader_h l, loader_run_t *run, struct iovec *iov, int max,
                         int device)
{
    loader_slot_t *slot = run->slot;
    uint64_t cursor = run->offset;
    char *base = device ? (char *)slot->device : (char *)slot->host.ptr;
    void *gap = device ? l->gap_device : l->gap_scratch;
    int n = 0;
    for (uint32_t k = 0; k < run->count; k++) {
        uint32_t pos = slot->sorted[run->first + k];
        ingot_shard_rows_t rows = run_rows(l, slot, pos);
        char *dst = base + slot->offsets[pos];
        if (run->cached) {
            cursor = rows.sample->offset; /* records back to back: no gap between samples */
        }
        for (uint32_t f = 0; f < rows.sample->field_count; f++) {
            const ingot_field_info_t *fi = &rows.fields[f];
            uint64_t at = rows.sample->offset + fi->offset;
            while (cursor < at && n < max) { /* tar headers and padding between fields */
                size_t chunk = (size_t)(at - cursor) < l->gap_scratch_size ? (size_t)(at - cursor)
                                                                           : l->gap_scratch_size;
                iov[n++] = (struct iovec){.iov_base = gap, .iov_len = chunk};
                cursor += chunk;
            }
            if (n == max) {
                return -1;
            }
            iov[n++] = (struct iovec){.iov_base = dst, .iov_len = fi->stored_len};
            dst += fi->stored_len;
            cursor += fi->stored_len;
        }
    }
    return n;
}

/* Point the request at the run's destination: the slot (scatter) or a staging buffer. */
static ingot_status_t req_target(ingot_loader_h l, loader_reader_ctx_t *rd, loader_run_t *run,
                                 loader_req_t *lr)
{
    ingot_source_req_t *req = &lr->req;
    if (run->scatter) {
        int device = run_to_device(l, run);
        int n = build_scatter(l, run, rd->iov, (int)l->iov_cap, device);
        if (n < 0) {
            ingot_error("internal: run of %u samples needs more than %u iovecs", run->count,
                        l->iov_cap);
            return INGOT_ERR_INTERNAL;
        }
        req->iov = rd->iov;
        req->iovcnt = n;
        req->mem = device ? l->mem_dev : NULL;
        req->slack = 0;
        return INGOT_OK;
    }
    rd->iov[0] = (struct iovec){.iov_base = run->staging, .iov_len = (size_t)run->length};
    req->iov = rd->iov;
    req->iovcnt = 1;
    req->slack = run->room - (size_t)run->length;
    return INGOT_OK;
}

/* Read a run from the first of @p srcs that has its bytes ("retry elsewhere" falls through).
 * When every source answered "retry", returns the last one's reason with req.retry set. */
static ingot_status_t read_chain(ingot_loader_h l, loader_reader_ctx_t *rd, loader_run_t *run,
                                 loader_req_t *lr, ingot_source_t *const *srcs, uint32_t nsrcs,
                                 int *quarantined_p)
{
    ingot_source_req_t *req = &lr->req;
    *req = (ingot_source_req_t){.shard = run->shard,
                                .shard_id = run->shard_id,
                                .offset = run->offset,
                                .length = run->length,
                                .deadline_ns = ingot_deadline_after(l->timeout_ns),
                                .extents = run->cached ? rd->extents : NULL,
                                .nextents = run->cached ? run->count : 0,
                                .cb = ingot_loader_req_done,
                                .arg = lr,
                                .done_ev = &rd->done};
    ingot_status_t st = INGOT_ERR_NOT_FOUND;
    for (uint32_t i = 0; i < nsrcs; i++) {
        if ((st = req_target(l, rd, run, lr)) != INGOT_OK ||
            (st = ingot_source_submit(srcs[i], req)) != INGOT_OK) {
            return st;
        }
        st = ingot_source_wait(srcs[i], req, &rd->done, &l->abort, quarantined_p);
        if (*quarantined_p || !req->retry) {
            return st;
        }
    }
    return st;
}

/* Read a storage run (a shard byte range) from the loader's sources. */
static ingot_status_t read_sources(ingot_loader_h l, loader_reader_ctx_t *rd, loader_run_t *run,
                                   loader_req_t *lr, int *quarantined_p)
{
    if (l->pacing_ns > 0 && atomic_load(&l->ctx->reductions) > 0) {
        /* A gradient reduction is in flight: leave it the memory bandwidth for a moment. */
        struct timespec pause = {(time_t)(l->pacing_ns / 1000000000ull),
                                 (long)(l->pacing_ns % 1000000000ull)};
        nanosleep(&pause, NULL);
        atomic_fetch_add(&l->paced, 1);
    }
    ingot_status_t st = read_chain(l, rd, run, lr, l->sources, l->nsources, quarantined_p);
    if (st != INGOT_OK && !*quarantined_p && lr->req.retry) {
        char d[INGOT_SOURCE_DESCRIBE_MAX];
        ingot_error("no byte source holds %" PRIu64 " bytes at offset %" PRIu64 " of %s (%s)",
                    run->length, run->offset,
                    ingot_source_describe(l->sources[l->nsources - 1], run->shard, d, sizeof(d)),
                    ingot_status_string(st));
    }
    return st;
}

/* Read sample @p k of a cached run from storage, into its place in the run's target (@p at:
 * where its record starts in the run's bytes). */
static ingot_status_t read_sample_storage(ingot_loader_h l, loader_reader_ctx_t *rd,
                                          loader_run_t *run, uint32_t k, uint64_t at,
                                          loader_req_t *lr, int *quarantined_p)
{
    const ingot_sample_info_t *s = &run->slot->info[run->slot->sorted[run->first + k]];
    ingot_shard_info_t si;
    ingot_status_t st = ingot_manifest_shard_get(l->manifest, s->shard, &si);
    if (st != INGOT_OK) {
        return st;
    }
    loader_run_t one = {.slot = run->slot,
                        .shard = s->shard,
                        .shard_id = si.hash,
                        .offset = s->offset,
                        .length = s->length,
                        .first = run->first + k,
                        .count = 1,
                        .scatter = run->scatter,
                        .home = -1,
                        .staging = run->scatter ? NULL : (char *)run->staging + run->shift + at,
                        .room = (size_t)s->length};
    return read_sources(l, rd, &one, lr, quarantined_p);
}

/* A cached run whose home could not serve it: its samples one by one from storage. */
static ingot_status_t read_cached_storage(ingot_loader_h l, loader_reader_ctx_t *rd,
                                          loader_run_t *run, loader_req_t *lr, int *quarantined_p)
{
    uint64_t at = 0;
    run->shift = 0;
    for (uint32_t k = 0; k < run->count; k++) {
        ingot_status_t st = read_sample_storage(l, rd, run, k, at, lr, quarantined_p);
        if (st != INGOT_OK || *quarantined_p) {
            return st;
        }
        at += run->slot->info[run->slot->sorted[run->first + k]].length;
    }
    return INGOT_OK;
}

/* A cached run from its home's window; from storage when the home cannot serve it. Sets
 * *from_p to where the bytes came from. */
static ingot_status_t read_cached(ingot_loader_h l, loader_reader_ctx_t *rd, loader_run_t *run,
                                  loader_req_t *lr, int *quarantined_p, int *from_p)
{
    for (uint32_t k = 0; k < run->count; k++) {
        const ingot_sample_info_t *s = &run->slot->info[run->slot->sorted[run->first + k]];
        rd->extents[k] = (ingot_source_extent_t){s->offset, s->length, s->index};
    }
    ingot_source_t *cache = ingot_cache_source(l->cache);
    ingot_status_t st = read_chain(l, rd, run, lr, &cache, 1, quarantined_p);
    *from_p = run->home == l->rank ? LOADER_FROM_LOCAL : LOADER_FROM_PEER;
    if (st == INGOT_OK && !*quarantined_p && run_to_device(l, run)) {
        /* in the device slot already: the batch's H2D copy leaves these positions out */
        for (uint32_t k = 0; k < run->count; k++) {
            run->slot->on_device[run->slot->sorted[run->first + k]] = 1;
        }
        atomic_fetch_add(&run->slot->ndevice, run->count);
    }
    if (st != INGOT_OK && !*quarantined_p && lr->req.retry) {
        *from_p = LOADER_FROM_STORAGE;
        st = read_cached_storage(l, rd, run, lr, quarantined_p);
    }
    return st;
}

/* One of the reader's requests not held in quarantine, or NULL. */
static loader_req_t *reader_free_req(loader_reader_ctx_t *rd)
{
    for (uint32_t i = 0; i < LOADER_REQS_PER_READER; i++) {
        if (!atomic_load_explicit(&rd->reqs[i].busy, memory_order_acquire)) {
            return &rd->reqs[i];
        }
    }
    return NULL;
}

static bool reader_has_free_req(void *arg)
{
    return reader_free_req(arg) != NULL;
}

/* A request to read with (waits while all of the reader's requests are in quarantine). */
static ingot_status_t reader_req(ingot_loader_h l, loader_reader_ctx_t *rd, loader_req_t **lr_p)
{
    while ((*lr_p = reader_free_req(rd)) == NULL) {
        ingot_status_t st = ingot_event_wait_until(&rd->done, reader_has_free_req, rd,
                                                   INGOT_DEADLINE_NONE, &l->abort);
        if (st != INGOT_OK) {
            return st;
        }
    }
    return INGOT_OK;
}

/* A request past its deadline keeps its target out of service until the late completion. A
 * staging buffer goes back to the pool, so the request holds it. A scatter run's target is its
 * slot: a timed-out step fails the loader for good (nothing is delivered after it), and destroy
 * ends the sources before the slots. */
static void req_quarantine(loader_req_t *lr, loader_run_t *run)
{
    lr->staging = run->staging; /* the source still writes there: out of service */
    run->staging = NULL;
    atomic_store_explicit(&lr->busy, 1, memory_order_release);
    if (atomic_load(&lr->req.state) == INGOT_SOURCE_REQ_DONE) {
        ingot_loader_req_done(&lr->req, 1); /* it completed while being quarantined */
    }
}

static ingot_status_t read_run(ingot_loader_h l, loader_reader_ctx_t *rd, loader_run_t *run,
                               int *from_p)
{
    loader_req_t *lr;
    ingot_status_t st;
    if (!run->scatter && (st = ingot_mpmc_pop_wait(&l->staging_q, &run->staging,
                                                   INGOT_DEADLINE_NONE, &l->abort)) != INGOT_OK) {
        return st;
    }
    if ((st = reader_req(l, rd, &lr)) != INGOT_OK) {
        return st; /* aborted: run_done gives the staging buffer back */
    }
    int quarantined = 0;
    run->room = l->staging_bytes;
    *from_p = LOADER_FROM_STORAGE;
    st = run->cached ? read_cached(l, rd, run, lr, &quarantined, from_p)
                     : read_sources(l, rd, run, lr, &quarantined);
    if (quarantined) {
        req_quarantine(lr, run);
        return st;
    }
    run->shift = run->cached ? 0 : lr->req.shift;
    return st;
}

void ingot_loader_req_done(ingot_source_req_t *req, int late)
{
    loader_req_t *lr = req->arg;
    int held = 1;
    /* Late completions only, once (the source's thread and the quarantining reader may both
     * get here); 2 = being released, still not to be reused. */
    if (!late || !atomic_compare_exchange_strong(&lr->busy, &held, 2)) {
        return;
    }
    loader_reader_ctx_t *rd = lr->reader;
    void *staging = lr->staging;
    lr->staging = NULL;
    if (staging != NULL) {
        /* The queue has room for every buffer: a push waits only while a consumer is mid-pop. */
        ingot_mpmc_push_wait(&rd->loader->staging_q, staging, INGOT_DEADLINE_NONE, NULL);
    }
    atomic_store_explicit(&lr->busy, 0, memory_order_release);
    ingot_event_notify(&rd->done);
}

static ingot_status_t verify_sample(ingot_loader_h l, const ingot_shard_rows_t *rows,
                                    const char *stored, int scattered);

/* Verify a cached run's samples where they landed. A sample whose peer bytes fail the hash is
 * logged with its key and home, counted, and read again from storage (its record bytes are
 * added to *refetched_p), then verified under the loader's policy. */
static ingot_status_t cache_verify_run(ingot_loader_h l, loader_reader_ctx_t *rd, loader_run_t *run,
                                       uint64_t *refetched_p)
{
    loader_slot_t *slot = run->slot;
    uint64_t at = 0;
    *refetched_p = 0;
    for (uint32_t k = 0; k < run->count && l->params.verify != INGOT_VERIFY_OFF; k++) {
        uint32_t pos = slot->sorted[run->first + k];
        ingot_shard_rows_t rows = run_rows(l, slot, pos);
        const char *stored = run->scatter ? (const char *)slot->host.ptr + slot->offsets[pos]
                                          : (const char *)run->staging + at;
        ingot_status_t st = ingot_shard_codec_verify(l->manifest, &rows, (const uint8_t *)stored,
                                                     run->scatter ? INGOT_SHARD_LAYOUT_PACKED
                                                                  : INGOT_SHARD_LAYOUT_STORED,
                                                     INGOT_SHARD_VERIFY_QUIET, NULL);
        if (st == INGOT_ERR_CORRUPT) {
            ingot_cache_report_corrupt(l->cache, rows.sample, run->home);
            loader_req_t *lr;
            int quarantined = 0;
            if ((st = reader_req(l, rd, &lr)) != INGOT_OK) {
                return st;
            }
            st = read_sample_storage(l, rd, run, k, at, lr, &quarantined);
            if (quarantined) {
                req_quarantine(lr, run);
            }
            *refetched_p += rows.sample->length;
            if (st == INGOT_OK) {
                st = verify_sample(l, &rows, stored, run->scatter);
            }
            if (st == INGOT_ERR_CORRUPT && l->params.verify == INGOT_VERIFY_SKIP) {
                slot->skipped[pos] = 1;
                atomic_fetch_add(&slot->skipped_count, 1);
                st = INGOT_OK;
            }
        }
        if (st != INGOT_OK) {
            return st;
        }
        at += rows.sample->length;
    }
    run->verified = 1;
    return INGOT_OK;
}

/* Record bytes of the run's samples (what the per-epoch counters add up). */
static uint64_t run_record_bytes(const loader_run_t *run)
{
    if (run->cached) {
        return run->length;
    }
    uint64_t n = 0;
    for (uint32_t k = 0; k < run->count; k++) {
        n += run->slot->info[run->slot->sorted[run->first + k]].length;
    }
    return n;
}

static void read_account(ingot_loader_h l, const loader_run_t *run, uint64_t t0, int from,
                         uint64_t refetched)
{
    uint64_t t1 = ingot_time_ns();
    uint64_t records = run_record_bytes(run);
    ingot_hist_record(&l->h_read, t1 - t0);
    ingot_trace_event(l->trace, INGOT_TRACE_READ, t0, t1, run->length);
    if (from == LOADER_FROM_STORAGE) {
        atomic_fetch_add_explicit(&l->bytes_read, run->cached ? records : run->length,
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&l->read_requests, run->cached ? run->count : 1,
                                  memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&l->bytes_read, refetched, memory_order_relaxed);
    }
    uint64_t e = run->slot->epoch - l->first_epoch;
    if (e < l->nepochs) {
        _Atomic uint64_t *c = &l->epoch_bytes[e * LOADER_FROM_COUNT];
        atomic_fetch_add_explicit(&c[from], records - refetched, memory_order_relaxed);
        atomic_fetch_add_explicit(&c[LOADER_FROM_STORAGE], refetched, memory_order_relaxed);
    }
}

void *ingot_loader_reader_main(void *arg)
{
    loader_reader_ctx_t *rd = arg;
    ingot_loader_h l = rd->loader;
    ingot_loader_thread_setup(l);
    for (;;) {
        void *item;
        if (ingot_mpmc_pop_wait(&l->read_q, &item, INGOT_DEADLINE_NONE, &l->abort) != INGOT_OK) {
            return NULL;
        }
        loader_run_t *run = item;
        uint64_t t0 = ingot_time_ns(), refetched = 0;
        int from = LOADER_FROM_STORAGE;
        ingot_status_t st = read_run(l, rd, run, &from);
        if (st == INGOT_OK && from != LOADER_FROM_STORAGE) {
            st = cache_verify_run(l, rd, run, &refetched);
        }
        read_account(l, run, t0, from, refetched);
        if (st == INGOT_OK && run->scatter) {
            /* Bytes already in place: verify them now, while they are still in this core's
             * cache, and finish the run here (a worker would read them back from memory). */
            ingot_loader_run_done(l, run, process_run(l, NULL, run));
            continue;
        }
        if (st == INGOT_OK) {
            st = ingot_mpmc_push_wait(&l->work_q, run, INGOT_DEADLINE_NONE, &l->abort);
        }
        if (st != INGOT_OK) {
            ingot_loader_run_done(l, run, st);
        }
    }
}

/* ---------------------------------------------------------------- workers */

/* Check every field's stored bytes against the manifest's hash (the shard codec). */
static ingot_status_t verify_sample(ingot_loader_h l, const ingot_shard_rows_t *rows,
                                    const char *stored, int scattered)
{
    if (l->params.verify == INGOT_VERIFY_OFF) {
        return INGOT_OK;
    }
    return ingot_shard_codec_verify(
        l->manifest, rows, (const uint8_t *)stored,
        scattered ? INGOT_SHARD_LAYOUT_PACKED : INGOT_SHARD_LAYOUT_STORED,
        l->params.verify == INGOT_VERIFY_SKIP ? INGOT_SHARD_VERIFY_SKIP : INGOT_SHARD_VERIFY_FAIL,
        NULL);
}

/* Decode (or copy) every field of a staged sample to @p dst; views for a transform. */
static ingot_status_t decode_sample(ingot_loader_h l, loader_worker_ctx_t *w,
                                    const ingot_shard_rows_t *rows, const char *stored, char *dst,
                                    ingot_field_view_t *views)
{
    for (uint32_t f = 0; f < rows->sample->field_count; f++) {
        size_t len;
        ingot_status_t st = ingot_shard_codec_decode(&w->codec, l->manifest, rows, f,
                                                     (const uint8_t *)stored, dst,
                                                     rows->fields[f].raw_len, &len);
        if (st != INGOT_OK) {
            return st; /* logged by the codec with shard, key and field */
        }
        if (views != NULL) {
            views[f] = (ingot_field_view_t){.name = rows->fields[f].name, .data = dst, .len = len};
        }
        dst += len;
    }
    return INGOT_OK;
}

static ingot_status_t transform_sample(ingot_loader_h l, loader_worker_ctx_t *w,
                                       const ingot_sample_info_t *s, uint64_t epoch, void *out)
{
    ingot_shard_info_t si;
    const char *shard = ingot_manifest_shard_get(l->manifest, s->shard, &si) == INGOT_OK ? si.path
                                                                                         : "?";
    ingot_sample_view_t view = {.index = s->index,
                                .key = s->key,
                                .label = s->label,
                                .field_count = s->field_count,
                                .fields = w->views,
                                .field_mask = INGOT_SAMPLE_VIEW_FIELD_EPOCH |
                                              INGOT_SAMPLE_VIEW_FIELD_SEED |
                                              INGOT_SAMPLE_VIEW_FIELD_WHERE,
                                .epoch = epoch,
                                .seed = l->params.seed,
                                .shard = shard,
                                .offset = s->offset};
    ingot_last_error_clear();
    ingot_status_t st = l->params.transform(&view, out, l->params.sample_out_size,
                                            l->params.transform_arg);
    if (st != INGOT_OK) {
        /* A built-in transform says what was wrong (ingot_error); a user's may not. */
        char why[512];
        snprintf(why, sizeof(why), "%s", ingot_last_error());
        ingot_error("transform failed on sample '%s' (index %" PRIu64 "): %s (shard '%s' at "
                    "offset %" PRIu64 ")",
                    s->key, s->index, why[0] != '\0' ? why : ingot_status_string(st), shard,
                    s->offset);
    }
    return st;
}

static ingot_status_t process_sample(ingot_loader_h l, loader_worker_ctx_t *w, loader_run_t *run,
                                     uint32_t pos, const char *stored)
{
    loader_slot_t *slot = run->slot;
    ingot_shard_rows_t rows = run_rows(l, slot, pos);
    const ingot_sample_info_t *s = rows.sample;
    char *dst = (char *)slot->host.ptr + slot->offsets[pos];
    uint64_t t0 = ingot_time_ns();
    ingot_status_t st = run->verified ? INGOT_OK : verify_sample(l, &rows, stored, run->scatter);
    uint64_t t1 = ingot_time_ns();
    ingot_hist_record(&l->h_verify, t1 - t0);
    if (st != INGOT_OK || run->scatter) {
        return st;
    }
    int transform = (l->params.transform != NULL);
    st = decode_sample(l, w, &rows, stored, transform ? w->scratch : dst,
                       transform ? w->views : NULL);
    uint64_t t2 = ingot_time_ns();
    ingot_hist_record(&l->h_decode, t2 - t1);
    ingot_trace_event(l->trace, INGOT_TRACE_DECODE, t1, t2, s->index);
    if (st == INGOT_OK && transform) {
        st = transform_sample(l, w, s, slot->epoch, dst);
        uint64_t t3 = ingot_time_ns();
        ingot_hist_record(&l->h_transform, t3 - t2);
        ingot_trace_event(l->trace, INGOT_TRACE_TRANSFORM, t2, t3, s->index);
    }
    return st;
}

static ingot_status_t process_run(ingot_loader_h l, loader_worker_ctx_t *w, loader_run_t *run)
{
    loader_slot_t *slot = run->slot;
    uint64_t t0 = ingot_time_ns(), at = 0;
    int fill = (l->cache != NULL && slot->epoch == ingot_cache_fill_epoch(l->cache));
    for (uint32_t k = 0; k < run->count; k++) {
        uint32_t pos = slot->sorted[run->first + k];
        ingot_shard_rows_t rows = run_rows(l, slot, pos);
        /* where its stored bytes are: the slot (scatter), else its place in the staging buffer
         * (cached runs: records back to back) */
        const char *stored = run->scatter
                                 ? (const char *)slot->host.ptr + slot->offsets[pos]
                                 : (const char *)run->staging + run->shift +
                                       (run->cached ? at : rows.sample->offset - run->offset);
        at += rows.sample->length;
        if (slot->skipped[pos]) {
            continue; /* corrupt at its home and in storage (VERIFY=skip) */
        }
        ingot_status_t st = process_sample(l, w, run, pos, stored);
        if (st == INGOT_ERR_CORRUPT && l->params.verify == INGOT_VERIFY_SKIP) {
            slot->skipped[pos] = 1;
            atomic_fetch_add(&slot->skipped_count, 1);
            stored = NULL;
        } else if (st != INGOT_OK) {
            return st;
        }
        if (fill) {
            ingot_cache_fill(l->cache, &rows, stored, run->scatter);
        }
    }
    ingot_trace_event(l->trace, INGOT_TRACE_VERIFY, t0, ingot_time_ns(), run->count);
    return INGOT_OK;
}

void *ingot_loader_worker_main(void *arg)
{
    loader_worker_ctx_t *w = arg;
    ingot_loader_h l = w->loader;
    ingot_loader_thread_setup(l);
    for (;;) {
        void *item;
        if (ingot_mpmc_pop_wait(&l->work_q, &item, INGOT_DEADLINE_NONE, &l->abort) != INGOT_OK) {
            return NULL;
        }
        loader_run_t *run = item;
        ingot_loader_run_done(l, run, process_run(l, w, run));
    }
}

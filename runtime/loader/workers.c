/*
 * The worker threads: each run's samples verified (content hash), decoded (zstd), transformed and
 * collated into the slot; the worker finishing a step's last run completes the slot (and starts
 * its H2D copy).
 */
#include "runtime/loader/loader_impl.h"
#include "source/cache/cache.h"
#include "runtime/context_impl.h"
#include "base/log.h"
#include "base/time.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>


/* Record @p st as the step's error unless one is recorded already; the thread that records it
 * detected it, so its last error (ingot_error) is the message ingot_loader_next() hands over. */
void ingot_loader_slot_note_error(loader_slot_t *slot, ingot_status_t st)
{
    int expected = INGOT_OK;
    if (atomic_compare_exchange_strong(&slot->status, &expected, st)) {
        const char *msg = ingot_last_error();
        snprintf(slot->error, sizeof(slot->error), "%s",
                 msg[0] != '\0' ? msg : ingot_status_string(st));
    }
}

/* The step failed: only the planner or the thread completing the step's last run calls this,
 * once per step, after every ingot_loader_slot_note_error() of the step (runs_left ordered them). */
void ingot_loader_slot_fail(ingot_loader_h l, loader_slot_t *slot, ingot_status_t st)
{
    ingot_loader_slot_note_error(slot, st);
    atomic_store(&slot->state, SLOT_FAILED);
    ingot_event_notify(&l->ready);
}

/* Check every field's stored bytes against the manifest's hash (the shard codec). */
ingot_status_t ingot_loader_verify_sample(ingot_loader_h l, const ingot_shard_rows_t *rows,
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
        ingot_loader_slot_fail(l, slot, st);
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
        ingot_loader_slot_note_error(slot, status);
    }
    if (atomic_fetch_sub(&slot->runs_left, 1) == 1) {
        slot_complete(l, slot);
    }
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
    ingot_shard_rows_t rows = ingot_loader_run_rows(l, slot, pos);
    const ingot_sample_info_t *s = rows.sample;
    char *dst = (char *)slot->host.ptr + slot->offsets[pos];
    uint64_t t0 = ingot_time_ns();
    ingot_status_t st = run->verified ? INGOT_OK
                                      : ingot_loader_verify_sample(l, &rows, stored, run->scatter);
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

ingot_status_t ingot_loader_process_run(ingot_loader_h l, loader_worker_ctx_t *w, loader_run_t *run)
{
    loader_slot_t *slot = run->slot;
    uint64_t t0 = ingot_time_ns(), at = 0;
    int fill = (l->cache != NULL && slot->epoch == ingot_cache_fill_epoch(l->cache));
    for (uint32_t k = 0; k < run->count; k++) {
        uint32_t pos = slot->sorted[run->first + k];
        ingot_shard_rows_t rows = ingot_loader_run_rows(l, slot, pos);
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
        ingot_loader_run_done(l, run, ingot_loader_process_run(l, w, run));
    }
}

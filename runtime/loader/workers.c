/*
 * The worker threads: each run's samples verified (content hash), decoded (zstd), transformed and
 * collated into the slot; the worker finishing a step's last run completes the slot (and starts
 * its H2D copy).
 */
#include "runtime/loader/loader_impl.h"
#include "base/log.h"
#include "base/stage.h"
#include "base/time.h"
#include <inttypes.h>
#include <stdio.h>


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
    ingot_status_t st = INGOT_OK;
    uint64_t t1 = 0;
    if (!run->verified) { /* a run its reader hashed as it landed is timed with its read */
        uint64_t t0 = ingot_time_ns();
        st = ingot_loader_verify_sample(l, &rows, stored, run->scatter);
        t1 = ingot_time_ns();
        ingot_hist_record(&l->h_verify, t1 - t0);
    }
    if (st != INGOT_OK || run->scatter) {
        return st;
    }
    t1 = t1 ? t1 : ingot_time_ns();
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
    int fill = slot->tiers.filling != 0;
    for (uint32_t k = 0; k < run->count; k++) {
        uint32_t pos = slot->sorted[run->first + k];
        ingot_shard_rows_t rows = ingot_loader_run_rows(l, slot, pos);
        const char *stored = ingot_loader_run_stored(run, pos,
                                                     ingot_loader_run_at(run, rows.sample, at));
        at += rows.sample->length;
        if (slot->skipped[pos]) {
            continue; /* corrupt in its tier and below (VERIFY=skip) */
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
            ingot_tier_chain_fill(l->tiers, &slot->tiers, &rows, stored, run->scatter);
        }
    }
    ingot_trace_event(l->trace, INGOT_TRACE_VERIFY, t0, ingot_time_ns(), run->count);
    return INGOT_OK;
}

static void worker_one(void *arg, void *item)
{
    loader_worker_ctx_t *w = arg;
    ingot_loader_run_done(w->loader, item, ingot_loader_process_run(w->loader, w, item));
}

void *ingot_loader_worker_main(void *arg)
{
    loader_worker_ctx_t *w = arg;
    ingot_loader_thread_setup(w->loader);
    ingot_stage_run(&w->loader->work_q, &w->loader->abort, INGOT_STAGE_STOP, worker_one, w);
    return NULL;
}

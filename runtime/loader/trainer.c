/*
 * The trainer's calls, on the trainer's thread: next (a ready slot handed over, the wait measured
 * as the stall), release (the slot back to the planner, or after the consumer stream's work),
 * save (the resume cursor, collective).
 */
#include "runtime/loader/loader_impl.h"
#include "collectives/engine.h"
#include "runtime/context_impl.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mix.h"
#include "base/time.h"
#include <inttypes.h>
#include <stdlib.h>

#define LOADER_DEPTH_DEFAULT 4
#define LOADER_READERS_LOCAL 2 /* page cache / local NVMe: a couple of threads saturate it */
/* A remote store hides its per-request latency only behind many requests in flight (32 x 5 ms
 * requests per 10 ms step need 16+; measured: 8 readers AU 0.48, 32 readers AU 0.998). */
#define LOADER_READERS_REMOTE 32
#define LOADER_TRACE_EVENTS   (1u << 20)

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
    *cursor_p = (ingot_cursor_t){
        .version = INGOT_CURSOR_VERSION,
        .order_window = l->params.order_mode == INGOT_ORDER_LOCALITY ? l->params.order_window : 0,
        .order_nodes = l->order_nodes,
        .manifest_digest = l->minfo.digest,
        .seed = l->params.seed,
        .epoch = g / l->steps_per_epoch,
        .consumed = (g % l->steps_per_epoch) * l->params.global_batch,
        .global_batch = l->params.global_batch,
        .skipped_count = (uint64_t)total,
        .skipped = all};
    return INGOT_OK;
}

/*
 * What every loader thread shares (planner, readers, workers): its set-up on the ingest cores, a
 * sample's manifest rows as the planner read them, a run's end, and the completion of a slot
 * (READY, its H2D copy started; or FAILED with the step's first error) with its waiter woken.
 */
#include "runtime/loader/loader_impl.h"
#include "runtime/context_impl.h"
#include "base/log.h"
#include "base/time.h"
#include <stdio.h>

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

/* The rows of the sample at slice position @p pos, as the planner read them. */
uint64_t ingot_loader_run_at(const loader_run_t *run, const ingot_sample_info_t *s, uint64_t at)
{
    return run->located ? at : s->offset - run->offset;
}

const char *ingot_loader_run_stored(const loader_run_t *run, uint32_t pos, uint64_t at)
{
    return run->scatter ? (const char *)run->slot->host.ptr + run->slot->offsets[pos]
                        : (const char *)run->staging + run->shift + at;
}

ingot_shard_rows_t ingot_loader_run_rows(ingot_loader_h l, const loader_slot_t *slot, uint32_t pos)
{
    return (ingot_shard_rows_t){.sample = &slot->info[pos],
                                .fields = &slot->fields[(size_t)pos * l->fields_max]};
}

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

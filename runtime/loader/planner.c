/*
 * The planner thread: it turns a free slot into a step's runs (the step's samples grouped by
 * shard, adjacent ones coalesced; the samples a tier locates grouped by where they are, in the
 * tier's order) and hands them to the readers.
 */
#include "runtime/loader/loader_impl.h"
#include "base/time.h"
#include <stdlib.h>

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
        if (run != NULL && run->scatter == scatter &&
            ingot_loader_run_joins(run->shard, run->offset, run->length, run->count, s->shard,
                                   s->offset, s->length, gap_max)) {
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
                              .scatter = scatter};
    }
}

/* Located samples first, grouped by tier and group (each rank starting with the group after its
 * own number, so the ranks' requests spread over the groups, such as home ranks), in the
 * tier's order within a group; then the rest by location in the shards. */
static int cmp_located(const void *a, const void *b, void *arg)
{
    const struct ingot_loader *l = arg;
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    if (l->plan_located[x] != l->plan_located[y]) {
        return l->plan_located[x] ? -1 : 1;
    }
    if (!l->plan_located[x]) {
        return cmp_location(a, b, (void *)l->plan_info);
    }
    const ingot_tier_loc_t *lx = &l->plan_loc[x], *ly = &l->plan_loc[y];
    if (lx->tier != ly->tier) {
        return lx->tier < ly->tier ? -1 : 1;
    }
    int64_t w = l->world, rx = ((int64_t)lx->group - l->rank - 1 + w) % w,
            ry = ((int64_t)ly->group - l->rank - 1 + w) % w;
    if (rx != ry) {
        return rx < ry ? -1 : 1;
    }
    return (lx->key > ly->key) - (lx->key < ly->key);
}

/* Runs of located samples: one tier and group each, up to LOADER_RUN_BYTES of records. */
static void plan_runs_located(ingot_loader_h l, loader_slot_t *slot, uint32_t nlocated)
{
    loader_run_t *run = NULL;
    for (uint32_t k = 0; k < nlocated; k++) {
        uint32_t pos = slot->sorted[k];
        const ingot_sample_info_t *s = &slot->info[pos];
        const ingot_tier_loc_t *loc = &l->plan_loc[pos];
        int scatter = slot->scatter[pos];
        if (run != NULL && run->loc.tier == loc->tier && run->loc.group == loc->group &&
            run->scatter == scatter && run->count < LOADER_RUN_SAMPLES_MAX &&
            run->length + s->length <= LOADER_RUN_BYTES) {
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
                              .located = 1,
                              .loc = *loc};
    }
}

/* Sort the step's samples and group them into runs. */
static void plan_sort_runs(ingot_loader_h l, loader_slot_t *slot)
{
    uint32_t nlocated = 0;
    if (slot->tiers.locating != 0) {
        for (uint32_t i = 0; i < slot->nsamples; i++) {
            l->plan_located[i] = (uint8_t)ingot_tier_chain_locate(l->tiers, &slot->tiers,
                                                                  &slot->info[i], &l->plan_loc[i]);
            nlocated += l->plan_located[i];
        }
    }
    if (nlocated == 0) {
        qsort_r(slot->sorted, slot->nsamples, sizeof(*slot->sorted), cmp_location, slot->info);
        plan_runs(l, slot, 0);
        return;
    }
    l->plan_info = slot->info;
    qsort_r(slot->sorted, slot->nsamples, sizeof(*slot->sorted), cmp_located, l);
    slot->nruns = 0;
    plan_runs_located(l, slot, nlocated);
    plan_runs(l, slot, nlocated);
}

/* Each run carries the manifest's opaque id of its shard (sources name bytes by it);
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


static ingot_status_t plan_step(ingot_loader_h l, loader_slot_t *slot, uint64_t rel)
{
    uint64_t g = l->start_step + rel, cursor = 0;
    slot->step = rel;
    ingot_tier_chain_advance(l->tiers, g); /* the tiers' clock */
    slot->epoch = g / l->steps_per_epoch;
    ingot_tier_chain_step(l->tiers, slot->epoch, &slot->tiers);
    slot->epoch_step = g % l->steps_per_epoch;
    slot->nsamples = l->slice;
    atomic_store(&slot->status, INGOT_OK);
    atomic_store(&slot->skipped_count, 0);
    atomic_store(&slot->ndevice, 0);
    ingot_status_t st = ingot_order_slice(l->order, slot->epoch, slot->epoch_step, l->slice_rank,
                                          (uint32_t)l->world, l->slice_ids, l->slice);
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
            ingot_loader_slot_fail(l, slot, st);
        }
    }
}

/*
 * The reader threads: one request per run, to the source of the tier that located its samples or
 * to the chain's sources for shard byte ranges (storage last), straight into the slot or into
 * staging; a request past its deadline is quarantined until its source lets go of the buffer; a
 * located run whose content fails its hash is read again from the sources below.
 */
#include "runtime/loader/loader_impl.h"
#include "runtime/context_impl.h"
#include "base/log.h"
#include "base/stage.h"
#include "base/time.h"
#include <inttypes.h>
#include <string.h>

/* Whether a run's bytes are fetched straight into the device slot: located samples, delivered
 * as stored, that their tier reads into GPU memory. */
static int run_to_device(ingot_loader_h l, const loader_run_t *run)
{
    return l->fetch_device >= 0 && run->located && run->scatter && run->loc.device;
}

/* iovecs scattering a run's stored bytes: fields into their slot positions (in the device slot
 * when @p device), gaps to request @p lr's own sink (a tier may write two requests' gaps from two
 * threads at once: the disk tier's readers, a transport's progress thread). */
static int build_scatter(ingot_loader_h l, const loader_req_t *lr, loader_run_t *run,
                         struct iovec *iov, int max, int device)
{
    loader_slot_t *slot = run->slot;
    uint64_t cursor = run->offset;
    char *base = device ? (char *)slot->device : (char *)slot->host.ptr;
    const loader_reader_ctx_t *rd = lr->reader;
    size_t sink = (size_t)(rd - l->rctx) * LOADER_REQS_PER_READER + (size_t)(lr - rd->reqs);
    char *gap = (char *)(device ? l->gap_device : l->gap_scratch) + sink * l->gap_scratch_size;
    int n = 0;
    for (uint32_t k = 0; k < run->count; k++) {
        uint32_t pos = slot->sorted[run->first + k];
        ingot_shard_rows_t rows = ingot_loader_run_rows(l, slot, pos);
        char *dst = base + slot->offsets[pos];
        if (run->located) {
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
        int n = build_scatter(l, lr, run, rd->iov, (int)l->iov_cap, device);
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

/* Record bytes of the run's samples (what the per-epoch counters add up). */
static uint64_t run_record_bytes(const loader_run_t *run)
{
    if (run->located) {
        return run->length;
    }
    uint64_t n = 0;
    for (uint32_t k = 0; k < run->count; k++) {
        n += run->slot->info[run->slot->sorted[run->first + k]].length;
    }
    return n;
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
                                .extents = run->located ? rd->extents : NULL,
                                .nextents = run->located ? run->count : 0,
                                .epoch = run->slot->epoch,
                                .step = l->start_step + run->slot->step, /* global, as advance */
                                .records = run_record_bytes(run),
                                .direct = run->direct,
                                .cb = ingot_loader_req_done,
                                .arg = lr,
                                .done_ev = &rd->done};
    ingot_status_t st = INGOT_ERR_NOT_FOUND;
    for (uint32_t i = 0; i < nsrcs; i++) {
        ingot_loader_landed_arm(l, lr, run); /* afresh: a source that said "retry" may have
                                                reported bytes it then left */
        if ((st = req_target(l, rd, run, lr)) != INGOT_OK ||
            (st = ingot_source_submit(srcs[i], req)) != INGOT_OK) {
            return st;
        }
        st = ingot_source_wait(srcs[i], req, &rd->done, &l->abort, quarantined_p);
        if (*quarantined_p || !req->retry) {
            run->transit = run->located || !srcs[i]->ops->local;
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
    rd->disk += *quarantined_p ? 0 : lr->req.cached; /* what a caching tier served itself */
    if (st != INGOT_OK && !*quarantined_p && lr->req.retry) {
        char d[INGOT_SOURCE_DESCRIBE_MAX];
        ingot_error("no byte source holds %" PRIu64 " bytes at offset %" PRIu64 " of %s (%s)",
                    run->length, run->offset,
                    ingot_tier_chain_describe(l->tiers, run->shard, d, sizeof(d)),
                    ingot_status_string(st));
    }
    return st;
}

/* Read sample @p k of a run from the sources below (@p direct: from the source itself, around
 * every cache), into its place in the run's target (@p at: where its record starts in the run's
 * bytes). */
static ingot_status_t read_sample_storage(ingot_loader_h l, loader_reader_ctx_t *rd,
                                          loader_run_t *run, uint32_t k, uint64_t at, int direct,
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
                        .staging = run->scatter ? NULL : (char *)run->staging + run->shift + at,
                        .room = (size_t)s->length,
                        .direct = direct};
    st = read_sources(l, rd, &one, lr, quarantined_p);
    run->transit |= one.transit;
    return st;
}

/* A located run its tier could not serve: its samples one by one from the sources below. */
static ingot_status_t read_located_below(ingot_loader_h l, loader_reader_ctx_t *rd,
                                         loader_run_t *run, loader_req_t *lr, int *quarantined_p)
{
    uint64_t at = 0;
    run->shift = 0;
    for (uint32_t k = 0; k < run->count; k++) {
        ingot_status_t st = read_sample_storage(l, rd, run, k, at, 0, lr, quarantined_p);
        if (st != INGOT_OK || *quarantined_p) {
            return st;
        }
        at += run->slot->info[run->slot->sorted[run->first + k]].length;
    }
    return INGOT_OK;
}

/* A located run from its tier; from the sources below when the tier cannot serve it. Sets
 * *from_p to where the bytes came from. */
static ingot_status_t read_located(ingot_loader_h l, loader_reader_ctx_t *rd, loader_run_t *run,
                                   loader_req_t *lr, int *quarantined_p, int *from_p)
{
    for (uint32_t k = 0; k < run->count; k++) {
        const ingot_sample_info_t *s = &run->slot->info[run->slot->sorted[run->first + k]];
        rd->extents[k] = (ingot_source_extent_t){s->offset, s->length, s->index};
    }
    ingot_source_t *tier = ingot_tier_chain_source(l->tiers, run->loc.tier);
    ingot_status_t st = read_chain(l, rd, run, lr, &tier, 1, quarantined_p);
    *from_p = run->loc.from;
    if (st == INGOT_OK && !*quarantined_p && run_to_device(l, run)) {
        /* in the device slot already: the batch's H2D copy leaves these positions out */
        for (uint32_t k = 0; k < run->count; k++) {
            run->slot->on_device[run->slot->sorted[run->first + k]] = 1;
        }
        atomic_fetch_add(&run->slot->ndevice, run->count);
    }
    if (st != INGOT_OK && !*quarantined_p && lr->req.retry) {
        *from_p = INGOT_TIER_FROM_STORAGE;
        st = read_located_below(l, rd, run, lr, quarantined_p);
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
    ingot_loader_landed_settle(lr); /* a report from the source's thread still reads the run */
    lr->staging = run->staging;     /* the source still writes there: out of service */
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
    *from_p = INGOT_TIER_FROM_STORAGE;
    lr->landed.want = run;
    st = run->located ? read_located(l, rd, run, lr, &quarantined, from_p)
                      : read_sources(l, rd, run, lr, &quarantined);
    if (quarantined) {
        req_quarantine(lr, run);
        return st;
    }
    run->shift = run->located ? 0 : lr->req.shift;
    if (st == INGOT_OK) {
        run->verified = ingot_loader_landed_finish(lr);
    }
    ingot_loader_landed_disarm(lr);
    return st;
}

void ingot_loader_req_done(ingot_source_req_t *req, int late)
{
    /* Not req->arg: once DONE is published the reader may rewrite the request at once (a late
     * completion that loses to the quarantining reader's own call below still got here). */
    loader_req_t *lr = ingot_loader_req_of(req);
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

/* Re-reads of one sample that keep returning different wrong bytes (damage in transit each
 * time) before the loader gives up on it, within the request's deadline. */
#define LOADER_REREADS_MAX 8

/* Said once per loader: the first sample read again, and where from. */
static void reread_say(ingot_loader_h l, const ingot_shard_rows_t *rows, int from)
{
    static const char *const names[INGOT_TIER_FROM_COUNT] = {"storage", "a peer's cache",
                                                             "this rank's cache", "a node's disk"};
    if (atomic_exchange(&l->said_reread, 1) == 0) {
        char d[INGOT_SOURCE_DESCRIBE_MAX];
        ingot_warn("loader: sample '%s' (index %" PRIu64 ") from %s failed its hash: read again "
                   "from the source itself, %s (bytes damaged on their way are read again, those "
                   "damaged at rest are named; further re-reads are counted in the loader's "
                   "stats, not said)",
                   rows->sample->key, rows->sample->index, names[from],
                   ingot_tier_chain_describe(l->tiers, rows->sample->shard, d, sizeof(d)));
    }
}

/* Sample @p k of @p run failed its hash (@p bad: the field and what its bytes hash to) after a
 * read that could have damaged it: read again from the source itself, around every cache, until
 * its bytes verify. Two reads that return the same wrong bytes are damage at rest: the loader's
 * INGOT_VERIFY decides, named as ever. Different wrong bytes each time are damage in transit,
 * read again up to LOADER_REREADS_MAX times within the request's deadline (each read also under
 * the sources' own retries). @p at: where its record is in the run's bytes. */
static ingot_status_t reread_sample(ingot_loader_h l, loader_reader_ctx_t *rd, loader_run_t *run,
                                    uint32_t k, uint64_t at, const ingot_shard_rows_t *rows,
                                    ingot_shard_damage_t bad, int from)
{
    const char *stored = ingot_loader_run_stored(run, run->slot->sorted[run->first + k], at);
    ingot_shard_layout_t layout = run->scatter ? INGOT_SHARD_LAYOUT_PACKED
                                               : INGOT_SHARD_LAYOUT_STORED;
    uint64_t deadline = ingot_deadline_after(l->timeout_ns);
    reread_say(l, rows, from);
    for (uint32_t n = 1;; n++) {
        loader_req_t *lr;
        int quarantined = 0;
        ingot_status_t st = reader_req(l, rd, &lr);
        if (st != INGOT_OK) {
            return st;
        }
        atomic_fetch_add_explicit(&l->rereads[from], 1, memory_order_relaxed);
        st = read_sample_storage(l, rd, run, k, at, 1, lr, &quarantined);
        if (quarantined) {
            req_quarantine(lr, run);
        }
        if (st != INGOT_OK) {
            return st;
        }
        ingot_shard_damage_t again;
        st = ingot_shard_codec_verify(l->manifest, rows, (const uint8_t *)stored, layout,
                                      INGOT_SHARD_VERIFY_QUIET, &again);
        if (st == INGOT_OK) {
            return INGOT_OK;
        }
        if (again.field == bad.field && again.hash == bad.hash) {
            atomic_fetch_add_explicit(&l->rereads_at_rest, 1, memory_order_relaxed);
            return ingot_loader_verify_sample(l, rows, stored, run->scatter); /* named */
        }
        if (n >= LOADER_REREADS_MAX || ingot_time_ns() >= deadline) {
            char d[INGOT_SOURCE_DESCRIBE_MAX];
            return ingot_fail(
                INGOT_ERR_CORRUPT,
                "sample '%s' (index %" PRIu64 ") field '%s': read %u times from %s, "
                "different wrong bytes each time (damaged in transit); gave up",
                rows->sample->key, rows->sample->index, rows->fields[again.field].name, n + 1,
                ingot_tier_chain_describe(l->tiers, rows->sample->shard, d, sizeof(d)));
        }
        bad = again;
        from = INGOT_TIER_FROM_STORAGE; /* the source itself, from here on */
    }
}

/* Verify a run's samples where they landed, in the reader: a run from a tier (the peer cache) or
 * through a source that is not local (the object store, the emulated store, the node's disk). A
 * sample that fails its hash is said to the tier that held it (its key and group; the disk tier
 * removes the entries it spans), counted, and read again from the source itself (its record
 * bytes added to *refetched_p), then verified under the loader's policy. */
static ingot_status_t verify_run_here(ingot_loader_h l, loader_reader_ctx_t *rd, loader_run_t *run,
                                      uint64_t *refetched_p)
{
    loader_slot_t *slot = run->slot;
    uint64_t at = 0;
    *refetched_p = 0;
    for (uint32_t k = 0; k < run->count && l->params.verify != INGOT_VERIFY_OFF; k++) {
        uint32_t pos = slot->sorted[run->first + k];
        ingot_shard_rows_t rows = ingot_loader_run_rows(l, slot, pos);
        uint64_t where = ingot_loader_run_at(run, rows.sample, at);
        ingot_shard_damage_t bad;
        ingot_status_t st = ingot_shard_codec_verify(
            l->manifest, &rows, (const uint8_t *)ingot_loader_run_stored(run, pos, where),
            run->scatter ? INGOT_SHARD_LAYOUT_PACKED : INGOT_SHARD_LAYOUT_STORED,
            INGOT_SHARD_VERIFY_QUIET, &bad);
        if (st == INGOT_ERR_CORRUPT) {
            int from = INGOT_TIER_FROM_STORAGE;
            if (run->located) {
                ingot_tier_chain_corrupt(l->tiers, run->loc.tier, rows.sample, run->loc.group);
                from = run->loc.from;
            } else {
                from = ingot_tier_chain_damaged(l->tiers, rows.sample);
            }
            st = reread_sample(l, rd, run, k, where, &rows, bad, from);
            *refetched_p += rows.sample->length;
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

/* Of @p records bytes read down the chain in @p len request bytes, the share the disk tier served
 * (@p disk of the @p len). */
static uint64_t disk_share(uint64_t records, uint64_t len, uint64_t disk)
{
    disk = disk < len ? disk : len;
    return len ? (uint64_t)((unsigned __int128)records * disk / len) : 0;
}

static void read_account(ingot_loader_h l, const loader_run_t *run, uint64_t t0, int from,
                         uint64_t refetched, uint64_t disk)
{
    uint64_t t1 = ingot_time_ns();
    uint64_t records = run_record_bytes(run);
    ingot_hist_record(&l->h_read, t1 - t0);
    ingot_trace_event(l->trace, INGOT_TRACE_READ, t0, t1, run->length);
    /* down the chain: the whole run, or the samples a located run read again */
    uint64_t chain_records = from == INGOT_TIER_FROM_STORAGE ? records : refetched;
    uint64_t chain_len = from == INGOT_TIER_FROM_STORAGE && !run->located ? run->length
                                                                          : chain_records;
    uint64_t disk_records = disk_share(chain_records, chain_len, disk);
    atomic_fetch_add_explicit(&l->bytes_read, chain_len - (disk < chain_len ? disk : chain_len),
                              memory_order_relaxed); /* storage: below every cache */
    if (from == INGOT_TIER_FROM_STORAGE) {
        atomic_fetch_add_explicit(&l->read_requests, run->located ? run->count : 1,
                                  memory_order_relaxed);
    }
    uint64_t e = run->slot->epoch - l->first_epoch;
    if (e < l->nepochs) {
        _Atomic uint64_t *c = &l->epoch_bytes[e * INGOT_TIER_FROM_COUNT];
        atomic_fetch_add_explicit(&l->epoch_reads[e], run->count, memory_order_relaxed);
        if (from != INGOT_TIER_FROM_STORAGE) {
            atomic_fetch_add_explicit(&c[from], records - refetched, memory_order_relaxed);
        }
        atomic_fetch_add_explicit(&c[INGOT_TIER_FROM_STORAGE], chain_records - disk_records,
                                  memory_order_relaxed);
        atomic_fetch_add_explicit(&c[INGOT_TIER_FROM_DISK], disk_records, memory_order_relaxed);
    }
}

/* One run: read, verified when a tier served it, counted; finished here when its bytes are in
 * place, else handed to a worker. */
static void reader_one(void *arg, void *item)
{
    loader_reader_ctx_t *rd = arg;
    ingot_loader_h l = rd->loader;
    loader_run_t *run = item;
    uint64_t t0 = ingot_time_ns(), refetched = 0;
    int from = INGOT_TIER_FROM_STORAGE;
    rd->disk = 0;
    ingot_status_t st = read_run(l, rd, run, &from);
    if (st == INGOT_OK && run->transit && !run->verified) {
        st = verify_run_here(l, rd, run, &refetched);
    }
    read_account(l, run, t0, from, refetched, rd->disk);
    if (st == INGOT_OK && run->scatter) {
        /* Bytes already in place: verify them now, while they are still in this core's cache,
         * and finish the run here (a worker would read them back from memory). */
        ingot_loader_run_done(l, run, ingot_loader_process_run(l, NULL, run));
        return;
    }
    if (st == INGOT_OK) {
        st = ingot_mpmc_push_wait(&l->work_q, run, INGOT_DEADLINE_NONE, &l->abort);
    }
    if (st != INGOT_OK) {
        ingot_loader_run_done(l, run, st);
    }
}

void *ingot_loader_reader_main(void *arg)
{
    loader_reader_ctx_t *rd = arg;
    ingot_loader_thread_setup(rd->loader);
    ingot_stage_run(&rd->loader->read_q, &rd->loader->abort, INGOT_STAGE_STOP, reader_one, rd);
    return NULL;
}

/*
 * A run's fields hashed as its bytes land. A source reports the prefix of a request's bytes that
 * is in place (ingot_source_landed: POSIX after each INGOT_HASH_PIECE read, others at their own
 * pace or not at all); the hasher walks the run's fields in the order of those bytes and feeds
 * each the part of it the prefix covers (shard/codec.h's stream: one-shot for a field that lands
 * whole, streaming XXH3-64 for one split across pieces). Tar headers and padding between fields
 * are skipped. The bytes are hashed once, in order, while still in the cache of the core that
 * read them, instead of in a second pass over the run after the whole read (a 4 MiB run has left
 * the L2 by then). A prefix reported again lower (a source writing bytes again) restarts the
 * field it falls in; what no report covered is hashed at completion.
 */
#include "runtime/loader/loader_impl.h"
#include <sched.h>

/* Where the run's request bytes of @p fi of sample @p s start. */
static uint64_t landed_start(const loader_landed_t *h, const ingot_sample_info_t *s,
                             const ingot_field_info_t *fi)
{
    return h->run->located ? h->rec + fi->offset : s->offset + fi->offset - h->run->offset;
}

/* Feed every field the prefix [0, upto) reaches; fields ending at or before @p skip are taken as
 * checked already (their bytes were not written again). */
static void landed_walk(ingot_loader_h l, loader_landed_t *h, uint64_t upto, uint64_t skip)
{
    loader_run_t *run = h->run;
    loader_slot_t *slot = run->slot;
    while (h->k < run->count) {
        uint32_t pos = slot->sorted[run->first + h->k];
        ingot_shard_rows_t rows = ingot_loader_run_rows(l, slot, pos);
        if (h->f == rows.sample->field_count) {
            h->rec += rows.sample->length;
            h->k++;
            h->f = 0;
            h->packed = 0;
            continue;
        }
        const ingot_field_info_t *fi = &rows.fields[h->f];
        uint64_t start = landed_start(h, rows.sample, fi);
        if (start + fi->stored_len > skip) {
            if (upto < start) {
                return;
            }
            uint64_t have = upto - start < fi->stored_len ? upto - start : fi->stored_len;
            const uint8_t *bytes = run->scatter ? (const uint8_t *)slot->host.ptr +
                                                      slot->offsets[pos] + h->packed
                                                : (const uint8_t *)run->staging + start;
            int r = ingot_shard_stream_feed(&h->stream, fi, bytes, have);
            if (r == 0) {
                return;
            }
            if (r < 0 && h->bad_end == 0) {
                h->bad_end = start + fi->stored_len;
            }
        }
        h->packed += fi->stored_len;
        h->f++;
    }
}

/* Back to the run's first field. */
static void landed_rewind(loader_landed_t *h)
{
    h->k = h->f = 0;
    h->rec = h->packed = 0;
    ingot_shard_stream_restart(&h->stream);
}

/* The source's report (its thread, while the bytes are hot). */
static void landed_cb(ingot_source_req_t *req, uint64_t upto)
{
    loader_req_t *lr = ingot_loader_req_of(req);
    loader_landed_t *h = &lr->landed;
    /* Raised before the state is read (both sequentially consistent), as the quarantine moves
     * the state before it reads this: either the report sees the request past its deadline, or
     * the quarantine waits for the walk to end (ingot_loader_landed_settle). */
    atomic_store(&h->walking, 1);
    if (h->run == NULL || atomic_load(&req->state) != INGOT_SOURCE_REQ_PENDING) {
        atomic_store(&h->walking, 0);
        return; /* not hashed, or past its deadline: the run fails anyway */
    }
    ingot_loader_h l = lr->reader->loader;
    if (upto < h->upto) { /* bytes past upto are written again: hash them again */
        uint64_t bad = h->bad_end;
        landed_rewind(h);
        h->bad_end = bad > upto ? 0 : bad;
        h->upto = upto;
        landed_walk(l, h, upto, upto);
    } else {
        h->upto = upto;
        landed_walk(l, h, upto, 0);
    }
    atomic_store(&h->walking, 0);
}

void ingot_loader_landed_settle(loader_req_t *lr)
{
    while (atomic_load(&lr->landed.walking)) {
        sched_yield(); /* a report hashes one piece of a few hundred KiB at most */
    }
}

void ingot_loader_landed_arm(ingot_loader_h l, loader_req_t *lr, loader_run_t *run)
{
    loader_landed_t *h = &lr->landed;
    ingot_source_req_t *req = &lr->req;
    if (run != h->want) { /* a read of part of it (one sample again, from below) */
        h->run = NULL;
        req->landed = NULL;
        return;
    }
    int host = run->scatter ? !(l->fetch_device >= 0 && run->located && run->loc.device)
                            : !l->direct_io; /* an O_DIRECT window lands at a shift */
    if (l->params.verify == INGOT_VERIFY_OFF || h->stream.xxh == NULL || !host) {
        h->run = NULL;
        req->landed = NULL;
        return;
    }
    landed_rewind(h);
    h->run = run;
    h->upto = 0;
    h->bad_end = 0;
    req->landed = landed_cb;
    req->piece = l->hash_piece;
}

int ingot_loader_landed_finish(loader_req_t *lr)
{
    loader_landed_t *h = &lr->landed;
    if (h->run == NULL || lr->req.shift != 0) {
        h->run = NULL;
        return 0;
    }
    ingot_loader_h l = lr->reader->loader;
    landed_walk(l, h, h->run->length, 0);
    int ok = h->k == h->run->count && h->bad_end == 0;
    if (ok) { /* otherwise hashed again after, sample by sample: counted there */
        atomic_fetch_add_explicit(&l->bytes_landed, h->upto, memory_order_relaxed);
    }
    h->run = NULL;
    return ok;
}

void ingot_loader_landed_disarm(loader_req_t *lr)
{
    lr->landed.run = NULL;
    lr->landed.want = NULL;
    lr->req.landed = NULL;
}

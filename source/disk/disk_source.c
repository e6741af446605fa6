/*
 * The disk tier as a byte source (see disk.h): a request's range cut into pieces, each read from
 * this node's folder, from its home node, or from the source below (the whole piece, then written
 * through). Requests complete inside submit, in the submitting thread, as POSIX reads do.
 */
#include "source/disk/disk_impl.h"
#include "base/log.h"
#include "base/time.h"
#include "shard/codec.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* Where the next byte of a request lands in its iovecs. */
typedef struct disk_dst {
    const struct iovec *iov;
    int n, i;
    size_t off;
} disk_dst_t;

static void dst_copy(disk_dst_t *t, const uint8_t *src, uint64_t len)
{
    while (len > 0 && t->i < t->n) {
        size_t room = t->iov[t->i].iov_len - t->off;
        size_t n = room < len ? room : (size_t)len;
        memcpy((uint8_t *)t->iov[t->i].iov_base + t->off, src, n);
        src += n;
        len -= n;
        t->off += n;
        if (t->off == t->iov[t->i].iov_len) {
            t->i++;
            t->off = 0;
        }
    }
}

/* A read from below completed after its waiter gave up: its buffer comes back now. Nothing of
 * the request is touched otherwise: its waiter may be rewriting it for the next read already. */
static void disk_sub_late(ingot_source_req_t *sub, int late)
{
    if (late) {
        disk_buf_t *b = sub->arg;
        ingot_disk_buf_put(b->d, b);
    }
}

ingot_status_t ingot_disk_read_below_submit(ingot_disk_t *d, uint64_t p, uint64_t off, uint64_t len,
                                            uint64_t epoch, disk_buf_t *b, uint64_t deadline_ns)
{
    uint32_t shard = ingot_disk_shard_of(d, p);
    uint64_t first = d->piece0[shard], plen = ingot_disk_piece_len(d, p);
    uint8_t *payload = b->mem + INGOT_DISK_HEADER_BYTES;
    b->len = len < plen - off ? len : plen - off;
    b->iov = (struct iovec){.iov_base = payload, .iov_len = (size_t)b->len};
    b->sub = (ingot_source_req_t){.shard = shard,
                                  .shard_id = d->shard_hash[shard],
                                  .offset = ((p - first) << d->piece_log2) + off,
                                  .length = b->len,
                                  .iov = &b->iov,
                                  .iovcnt = 1,
                                  .slack = (size_t)(d->piece_bytes - b->len) + DISK_SLACK,
                                  .deadline_ns = deadline_ns,
                                  .epoch = epoch,
                                  .cb = disk_sub_late,
                                  .arg = b,
                                  .done_ev = &b->ev};
    b->key = ingot_disk_key(d, p);
    b->piece = p;
    b->off = off;
    b->layout = 0;
    b->kind = DISK_FILL_DEMAND;
    return ingot_source_submit(d->below, &b->sub);
}

ingot_status_t ingot_disk_read_below_wait(ingot_disk_t *d, disk_buf_t *b, ingot_status_t st)
{
    int quarantined = 0;
    if (st == INGOT_OK) {
        st = ingot_source_wait(d->below, &b->sub, &b->ev, &d->abort, &quarantined);
    }
    if (quarantined) {
        return st; /* the buffer is the source's until it completes (disk_sub_late) */
    }
    if (st == INGOT_OK && b->sub.retry) {
        st = b->sub.status != INGOT_OK ? b->sub.status : INGOT_ERR_NOT_FOUND;
    }
    uint8_t *payload = b->mem + INGOT_DISK_HEADER_BYTES;
    if (st == INGOT_OK && b->sub.shift != 0) { /* an O_DIRECT window: the piece where it belongs */
        memmove(payload, payload + b->sub.shift, (size_t)b->len);
    }
    atomic_fetch_add(&d->bytes_below, st == INGOT_OK ? b->len : 0);
    return st;
}

ingot_status_t ingot_disk_read_below(ingot_disk_t *d, uint64_t p, uint64_t off, uint64_t len,
                                     uint64_t epoch, disk_buf_t *b, uint64_t deadline_ns)
{
    return ingot_disk_read_below_wait(
        d, b, ingot_disk_read_below_submit(d, p, off, len, epoch, b, deadline_ns));
}

int ingot_disk_piece_sound(ingot_disk_t *d, uint64_t p, disk_buf_t *b)
{
    uint32_t shard = ingot_disk_shard_of(d, p);
    uint64_t start = ((p - d->piece0[shard]) << d->piece_log2) + b->off, end = start + b->len;
    const uint8_t *payload = b->mem + INGOT_DISK_HEADER_BYTES;
    ingot_shard_info_t si;
    int sound = ingot_manifest_shard_get(d->p.manifest, shard, &si) == INGOT_OK;
    ingot_sample_info_t s;
    uint64_t i = si.first_sample, bad = UINT64_MAX;
    for (; sound && i < si.first_sample + si.sample_count; i++) {
        /* a shard's rows need not be in offset order: every one is looked at */
        if (ingot_manifest_sample_get(d->p.manifest, i, &s) != INGOT_OK) {
            sound = 0;
        } else if (s.offset >= start && s.offset + s.length <= end) {
            ingot_shard_rows_t rows = {&s, b->rows};
            sound = ingot_shard_rows_fields(d->p.manifest, &s, b->rows, d->fields_max) ==
                        INGOT_OK &&
                    ingot_shard_codec_verify(d->p.manifest, &rows, payload + (s.offset - start),
                                             INGOT_SHARD_LAYOUT_STORED, INGOT_SHARD_VERIFY_QUIET,
                                             NULL) == INGOT_OK;
            bad = i;
        }
    }
    if (!sound) {
        atomic_fetch_add(&d->damaged_fills, 1);
        char name[INGOT_DISK_NAME_MAX];
        ingot_disk_key_t key = ingot_disk_key(d, p);
        ingot_disk_entry_name(&key, 0, name, sizeof(name));
        if (atomic_exchange(&d->said_damaged, 1) == 0) {
            ingot_warn("disk tier: piece %s of shard %u read from storage does not verify (sample "
                       "index %" PRIu64 "): damaged on its way in, not written (further ones are "
                       "counted in the report, not said)",
                       name, shard, bad);
        }
    }
    return sound;
}

/* Whether @p req's owner checks every sample it reads against the manifest (it hashes them as
 * they land, source.h): this node's entries are then read without their block hashes, so the
 * bytes are hashed once; a sample that fails names its entries (ingot_disk_damaged()). */
static int owner_checks(const ingot_source_req_t *req)
{
    return req->landed != NULL;
}

/* From the disk: this node's folder or the piece's home. INGOT_ERR_NOT_FOUND: a miss. */
static ingot_status_t piece_from_disk(ingot_disk_t *d, uint64_t p, uint64_t off, uint64_t len,
                                      disk_buf_t *b, disk_dst_t *dst, const ingot_source_req_t *req)
{
    int home = d->home[p];
    ingot_status_t st;
    uint64_t deadline_ns = req->deadline_ns;
    if (home == d->node) {
        uint8_t *blocks = b->mem + INGOT_DISK_HEADER_BYTES;
        size_t shift;
        st = ingot_disk_read_local(d, p, off, len, blocks, d->piece_bytes, !owner_checks(req),
                                   &shift);
        if (st == INGOT_OK) {
            dst_copy(dst, blocks + shift, len);
            atomic_fetch_add_explicit(&d->piece_hits[p], 1, memory_order_relaxed);
        }
    } else {
        uint8_t *tmp = b->mem + INGOT_DISK_HEADER_BYTES;
        st = ingot_disk_read_home(d, p, home, off, len, tmp, deadline_ns);
        if (st == INGOT_OK) {
            dst_copy(dst, tmp, len);
            atomic_fetch_add(&d->remote_hits, 1);
        }
    }
    if (st == INGOT_OK) {
        atomic_fetch_add(&d->hits, 1);
        atomic_fetch_add(&d->bytes_disk, len);
    }
    return st;
}

/* One of the DISK_PARTS_OUT credits of a part on its way to its keeper: waited for a moment
 * (DISK_PARTS_WAIT_NS, never past @p deadline_ns), as a whole fill waits for a buffer when the
 * writers lag; 0 when none came (the keeper's writers stuck: the part is dropped). */
static int part_credit(ingot_disk_t *d, uint64_t deadline_ns)
{
    uint64_t until = ingot_deadline_after(DISK_PARTS_WAIT_NS);
    until = until < deadline_ns ? until : deadline_ns;
    for (;;) {
        uint32_t out = atomic_load(&d->parts_out);
        if (out < DISK_PARTS_OUT) {
            if (atomic_compare_exchange_weak(&d->parts_out, &out, out + 1)) {
                return 1;
            }
            continue;
        }
        if (ingot_time_ns() >= until || ingot_abort_is_raised(&d->abort)) {
            return 0;
        }
        struct timespec pause = {0, 200000};
        nanosleep(&pause, NULL);
    }
}

/* One piece's part of a request: [off, off + len) of piece @p p into @p dst. *@p cached_p: the
 * bytes served from a disk. */
static ingot_status_t disk_piece(ingot_disk_t *d, ingot_source_req_t *req, uint64_t p, uint64_t off,
                                 uint64_t len, disk_dst_t *dst, uint64_t *cached_p)
{
    disk_buf_t *b = ingot_disk_buf_get(d, req->deadline_ns);
    if (b == NULL) {
        return ingot_fail(INGOT_ERR_TIMED_OUT,
                          "disk tier: no buffer free before the request's "
                          "deadline (%u buffers)",
                          d->nbufs);
    }
    ingot_status_t st = piece_from_disk(d, p, off, len, b, dst, req);
    if (st == INGOT_OK) {
        *cached_p += len;
        ingot_disk_buf_put(d, b);
        return INGOT_OK;
    }
    atomic_fetch_add(&d->misses, 1);
    /* the whole piece when its keeper wants it written through, else only these bytes; with
     * INGOT_DISK_CACHE_FILL=parts always only these, handed to the keeper without asking it
     * first (it decides when they come: no round trip on the miss's way) */
    int want = !d->parts         ? ingot_disk_want(d, p, len, req->deadline_ns)
               : d->home[p] >= 0 ? DISK_WANT_PART
                                 : DISK_WANT_NO;
    int whole = want == DISK_WANT_FILL, part = want == DISK_WANT_PART;
    st = ingot_disk_read_below(d, p, whole ? 0 : off, whole ? UINT64_MAX : len, req->epoch, b,
                               req->deadline_ns);
    if (st != INGOT_OK) {
        if (whole) {
            /* at its keeper, wherever (a second at most: else it lapses by itself) */
            ingot_disk_release_claim(d, p, ingot_deadline_after(INGOT_NSEC_PER_SEC));
        }
        if (atomic_load(&b->sub.state) != INGOT_SOURCE_REQ_QUARANTINED) {
            ingot_disk_buf_put(d, b);
        }
        return st;
    }
    dst_copy(dst, b->mem + INGOT_DISK_HEADER_BYTES + (whole ? off : 0), len);
    if ((whole || part) && !ingot_disk_piece_sound(d, p, b)) {
        if (whole) { /* a part's piece stays claimed for a sound copy of its samples */
            ingot_disk_release_claim(d, p, ingot_deadline_after(INGOT_NSEC_PER_SEC));
        }
        whole = part = 0; /* served as read (the loader reads a bad sample again), never written */
    }
    if (part && !part_credit(d, req->deadline_ns)) {
        atomic_fetch_add(&d->parts_dropped, 1);
        part = 0; /* the reads keep their buffers: a later miss brings these bytes */
    }
    if (!whole && !part) {
        ingot_disk_buf_put(d, b);
        return INGOT_OK;
    }
    b->kind = part ? DISK_FILL_PART : DISK_FILL_DEMAND;
    b->credit = part;
    ingot_disk_write_through(d, p, b, req->deadline_ns); /* the buffer goes with it */
    return INGOT_OK;
}

/* A request within one piece of this node for an O_DIRECT window (one aligned iovec with slack,
 * where the reader takes the bytes at req->shift): the entry's blocks read straight into it and
 * checked in place, no copy. 1 when served; 0 to read it the general way (a miss, a bad entry
 * removed, blocks larger than the slack allows). */
static int disk_window(ingot_disk_t *d, ingot_source_req_t *req, uint64_t p, uint64_t off)
{
    if (!d->p.direct_io || req->iovcnt != 1 || req->slack == 0 || d->home[p] != d->node ||
        ((uintptr_t)req->iov[0].iov_base & (INGOT_DISK_HEADER_BYTES - 1)) != 0) {
        return 0;
    }
    size_t shift;
    if (ingot_disk_read_local(d, p, off, req->length, req->iov[0].iov_base,
                              req->iov[0].iov_len + req->slack, !owner_checks(req),
                              &shift) != INGOT_OK) {
        return 0;
    }
    atomic_fetch_add_explicit(&d->piece_hits[p], 1, memory_order_relaxed);
    atomic_fetch_add(&d->hits, 1);
    atomic_fetch_add(&d->bytes_disk, req->length);
    req->cached = req->length;
    req->shift = shift;
    ingot_source_complete(req, INGOT_OK);
    return 1;
}

static int disk_device_iov(const ingot_source_req_t *req)
{
    for (int i = 0; req->mem != NULL && i < req->iovcnt; i++) {
        if (req->mem[i] != INGOT_SOURCE_MEM_HOST) {
            return 1;
        }
    }
    return 0;
}

static ingot_status_t disk_submit(ingot_source_t *src, ingot_source_req_t *req)
{
    ingot_disk_t *d = disk_of_source(src);
    uint32_t shard = req->shard;
    if (req->extents != NULL || req->direct || disk_device_iov(req) || shard >= d->pieces.nshards ||
        req->length == 0 || d->serving_nodes == 0) {
        return d->below->ops->submit(d->below, req); /* not the tier's: below decides */
    }
    uint64_t end = req->offset + req->length, cached = 0, k0 = req->offset >> d->piece_log2;
    if (k0 == (end - 1) >> d->piece_log2 && d->piece0[shard] + k0 < d->piece0[shard + 1] &&
        disk_window(d, req, d->piece0[shard] + k0, req->offset - (k0 << d->piece_log2))) {
        return INGOT_OK;
    }
    disk_dst_t dst = {req->iov, req->iovcnt, 0, 0};
    ingot_status_t st = INGOT_OK;
    for (uint64_t at = req->offset; at < end && st == INGOT_OK;) {
        uint64_t k = at >> d->piece_log2, p = d->piece0[shard] + k;
        uint64_t pend = (k + 1) << d->piece_log2, stop = pend < end ? pend : end;
        if (p >= d->piece0[shard + 1]) {
            st = ingot_fail(INGOT_ERR_OUT_OF_RANGE,
                            "disk tier: bytes %" PRIu64 "-%" PRIu64 " lie past the end of shard %u",
                            req->offset, end, req->shard);
            break;
        }
        st = disk_piece(d, req, p, at - (k << d->piece_log2), stop - at, &dst, &cached);
        at = stop;
        if (st == INGOT_OK) {
            ingot_source_landed(req, at - req->offset); /* hashed while in this core's cache */
        }
    }
    req->cached = cached;
    ingot_source_complete(req, st);
    return INGOT_OK;
}

static unsigned disk_progress(ingot_source_t *src, uint64_t until_ns)
{
    ingot_disk_t *d = disk_of_source(src);
    return d->below->ops->progress(d->below, until_ns); /* requests handed down whole */
}

static ingot_status_t disk_cancel(ingot_source_t *src, ingot_source_req_t *req)
{
    ingot_disk_t *d = disk_of_source(src);
    /* ours complete inside submit; one handed down whole is the source below's */
    return atomic_load(&req->state) == INGOT_SOURCE_REQ_DONE ? INGOT_ERR_BUSY
                                                             : d->below->ops->cancel(d->below, req);
}

static const char *disk_describe(const ingot_source_t *src, uint32_t shard, char *buf, size_t len)
{
    const ingot_disk_t *d = disk_of_source(src);
    char below[INGOT_SOURCE_DESCRIBE_MAX];
    snprintf(buf, len, "disk(%s, %" PRIu64 " bytes/node) over %s", d->dir, d->budget,
             ingot_source_describe(d->below, shard, below, sizeof(below)));
    return buf;
}

static void disk_destroy_op(ingot_source_t *src)
{
    (void)src; /* the tier's: its destroy (tier.c) */
}

const ingot_source_ops_t ingot_disk_source_ops = {.submit = disk_submit,
                                                  .progress = disk_progress,
                                                  .cancel = disk_cancel,
                                                  .describe = disk_describe,
                                                  .destroy = disk_destroy_op};

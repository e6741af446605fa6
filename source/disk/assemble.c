/*
 * Pieces assembled from the samples that misses read anyway (INGOT_DISK_CACHE_FILL=parts): an
 * entry that costs no byte read from below beyond what the misses needed.
 *
 * Every rank of a job in this mode knows each piece's layout: the spans of the manifest's records
 * within it, in offset order (built at create; a reader opens an assembled entry only when its
 * own layout matches the one in the entry's header: in the other mode the piece's shard is walked
 * for it then). Every miss reads only its own bytes from below, serves them, and
 * hands them to the piece's keeper as a whole fill is handed, without asking first (no round trip
 * on the miss's way): the keeper claims the piece when a part comes and the policy admits it
 * (ingot_disk_keeper_want()), or drops the part. It writes each part into the piece's slot of its
 * assembly file (one sparse temporary per keeper, locked for its life: a scan sees a live
 * writer's, and an orphan once the keeper is gone) and, once every span of the piece is in,
 * reads the slot back, zeros what lies between the spans (the shard's own headers and padding,
 * which no sample read needs), checks the piece as a fill from below is checked and writes it
 * through the writer's admission like any other (entry.h: version 2, its layout in its header).
 * A piece is claimed near its first use of an epoch (its later misses then bring every span),
 * or later only with room to spare and a next epoch to complete it in. What a piece still misses
 * once its uses of the epoch are past and no part has come for a while (a part dropped on its
 * way, spans read before the claim) the keeper reads from below itself, a few reads at once, and
 * at the job's end (ingot_disk_asm_complete()); what is left when the job ends is dropped.
 */
#include "source/disk/disk_impl.h"
#include "base/hash.h"
#include "base/io.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/mix.h"
#include "base/status.h"
#include "base/time.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- layouts (every rank) */

static int span_cmp(const void *a, const void *b)
{
    const disk_span_t *x = a, *y = b;
    return x->off < y->off ? -1 : x->off > y->off;
}

typedef void (*span_fn)(void *arg, uint64_t p, disk_span_t sp);

/* Call @p fn for every piece sample @p s of shard row @p shard touches, with its span there. */
static void spans_of(const ingot_disk_t *d, uint32_t shard, const ingot_sample_info_t *s,
                     span_fn fn, void *arg)
{
    uint64_t end = s->offset + s->length;
    for (uint64_t at = s->offset; at < end;) {
        uint64_t k = at >> d->piece_log2, p = d->piece0[shard] + k;
        uint64_t pend = (k + 1) << d->piece_log2, stop = pend < end ? pend : end;
        if (p >= d->piece0[shard + 1]) {
            return; /* past the shard's end: the manifest's checks refuse such a record */
        }
        fn(arg, p, (disk_span_t){(uint32_t)(at - (k << d->piece_log2)), (uint32_t)(stop - at)});
        at = stop;
    }
}

static void span_count(void *arg, uint64_t p, disk_span_t sp)
{
    ingot_disk_t *d = arg;
    (void)sp;
    d->span0[p + 1]++;
}

static void span_put(void *arg, uint64_t p, disk_span_t sp)
{
    ingot_disk_t *d = arg;
    d->spans[d->span0[p]++] = sp; /* span0 holds each piece's cursor during the fill */
}

/* Walk the records of shard rows [@p s0, @p s1) with @p fn. */
static ingot_status_t spans_walk(const ingot_disk_t *d, uint32_t s0, uint32_t s1, span_fn fn,
                                 void *arg)
{
    for (uint32_t shard = s0; shard < s1; shard++) {
        ingot_shard_info_t si;
        INGOT_CHECK(ingot_manifest_shard_get(d->p.manifest, shard, &si));
        for (uint64_t i = si.first_sample; i < si.first_sample + si.sample_count; i++) {
            ingot_sample_info_t s;
            INGOT_CHECK(ingot_manifest_sample_get(d->p.manifest, i, &s));
            spans_of(d, shard, &s, fn, arg);
        }
    }
    return INGOT_OK;
}

ingot_status_t ingot_disk_spans_build(ingot_disk_t *d)
{
    d->span0 = ingot_calloc(d->npieces + 1, sizeof(uint64_t), "disk spans");
    if (d->span0 == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    INGOT_CHECK(spans_walk(d, 0, d->pieces.nshards, span_count, d));
    for (uint64_t p = 0; p < d->npieces; p++) {
        d->span0[p + 1] += d->span0[p];
    }
    uint64_t n = d->span0[d->npieces];
    d->spans = ingot_calloc(n ? n : 1, sizeof(disk_span_t), "disk spans");
    if (d->spans == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    INGOT_CHECK(spans_walk(d, 0, d->pieces.nshards, span_put, d));
    /* each cursor ended at the next piece's start: shifted back, they are the starts again */
    memmove(d->span0 + 1, d->span0, d->npieces * sizeof(uint64_t));
    d->span0[0] = 0;
    for (uint64_t p = 0; p < d->npieces; p++) {
        /* a shard's rows need not be in offset order */
        qsort(d->spans + d->span0[p], d->span0[p + 1] - d->span0[p], sizeof(disk_span_t), span_cmp);
    }
    return INGOT_OK;
}

void ingot_disk_spans_free(ingot_disk_t *d)
{
    free(d->span0);
    free(d->spans);
    d->span0 = NULL;
    d->spans = NULL;
}

/* The layout of @p n spans in offset order of a piece of @p plen bytes: never 0. */
static uint64_t layout_hash(const disk_span_t *sp, uint64_t n, uint64_t plen)
{
    uint64_t h = ingot_hash64(sp, (size_t)n * sizeof(*sp)) ^ plen;
    return h != 0 ? h : 1;
}

/* One piece's spans gathered from its shard's records (ingot_disk_layout() without the index). */
typedef struct span_list {
    uint64_t p;
    disk_span_t *sp;
    uint64_t n, cap;
    int failed;
} span_list_t;

static void span_gather(void *arg, uint64_t p, disk_span_t sp)
{
    span_list_t *l = arg;
    if (p != l->p || l->failed) {
        return;
    }
    if (l->n == l->cap) {
        uint64_t cap = l->cap ? l->cap * 2 : 64;
        disk_span_t *grown = realloc(l->sp, cap * sizeof(*grown));
        if (grown == NULL) {
            l->failed = 1;
            return;
        }
        l->sp = grown;
        l->cap = cap;
    }
    l->sp[l->n++] = sp;
}

uint64_t ingot_disk_layout(const ingot_disk_t *d, uint64_t p)
{
    uint64_t plen = ingot_disk_piece_len(d, p);
    if (d->spans != NULL) {
        return layout_hash(d->spans + d->span0[p], d->span0[p + 1] - d->span0[p], plen);
    }
    /* no index (INGOT_DISK_CACHE_FILL=whole): the piece's shard walked, at an entry's open */
    uint32_t shard = ingot_disk_shard_of(d, p);
    span_list_t l = {.p = p};
    uint64_t h = 0; /* a failed walk matches no layout: the entry is a miss */
    if (spans_walk(d, shard, shard + 1, span_gather, &l) == INGOT_OK && !l.failed) {
        if (l.n > 1) {
            qsort(l.sp, l.n, sizeof(disk_span_t), span_cmp);
        }
        h = layout_hash(l.sp, l.n, plen);
    }
    free(l.sp);
    return h;
}

/* ---- the keeper's assemblies */

ingot_status_t ingot_disk_asm_create(ingot_disk_t *d)
{
    disk_asm_t *as = &d->keeper->as;
    as->fd = -1;
    if (!d->parts) {
        return INGOT_OK;
    }
    as->slot_of = ingot_malloc((d->npieces ? d->npieces : 1) * sizeof(uint32_t), "disk assembly");
    as->done = ingot_calloc(d->span0[d->npieces] ? d->span0[d->npieces] : 1, 1, "disk assembly");
    if (as->slot_of == NULL || as->done == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    memset(as->slot_of, 0xff, (d->npieces ? d->npieces : 1) * sizeof(uint32_t));
    /* named as a fill of a key no shard has (a random hash), so that scans know what it is */
    uint64_t id = ingot_mix64(ingot_time_ns() ^ ((uint64_t)getpid() << 32) ^ (uint64_t)d->rank);
    as->key = (ingot_disk_key_t){id | 1, 0, d->piece_log2};
    as->fd = ingot_disk_entry_temp(d->folder.fd, &as->key, d->folder.shared);
    if (as->fd < 0) {
        ingot_warn("disk tier: no assembly file in '%s' (%s): this node assembles no piece in "
                   "this job (INGOT_DISK_CACHE_FILL=parts); its entries still serve",
                   d->dir, strerror(errno));
    }
    return INGOT_OK;
}

void ingot_disk_asm_destroy(ingot_disk_t *d)
{
    disk_asm_t *as = &d->keeper->as;
    uint64_t left = atomic_load(&d->assembling);
    if (left > 0) {
        ingot_info("disk tier: %" PRIu64 " pieces were still being assembled at the end (not all "
                   "of their samples came): dropped",
                   left);
    }
    if (as->fd >= 0) {
        char name[INGOT_DISK_NAME_MAX];
        ingot_disk_entry_name(&as->key, 1, name, sizeof(name));
        unlinkat(d->folder.fd, name, 0);
        close(as->fd);
    }
    free(as->slot_of);
    free(as->slots);
    free(as->free);
    free(as->done);
    memset(as, 0, sizeof(*as));
    as->fd = -1;
}

int ingot_disk_asm_has(const ingot_disk_t *d, uint64_t p)
{
    const disk_asm_t *as = &d->keeper->as;
    return as->slot_of != NULL && as->slot_of[p] != DISK_NO_SLOT;
}

int ingot_disk_asm_open(ingot_disk_t *d, uint64_t p, int owed, uint64_t need)
{
    disk_asm_t *as = &d->keeper->as;
    if (!d->parts || as->fd < 0 || (owed && as->owed >= DISK_OWED_MAX)) {
        return 0;
    }
    if (as->slot_of[p] != DISK_NO_SLOT) {
        return 1;
    }
    uint32_t s;
    if (as->nfree > 0) {
        s = as->free[--as->nfree];
    } else {
        if (as->nslots == as->cap) {
            uint32_t cap = as->cap ? as->cap * 2 : 64;
            disk_slot_t *slots = realloc(as->slots, cap * sizeof(*slots));
            uint32_t *free_slots = slots ? realloc(as->free, cap * sizeof(uint32_t)) : NULL;
            if (slots != NULL) {
                as->slots = slots;
            }
            if (free_slots == NULL) {
                return 0;
            }
            as->free = free_slots;
            as->cap = cap;
        }
        s = as->nslots++;
    }
    uint64_t left = 0;
    for (uint64_t i = d->span0[p]; i < d->span0[p + 1]; i++) {
        left += d->spans[i].len;
    }
    as->slots[s] = (disk_slot_t){
        .piece = p, .left = left, .need = need, .last_ns = ingot_time_ns(), .owed = owed};
    as->owed += (uint32_t)owed;
    as->slot_of[p] = s;
    atomic_fetch_add(&d->assembling, 1);
    /* its blocks on the folder's disk as the writers' fills are: room kept for them */
    atomic_fetch_add(&d->keeper->writing, INGOT_DISK_HEADER_BYTES + ingot_disk_piece_len(d, p));
    return 1;
}

/* Give slot @p s back (its piece no longer being assembled, nothing in flight): its spans marked
 * absent, its blocks freed. Lock held. */
static void asm_free(ingot_disk_t *d, uint32_t s)
{
    disk_asm_t *as = &d->keeper->as;
    uint64_t p = as->slots[s].piece;
    as->owed -= (uint32_t)as->slots[s].owed;
    memset(as->done + d->span0[p], 0, d->span0[p + 1] - d->span0[p]);
    /* best effort: a slot is read back only where its spans were written, so stale bytes of an
     * earlier piece never reach an entry; punching only keeps the file's blocks few */
    (void)fallocate(as->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)s << d->piece_log2,
                    (off_t)d->piece_bytes);
    as->slots[s].piece = UINT64_MAX;
    as->free[as->nfree++] = s;
    atomic_fetch_sub(&d->assembling, 1);
    atomic_fetch_sub(&d->keeper->writing, INGOT_DISK_HEADER_BYTES + ingot_disk_piece_len(d, p));
}

/* Write the part in @p b into slot @p s: 0, or the errno. */
static int asm_write(ingot_disk_t *d, uint32_t s, const disk_buf_t *b)
{
    const uint8_t *src = b->mem + INGOT_DISK_HEADER_BYTES;
    off_t at = ((off_t)s << d->piece_log2) + (off_t)b->off;
    for (uint64_t done = 0; done < b->len;) {
        ssize_t n = pwrite(d->keeper->as.fd, src + done, (size_t)(b->len - done), at + (off_t)done);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            return n < 0 ? errno : EIO;
        }
        done += (uint64_t)n;
    }
    return 0;
}

/* Read slot @p s of piece @p p back into @p b whole, zeros between its spans: 0 or the errno. */
static int asm_read(ingot_disk_t *d, uint32_t s, uint64_t p, disk_buf_t *b)
{
    uint8_t *dst = b->mem + INGOT_DISK_HEADER_BYTES;
    uint64_t plen = ingot_disk_piece_len(d, p), at = 0;
    memset(dst, 0, (size_t)plen);
    for (uint64_t i = d->span0[p]; i < d->span0[p + 1]; i++) {
        const disk_span_t *sp = &d->spans[i];
        if (sp->off + sp->len <= at) {
            continue; /* within one read already (records that overlap) */
        }
        uint64_t from = sp->off > at ? sp->off : at, end = (uint64_t)sp->off + sp->len;
        ingot_io_fail_t fail;
        if (ingot_io_pread_full(d->keeper->as.fd, dst + from, (size_t)(end - from),
                                ((uint64_t)s << d->piece_log2) + from, &fail) != INGOT_OK) {
            return fail.err != 0 ? fail.err : EIO; /* short: its part's write was lost */
        }
        at = end;
    }
    b->off = 0;
    b->len = plen;
    b->layout = ingot_disk_layout(d, p);
    return 0;
}

/* Room for slot @p s's piece, claimed without it (the victims the claim saw evicted now, before
 * its first part takes blocks of the disk): 0 when none is made (the assembly is dropped). */
static int asm_pay(ingot_disk_t *d, uint32_t s)
{
    disk_keeper_t *k = d->keeper;
    pthread_mutex_lock(&k->lock);
    int owed = k->as.slots[s].owed;
    uint64_t need = k->as.slots[s].need;
    pthread_mutex_unlock(&k->lock);
    if (!owed) {
        return 1;
    }
    int room = ingot_disk_keeper_pay(d, need);
    pthread_mutex_lock(&k->lock);
    if (room && k->as.slots[s].owed) {
        k->as.slots[s].owed = 0;
        k->as.owed--;
    }
    pthread_mutex_unlock(&k->lock);
    return room;
}

/* Say why slot @p s's piece @p p was dropped (@p err: a write's errno, -1 no room) and let go of
 * its claim. */
static void asm_dropped(ingot_disk_t *d, uint64_t p, int err)
{
    ingot_disk_keeper_settle(d, p, INGOT_DISK_ABSENT);
    if (err < 0) {
        atomic_fetch_add(&d->refused, 1); /* no victim left to make its room */
        return;
    }
    char why[PATH_MAX + 128];
    snprintf(why, sizeof(why), "writing its assembly file in '%s': %s", d->dir, strerror(err));
    ingot_disk_keeper_fill_failed(d,
                                  err == ENOSPC || err == EDQUOT  ? INGOT_ERR_NO_RESOURCE
                                  : err == EROFS || err == EACCES ? INGOT_ERR_PERMISSION
                                                                  : INGOT_ERR_IO,
                                  why);
}

/* The next slot to complete from @p from on (its piece's missing spans merged into at most
 * DISK_COMPLETE_RUNS runs in @p runs, *@p nruns; marked completing until a part comes, so that
 * one whose completing reads were lost is looked at again), or DISK_NO_SLOT. Lock held. */
static uint32_t asm_next_incomplete(ingot_disk_t *d, uint32_t from, int all, disk_span_t *runs,
                                    uint32_t *nruns)
{
    disk_asm_t *as = &d->keeper->as;
    uint64_t quiet = ingot_time_ns() - DISK_COMPLETE_QUIET_NS;
    (void)ingot_disk_policy_advance(d->keeper->pol, atomic_load(&d->keeper->now));
    for (uint32_t s = from; s < as->nslots; s++) {
        const disk_slot_t *sl = &as->slots[s];
        uint64_t p = sl->piece;
        if (p == UINT64_MAX || sl->failed != 0 || sl->left == 0 || as->slot_of[p] != s ||
            sl->completing ||
            (!all && (sl->last_ns > quiet || ingot_disk_policy_ahead(d->keeper->pol, p)))) {
            continue;
        }
        uint32_t n = 0;
        for (uint64_t i = d->span0[p]; i < d->span0[p + 1]; i++) {
            disk_span_t sp = d->spans[i];
            if (as->done[i]) {
                continue;
            }
            if (n > 0 && (n == DISK_COMPLETE_RUNS ||
                          sp.off <= runs[n - 1].off + runs[n - 1].len + INGOT_DISK_BLOCK_MIN)) {
                uint32_t end = sp.off + sp.len; /* merged into the last run */
                if (end > runs[n - 1].off + runs[n - 1].len) {
                    runs[n - 1].len = end - runs[n - 1].off;
                }
                continue;
            }
            runs[n++] = sp;
        }
        as->slots[s].completing = 1;
        *nruns = n;
        return s;
    }
    return DISK_NO_SLOT;
}

/* One completing read in flight: its buffer, its piece, the status of its submit. */
typedef struct asm_read {
    disk_buf_t *b;
    uint64_t p;
    ingot_status_t st;
} asm_read_t;

/* Wait for @p n completing reads and hand each sound one to the writers. */
static void asm_complete_wait(ingot_disk_t *d, asm_read_t *rd, uint32_t n, uint64_t deadline_ns)
{
    for (uint32_t i = 0; i < n; i++) {
        disk_buf_t *b = rd[i].b;
        ingot_status_t st = ingot_disk_read_below_wait(d, b, rd[i].st);
        if (st == INGOT_OK) {
            atomic_fetch_add(&d->asm_below, b->len);
        }
        if (st == INGOT_OK && ingot_disk_piece_sound(d, rd[i].p, b)) {
            b->kind = DISK_FILL_PART; /* the writer marks its spans, and writes the piece */
            (void)ingot_disk_keeper_queue(d, b, deadline_ns); /* its buffer goes with it */
        } else if (atomic_load(&b->sub.state) != INGOT_SOURCE_REQ_QUARANTINED) {
            ingot_disk_buf_put(d, b);
        }
    }
}

void ingot_disk_asm_complete(ingot_disk_t *d, int all, uint64_t deadline_ns)
{
    disk_keeper_t *k = d->keeper;
    disk_span_t runs[DISK_COMPLETE_RUNS];
    asm_read_t rd[DISK_COMPLETE_INFLIGHT];
    uint32_t nruns = 0, r = 0, next = 0, n = 0;
    uint64_t p = UINT64_MAX, spe = d->p.steps_per_epoch ? d->p.steps_per_epoch : 1;
    int more = d->parts;
    while (more && ingot_time_ns() < deadline_ns) {
        /* up to DISK_COMPLETE_INFLIGHT reads in flight, over as many pieces as they take */
        while (n < DISK_COMPLETE_INFLIGHT) {
            if (r == nruns) {
                pthread_mutex_lock(&k->lock);
                uint32_t s = k->as.slot_of != NULL ? asm_next_incomplete(d, next, all, runs, &nruns)
                                                   : DISK_NO_SLOT;
                p = s != DISK_NO_SLOT ? k->as.slots[s].piece : UINT64_MAX;
                pthread_mutex_unlock(&k->lock);
                if (s == DISK_NO_SLOT) {
                    more = 0;
                    break;
                }
                next = s + 1;
                r = 0;
                continue;
            }
            disk_buf_t *b = ingot_disk_buf_get(d, deadline_ns);
            if (b == NULL) {
                more = 0;
                break;
            }
            rd[n++] = (asm_read_t){b, p,
                                   ingot_disk_read_below_submit(d, p, runs[r].off, runs[r].len,
                                                                atomic_load(&k->now) / spe, b,
                                                                deadline_ns)};
            r++;
        }
        asm_complete_wait(d, rd, n, deadline_ns);
        n = 0;
    }
}

void ingot_disk_keeper_part(ingot_disk_t *d, disk_buf_t *b)
{
    disk_keeper_t *k = d->keeper;
    disk_asm_t *as = &k->as;
    uint64_t p = b->piece, lo = b->off, hi = b->off + b->len;
    if (ingot_disk_keeper_want(d, p, b->len, DISK_WAIT) != DISK_WANT_PART) {
        return; /* resident, read whole by the prefetcher, or not admitted: not wanted */
    }
    pthread_mutex_lock(&k->lock);
    uint32_t s = as->slot_of != NULL ? as->slot_of[p] : DISK_NO_SLOT;
    if (s != DISK_NO_SLOT) {
        as->slots[s].inflight++;
        as->slots[s].last_ns = ingot_time_ns();
        as->slots[s].completing = 0; /* looked at again once quiet, should a part still miss */
    }
    pthread_mutex_unlock(&k->lock);
    if (s == DISK_NO_SLOT) {
        return; /* written already, or dropped: not wanted */
    }
    atomic_fetch_add(&d->parts_in, b->len);
    /* parts of one slot land at their own offsets, side by side */
    int err = asm_pay(d, s) ? asm_write(d, s, b) : -1;
    pthread_mutex_lock(&k->lock);
    disk_slot_t *sl = &as->slots[s];
    for (uint64_t i = d->span0[p]; err == 0 && i < d->span0[p + 1]; i++) {
        const disk_span_t *sp = &d->spans[i];
        if (!as->done[i] && sp->off >= lo && (uint64_t)sp->off + sp->len <= hi) {
            as->done[i] = 1;
            sl->left -= sp->len;
        }
    }
    if (err != 0 && sl->failed == 0) {
        sl->failed = err;
        as->slot_of[p] = DISK_NO_SLOT; /* no more parts into it */
    }
    int last = --sl->inflight == 0, failed = sl->failed;
    int mine = last && (failed != 0 || sl->left == 0);
    if (mine && failed == 0) {
        as->slot_of[p] = DISK_NO_SLOT; /* this writer writes it: later parts are not wanted */
    }
    pthread_mutex_unlock(&k->lock);
    if (!mine) {
        return;
    }
    err = failed != 0 ? failed : asm_read(d, s, p, b);
    pthread_mutex_lock(&k->lock);
    asm_free(d, s);
    pthread_mutex_unlock(&k->lock);
    if (err != 0) {
        asm_dropped(d, p, err);
        return;
    }
    if (!ingot_disk_piece_sound(d, p, b)) {
        ingot_disk_keeper_settle(d, p, INGOT_DISK_ABSENT); /* counted and said there */
        return;
    }
    atomic_fetch_add(&d->assembled, 1);
    b->kind = DISK_FILL_PART;
    ingot_disk_keeper_fill(d, b);
}

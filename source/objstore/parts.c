/*
 * The part cache of the object-store source (objstore_source.h): a shard is cut into parts of
 * equal length, at most INGOT_S3_PART_SIZE and an eighth (so a shard of 64 MiB and its tar
 * headers is 8 parts, not 9, and one of 9 MiB one part, not a part and a sliver: GETs per sample
 * at 110 KiB went from 1/66 to 1/74); a part is fetched with one GET the first time a request needs
 * it, every request that needs it meanwhile waits on that GET, and it stays until its room is
 * needed for another. Under the locality order the samples of a window of shards are read in a
 * random order over many steps: sized for the window (INGOT_S3_CACHE), each part is fetched once
 * per epoch. The victim is a part of the shard read least recently, the least recently used of
 * its parts: under the locality order every shard of the window is read at every step, so the
 * shards of a finished window go first, while a part of the current window touched once early
 * (a cold part is not a finished one: the window's order is random) stays. Plain LRU over parts
 * evicted those; measured over 5 epochs at 110 KiB: 55, 55, 24, 23, 72 GETs per epoch with a
 * shard's age taken from its first part. Buffers come from one pre-faulted arena made at create.
 */
#include "source/objstore/source_impl.h"
#include "base/log.h"
#include "base/mix.h"
#include "base/status.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ lists (lock held) */

static uint32_t part_slot(const os_source_t *s, uint32_t shard, uint64_t index)
{
    return (uint32_t)ingot_mix64(((uint64_t)shard << 40) ^ index) & s->hash_mask;
}

static os_part_t *part_find(const os_source_t *s, uint32_t shard, uint64_t index)
{
    os_part_t *p = s->hash[part_slot(s, shard, index)];
    while (p != NULL && (p->shard != shard || p->index != index)) {
        p = p->hnext;
    }
    return p;
}

static void hash_remove(os_source_t *s, os_part_t *p)
{
    os_part_t **at = &s->hash[part_slot(s, p->shard, p->index)];
    while (*at != p) {
        at = &(*at)->hnext;
    }
    *at = p->hnext;
}

static void lru_remove(os_source_t *s, os_part_t *p)
{
    p->prev->next = p->next;
    p->next->prev = p->prev;
    s->nlru--;
}

/* Most recently used last. */
static void lru_push(os_source_t *s, os_part_t *p)
{
    p->prev = s->lru.prev;
    p->next = &s->lru;
    s->lru.prev->next = p;
    s->lru.prev = p;
    s->nlru++;
}

static void free_push(os_source_t *s, os_part_t *p)
{
    p->state = OS_PART_FREE;
    p->next = s->free;
    s->free = p;
    s->nfree++;
}

/* The part to evict: of the unpinned ones, from the shard read least recently, the least
 * recently used (the LRU list is in that order). O(parts cached), once per GET. */
static os_part_t *part_victim(const os_source_t *s)
{
    os_part_t *best = s->lru.next; /* the caller checked that one is there */
    for (os_part_t *p = best->next; p != &s->lru; p = p->next) {
        if (s->shard_seq[p->shard] < s->shard_seq[best->shard]) {
            best = p;
        }
    }
    return best;
}

/* A buffer for a new part: a free one, else a victim's. */
static os_part_t *part_take(os_source_t *s)
{
    os_part_t *p = s->free;
    if (p != NULL) {
        s->free = p->next;
        s->nfree--;
    } else {
        p = part_victim(s);
        lru_remove(s, p);
        hash_remove(s, p);
    }
    return p;
}

/* ------------------------------------------------------------------ copies and completions */

/* Copy @p p's bytes that @p r asked for into its iovecs (not holding the lock). */
static void part_copy_out(const os_req_t *r, const os_part_t *p)
{
    const ingot_source_req_t *req = r->req;
    uint64_t a = req->offset > p->offset ? req->offset : p->offset;
    uint64_t e1 = req->offset + req->length, e2 = p->offset + p->length;
    uint64_t b = e1 < e2 ? e1 : e2;
    if (!r->cancelled && b > a) {
        ingot_objsrc_copy_in(req, a - req->offset, p->buf + (a - p->offset), b - a);
    }
}

/* One copy out of @p p for @p r is over: unpin, count, and end @p r when it was the last. */
static void part_copied(os_source_t *s, os_req_t *r, os_part_t *p)
{
    pthread_mutex_lock(&s->lock);
    if (--p->pins == 0 && p->state == OS_PART_READY) {
        lru_push(s, p);
    }
    r->copying--;
    int last = --r->left == 0;
    pthread_mutex_unlock(&s->lock);
    if (last) {
        ingot_objsrc_finish(s, r);
    }
}

/* The GET of @p p failed: every waiter fails with its message; the part is freed. A waiter
 * whose request has nothing else left is ended here (decided under the lock: once). */
static void part_fail(os_source_t *s, os_part_t *p, ingot_status_t st, const char *message)
{
    pthread_mutex_lock(&s->lock);
    os_wait_t *ws = p->waiters;
    p->waiters = NULL;
    hash_remove(s, p);
    free_push(s, p);
    for (os_wait_t *w = ws; w != NULL; w = w->next) {
        ingot_objsrc_note_failure(w->owner, st, message);
        w->part = NULL;
        w->finish = --w->owner->left == 0;
    }
    pthread_mutex_unlock(&s->lock);
    for (os_wait_t *w = ws, *next; w != NULL; w = next) {
        next = w->next; /* read first: ending its owner frees w */
        if (w->finish) {
            ingot_objsrc_finish(s, w->owner);
        }
    }
}

/* A part's GET ended (the client's I/O thread, or its destroy). */
static void part_done(ingot_objstore_req_t *get)
{
    os_part_t *p = get->arg;
    os_source_t *s = p->src;
    if (get->status != INGOT_OK) {
        part_fail(s, p, get->status, get->message);
        return;
    }
    pthread_mutex_lock(&s->lock);
    os_wait_t *ws = p->waiters;
    p->waiters = NULL;
    p->state = OS_PART_READY;
    for (os_wait_t *w = ws; w != NULL; w = w->next) {
        p->pins++;
        w->owner->copying++;
        w->part = NULL; /* served by this completion: cancel leaves it alone */
    }
    if (p->pins == 0) {
        lru_push(s, p); /* every waiter was cancelled */
    }
    pthread_mutex_unlock(&s->lock);
    for (os_wait_t *w = ws, *next; w != NULL; w = next) {
        next = w->next; /* w's owner may be reused once part_copied ends it */
        part_copy_out(w->owner, p);
        part_copied(s, w->owner, p);
    }
}

/* ------------------------------------------------------------------ a request's parts */

typedef struct parts_plan {
    uint64_t k0, k1;                /* the parts the request covers */
    os_part_t *fetch[OS_WAITS_MAX]; /* new parts to GET */
    os_part_t *ready[OS_WAITS_MAX]; /* cached parts to copy now */
    uint32_t nfetch, nready;
} parts_plan_t;

/* Whether the parts missing from the cache can be fetched now (lock held). */
static int parts_room(os_source_t *s, uint32_t shard, const parts_plan_t *pl)
{
    uint32_t need = 0, evictable = s->nlru;
    for (uint64_t k = pl->k0; k <= pl->k1; k++) {
        const os_part_t *p = part_find(s, shard, k);
        need += p == NULL;
        evictable -= (p != NULL && p->state == OS_PART_READY && p->pins == 0);
    }
    return need <= s->nfree + evictable;
}

/* A new part @p k of @p shard, marked for fetching (lock held). */
static os_part_t *parts_new(os_source_t *s, uint32_t shard, uint64_t k, parts_plan_t *pl)
{
    os_part_t *p = part_take(s);
    p->shard = shard;
    p->index = k;
    p->offset = k * s->part_len[shard];
    p->length = s->sizes[shard] - p->offset < s->part_len[shard] ? s->sizes[shard] - p->offset
                                                                 : s->part_len[shard];
    p->state = OS_PART_FETCHING;
    p->pins = 0;
    p->waiters = NULL;
    p->hnext = s->hash[part_slot(s, shard, k)];
    s->hash[part_slot(s, shard, k)] = p;
    pl->fetch[pl->nfetch++] = p;
    return p;
}

static void parts_wait(os_req_t *r, os_part_t *p)
{
    os_wait_t *w = &r->waits[r->nwaits++];
    *w = (os_wait_t){.owner = r, .part = p, .next = p->waiters};
    p->waiters = w;
}

/* Attach @p r to each of its parts (lock held): a pin on those cached, a wait on those being
 * fetched; then the missing ones are made (cached ones pinned first, so none is evicted for
 * another part of the same request). */
static void parts_attach(os_source_t *s, os_req_t *r, parts_plan_t *pl)
{
    uint32_t shard = r->req->shard;
    r->direct = 0;
    r->left = (uint32_t)(pl->k1 - pl->k0 + 1);
    s->shard_seq[shard] = ++s->seq; /* the shard was read now */
    for (uint64_t k = pl->k0; k <= pl->k1; k++) {
        os_part_t *p = part_find(s, shard, k);
        if (p != NULL && p->state == OS_PART_READY) {
            if (p->pins++ == 0) {
                lru_remove(s, p);
            }
            r->copying++;
            pl->ready[pl->nready++] = p;
            s->part_hits++;
        } else if (p != NULL) {
            parts_wait(r, p);
        }
    }
    for (uint64_t k = pl->k0; k <= pl->k1; k++) {
        if (part_find(s, shard, k) == NULL) {
            parts_wait(r, parts_new(s, shard, k, pl));
        }
    }
}

/* GET a new part (under the deadline of the request that needs it first). */
static void part_fetch(os_source_t *s, os_part_t *p, uint64_t epoch, uint64_t deadline_ns)
{
    p->iov = (struct iovec){p->buf, (size_t)p->length};
    p->get = (ingot_objstore_req_t){.object = s->objects[p->shard],
                                    .offset = p->offset,
                                    .length = p->length,
                                    .object_size = s->sizes[p->shard],
                                    .etag = s->etags[p->shard],
                                    .iov = &p->iov,
                                    .iovcnt = 1,
                                    .deadline_ns = deadline_ns,
                                    .cb = part_done,
                                    .arg = p,
                                    .tally = ingot_objsrc_tally(s, epoch)};
    s->part_fetches++;
    ingot_status_t st = ingot_objstore_submit(s->client, &p->get);
    if (st != INGOT_OK) {
        part_fail(s, p, st, ingot_last_error());
    }
}

int ingot_objsrc_parts_submit(os_source_t *s, os_req_t *r, uint64_t deadline_ns)
{
    const ingot_source_req_t *req = r->req;
    uint64_t plen = s->part_len[req->shard];
    parts_plan_t pl = {.k0 = req->offset / plen, .k1 = (req->offset + req->length - 1) / plen};
    if (s->nparts == 0 || pl.k1 - pl.k0 + 1 > OS_WAITS_MAX) {
        return -1;
    }
    pthread_mutex_lock(&s->lock);
    if (!parts_room(s, req->shard, &pl)) {
        pthread_mutex_unlock(&s->lock);
        s->part_bypass++;
        return -1;
    }
    parts_attach(s, r, &pl);
    pthread_mutex_unlock(&s->lock);
    for (uint32_t i = 0; i < pl.nfetch; i++) {
        part_fetch(s, pl.fetch[i], req->epoch, deadline_ns);
    }
    for (uint32_t i = 0; i < pl.nready; i++) {
        part_copy_out(r, pl.ready[i]);
        part_copied(s, r, pl.ready[i]); /* may end r: touch nothing of it after the last */
    }
    return 0;
}

ingot_status_t ingot_objsrc_parts_cancel(os_source_t *s, os_req_t *r)
{
    for (uint32_t i = 0; i < r->nwaits; i++) {
        os_wait_t *w = &r->waits[i];
        if (w->part == NULL) {
            continue; /* served or failed already */
        }
        os_wait_t **at = &w->part->waiters;
        while (*at != w) {
            at = &(*at)->next;
        }
        *at = w->next;
        w->part = NULL;
        r->left--;
    }
    if (r->left > 0) {
        return INGOT_ERR_BUSY; /* copies run: the last one completes it, CANCELED */
    }
    r->req = NULL;
    r->next_free = s->free_reqs;
    s->free_reqs = r;
    return INGOT_OK;
}

/* ------------------------------------------------------------------ life */

ingot_status_t ingot_objsrc_parts_create(os_source_t *s, uint64_t bytes, int numa_node)
{
    s->nparts = (uint32_t)(bytes / s->slot_room);
    if (s->nparts == 0) {
        return INGOT_OK;
    }
    INGOT_CHECK(ingot_mem_alloc((size_t)s->nparts * s->slot_room,
                                INGOT_MEM_F_PREFAULT | INGOT_MEM_F_HUGEPAGE, numa_node,
                                "object-store part cache", &s->arena));
    uint32_t slots = 1;
    while (slots < 2 * s->nparts) {
        slots <<= 1;
    }
    s->hash_mask = slots - 1;
    s->hash = ingot_calloc(slots, sizeof(os_part_t *), "part cache index");
    s->parts = ingot_calloc(s->nparts, sizeof(*s->parts), "part cache");
    s->shard_seq = ingot_calloc(s->nshards + 1, sizeof(*s->shard_seq), "part cache shards");
    if (s->hash == NULL || s->parts == NULL || s->shard_seq == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (uint32_t i = s->nparts; i-- > 0;) {
        s->parts[i].src = s;
        s->parts[i].buf = (char *)s->arena.ptr + (size_t)i * s->slot_room;
        free_push(s, &s->parts[i]);
    }
    return INGOT_OK;
}

void ingot_objsrc_parts_destroy(os_source_t *s)
{
    ingot_mem_free(&s->arena);
    free(s->parts);
    free(s->hash);
    free(s->shard_seq);
}

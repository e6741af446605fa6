/*
 * The part cache a node's ranks share (objstore_source.h, docs/objectstore.md "One part cache per
 * node"): one arena of parts in the node's shared memory (an MPI-3 shared window over the node's
 * ranks), an index and a least-recently-read list in the same segment under a robust,
 * process-shared mutex, and per part a state word that its waiters sleep on (a futex shared
 * between the node's processes). The first rank that needs a part claims it and fetches it with
 * one GET straight into the arena; the others that need it meanwhile wait on its state word and
 * copy from the arena once it is READY: each part leaves the store once per node.
 *
 * A fetcher shows it is alive by a heartbeat in its part (every NP_BEAT_NS while its GET is in
 * flight) and in its rank's record (while any of its threads waits); a waiter that sees neither
 * beat for INGOT_PEER_TIMEOUT names that rank and either ends the job (INGOT_PEER_FAILURE=abort)
 * or fetches the part itself into a fresh entry (storage; the entry's other waiters plan the part
 * again); the stale entry is never reused, since a stopped process may resume and write into it. A GET that
 * fails for good is FAILED in its entry with its message, which every waiter gets; the entry
 * leaves the index at once, so a later read tries again. Every wait is bounded by the request's
 * deadline. A request completes in the calling thread (as POSIX reads do).
 *
 * Reference counts in the shared entry (pins of copies in flight, waiters, the GET itself) keep
 * a buffer out of reuse while anyone may touch it; a process killed while holding one leaves
 * that one part's slot out of service for the rest of the job (counted, never unsafe).
 *
 * Backpressure: the node's ranks read the same windows in the same steps, but not at the same
 * moment (one rank's trainer may run a few steps ahead). Each rank publishes the newest step its
 * loader planned (the tier's advance), each part the newest step it was read for; a part is replaced only when every rank
 * of the node that still reads has moved more than the prefetch depth past that step (no rank
 * will read it for those steps again). A rank ahead of the node's slowest that finds no such
 * part waits for the others to move on (at most INGOT_PEER_TIMEOUT, then it replaces the part
 * read least recently), rather than evicting the parts the slowest ones still need: a window is
 * fetched once however far apart the ranks run. The slowest ranks never wait.
 */
#include "source/objstore/source_impl.h"
#include "base/arrival.h"
#include "base/errors.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/mix.h"
#include "base/status.h"
#include "base/time.h"
#include <errno.h>
#include <inttypes.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define NP_MAGIC       0x7374726170646f6eull  /* "nodparts" */
#define NP_BEAT_NS     (100ull * 1000 * 1000) /* a fetcher's heartbeat while its GET is out */
#define NP_NONE        (-1)
#define NP_LOCK_MAX_NS (86400ull * 1000 * 1000 * 1000) /* a lock's longest wait: a day */

enum { NP_FREE, NP_FETCHING, NP_READY, NP_FAILED, NP_LOST };

/* One part in the node's segment. Fields marked (lock) are the segment's mutex's. */
typedef struct np_entry {
    _Atomic uint32_t state; /* NP_*: the futex word its waiters sleep on */
    _Atomic uint64_t beat;  /* the fetcher's last sign of life, CLOCK_MONOTONIC ns */
    uint32_t pins;          /* (lock) copies out of it running */
    uint32_t waiting;       /* (lock) ranks asleep on it */
    uint32_t get;           /* (lock) its GET is in flight (the buffer is the client's) */
    uint32_t shard;         /* (lock) */
    int32_t owner;          /* (lock) the rank fetching it */
    int32_t owner_local;    /* (lock) that rank in the node */
    int32_t hnext;          /* (lock) hash chain */
    int32_t prev, next;     /* (lock) LRU list (READY, unpinned, unwaited) or free list */
    uint64_t index, offset, length;
    uint64_t last_step;                        /* (lock) the newest step it was read for */
    int32_t fail_status;                       /* NP_FAILED: why */
    char fail_msg[INGOT_OBJSTORE_MESSAGE_MAX]; /* NP_FAILED: the GET's message */
} np_entry_t;

/* Per epoch, the node's figures (every rank adds its own). */
typedef struct np_tally {
    _Atomic uint64_t gets, bytes, needed;
} np_tally_t;

/* One of the node's ranks: its number in the job, whether a waiter found it silent, the newest
 * step it reads for, and whether it reads no more. */
typedef struct np_rank {
    int32_t job_rank;
    _Atomic uint32_t silent;
    _Atomic uint64_t beat; /* its last sign of life while it waits on any GET or part */
    _Atomic uint64_t step;
    _Atomic uint32_t done;
} np_rank_t;

/* The head of the node's segment; the arrays follow at the offsets it records. */
typedef struct np_head {
    uint64_t magic;
    pthread_mutex_t lock;   /* process-shared, robust */
    _Atomic int32_t holder; /* the rank holding the lock (for a message), or NP_NONE */
    _Atomic uint32_t moved; /* bumped when a rank moves on or a part settles: backpressure's
                               futex word */
    uint32_t nparts, nslots, nshards, nepochs, nranks, depth;
    uint64_t part_room, seq, first_epoch;
    int32_t free_head, lru_head, lru_tail; /* (lock) */
    uint32_t nfree, nlru;                  /* (lock) */
    uint64_t entries_off, hash_off, shard_seq_off, tallies_off, ranks_off, arena_off, size;
} np_head_t;

/* This process's GET of an entry it claimed (indexed like the entries: only the claiming process
 * fetches into an entry, so its slot here is free to use). */
typedef struct np_fetch {
    ingot_objstore_req_t get;
    struct iovec iov;
    ingot_event_t ev;
    _Atomic int done;
} np_fetch_t;

struct ingot_objsrc_node {
    MPI_Win win;
    np_fetch_t *fetch; /* per entry: this process's GET into it */
    np_head_t *h;
    np_entry_t *e;
    int32_t *hash;
    uint64_t *shard_seq;
    np_tally_t *tally;
    np_rank_t *ranks; /* by rank in the node */
    char *arena;
    int rank, local;               /* in the job, in the node */
    const ingot_tier_plan_t *plan; /* the node, the peer timeout and policy, peer_lost */
    uint64_t peer_timeout_ns;
    int abort_on_silence;
    _Atomic uint64_t lost; /* entries given up on (a stopped fetcher) */
};

/* ------------------------------------------------------------------ futex and lock */

static void np_futex_wait(_Atomic uint32_t *w, uint32_t val, uint64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000ull), (long)(ns % 1000000000ull)};
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAIT, val, &ts, NULL, 0); /* shared: no PRIVATE */
}

static void np_futex_wake(_Atomic uint32_t *w)
{
    syscall(SYS_futex, (uint32_t *)w, FUTEX_WAKE, INT32_MAX, NULL, NULL, 0);
}

/* Lock the segment until @p deadline_ns: INGOT_OK, or INGOT_ERR_TIMED_OUT (logged naming the
 * rank that holds it: a stopped process). A holder that died leaves it consistent again. */
static ingot_status_t np_lock(ingot_objsrc_node_t *n, uint64_t deadline_ns)
{
    int rc = pthread_mutex_trylock(&n->h->lock);
    if (rc == EBUSY) { /* contended: wait, on the realtime clock timedlock takes */
        struct timespec now, abs;
        clock_gettime(CLOCK_REALTIME, &now);
        uint64_t t = ingot_time_ns(), left = deadline_ns > t ? deadline_ns - t : 0;
        left = left < NP_LOCK_MAX_NS ? left : NP_LOCK_MAX_NS; /* no overflow past a day */
        uint64_t at = (uint64_t)now.tv_sec * INGOT_NSEC_PER_SEC + (uint64_t)now.tv_nsec + left;
        abs = (struct timespec){(time_t)(at / INGOT_NSEC_PER_SEC), (long)(at % INGOT_NSEC_PER_SEC)};
        rc = pthread_mutex_timedlock(&n->h->lock, &abs);
    }
    if (rc == EOWNERDEAD) {
        pthread_mutex_consistent(&n->h->lock); /* its holder died: the index is small and whole */
        rc = 0;
    }
    if (rc != 0) {
        return ingot_fail(INGOT_ERR_TIMED_OUT,
                          "objstore: the node's part cache stayed locked by rank %d past the "
                          "request's deadline (stopped?)",
                          atomic_load(&n->h->holder));
    }
    atomic_store(&n->h->holder, n->rank);
    return INGOT_OK;
}

static void np_unlock(ingot_objsrc_node_t *n)
{
    atomic_store(&n->h->holder, NP_NONE);
    pthread_mutex_unlock(&n->h->lock);
}

/* ------------------------------------------------------------------ lists (lock held) */

static uint32_t np_slot(const ingot_objsrc_node_t *n, uint32_t shard, uint64_t index)
{
    return (uint32_t)ingot_mix64(((uint64_t)shard << 40) ^ index) & (n->h->nslots - 1);
}

static int32_t np_find(const ingot_objsrc_node_t *n, uint32_t shard, uint64_t index)
{
    int32_t i = n->hash[np_slot(n, shard, index)];
    while (i != NP_NONE && (n->e[i].shard != shard || n->e[i].index != index)) {
        i = n->e[i].hnext;
    }
    return i;
}

static void np_hash_remove(ingot_objsrc_node_t *n, int32_t i)
{
    int32_t *at = &n->hash[np_slot(n, n->e[i].shard, n->e[i].index)];
    while (*at != NP_NONE && *at != i) {
        at = &n->e[*at].hnext;
    }
    if (*at == i) {
        *at = n->e[i].hnext;
    }
}

static void np_lru_remove(ingot_objsrc_node_t *n, int32_t i)
{
    np_head_t *h = n->h;
    np_entry_t *e = &n->e[i];
    if (e->prev != NP_NONE) {
        n->e[e->prev].next = e->next;
    } else {
        h->lru_head = e->next;
    }
    if (e->next != NP_NONE) {
        n->e[e->next].prev = e->prev;
    } else {
        h->lru_tail = e->prev;
    }
    h->nlru--;
}

static void np_lru_push(ingot_objsrc_node_t *n, int32_t i)
{
    np_head_t *h = n->h;
    n->e[i].prev = h->lru_tail;
    n->e[i].next = NP_NONE;
    if (h->lru_tail != NP_NONE) {
        n->e[h->lru_tail].next = i;
    } else {
        h->lru_head = i;
    }
    h->lru_tail = i;
    h->nlru++;
}

static void np_free_push(ingot_objsrc_node_t *n, int32_t i)
{
    atomic_store(&n->e[i].state, NP_FREE);
    n->e[i].next = n->h->free_head;
    n->h->free_head = i;
    n->h->nfree++;
}

/* This rank is alive: any of its GETs in flight is being waited on (one beat for all of them). */
static void np_beat(ingot_objsrc_node_t *n)
{
    atomic_store(&n->ranks[n->local].beat, ingot_time_ns());
}

/* Whether entry @p e's fetcher showed no sign of life for INGOT_PEER_TIMEOUT: neither the part's
 * own beat nor its rank's (the rank beats while any of its threads waits). Beats read before the
 * clock: a beat after now is no silence. */
static int np_quiet(const ingot_objsrc_node_t *n, const np_entry_t *e)
{
    uint64_t part = atomic_load(&e->beat), rank = atomic_load(&n->ranks[e->owner_local].beat);
    uint64_t last = part > rank ? part : rank;
    return ingot_time_ns() > last + n->peer_timeout_ns;
}

/* Tell the node's waiting ranks that something moved (a rank's step, a part settled). */
static void np_moved(ingot_objsrc_node_t *n)
{
    atomic_fetch_add(&n->h->moved, 1);
    np_futex_wake(&n->h->moved);
}

/* An entry no one touches any more goes back: READY ones to the LRU list, FAILED ones free. */
static void np_settle(ingot_objsrc_node_t *n, int32_t i)
{
    np_entry_t *e = &n->e[i];
    if (e->pins != 0 || e->waiting != 0 || e->get != 0) {
        return;
    }
    uint32_t st = atomic_load(&e->state);
    if (st == NP_READY) {
        np_lru_push(n, i);
    } else if (st == NP_FAILED) {
        np_free_push(n, i);
    } /* NP_LOST stays out of service: its stopped fetcher may still write into it */
    np_moved(n);
}

/* The slowest step among the node's ranks that still read, but this one's (UINT64_MAX: none). */
static uint64_t np_slowest_other(const ingot_objsrc_node_t *n)
{
    uint64_t slowest = UINT64_MAX;
    for (uint32_t k = 0; k < n->h->nranks; k++) {
        uint64_t step = atomic_load(&n->ranks[k].step);
        if ((int)k != n->local && !atomic_load(&n->ranks[k].done) && step < slowest) {
            slowest = step;
        }
    }
    return slowest;
}

/* Whether no rank of the node will read READY entry @p i for the steps it was read for: every
 * rank that still reads is more than the prefetch depth past them. @p unsafe: any READY one. */
static int np_replaceable(const ingot_objsrc_node_t *n, int32_t i, int unsafe)
{
    uint64_t own = atomic_load(&n->ranks[n->local].step), other = np_slowest_other(n);
    uint64_t slowest = own < other ? own : other;
    return unsafe || slowest > n->e[i].last_step + n->h->depth;
}

/* The entry to fetch into: a free one, else the replaceable READY one of the shard read least
 * recently (np_replaceable). */
static int32_t np_take(ingot_objsrc_node_t *n, int unsafe)
{
    np_head_t *h = n->h;
    int32_t i = h->free_head;
    if (i != NP_NONE) {
        h->free_head = n->e[i].next;
        h->nfree--;
        return i;
    }
    int32_t best = NP_NONE;
    for (int32_t j = h->lru_head; j != NP_NONE; j = n->e[j].next) {
        if (np_replaceable(n, j, unsafe) &&
            (best == NP_NONE || n->shard_seq[n->e[j].shard] < n->shard_seq[n->e[best].shard])) {
            best = j;
        }
    }
    if (best != NP_NONE) {
        np_lru_remove(n, best);
        np_hash_remove(n, best);
    }
    return best;
}

/* ------------------------------------------------------------------ a request's parts */

/* What the calling reader does for one part of its request. */
enum { NP_DO_COPY, NP_DO_WAIT, NP_DO_FETCH };

typedef struct np_part {
    int32_t entry;
    int act;
} np_part_t;

/* Whether the cache has room for the entries the request needs that are not there: free ones,
 * or replaceable READY ones (np_replaceable; @p unsafe: any) that the request does not use. */
static int np_room(ingot_objsrc_node_t *n, uint32_t shard, uint64_t k0, uint64_t k1, int unsafe)
{
    uint32_t need = 0, replaceable = 0;
    for (uint64_t k = k0; k <= k1; k++) {
        need += np_find(n, shard, k) == NP_NONE;
    }
    if (need <= n->h->nfree) {
        return 1;
    }
    for (int32_t j = n->h->lru_head; j != NP_NONE && need > n->h->nfree + replaceable;
         j = n->e[j].next) {
        const np_entry_t *e = &n->e[j];
        replaceable += np_replaceable(n, j, unsafe) &&
                       !(e->shard == shard && e->index >= k0 && e->index <= k1);
    }
    return need <= n->h->nfree + replaceable;
}

/* Claim part @p k of @p shard for this rank's fetch (lock held, room checked). */
static int32_t np_claim(ingot_objsrc_node_t *n, os_source_t *s, uint32_t shard, uint64_t k,
                        int unsafe)
{
    int32_t i = np_take(n, unsafe);
    np_entry_t *e = &n->e[i];
    e->shard = shard;
    e->index = k;
    e->offset = k * s->part_len[shard];
    e->length = s->sizes[shard] - e->offset < s->part_len[shard] ? s->sizes[shard] - e->offset
                                                                 : s->part_len[shard];
    e->pins = e->waiting = 0;
    e->last_step = 0;
    e->get = 1;
    e->owner = n->rank;
    e->owner_local = n->local;
    e->fail_status = INGOT_OK;
    e->fail_msg[0] = '\0';
    atomic_store(&e->beat, ingot_time_ns());
    atomic_store(&e->state, NP_FETCHING);
    e->hnext = n->hash[np_slot(n, shard, k)];
    n->hash[np_slot(n, shard, k)] = i;
    return i;
}

/* Decide, for each part of the request, what this rank does (lock held). */
static void np_plan(ingot_objsrc_node_t *n, os_source_t *s, uint32_t shard, uint64_t k0,
                    uint64_t k1, uint64_t step, int unsafe, np_part_t *parts)
{
    n->shard_seq[shard] = ++n->h->seq;    /* the shard was read now */
    for (uint64_t k = k0; k <= k1; k++) { /* the parts there first: pinned, none is replaced */
        np_part_t *p = &parts[k - k0];
        int32_t i = np_find(n, shard, k);
        if (i == NP_NONE) {
            *p = (np_part_t){NP_NONE, NP_DO_FETCH};
            continue;
        }
        if (atomic_load(&n->e[i].state) == NP_READY) {
            if (n->e[i].pins++ == 0 && n->e[i].waiting == 0) {
                np_lru_remove(n, i);
            }
            *p = (np_part_t){i, NP_DO_COPY};
            atomic_fetch_add(&s->part_hits, 1);
        } else {
            n->e[i].waiting++;
            *p = (np_part_t){i, NP_DO_WAIT};
        }
    }
    for (uint64_t k = k0; k <= k1; k++) { /* then the parts to fetch */
        np_part_t *p = &parts[k - k0];
        if (p->entry == NP_NONE) {
            p->entry = np_claim(n, s, shard, k, unsafe);
        }
        np_entry_t *e = &n->e[p->entry];
        e->last_step = step > e->last_step ? step : e->last_step;
    }
}

/* This rank reads for @p step now: published, so that ranks ahead waiting for room see it. */
static void np_step(ingot_objsrc_node_t *n, uint64_t step)
{
    _Atomic uint64_t *mine = &n->ranks[n->local].step;
    uint64_t was = atomic_load(mine);
    while (step > was && !atomic_compare_exchange_weak(mine, &was, step)) {
    }
    if (step > was) {
        np_moved(n);
    }
}

/* No room for a request's parts (lock held): a rank ahead of the node's slowest waits for the
 * others to move on (backpressure: the parts they still need stay), at most INGOT_PEER_TIMEOUT
 * and the request's deadline, or until something moved after @p moved (read before the room was
 * judged: no wake-up lost); 1 when it waited (plan again), 0 when it should not (the lock is then
 * still held). */
static int np_hold_back(ingot_objsrc_node_t *n, uint64_t step, uint32_t moved, uint64_t until_ns)
{
    uint64_t slowest = np_slowest_other(n);
    if (slowest == UINT64_MAX || step <= slowest || ingot_time_ns() >= until_ns) {
        return 0; /* none slower: waiting would wait for this rank itself */
    }
    np_unlock(n);
    uint64_t left = until_ns - ingot_time_ns();
    np_futex_wait(&n->h->moved, moved, left < NP_BEAT_NS ? left : NP_BEAT_NS);
    return 1;
}

/* ------------------------------------------------------------------ fetch, wait, copy */

/* A part's GET ended (the client's I/O thread, or its destroy). */
static void np_get_done(ingot_objstore_req_t *get)
{
    np_fetch_t *f = get->arg;
    atomic_store_explicit(&f->done, 1, memory_order_release);
    ingot_event_notify(&f->ev);
}

static bool np_fetched(void *arg)
{
    return atomic_load_explicit(&((np_fetch_t *)arg)->done, memory_order_acquire) != 0;
}

/* Start the GET of entry @p i (claimed by this rank) for a read of @p epoch. */
static void np_fetch_start(ingot_objsrc_node_t *n, os_source_t *s, int32_t i, uint64_t epoch,
                           uint64_t deadline_ns)
{
    np_entry_t *e = &n->e[i];
    np_fetch_t *f = &n->fetch[i];
    f->iov = (struct iovec){n->arena + (size_t)i * n->h->part_room, (size_t)e->length};
    ingot_event_init(&f->ev);
    atomic_store(&f->done, 0);
    f->get = (ingot_objstore_req_t){.object = s->objects[e->shard],
                                    .offset = e->offset,
                                    .length = e->length,
                                    .object_size = s->sizes[e->shard],
                                    .etag = s->etags[e->shard],
                                    .iov = &f->iov,
                                    .iovcnt = 1,
                                    .deadline_ns = deadline_ns,
                                    .cb = np_get_done,
                                    .arg = f,
                                    .tally = ingot_objsrc_tally(s, epoch)};
    atomic_fetch_add(&s->part_fetches, 1);
    if (ingot_objstore_submit(s->client, &f->get) != INGOT_OK) {
        f->get.status = INGOT_ERR_NO_RESOURCE;
        snprintf(f->get.message, sizeof(f->get.message), "%s", ingot_last_error());
        np_get_done(&f->get);
    }
    if (ingot_fault_check(INGOT_FAULT_PART_FETCH) != 0) { /* tests: a fetcher stopped mid-GET */
        raise(SIGSTOP);
    }
}

/* Wait for this rank's GET of entry @p i, beating its heart, and publish what came of it: READY
 * (pinned for this rank's copy) or FAILED with the GET's message; waiters woken. */
static ingot_status_t np_fetch_end(ingot_objsrc_node_t *n, os_source_t *s, os_req_t *r, int32_t i,
                                   uint64_t epoch, uint64_t deadline_ns)
{
    np_entry_t *e = &n->e[i];
    np_fetch_t *f = &n->fetch[i];
    uint64_t bound = deadline_ns + OS_VERDICT_GRACE_NS; /* the client answers by its deadline */
    while (!np_fetched(f) && ingot_time_ns() < bound) {
        atomic_store(&e->beat, ingot_time_ns());
        np_beat(n);
        uint64_t slice = ingot_deadline_after(NP_BEAT_NS);
        (void)ingot_event_wait_until(&f->ev, np_fetched, f, slice < bound ? slice : bound, NULL);
    }
    int done = np_fetched(f);
    ingot_status_t st = done ? f->get.status : INGOT_ERR_TIMED_OUT;
    if (np_lock(n, ingot_deadline_after(n->peer_timeout_ns)) != INGOT_OK) {
        /* the lock's holder stopped: the entry stays FETCHING (its waiters time out) */
        ingot_objsrc_note_failure(r, INGOT_ERR_TIMED_OUT, ingot_last_error());
        return INGOT_ERR_TIMED_OUT;
    }
    e->get = !done; /* a GET still out keeps the buffer: the entry is lost, never reused */
    if (st == INGOT_OK) {
        atomic_store(&e->state, NP_READY);
        e->pins++;
        np_tally_t *t = epoch >= n->h->first_epoch && epoch - n->h->first_epoch < n->h->nepochs
                            ? &n->tally[epoch - n->h->first_epoch]
                            : NULL;
        if (t != NULL) {
            atomic_fetch_add(&t->gets, 1);
            atomic_fetch_add(&t->bytes, e->length);
        }
    } else {
        e->fail_status = st;
        snprintf(e->fail_msg, sizeof(e->fail_msg), "%s",
                 done ? f->get.message : "the GET of a part outlived its deadline");
        np_hash_remove(n, i);
        atomic_store(&e->state, done ? NP_FAILED : NP_LOST);
        ingot_objsrc_note_failure(r, st, e->fail_msg);
        np_settle(n, i);
    }
    np_unlock(n);
    np_futex_wake(&e->state);
    return st;
}

/* The fetcher of entry @p i went silent for INGOT_PEER_TIMEOUT: abort names it; storage takes
 * the part over (the entry lost for good: its fetcher may still write into it). Lock held. */
static ingot_status_t np_silent(ingot_objsrc_node_t *n, os_source_t *s, os_req_t *r, int32_t i)
{
    np_entry_t *e = &n->e[i];
    char msg[INGOT_OBJSTORE_MESSAGE_MAX], what[INGOT_OBJSTORE_DESCRIBE_MAX];
    snprintf(msg, sizeof(msg),
             "objstore: rank %d (host %s) fetching part %" PRIu64 " of %.300s for the node's part "
             "cache showed no sign of life for INGOT_PEER_TIMEOUT (%.1f s)%s",
             e->owner, n->plan->node->hostname, e->index,
             ingot_objstore_object_describe(s->objects[e->shard], what, sizeof(what)),
             (double)n->peer_timeout_ns / 1e9,
             n->abort_on_silence ? "; INGOT_PEER_FAILURE=abort ends the job"
                                 : "; INGOT_PEER_FAILURE=storage: read by this rank instead");
    uint32_t named = 0; /* the node's first waiter to find it silent says so */
    for (uint32_t k = 0; k < n->h->nranks; k++) { /* the arrival at destroy names it at once */
        if (n->ranks[k].job_rank == e->owner) {
            named = atomic_exchange(&n->ranks[k].silent, 1);
        }
    }
    if (n->abort_on_silence) {
        if (!named) {
            ingot_error("%s", msg);
        }
        ingot_objsrc_note_failure(r, INGOT_ERR_TIMED_OUT, msg);
        ingot_abort_raise(n->plan->peer_lost);
        return INGOT_ERR_TIMED_OUT;
    }
    if (atomic_load(&e->state) == NP_FETCHING) {
        ingot_warn("%s", msg);
        np_hash_remove(n, i);
        e->fail_status = INGOT_ERR_NOT_FOUND; /* its other waiters plan the part again */
        snprintf(e->fail_msg, sizeof(e->fail_msg), "taken over from a silent fetcher");
        atomic_store(&e->state, NP_LOST);
        atomic_fetch_add(&n->lost, 1);
    }
    return INGOT_ERR_NOT_FOUND; /* the caller plans the part again */
}

/* Wait for another rank's fetch of entry @p i: INGOT_OK (READY, pinned for this rank's copy),
 * INGOT_ERR_NOT_FOUND (to be planned again: its fetcher went silent and this rank takes over),
 * or a failure (the fetcher's message, or the deadline). */
static ingot_status_t np_wait(ingot_objsrc_node_t *n, os_source_t *s, os_req_t *r, int32_t i,
                              uint64_t deadline_ns)
{
    np_entry_t *e = &n->e[i];
    int silent = 0;
    while (atomic_load(&e->state) == NP_FETCHING && ingot_time_ns() < deadline_ns) {
        if (np_quiet(n, e)) {
            silent = 1;
            break;
        }
        np_beat(n); /* this rank's own GETs, if any, are not forgotten while it waits here */
        np_futex_wait(&e->state, NP_FETCHING, NP_BEAT_NS);
    }
    uint64_t until = deadline_ns + OS_VERDICT_GRACE_NS;
    ingot_status_t st = np_lock(n, until > deadline_ns ? until : INGOT_DEADLINE_NONE);
    if (st != INGOT_OK) {
        ingot_objsrc_note_failure(r, st, ingot_last_error());
        return st; /* its count of waiters stays: the slot is out of service (never unsafe) */
    }
    e->waiting--;
    uint32_t state = atomic_load(&e->state);
    if (state == NP_READY) {
        e->pins++;
    } else if (state == NP_FETCHING && silent) {
        st = np_silent(n, s, r, i);
    } else if (state == NP_FETCHING) {
        st = ingot_fail(INGOT_ERR_TIMED_OUT,
                        "objstore: part %" PRIu64 " of shard %u, fetched by rank %d for the node, "
                        "did not arrive before the request's deadline",
                        e->index, e->shard, e->owner);
        ingot_objsrc_note_failure(r, st, ingot_last_error());
    } else if (e->fail_status == INGOT_ERR_NOT_FOUND) { /* taken over from a silent fetcher */
        st = INGOT_ERR_NOT_FOUND;                       /* planned again */
    } else { /* FAILED or LOST: the fetcher's verdict is every waiter's */
        st = e->fail_status != INGOT_OK ? e->fail_status : INGOT_ERR_IO;
        ingot_objsrc_note_failure(r, st, e->fail_msg);
    }
    np_settle(n, i);
    np_unlock(n);
    if (st == INGOT_ERR_NOT_FOUND) {
        np_futex_wake(&e->state); /* the entry's other waiters plan again too */
    }
    return st;
}

/* Copy entry @p i's bytes that @p r asked for, then unpin it. */
static void np_copy(ingot_objsrc_node_t *n, os_req_t *r, int32_t i)
{
    const ingot_source_req_t *req = r->req;
    const np_entry_t *e = &n->e[i];
    uint64_t a = req->offset > e->offset ? req->offset : e->offset;
    uint64_t e1 = req->offset + req->length, e2 = e->offset + e->length;
    uint64_t b = e1 < e2 ? e1 : e2;
    if (b > a) {
        ingot_objsrc_copy_in(req, a - req->offset,
                             n->arena + (size_t)i * n->h->part_room + (a - e->offset), b - a);
    }
    if (np_lock(n, ingot_deadline_after(n->peer_timeout_ns)) == INGOT_OK) {
        n->e[i].pins--;
        np_settle(n, i);
        np_unlock(n);
    } else { /* its holder stopped: the part stays pinned, out of service (never unsafe) */
        ingot_warn("%s; part %" PRIu64 " of shard %u stays out of service", ingot_last_error(),
                   n->e[i].index, n->e[i].shard);
    }
}

/* ------------------------------------------------------------------ the request */

/* Every part of @p r, planned under the lock: each copied, waited for or fetched by this rank;
 * a part whose fetcher went silent is planned again (this rank takes it over). */
static ingot_status_t np_serve(ingot_objsrc_node_t *n, os_source_t *s, os_req_t *r, uint64_t k0,
                               uint64_t k1, uint64_t deadline_ns)
{
    const ingot_source_req_t *req = r->req;
    np_part_t parts[OS_WAITS_MAX] = {{0}};
    ingot_status_t st = INGOT_ERR_NOT_FOUND;
    uint64_t hold_until = ingot_deadline_after(n->peer_timeout_ns);
    hold_until = hold_until < deadline_ns ? hold_until : deadline_ns;
    np_step(n, req->step);
    for (int round = 0; st == INGOT_ERR_NOT_FOUND && round < 2; round++) {
        int room = 0, unsafe = 0;
        while (!room) {
            if ((st = np_lock(n, deadline_ns)) != INGOT_OK) {
                ingot_objsrc_note_failure(r, st, ingot_last_error());
                return st;
            }
            uint32_t moved = atomic_load(&n->h->moved);
            room = np_room(n, req->shard, k0, k1, 0);
            if (!room && !np_hold_back(n, req->step, moved, hold_until)) {
                break; /* locked still */
            }
        }
        if (!room) { /* the slowest rank, or held back long enough: the oldest parts go */
            unsafe = 1;
            room = np_room(n, req->shard, k0, k1, 1);
        }
        if (!room) {
            np_unlock(n);
            return INGOT_ERR_NO_RESOURCE; /* the caller reads the range directly */
        }
        np_plan(n, s, req->shard, k0, k1, req->step, unsafe, parts);
        np_unlock(n);
        for (uint64_t k = 0; k <= k1 - k0; k++) {
            if (parts[k].act == NP_DO_FETCH) {
                np_fetch_start(n, s, parts[k].entry, req->epoch, deadline_ns);
            }
        }
        st = INGOT_OK;
        for (uint64_t k = 0; k <= k1 - k0; k++) {
            int32_t i = parts[k].entry;
            ingot_status_t pst = parts[k].act == NP_DO_FETCH
                                     ? np_fetch_end(n, s, r, i, req->epoch, deadline_ns)
                                 : parts[k].act == NP_DO_WAIT ? np_wait(n, s, r, i, deadline_ns)
                                                              : INGOT_OK;
            if (pst == INGOT_OK) {
                np_copy(n, r, i); /* pinned for it */
            }
            st = st != INGOT_OK ? st : pst;
        }
    }
    if (st == INGOT_ERR_NOT_FOUND) { /* silent twice over: this rank gives up on the part */
        st = INGOT_ERR_TIMED_OUT;
        ingot_objsrc_note_failure(r, st, "objstore: a part's fetchers went silent twice");
    }
    return st;
}

int ingot_objsrc_node_submit(os_source_t *s, os_req_t *r, uint64_t deadline_ns)
{
    ingot_objsrc_node_t *n = s->node;
    const ingot_source_req_t *req = r->req;
    uint64_t plen = s->part_len[req->shard];
    uint64_t k0 = req->offset / plen, k1 = (req->offset + req->length - 1) / plen;
    if (n == NULL || k1 - k0 + 1 > OS_WAITS_MAX) {
        return -1;
    }
    uint64_t e = req->epoch - n->h->first_epoch;
    if (req->epoch >= n->h->first_epoch && e < n->h->nepochs) {
        atomic_fetch_add(&n->tally[e].needed, req->records); /* 0 when not known */
    }
    ingot_status_t st = np_serve(n, s, r, k0, k1, deadline_ns);
    if (st == INGOT_ERR_NO_RESOURCE) {
        atomic_fetch_add(&s->part_bypass, 1);
        return -1;
    }
    r->direct = 0;
    r->left = 1;
    ingot_objsrc_finish(s, r); /* completes the caller's request, its first failure noted */
    return 0;
}

/* ------------------------------------------------------------------ the segment */

/* The segment's layout for @p nparts parts: the head, entries, hash slots, shard ages, tallies
 * and the arena, each 64-byte aligned; its size. */
static uint64_t np_layout(np_head_t *h, uint32_t nparts, uint32_t nshards, uint32_t nepochs,
                          uint32_t nranks, uint32_t depth, uint64_t part_room)
{
    uint32_t slots = 1;
    while (slots < 2 * nparts) {
        slots <<= 1;
    }
#define NP_ALIGN(_x) (((_x) + 63) & ~(uint64_t)63)
    *h = (np_head_t){.magic = NP_MAGIC,
                     .nparts = nparts,
                     .nslots = slots,
                     .nshards = nshards,
                     .nepochs = nepochs,
                     .nranks = nranks,
                     .depth = depth,
                     .part_room = part_room};
    h->entries_off = NP_ALIGN(sizeof(np_head_t));
    h->hash_off = NP_ALIGN(h->entries_off + (uint64_t)nparts * sizeof(np_entry_t));
    h->shard_seq_off = NP_ALIGN(h->hash_off + (uint64_t)slots * sizeof(int32_t));
    h->tallies_off = NP_ALIGN(h->shard_seq_off + ((uint64_t)nshards + 1) * sizeof(uint64_t));
    h->ranks_off = NP_ALIGN(h->tallies_off + ((uint64_t)nepochs + 1) * sizeof(np_tally_t));
    h->arena_off = (h->ranks_off + (uint64_t)nranks * sizeof(np_rank_t) + 4095) & ~(uint64_t)4095;
    h->size = h->arena_off + (uint64_t)nparts * part_room;
#undef NP_ALIGN
    return h->size;
}

/* The leader makes the segment: the lock, every entry free, the index empty. */
static ingot_status_t np_init(ingot_objsrc_node_t *n, const np_head_t *layout, uint64_t first_epoch,
                              const ingot_tier_plan_t *plan)
{
    np_head_t *h = n->h;
    memcpy(h, layout, sizeof(*h));
    h->first_epoch = first_epoch;
    pthread_mutexattr_t a;
    pthread_mutexattr_init(&a);
    pthread_mutexattr_setpshared(&a, PTHREAD_PROCESS_SHARED);
    pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
    int rc = pthread_mutex_init(&h->lock, &a);
    pthread_mutexattr_destroy(&a);
    if (rc != 0) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE,
                          "objstore: the node's part cache lock cannot be made: %s", strerror(rc));
    }
    atomic_store(&h->holder, NP_NONE);
    h->free_head = h->lru_head = h->lru_tail = NP_NONE;
    for (uint32_t i = 0; i < h->nslots; i++) {
        n->hash[i] = NP_NONE;
    }
    for (uint32_t i = h->nparts; i-- > 0;) {
        np_free_push(n, (int32_t)i);
    }
    MPI_Group node, job;
    MPI_Comm_group(plan->node->node_comm, &node);
    MPI_Comm_group(plan->comm, &job);
    for (int r = 0; r < (int)h->nranks; r++) { /* the node's ranks as the job numbers them */
        int named = r;
        MPI_Group_translate_ranks(node, 1, &r, job, &named);
        n->ranks[r].job_rank = named;
    }
    MPI_Group_free(&node);
    MPI_Group_free(&job);
    return INGOT_OK;
}

/* Each rank's pointers into the segment at @p base. */
static void np_map(ingot_objsrc_node_t *n, char *base)
{
    n->h = (np_head_t *)base;
    n->e = (np_entry_t *)(base + n->h->entries_off);
    n->hash = (int32_t *)(base + n->h->hash_off);
    n->shard_seq = (uint64_t *)(base + n->h->shard_seq_off);
    n->tally = (np_tally_t *)(base + n->h->tallies_off);
    n->ranks = (np_rank_t *)(base + n->h->ranks_off);
    n->arena = base + n->h->arena_off;
}

ingot_status_t ingot_objsrc_node_create(os_source_t *s, const ingot_tier_plan_t *plan,
                                        uint64_t bytes, ingot_objsrc_node_t **node_p)
{
    const ingot_node_info_t *node = plan->node;
    MPI_Comm comm = node->node_comm;
    int leader = node->local_rank == 0;
    np_head_t layout;
    uint32_t nparts = (uint32_t)(bytes / s->slot_room);
    uint64_t size = np_layout(&layout, nparts, s->nshards, (uint32_t)plan->nepochs,
                              (uint32_t)node->local_size, plan->depth, s->slot_room);
    ingot_objsrc_node_t *n = ingot_calloc(1, sizeof(*n), "node part cache");
    np_fetch_t *fetch = ingot_calloc(nparts ? nparts : 1, sizeof(*fetch), "node part cache");
    char *base = NULL;
    ingot_status_t st = n && fetch ? INGOT_OK : INGOT_ERR_NO_MEMORY;
    if ((st = ingot_mpi_agree(&comm, st, "node part cache")) == INGOT_OK && n != NULL) {
        st = INGOT_MPI_CALL("node part cache", MPI_Win_allocate_shared, leader ? (MPI_Aint)size : 0,
                            1, MPI_INFO_NULL, comm, &base, &n->win);
        st = ingot_mpi_agree(&comm, st, "node part cache: shared memory");
    }
    if (st == INGOT_OK && n != NULL) {
        MPI_Aint qsize;
        int disp;
        st = INGOT_MPI_CALL("node part cache", MPI_Win_shared_query, n->win, 0, &qsize, &disp,
                            &base);
        if (st == INGOT_OK && leader) {
            memset(base, 0, (size_t)size); /* every page touched once now, not in epoch 0 */
            memcpy(base, &layout, sizeof(layout));
            np_map(n, base);
            st = np_init(n, &layout, plan->first_epoch, plan);
        }
        st = ingot_mpi_agree(&comm, st, "node part cache: set-up"); /* the leader's is done */
    }
    st = st == INGOT_OK && (n == NULL || base == NULL) ? INGOT_ERR_NO_MEMORY : st; /* analyser */
    if (st != INGOT_OK) {
        if (n != NULL && base != NULL) {
            MPI_Win_free(&n->win);
        }
        free(fetch);
        free(n);
        return st;
    }
    np_map(n, base);
    n->fetch = fetch;
    MPI_Comm_rank(plan->comm, &n->rank);
    n->local = node->local_rank;
    n->plan = plan;
    n->peer_timeout_ns = plan->peer_timeout_ns;
    n->abort_on_silence = plan->peer_abort;
    *node_p = n;
    return INGOT_OK;
}

/* Whether the node's ranks @p ranks are silent, as far as the node's segment tells: found so by
 * a waiter, or fetching a part whose heartbeat stopped for INGOT_PEER_TIMEOUT. Answers at once
 * (a rank busy elsewhere is waited for, up to the arrival's INGOT_TIMEOUT). */
static void np_alive(const int *ranks, int count, uint64_t deadline_ns, int *silent, void *arg)
{
    const ingot_objsrc_node_t *n = arg;
    (void)deadline_ns;
    for (int i = 0; i < count; i++) {
        const np_rank_t *r = &n->ranks[ranks[i]];
        silent[i] = atomic_load(&r->silent) != 0;
        for (uint32_t k = 0; !silent[i] && k < n->h->nparts; k++) {
            const np_entry_t *e = &n->e[k];
            silent[i] = atomic_load(&e->state) == NP_FETCHING && e->owner == r->job_rank &&
                        np_quiet(n, e);
        }
    }
}

static const char *np_host(int rank, void *arg)
{
    (void)rank; /* every rank of the arrival shares this node */
    return ((const ingot_objsrc_node_t *)arg)->plan->node->hostname;
}

void ingot_objsrc_node_destroy(ingot_objsrc_node_t *n)
{
    if (n == NULL) {
        return;
    }
    if (atomic_load(&n->lost) > 0) {
        ingot_info("objstore: %" PRIu64 " part(s) of the node's cache given up on (their fetcher "
                   "went silent)",
                   atomic_load(&n->lost));
    }
    atomic_store(&n->ranks[n->local].done, 1); /* the node's ranks wait for it no more */
    np_moved(n);
    if (n->h->nranks > 1) {
        /* A rank that never comes is named after INGOT_TIMEOUT; under INGOT_PEER_FAILURE=abort
         * one that the segment shows silent is named at once (under 'storage' it may resume). */
        ingot_arrival_t a = {.comm = &n->plan->node->node_comm,
                             .what = "objstore: the node's part cache free",
                             .timeout_ns = n->plan->timeout_ns,
                             .silence_ns = n->abort_on_silence ? n->peer_timeout_ns : 0,
                             .alive = n->abort_on_silence ? np_alive : NULL,
                             .arg = n,
                             .host = np_host,
                             .job_comm = &n->plan->comm};
        (void)ingot_mpi_arrive(&a);
    }
    (void)INGOT_MPI_CALL("objstore: the node's part cache free", MPI_Win_free, &n->win);
    free(n->fetch);
    free(n);
}

void ingot_objsrc_node_advance(ingot_objsrc_node_t *n, uint64_t step)
{
    if (n != NULL) {
        np_step(n, step);
    }
}

uint32_t ingot_objsrc_node_parts(const ingot_objsrc_node_t *n)
{
    return n != NULL ? n->h->nparts : 0;
}

int ingot_objsrc_node_epoch(const ingot_objsrc_node_t *n, uint64_t epoch, uint64_t *gets_p,
                            uint64_t *bytes_p, uint64_t *needed_p)
{
    if (n == NULL || epoch < n->h->first_epoch || epoch - n->h->first_epoch >= n->h->nepochs) {
        return -1;
    }
    const np_tally_t *t = &n->tally[epoch - n->h->first_epoch];
    *gets_p = atomic_load(&((np_tally_t *)t)->gets);
    *bytes_p = atomic_load(&((np_tally_t *)t)->bytes);
    *needed_p = atomic_load(&((np_tally_t *)t)->needed);
    return 0;
}

/*
 * The keeper of a node (one rank per node, for this job): its start-up scan (orphans removed, the
 * ledger written anew, what the folder holds sorted into this job's pieces and other jobs'
 * entries), the writer threads (DISK_WRITERS) that admit each fill by the policy under the
 * folder's ledger (victims evicted first; room kept for the fills being written), write it outside
 * that lock, then publish it and count it in the ledger under it again, and the prefetcher that
 * reads the pieces needed next from the source below within its share of the time. Pending fills
 * are written before it ends, or dropped when destroy's one INGOT_TIMEOUT is up.
 */
#include "source/disk/disk_impl.h"
#include "base/fault.h"
#include "base/stage.h"
#include "base/thread.h"
#include "base/log.h"
#include "base/status.h"
#include "base/time.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#define KEEPER_IDLE_NS    (50 * INGOT_NSEC_PER_MSEC) /* the prefetcher's look at the clock */
#define KEEPER_LEAD_STEPS 2 /* the prefetcher starts this far past the loader's depth */

/* A scanned entry: this job's piece homed here (resident), or another job's. */
static void keeper_found(void *arg, const ingot_disk_found_t *e)
{
    ingot_disk_t *d = arg;
    uint64_t p = ingot_disk_piece_of(d, &e->key);
    if (p != UINT64_MAX && d->homed[p]) {
        ingot_disk_policy_set(d->keeper->pol, p, INGOT_DISK_RESIDENT);
    } else {
        (void)ingot_disk_policy_foreign(d->keeper->pol, &e->key, e->bytes, e->mtime_ns);
    }
}

/* The folder as it is: scanned under the ledger's lock (no other job changes it meanwhile). */
static ingot_status_t keeper_scan(ingot_disk_t *d)
{
    ingot_disk_scan_t scan;
    uint64_t t0 = ingot_time_ns();
    ingot_status_t st = ingot_disk_ledger_lock(&d->folder);
    if (st != INGOT_OK) {
        return st;
    }
    st = ingot_disk_folder_scan(&d->folder, 1, keeper_found, d, &scan);
    if (st == INGOT_OK) {
        ingot_disk_ledger_set(&d->folder, scan.bytes);
        atomic_store(&d->keeper->usage, scan.bytes);
        ingot_disk_room_start(d, scan.bytes); /* the filesystem measured with the folder's usage */
    }
    ingot_disk_ledger_unlock(&d->folder);
    ingot_disk_policy_foreign_done(d->keeper->pol);
    uint64_t homed, resident;
    ingot_disk_policy_counts(d->keeper->pol, &homed, &resident);
    ingot_info("disk tier: %s holds %" PRIu64 " entries (%" PRIu64 " bytes; %" PRIu64 " of this "
               "job's %" PRIu64 " pieces homed here), %" PRIu64 " orphans removed, %" PRIu64
               " fills of live writers, scanned in %.3f s",
               d->dir, scan.entries, scan.bytes, resident, homed, scan.orphans, scan.fills_live,
               (double)(ingot_time_ns() - t0) / 1e9);
    return st;
}

/* Make room for @p size bytes for a piece needed at @p need (ledger and policy locked; 0: any
 * victim will do): 1 when there is, 0 when the policy bypasses the newcomer. */
static int keeper_room(ingot_disk_t *d, uint64_t size, uint64_t need)
{
    disk_keeper_t *k = d->keeper;
    uint64_t usage = ingot_disk_ledger_usage(&d->folder);
    while (usage + size > atomic_load(&k->budget)) {
        ingot_disk_victim_t v;
        if (!ingot_disk_policy_victim(k->pol, need, &v)) {
            return 0;
        }
        ingot_disk_key_t key = v.foreign ? v.key : ingot_disk_key(d, v.piece);
        if (!v.foreign) {
            ingot_disk_fd_drop(d, v.piece); /* its blocks freed now, not when the slot is reused */
        }
        uint64_t gone = ingot_disk_folder_remove(&d->folder, &key);
        usage = gone < usage ? usage - gone : 0;
        ingot_disk_ledger_add(&d->folder, -(int64_t)gone);
        atomic_fetch_add(&d->evictions, gone != 0);
    }
    return 1;
}

/* The ledger's lock for a fill: waited for INGOT_TIMEOUT, but never past destroy's end. */
static ingot_status_t keeper_ledger_lock(ingot_disk_t *d)
{
    return ingot_disk_ledger_lock_until(&d->folder, ingot_disk_deadline(d, 100));
}

int ingot_disk_keeper_pay(ingot_disk_t *d, uint64_t need)
{
    disk_keeper_t *k = d->keeper;
    if (keeper_ledger_lock(d) != INGOT_OK) {
        return 0;
    }
    pthread_mutex_lock(&k->lock);
    int room = keeper_room(d, atomic_load(&k->writing), need);
    pthread_mutex_unlock(&k->lock);
    atomic_store(&k->usage, ingot_disk_ledger_usage(&d->folder));
    ingot_disk_ledger_unlock(&d->folder);
    return room;
}

/* Publish a written fill of @p bytes and count it in the ledger, the two under the ledger's lock:
 * a start-up scan (which holds it) or an eviction by another job sees the entry and its count
 * together, never one without the other (a scan between them counted the entry twice). Should
 * the lock stay taken (another process holding it past INGOT_TIMEOUT), the entry is published
 * uncounted until the next start-up scan: said once. */
static ingot_status_t keeper_publish(ingot_disk_t *d, ingot_disk_fill_t *fill, uint64_t bytes,
                                     char *why, size_t whylen)
{
    static _Atomic int said;
    int locked = keeper_ledger_lock(d) == INGOT_OK;
    if (!locked && atomic_exchange(&said, 1) == 0) {
        ingot_warn("disk tier: the ledger of '%s' stayed locked: an entry of %" PRIu64
                   " bytes goes uncounted until the next job's scan (said once)",
                   d->dir, bytes);
    }
    ingot_status_t st = ingot_disk_entry_publish(d->folder.fd, fill, why, whylen);
    if (locked) {
        if (st == INGOT_OK) { /* the ledger counts published entries only, as a scan does */
            ingot_disk_ledger_add(&d->folder, (int64_t)bytes);
            atomic_store(&d->keeper->usage, ingot_disk_ledger_usage(&d->folder));
        }
        ingot_disk_ledger_unlock(&d->folder);
    }
    return st;
}

/* The filesystem refused a fill for want of room: the budget in effect shrinks to what the folder
 * holds and this keeper's other writers are writing (room.c), and entries are evicted down to it
 * (any victim, the one needed latest first). */
static void keeper_shrink(ingot_disk_t *d, const char *why)
{
    disk_keeper_t *k = d->keeper;
    if (keeper_ledger_lock(d) != INGOT_OK) {
        return; /* said by the lock; the next refused fill shrinks it */
    }
    uint64_t writing = atomic_load(&k->writing);
    (void)ingot_disk_room_shrink(d, ingot_disk_ledger_usage(&d->folder) + writing, why);
    pthread_mutex_lock(&k->lock);
    (void)keeper_room(d, writing, 0);
    pthread_mutex_unlock(&k->lock);
    atomic_store(&k->usage, ingot_disk_ledger_usage(&d->folder));
    ingot_disk_ledger_unlock(&d->folder);
}

/* Count every failed fill. A full disk shrinks the budget in effect, a folder that takes no file
 * turns fills off (each said once there); any other failure is said once here. */
void ingot_disk_keeper_fill_failed(ingot_disk_t *d, ingot_status_t st, const char *why)
{
    atomic_fetch_add(&d->fill_errors, 1);
    if (st == INGOT_ERR_NO_RESOURCE) {
        keeper_shrink(d, why);
    } else if (st == INGOT_ERR_PERMISSION) {
        ingot_disk_room_off(d, why);
    } else if (atomic_exchange(&d->said_fill, 1) == 0) {
        ingot_warn("disk tier: a piece was not cached in '%s' (%s); the job goes on from storage "
                   "(further failed fills are counted in the report, not said)",
                   d->dir, why);
    }
}

void ingot_disk_keeper_fill(ingot_disk_t *d, disk_buf_t *b)
{
    disk_keeper_t *k = d->keeper;
    uint64_t p = b->piece != UINT64_MAX ? b->piece : ingot_disk_piece_of(d, &b->key);
    if (p == UINT64_MAX || !d->homed[p]) {
        atomic_fetch_add(&d->refused, 1); /* not this node's to keep */
        return;
    }
    pthread_mutex_lock(&k->lock);
    (void)ingot_disk_policy_advance(k->pol, atomic_load(&k->now));
    uint64_t need = b->kind == DISK_FILL_PREFETCH ? b->need : ingot_disk_policy_need(k->pol, p);
    pthread_mutex_unlock(&k->lock);
    if (keeper_ledger_lock(d) != INGOT_OK) {
        ingot_disk_keeper_settle(d, p, INGOT_DISK_ABSENT);
        ingot_disk_keeper_fill_failed(d, INGOT_ERR_TIMED_OUT, "the ledger stayed locked");
        return;
    }
    uint64_t bytes = INGOT_DISK_HEADER_BYTES + b->len;
    pthread_mutex_lock(&k->lock);
    /* room for it beside the fills this keeper's writers are writing (not in the ledger yet) */
    uint64_t size = bytes + atomic_load(&k->writing);
    int admit = ingot_disk_room_fits(d, size) && keeper_room(d, size, need);
    if (ingot_fault_check(INGOT_FAULT_DISK_HOLD) != 0) { /* tests: a long hold of the lock */
        struct timespec hold = {3, 0};
        nanosleep(&hold, NULL);
    }
    if (admit) {
        atomic_fetch_add(&k->writing, bytes);
    }
    pthread_mutex_unlock(&k->lock);
    atomic_store(&k->usage, ingot_disk_ledger_usage(&d->folder));
    ingot_disk_ledger_unlock(&d->folder);
    char why[PATH_MAX + 256] = "";
    ingot_status_t st = INGOT_ERR_NO_RESOURCE;
    if (admit) { /* written outside the ledger's lock: the writers' syncs overlap */
        ingot_disk_fill_t fill;
        ingot_disk_entry_seal(b->mem, &b->key, b->len, b->layout);
        st = ingot_disk_entry_fill(d->folder.fd, &b->key, b->mem, b->len, d->folder.shared, &fill,
                                   why, sizeof(why));
        st = st == INGOT_OK ? keeper_publish(d, &fill, bytes, why, sizeof(why)) : st;
    }
    if (st == INGOT_OK) {
        atomic_fetch_add(&d->admitted, 1);
    }
    if (admit) {
        atomic_fetch_sub(&k->writing, bytes);
    } else {
        atomic_fetch_add(&d->refused, 1);
    }
    if (admit && st != INGOT_OK && st != INGOT_ERR_EXISTS) {
        ingot_disk_keeper_fill_failed(d, st, why);
    }
    /* another job writing it counts as there */
    ingot_disk_keeper_settle(d, p,
                             admit && (st == INGOT_OK || st == INGOT_ERR_EXISTS)
                                 ? INGOT_DISK_RESIDENT
                                 : INGOT_DISK_ABSENT);
}

static void keeper_done_one(ingot_disk_t *d, disk_buf_t *b)
{
    ingot_disk_buf_put(d, b);
    atomic_fetch_sub(&d->keeper->pending, 1);
    ingot_event_notify(&d->keeper->idle);
}

static void keeper_write_one(void *arg, void *item)
{
    ingot_disk_t *d = arg;
    disk_buf_t *b = item;
    if (atomic_load(&d->keeper->dropping)) { /* destroy's INGOT_TIMEOUT is up: not written */
        uint64_t p = b->piece != UINT64_MAX ? b->piece : ingot_disk_piece_of(d, &b->key);
        if (p != UINT64_MAX && b->kind != DISK_FILL_PART) { /* an assembly ends with the keeper */
            ingot_disk_keeper_settle(d, p, INGOT_DISK_ABSENT);
        }
        atomic_fetch_add(&d->refused, 1);
        atomic_fetch_add(&d->keeper->dropped, 1);
    } else if (b->kind == DISK_FILL_PART) {
        ingot_disk_keeper_part(d, b);
    } else {
        ingot_disk_keeper_fill(d, b);
    }
    keeper_done_one(d, b);
}

/* A writer: every fill queued is written, also those still queued at destroy. */
static void *keeper_writer_main(void *arg)
{
    ingot_disk_t *d = arg;
    ingot_stage_run(&d->keeper->fills, &d->abort, INGOT_STAGE_DRAIN, keeper_write_one, d);
    return NULL;
}

int ingot_disk_keeper_queue(ingot_disk_t *d, disk_buf_t *b, uint64_t deadline_ns)
{
    disk_keeper_t *k = d->keeper;
    atomic_fetch_add(&k->pending, 1);
    int queued = deadline_ns == 0
                     ? ingot_mpmc_try_push(&k->fills, b)
                     : ingot_mpmc_push_wait(&k->fills, b, deadline_ns, &d->abort) == INGOT_OK;
    if (!queued) {
        atomic_fetch_sub(&k->pending, 1);
        ingot_event_notify(&k->idle);
        /* a try (a push) keeps its claim: its pusher tries again; a part's piece stays claimed
         * for the parts still to come */
        if (deadline_ns != 0 && b->kind != DISK_FILL_PART) {
            ingot_disk_keeper_settle(d, b->piece, INGOT_DISK_ABSENT);
        }
        ingot_disk_buf_put(d, b);
    }
    return queued;
}

void ingot_disk_keeper_offer(ingot_disk_t *d, disk_buf_t *b)
{
    if (!ingot_disk_keeper_queue(d, b, ingot_disk_deadline(d, DISK_PUSH_SHARE))) {
        atomic_fetch_add(&d->refused, 1);
    }
}

/* Pace the prefetcher: after a read of @p took_ns, rest so that reads take their share. */
static void keeper_pace(ingot_disk_t *d, uint64_t took_ns)
{
    if (d->prefetch_pct >= 100) {
        return;
    }
    uint64_t rest = took_ns * (uint64_t)(100 - d->prefetch_pct) / (uint64_t)d->prefetch_pct;
    uint64_t until = ingot_deadline_after(rest);
    while (!ingot_abort_is_raised(&d->abort) && ingot_time_ns() < until) {
        uint64_t left = until - ingot_time_ns();
        struct timespec ts = {0, (long)(left < KEEPER_IDLE_NS ? left : KEEPER_IDLE_NS)};
        nanosleep(&ts, NULL);
    }
}

/* Wait a while (KEEPER_IDLE_NS at most) for the clock to move past @p before. */
static void keeper_idle(ingot_disk_t *d, uint64_t before)
{
    uint64_t deadline = ingot_deadline_after(KEEPER_IDLE_NS);
    while (atomic_load(&d->keeper->now) == before && ingot_time_ns() < deadline &&
           !ingot_abort_is_raised(&d->abort)) {
        struct timespec ts = {0, 2 * INGOT_NSEC_PER_MSEC};
        nanosleep(&ts, NULL);
    }
}

/* The next piece to prefetch (1), or 0 after waiting a while for the clock. */
static int keeper_next(ingot_disk_t *d, uint64_t *p_p, uint64_t *need_p)
{
    disk_keeper_t *k = d->keeper;
    uint64_t before = atomic_load(&k->now);
    pthread_mutex_lock(&k->lock);
    (void)ingot_disk_policy_advance(k->pol, before);
    /* none while fills are off or a whole piece exceeds the budget in effect: its fill would be
     * refused after its read from below */
    int got = ingot_disk_room_fits(d, INGOT_DISK_HEADER_BYTES + d->piece_bytes) &&
              ingot_disk_policy_prefetch(k->pol, ingot_disk_keeper_has_room(d), p_p, need_p);
    if (got) {
        ingot_disk_keeper_claim_locked(d, *p_p);
    }
    pthread_mutex_unlock(&k->lock);
    if (!got) {
        keeper_idle(d, before);
    }
    return got;
}

/* The prefetcher's thread: the assemblies an epoch left unfinished completed, then the pieces
 * needed next read ahead within INGOT_DISK_PREFETCH percent of the time. */
static void *keeper_prefetch_main(void *arg)
{
    ingot_disk_t *d = arg;
    while (!ingot_abort_is_raised(&d->abort)) {
        uint64_t p, need;
        /* the assemblies of an epoch that is over: what they miss read now */
        ingot_disk_asm_complete(d, 0, ingot_deadline_after(d->p.timeout_ns));
        if (d->prefetch_pct == 0) { /* started for the assemblies alone */
            keeper_idle(d, atomic_load(&d->keeper->now));
            continue;
        }
        if (!keeper_next(d, &p, &need)) {
            continue;
        }
        disk_buf_t *b = ingot_disk_buf_get(d, ingot_deadline_after(d->p.timeout_ns));
        uint64_t t0 = ingot_time_ns();
        uint64_t epoch = need / d->p.steps_per_epoch;
        ingot_status_t st = b ? ingot_disk_read_below(d, p, 0, UINT64_MAX, epoch, b,
                                                      ingot_deadline_after(d->p.timeout_ns))
                              : INGOT_ERR_CANCELED;
        if (st == INGOT_OK) {
            atomic_fetch_add(&d->prefetched, 1);
            atomic_fetch_add(&d->prefetch_bytes, b->len);
            b->kind = DISK_FILL_PREFETCH;
            b->need = need;
            st = ingot_disk_piece_sound(d, p, b) ? INGOT_OK : INGOT_ERR_CORRUPT;
        }
        if (st != INGOT_OK) {
            ingot_disk_keeper_settle(d, p, INGOT_DISK_ABSENT);
            if (b != NULL && atomic_load(&b->sub.state) != INGOT_SOURCE_REQ_QUARANTINED) {
                ingot_disk_buf_put(d, b);
            }
            continue;
        }
        if (!ingot_disk_keeper_queue(d, b, ingot_deadline_after(d->p.timeout_ns))) {
            continue;
        }
        keeper_pace(d, ingot_time_ns() - t0);
    }
    return NULL;
}

static ingot_status_t keeper_threads(ingot_disk_t *d)
{
    disk_keeper_t *k = d->keeper;
    for (; k->writers_started < DISK_WRITERS; k->writers_started++) {
        INGOT_CHECK(ingot_thread_start(&k->writers[k->writers_started], "ingot-dwrite",
                                       keeper_writer_main, d, 0));
    }
    if (d->prefetch_pct > 0 || d->parts) { /* with assemblies: their completion too */
        INGOT_CHECK(ingot_thread_start(&k->prefetcher, "ingot-dfetch", keeper_prefetch_main, d, 0));
        k->prefetcher_started = 1;
    }
    return INGOT_OK;
}

ingot_status_t ingot_disk_keeper_create(ingot_disk_t *d)
{
    disk_keeper_t *k = ingot_calloc(1, sizeof(*k), "disk keeper");
    if (k == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    d->keeper = k;
    pthread_mutex_init(&k->lock, NULL); /* first: destroy cleans up after any failure below */
    ingot_event_init(&k->idle);
    atomic_store(&k->budget, d->budget); /* until the scan measures the filesystem */
    k->t0 = ingot_time_ns();
    k->as.fd = -1;
    k->claimed_at = ingot_calloc(d->npieces ? d->npieces : 1, sizeof(uint32_t), "disk claims");
    if (k->claimed_at == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    atomic_store(&k->now, d->p.start_step);
    ingot_disk_policy_params_t pp = {.manifest = d->p.manifest,
                                     .order = d->order,
                                     .pieces = d->pieces,
                                     .homed = d->homed,
                                     .first_step = d->p.start_step,
                                     .end_step = d->p.start_step + d->p.total_steps,
                                     .steps_per_epoch = d->p.steps_per_epoch,
                                     .global_batch = d->p.global_batch,
                                     .lead = d->p.depth + KEEPER_LEAD_STEPS,
                                     .lru = d->lru};
    ingot_status_t st = ingot_mpmc_init(&k->fills, DISK_FILL_QUEUE);
    if (st == INGOT_OK) {
        st = ingot_disk_policy_create(&pp, &k->pol);
    }
    if (st == INGOT_OK) {
        st = keeper_scan(d);
    }
    if (st == INGOT_OK) {
        st = ingot_disk_asm_create(d);
    }
    return st == INGOT_OK ? keeper_threads(d) : st;
}

void ingot_disk_advance(ingot_disk_t *d, uint64_t step)
{
    disk_keeper_t *k = d != NULL ? d->keeper : NULL;
    uint64_t now = k != NULL ? atomic_load(&k->now) : UINT64_MAX;
    while (now != UINT64_MAX && step > now && !atomic_compare_exchange_weak(&k->now, &now, step)) {
    }
}

static bool keeper_drained(void *arg)
{
    return atomic_load(&((disk_keeper_t *)arg)->pending) == 0;
}

void ingot_disk_keeper_finish(ingot_disk_t *d, int share)
{
    disk_keeper_t *k = d->keeper;
    if (k == NULL || !d->parts) {
        return;
    }
    uint64_t deadline = ingot_disk_deadline(d, share);
    if (ingot_event_wait_until(&k->idle, keeper_drained, k, deadline, NULL) == INGOT_OK) {
        ingot_disk_asm_complete(d, 1, deadline);
    }
}

void ingot_disk_keeper_destroy(ingot_disk_t *d)
{
    disk_keeper_t *k = d->keeper;
    if (k == NULL) {
        return;
    }
    ingot_abort_raise(&d->abort);
    if (k->prefetcher_started) {
        pthread_join(k->prefetcher, NULL);
    }
    /* the writers empty the queue before they end; what is left at destroy's end is dropped
     * (the fills being written finish in their own write time) */
    if (ingot_event_wait_until(&k->idle, keeper_drained, k, ingot_disk_deadline(d, 100), NULL) !=
        INGOT_OK) {
        atomic_store(&k->dropping, 1);
    }
    ingot_mpmc_wake_all(&k->fills);
    for (int i = 0; i < k->writers_started; i++) {
        pthread_join(k->writers[i], NULL);
    }
    if (atomic_load(&k->dropped) > 0) {
        ingot_warn("disk tier: %" PRIu64 " fills still queued when destroy's INGOT_TIMEOUT was up "
                   "were dropped (their pieces come from below next time)",
                   atomic_load(&k->dropped));
    }
    ingot_disk_asm_destroy(d);
    ingot_disk_policy_destroy(k->pol);
    ingot_mpmc_cleanup(&k->fills);
    free(k->claimed_at);
    pthread_mutex_destroy(&k->lock);
    free(k);
    d->keeper = NULL;
}

/*
 * The disk tier between ranks, over the transport's services: every rank serves reads of its
 * node's folder to ranks of other nodes (a server thread reads and checks the entry, the reply
 * carries the bytes), a keeper takes pieces pushed to it (written through from any rank), and
 * the requester's side of both. A home that fails a read or a push is left alone from then on
 * (said once): its pieces come from storage.
 */
#include "source/disk/disk_impl.h"
#include "base/stage.h"
#include "base/thread.h"
#include "base/log.h"
#include "base/time.h"
#include <inttypes.h>
#include <string.h>

#define SERVE_LOG2_SHIFT  56           /* key[1]: the piece's log2 above its index */
#define SERVE_WANT        (1ull << 63) /* key[1]: a keeper is asked whether it wants the piece */
#define SERVE_RELEASE     (1ull << 62) /* key[1]: a claim given up (its fill was dropped) */
#define SERVE_PART        SERVE_WANT /* key[1] of a push: a part, its offset in its first 8 bytes */
#define SERVE_BUSY_MIN_NS 1000000L   /* a pusher's first pause when its keeper is busy */
#define SERVE_BUSY_MAX_NS 64000000L  /* and its longest */

/* A keeper's answer to a want, as the reply's status. */
static const ingot_status_t serve_want_status[] = {[DISK_WANT_FILL] = INGOT_ERR_NOT_FOUND,
                                                   [DISK_WANT_THERE] = INGOT_ERR_EXISTS,
                                                   [DISK_WANT_NO] = INGOT_ERR_NO_RESOURCE,
                                                   [DISK_WANT_PART] = INGOT_ERR_MISMATCH};

static void serve_key(const ingot_disk_key_t *k, uint64_t key[2])
{
    key[0] = k->shard_hash;
    key[1] = k->piece | ((uint64_t)k->piece_log2 << SERVE_LOG2_SHIFT);
}

static ingot_disk_key_t serve_unkey(const uint64_t key[2])
{
    return (ingot_disk_key_t){
        key[0], key[1] & ((1ull << SERVE_LOG2_SHIFT) - 1),
        (uint32_t)((key[1] & ~(SERVE_WANT | SERVE_RELEASE)) >> SERVE_LOG2_SHIFT)};
}

/* A peer's read (progress thread): queued for the server, or refused at once. */
static ingot_status_t serve_call(void *arg, const ingot_transport_call_t *call)
{
    ingot_disk_t *d = arg;
    if (call->key[1] & (SERVE_WANT | SERVE_RELEASE)) { /* answered at once, by the keeper */
        ingot_disk_key_t k = serve_unkey(call->key);
        uint64_t p = ingot_disk_piece_of(d, &k);
        if (d->keeper == NULL || p == UINT64_MAX || !d->homed[p]) {
            return serve_want_status[DISK_WANT_NO];
        }
        if (call->key[1] & SERVE_RELEASE) { /* dropped when busy: the claim lapses */
            (void)ingot_disk_keeper_settle_how(d, p, INGOT_DISK_ABSENT, DISK_TRY);
            return INGOT_ERR_CANCELED; /* a status alone: the asker does not wait for it */
        }
        return serve_want_status[ingot_disk_keeper_want(d, p, call->off, DISK_TRY)];
    }
    if (!d->usable) {
        return INGOT_ERR_NOT_FOUND;
    }
    disk_buf_t *b = ingot_disk_buf_rx(d);
    if (b == NULL) {
        return INGOT_ERR_NO_RESOURCE;
    }
    b->call = *call;
    if (!ingot_mpmc_try_push(&d->calls, b)) {
        ingot_disk_buf_put(d, b);
        return INGOT_ERR_NO_RESOURCE;
    }
    return INGOT_OK;
}

/* Bytes a rank wrote through to this node (progress thread): to the keeper's writer. A whole
 * piece, or a part of one being assembled (SERVE_PART: its offset in the piece first). */
static ingot_status_t serve_push(void *arg, int from, const uint64_t key[2], const void *data,
                                 size_t len)
{
    ingot_disk_t *d = arg;
    ingot_disk_key_t k = serve_unkey(key);
    uint64_t p = ingot_disk_piece_of(d, &k), off = 0;
    int part = (key[1] & SERVE_PART) != 0;
    (void)from;
    if (d->keeper == NULL || p == UINT64_MAX || !d->homed[p]) {
        return INGOT_ERR_NOT_FOUND;
    }
    uint64_t plen = ingot_disk_piece_len(d, p);
    if (part) {
        if (len <= sizeof(off)) {
            return INGOT_ERR_FORMAT;
        }
        memcpy(&off, data, sizeof(off));
        data = (const uint8_t *)data + sizeof(off);
        len -= sizeof(off);
    }
    if (part ? off > plen || len > plen - off : len != plen) {
        return INGOT_ERR_FORMAT;
    }
    int claimed = part ? 1 : ingot_disk_keeper_claimed(d, p); /* a part's slot: at the writer */
    if (claimed < 0) {
        return INGOT_ERR_NO_RESOURCE; /* the keeper busy: the pusher tries again */
    }
    if (claimed == 0) {
        return INGOT_OK; /* not claimed for a fill (lapsed, or written): not wanted */
    }
    disk_buf_t *b = ingot_disk_buf_rx(d);
    if (b == NULL) {
        return INGOT_ERR_NO_RESOURCE; /* the pusher retries */
    }
    memcpy(b->mem + INGOT_DISK_HEADER_BYTES, data, len);
    b->key = k;
    b->piece = p;
    b->off = off;
    b->len = len;
    b->layout = 0;
    b->kind = part ? DISK_FILL_PART : DISK_FILL_PUSH;
    /* no wait in progress: a full queue is the pusher's to retry, the claim kept for it */
    return ingot_disk_keeper_queue(d, b, 0) ? INGOT_OK : INGOT_ERR_NO_RESOURCE;
}

/* A reply's bytes left the buffer (transport lock held). */
static void serve_sent(void *arg)
{
    disk_buf_t *b = arg;
    ingot_disk_t *d = b->d;
    ingot_disk_buf_put(d, b);
    atomic_fetch_sub(&d->replies_out, 1);
}

/* Answer one queued read from this node's folder (NOT_FOUND at destroy). */
static void serve_one(void *arg, void *item)
{
    ingot_disk_t *d = arg;
    disk_buf_t *b = item;
    ingot_disk_key_t k = serve_unkey(b->call.key);
    uint64_t p = ingot_disk_piece_of(d, &k);
    const uint8_t *data = NULL;
    size_t shift = 0;
    ingot_status_t st = INGOT_ERR_NOT_FOUND;
    if (p != UINT64_MAX && !ingot_abort_is_raised(&d->abort)) {
        st = ingot_disk_read_local(d, p, b->call.off, b->call.len, b->mem + INGOT_DISK_HEADER_BYTES,
                                   d->piece_bytes, 1, &shift); /* a peer's: checked here */
        data = b->mem + INGOT_DISK_HEADER_BYTES + shift;
    }
    if (st == INGOT_OK) {
        atomic_fetch_add_explicit(&d->piece_hits[p], 1, memory_order_relaxed);
    }
    atomic_fetch_add(&d->replies_out, 1);
    ingot_transport_service_reply(d->svc, &b->call, st, data, (size_t)b->call.len, serve_sent, b);
}

/* The server: every queued read answered, also those still queued at the end. */
static void *serve_main(void *arg)
{
    ingot_disk_t *d = arg;
    ingot_stage_run(&d->calls, &d->abort, INGOT_STAGE_DRAIN, serve_one, d);
    return NULL;
}

ingot_status_t ingot_disk_serve_start(ingot_disk_t *d)
{
    static const ingot_transport_service_ops_t ops = {.call = serve_call, .push = serve_push};
    d->node_failed = ingot_calloc((size_t)d->nnodes, sizeof(int), "disk nodes");
    ingot_status_t st = d->node_failed ? ingot_mpmc_init(&d->calls, DISK_SERVE_QUEUE)
                                       : INGOT_ERR_NO_MEMORY;
    if (st == INGOT_OK) {
        st = ingot_transport_service_create(d->transport, &ops, d, &d->svc);
    }
    if (st == INGOT_OK) {
        st = ingot_thread_start(&d->server, "ingot-dserve", serve_main, d, 0);
    }
    d->server_started = st == INGOT_OK;
    return st;
}

void ingot_disk_serve_stop(ingot_disk_t *d)
{
    if (d->svc != NULL) {
        ingot_transport_service_close(d->svc); /* no new reads or pushes */
    }
    ingot_abort_raise(&d->abort);
    if (d->server_started) {
        ingot_mpmc_wake_all(&d->calls);
        pthread_join(d->server, NULL);
        d->server_started = 0;
    }
    uint64_t deadline = ingot_disk_deadline(d, 100);
    while (atomic_load(&d->replies_out) > 0 && ingot_time_ns() < deadline) {
        if (ingot_transport_progress(d->transport) == 0) {
            struct timespec ts = {0, 100000};
            nanosleep(&ts, NULL);
        }
    }
    ingot_transport_service_destroy(d->svc);
    d->svc = NULL;
    if (d->node_failed != NULL) {
        ingot_mpmc_cleanup(&d->calls);
    }
    free((void *)d->node_failed);
    d->node_failed = NULL;
}

/* A node that failed a read or a push: left alone, said once. */
static void serve_node_failed(ingot_disk_t *d, int node, int rank, ingot_status_t st)
{
    if (atomic_exchange(&d->node_failed[node], 1) == 0) {
        ingot_warn("disk tier: rank %d (node %s) failed a disk-tier request (%s): its pieces come "
                   "from storage from now on",
                   rank, ingot_topo_node_hostname(d->p.node, node), ingot_status_string(st));
    }
}

/* One op to @p rank: a read or a push, waited for. */
static ingot_status_t serve_op(ingot_disk_t *d, int rank, const uint64_t key[2], uint64_t off,
                               void *dst, const void *src, uint64_t len, uint64_t deadline_ns)
{
    ingot_transport_t *t = d->transport;
    ingot_transport_op_t op = {0};
    uint64_t bound = ingot_deadline_after(ingot_transport_peer_timeout(t));
    ingot_transport_op_begin(t, &op, rank, bound < deadline_ns ? bound : deadline_ns, &op);
    ingot_status_t st = src != NULL
                            ? ingot_transport_service_push(d->svc, &op, key, src, (size_t)len)
                            : ingot_transport_service_read(d->svc, &op, key, off, dst, (size_t)len);
    ingot_transport_op_end(t, &op);
    ingot_transport_op_wait(t, &op);
    return st != INGOT_OK ? st : atomic_load(&op.status);
}

int ingot_disk_want(ingot_disk_t *d, uint64_t p, uint64_t len, uint64_t deadline_ns)
{
    int home = d->home[p], keeper = home >= 0 ? d->node_keeper[home] : -1;
    if (keeper == d->rank) {
        return ingot_disk_keeper_want(d, p, len, DISK_WAIT);
    }
    if (keeper < 0 || d->svc == NULL || atomic_load(&d->node_failed[home])) {
        return DISK_WANT_NO;
    }
    ingot_disk_key_t k = ingot_disk_key(d, p);
    uint64_t key[2], word;
    serve_key(&k, key);
    key[1] |= SERVE_WANT;
    ingot_status_t st = serve_op(d, keeper, key, len, &word, NULL, 0, deadline_ns); /* len: off */
    for (int w = DISK_WANT_FILL; w <= DISK_WANT_PART; w++) {
        if (st == serve_want_status[w]) {
            return w;
        }
    }
    serve_node_failed(d, home, keeper, st);
    return DISK_WANT_NO;
}

ingot_status_t ingot_disk_read_home(ingot_disk_t *d, uint64_t p, int home, uint64_t off,
                                    uint64_t len, void *dst, uint64_t deadline_ns)
{
    if (d->svc == NULL || atomic_load(&d->node_failed[home])) {
        return INGOT_ERR_NOT_FOUND;
    }
    ingot_disk_key_t k = ingot_disk_key(d, p);
    uint64_t key[2];
    serve_key(&k, key);
    int rank = ingot_disk_home_rank(d, home, p);
    ingot_status_t st = serve_op(d, rank, key, off, dst, NULL, len, deadline_ns);
    if (st != INGOT_OK && st != INGOT_ERR_NOT_FOUND && st != INGOT_ERR_NO_RESOURCE) {
        serve_node_failed(d, home, rank, st);
    }
    return st;
}

/* Give up the claim on piece @p p this rank got for a fill it drops. */
void ingot_disk_release_claim(ingot_disk_t *d, uint64_t p, uint64_t deadline_ns)
{
    int home = d->home[p], keeper = home >= 0 ? d->node_keeper[home] : -1;
    if (keeper == d->rank) {
        ingot_disk_keeper_settle(d, p, INGOT_DISK_ABSENT);
    } else if (keeper >= 0 && d->svc != NULL && !atomic_load(&d->node_failed[home])) {
        ingot_disk_key_t k = ingot_disk_key(d, p);
        uint64_t key[2], word;
        serve_key(&k, key);
        key[1] |= SERVE_RELEASE;
        (void)serve_op(d, keeper, key, 0, &word, NULL, 0, deadline_ns);
    }
}

/* Hand one piece to its keeper: this process's, or pushed, retried while the keeper is busy. */
static void pusher_one(void *arg, void *item)
{
    ingot_disk_t *d = arg;
    disk_buf_t *b = item;
    int home = d->home[b->piece], keeper = home >= 0 ? d->node_keeper[home] : -1;
    if (keeper == d->rank) {
        ingot_disk_keeper_offer(d, b); /* the buffer is the keeper's now */
        return;
    }
    uint64_t deadline = ingot_disk_deadline(d, DISK_PUSH_SHARE), key[2];
    serve_key(&b->key, key);
    int part = b->kind == DISK_FILL_PART;
    uint8_t *src = b->mem + INGOT_DISK_HEADER_BYTES;
    if (part) { /* its offset travels before its bytes, in the header's room */
        key[1] |= SERVE_PART;
        src -= sizeof(b->off);
        memcpy(src, &b->off, sizeof(b->off));
    }
    ingot_status_t st = INGOT_ERR_CANCELED; /* past destroy's share: dropped, its claim lapses */
    long pause_ns = SERVE_BUSY_MIN_NS;
    while (keeper >= 0 && d->svc != NULL && !atomic_load(&d->node_failed[home]) &&
           ingot_time_ns() < deadline) {
        st = serve_op(d, keeper, key, 0, NULL, src, b->len + (part ? sizeof(b->off) : 0), deadline);
        if (st != INGOT_ERR_NO_RESOURCE || ingot_time_ns() >= deadline) {
            break;
        }
        /* its queue or buffers are full: a pause, longer each time, not a storm of pushes */
        struct timespec busy = {0, pause_ns};
        nanosleep(&busy, NULL);
        pause_ns = pause_ns * 2 < SERVE_BUSY_MAX_NS ? pause_ns * 2 : SERVE_BUSY_MAX_NS;
    }
    if (st == INGOT_ERR_TIMED_OUT || st == INGOT_ERR_UCX) {
        serve_node_failed(d, home, keeper, st);
    } else if (st == INGOT_ERR_CANCELED) {
        atomic_fetch_add(&d->refused, 1);
    } else if (st != INGOT_OK) {
        atomic_fetch_add(&d->refused, 1);
        if (!part) { /* a part's piece stays claimed for the parts to come */
            ingot_disk_release_claim(d, b->piece, deadline);
        }
    }
    ingot_disk_buf_put(d, b);
}

/* The pusher: every queued piece handed over, also those queued when it is told to drain. */
static void *pusher_main(void *arg)
{
    ingot_disk_t *d = arg;
    ingot_stage_run(&d->outbox, &d->drain, INGOT_STAGE_DRAIN, pusher_one, d);
    return NULL;
}

void ingot_disk_write_through(ingot_disk_t *d, uint64_t p, disk_buf_t *b, uint64_t deadline_ns)
{
    /* claimed for this rank; the queue holds every buffer of the pool, so a fill is never dropped
     * for want of room: when the writer lags, the pool runs dry and the next misses wait for a
     * buffer (the tier's only back-pressure) */
    b->piece = p;
    if (d->home[p] < 0 || !d->pusher_started ||
        ingot_mpmc_push_wait(&d->outbox, b, deadline_ns, &d->abort) != INGOT_OK) {
        int part = b->kind == DISK_FILL_PART;
        atomic_fetch_add(&d->refused, 1);
        ingot_disk_buf_put(d, b);
        if (!part) { /* a part's piece stays claimed for the parts to come */
            ingot_disk_release_claim(d, p, deadline_ns);
        }
    }
}

ingot_status_t ingot_disk_pusher_start(ingot_disk_t *d)
{
    ingot_status_t st = ingot_mpmc_init(&d->outbox, d->nbufs);
    if (st == INGOT_OK &&
        (st = ingot_thread_start(&d->pusher, "ingot-dpush", pusher_main, d, 0)) != INGOT_OK) {
        ingot_mpmc_cleanup(&d->outbox);
    }
    d->pusher_started = st == INGOT_OK;
    return st;
}

void ingot_disk_pusher_drain(ingot_disk_t *d)
{
    if (d->pusher_started) {
        ingot_abort_raise(&d->drain);
        ingot_mpmc_wake_all(&d->outbox);
        pthread_join(d->pusher, NULL);
        ingot_mpmc_cleanup(&d->outbox);
        d->pusher_started = 0;
    }
}

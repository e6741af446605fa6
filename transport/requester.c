/*
 * The requester's side of a read: the get protocol (the window mapped here and copied, or
 * ucp_get), and active-message requests whose replies land in the destination (eagerly copied, or
 * by rendezvous straight into it) or, under put, that the owner writes into the requester's
 * registered memory. Entries track requests in flight; a late reply never lands.
 */
#include "transport/transport_impl.h"
#include "base/cuda.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/status.h"
#include "base/time.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef transport_am_req_hdr_t am_req_hdr_t;
typedef transport_am_rep_hdr_t am_rep_hdr_t;

static transport_am_entry_t *am_entry_get(ingot_transport_t *t)
{
    if (t->am_free >= TRANSPORT_AM_ENTRIES) {
        return NULL;
    }
    transport_am_entry_t *e = &t->am[t->am_free];
    t->am_free = e->next_free;
    e->gen++;
    return e;
}

static void am_entry_push(ingot_transport_t *t, transport_am_entry_t *e)
{
    e->next_free = t->am_free;
    t->am_free = (uint32_t)(e - t->am);
}

void ingot_transport_am_entry_free(ingot_transport_t *t, transport_am_entry_t *e)
{
    e->state = AM_ENTRY_FREE;
    e->op = NULL;
    e->gen++; /* a late reply no longer matches */
    if (e->sending) {
        e->free_pending = 1; /* UCX still holds its header */
    } else {
        am_entry_push(t, e);
    }
}

/* A request's send is over: its header may be reused; a push's bytes have left its buffer. */
static void am_sent(transport_am_entry_t *e, ingot_status_t st)
{
    ingot_transport_op_t *op = e->send_op;
    e->sending = 0;
    e->send_op = NULL;
    if (e->free_pending) {
        e->free_pending = 0;
        am_entry_push(e->t, e);
    }
    if (op != NULL) {
        ingot_transport_op_put(e->t, op, st);
    }
}

static void am_req_sent(void *request, ucs_status_t status, void *user_data)
{
    transport_am_entry_t *e = user_data;
    if (request != NULL) {
        ucp_request_free(request);
    }
    am_sent(e, status == UCS_OK ? INGOT_OK : INGOT_ERR_UCX);
}

/* An entry's read is over: give the entry back, count it on its op. Lock held. */
static void am_entry_done(ingot_transport_t *t, transport_am_entry_t *e, ingot_status_t st)
{
    ingot_transport_op_t *op = e->op;
    ingot_transport_am_entry_free(t, e);
    ingot_transport_op_put(t, op, st);
}

static void am_recv_done(void *request, ucs_status_t status, size_t length, void *user_data)
{
    transport_am_entry_t *e = user_data;
    ingot_transport_t *t = e->t;
    ingot_status_t st = INGOT_OK;
    if (status != UCS_OK) {
        st = INGOT_ERR_UCX;
    } else if (length != e->len) {
        st = INGOT_ERR_FORMAT;
    }
    if (request != NULL) {
        ucp_request_free(request);
    }
    am_entry_done(t, e, st);
}

ucs_status_t ingot_transport_am_rep_cb(void *arg, const void *header, size_t header_length,
                                       void *data, size_t length, const ucp_am_recv_param_t *param)
{
    ingot_transport_t *t = arg;
    int rndv = !!(param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV);
    am_rep_hdr_t rep;
    transport_am_entry_t *e = NULL;
    if (header_length == sizeof(rep)) {
        memcpy(&rep, header, sizeof(rep));
        if (rep.entry < TRANSPORT_AM_ENTRIES && t->am[rep.entry].gen == rep.gen &&
            (t->am[rep.entry].state == AM_ENTRY_WAIT || t->am[rep.entry].state == AM_ENTRY_PUT)) {
            e = &t->am[rep.entry];
        }
    }
    if (e == NULL) { /* cancelled or expired: a late reply never lands */
        if (rndv) {
            ucp_am_data_release(t->worker, data);
        }
        return UCS_OK;
    }
    size_t want = (e->state == AM_ENTRY_PUT) ? 0 : e->len; /* a put's bytes are there */
    if (rep.status != INGOT_OK || length != want) {
        if (rep.status == INGOT_OK) {
            ingot_error("transport: rank %d answered a read of %zu bytes with %zu", e->op->peer,
                        e->len, length);
        }
        if (rndv) {
            ucp_am_data_release(t->worker, data);
        }
        am_entry_done(t, e, rep.status != INGOT_OK ? rep.status : INGOT_ERR_FORMAT);
        return UCS_OK;
    }
    if (!rndv) {
        if (length > 0) { /* nothing for a put or a status alone (e->dst may be NULL) */
            memcpy(e->dst, data, length);
        }
        am_entry_done(t, e, INGOT_OK);
        return UCS_OK;
    }
    e->state = AM_ENTRY_RNDV; /* bytes now land in e->dst: no longer cancellable */
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                               UCP_OP_ATTR_FIELD_USER_DATA,
                               .cb.recv_am = am_recv_done,
                               .user_data = e};
    void *req = ucp_am_recv_data_nbx(t->worker, data, e->dst, length, &prm);
    if (req == NULL) {
        am_entry_done(t, e, INGOT_OK);
    } else if (UCS_PTR_IS_ERR(req)) {
        am_entry_done(t, e, INGOT_ERR_UCX);
    }
    return UCS_OK;
}

void ingot_transport_am_peer_closed(ingot_transport_t *t, int peer)
{
    for (uint32_t i = 0; i < TRANSPORT_AM_ENTRIES; i++) {
        transport_am_entry_t *e = &t->am[i];
        if (e->state == AM_ENTRY_PUT && e->op != NULL && e->op->peer == peer) {
            am_entry_done(t, e, INGOT_ERR_UCX);
        }
    }
}

/* The put destination holding [dst, dst + len), or NULL. Lock held. */
static ingot_transport_window_t *dest_of(ingot_transport_t *t, const void *dst, size_t len)
{
    uintptr_t a = (uintptr_t)dst;
    for (uint32_t i = 0; i < t->nwindows; i++) {
        ingot_transport_window_t *d = t->windows[i];
        uintptr_t base = d ? (uintptr_t)d->base : 0;
        if (d != NULL && d->dest && a >= base && len <= d->bytes && a - base <= d->bytes - len) {
            return d;
        }
    }
    return NULL;
}

static void get_done(void *request, ucs_status_t status, void *user_data)
{
    ingot_transport_op_t *op = user_data;
    ucp_request_free(request);
    ingot_transport_op_put(op->t, op, status == UCS_OK ? INGOT_OK : INGOT_ERR_UCX);
}

/* @p rw's key, unpacked for @p ep at first use (lock held); a host window is then mapped here
 * where shared memory can (*populate_p: its address, to populate outside the lock). */
static ingot_status_t rkey_unpack(ucp_ep_h ep, transport_remote_t *rw, int peer, void **populate_p)
{
    if (rw->rkey != NULL) {
        return INGOT_OK;
    }
    ucs_status_t s = ucp_ep_rkey_unpack(ep, rw->packed, &rw->rkey);
    if (s != UCS_OK) {
        rw->rkey = NULL;
        return ingot_fail(INGOT_ERR_FORMAT,
                          "transport: the memory key of rank %d's window (%zu bytes) does not "
                          "unpack: %s",
                          peer, rw->packed_len, ucs_status_string(s));
    }
    if (!rw->device) { /* device memory is never mapped into the host */
        ucs_status_t m = ucp_rkey_ptr(rw->rkey, rw->base, &rw->mapped);
        if (m != UCS_OK) {
            rw->mapped = NULL; /* not mapped into this process: get through UCX */
        } else {
            *populate_p = rw->mapped;
        }
        ingot_debug("transport: rank %d's window %s mapped here (%s)", peer,
                    rw->mapped ? "is" : "is not", ucs_status_string(m));
    }
    return INGOT_OK;
}

/* ucp_get_nbx of @p len bytes at raw offset @p off of @p rw into @p dst (GPU memory when
 * @p cuda), counted on @p op (lock held). */
static ingot_status_t get_issue(ingot_transport_op_t *op, ucp_ep_h ep, transport_remote_t *rw,
                                uint64_t off, void *dst, size_t len, int cuda)
{
    ingot_transport_t *t = op->t;
    atomic_fetch_add_explicit(cuda ? &t->reads_device : &t->reads_get, 1, memory_order_relaxed);
    atomic_fetch_add(&op->pending, 1);
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                               UCP_OP_ATTR_FIELD_USER_DATA,
                               .cb.send = get_done,
                               .user_data = op};
    if (cuda) {
        prm.op_attr_mask |= UCP_OP_ATTR_FIELD_MEMORY_TYPE;
        prm.memory_type = UCS_MEMORY_TYPE_CUDA;
    }
    void *req = ucp_get_nbx(ep, dst, len, rw->base + off, rw->rkey, &prm);
    if (req == NULL) {
        ingot_transport_op_put(t, op, INGOT_OK);
    } else if (UCS_PTR_IS_ERR(req)) {
        ingot_transport_op_put(t, op, INGOT_ERR_UCX);
        return ingot_fail(INGOT_ERR_UCX, "transport: get%s from rank %d failed: %s",
                          cuda ? " into GPU memory" : "", op->peer,
                          ucs_status_string(UCS_PTR_STATUS(req)));
    }
    return INGOT_OK;
}

/* Send entry @p e's header (and @p len bytes at @p data, eagerly) as active message @p am_id,
 * the owner answering on the reply endpoint; counted on @p op. Lock held. */
static ingot_status_t am_send(ingot_transport_t *t, ingot_transport_op_t *op, ucp_ep_h ep,
                              transport_am_entry_t *e, unsigned am_id, const void *data, size_t len)
{
    e->sending = 1;
    atomic_fetch_add(&op->pending, 1);
    ucp_request_param_t prm = {
        .op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK | UCP_OP_ATTR_FIELD_USER_DATA |
                        UCP_OP_ATTR_FIELD_FLAGS,
        .cb.send = am_req_sent,
        .user_data = e,
        .flags = UCP_AM_SEND_FLAG_REPLY | (data != NULL ? UCP_AM_SEND_FLAG_EAGER : 0)};
    void *req = ucp_am_send_nbx(ep, am_id, &e->hdr, sizeof(e->hdr), data, len, &prm);
    if (req == NULL || UCS_PTR_IS_ERR(req)) {
        /* completed (or failed) in the call: header free again */
        am_sent(e, req == NULL ? INGOT_OK : INGOT_ERR_UCX);
    }
    if (UCS_PTR_IS_ERR(req)) {
        am_entry_done(t, e, INGOT_ERR_UCX);
        return ingot_fail(INGOT_ERR_UCX, "transport: %s to rank %d failed: %s",
                          am_id == TRANSPORT_AM_REQ ? "read request" : "push", op->peer,
                          ucs_status_string(UCS_PTR_STATUS(req)));
    }
    return INGOT_OK;
}

/* Send a read request of @p len bytes at @p off of window @p window to @p op's peer, its reply
 * landing in @p dst, or (put) written by the owner into destination @p d. @p past_dest: the
 * fault site's put past the destination's end. Lock held. */
ingot_status_t ingot_transport_am_request(ingot_transport_t *t, ingot_transport_op_t *op,
                                          ucp_ep_h ep, uint32_t window, uint64_t off, void *dst,
                                          size_t len, ingot_transport_window_t *d, int past_dest,
                                          const uint64_t *key)
{
    transport_am_entry_t *e = am_entry_get(t);
    if (e == NULL) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE, "transport: more than %d reads in flight",
                          TRANSPORT_AM_ENTRIES);
    }
    e->state = d ? AM_ENTRY_PUT : AM_ENTRY_WAIT; /* a put is never dropped once asked */
    atomic_fetch_add_explicit(d ? &t->reads_put : &t->reads_am, 1, memory_order_relaxed);
    e->dst = dst;
    e->len = len;
    e->op = op;
    e->hdr = (am_req_hdr_t){.window = window,
                            .entry = (uint32_t)(e - t->am),
                            .gen = e->gen,
                            .from = t->rank,
                            .off = off,
                            .len = len,
                            .dest = d ? d->id : UINT32_MAX,
                            .addr = (uint64_t)(uintptr_t)dst,
                            .key = {key ? key[0] : 0, key ? key[1] : 0}};
    if (d != NULL && past_dest) {
        e->hdr.addr = (uint64_t)(uintptr_t)d->base + d->bytes;
    }
    return am_send(t, op, ep, e, TRANSPORT_AM_REQ, NULL, 0);
}

ingot_status_t ingot_transport_am_push(ingot_transport_t *t, ingot_transport_op_t *op, ucp_ep_h ep,
                                       uint32_t window, const uint64_t *key, const void *data,
                                       size_t len)
{
    transport_am_entry_t *e = am_entry_get(t);
    if (e == NULL) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE, "transport: more than %d reads in flight",
                          TRANSPORT_AM_ENTRIES);
    }
    e->state = AM_ENTRY_WAIT;
    e->dst = NULL;
    e->len = 0; /* the answer is a status alone */
    e->op = op;
    e->send_op = op;
    atomic_fetch_add(&op->pending, 1); /* the send's own count */
    e->hdr = (am_req_hdr_t){.window = window,
                            .entry = (uint32_t)(e - t->am),
                            .gen = e->gen,
                            .from = t->rank,
                            .len = len,
                            .dest = UINT32_MAX,
                            .key = {key[0], key[1]}};
    return am_send(t, op, ep, e, TRANSPORT_AM_PUSH, data, len);
}

/* How read_raw reads: into GPU memory; as an active message whatever the pair's protocol (the
 * owner's progress thread answers it: a ping). */
enum { READ_DEVICE = 1, READ_AM = 2 };

/* What a read does once the lock is let go: the pages of a newly mapped window to map at once,
 * and the bytes of a mapped window to copy. */
typedef struct read_after {
    void *populate;
    const char *mapped;
} read_after_t;

/* GPU memory: ucp_get_nbx, UCX moving the bytes by memory type (cuda_copy, cuda_ipc); no host
 * memcpy, and no active-message reply copied into it. Lock held. */
static ingot_status_t read_device(ingot_transport_op_t *op, ucp_ep_h ep, transport_remote_t *rw,
                                  uint64_t off, void *dst, size_t len, read_after_t *after)
{
    if (!op->t->cuda_memory) {
        return ingot_fail(INGOT_ERR_UNSUPPORTED,
                          "transport: a read into GPU memory needs a UCX with CUDA support (UCX "
                          "%s here has none)",
                          ingot_transport_ucx_version());
    }
    INGOT_CHECK(rkey_unpack(ep, rw, op->peer, &after->populate));
    return get_issue(op, ep, rw, off, dst, len, 1);
}

/* The get protocol: a window mapped here is copied after the lock is let go; otherwise ucp_get.
 * Lock held. */
static ingot_status_t read_get(ingot_transport_op_t *op, ucp_ep_h ep, transport_remote_t *rw,
                               uint64_t off, void *dst, size_t len, read_after_t *after)
{
    INGOT_CHECK(rkey_unpack(ep, rw, op->peer, &after->populate));
    if (rw->mapped == NULL) {
        return get_issue(op, ep, rw, off, dst, len, 0);
    }
    after->mapped = (const char *)rw->mapped + off;
    atomic_fetch_add_explicit(&op->t->reads_mapped, 1, memory_order_relaxed);
    return INGOT_OK;
}

/* Active messages: put where the destination is registered (under put), else am (a ping's or a
 * probe's word). The fault site asks past the end of the window (am) or of the destination
 * (put): the owner must refuse it. Lock held. */
static ingot_status_t read_am(ingot_transport_window_t *w, ingot_transport_op_t *op, ucp_ep_h ep,
                              uint64_t off, void *dst, size_t len, int force_am)
{
    ingot_transport_t *t = w->t;
    int put = t->peers[op->peer].proto == INGOT_PEER_PROTOCOL_PUT && !force_am;
    ingot_transport_window_t *d = put ? dest_of(t, dst, len) : NULL;
    int sabotage = !force_am && (d != NULL || !put) &&
                   ingot_fault_check(INGOT_FAULT_PEER_READ) != 0;
    uint64_t at = sabotage && d == NULL ? w->remote[op->peer].bytes : off;
    return ingot_transport_am_request(t, op, ep, w->id, at, dst, len, d, sabotage, NULL);
}

/* Acquire order for bytes another process wrote into a mapped window. ThreadSanitizer models
 * no fences (GCC refuses them under -fsanitize=thread) and sees no other process anyway: in that
 * build only the compiler barrier remains. */
static inline void window_acquire(void)
{
#if defined(__SANITIZE_THREAD__)
    atomic_signal_fence(memory_order_acquire);
#else
    atomic_thread_fence(memory_order_acquire);
#endif
}

/* After the lock: map a new window's pages in one call rather than one fault per page on the
 * first pass (a failure costs only that; outside the lock, as it takes a while for a large window
 * and the owner side must go on being served), and copy from a mapped window. */
static void read_finish(const transport_remote_t *rw, const read_after_t *after, void *dst,
                        size_t len)
{
    if (after->populate != NULL) {
        uintptr_t a = (uintptr_t)after->populate & ~(uintptr_t)4095;
        (void)madvise((void *)a, rw->bytes + ((uintptr_t)after->populate - a), MADV_POPULATE_READ);
    }
    if (after->mapped != NULL) { /* shared memory: one copy, no call into UCX */
        memcpy(dst, after->mapped, len);
        window_acquire();
    }
}

ingot_status_t ingot_transport_peer_usable_locked(ingot_transport_t *t, int peer, ucp_ep_h *ep_p)
{
    ingot_status_t st = ingot_transport_peer_ready_locked(t, peer, ep_p);
    transport_peer_t *p = &t->peers[peer];
    if (st == INGOT_OK && atomic_load(&p->failed)) {
        st = ingot_fail(INGOT_ERR_UCX, "transport: rank %d (host %s) failed earlier", peer,
                        p->host);
    }
    return st;
}

/* Add a read of @p len bytes at raw offset @p off (header included) of @p op's peer's window
 * into @p dst (@p how: READ_* flags). */
static ingot_status_t read_raw(ingot_transport_window_t *w, ingot_transport_op_t *op, uint64_t off,
                               void *dst, size_t len, int how)
{
    ingot_transport_t *t = w->t;
    transport_remote_t *rw = &w->remote[op->peer];
    if (len > rw->bytes || off > rw->bytes - len) {
        return ingot_fail(INGOT_ERR_OUT_OF_RANGE,
                          "transport: read of %zu bytes at offset %" PRIu64
                          " lies outside rank %d's window (%" PRIu64 " bytes); not sent",
                          len, off, op->peer, rw->bytes);
    }
    if (len == 0) {
        return INGOT_OK;
    }
    ucp_ep_h ep;
    read_after_t after = {NULL, NULL};
    pthread_mutex_lock(&t->lock);
    ingot_status_t st = ingot_transport_peer_usable_locked(t, op->peer, &ep);
    const transport_peer_t *p = &t->peers[op->peer];
    if (st == INGOT_OK && (how & READ_DEVICE)) {
        st = read_device(op, ep, rw, off, dst, len, &after);
    } else if (st == INGOT_OK && p->proto == INGOT_PEER_PROTOCOL_GET && !(how & READ_AM)) {
        st = read_get(op, ep, rw, off, dst, len, &after);
    } else if (st == INGOT_OK) {
        st = read_am(w, op, ep, off, dst, len, how & READ_AM);
    }
    pthread_mutex_unlock(&t->lock);
    read_finish(rw, &after, dst, len);
    return st;
}

/* A read at data offset @p off (after the window's header). */
static ingot_status_t read_data(ingot_transport_window_t *w, ingot_transport_op_t *op, uint64_t off,
                                void *dst, size_t len, int dst_device)
{
    if (off > UINT64_MAX - TRANSPORT_WINDOW_HDR) {
        return ingot_fail(INGOT_ERR_OUT_OF_RANGE, "transport: offset %" PRIu64 " out of range",
                          off);
    }
    return read_raw(w, op, off + TRANSPORT_WINDOW_HDR, dst, len, dst_device ? READ_DEVICE : 0);
}

ingot_status_t ingot_transport_read(ingot_transport_window_t *w, ingot_transport_op_t *op,
                                    uint64_t off, void *dst, size_t len)
{
    return read_data(w, op, off, dst, len, 0);
}

ingot_status_t ingot_transport_read_device(ingot_transport_window_t *w, ingot_transport_op_t *op,
                                           uint64_t off, void *dst, size_t len)
{
    return read_data(w, op, off, dst, len, 1);
}

ingot_status_t ingot_transport_window_probe(ingot_transport_window_t *w, int peer, int *ready_p)
{
    ingot_transport_t *t = w->t;
    ingot_transport_op_t op = {0};
    uint64_t word = 0;
    ingot_transport_op_begin(t, &op, peer, ingot_deadline_after(t->peer_timeout_ns), &op);
    ingot_status_t st = read_raw(w, &op, 0, &word, sizeof(word), 0);
    ingot_transport_op_end(t, &op);
    ingot_transport_op_wait(t, &op);
    if (st == INGOT_OK) {
        st = atomic_load(&op.status);
    }
    if (st == INGOT_ERR_TIMED_OUT) {
        ingot_error("transport: rank %d (host %s) did not answer within INGOT_PEER_TIMEOUT "
                    "(%" PRIu64 " ms)",
                    peer, t->peers[peer].host, t->peer_timeout_ns / 1000000);
    }
    window_acquire();
    *ready_p = (st == INGOT_OK && word == 1);
    return st;
}

/*
 * Windows and reads: registration and key exchange, the get, active-message and put protocols,
 * and the owner's side of the latter two (bounds checked against its window, and for put against
 * the requester's registered destination; refused, never served, when outside). Every ucp call
 * runs under t->lock.
 */
#include "transport/transport_impl.h"
#include "base/hash.h"
#include "base/arrival.h"
#include "base/errors.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/time.h"
#include "base/cuda.h"
#include "base/mem.h"
#include <inttypes.h>
#include "base/mem.h"
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

typedef transport_am_req_hdr_t am_req_hdr_t;
typedef transport_am_rep_hdr_t am_rep_hdr_t;

/* ---------------------------------------------------------------- entries */

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

/* A read request's send completed: its header may be reused. */
static void am_req_sent(void *request, ucs_status_t status, void *user_data)
{
    transport_am_entry_t *e = user_data;
    (void)status;
    if (request != NULL) {
        ucp_request_free(request);
    }
    e->sending = 0;
    if (e->free_pending) {
        e->free_pending = 0;
        am_entry_push(e->t, e);
    }
}

/* An entry's read is over: give the entry back, count it on its op. Lock held. */
static void am_entry_done(ingot_transport_t *t, transport_am_entry_t *e, ingot_status_t st)
{
    ingot_transport_op_t *op = e->op;
    ingot_transport_am_entry_free(t, e);
    ingot_transport_op_put(t, op, st);
}

/* ---------------------------------------------------------------- owner side */

static void rep_push(transport_rep_slot_t *slot)
{
    ingot_transport_t *t = slot->t;
    slot->next_free = t->rep_free;
    t->rep_free = (uint32_t)(slot - t->rep);
}

/* A reply's send completed: its header goes back to the pool. */
static void am_rep_sent(void *request, ucs_status_t status, void *user_data)
{
    (void)status;
    if (request != NULL) {
        ucp_request_free(request);
    }
    rep_push(user_data);
}

/* A reply header for @p rq from the pool, or NULL (logged: that read will time out). Lock held. */
static transport_rep_slot_t *rep_take(ingot_transport_t *t, const am_req_hdr_t *rq)
{
    if (t->rep_free >= TRANSPORT_AM_ENTRIES) {
        ingot_error("transport: more than %d replies in flight; a read from rank %d is dropped "
                    "(it will time out)",
                    TRANSPORT_AM_ENTRIES, rq->from);
        return NULL;
    }
    transport_rep_slot_t *slot = &t->rep[t->rep_free];
    t->rep_free = slot->next_free;
    slot->hdr = (am_rep_hdr_t){.entry = rq->entry, .gen = rq->gen, .status = INGOT_OK};
    slot->from = rq->from;
    slot->ep = NULL;
    return slot;
}

/* Send @p slot's reply with @p status and the bytes (or none). Lock held. */
static void rep_send(ingot_transport_t *t, ucp_ep_h ep, transport_rep_slot_t *slot, int32_t status,
                     const void *data, size_t len)
{
    slot->hdr.status = status;
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                               UCP_OP_ATTR_FIELD_USER_DATA |
                                               UCP_OP_ATTR_FIELD_FLAGS,
                               .cb.send = am_rep_sent,
                               .user_data = slot,
                               /* eager: faster than rendezvous at 64 KiB over tcp here, as fast
                                * at 1 MiB (docs/cache.md); and the reply is copied into its
                                * destination inside the handler, so a cancelled read never
                                * lands */
                               .flags = UCP_AM_SEND_FLAG_EAGER};
    void *req = ucp_am_send_nbx(ep, TRANSPORT_AM_REP, &slot->hdr, sizeof(slot->hdr), data, len,
                                &prm);
    if (req == NULL) {
        rep_push(slot);
    } else if (UCS_PTR_IS_ERR(req)) {
        rep_push(slot);
        ingot_warn("transport: reply to rank %d failed: %s", slot->from,
                   ucs_status_string(UCS_PTR_STATUS(req)));
    }
    (void)t;
}

/* Reply to a read: the bytes (or a status alone). Runs in progress, lock held. */
static void am_reply(ingot_transport_t *t, ucp_ep_h ep, const am_req_hdr_t *rq, int32_t status,
                     const void *data, size_t len)
{
    transport_rep_slot_t *slot = rep_take(t, rq);
    if (slot != NULL) {
        rep_send(t, ep, slot, status, data, len);
    }
}

/* The window a request names, when the range lies inside it; otherwise NULL, refused (logged,
 * counted, answered with INGOT_ERR_OUT_OF_RANGE). Lock held. */
static ingot_transport_window_t *req_window(ingot_transport_t *t, ucp_ep_h ep,
                                            const am_req_hdr_t *rq)
{
    ingot_transport_window_t *w = (rq->window < t->nwindows) ? t->windows[rq->window] : NULL;
    if (w != NULL && !w->dest && rq->len <= w->bytes && rq->off <= w->bytes - rq->len) {
        return w;
    }
    atomic_fetch_add(&t->refused, 1);
    ingot_error("transport: refused a read from rank %d: window %u, offset %" PRIu64 ", %" PRIu64
                " bytes lies outside this rank's window (%zu bytes)",
                rq->from, rq->window, rq->off, rq->len, (w && !w->dest) ? w->bytes : 0);
    am_reply(t, ep, rq, INGOT_ERR_OUT_OF_RANGE, NULL, 0);
    return NULL;
}

/* A put's flush completed: every byte is in the requester's destination; answer. */
static void put_flushed(void *request, ucs_status_t status, void *user_data)
{
    transport_rep_slot_t *slot = user_data;
    if (request != NULL) {
        ucp_request_free(request);
    }
    if (status != UCS_OK) {
        /* the endpoint failed or was closed by force: nothing to answer on (the requester's
         * deadline, or its own close, ends the read) */
        ingot_warn("transport: a put to rank %d failed: %s", slot->from, ucs_status_string(status));
        rep_push(slot);
        return;
    }
    rep_send(slot->t, slot->ep, slot, INGOT_OK, NULL, 0);
}

static void put_sent(void *request, ucs_status_t status, void *user_data)
{
    (void)status; /* the flush after it reports a failure */
    (void)user_data;
    ucp_request_free(request);
}

/* The requester's destination a put request names, with its key unpacked for @p ep, when the
 * range lies inside it; otherwise NULL (refused: logged, counted; the caller answers). */
static transport_remote_t *put_dest(ingot_transport_t *t, ucp_ep_h ep, const am_req_hdr_t *rq,
                                    int32_t *status_p)
{
    ingot_transport_window_t *d = (rq->dest < t->nwindows) ? t->windows[rq->dest] : NULL;
    transport_remote_t *r = (d != NULL && d->dest && rq->from >= 0 && rq->from < t->world)
                                ? &d->remote[rq->from]
                                : NULL;
    *status_p = INGOT_ERR_OUT_OF_RANGE;
    if (r == NULL || rq->len > r->bytes || rq->addr < r->base ||
        rq->addr - r->base > r->bytes - rq->len) {
        atomic_fetch_add(&t->refused, 1);
        ingot_error("transport: refused a put for rank %d: %" PRIu64 " bytes at 0x%" PRIx64
                    " lie outside its registered destination %u (0x%" PRIx64 ", %" PRIu64 " bytes)",
                    rq->from, rq->len, rq->addr, rq->dest, r ? r->base : 0, r ? r->bytes : 0);
        return NULL;
    }
    if (r->rkey != NULL && r->rkey_ep != ep) { /* unpacked for another endpoint */
        ucp_rkey_destroy(r->rkey);
        r->rkey = NULL;
    }
    if (r->rkey == NULL) {
        ucs_status_t s = ucp_ep_rkey_unpack(ep, r->packed, &r->rkey);
        if (s != UCS_OK) {
            r->rkey = NULL;
            *status_p = INGOT_ERR_FORMAT;
            ingot_error("transport: the key of rank %d's put destination %u does not unpack: %s",
                        rq->from, rq->dest, ucs_status_string(s));
            return NULL;
        }
        r->rkey_ep = ep;
    }
    return r;
}

/* A read request: answered with the bytes (am), or queued to be served by a put (a request
 * naming a destination) after progress returns. */
static ucs_status_t am_req_cb(void *arg, const void *header, size_t header_length, void *data,
                              size_t length, const ucp_am_recv_param_t *param)
{
    ingot_transport_t *t = arg;
    (void)data;
    (void)length;
    if (header_length != sizeof(am_req_hdr_t) ||
        !(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)) {
        ingot_warn("transport: dropped a malformed read request (%zu header bytes)", header_length);
        return UCS_OK;
    }
    am_req_hdr_t rq;
    memcpy(&rq, header, sizeof(rq));
    if (rq.window == TRANSPORT_PING_WINDOW) { /* a ping: this rank's progress thread is here */
        am_reply(t, param->reply_ep, &rq, INGOT_OK, NULL, 0);
        return UCS_OK;
    }
    ingot_transport_window_t *w = req_window(t, param->reply_ep, &rq);
    if (w == NULL) {
        return UCS_OK; /* refused */
    }
    if (rq.dest == UINT32_MAX) {
        am_reply(t, param->reply_ep, &rq, INGOT_OK, (char *)w->base + rq.off, (size_t)rq.len);
        return UCS_OK;
    }
    transport_rep_slot_t *slot = rep_take(t, &rq);
    if (slot != NULL) {
        slot->rq = rq;
        slot->next_put = TRANSPORT_AM_ENTRIES;
        uint32_t i = (uint32_t)(slot - t->rep);
        if (t->puts_head >= TRANSPORT_AM_ENTRIES) {
            t->puts_head = i;
        } else {
            t->rep[t->puts_tail].next_put = i;
        }
        t->puts_tail = i;
    }
    return UCS_OK;
}

/* Serve one put request: check the destination, put, flush, answer in the flush callback. */
static void put_serve(ingot_transport_t *t, transport_rep_slot_t *slot)
{
    const am_req_hdr_t *rq = &slot->rq;
    ingot_transport_window_t *w = (rq->window < t->nwindows) ? t->windows[rq->window] : NULL;
    ucp_ep_h ep;
    if (w == NULL || ingot_transport_ep_locked(t, rq->from, &ep) != INGOT_OK) {
        /* the window went away meanwhile, or this rank closed its endpoint to the requester
         * (it gave it up): no endpoint to answer on that is known to be alive; the requester's
         * deadline ends the read */
        ingot_warn("transport: a put request from rank %d is dropped (%s)", rq->from,
                   w == NULL ? "its window was freed" : "this rank closed its endpoint to it");
        rep_push(slot);
        return;
    }
    slot->ep = ep;
    int32_t refused;
    transport_remote_t *r = put_dest(t, ep, rq, &refused);
    if (r == NULL) {
        rep_send(t, ep, slot, refused, NULL, 0);
        return;
    }
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK, .cb.send = put_sent};
    void *req = ucp_put_nbx(ep, (char *)w->base + rq->off, (size_t)rq->len, rq->addr, r->rkey,
                            &prm);
    if (UCS_PTR_IS_ERR(req)) {
        ingot_warn("transport: a put to rank %d failed: %s", rq->from,
                   ucs_status_string(UCS_PTR_STATUS(req)));
        rep_send(t, ep, slot, INGOT_ERR_UCX, NULL, 0);
        return;
    }
    /* The put's completion only frees our source; the flush says the bytes are there. */
    prm = (ucp_request_param_t){.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                                UCP_OP_ATTR_FIELD_USER_DATA,
                                .cb.send = put_flushed,
                                .user_data = slot};
    req = ucp_ep_flush_nbx(ep, &prm);
    if (req == NULL) {
        put_flushed(NULL, UCS_OK, slot);
    } else if (UCS_PTR_IS_ERR(req)) {
        put_flushed(NULL, UCS_PTR_STATUS(req), slot);
    }
}

void ingot_transport_puts_serve(ingot_transport_t *t)
{
    while (t->puts_head < TRANSPORT_AM_ENTRIES) {
        transport_rep_slot_t *slot = &t->rep[t->puts_head];
        t->puts_head = slot->next_put;
        put_serve(t, slot);
    }
}

/* ---------------------------------------------------------------- requester side */

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

static ucs_status_t am_rep_cb(void *arg, const void *header, size_t header_length, void *data,
                              size_t length, const ucp_am_recv_param_t *param)
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
        memcpy(e->dst, data, length); /* nothing for a put */
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

ingot_status_t ingot_transport_am_register(ingot_transport_t *t)
{
    for (uint32_t i = 0; i < TRANSPORT_AM_ENTRIES; i++) {
        t->am[i] = (transport_am_entry_t){.t = t, .next_free = i + 1};
    }
    t->am_free = 0;
    for (uint32_t i = 0; i < TRANSPORT_AM_ENTRIES; i++) {
        t->rep[i] = (transport_rep_slot_t){.t = t, .next_free = i + 1};
    }
    t->rep_free = 0;
    t->puts_head = t->puts_tail = TRANSPORT_AM_ENTRIES; /* none */
    ucp_am_handler_param_t h = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                      UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS,
        .id = TRANSPORT_AM_REQ,
        .cb = am_req_cb,
        .arg = t,
        .flags = UCP_AM_FLAG_WHOLE_MSG};
    ingot_status_t st = INGOT_UCX_CALL("transport", ucp_worker_set_am_recv_handler, t->worker, &h);
    if (st == INGOT_OK) {
        h.id = TRANSPORT_AM_REP;
        h.cb = am_rep_cb;
        h.flags = 0;
        st = INGOT_UCX_CALL("transport", ucp_worker_set_am_recv_handler, t->worker, &h);
    }
    return st;
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

/* Send a read request of @p len bytes at @p off of window @p window to @p op's peer, its reply
 * landing in @p dst, or (put) written by the owner into destination @p d. @p past_dest: the
 * fault site's put past the destination's end. Lock held. */
static ingot_status_t am_request(ingot_transport_t *t, ingot_transport_op_t *op, ucp_ep_h ep,
                                 uint32_t window, uint64_t off, void *dst, size_t len,
                                 ingot_transport_window_t *d, int past_dest)
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
                            .addr = (uint64_t)(uintptr_t)dst};
    if (d != NULL && past_dest) {
        e->hdr.addr = (uint64_t)(uintptr_t)d->base + d->bytes;
    }
    e->sending = 1;
    atomic_fetch_add(&op->pending, 1);
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK |
                                               UCP_OP_ATTR_FIELD_USER_DATA |
                                               UCP_OP_ATTR_FIELD_FLAGS,
                               .cb.send = am_req_sent,
                               .user_data = e,
                               .flags = UCP_AM_SEND_FLAG_REPLY};
    void *req = ucp_am_send_nbx(ep, TRANSPORT_AM_REQ, &e->hdr, sizeof(e->hdr), NULL, 0, &prm);
    if (req == NULL || UCS_PTR_IS_ERR(req)) {
        e->sending = 0; /* completed (or failed) in the call: header free again */
    }
    if (UCS_PTR_IS_ERR(req)) {
        am_entry_done(t, e, INGOT_ERR_UCX);
        return ingot_fail(INGOT_ERR_UCX, "transport: read request to rank %d failed: %s", op->peer,
                          ucs_status_string(UCS_PTR_STATUS(req)));
    }
    return INGOT_OK;
}

/* How read_raw reads: into GPU memory; as an active message whatever the pair's protocol (the
 * owner's progress thread answers it: a ping). */
enum { READ_DEVICE = 1, READ_AM = 2 };

/* Add a read of @p len bytes at raw offset @p off (header included) of @p op's peer's window
 * into @p dst (@p how: READ_* flags). */
static ingot_status_t read_raw(ingot_transport_window_t *w, ingot_transport_op_t *op, uint64_t off,
                               void *dst, size_t len, int how)
{
    int dst_device = how & READ_DEVICE, force_am = how & READ_AM;
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
    const char *mapped = NULL;
    void *populate = NULL;
    pthread_mutex_lock(&t->lock);
    ingot_status_t st = ingot_transport_peer_ready_locked(t, op->peer, &ep);
    transport_peer_t *p = &t->peers[op->peer];
    if (st == INGOT_OK && atomic_load(&p->failed)) {
        st = ingot_fail(INGOT_ERR_UCX, "transport: rank %d (host %s) failed earlier", op->peer,
                        p->host);
    }
    if (st == INGOT_OK && dst_device) {
        /* GPU memory: ucp_get_nbx, UCX moving the bytes by memory type (cuda_copy, cuda_ipc);
         * no host memcpy, and no active-message reply copied into it */
        st = !t->cuda_memory ? ingot_fail(INGOT_ERR_UNSUPPORTED,
                                          "transport: a read into GPU memory needs a UCX with "
                                          "CUDA support (UCX %s here has none)",
                                          ingot_transport_ucx_version())
                             : rkey_unpack(ep, rw, op->peer, &populate);
        if (st == INGOT_OK) {
            st = get_issue(op, ep, rw, off, dst, len, 1);
        }
    } else if (st == INGOT_OK && p->proto == INGOT_PEER_PROTOCOL_GET && !force_am) {
        st = rkey_unpack(ep, rw, op->peer, &populate);
        if (st == INGOT_OK && rw->mapped != NULL) {
            mapped = (const char *)rw->mapped + off; /* read below, outside the lock */
            atomic_fetch_add_explicit(&t->reads_mapped, 1, memory_order_relaxed);
        } else if (st == INGOT_OK) {
            st = get_issue(op, ep, rw, off, dst, len, 0);
        }
    } else if (st == INGOT_OK) {
        /* put where the destination is registered (else am: the probe's word) */
        ingot_transport_window_t *d = p->proto == INGOT_PEER_PROTOCOL_PUT && !force_am
                                          ? dest_of(t, dst, len)
                                          : NULL;
        /* past the end of the window (am), or of the destination (put): the owner must refuse */
        int sabotage = !force_am && (d != NULL || p->proto != INGOT_PEER_PROTOCOL_PUT) &&
                       ingot_fault_check(INGOT_FAULT_PEER_READ) != 0;
        st = am_request(t, op, ep, w->id, sabotage && d == NULL ? rw->bytes : off, dst, len, d,
                        sabotage);
    }
    pthread_mutex_unlock(&t->lock);
    if (populate != NULL) {
        /* Map every page now, in one call, rather than one fault per page on the first pass
         * over the window (a failure costs only that); outside the lock, as it takes a while
         * for a large window and the owner side must go on being served. */
        uintptr_t a = (uintptr_t)populate & ~(uintptr_t)4095;
        (void)madvise((void *)a, rw->bytes + ((uintptr_t)populate - a), MADV_POPULATE_READ);
    }
    if (mapped != NULL) {
        /* The window is mapped here (shared memory): one copy, no call into UCX. */
        memcpy(dst, mapped, len);
        atomic_thread_fence(memory_order_acquire);
    }
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

/* ---------------------------------------------------------------- windows */

void *ingot_transport_window_data(ingot_transport_window_t *w)
{
    return (char *)w->base + TRANSPORT_WINDOW_HDR;
}

ingot_status_t ingot_transport_window_write(ingot_transport_window_t *w, uint64_t off,
                                            const void *src, size_t len)
{
    char *dst = (char *)w->base + TRANSPORT_WINDOW_HDR + off;
    if (w->cuda_device >= 0) {
        return ingot_cuda_copy(dst, src, len, "cache window fill");
    }
    memcpy(dst, src, len);
    return INGOT_OK;
}

ingot_status_t ingot_transport_window_read_local(ingot_transport_window_t *w, uint64_t off,
                                                 void *dst, size_t len)
{
    const char *src = (const char *)w->base + TRANSPORT_WINDOW_HDR + off;
    if (w->cuda_device >= 0) {
        return ingot_cuda_copy(dst, src, len, "cache window read");
    }
    memcpy(dst, src, len);
    return INGOT_OK;
}

void ingot_transport_window_set_ready(ingot_transport_window_t *w)
{
    if (w->cuda_device >= 0) {
        /* the fill's copies are synchronous: they are all in device memory before this one */
        static const uint64_t one = 1;
        (void)ingot_cuda_copy(w->base, &one, sizeof(one), "cache window ready word");
        return;
    }
    atomic_store_explicit((_Atomic uint64_t *)w->base, 1, memory_order_release);
}

void ingot_transport_op_wait(ingot_transport_t *t, ingot_transport_op_t *op)
{
    /* progress here; the progress thread expires the op at its deadline */
    while (atomic_load(&op->pending) != 0) {
        if (ingot_transport_progress(t) == 0) {
            struct timespec pause = {0, 20000};
            nanosleep(&pause, NULL);
        }
    }
    ingot_transport_settle(t); /* the thread that finished the op has let go of it */
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
    atomic_thread_fence(memory_order_acquire);
    *ready_p = (st == INGOT_OK && word == 1);
    return st;
}

/* Send a ping to @p peer (lock taken here): 0 when sent, -1 when it could not be (then the
 * peer counts as silent when its endpoint failed, else as alive: the wait goes on). */
static int ping_send(ingot_transport_t *t, ingot_transport_op_t *op, int peer)
{
    ucp_ep_h ep;
    pthread_mutex_lock(&t->lock);
    ingot_status_t st = ingot_transport_peer_ready_locked(t, peer, &ep);
    if (st == INGOT_OK) {
        st = am_request(t, op, ep, TRANSPORT_PING_WINDOW, 0, NULL, 0, NULL, 0);
    }
    pthread_mutex_unlock(&t->lock);
    return st == INGOT_OK ? 0 : -1;
}

void ingot_transport_ping(ingot_transport_t *t, const int *ranks, int n, uint64_t deadline_ns,
                          int *silent)
{
    ingot_transport_op_t *ops = calloc((size_t)n, sizeof(*ops));
    int *sent = calloc((size_t)n, sizeof(*sent));
    for (int i = 0; i < n; i++) {
        int r = ranks[i];
        silent[i] = atomic_load(&t->peers[r].silent_since) != 0 || atomic_load(&t->peers[r].failed);
        if (silent[i] || ops == NULL || sent == NULL) {
            continue; /* known silent; or no memory to ask: taken as alive (the wait goes on) */
        }
        ingot_transport_op_begin(t, &ops[i], r, deadline_ns, &ops[i]);
        sent[i] = ping_send(t, &ops[i], r) == 0;
        ingot_transport_op_end(t, &ops[i]);
        silent[i] = !sent[i] && atomic_load(&t->peers[r].failed);
    }
    for (int i = 0; sent != NULL && i < n; i++) {
        if (sent[i]) {
            ingot_transport_op_wait(t, &ops[i]);
            ingot_status_t st = atomic_load(&ops[i].status);
            silent[i] = st == INGOT_ERR_TIMED_OUT || st == INGOT_ERR_UCX; /* no answer, or dead */
        }
    }
    free(ops);
    free(sent);
}

/* Exchange every rank's window address, size and packed key (collective). */
static ingot_status_t window_exchange(ingot_transport_window_t *w, const void *packed,
                                      size_t packed_len)
{
    ingot_transport_t *t = w->t;
    MPI_Comm comm = t->comm;
    /* UCX does not validate a packed key (a truncated one crashes ucp_ep_rkey_unpack), so each
     * key travels with its length and checksum, checked on arrival. */
    uint64_t sum = ingot_hash64(packed, packed_len);
    if (ingot_fault_check(INGOT_FAULT_PEER_KEY) != 0) {
        packed_len = 1; /* a truncated key */
    }
    uint64_t mine[5] = {(uint64_t)(uintptr_t)w->base, w->bytes, packed_len, sum,
                        (uint64_t)(w->cuda_device >= 0)};
    uint64_t *all = ingot_calloc((size_t)t->world, sizeof(mine), "window cards");
    int *counts = ingot_calloc((size_t)t->world, 2 * sizeof(int), "window counts");
    ingot_status_t st = (all && counts) ? INGOT_OK : INGOT_ERR_NO_MEMORY;
    if (st == INGOT_OK) {
        st = INGOT_MPI_CALL("cache: key exchange", MPI_Allgather, mine, 5, MPI_UINT64_T, all, 5,
                            MPI_UINT64_T, comm);
    }
    size_t total = 0;
    int *displs = counts ? counts + t->world : NULL;
    for (int r = 0; st == INGOT_OK && r < t->world; r++) {
        if (all[5 * r + 2] == 0 || all[5 * r + 2] > TRANSPORT_RKEY_MAX) {
            st = ingot_fail(INGOT_ERR_FORMAT,
                            "cache: rank %d sent a packed memory key of %" PRIu64
                            " bytes (expected 1 to %d)",
                            r, all[5 * r + 2], TRANSPORT_RKEY_MAX);
            break;
        }
        counts[r] = (int)all[5 * r + 2];
        displs[r] = (int)total;
        total += all[5 * r + 2];
    }
    if (st == INGOT_OK && (w->packed_all = ingot_malloc(total, "window keys")) == NULL) {
        st = INGOT_ERR_NO_MEMORY;
    }
    if (st == INGOT_OK) {
        st = INGOT_MPI_CALL("cache: key exchange", MPI_Allgatherv, packed, (int)packed_len,
                            MPI_BYTE, w->packed_all, counts, displs, MPI_BYTE, comm);
    }
    for (int r = 0; st == INGOT_OK && w->remote != NULL && r < t->world; r++) {
        const void *key = (char *)w->packed_all + displs[r];
        if (ingot_hash64(key, (size_t)counts[r]) != all[5 * r + 3]) {
            st = ingot_fail(INGOT_ERR_FORMAT,
                            "cache: the memory key of rank %d's window (%d bytes) fails its "
                            "checksum: truncated or damaged on the way",
                            r, counts[r]);
            break;
        }
        w->remote[r] = (transport_remote_t){.base = all[5 * r],
                                            .bytes = all[5 * r + 1],
                                            .packed = (char *)w->packed_all + displs[r],
                                            .packed_len = (size_t)counts[r],
                                            .device = (int)all[5 * r + 4]};
    }
    free(all);
    free(counts);
    return st;
}

/* Map (UCX allocates, so shared-memory transports can map it) and pack the window's key. */
static ingot_status_t window_map(ingot_transport_window_t *w, int numa, void **packed_p,
                                 size_t *packed_len_p)
{
    ingot_transport_t *t = w->t;
    ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                             UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                                             UCP_MEM_MAP_PARAM_FIELD_FLAGS,
                               .address = NULL,
                               .length = w->bytes,
                               .flags = UCP_MEM_MAP_ALLOCATE};
    ingot_status_t st = INGOT_OK;
    if (w->cuda_device >= 0) { /* device memory of the placement's GPU, registered */
        unsigned major, minor, release;
        ucp_get_version(&major, &minor, &release);
        if (!t->cuda_memory) {
            return ingot_fail(INGOT_ERR_UNSUPPORTED,
                              "INGOT_CACHE_MEMORY=device needs a UCX built with CUDA; UCX "
                              "%u.%u.%u here has no CUDA memory type (docs/cache.md, 'Using a "
                              "CUDA-enabled UCX')",
                              major, minor, release);
        }
        if ((st = ingot_cuda_malloc_on(w->cuda_device, &w->device_ptr, w->bytes, "cache window")) !=
            INGOT_OK) {
            return st;
        }
        mp.field_mask |= UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
        mp.memory_type = UCS_MEMORY_TYPE_CUDA;
        mp.address = w->device_ptr;
        mp.flags = 0;
        numa = -1;
    } else if (w->dest) { /* the caller's memory, registered as it is */
        mp.address = w->base;
        mp.flags = 0;
        numa = -1;
    } else if (!t->window_ucx) { /* ours (huge pages, NUMA-bound), registered */
        st = ingot_mem_alloc(w->bytes, INGOT_MEM_F_HUGEPAGE | INGOT_MEM_F_PREFAULT, numa,
                             "cache window", &w->mem);
        if (st != INGOT_OK) {
            return st;
        }
        mp.address = w->mem.ptr;
        mp.flags = 0;
        numa = -1; /* bound already */
    }
    pthread_mutex_lock(&t->lock);
    st = INGOT_UCX_CALL("cache window", ucp_mem_map, t->ucp, &mp, &w->memh);
    if (st == INGOT_OK) {
        ucp_mem_attr_t attr = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
        st = INGOT_UCX_CALL("cache window", ucp_mem_query, w->memh, &attr);
        w->base = attr.address;
    } else {
        w->memh = NULL;
    }
    if (st == INGOT_OK) {
        st = INGOT_UCX_CALL("cache window", ucp_rkey_pack, t->ucp, w->memh, packed_p, packed_len_p);
    }
    pthread_mutex_unlock(&t->lock);
    if (st == INGOT_OK && numa >= 0) {
        /* Bind before the first touch; a refusal only costs locality (warned). */
        (void)ingot_mem_bind_area(w->base, w->bytes, numa, "cache window");
    }
    if (st == INGOT_OK && !w->dest) { /* not ready */
        static const char zero[TRANSPORT_WINDOW_HDR];
        st = w->cuda_device >= 0
                 ? ingot_cuda_copy(w->base, zero, sizeof(zero), "cache window header")
                 : (memset(w->base, 0, TRANSPORT_WINDOW_HDR), INGOT_OK);
    }
    return st;
}

/* Whether a window slot is free (windows freed leave theirs for the next one). */
static int window_slot_free(ingot_transport_t *t)
{
    pthread_mutex_lock(&t->lock);
    int free_slot = (t->nwindows < TRANSPORT_WINDOWS_MAX);
    for (uint32_t i = 0; i < t->nwindows && !free_slot; i++) {
        free_slot = (t->windows[i] == NULL);
    }
    pthread_mutex_unlock(&t->lock);
    return free_slot;
}

/* A window over new memory (@p ext NULL: @p bytes of data after the header), or a put
 * destination over the caller's @p bytes at @p ext (collective). */
static ingot_status_t window_create(ingot_transport_t *t, size_t bytes, int numa, int cuda_device,
                                    void *ext, ingot_transport_window_t **w_p)
{
    ingot_transport_window_t *w = ingot_calloc(1, sizeof(*w), "cache window");
    if (w == NULL) {
        (void)ingot_mpi_agree(&t->comm, INGOT_ERR_NO_MEMORY,
                              "cache: window"); /* the others fail too */
        return INGOT_ERR_NO_MEMORY;
    }
    void *packed = NULL;
    size_t packed_len = 0;
    w->t = t;
    w->cuda_device = cuda_device;
    w->id = UINT32_MAX; /* not registered yet */
    w->dest = (ext != NULL);
    w->base = ext;
    w->bytes = ext ? bytes : bytes + TRANSPORT_WINDOW_HDR;
    w->remote = ingot_calloc((size_t)t->world, sizeof(*w->remote), "cache window peers");
    ingot_status_t st = (w->remote == NULL) ? INGOT_ERR_NO_MEMORY
                        : !window_slot_free(t)
                            ? ingot_fail(INGOT_ERR_NO_RESOURCE,
                                         "cache: more than %d windows and put "
                                         "destinations at once (a cached loader takes one "
                                         "window, and depth + 2 destinations under put)",
                                         TRANSPORT_WINDOWS_MAX)
                            : window_map(w, numa, &packed, &packed_len);
    st = ingot_mpi_agree(&t->comm, st, "cache: window");
    if (st == INGOT_OK) {
        st = ingot_mpi_agree(&t->comm, window_exchange(w, packed, packed_len),
                             "cache: key exchange");
    }
    if (packed != NULL) {
        ucp_rkey_buffer_release(packed);
    }
    if (st != INGOT_OK) {
        ingot_transport_window_destroy_local(w);
        return st;
    }
    pthread_mutex_lock(&t->lock);
    /* the lowest free slot: ids agree, as every rank creates and frees windows collectively in
     * the same order */
    uint32_t id = 0;
    while (id < t->nwindows && t->windows[id] != NULL) {
        id++;
    }
    w->id = id;
    t->windows[id] = w;
    t->nwindows += (id == t->nwindows);
    pthread_mutex_unlock(&t->lock);
    *w_p = w;
    return INGOT_OK;
}

ingot_status_t ingot_transport_window_create(ingot_transport_t *t, size_t bytes, int numa,
                                             int cuda_device, ingot_transport_window_t **w_p)
{
    return window_create(t, bytes, numa, cuda_device, NULL, w_p);
}

ingot_status_t ingot_transport_dest_create(ingot_transport_t *t, void *ptr, size_t bytes,
                                           ingot_transport_window_t **w_p)
{
    return window_create(t, bytes, -1, -1, ptr, w_p);
}

void ingot_transport_dest_release(ingot_transport_window_t *w)
{
    ingot_transport_t *t = w->t;
    pthread_mutex_lock(&t->lock);
    if (w->dest && w->memh != NULL) {
        ucp_mem_unmap(t->ucp, w->memh);
        w->memh = NULL;
    }
    pthread_mutex_unlock(&t->lock);
}

void ingot_transport_window_destroy_local(ingot_transport_window_t *w)
{
    if (w == NULL) {
        return;
    }
    ingot_transport_t *t = w->t;
    pthread_mutex_lock(&t->lock);
    if (w->id < t->nwindows && t->windows[w->id] == w) {
        t->windows[w->id] = NULL; /* requests for it are refused from now on */
    }
    for (int r = 0; w->remote != NULL && r < t->world; r++) {
        if (w->remote[r].rkey != NULL) {
            ucp_rkey_destroy(w->remote[r].rkey);
        }
    }
    if (w->memh != NULL) {
        ucp_mem_unmap(t->ucp, w->memh);
    }
    pthread_mutex_unlock(&t->lock);
    ingot_mem_free(&w->mem); /* accepts a zeroed one */
    ingot_cuda_free(w->device_ptr);
    free(w->packed_all);
    free(w->remote);
    free(w);
}

static void window_alive(const int *ranks, int n, uint64_t deadline_ns, int *silent, void *arg)
{
    ingot_transport_ping(((ingot_transport_window_t *)arg)->t, ranks, n, deadline_ns, silent);
}

static const char *window_host(int rank, void *arg)
{
    return ingot_transport_host(((ingot_transport_window_t *)arg)->t, rank);
}

void ingot_transport_window_arrive(ingot_transport_window_t *w, const char *what,
                                   uint64_t timeout_ns, uint64_t silence_ns)
{
    ingot_arrival_t a = {.comm = &w->t->comm,
                         .what = what,
                         .timeout_ns = timeout_ns,
                         .silence_ns = silence_ns,
                         .alive = silence_ns > 0 ? window_alive : NULL,
                         .arg = w,
                         .host = window_host};
    (void)ingot_mpi_arrive(&a); /* returns only when every rank is here */
}

void ingot_transport_window_destroy(ingot_transport_window_t *w, uint64_t timeout_ns,
                                    uint64_t silence_ns)
{
    if (w == NULL) {
        return;
    }
    /* Nobody reads this window any more once every rank is here. */
    ingot_transport_window_arrive(w, "cache: window free", timeout_ns, silence_ns);
    ingot_transport_window_destroy_local(w);
}

/*
 * The owner's side of a read: requests arrive as active messages and are checked against its
 * window (and, under put, against the requester's registered destination): refused, never served,
 * when outside; answered with the bytes (eager or rendezvous), or written with ucp_put into the
 * requester's memory and answered once flushed. Pings are answered at once.
 */
#include "transport/transport_impl.h"
#include "base/log.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

typedef transport_am_req_hdr_t am_req_hdr_t;
typedef transport_am_rep_hdr_t am_rep_hdr_t;

static void rep_push(transport_rep_slot_t *slot)
{
    ingot_transport_t *t = slot->t;
    if (slot->sent != NULL) { /* a service's bytes are out of its buffer */
        void (*sent)(void *) = slot->sent;
        slot->sent = NULL;
        sent(slot->sent_arg);
    }
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

transport_rep_slot_t *ingot_transport_rep_take(ingot_transport_t *t, const am_req_hdr_t *rq)
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
    slot->sent = NULL;
    return slot;
}

void ingot_transport_rep_send(ingot_transport_t *t, ucp_ep_h ep, transport_rep_slot_t *slot,
                              int32_t status, const void *data, size_t len)
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
        int from = slot->from;
        rep_push(slot);
        /* once per peer: a rank continued after a stop may hold dozens of requests from a peer
         * that has since given it up and closed its end */
        transport_peer_t *p = (from >= 0 && from < t->world) ? &t->peers[from] : NULL;
        if (p == NULL || p->replies_failed++ == 0) {
            ingot_warn("transport: reply to rank %d failed: %s (further failed replies to it "
                       "are not logged)",
                       from, ucs_status_string(UCS_PTR_STATUS(req)));
        }
    }
}

void ingot_transport_am_reply(ingot_transport_t *t, ucp_ep_h ep, const am_req_hdr_t *rq,
                              int32_t status, const void *data, size_t len)
{
    transport_rep_slot_t *slot = ingot_transport_rep_take(t, rq);
    if (slot != NULL) {
        ingot_transport_rep_send(t, ep, slot, status, data, len);
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
    ingot_transport_am_reply(t, ep, rq, INGOT_ERR_OUT_OF_RANGE, NULL, 0);
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
    ingot_transport_rep_send(slot->t, slot->ep, slot, INGOT_OK, NULL, 0);
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
        ingot_transport_am_reply(t, param->reply_ep, &rq, INGOT_OK, NULL, 0);
        return UCS_OK;
    }
    if (rq.window & TRANSPORT_SERVICE_WINDOW) { /* a key for a service: its owner answers */
        ingot_transport_service_call(t, param->reply_ep, &rq);
        return UCS_OK;
    }
    ingot_transport_window_t *w = req_window(t, param->reply_ep, &rq);
    if (w == NULL) {
        return UCS_OK; /* refused */
    }
    if (rq.dest == UINT32_MAX) {
        ingot_transport_am_reply(t, param->reply_ep, &rq, INGOT_OK, (char *)w->base + rq.off,
                                 (size_t)rq.len);
        return UCS_OK;
    }
    transport_rep_slot_t *slot = ingot_transport_rep_take(t, &rq);
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
        ingot_transport_rep_send(t, ep, slot, refused, NULL, 0);
        return;
    }
    ucp_request_param_t prm = {.op_attr_mask = UCP_OP_ATTR_FIELD_CALLBACK, .cb.send = put_sent};
    void *req = ucp_put_nbx(ep, (char *)w->base + rq->off, (size_t)rq->len, rq->addr, r->rkey,
                            &prm);
    if (UCS_PTR_IS_ERR(req)) {
        ingot_warn("transport: a put to rank %d failed: %s", rq->from,
                   ucs_status_string(UCS_PTR_STATUS(req)));
        ingot_transport_rep_send(t, ep, slot, INGOT_ERR_UCX, NULL, 0);
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
        h.cb = ingot_transport_am_rep_cb;
        h.flags = 0;
        st = INGOT_UCX_CALL("transport", ucp_worker_set_am_recv_handler, t->worker, &h);
    }
    return st == INGOT_OK ? ingot_transport_service_register(t) : st;
}

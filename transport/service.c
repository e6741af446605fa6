/*
 * Services (transport.h): reads that name a key, answered by the owner's code from any thread
 * (the request travels as an active-message read whose window id carries the service's; the
 * answer is an ordinary reply, so deadlines, cancels and late replies work as for windows), and
 * pushes: bytes sent eagerly to a peer's service, which keeps or drops them.
 */
#include "transport/transport_impl.h"
#include "base/log.h"
#include "base/mem.h"
#include <stdlib.h>
#include <string.h>

struct ingot_transport_service {
    ingot_transport_t *t;
    uint32_t id;
    ingot_transport_service_ops_t ops;
    void *arg;
};

/* The service a request or push names, or NULL. Lock held. */
static ingot_transport_service_t *service_of(ingot_transport_t *t, uint32_t id)
{
    id &= ~TRANSPORT_SERVICE_WINDOW;
    return id < TRANSPORT_SERVICES_MAX ? t->services[id] : NULL;
}

void ingot_transport_service_call(ingot_transport_t *t, ucp_ep_h ep,
                                  const transport_am_req_hdr_t *rq)
{
    ingot_transport_service_t *svc = service_of(t, rq->window);
    ingot_status_t st = INGOT_ERR_NOT_FOUND;
    if (svc != NULL) {
        ingot_transport_call_t call = {.from = rq->from,
                                       .key = {rq->key[0], rq->key[1]},
                                       .off = rq->off,
                                       .len = rq->len,
                                       .entry = rq->entry,
                                       .gen = rq->gen};
        st = svc->ops.call(svc->arg, &call);
    }
    if (st != INGOT_OK) {
        ingot_transport_am_reply(t, ep, rq, st, NULL, 0);
    }
}

void ingot_transport_service_reply(ingot_transport_service_t *svc,
                                   const ingot_transport_call_t *call, ingot_status_t status,
                                   const void *data, size_t len, void (*sent)(void *arg),
                                   void *sent_arg)
{
    ingot_transport_t *t = svc->t;
    transport_am_req_hdr_t rq = {.entry = call->entry, .gen = call->gen, .from = call->from};
    ucp_ep_h ep;
    transport_rep_slot_t *slot = NULL;
    pthread_mutex_lock(&t->lock);
    if (ingot_transport_ep_locked(t, call->from, &ep) == INGOT_OK) {
        slot = ingot_transport_rep_take(t, &rq);
    }
    if (slot == NULL) { /* nothing to answer on: the requester's deadline ends its read */
        sent(sent_arg);
    } else {
        slot->sent = sent;
        slot->sent_arg = sent_arg;
        ingot_transport_rep_send(t, ep, slot, status, status == INGOT_OK ? data : NULL,
                                 status == INGOT_OK ? len : 0);
    }
    pthread_mutex_unlock(&t->lock);
    ingot_transport_wake(t);
}

ingot_status_t ingot_transport_service_read(ingot_transport_service_t *svc,
                                            ingot_transport_op_t *op, const uint64_t key[2],
                                            uint64_t off, void *dst, size_t len)
{
    ingot_transport_t *t = svc->t;
    ucp_ep_h ep;
    pthread_mutex_lock(&t->lock);
    ingot_status_t st = ingot_transport_peer_usable_locked(t, op->peer, &ep);
    if (st == INGOT_OK) {
        st = ingot_transport_am_request(t, op, ep, TRANSPORT_SERVICE_WINDOW | svc->id, off, dst,
                                        len, NULL, 0, key);
    }
    pthread_mutex_unlock(&t->lock);
    return st;
}

ingot_status_t ingot_transport_service_push(ingot_transport_service_t *svc,
                                            ingot_transport_op_t *op, const uint64_t key[2],
                                            const void *data, size_t len)
{
    ingot_transport_t *t = svc->t;
    ucp_ep_h ep;
    pthread_mutex_lock(&t->lock);
    ingot_status_t st = ingot_transport_peer_usable_locked(t, op->peer, &ep);
    if (st == INGOT_OK) {
        st = ingot_transport_am_push(t, op, ep, TRANSPORT_SERVICE_WINDOW | svc->id, key, data, len);
    }
    pthread_mutex_unlock(&t->lock);
    ingot_transport_wake(t);
    return st;
}

/* Bytes pushed to one of this rank's services: kept or dropped, answered with a status. */
static ucs_status_t push_cb(void *arg, const void *header, size_t header_length, void *data,
                            size_t length, const ucp_am_recv_param_t *param)
{
    ingot_transport_t *t = arg;
    transport_am_req_hdr_t rq;
    if (header_length != sizeof(rq) || !(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)) {
        ingot_warn("transport: dropped a malformed push (%zu header bytes)", header_length);
        return UCS_OK;
    }
    memcpy(&rq, header, sizeof(rq));
    ingot_transport_service_t *svc = service_of(t, rq.window);
    ingot_status_t st = INGOT_ERR_NOT_FOUND;
    if (param->recv_attr & UCP_AM_RECV_ATTR_FLAG_RNDV) { /* never sent so: refused */
        ucp_am_data_release(t->worker, data);
        st = INGOT_ERR_UNSUPPORTED;
    } else if (svc != NULL && length == rq.len) {
        st = svc->ops.push(svc->arg, rq.from, rq.key, data, length);
    }
    ingot_transport_am_reply(t, param->reply_ep, &rq, st, NULL, 0);
    return UCS_OK;
}

ingot_status_t ingot_transport_service_register(ingot_transport_t *t)
{
    ucp_am_handler_param_t h = {
        .field_mask = UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB |
                      UCP_AM_HANDLER_PARAM_FIELD_ARG | UCP_AM_HANDLER_PARAM_FIELD_FLAGS,
        .id = TRANSPORT_AM_PUSH,
        .cb = push_cb,
        .arg = t,
        .flags = UCP_AM_FLAG_WHOLE_MSG};
    return INGOT_UCX_CALL("transport", ucp_worker_set_am_recv_handler, t->worker, &h);
}

ingot_status_t ingot_transport_service_create(ingot_transport_t *t,
                                              const ingot_transport_service_ops_t *ops, void *arg,
                                              ingot_transport_service_t **svc_p)
{
    ingot_transport_service_t *svc = ingot_calloc(1, sizeof(*svc), "transport service");
    if (svc == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    *svc = (ingot_transport_service_t){.t = t, .ops = *ops, .arg = arg};
    pthread_mutex_lock(&t->lock);
    while (svc->id < TRANSPORT_SERVICES_MAX && t->services[svc->id] != NULL) {
        svc->id++;
    }
    if (svc->id < TRANSPORT_SERVICES_MAX) {
        t->services[svc->id] = svc;
    }
    pthread_mutex_unlock(&t->lock);
    if (svc->id == TRANSPORT_SERVICES_MAX) {
        free(svc);
        return ingot_fail(INGOT_ERR_NO_RESOURCE, "transport: more than %d services",
                          TRANSPORT_SERVICES_MAX);
    }
    *svc_p = svc;
    return INGOT_OK;
}

void ingot_transport_service_close(ingot_transport_service_t *svc)
{
    ingot_transport_t *t = svc->t;
    pthread_mutex_lock(&t->lock);
    if (t->services[svc->id] == svc) {
        t->services[svc->id] = NULL;
    }
    pthread_mutex_unlock(&t->lock);
}

void ingot_transport_service_destroy(ingot_transport_service_t *svc)
{
    if (svc != NULL) {
        ingot_transport_service_close(svc);
        free(svc);
    }
}

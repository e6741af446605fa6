/*
 * Blocking calls over the I/O thread: a ranged read, and a whole-object GET (the manifest: one
 * request, no HEAD; the body goes straight into a buffer sized from Content-Length, bounded by
 * the caller). The caller sleeps on a condition variable the completion signals under its lock,
 * so the completion touches nothing of the waiter's after the waiter may return.
 */
#include "source/objstore/objstore_impl.h"
#include "base/log.h"
#include "base/status.h"
#include "base/time.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Slack past a request's deadline before the waiter suspects the I/O thread (a bug). */
#define WAIT_GRACE_NS (5 * INGOT_NSEC_PER_SEC)

typedef struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int done;
} waiter_t;

static void waiter_cb(ingot_objstore_req_t *req)
{
    waiter_t *w = req->arg;
    pthread_mutex_lock(&w->lock);
    w->done = 1;
    pthread_cond_signal(&w->cond);
    pthread_mutex_unlock(&w->lock); /* last touch of w */
}

static void wait_done(ingot_objstore_t *c, ingot_objstore_req_t *req, waiter_t *w)
{
    struct timespec ts;
    uint64_t until = req->deadline_ns + WAIT_GRACE_NS;
    ts.tv_sec = (time_t)(until / INGOT_NSEC_PER_SEC);
    ts.tv_nsec = (long)(until % INGOT_NSEC_PER_SEC);
    pthread_mutex_lock(&w->lock);
    while (!w->done) {
        if (pthread_cond_timedwait(&w->cond, &w->lock, &ts) == ETIMEDOUT && !w->done) {
            /* the I/O thread ends every request at its deadline: this is a bug; stop it */
            pthread_mutex_unlock(&w->lock);
            ingot_error("objstore: a request outlived its deadline by 5 s; cancelling it");
            if (ingot_objstore_cancel(c, req) == INGOT_OK) { /* still queued: no callback */
                req->status = INGOT_ERR_CANCELED;
                snprintf(req->message, sizeof(req->message), "objstore: never started");
                return;
            }
            pthread_mutex_lock(&w->lock);
            ts.tv_sec += 1;
        }
    }
    pthread_mutex_unlock(&w->lock);
}

/* Submit @p req (prepared by the caller) and wait for it. */
static ingot_status_t run_blocking(ingot_objstore_t *c, ingot_objstore_req_t *req)
{
    waiter_t w = {.done = 0};
    pthread_condattr_t attr;

    pthread_mutex_init(&w.lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&w.cond, &attr);
    pthread_condattr_destroy(&attr);
    req->cb = waiter_cb;
    req->arg = &w;
    ingot_status_t status = ingot_objstore_submit_internal(c, req);
    if (status == INGOT_OK) {
        wait_done(c, req, &w);
        status = req->status;
        if (status != INGOT_OK) ingot_last_error_set(req->message);
    } else {
        ingot_error("objstore: the client is being destroyed");
    }
    pthread_cond_destroy(&w.cond);
    pthread_mutex_destroy(&w.lock);
    return status;
}

ingot_status_t ingot_objstore_read(ingot_objstore_t *client, ingot_objstore_req_t *req)
{
    if (client == NULL || req == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "objstore: read without a client or request");
    }
    INGOT_CHECK(ingot_objstore_req_check(client, req));
    req->priv.whole = 0;
    req->priv.query = NULL;
    return run_blocking(client, req);
}

/* A whole-object or LIST request of @p object into a growing buffer; body in priv.buf. */
ingot_status_t ingot_objstore_fetch_body(ingot_objstore_t *c, const ingot_objstore_object_t *object,
                                         const char *query, uint64_t max_size, uint64_t deadline_ns,
                                         ingot_objstore_req_t *req)
{
    return ingot_objstore_whole(c, object, query, NULL, 0, max_size, deadline_ns, req);
}

ingot_status_t ingot_objstore_whole(ingot_objstore_t *c, const ingot_objstore_object_t *object,
                                    const char *query, const void *put, size_t put_size,
                                    uint64_t max_size, uint64_t deadline_ns,
                                    ingot_objstore_req_t *req)
{
    static char one;
    static const struct iovec none = {&one, 1}; /* unused: the body goes to priv.buf */
    memset(req, 0, sizeof(*req));
    req->object = object;
    req->length = 1;
    req->object_size = INGOT_OBJSTORE_SIZE_UNKNOWN;
    req->iov = &none;
    req->iovcnt = 1;
    req->deadline_ns = deadline_ns;
    req->priv.whole = 1;
    req->priv.query = query;
    req->priv.buf_max = max_size;
    req->priv.put = put;
    req->priv.put_size = put_size;
    return run_blocking(c, req);
}

ingot_status_t ingot_objstore_put(ingot_objstore_t *client, const ingot_objstore_object_t *object,
                                  const void *data, size_t size, uint64_t deadline_ns, char *etag)
{
    ingot_objstore_req_t req;
    if (client == NULL || object == NULL || object->client != client || data == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "objstore: put without a client or object");
    }
    ingot_status_t status = ingot_objstore_whole(client, object, NULL, data, size, 0, deadline_ns,
                                                 &req);
    free(req.priv.buf);
    if (status == INGOT_OK && etag != NULL) {
        snprintf(etag, INGOT_OBJSTORE_ETAG_MAX + 1, "%s", req.priv.etag_seen);
    }
    return status;
}

ingot_status_t ingot_objstore_get(ingot_objstore_t *client, const ingot_objstore_object_t *object,
                                  uint64_t max_size, uint64_t deadline_ns, void **data_p,
                                  size_t *size_p, char *etag)
{
    ingot_objstore_req_t req;
    if (client == NULL || object == NULL || object->client != client) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "objstore: get without a client or object");
    }
    ingot_status_t status = ingot_objstore_fetch_body(client, object, NULL, max_size, deadline_ns,
                                                      &req);
    if (status != INGOT_OK) {
        free(req.priv.buf);
        return status;
    }
    if (etag != NULL) snprintf(etag, INGOT_OBJSTORE_ETAG_MAX + 1, "%s", req.priv.etag_seen);
    *data_p = req.priv.buf ? req.priv.buf : malloc(1); /* an empty object: a valid pointer */
    *size_p = (size_t)req.priv.done;
    return *data_p != NULL ? INGOT_OK : ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
}

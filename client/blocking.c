/*
 * Blocking calls over the I/O thread: a ranged read, and a whole-object GET (the manifest: one
 * request, no HEAD; the body goes straight into a buffer sized from Content-Length, bounded by
 * the caller). The caller sleeps on a condition variable the completion signals under its lock,
 * so the completion touches nothing of the waiter's after the waiter may return.
 */
#include "client/objstore_impl.h"
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
    int left; /* requests not yet completed */
} waiter_t;

static void waiter_cb(ingot_objstore_req_t *req)
{
    waiter_t *w = req->arg;
    pthread_mutex_lock(&w->lock);
    if (--w->left == 0) {
        pthread_cond_signal(&w->cond);
    }
    pthread_mutex_unlock(&w->lock); /* last touch of w */
}

/* Past every deadline by WAIT_GRACE_NS (a bug: the I/O thread ends each request at its own):
 * take back what is still queued, stop the rest (lock held on entry and exit). */
static void wait_overdue(ingot_objstore_t *c, ingot_objstore_req_t *reqs, size_t n, waiter_t *w)
{
    pthread_mutex_unlock(&w->lock);
    ingot_error("objstore: a request outlived its deadline by 5 s; cancelling it");
    int taken = 0;
    for (size_t i = 0; i < n; i++) {
        if (reqs[i].status == INGOT_INPROGRESS && ingot_objstore_cancel(c, &reqs[i]) == INGOT_OK) {
            reqs[i].status = INGOT_ERR_CANCELED; /* still queued: no callback */
            snprintf(reqs[i].message, sizeof(reqs[i].message), "objstore: never started");
            taken++;
        }
    }
    pthread_mutex_lock(&w->lock);
    w->left -= taken;
}

static void wait_done(ingot_objstore_t *c, ingot_objstore_req_t *reqs, size_t n, waiter_t *w)
{
    struct timespec ts;
    uint64_t until = 0;
    for (size_t i = 0; i < n; i++) {
        until = reqs[i].deadline_ns > until ? reqs[i].deadline_ns : until;
    }
    until += WAIT_GRACE_NS;
    ts.tv_sec = (time_t)(until / INGOT_NSEC_PER_SEC);
    ts.tv_nsec = (long)(until % INGOT_NSEC_PER_SEC);
    while (w->left > 0) {
        if (pthread_cond_timedwait(&w->cond, &w->lock, &ts) == ETIMEDOUT && w->left > 0) {
            wait_overdue(c, reqs, n, w);
            ts.tv_sec += 1;
        }
    }
}

/* Submit @p n requests (prepared by the caller) and wait for all of them; the first failure's
 * status (its message the caller's last error), or INGOT_OK. */
static ingot_status_t run_blocking(ingot_objstore_t *c, ingot_objstore_req_t *reqs, size_t n)
{
    waiter_t w = {.left = 0};
    pthread_condattr_t attr;
    ingot_status_t status = INGOT_OK;

    pthread_mutex_init(&w.lock, NULL);
    pthread_condattr_init(&attr);
    pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
    pthread_cond_init(&w.cond, &attr);
    pthread_condattr_destroy(&attr);
    pthread_mutex_lock(&w.lock); /* completions wait for every submit */
    for (size_t i = 0; i < n; i++) {
        reqs[i].cb = waiter_cb;
        reqs[i].arg = &w;
        ingot_status_t st = ingot_objstore_submit_internal(c, &reqs[i]);
        w.left += st == INGOT_OK;
        if (st != INGOT_OK) {
            reqs[i].status = st;
            snprintf(reqs[i].message, sizeof(reqs[i].message),
                     "objstore: the client is being "
                     "destroyed");
        }
    }
    wait_done(c, reqs, n, &w);
    pthread_mutex_unlock(&w.lock);
    for (size_t i = 0; i < n && status == INGOT_OK; i++) {
        status = reqs[i].status;
        if (status != INGOT_OK) ingot_last_error_set(reqs[i].message);
    }
    pthread_cond_destroy(&w.cond);
    pthread_mutex_destroy(&w.lock);
    return status;
}

ingot_status_t ingot_objstore_read_many(ingot_objstore_t *client, ingot_objstore_req_t *reqs,
                                        size_t n)
{
    if (client == NULL || reqs == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "objstore: read without a client or request");
    }
    for (size_t i = 0; i < n; i++) {
        INGOT_CHECK(ingot_objstore_req_check(client, &reqs[i]));
        reqs[i].priv.whole = 0;
        reqs[i].priv.query = NULL;
    }
    return run_blocking(client, reqs, n);
}

ingot_status_t ingot_objstore_read(ingot_objstore_t *client, ingot_objstore_req_t *req)
{
    if (client == NULL || req == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "objstore: read without a client or request");
    }
    return ingot_objstore_read_many(client, req, 1);
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
    return run_blocking(c, req, 1);
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

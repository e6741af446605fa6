/*
 * The generic half of byte sources: the request state machine (pending, done, quarantined) and
 * the wait that drives a source's progress up to a request's deadline. See source.h.
 */
#include "source/source.h"
#include "base/log.h"
#include "base/time.h"
#include <inttypes.h>

ingot_status_t ingot_source_submit(ingot_source_t *src, ingot_source_req_t *req)
{
    req->status = INGOT_OK;
    req->retry = 0;
    req->shift = 0;
    req->cached = 0;
    req->error[0] = '\0';
    atomic_store_explicit(&req->state, INGOT_SOURCE_REQ_PENDING, memory_order_release);
    ingot_status_t st = src->ops->submit(src, req);
    if (st != INGOT_OK) {
        atomic_store(&req->state, INGOT_SOURCE_REQ_IDLE);
    }
    return st;
}

static void source_finish(ingot_source_req_t *req)
{
    /* Read before DONE is published: a waiter that sees it may resubmit (rewrite) the request
     * at once, from another thread (a source completing on its own thread: found by TSan). */
    ingot_event_t *ev = req->done_ev;
    ingot_source_cb_t cb = req->cb;
    int old = atomic_exchange_explicit(&req->state, INGOT_SOURCE_REQ_DONE, memory_order_acq_rel);
    if (ev != NULL && old != INGOT_SOURCE_REQ_QUARANTINED) {
        ingot_event_notify(ev);
    }
    if (cb != NULL) {
        cb(req, old == INGOT_SOURCE_REQ_QUARANTINED);
    }
}

void ingot_source_complete(ingot_source_req_t *req, ingot_status_t status)
{
    req->status = status;
    req->retry = 0;
    source_finish(req);
}

void ingot_source_retry(ingot_source_req_t *req, ingot_status_t why)
{
    req->status = why;
    req->retry = 1;
    source_finish(req);
}

static bool source_req_done(void *arg)
{
    ingot_source_req_t *req = arg;
    return atomic_load_explicit(&req->state, memory_order_acquire) == INGOT_SOURCE_REQ_DONE;
}

/* Past the deadline (or aborted): take the request back, or quarantine it. */
static ingot_status_t source_expire(ingot_source_t *src, ingot_source_req_t *req,
                                    ingot_status_t why, int *quarantined_p)
{
    int expected = INGOT_SOURCE_REQ_PENDING;
    if (!atomic_compare_exchange_strong(&req->state, &expected, INGOT_SOURCE_REQ_QUARANTINED)) {
        return req->status; /* completed just now: not late after all */
    }
    if (src->ops->cancel(src, req) == INGOT_OK) {
        atomic_store(&req->state, INGOT_SOURCE_REQ_IDLE);
    } else {
        *quarantined_p = 1;
    }
    if (why == INGOT_ERR_TIMED_OUT) {
        char d[INGOT_SOURCE_DESCRIBE_MAX];
        ingot_error("read of %" PRIu64 " bytes at offset %" PRIu64 " from %s timed out "
                    "(INGOT_TIMEOUT); its buffer is %s",
                    req->length, req->offset, ingot_source_describe(src, req->shard, d, sizeof(d)),
                    *quarantined_p ? "quarantined until the source completes it" : "released");
    }
    return why;
}

/* A wait back this much later than it asked means this process did not run meanwhile. */
#define SOURCE_LATE_NS (500ull * 1000 * 1000)
/* The longest a progress or a wait may take before the loop looks at the clock again: what
 * bounds the error of the lost-time measure (a wait asked to end at a deadline seconds away
 * could not tell a stop from the time it was meant to sleep). */
#define SOURCE_TICK_NS (100ull * 1000 * 1000)

ingot_status_t ingot_source_wait(ingot_source_t *src, ingot_source_req_t *req, ingot_event_t *ev,
                                 const ingot_abort_t *abort, int *quarantined_p)
{
    *quarantined_p = 0;
    uint64_t asked = UINT64_MAX; /* the latest a progress or a wait was to return */
    while (!source_req_done(req)) {
        uint64_t now = ingot_time_ns();
        if (now > asked && now - asked > SOURCE_LATE_NS &&
            req->deadline_ns < UINT64_MAX - (now - asked)) {
            /* back far later than asked: this process did not run meanwhile (stopped, or
             * starved that long), which is no fault of the source: it gets the time back */
            req->deadline_ns += now - asked;
        }
        if (now >= req->deadline_ns) {
            return source_expire(src, req, INGOT_ERR_TIMED_OUT, quarantined_p);
        }
        asked = req->deadline_ns - now < SOURCE_TICK_NS ? req->deadline_ns : now + SOURCE_TICK_NS;
        if (src->ops->progress(src, asked) > 0 || source_req_done(req)) {
            continue;
        }
        ingot_status_t st = ingot_event_wait_until(ev, source_req_done, req, asked, abort);
        if (st == INGOT_ERR_CANCELED) {
            return source_expire(src, req, st, quarantined_p);
        }
    }
    if (req->status != INGOT_OK && req->error[0] != '\0') {
        ingot_last_error_set(req->error); /* the message of a completion on another thread */
    }
    return req->status;
}

const char *ingot_source_describe(const ingot_source_t *src, uint32_t shard, char *buf, size_t len)
{
    return src->ops->describe(src, shard, buf, len);
}

void ingot_source_destroy(ingot_source_t *src)
{
    if (src != NULL) {
        src->ops->destroy(src);
    }
}

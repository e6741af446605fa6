/*
 * The client and its I/O thread. One thread owns the curl_multi handle (libcurl's handles are
 * not thread-safe); callers hand it requests through a locked queue and wake it with
 * curl_multi_wakeup. Each turn of its loop: take the queue, end cancelled, expired and stalled
 * requests (a transfer with no byte for INGOT_S3_STALL_TIMEOUT), hedge the slow ones (hedge.h),
 * start what may start (a free transfer slot, the bucket's AIMD window and rate cap, the
 * request's backoff), let curl move bytes, judge the transfers that ended (response.c), and
 * sleep in curl_multi_poll until a socket is ready, a wake-up comes, or the next timer (a
 * backoff, a deadline, a rate token) is due.
 */
#include "client/objstore_impl.h"
#include "base/log.h"
#include "base/status.h"
#include "base/time.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define IO_POLL_MAX_MS 1000 /* the loop looks at deadlines and cancellations at least this often */

/* ------------------------------------------------------------------ request lists */

void ingot_objstore_reqlist_push(ingot_objstore_reqlist_t *l, ingot_objstore_req_t *r)
{
    r->priv.next = NULL;
    r->priv.prev = l->tail;
    if (l->tail != NULL) {
        l->tail->priv.next = r;
    } else {
        l->head = r;
    }
    l->tail = r;
    l->count++;
}

void ingot_objstore_reqlist_remove(ingot_objstore_reqlist_t *l, ingot_objstore_req_t *r)
{
    if (r->priv.prev != NULL) {
        r->priv.prev->priv.next = r->priv.next;
    } else {
        l->head = r->priv.next;
    }
    if (r->priv.next != NULL) {
        r->priv.next->priv.prev = r->priv.prev;
    } else {
        l->tail = r->priv.prev;
    }
    r->priv.next = r->priv.prev = NULL;
    l->count--;
}

void ingot_objstore_req_complete(ingot_objstore_t *c, ingot_objstore_req_t *req,
                                 ingot_status_t status)
{
    req->status = status;
    if (status == INGOT_OK) req->message[0] = '\0';
    req->priv.where = INGOT_OBJSTORE_REQ_NONE;
    INGOT_OBJSTORE_TALLY(c, req, requests, 1);
    if (status != INGOT_OK) INGOT_OBJSTORE_TALLY(c, req, failed, 1);
    if (req->cb != NULL) req->cb(req); /* last touch: the caller may reuse req now */
}

/* ------------------------------------------------------------------ the I/O thread */

static void io_take_queue(ingot_objstore_t *c)
{
    pthread_mutex_lock(&c->lock);
    while (c->queue.head != NULL) {
        ingot_objstore_req_t *r = c->queue.head;
        ingot_objstore_reqlist_remove(&c->queue, r);
        r->priv.where = INGOT_OBJSTORE_REQ_PENDING;
        ingot_objstore_reqlist_push(&c->pending, r);
    }
    pthread_mutex_unlock(&c->lock);
}

static void slot_release(ingot_objstore_t *c, ingot_objstore_slot_t *s)
{
    s->req = NULL;
    c->free_slots[c->nfree++] = s;
}

/* Take @p s off its transfer (its connection closed) and give it back; the request's count of
 * attempts on slots drops. */
static void slot_stop(ingot_objstore_t *c, ingot_objstore_slot_t *s)
{
    ingot_objstore_req_t *r = s->req;
    curl_multi_remove_handle(c->multi, s->easy);
    INGOT_OBJSTORE_TALLY(c, r, bytes, s->got);
    if (!s->hedge) ingot_objstore_throttle_finished(&c->buckets[r->object->bucket].throttle, 0);
    r->priv.active--;
    slot_release(c, s);
}

void ingot_objstore_twins_stop(ingot_objstore_t *c, ingot_objstore_slot_t *keep)
{
    for (size_t i = 0; i < c->nslots && keep->req->priv.active > 0; i++) {
        ingot_objstore_slot_t *s = &c->slots[i];
        if (s != keep && s->req == keep->req) slot_stop(c, s);
    }
}

/* The bytes of @p r in place from its first on: the most any of its attempts has written. */
static uint64_t req_in_place(const ingot_objstore_t *c, const ingot_objstore_req_t *r)
{
    uint64_t in = r->priv.done;
    for (size_t i = 0; i < c->nslots; i++) {
        const ingot_objstore_slot_t *s = &c->slots[i];
        if (s->req == r && s->first - r->offset + s->got > in) in = s->first - r->offset + s->got;
    }
    return in;
}

/* Whether the newest attempt @p s of a ranged GET is to be hedged: it has run past what recent
 * GETs of its size took, or its body, once begun, has gone quiet for INGOT_S3_HEDGE times its
 * longest gap so far (at least the floor: a stall is caught long before the stall timeout,
 * also while a class has no durations yet). Otherwise *due_p: when it will be (UINT64_MAX:
 * never). */
static int hedge_due(const ingot_objstore_t *c, const ingot_objstore_slot_t *s, uint64_t now,
                     uint64_t *due_p)
{
    const ingot_objstore_req_t *r = s->req;
    *due_p = UINT64_MAX;
    if (r->priv.whole || r->priv.active > INGOT_OBJSTORE_HEDGE_PER_MAX ||
        s->start_ns != r->priv.newest_ns) {
        return 0;
    }
    uint64_t after = ingot_objstore_hedge_after_ns(&c->hedge, s->last - s->first + 1);
    if (after == UINT64_MAX) return 0;
    *due_p = r->priv.newest_ns + after;
    if (s->got > 0) {
        uint64_t quiet = s->max_gap_ns * c->hedge.factor;
        quiet = quiet > c->hedge.floor_ns ? quiet : c->hedge.floor_ns;
        if (s->last_byte_ns + quiet < *due_p) *due_p = s->last_byte_ns + quiet;
    }
    return now >= *due_p;
}

/* A second GET for the bytes @p s's request still lacks, on a slot and connection of its own,
 * outside the bucket's AIMD window (it must not wait behind the transfer it hedges). */
static void io_hedge(ingot_objstore_t *c, ingot_objstore_slot_t *s, uint64_t now)
{
    ingot_objstore_req_t *r = s->req;
    uint64_t in = req_in_place(c, r);
    if (in >= r->length || c->nfree == 0 || !ingot_objstore_hedge_take(&c->hedge)) return;
    ingot_objstore_slot_t *h = c->free_slots[--c->nfree];
    r->priv.done = in; /* validated bytes in place: the hedge asks for the rest */
    if (ingot_objstore_attempt_start(c, h, r, now) != INGOT_OK) {
        slot_release(c, h);
        return;
    }
    h->hedge = 1;
    r->priv.active++;
    r->priv.newest_ns = now;
    INGOT_OBJSTORE_TALLY(c, r, attempts, 1);
    INGOT_OBJSTORE_TALLY(c, r, hedges, 1);
    ingot_debug("objstore: hedged %s after %" PRIu64 " ms, %" PRIu64 " of %" PRIu64 " bytes in",
                r->object->request_url, (uint64_t)((now - s->start_ns) / INGOT_NSEC_PER_MSEC), in,
                r->length);
}

/* End pending requests that were cancelled or reached their deadline, and cancelled transfers. */
static void io_sweep(ingot_objstore_t *c, uint64_t now)
{
    for (ingot_objstore_req_t *r = c->pending.head, *next; r != NULL; r = next) {
        next = r->priv.next;
        if (!atomic_load(&r->priv.cancel) && now < r->deadline_ns) continue;
        ingot_objstore_reqlist_remove(&c->pending, r);
        if (atomic_load(&r->priv.cancel)) {
            ingot_objstore_req_complete(c, r, INGOT_ERR_CANCELED);
        } else {
            char last[INGOT_OBJSTORE_MESSAGE_MAX];
            snprintf(last, sizeof(last), "%s", r->message[0] ? r->message : "none");
            ingot_objstore_req_fail(c, r, INGOT_ERR_TIMED_OUT,
                                    "deadline reached after %u retries (last: %s)", r->retries,
                                    last);
        }
    }
    uint64_t due;
    for (size_t i = 0; i < c->nslots; i++) {
        ingot_objstore_slot_t *s = &c->slots[i];
        if (s->req == NULL) continue;
        ingot_objstore_req_t *r = s->req;
        if (atomic_load(&r->priv.cancel)) {
            slot_stop(c, s);
            if (r->priv.active == 0) ingot_objstore_req_complete(c, r, INGOT_ERR_CANCELED);
        } else if (now > s->last_byte_ns && now - s->last_byte_ns >= c->cfg.stall_timeout_ns) {
            curl_multi_remove_handle(c->multi, s->easy); /* its connection is closed */
            s->stalled = 1;
            ingot_objstore_attempt_done(c, s, CURLE_OPERATION_TIMEDOUT, now);
            slot_release(c, s);
        } else if (hedge_due(c, s, now, &due)) {
            io_hedge(c, s, now);
        }
    }
}

/* Start @p r on a free slot (or fail it when the transfer cannot be set up). */
static void io_start_one(ingot_objstore_t *c, ingot_objstore_req_t *r, uint64_t now)
{
    ingot_objstore_slot_t *s = c->free_slots[--c->nfree];
    ingot_objstore_throttle_t *t = &c->buckets[r->object->bucket].throttle;

    ingot_objstore_reqlist_remove(&c->pending, r);
    r->priv.where = INGOT_OBJSTORE_REQ_ACTIVE;
    s->hedge = 0;
    r->priv.active = 1;
    r->priv.newest_ns = now;
    ingot_status_t status = ingot_objstore_attempt_start(c, s, r, now);
    if (status != INGOT_OK) {
        slot_release(c, s);
        ingot_objstore_req_fail(c, r, status, "could not start a transfer (%s)",
                                ingot_status_string(status));
        return;
    }
    ingot_objstore_throttle_started(t);
    INGOT_OBJSTORE_TALLY(c, r, attempts, 1);
}

/* Start every pending request that may start; returns when the next one is due (or UINT64_MAX). */
static uint64_t io_start_ready(ingot_objstore_t *c, uint64_t now)
{
    uint64_t wake = UINT64_MAX;
    /* the last hedge_slots free slots are the hedges' */
    for (ingot_objstore_req_t *r = c->pending.head, *next; r != NULL && c->nfree > c->hedge_slots;
         r = next) {
        int rate_held = 0;
        next = r->priv.next;
        if (r->priv.not_before_ns > now) {
            if (r->priv.not_before_ns < wake) wake = r->priv.not_before_ns;
            continue;
        }
        ingot_objstore_throttle_t *t = &c->buckets[r->object->bucket].throttle;
        if (ingot_objstore_throttle_may_start(t, now, &wake, &rate_held)) {
            io_start_one(c, r, now);
        } else if (rate_held && !r->priv.rate_held) {
            r->priv.rate_held = 1;
            INGOT_OBJSTORE_TALLY(c, r, rate_waits, 1);
        }
    }
    for (ingot_objstore_req_t *r = c->pending.head; r != NULL; r = r->priv.next) {
        if (r->deadline_ns < wake) wake = r->deadline_ns;
    }
    for (size_t i = 0; i < c->nslots; i++) { /* the next stall check, the next hedge */
        uint64_t stall = c->slots[i].last_byte_ns + c->cfg.stall_timeout_ns, due;
        if (c->slots[i].req == NULL) continue;
        if (stall < wake) wake = stall;
        if (!hedge_due(c, &c->slots[i], now, &due) && due < wake) wake = due;
    }
    return wake;
}

/* Judge every transfer that ended; returns how many. */
static unsigned io_reap(ingot_objstore_t *c)
{
    CURLMsg *msg;
    int left = 0;
    unsigned n = 0;
    while ((msg = curl_multi_info_read(c->multi, &left)) != NULL) {
        if (msg->msg != CURLMSG_DONE) continue;
        ingot_objstore_slot_t *s = NULL;
        curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&s);
        CURLcode rc = msg->data.result;
        curl_multi_remove_handle(c->multi, s->easy);
        ingot_objstore_attempt_done(c, s, rc, ingot_time_ns());
        slot_release(c, s);
        n++;
    }
    return n;
}

static int io_wait_ms(uint64_t wake, uint64_t now)
{
    if (wake <= now) return 0;
    uint64_t ms = (wake - now + INGOT_NSEC_PER_MSEC - 1) / INGOT_NSEC_PER_MSEC;
    return ms > IO_POLL_MAX_MS ? IO_POLL_MAX_MS : (int)ms;
}

void *ingot_objstore_io_main(void *arg)
{
    ingot_objstore_t *c = arg;
    int running = 0;

    pthread_setname_np(pthread_self(), "ingot-s3io");
    while (!atomic_load(&c->stop)) {
        uint64_t now = ingot_time_ns();
        io_take_queue(c);
        io_sweep(c, now);
        ingot_objstore_creds_check_expiry(c, now);
        uint64_t wake = io_start_ready(c, now);
        curl_multi_perform(c->multi, &running);
        if (io_reap(c) > 0) continue; /* slots freed, retries queued: start them before sleeping */
        curl_multi_poll(c->multi, NULL, 0, io_wait_ms(wake, ingot_time_ns()), NULL);
    }
    return NULL;
}

/* ------------------------------------------------------------------ submit and cancel */

ingot_status_t ingot_objstore_req_check(const ingot_objstore_t *c, const ingot_objstore_req_t *r)
{
    uint64_t sum = 0;
    const char *why = NULL;

    if (r->object == NULL || r->object->client != c) {
        why = "no object, or an object of another client";
    } else if (r->length == 0 || r->iov == NULL || r->iovcnt <= 0) {
        why = "an empty range or no iovecs";
    } else if (r->deadline_ns == 0) {
        why = "no deadline";
    } else if (r->etag != NULL && strlen(r->etag) > INGOT_OBJSTORE_ETAG_MAX) {
        why = "an ETag longer than 128 characters";
    } else if (r->offset + r->length < r->offset ||
               (r->object_size != INGOT_OBJSTORE_SIZE_UNKNOWN &&
                r->offset + r->length > r->object_size)) {
        why = "a range past the object's recorded size";
    }
    for (int i = 0; why == NULL && i < r->iovcnt; i++) sum += r->iov[i].iov_len;
    if (why == NULL && sum != r->length) why = "iovecs that do not add up to the length";
    if (why == NULL) return INGOT_OK;
    return ingot_fail(INGOT_ERR_INVALID_PARAM,
                      "objstore: request refused: %s (offset %" PRIu64 ", length %" PRIu64 ")", why,
                      r->offset, r->length);
}

ingot_status_t ingot_objstore_submit_internal(ingot_objstore_t *c, ingot_objstore_req_t *req)
{
    req->status = INGOT_INPROGRESS;
    req->http_status = 0;
    req->s3_code[0] = req->message[0] = '\0';
    req->retries = 0;
    req->priv.submit_ns = ingot_time_ns();
    req->priv.not_before_ns = 0;
    req->priv.done = 0;
    req->priv.expired_refreshed = req->priv.rate_held = 0;
    req->priv.etag_seen[0] = '\0';
    atomic_store(&req->priv.cancel, 0);
    pthread_mutex_lock(&c->lock);
    if (c->destroying) {
        pthread_mutex_unlock(&c->lock);
        return INGOT_ERR_CANCELED;
    }
    req->priv.where = INGOT_OBJSTORE_REQ_QUEUED;
    ingot_objstore_reqlist_push(&c->queue, req);
    pthread_mutex_unlock(&c->lock);
    curl_multi_wakeup(c->multi);
    return INGOT_OK;
}

ingot_status_t ingot_objstore_submit(ingot_objstore_t *client, ingot_objstore_req_t *req)
{
    if (client == NULL || req == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "objstore: submit without a client or request");
    }
    INGOT_CHECK(ingot_objstore_req_check(client, req));
    req->priv.whole = 0;
    req->priv.query = NULL;
    return ingot_objstore_submit_internal(client, req);
}

ingot_status_t ingot_objstore_cancel(ingot_objstore_t *client, ingot_objstore_req_t *req)
{
    pthread_mutex_lock(&client->lock);
    if (req->priv.where == INGOT_OBJSTORE_REQ_QUEUED) {
        ingot_objstore_reqlist_remove(&client->queue, req);
        req->priv.where = INGOT_OBJSTORE_REQ_NONE;
        pthread_mutex_unlock(&client->lock);
        return INGOT_OK;
    }
    atomic_store(&req->priv.cancel, 1);
    pthread_mutex_unlock(&client->lock);
    curl_multi_wakeup(client->multi);
    return INGOT_ERR_BUSY;
}

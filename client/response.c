/*
 * What an ended attempt means (the request's state machine after each attempt):
 *
 *   206/200 judged good, every byte in place        -> done
 *   503 (SlowDown), 429                             -> retry, class throttle; the bucket's
 *                                                      concurrency is halved (AIMD)
 *   500, 502, 504                                   -> retry, class server
 *   refused, reset, closed mid-body, DNS            -> retry, class network (a ranged GET
 *                                                      resumes after the bytes it has, under
 *                                                      If-Match of the ETag first seen)
 *   no byte for INGOT_S3_STALL_TIMEOUT (io.c)   -> retry, class stall
 *   ExpiredToken                                    -> credentials re-read, retried once
 *   301, 307, AuthorizationHeaderMalformed          -> failed: wrong region, the right one named
 *   403, 404, 412, 416, other 4xx                   -> failed at once
 *   a judged-bad answer (200 to a range, wrong
 *   Content-Range, size, short or long body)        -> failed at once
 *   the deadline                                    -> failed (TIMED_OUT), naming the retries
 *
 * A retry waits its backoff (full jitter), must fit before the deadline, within
 * INGOT_S3_MAX_RETRIES and, unless it is throttling, within the client's retry budget.
 */
#include "client/objstore_impl.h"
#include "client/xml.h"
#include "base/log.h"
#include "base/time.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/** What to do with an ended attempt. */
typedef struct {
    int retry;                        /* 1: retry; 0: complete */
    ingot_objstore_retry_class_t cls; /* retry: why */
    ingot_status_t status;            /* complete: how */
    char why[400];                    /* what happened, for the message */
} verdict_t;

void ingot_objstore_req_fail(ingot_objstore_t *c, ingot_objstore_req_t *req, ingot_status_t status,
                             const char *fmt, ...)
{
    char where[INGOT_OBJSTORE_DESCRIBE_MAX], what[400];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(what, sizeof(what), fmt, ap);
    va_end(ap);
    ingot_objstore_req_describe(req, where, sizeof(where));
    if (snprintf(req->message, sizeof(req->message), "objstore: %s: %s", where, what) >=
        (int)sizeof(req->message)) {
        memcpy(req->message + sizeof(req->message) - 4, "...", 4); /* a key of 1,000 bytes */
    }
    ingot_error("%s", req->message);
    ingot_objstore_req_complete(c, req, status);
}

/* "HTTP 404 NoSuchKey" (or "HTTP 404") into @p buf. */
static const char *http_what(const ingot_objstore_req_t *req, char *buf, size_t len)
{
    snprintf(buf, len, "HTTP %d%s%s", req->http_status, req->s3_code[0] ? " " : "", req->s3_code);
    return buf;
}

static void verdict(verdict_t *v, int retry, int cls_or_status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

static void verdict(verdict_t *v, int retry, int cls_or_status, const char *fmt, ...)
{
    va_list ap;
    v->retry = retry;
    if (retry) {
        v->cls = (ingot_objstore_retry_class_t)cls_or_status;
    } else {
        v->status = (ingot_status_t)cls_or_status;
    }
    va_start(ap, fmt);
    vsnprintf(v->why, sizeof(v->why), fmt, ap);
    va_end(ap);
}

static void judge_curl(const ingot_objstore_slot_t *s, CURLcode rc, uint64_t now, verdict_t *v)
{
    const char *text = curl_easy_strerror(rc);
    switch (rc) {
    case CURLE_OPERATION_TIMEDOUT:
        if (now + INGOT_NSEC_PER_MSEC >= s->req->deadline_ns) {
            /* req->message holds why the previous attempt was retried, if there was one */
            verdict(v, 0, INGOT_ERR_TIMED_OUT, "deadline reached during a transfer (%s)%s%.200s",
                    text, s->req->message[0] ? "; the attempt before: " : "", s->req->message);
        } else {
            verdict(v, 1, INGOT_OBJSTORE_RETRY_NETWORK, "%s", text); /* connect timeout */
        }
        return;
    case CURLE_COULDNT_CONNECT:
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
    case CURLE_GOT_NOTHING:
    case CURLE_PARTIAL_FILE:
    case CURLE_SSL_CONNECT_ERROR: verdict(v, 1, INGOT_OBJSTORE_RETRY_NETWORK, "%s", text); return;
    default: verdict(v, 0, INGOT_ERR_IO, "%s", text); return;
    }
}

/* The region the server says the bucket is in, from a header or the error body. */
static void server_region(const ingot_objstore_slot_t *s, char *out, size_t len)
{
    const char *end = s->errbody + s->errlen;
    char endpoint[256];
    snprintf(out, len, "%s", s->bucket_region);
    if (out[0] == '\0') ingot_objstore_xml_text(s->errbody, end, "Region", out, len);
    if (out[0] == '\0' &&
        ingot_objstore_xml_text(s->errbody, end, "Endpoint", endpoint, sizeof(endpoint)) == 0) {
        snprintf(out, len, "unknown (the server points to %.100s)", endpoint);
    }
    if (out[0] == '\0') snprintf(out, len, "not named by the server");
}

static int is_region_error(const ingot_objstore_slot_t *s, const char *code)
{
    return s->http == 301 || s->http == 307 || strcmp(code, "AuthorizationHeaderMalformed") == 0 ||
           strcmp(code, "PermanentRedirect") == 0 || strcmp(code, "TemporaryRedirect") == 0 ||
           strcmp(code, "IllegalLocationConstraintException") == 0;
}

static const char *status_hint(long http, const char *code)
{
    if (strcmp(code, "SignatureDoesNotMatch") == 0) return " (wrong secret key?)";
    if (strcmp(code, "InvalidAccessKeyId") == 0) return " (unknown access key id)";
    if (strcmp(code, "NoSuchBucket") == 0) return " (no such bucket)";
    if (strcmp(code, "NoSuchKey") == 0 || http == 404) return " (no such key)";
    if (http == 412) return " (the object was replaced since its ETag was recorded)";
    if (http == 416) return " (the range lies outside the object)";
    return "";
}

static void judge_error(ingot_objstore_t *c, const ingot_objstore_slot_t *s, verdict_t *v)
{
    const ingot_objstore_req_t *req = s->req;
    const char *code = req->s3_code;
    char what[96], region[160];

    http_what(req, what, sizeof(what));
    if (s->http == 503 || s->http == 429 || strcmp(code, "SlowDown") == 0) {
        verdict(v, 1, INGOT_OBJSTORE_RETRY_THROTTLE, "%s", what);
    } else if (s->http == 500 || s->http == 502 || s->http == 504) {
        verdict(v, 1, INGOT_OBJSTORE_RETRY_SERVER, "%s", what);
    } else if (strcmp(code, "ExpiredToken") == 0 && c->signing) {
        verdict(v, 1, INGOT_OBJSTORE_RETRY_AUTH, "%s (credentials from %s)", what,
                c->settings.credential_source);
    } else if (is_region_error(s, code)) {
        server_region(s, region, sizeof(region));
        verdict(v, 0, INGOT_ERR_CONFIG,
                "%s: wrong region: the bucket is in region %s, requests were signed for %s "
                "(from %s): set AWS_REGION",
                what, region, c->signing ? c->settings.region : "?",
                c->signing ? c->settings.region_source : "?");
    } else {
        ingot_status_t st = s->http == 403   ? INGOT_ERR_PERMISSION
                            : s->http == 404 ? INGOT_ERR_NOT_FOUND
                            : s->http == 412 ? INGOT_ERR_MISMATCH
                            : s->http == 416 ? INGOT_ERR_OUT_OF_RANGE
                                             : INGOT_ERR_IO;
        verdict(v, 0, st, "%s%s", what, status_hint(s->http, code));
    }
}

static void judge(ingot_objstore_t *c, ingot_objstore_slot_t *s, CURLcode rc, uint64_t now,
                  verdict_t *v)
{
    ingot_objstore_req_t *req = s->req;

    if (rc == CURLE_OK) ingot_objstore_slot_check(s); /* a body-less answer */
    req->http_status = (int)s->http;
    req->s3_code[0] = '\0';
    if (s->errlen > 0) {
        ingot_objstore_xml_text(s->errbody, s->errbody + s->errlen, "Code", req->s3_code,
                                sizeof(req->s3_code));
    }
    if (s->fatal != INGOT_OK) {
        verdict(v, 0, s->fatal, "HTTP %ld: %s", s->http, s->fatal_msg);
    } else if (s->stalled) {
        verdict(v, 1, INGOT_OBJSTORE_RETRY_STALL,
                "stalled: no byte for %.1f s (INGOT_S3_STALL_TIMEOUT) after %" PRIu64 " bytes",
                (double)(now - s->last_byte_ns) / 1e9, s->got);
    } else if (rc != CURLE_OK) {
        judge_curl(s, rc, now, v);
    } else if (!s->to_caller) {
        judge_error(c, s, v);
    } else if (!req->priv.whole && s->got != s->last - s->first + 1) {
        verdict(v, 0, INGOT_ERR_MISMATCH,
                "HTTP %ld: short body: %" PRIu64 " of %" PRIu64 " bytes (never accepted)", s->http,
                s->got, s->last - s->first + 1);
    } else {
        verdict(v, 0, INGOT_OK, "done");
    }
}

/* Why @p req may not be retried after verdict @p v (NULL: it may, after *delay_p), and the
 * status it then fails with. */
static const char *retry_refusal(ingot_objstore_t *c, ingot_objstore_req_t *req, const verdict_t *v,
                                 uint64_t now, uint64_t *delay_p, ingot_status_t *status_p)
{
    uint64_t left = req->deadline_ns > now ? req->deadline_ns - now : 0;

    *status_p = INGOT_ERR_IO;
    *delay_p = 0;
    if (v->cls == INGOT_OBJSTORE_RETRY_AUTH) {
        int renewed = !req->priv.expired_refreshed && ingot_objstore_creds_refresh(c) == INGOT_OK;
        req->priv.expired_refreshed = 1;
        *status_p = INGOT_ERR_PERMISSION;
        return renewed ? NULL : "the credentials expired and could not be renewed";
    }
    if (c->cfg.max_retries > 0 && req->retries >= (uint64_t)c->cfg.max_retries) {
        return "INGOT_S3_MAX_RETRIES reached";
    }
    int costs = v->cls != INGOT_OBJSTORE_RETRY_THROTTLE;
    if (costs && c->budget.cap == 0) {
        return "INGOT_S3_RETRY_BUDGET is 0 (no retries)";
    }
    /* A spent budget slows a retry to the longest backoff rather than failing it: a store that
     * fails everything is not hammered, and a request still retries until its deadline. */
    int spent = costs && !ingot_objstore_budget_take(&c->budget, INGOT_OBJSTORE_RETRY_COST);
    *delay_p = spent ? c->cfg.backoff_max_ns
                     : ingot_objstore_backoff_ns(c->cfg.backoff_base_ns, c->cfg.backoff_max_ns,
                                                 req->retries, &c->rng);
    if (*delay_p >= left) {
        /* the backoff would pass the deadline: one more try halfway there, while that leaves
         * more than twice the first backoff */
        *status_p = INGOT_ERR_TIMED_OUT;
        if (left <= 2 * c->cfg.backoff_base_ns) {
            return spent ? "deadline reached (INGOT_S3_RETRY_BUDGET spent: retries slowed to "
                           "INGOT_S3_BACKOFF_MAX)"
                         : "deadline reached";
        }
        *delay_p = left / 2;
    }
    return NULL;
}

/* Retry @p req after verdict @p v if the policy allows; else fail it. */
static void retry_or_fail(ingot_objstore_t *c, ingot_objstore_req_t *req, const verdict_t *v,
                          uint64_t now)
{
    uint64_t delay = 0;
    ingot_status_t status;
    const char *why_not = retry_refusal(c, req, v, now, &delay, &status);

    if (why_not != NULL) {
        ingot_objstore_req_fail(c, req, status, "%s; %s after %u retries", v->why, why_not,
                                req->retries);
        return;
    }
    req->retries++;
    snprintf(req->message, sizeof(req->message), "%s", v->why); /* the last reason, until done */
    INGOT_OBJSTORE_TALLY(c, req, retries[v->cls], 1);
    req->priv.not_before_ns = now + delay;
    ingot_debug("objstore: retry %u of %s in %" PRIu64 " ms: %s", req->retries,
                req->object->request_url, (uint64_t)(delay / INGOT_NSEC_PER_MSEC), v->why);
    req->priv.where = INGOT_OBJSTORE_REQ_PENDING;
    ingot_objstore_reqlist_push(&c->pending, req);
}

void ingot_objstore_attempt_done(ingot_objstore_t *c, ingot_objstore_slot_t *s, CURLcode rc,
                                 uint64_t now)
{
    ingot_objstore_req_t *req = s->req;
    ingot_objstore_throttle_t *t = &c->buckets[req->object->bucket].throttle;
    verdict_t v;

    judge(c, s, rc, now, &v);
    INGOT_OBJSTORE_TALLY(c, req, bytes, s->got);
    if (!req->priv.whole && s->first - req->offset + s->got > req->priv.done) {
        req->priv.done = s->first - req->offset + s->got; /* validated bytes stay: a retry
                                                             resumes after them */
    }
    if (req->priv.etag_seen[0] == '\0' && s->to_caller && s->etag[0] != '\0') {
        memcpy(req->priv.etag_seen, s->etag, sizeof(req->priv.etag_seen));
    }
    int ok = !v.retry && v.status == INGOT_OK;
    if (!s->hedge) ingot_objstore_throttle_finished(t, ok);
    if (v.retry && v.cls == INGOT_OBJSTORE_RETRY_THROTTLE &&
        ingot_objstore_throttle_slowdown(t, s->start_ns, now)) {
        INGOT_OBJSTORE_TALLY(c, req, throttle_events, 1);
    }
    req->priv.active--;
    if (ok) {
        ingot_objstore_twins_stop(c, s); /* the first to finish wins */
        if (s->hedge) INGOT_OBJSTORE_TALLY(c, req, hedge_wins, 1);
        if (!req->priv.whole) {
            ingot_objstore_hedge_record(&c->hedge, s->last - s->first + 1, now - s->start_ns);
        }
        ingot_objstore_hedge_earn(&c->hedge);
    } else if (req->priv.active > 0) {
        return; /* another attempt still runs: it finishes the request (or fails it) */
    }
    if (v.retry) {
        retry_or_fail(c, req, &v, now);
    } else if (v.status == INGOT_OK) {
        ingot_objstore_budget_refund(&c->budget);
        ingot_objstore_latency_add(&c->counters, now - s->start_ns);
        if (req->tally != NULL) ingot_objstore_latency_add(req->tally, now - s->start_ns);
        ingot_objstore_req_complete(c, req, INGOT_OK);
    } else {
        ingot_objstore_req_fail(c, req, v.status, "%s (after %u retries)", v.why, req->retries);
    }
}

/*
 * One attempt of a request on a transfer slot (a curl easy handle, reused so its connection
 * stays alive): its options, and the callbacks that judge the answer and put its bytes in place.
 * The callbacks also stamp the time of the last byte: the I/O thread ends an attempt that has
 * received nothing for INGOT_S3_STALL_TIMEOUT (libcurl's low-speed limit averages over seconds,
 * so a transfer that stops after a fast start would pass it for too long).
 *
 * The answer is judged once, before its first body byte (or at its end when it has none): a
 * ranged GET's bytes go to the caller only from a 206 whose Content-Range is exactly the range
 * asked for and whose total is the expected size, with a Content-Length that agrees; any other
 * 2xx fails the attempt without writing a byte, and an error status's body is kept (bounded) for
 * its S3 code. Data is copied once, from curl's receive buffer into the caller's iovecs; a body
 * longer than the range stops the transfer before anything is written past it.
 */
#include "client/objstore_impl.h"
#include "base/log.h"
#include "base/status.h"
#include "base/time.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------------ headers */

/* Does the header line @p h (@p len bytes) have name @p name? Returns its trimmed value. */
static const char *header_value(const char *h, size_t len, const char *name, size_t *vlen_p)
{
    size_t n = strlen(name);
    if (len <= n || h[n] != ':' || strncasecmp(h, name, n) != 0) return NULL;
    const char *v = h + n + 1, *end = h + len;
    while (v < end && (*v == ' ' || *v == '\t')) v++;
    while (end > v && (end[-1] == '\r' || end[-1] == '\n' || end[-1] == ' ')) end--;
    *vlen_p = (size_t)(end - v);
    return v;
}

static void copy_value(char *dst, size_t cap, const char *v, size_t n)
{
    if (n >= cap) n = cap - 1;
    memcpy(dst, v, n);
    dst[n] = '\0';
}

/* The decimal number that is exactly [p, end): digits only, at least one, no overflow. */
static int read_number(const char *p, const char *end, uint64_t *v_p)
{
    uint64_t v = 0;
    if (p >= end) return 0;
    for (; p < end; p++) {
        unsigned d = (unsigned)(*p - '0');
        if (d > 9 || v > (UINT64_MAX - d) / 10) return 0;
        v = v * 10 + d;
    }
    *v_p = v;
    return 1;
}

/* "bytes FIRST-LAST/TOTAL" ("*" totals are not accepted: we need the size). */
static int parse_content_range(ingot_objstore_slot_t *s, const char *v, size_t n)
{
    const char *end = v + n, *dash, *slash = NULL;
    uint64_t a, b, t;
    if (n < 6 || memcmp(v, "bytes ", 6) != 0) return 0;
    v += 6;
    dash = memchr(v, '-', (size_t)(end - v));
    if (dash != NULL) slash = memchr(dash, '/', (size_t)(end - dash));
    if (slash == NULL || !read_number(v, dash, &a) || !read_number(dash + 1, slash, &b) ||
        !read_number(slash + 1, end, &t) || b < a || b >= t) {
        return 0;
    }
    s->cr_first = a;
    s->cr_last = b;
    s->cr_total = t;
    return 1;
}

/* The status of a status line "HTTP/VERSION CODE [REASON]": three digits, 100 to 999; else 0. */
static long status_code(const char *h, size_t len)
{
    const char *sp = memchr(h, ' ', len), *end = h + len;
    uint64_t code;
    if (sp == NULL || end - sp < 4 || !read_number(sp + 1, sp + 4, &code) || code < 100 ||
        (end - sp > 4 && sp[4] >= '0' && sp[4] <= '9')) {
        return 0;
    }
    return (long)code;
}

static void reset_answer(ingot_objstore_slot_t *s)
{
    s->http = 0;
    s->has_range = 0;
    s->content_length = -1;
    s->etag[0] = s->bucket_region[0] = '\0';
}

void ingot_objstore_slot_header(ingot_objstore_slot_t *s, const char *h, size_t len)
{
    size_t n = 0;
    const char *v;

    if (len > 5 && memcmp(h, "HTTP/", 5) == 0) { /* a new answer (after 100 Continue) */
        reset_answer(s);
        s->http = status_code(h, len);
    } else if ((v = header_value(h, len, "content-range", &n)) != NULL) {
        s->has_range = parse_content_range(s, v, n) ? 1 : -1;
    } else if ((v = header_value(h, len, "content-length", &n)) != NULL) {
        uint64_t cl;
        s->content_length = read_number(v, v + n, &cl) && cl <= INT64_MAX ? (int64_t)cl : -1;
    } else if ((v = header_value(h, len, "etag", &n)) != NULL) {
        copy_value(s->etag, sizeof(s->etag), v, n);
    } else if ((v = header_value(h, len, "x-amz-bucket-region", &n)) != NULL) {
        copy_value(s->bucket_region, sizeof(s->bucket_region), v, n);
    }
}

static size_t on_header(char *h, size_t size, size_t nitems, void *arg)
{
    ingot_objstore_slot_t *s = arg;
    size_t len = size * nitems;

    s->last_byte_ns = ingot_time_ns();
    ingot_objstore_slot_header(s, h, len);
    return len;
}

/* ------------------------------------------------------------------ judging the answer */

static void slot_fatal(ingot_objstore_slot_t *s, ingot_status_t status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void slot_fatal(ingot_objstore_slot_t *s, ingot_status_t status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->fatal_msg, sizeof(s->fatal_msg), fmt, ap);
    va_end(ap);
    s->fatal = status;
}

static void check_ranged(ingot_objstore_slot_t *s, const ingot_objstore_req_t *req)
{
    uint64_t want = s->last - s->first + 1;

    if (s->http != 206) {
        slot_fatal(s, INGOT_ERR_FORMAT,
                   "HTTP %ld to a ranged GET (the server ignored the Range header): body refused",
                   s->http);
    } else if (s->has_range != 1) {
        slot_fatal(s, INGOT_ERR_FORMAT, "HTTP 206 without a valid Content-Range");
    } else if (s->cr_first != s->first || s->cr_last != s->last) {
        slot_fatal(s, INGOT_ERR_MISMATCH,
                   "Content-Range bytes %" PRIu64 "-%" PRIu64 " answers bytes %" PRIu64 "-%" PRIu64,
                   s->cr_first, s->cr_last, s->first, s->last);
    } else if (req->object_size != INGOT_OBJSTORE_SIZE_UNKNOWN && s->cr_total != req->object_size) {
        slot_fatal(s, INGOT_ERR_MISMATCH,
                   "size mismatch: the object has %" PRIu64 " bytes, %" PRIu64
                   " were recorded (replaced or truncated since?)",
                   s->cr_total, req->object_size);
    } else if (s->content_length >= 0 && (uint64_t)s->content_length != want) {
        slot_fatal(s, INGOT_ERR_MISMATCH,
                   "short or long body: Content-Length %" PRId64 " for a range of %" PRIu64
                   " bytes",
                   s->content_length, want);
    } else {
        s->to_caller = 1;
    }
}

static void check_whole(ingot_objstore_slot_t *s, ingot_objstore_req_t *req)
{
    if (s->http != 200) {
        slot_fatal(s, INGOT_ERR_FORMAT, "HTTP %ld to a GET of the whole object", s->http);
        return;
    }
    uint64_t need = s->content_length > 0 ? (uint64_t)s->content_length : 64 * 1024;
    if (s->content_length >= 0 && (uint64_t)s->content_length > req->priv.buf_max) {
        slot_fatal(s, INGOT_ERR_OUT_OF_RANGE,
                   "the object has %" PRId64 " bytes, more than the %" PRIu64 " allowed",
                   s->content_length, req->priv.buf_max);
        return;
    }
    if (need > req->priv.buf_cap) {
        void *grown = realloc(req->priv.buf, need);
        if (grown == NULL) {
            slot_fatal(s, INGOT_ERR_NO_MEMORY, "out of memory for %" PRIu64 " bytes", need);
            return;
        }
        req->priv.buf = grown;
        req->priv.buf_cap = need;
    }
    s->to_caller = 1;
}

void ingot_objstore_slot_check(ingot_objstore_slot_t *s)
{
    if (s->checked) return;
    s->checked = 1;
    s->to_caller = 0;
    if (s->http < 200 || s->http > 299) return; /* an error answer: its body is the reason */
    if (s->req->priv.put != NULL) {
        s->to_caller = 1; /* stored; the body of the answer, if any, says nothing more */
    } else if (s->req->priv.whole) {
        check_whole(s, s->req);
    } else {
        check_ranged(s, s->req);
    }
}

/* ------------------------------------------------------------------ the body */

static size_t deliver_ranged(ingot_objstore_slot_t *s, const char *data, size_t len)
{
    const ingot_objstore_req_t *req = s->req;
    if (s->got + len > s->last - s->first + 1) {
        slot_fatal(s, INGOT_ERR_MISMATCH, "body longer than the range: more than %" PRIu64 " bytes",
                   s->last - s->first + 1);
        return CURL_WRITEFUNC_ERROR;
    }
    for (size_t off = 0; off < len;) {
        const struct iovec *v = &req->iov[s->iov_i];
        size_t n = v->iov_len - s->iov_off < len - off ? v->iov_len - s->iov_off : len - off;
        memcpy((char *)v->iov_base + s->iov_off, data + off, n);
        off += n;
        s->iov_off += n;
        if (s->iov_off == v->iov_len) {
            s->iov_i++;
            s->iov_off = 0;
        }
    }
    s->got += len;
    return len;
}

static size_t deliver_whole(ingot_objstore_slot_t *s, const char *data, size_t len)
{
    ingot_objstore_req_t *req = s->req;
    if (req->priv.done + len > req->priv.buf_max) {
        slot_fatal(s, INGOT_ERR_OUT_OF_RANGE,
                   "the object is larger than the %" PRIu64 " bytes allowed", req->priv.buf_max);
        return CURL_WRITEFUNC_ERROR;
    }
    if (req->priv.done + len > req->priv.buf_cap) {
        size_t cap = req->priv.buf_cap * 2 > req->priv.done + len ? req->priv.buf_cap * 2
                                                                  : req->priv.done + len;
        void *grown = realloc(req->priv.buf, cap);
        if (grown == NULL) {
            slot_fatal(s, INGOT_ERR_NO_MEMORY, "out of memory for %zu bytes", cap);
            return CURL_WRITEFUNC_ERROR;
        }
        req->priv.buf = grown;
        req->priv.buf_cap = cap;
    }
    memcpy((char *)req->priv.buf + req->priv.done, data, len);
    req->priv.done += len;
    s->got += len;
    return len;
}

static size_t on_body(char *data, size_t size, size_t nmemb, void *arg)
{
    ingot_objstore_slot_t *s = arg;
    size_t len = size * nmemb;
    uint64_t now = ingot_time_ns();

    if (s->got > 0 && now - s->last_byte_ns > s->max_gap_ns) s->max_gap_ns = now - s->last_byte_ns;
    s->last_byte_ns = now;
    ingot_objstore_slot_check(s);
    if (s->fatal != INGOT_OK) return CURL_WRITEFUNC_ERROR;
    if (!s->to_caller) {
        size_t room = INGOT_OBJSTORE_ERRBODY_MAX - s->errlen, n = len < room ? len : room;
        memcpy(s->errbody + s->errlen, data, n);
        s->errlen += n;
        s->errbody[s->errlen] = '\0';
        return len;
    }
    ingot_objstore_req_t *req = s->req;
    if (req->priv.put != NULL) return len;
    if (req->priv.whole) return deliver_whole(s, data, len);
    size_t n = deliver_ranged(s, data, len);
    /* one attempt only: a retry resumes past every byte written, a twin may write them again */
    if (n == len && req->landed != NULL && req->priv.active == 1) {
        req->landed(req, s->first - req->offset + s->got);
    }
    return n;
}

/* A PUT's body, from the caller's buffer (sent again from its start by each attempt). */
static size_t on_read(char *dst, size_t size, size_t nitems, void *arg)
{
    ingot_objstore_slot_t *s = arg;
    const ingot_objstore_req_t *req = s->req;
    size_t left = req->priv.put_size - s->put_off, n = size * nitems < left ? size * nitems : left;
    memcpy(dst, (const char *)req->priv.put + s->put_off, n);
    s->put_off += n;
    return n;
}

/* ------------------------------------------------------------------ slots and attempts */

ingot_status_t ingot_objstore_slot_init(ingot_objstore_t *c, ingot_objstore_slot_t *s)
{
    const ingot_objstore_config_t *cfg = &c->cfg;
    memset(s, 0, sizeof(*s));
    s->client = c;
    s->easy = curl_easy_init();
    if (s->easy == NULL) return INGOT_ERR_NO_MEMORY;
    CURL *e = s->easy;
    curl_easy_setopt(e, CURLOPT_PRIVATE, s);
    curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(e, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_1_1);
    curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "http,https");
    curl_easy_setopt(e, CURLOPT_FOLLOWLOCATION, 0L); /* a redirect names a wrong region */
    curl_easy_setopt(e, CURLOPT_PATH_AS_IS, 1L);     /* keys may hold "." and ".." segments */
    curl_easy_setopt(e, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(e, CURLOPT_BUFFERSIZE, (long)cfg->recv_buffer);
    curl_easy_setopt(e, CURLOPT_CONNECTTIMEOUT_MS, (long)(cfg->connect_timeout_ns / 1000000));
    curl_easy_setopt(e, CURLOPT_USERAGENT, "ingot-objstore/1");
    curl_easy_setopt(e, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(e, CURLOPT_HEADERDATA, s);
    curl_easy_setopt(e, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(e, CURLOPT_WRITEDATA, s);
    curl_easy_setopt(e, CURLOPT_READFUNCTION, on_read);
    curl_easy_setopt(e, CURLOPT_READDATA, s);
    return INGOT_OK;
}

void ingot_objstore_slot_fini(ingot_objstore_slot_t *s)
{
    if (s->easy != NULL) curl_easy_cleanup(s->easy);
    if (s->token_hdr != NULL) explicit_bzero(s->token_hdr, s->token_cap);
    free(s->token_hdr);
    s->easy = NULL;
    s->token_hdr = NULL;
}

/* Where the byte at @p done of the request lands in its iovecs. */
static void seek_iov(ingot_objstore_slot_t *s, const ingot_objstore_req_t *req, uint64_t done)
{
    s->iov_i = 0;
    while (s->iov_i < req->iovcnt && done >= req->iov[s->iov_i].iov_len) {
        done -= req->iov[s->iov_i].iov_len;
        s->iov_i++;
    }
    s->iov_off = (size_t)done;
}

static void reset_attempt(ingot_objstore_slot_t *s, ingot_objstore_req_t *req, uint64_t now)
{
    s->req = req;
    s->start_ns = s->last_byte_ns = now;
    s->max_gap_ns = 0;
    s->stalled = 0;
    reset_answer(s);
    s->checked = s->to_caller = 0;
    s->fatal = INGOT_OK;
    s->fatal_msg[0] = '\0';
    s->got = 0;
    s->errlen = 0;
    s->errbody[0] = '\0';
}

ingot_status_t ingot_objstore_attempt_start(ingot_objstore_t *c, ingot_objstore_slot_t *s,
                                            ingot_objstore_req_t *req, uint64_t now)
{
    char range[64];
    long left_ms = (long)((req->deadline_ns - now) / INGOT_NSEC_PER_MSEC) + 1;

    reset_attempt(s, req, now);
    s->put_off = 0;
    if (req->priv.put != NULL) { /* the easy handle is reused: a GET sets HTTPGET again */
        curl_easy_setopt(s->easy, CURLOPT_UPLOAD, 1L);
        curl_easy_setopt(s->easy, CURLOPT_INFILESIZE_LARGE, (curl_off_t)req->priv.put_size);
    } else {
        curl_easy_setopt(s->easy, CURLOPT_HTTPGET, 1L);
    }
    if (req->priv.whole) {
        req->priv.done = 0; /* a whole-object GET starts again from its first byte */
        curl_easy_setopt(s->easy, CURLOPT_RANGE, NULL);
    } else {
        s->first = req->offset + req->priv.done;
        s->last = req->offset + req->length - 1;
        seek_iov(s, req, req->priv.done);
        snprintf(range, sizeof(range), "%" PRIu64 "-%" PRIu64, s->first, s->last);
        curl_easy_setopt(s->easy, CURLOPT_RANGE, range);
    }
    curl_easy_setopt(s->easy, CURLOPT_TIMEOUT_MS, left_ms);
    INGOT_CHECK(ingot_objstore_sign_attempt(c, s, req));
    if (curl_multi_add_handle(c->multi, s->easy) != CURLM_OK) return INGOT_ERR_INTERNAL;
    return INGOT_OK;
}

/*
 * Fuzz target: an answer's header lines as the client reads them (client/transfer.c, through
 * ingot_objstore_slot_header()) and the judgement before its body (ingot_objstore_slot_check()).
 * Input: a byte of flags (bit 0: a whole-object GET, else a ranged one; bit 1: the object's size
 * unknown), the range asked for (first byte, length: 8 bytes each), the object's size (8 bytes),
 * then the header lines as libcurl hands them over (each with its CRLF; the last may lack it),
 * each in memory of exactly its size. Checked after each line: a status taken is the three digits
 * after the status line's first space; a Content-Range taken is exactly "bytes FIRST-LAST/TOTAL"
 * (RFC 9110, FIRST <= LAST < TOTAL) with those numbers; a Content-Length taken is the digits
 * written; kept texts end within their buffers. After the last: a body goes to the caller only
 * from a 206 answering exactly the range asked, with the object's size and a Content-Length
 * that agrees (or a 200 to a whole GET that fits), and never otherwise.
 */
#include "client/objstore_impl.h"
#include "common/fuzz.h"
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <strings.h>

#define FUZZ_HEADERS_MAX (16u << 10)
#define FUZZ_WHOLE_MAX   (1u << 20) /* a whole GET's limit (its buffer grows to that) */

/* The value of header @p name in line @p h (@p len bytes): what follows "NAME:" and blanks, the
 * line end and trailing blanks cut, as libcurl's callers read it; NULL for another header. */
static const char *value_of(const char *h, size_t len, const char *name, size_t *n_p)
{
    size_t k = strlen(name), a, b = len;
    if (len <= k || h[k] != ':' || strncasecmp(h, name, k) != 0) return NULL;
    for (a = k + 1; a < len && (h[a] == ' ' || h[a] == '\t'); a++) continue;
    while (b > a && strchr("\r\n ", h[b - 1]) != NULL) b--;
    *n_p = b - a;
    return h + a;
}

/* @p v (@p n bytes) with each number's leading zeros dropped (one zero kept), NUL-terminated. */
static void without_leading_zeros(const char *v, size_t n, char *out, size_t room)
{
    size_t o = 0;
    for (size_t i = 0; i < n && o + 1 < room; i++) {
        int lead = (i == 0 || !isdigit((unsigned char)v[i - 1])) && v[i] == '0' && i + 1 < n &&
                   isdigit((unsigned char)v[i + 1]);
        if (lead) {
            while (i + 1 < n && v[i] == '0' && isdigit((unsigned char)v[i + 1])) i++;
        }
        out[o++] = v[i];
    }
    out[o] = '\0';
}

/* What was taken from line @p h must be what it says. */
static void check_line(const ingot_objstore_slot_t *s, const char *h, size_t len)
{
    char want[256], got[256];
    size_t n = 0;
    const char *v;
    if (len > 5 && memcmp(h, "HTTP/", 5) == 0) {
        const char *sp = memchr(h, ' ', len);
        size_t at = sp != NULL ? (size_t)(sp - h) + 1 : len;
        snprintf(got, sizeof(got), "%03ld", s->http);
        if (s->http != 0 &&
            (s->http < 100 || s->http > 999 || len - at < 3 || memcmp(h + at, got, 3) != 0 ||
             (len - at > 3 && isdigit((unsigned char)h[at + 3])))) {
            abort();
        }
    } else if ((v = value_of(h, len, "content-range", &n)) != NULL) {
        if (s->has_range == 1) {
            without_leading_zeros(v, n, want, sizeof(want));
            snprintf(got, sizeof(got), "bytes %" PRIu64 "-%" PRIu64 "/%" PRIu64, s->cr_first,
                     s->cr_last, s->cr_total);
            if (s->cr_first > s->cr_last || s->cr_last >= s->cr_total || strcmp(want, got) != 0) {
                abort();
            }
        } else if (s->has_range != -1) {
            abort();
        }
    } else if ((v = value_of(h, len, "content-length", &n)) != NULL && s->content_length >= 0) {
        without_leading_zeros(v, n, want, sizeof(want));
        snprintf(got, sizeof(got), "%" PRId64, s->content_length);
        if (strcmp(want, got) != 0) abort();
    }
    if (memchr(s->etag, '\0', sizeof(s->etag)) == NULL ||
        memchr(s->bucket_region, '\0', sizeof(s->bucket_region)) == NULL) {
        abort();
    }
}

/* The judgement of the answer read into @p s for @p req. */
static void check_judged(const ingot_objstore_slot_t *s, const ingot_objstore_req_t *req)
{
    if (!s->to_caller) return;
    if (req->priv.whole) {
        if (s->http != 200 || req->priv.buf_cap < 1 ||
            (s->content_length >= 0 && (uint64_t)s->content_length > req->priv.buf_max)) {
            abort();
        }
        return;
    }
    if (s->http != 206 || s->has_range != 1 || s->cr_first != s->first || s->cr_last != s->last ||
        (req->object_size != INGOT_OBJSTORE_SIZE_UNKNOWN && s->cr_total != req->object_size) ||
        (s->content_length >= 0 && (uint64_t)s->content_length != s->last - s->first + 1)) {
        abort(); /* bytes handed over that are not the range asked */
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size > FUZZ_HEADERS_MAX) return 0;
    fuzz_in_t in = {data, size};
    unsigned flags = (unsigned)fuzz_take(&in, 1);
    uint64_t first = fuzz_take(&in, 8), length = fuzz_take(&in, 8), object = fuzz_take(&in, 8);
    ingot_objstore_slot_t *s = calloc(1, sizeof(*s));
    ingot_objstore_req_t *req = calloc(1, sizeof(*req));
    if (s == NULL || req == NULL) goto out;
    req->object_size = (flags & 2) ? INGOT_OBJSTORE_SIZE_UNKNOWN : object;
    req->priv.whole = flags & 1;
    req->priv.buf_max = FUZZ_WHOLE_MAX;
    s->req = req;
    s->first = first;
    s->last = length == 0 || first + (length - 1) < first ? first : first + (length - 1);
    s->content_length = -1;
    const uint8_t *line;
    size_t len;
    while ((line = fuzz_line(&in, &len)) != NULL) {
        uint8_t *h = fuzz_copy(line, len); /* libcurl's lines are not NUL-terminated */
        if (h == NULL) break;
        ingot_objstore_slot_header(s, (const char *)h, len);
        check_line(s, (const char *)h, len);
        free(h);
    }
    ingot_objstore_slot_check(s);
    check_judged(s, req);
    free(req->priv.buf);
out:
    free(req);
    free(s);
    return 0;
}

/* Locations: the one parser of paths and URLs, folders and the names under them (location.h). */
#include "base/location.h"
#include "base/log.h"
#include "base/status.h"
#include "base/uri.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#define BUCKET_MAX 255 /* S3 allows 63; legacy us-east-1 buckets and other stores allow more */

static const char *const scheme_names[] = {
    [INGOT_LOCATION_FILE] = "file",
    [INGOT_LOCATION_S3] = "s3",
    [INGOT_LOCATION_HTTP] = "http",
    [INGOT_LOCATION_HTTPS] = "https",
};

const char *ingot_location_scheme_name(ingot_location_scheme_t scheme)
{
    return (unsigned)scheme < sizeof(scheme_names) / sizeof(scheme_names[0]) ? scheme_names[scheme]
                                                                             : "?";
}

/* The scheme of a URL ("s3", "http", "https" in any case, then "://"), its prefix's length in
 * *skip_p; INGOT_LOCATION_FILE for anything else. */
static ingot_location_scheme_t scheme_of(const char *text, size_t *skip_p)
{
    static const ingot_location_scheme_t urls[] = {INGOT_LOCATION_S3, INGOT_LOCATION_HTTP,
                                                   INGOT_LOCATION_HTTPS};
    for (size_t i = 0; i < sizeof(urls) / sizeof(urls[0]); i++) {
        const char *name = scheme_names[urls[i]];
        size_t n = strlen(name);
        if (strncasecmp(text, name, n) == 0 && strncmp(text + n, "://", 3) == 0) {
            *skip_p = n + 3;
            return urls[i];
        }
    }
    *skip_p = 0;
    return INGOT_LOCATION_FILE;
}

ingot_location_scheme_t ingot_location_scheme(const char *text)
{
    size_t skip;
    return text != NULL ? scheme_of(text, &skip) : INGOT_LOCATION_FILE;
}

int ingot_location_is_url(const char *text)
{
    return ingot_location_scheme(text) != INGOT_LOCATION_FILE;
}

/* ------------------------------------------------------------------ messages */

/* @p text as a message may show it: a user:password@ in its authority shown as "***@" (what a
 * refused URL or endpoint held never reaches a log). */
static const char *shown_url(const char *text, char *buf, size_t size)
{
    const char *auth = strstr(text, "://");
    auth = auth != NULL ? auth + 3 : text;
    size_t alen = strcspn(auth, "/?#");
    const char *at = memchr(auth, '@', alen);
    if (at == NULL) return text;
    snprintf(buf, size, "%.*s***%s", (int)(auth - text), text, at);
    return buf;
}

static ingot_status_t bad_url(const char *text, const char *why)
{
    char shown[2 * INGOT_LOCATION_KEY_MAX];
    return ingot_fail(INGOT_ERR_INVALID_PARAM, "objstore: malformed URL '%s': %s",
                      shown_url(text, shown, sizeof(shown)), why);
}

/* ------------------------------------------------------------------ parsing */

static int bucket_char_ok(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_';
}

static ingot_status_t parse_s3(const char *text, const char *rest, ingot_location_t *loc)
{
    const char *slash = strchr(rest, '/');
    size_t blen = slash ? (size_t)(slash - rest) : strlen(rest);
    char why[160];

    if (blen == 0) return bad_url(text, "no bucket (expected s3://BUCKET/KEY)");
    if (blen > BUCKET_MAX) return bad_url(text, "bucket name longer than 255 bytes");
    for (size_t i = 0; i < blen; i++) {
        if (!bucket_char_ok(rest[i])) {
            snprintf(why, sizeof(why),
                     "character '%c' (0x%02x) at %zu is not allowed in a bucket name "
                     "(letters, digits, '.', '-', '_')",
                     rest[i] >= 0x20 && rest[i] < 0x7f ? rest[i] : '?', (unsigned char)rest[i],
                     (size_t)(rest - text) + i);
            return bad_url(text, why);
        }
    }
    const char *key = slash ? slash + 1 : "";
    if (strlen(key) > INGOT_LOCATION_KEY_MAX) return bad_url(text, "key longer than 1024 bytes");
    loc->bucket = strndup(rest, blen);
    loc->key = strdup(key);
    return (loc->bucket && loc->key) ? INGOT_OK : INGOT_ERR_NO_MEMORY;
}

/* Bytes a URL may hold as written: printable ASCII without space, '#' or '\\'. */
static ssize_t first_bad_url_byte(const char *s)
{
    for (const char *p = s; *p != '\0'; p++) {
        unsigned char c = (unsigned char)*p;
        if (c <= 0x20 || c >= 0x7f || c == '#' || c == '\\') return p - s;
    }
    return -1;
}

/* Check "host[:port]" or "[v6]:port" of @p len bytes. */
static const char *authority_problem(const char *a, size_t len)
{
    if (len == 0) return "no host";
    if (memchr(a, '@', len) != NULL) return "user:password@ in a URL is not accepted";
    const char *end = a + len, *colon = NULL;
    if (a[0] == '[') {
        const char *close = memchr(a, ']', len);
        if (close == NULL) return "unclosed '[' in the host";
        colon = (close + 1 < end && close[1] == ':') ? close + 1 : NULL;
    } else {
        colon = memchr(a, ':', len);
        if (colon == a) return "no host";
    }
    if (colon != NULL) {
        long port = 0;
        for (const char *p = colon + 1; p < end; p++) {
            if (*p < '0' || *p > '9' || (port = port * 10 + (*p - '0')) > 65535) {
                return "the port is not a number in 1-65535";
            }
        }
        if (port == 0) return "the port is not a number in 1-65535";
    }
    return NULL;
}

static ingot_status_t parse_http(const char *text, const char *rest, ingot_location_t *loc)
{
    ssize_t bad = first_bad_url_byte(rest);
    char why[160];

    if (bad >= 0) {
        snprintf(why, sizeof(why), "byte 0x%02x at %zd is not allowed in a URL (percent-encode it)",
                 (unsigned char)rest[bad], (ssize_t)(rest - text) + bad);
        return bad_url(text, why);
    }
    const char *slash = strchr(rest, '/');
    size_t alen = slash ? (size_t)(slash - rest) : strlen(rest);
    const char *problem = authority_problem(rest, alen);
    if (problem != NULL) return bad_url(text, problem);
    if (slash == NULL || slash[1] == '\0') return bad_url(text, "no path after the host");
    if (strchr(slash, '?') != NULL) {
        return bad_url(text, "a query is not accepted (a pre-signed URL's signature would reach "
                             "messages and logs)");
    }
    loc->host = strndup(rest, alen);
    loc->key = strdup(slash);
    return (loc->host && loc->key) ? INGOT_OK : INGOT_ERR_NO_MEMORY;
}

ingot_status_t ingot_location_need_object(const ingot_location_t *loc)
{
    if (loc->scheme == INGOT_LOCATION_S3 && loc->key[0] == '\0') {
        return bad_url(loc->text, "no key: it names a bucket, not an object (expected "
                                  "s3://BUCKET/KEY)");
    }
    return INGOT_OK;
}

/* A URL of loc->scheme whose authority starts at @p rest. */
static ingot_status_t parse_url(const char *text, const char *rest, unsigned flags,
                                ingot_location_t *loc)
{
    if (loc->scheme == INGOT_LOCATION_S3) {
        INGOT_CHECK(parse_s3(text, rest, loc));
        return (flags & INGOT_LOCATION_OBJECT) ? ingot_location_need_object(loc) : INGOT_OK;
    }
    return parse_http(text, rest, loc);
}

ingot_status_t ingot_location_parse(const char *text, unsigned flags, ingot_location_t *loc)
{
    size_t skip = 0;
    ingot_status_t status;

    memset(loc, 0, sizeof(*loc));
    if (text == NULL || ((flags & INGOT_LOCATION_URL) && text[0] == '\0')) {
        return bad_url("", "empty");
    }
    loc->scheme = scheme_of(text, &skip);
    if (loc->scheme == INGOT_LOCATION_FILE && (flags & INGOT_LOCATION_URL)) {
        return bad_url(text, strncasecmp(text, "s3:", 3) == 0
                                 ? "expected s3://BUCKET/KEY"
                                 : "unsupported scheme (s3://, http://, https://)");
    }
    loc->text = strdup(text);
    if (loc->text == NULL) {
        status = INGOT_ERR_NO_MEMORY;
    } else {
        status = loc->scheme == INGOT_LOCATION_FILE ? INGOT_OK
                                                    : parse_url(text, text + skip, flags, loc);
    }
    if (status == INGOT_ERR_NO_MEMORY) ingot_error("objstore: out of memory parsing '%s'", text);
    if (status != INGOT_OK) ingot_location_release(loc);
    return status;
}

/* ------------------------------------------------------------------ folders and names */

static int dup_or_null(const char *from, char **to)
{
    *to = from != NULL ? strdup(from) : NULL;
    return from == NULL || *to != NULL;
}

ingot_status_t ingot_location_copy(const ingot_location_t *from, ingot_location_t *to)
{
    memset(to, 0, sizeof(*to));
    to->scheme = from->scheme;
    if (!dup_or_null(from->text, &to->text) || !dup_or_null(from->host, &to->host) ||
        !dup_or_null(from->bucket, &to->bucket) || !dup_or_null(from->key, &to->key) ||
        !dup_or_null(from->endpoint, &to->endpoint) || !dup_or_null(from->region, &to->region) ||
        !dup_or_null(from->credentials, &to->credentials)) {
        ingot_location_release(to);
        return ingot_fail(INGOT_ERR_NO_MEMORY, "out of memory copying the location '%s'",
                          from->text ? from->text : "");
    }
    return INGOT_OK;
}

/* @p loc's key again from its text, of which it is the tail after the authority
 * ("s3://BUCKET/", "http://HOST"); "" when the text ends before it. */
static ingot_status_t rekey(ingot_location_t *loc)
{
    const char *auth = loc->scheme == INGOT_LOCATION_S3 ? loc->bucket : loc->host;
    size_t skip;
    if (loc->scheme == INGOT_LOCATION_FILE) return INGOT_OK;
    if (loc->text == NULL || auth == NULL) return INGOT_ERR_NO_MEMORY; /* a copy that failed */
    scheme_of(loc->text, &skip);
    size_t at = skip + strlen(auth) + (loc->scheme == INGOT_LOCATION_S3);
    free(loc->key);
    loc->key = strdup(at < strlen(loc->text) ? loc->text + at : "");
    return loc->key != NULL ? INGOT_OK : INGOT_ERR_NO_MEMORY;
}

ingot_status_t ingot_location_dir(const ingot_location_t *of, ingot_location_t *dir)
{
    size_t skip;
    if (of->text == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "a location with no path or URL has no folder");
    }
    INGOT_CHECK(ingot_location_copy(of, dir));
    scheme_of(dir->text, &skip);
    char *slash = strrchr(dir->text + skip, '/');
    if (dir->scheme == INGOT_LOCATION_FILE && slash == NULL) {
        free(dir->text);
        dir->text = strdup(".");
    } else if (slash != NULL) {
        *(slash == dir->text ? slash + 1 : slash) = '\0'; /* a file at the root: "/" */
    }
    if (dir->text == NULL || rekey(dir) != INGOT_OK) {
        ingot_location_release(dir);
        return ingot_fail(INGOT_ERR_NO_MEMORY, "out of memory");
    }
    return INGOT_OK;
}

size_t ingot_location_join_text(const ingot_location_t *dir, const char *name, char *buf,
                                size_t len)
{
    int n = snprintf(buf, len, "%s/", dir->text != NULL ? dir->text : "");
    size_t at = n < 0 ? 0 : (size_t)n, room = at < len ? len - at : 0;
    char *tail = room > 0 ? buf + at : NULL;
    int http = dir->scheme == INGOT_LOCATION_HTTP || dir->scheme == INGOT_LOCATION_HTTPS;
    size_t need = http ? ingot_uri_encode(name, strlen(name), 1, tail, room)
                       : (size_t)snprintf(tail, room, "%s", name);
    return at + need;
}

ingot_status_t ingot_location_join(const ingot_location_t *dir, const char *name,
                                   ingot_location_t *out)
{
    size_t need = ingot_location_join_text(dir, name, NULL, 0);
    INGOT_CHECK(ingot_location_copy(dir, out));
    free(out->text);
    out->text = malloc(need + 1);
    if (out->text != NULL) ingot_location_join_text(dir, name, out->text, need + 1);
    if (out->text == NULL || rekey(out) != INGOT_OK) {
        ingot_location_release(out);
        return ingot_fail(INGOT_ERR_NO_MEMORY, "out of memory naming '%s' under '%s'", name,
                          dir->text);
    }
    if (out->scheme == INGOT_LOCATION_S3 && strlen(out->key) > INGOT_LOCATION_KEY_MAX) {
        ingot_status_t st = bad_url(out->text, "key longer than 1024 bytes");
        ingot_location_release(out);
        return st;
    }
    return INGOT_OK;
}

ingot_status_t ingot_location_identify(ingot_location_t *loc, const char *endpoint,
                                       const char *region, const char *credentials)
{
    char *e = strdup(endpoint), *r = strdup(region), *c = strdup(credentials);
    if (e == NULL || r == NULL || c == NULL) {
        free(e);
        free(r);
        free(c);
        return ingot_fail(INGOT_ERR_NO_MEMORY, "out of memory");
    }
    free(loc->endpoint);
    free(loc->region);
    free(loc->credentials);
    loc->endpoint = e;
    loc->region = r;
    loc->credentials = c;
    return INGOT_OK;
}

void ingot_location_release(ingot_location_t *loc)
{
    if (loc == NULL) return;
    free(loc->text);
    free(loc->host);
    free(loc->bucket);
    free(loc->key);
    free(loc->endpoint);
    free(loc->region);
    free(loc->credentials);
    memset(loc, 0, sizeof(*loc));
}

/* ------------------------------------------------------------------ endpoints */

ingot_status_t ingot_location_endpoint_check(const char *text, const char *what, char **base_p)
{
    size_t skip = 0;
    ingot_location_scheme_t scheme = scheme_of(text, &skip);
    const char *rest = text + skip;
    size_t alen = strcspn(rest, "/");
    const char *problem = NULL;

    if (scheme != INGOT_LOCATION_HTTP && scheme != INGOT_LOCATION_HTTPS) {
        problem = "expected http://HOST[:PORT] or https://HOST[:PORT]";
    } else if (first_bad_url_byte(rest) >= 0 || strchr(rest, '?') != NULL) {
        problem = "a space, control byte, '#', '?' or non-ASCII byte";
    } else {
        problem = authority_problem(rest, alen);
    }
    if (problem != NULL) {
        char shown[2 * INGOT_LOCATION_KEY_MAX];
        return ingot_fail(INGOT_ERR_CONFIG, "objstore: endpoint '%s' from %s: %s",
                          shown_url(text, shown, sizeof(shown)), what, problem);
    }
    char *base = strdup(text);
    if (base == NULL) return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
    size_t n = strlen(base);
    while (n > skip + alen && base[n - 1] == '/') base[--n] = '\0';
    *base_p = base;
    return INGOT_OK;
}

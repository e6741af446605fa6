/* Object-store URLs: parsing, S3 key encoding, sorted queries, request URLs (see url.h). */
#include "client/url.h"
#include "base/log.h"
#include <stdio.h>
#include <sys/types.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define BUCKET_MAX 255 /* S3 allows 63; legacy us-east-1 buckets and other stores allow more */

const char *ingot_objstore_scheme_name(ingot_objstore_scheme_t scheme)
{
    switch (scheme) {
    case INGOT_OBJSTORE_SCHEME_S3: return "s3";
    case INGOT_OBJSTORE_SCHEME_HTTP: return "http";
    case INGOT_OBJSTORE_SCHEME_HTTPS: return "https";
    }
    return "?";
}

/* Encode into a fresh string. */
static char *encode_dup(const char *in, int keep_slash)
{
    size_t need = ingot_uri_encode(in, strlen(in), keep_slash, NULL, 0);
    char *out = malloc(need + 1);
    if (out != NULL) ingot_uri_encode(in, strlen(in), keep_slash, out, need + 1);
    return out;
}

typedef struct {
    char *name, *value; /* encoded */
} query_pair_t;

static int pair_cmp(const void *a, const void *b)
{
    const query_pair_t *x = a, *y = b;
    int c = strcmp(x->name, y->name);
    return c != 0 ? c : strcmp(x->value, y->value);
}

static char *query_join(const query_pair_t *pairs, size_t n)
{
    size_t len = 1;
    for (size_t i = 0; i < n; i++) len += strlen(pairs[i].name) + strlen(pairs[i].value) + 2;
    char *out = malloc(len), *p = out;
    if (out == NULL) return NULL;
    *p = '\0';
    for (size_t i = 0; i < n; i++) {
        p += sprintf(p, "%s%s=%s", i ? "&" : "", pairs[i].name, pairs[i].value);
    }
    return out;
}

ingot_status_t ingot_objstore_query_build(const ingot_objstore_param_t *params, size_t n,
                                          char **out_p)
{
    query_pair_t *pairs = calloc(n ? n : 1, sizeof(*pairs));
    ingot_status_t status = INGOT_ERR_NO_MEMORY;
    char *out = NULL;

    if (pairs == NULL) goto out;
    for (size_t i = 0; i < n; i++) {
        pairs[i].name = encode_dup(params[i].name, 0);
        pairs[i].value = encode_dup(params[i].value ? params[i].value : "", 0);
        if (pairs[i].name == NULL || pairs[i].value == NULL) goto out;
    }
    qsort(pairs, n, sizeof(*pairs), pair_cmp);
    out = query_join(pairs, n);
    if (out != NULL) status = INGOT_OK;
out:
    for (size_t i = 0; pairs != NULL && i < n; i++) {
        free(pairs[i].name);
        free(pairs[i].value);
    }
    free(pairs);
    if (status != INGOT_OK) return ingot_fail(status, "objstore: out of memory building a query");
    *out_p = out;
    return INGOT_OK;
}

/* ------------------------------------------------------------------ parsing */

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
    char shown[2 * INGOT_OBJSTORE_KEY_MAX];
    return ingot_fail(INGOT_ERR_INVALID_PARAM, "objstore: malformed URL '%s': %s",
                      shown_url(text, shown, sizeof(shown)), why);
}

/* "s3", "http", "https" (case-insensitive) followed by "://"; -1 otherwise. */
static int scheme_of(const char *text, size_t *skip_p)
{
    static const struct {
        const char *prefix;
        ingot_objstore_scheme_t scheme;
    } schemes[] = {{"s3://", INGOT_OBJSTORE_SCHEME_S3},
                   {"http://", INGOT_OBJSTORE_SCHEME_HTTP},
                   {"https://", INGOT_OBJSTORE_SCHEME_HTTPS}};
    for (size_t i = 0; i < sizeof(schemes) / sizeof(schemes[0]); i++) {
        size_t n = strlen(schemes[i].prefix);
        if (strncasecmp(text, schemes[i].prefix, n) == 0) {
            *skip_p = n;
            return (int)schemes[i].scheme;
        }
    }
    return -1;
}

static int bucket_char_ok(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '-' || c == '_';
}

static ingot_status_t parse_s3(const char *text, const char *rest, int need_key,
                               ingot_objstore_url_t *url)
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
    if (need_key && key[0] == '\0') {
        return bad_url(text, "no key: it names a bucket, not an object (expected "
                             "s3://BUCKET/KEY)");
    }
    if (strlen(key) > INGOT_OBJSTORE_KEY_MAX) return bad_url(text, "key longer than 1024 bytes");
    url->scheme = INGOT_OBJSTORE_SCHEME_S3;
    url->bucket = strndup(rest, blen);
    url->key = strdup(key);
    return (url->bucket && url->key) ? INGOT_OK : INGOT_ERR_NO_MEMORY;
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

static ingot_status_t parse_http(const char *text, const char *rest, ingot_objstore_scheme_t scheme,
                                 ingot_objstore_url_t *url)
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
    url->scheme = scheme;
    url->host = strndup(rest, alen);
    url->key = strdup(slash);
    return (url->host && url->key) ? INGOT_OK : INGOT_ERR_NO_MEMORY;
}

ingot_status_t ingot_objstore_url_parse(const char *text, int need_key, ingot_objstore_url_t *url)
{
    size_t skip = 0;
    int scheme;
    ingot_status_t status;

    memset(url, 0, sizeof(*url));
    if (text == NULL || text[0] == '\0') return bad_url("", "empty");
    scheme = scheme_of(text, &skip);
    if (scheme < 0) {
        return bad_url(text, strncasecmp(text, "s3:", 3) == 0
                                 ? "expected s3://BUCKET/KEY"
                                 : "unsupported scheme (s3://, http://, https://)");
    }
    if (scheme == INGOT_OBJSTORE_SCHEME_S3) {
        status = parse_s3(text, text + skip, need_key, url);
    } else {
        status = parse_http(text, text + skip, (ingot_objstore_scheme_t)scheme, url);
    }
    if (status == INGOT_ERR_NO_MEMORY) {
        ingot_error("objstore: out of memory parsing '%s'", text);
    }
    if (status != INGOT_OK) ingot_objstore_url_release(url);
    return status;
}

void ingot_objstore_url_release(ingot_objstore_url_t *url)
{
    if (url == NULL) return;
    free(url->bucket);
    free(url->key);
    free(url->host);
    memset(url, 0, sizeof(*url));
}

ingot_status_t ingot_objstore_endpoint_check(const char *text, const char *what, char **base_p)
{
    size_t skip = 0;
    int scheme = scheme_of(text, &skip);
    const char *rest = text + skip;
    size_t alen = strcspn(rest, "/");
    const char *problem = NULL;

    if (scheme != INGOT_OBJSTORE_SCHEME_HTTP && scheme != INGOT_OBJSTORE_SCHEME_HTTPS) {
        problem = "expected http://HOST[:PORT] or https://HOST[:PORT]";
    } else if (first_bad_url_byte(rest) >= 0 || strchr(rest, '?') != NULL) {
        problem = "a space, control byte, '#', '?' or non-ASCII byte";
    } else {
        problem = authority_problem(rest, alen);
    }
    if (problem != NULL) {
        char shown[2 * INGOT_OBJSTORE_KEY_MAX];
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

/* ------------------------------------------------------------------ request URLs */

/* A bucket that can be a host name label: 3-63 of [a-z0-9-], no leading or trailing '-'. */
static int bucket_is_dns_label(const char *b)
{
    size_t n = strlen(b);
    if (n < 3 || n > 63 || b[0] == '-' || b[n - 1] == '-') return 0;
    for (size_t i = 0; i < n; i++) {
        if (!((b[i] >= 'a' && b[i] <= 'z') || (b[i] >= '0' && b[i] <= '9') || b[i] == '-')) {
            return 0;
        }
    }
    return 1;
}

static ingot_status_t s3_url(const ingot_objstore_url_t *url, const ingot_objstore_endpoint_t *ep,
                             const char *region, const char *key, char **out_p)
{
    char *ekey = encode_dup(key, 1);
    char *out = NULL;
    int n = -1;

    if (ekey == NULL) return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
    if (ep != NULL && ep->base != NULL) {
        n = asprintf(&out, "%s/%s/%s", ep->base, url->bucket, ekey);
    } else if (bucket_is_dns_label(url->bucket) && !(ep != NULL && ep->path_style)) {
        n = asprintf(&out, "https://%s.s3.%s.amazonaws.com/%s", url->bucket, region, ekey);
    } else {
        n = asprintf(&out, "https://s3.%s.amazonaws.com/%s/%s", region, url->bucket, ekey);
    }
    free(ekey);
    if (n < 0) return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
    *out_p = out;
    return INGOT_OK;
}

ingot_status_t ingot_objstore_url_request(const ingot_objstore_url_t *url,
                                          const ingot_objstore_endpoint_t *ep, const char *region,
                                          char **out_p)
{
    if (url->scheme == INGOT_OBJSTORE_SCHEME_S3) return s3_url(url, ep, region, url->key, out_p);
    char *out = NULL;
    if (asprintf(&out, "%s://%s%s", ingot_objstore_scheme_name(url->scheme), url->host, url->key) <
        0) {
        return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
    }
    *out_p = out;
    return INGOT_OK;
}

ingot_status_t ingot_objstore_url_bucket(const ingot_objstore_url_t *url,
                                         const ingot_objstore_endpoint_t *ep, const char *region,
                                         char **out_p)
{
    if (url->scheme != INGOT_OBJSTORE_SCHEME_S3) {
        return ingot_fail(INGOT_ERR_UNSUPPORTED, "objstore: %s:// URLs have no bucket to list",
                          ingot_objstore_scheme_name(url->scheme));
    }
    return s3_url(url, ep, region, "", out_p);
}

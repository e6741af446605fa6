/*
 * Fuzz target: where a location's requests go (client/url.h) and the percent-encoding under them
 * (base/uri.h). Input: one byte of flags (a custom endpoint, path-style, the region), then lines:
 * the location, then query parameters "name=value". Checked: a request URL is its endpoint, '/',
 * then the bucket (path-style) or nothing (virtual-hosted: only for a bucket that is a DNS label,
 * on AWS), then the key encoded, which decodes back to the key; an http(s) URL is requested as
 * written; a query holds every parameter once, encoded, sorted; encoding anything decodes back.
 */
#include "client/url.h"
#include "common/fuzz.h"
#include <ctype.h>
#include <stdio.h>
#include <strings.h>

#define FUZZ_TEXT_MAX   4096
#define FUZZ_PARAMS_MAX 16

static const char *const regions[] = {"us-east-1", "eu-west-1", "cn-north-1", "us-gov-west-1"};
static const char *const bases[] = {"http://127.0.0.1:8333", "https://minio.example.com/s3"};

/* @p len bytes of @p in, encoded (keeping '/' or not) and decoded, are themselves again; the
 * encoding is only unreserved characters, '/' when kept, and %XX. */
static void check_uri(const char *in, size_t len, int keep_slash)
{
    size_t need = ingot_uri_encode(in, len, keep_slash, NULL, 0);
    char *enc = malloc(need + 1), *dec = malloc(need + 1);
    if (enc == NULL || dec == NULL ||
        ingot_uri_encode(in, len, keep_slash, enc, need + 1) != need || strlen(enc) != need ||
        ingot_uri_decode(enc, 0, dec) != 0 || memcmp(dec, in, len) != 0 || dec[len] != '\0') {
        abort();
    }
    for (const char *p = enc; *p != '\0'; p++) {
        if (*p == '%' ? !isxdigit((unsigned char)p[1]) || !isxdigit((unsigned char)p[2]) ||
                            islower((unsigned char)p[1]) || islower((unsigned char)p[2])
                      : !isalnum((unsigned char)*p) && !strchr("-_.~", *p) &&
                            !(keep_slash && *p == '/')) {
            abort();
        }
        p += *p == '%' ? 2 : 0;
    }
    free(enc);
    free(dec);
}

/* @p tail (after the endpoint and '/') is @p prefix then @p key, encoded. */
static void check_tail(const char *tail, const char *prefix, const char *key)
{
    size_t n = strlen(prefix);
    char *dec = malloc(strlen(tail) + 1);
    if (dec == NULL || strncmp(tail, prefix, n) != 0 || ingot_uri_decode(tail + n, 0, dec) != 0 ||
        strcmp(dec, key) != 0) {
        abort();
    }
    free(dec);
}

/* A bucket AWS may address as a host name: 3-63 of [a-z0-9-], not starting or ending with '-'. */
static int dns_label(const char *b)
{
    size_t n = strlen(b);
    return n >= 3 && n <= 63 && b[0] != '-' && b[n - 1] != '-' &&
           strspn(b, "abcdefghijklmnopqrstuvwxyz0123456789-") == n;
}

static void check_s3(const ingot_location_t *loc, const ingot_objstore_endpoint_t *ep,
                     const char *region)
{
    char *req = NULL, *host = NULL, *list = NULL, virt[400], prefix[300];
    if (ingot_objstore_url_request(loc, ep, region, &req) != INGOT_OK ||
        ingot_objstore_url_endpoint(loc, ep, region, &host) != INGOT_OK ||
        ingot_objstore_url_bucket(loc, ep, region, &list) != INGOT_OK) {
        abort();
    }
    size_t hl = strlen(host);
    if (strncmp(req, host, hl) != 0 || req[hl] != '/' || strncmp(list, host, hl) != 0) abort();
    snprintf(virt, sizeof(virt), "https://%s.s3.%s.amazonaws.com", loc->bucket, region);
    if (ep->base == NULL && !ep->path_style && dns_label(loc->bucket)) {
        if (strcmp(host, virt) != 0 || strcmp(list + hl, "/") != 0) abort();
        check_tail(req + hl + 1, "", loc->key);
    } else {
        snprintf(prefix, sizeof(prefix), "%s/", loc->bucket);
        if ((ep->base != NULL && strcmp(host, ep->base) != 0) || list[hl] != '/' ||
            strcmp(list + hl + 1, prefix) != 0) {
            abort(); /* path-style: on the endpoint, the bucket first */
        }
        check_tail(req + hl + 1, prefix, loc->key);
    }
    free(req);
    free(host);
    free(list);
}

static void check_http(const ingot_location_t *loc, const char *text)
{
    char *req = NULL, *host = NULL, *list = NULL;
    const char *scheme = ingot_location_scheme_name(loc->scheme), *rest = strstr(text, "://");
    size_t sl = strlen(scheme);
    if (ingot_objstore_url_request(loc, NULL, "us-east-1", &req) != INGOT_OK ||
        ingot_objstore_url_endpoint(loc, NULL, "us-east-1", &host) != INGOT_OK ||
        ingot_objstore_url_bucket(loc, NULL, "us-east-1", &list) == INGOT_OK) {
        abort(); /* and an http(s) URL has no bucket to list */
    }
    if (rest == NULL || strncmp(req, scheme, sl) != 0 || strncasecmp(text, scheme, sl) != 0 ||
        strcmp(req + sl, rest) != 0 || strncmp(req, host, strlen(host)) != 0) {
        abort(); /* requested as written, the scheme in lower case */
    }
    free(req);
    free(host);
}

/* Which of @p n parameters (unused so far) pair "@p name=@p value" decodes to; n when none. */
static size_t param_of(const ingot_objstore_param_t *params, size_t n, const int *used,
                       const char *name, const char *value)
{
    static char dname[FUZZ_TEXT_MAX + 1], dvalue[FUZZ_TEXT_MAX + 1]; /* no longer than the input */
    if (ingot_uri_decode(name, 0, dname) != 0 || ingot_uri_decode(value, 0, dvalue) != 0) abort();
    size_t i = 0;
    while (i < n && (used[i] || strcmp(params[i].name, dname) != 0 ||
                     strcmp(params[i].value ? params[i].value : "", dvalue) != 0)) {
        i++;
    }
    return i;
}

/* The query of @p n parameters: each once, "name=value" encoded, sorted by name then value. */
static void check_query(const ingot_objstore_param_t *params, size_t n)
{
    char *q = NULL, *save = NULL, *prev_name = NULL, *prev_value = NULL;
    int used[FUZZ_PARAMS_MAX] = {0};
    size_t seen = 0;
    if (ingot_objstore_query_build(params, n, &q) != INGOT_OK) abort();
    for (char *pair = strtok_r(q, "&", &save); pair != NULL; pair = strtok_r(NULL, "&", &save)) {
        char *eq = strchr(pair, '=');
        if (eq == NULL || strchr(eq + 1, '=') != NULL) abort();
        *eq = '\0'; /* pair: the name, eq + 1: the value */
        int order = prev_name != NULL ? strcmp(prev_name, pair) : -1;
        if (order > 0 || (order == 0 && strcmp(prev_value, eq + 1) > 0)) abort();
        prev_name = pair;
        prev_value = eq + 1;
        size_t i = param_of(params, n, used, pair, eq + 1);
        if (i == n) abort(); /* a pair no parameter made */
        used[i] = 1;
        seen++;
    }
    if (seen != n) abort();
    free(q);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    if (size < 1 || size > FUZZ_TEXT_MAX) return 0;
    char *text = fuzz_cstr(data + 1, size - 1), *save = NULL;
    if (text == NULL) return 0;
    check_uri((const char *)data + 1, size - 1, data[0] & 1);
    ingot_objstore_endpoint_t ep = {(data[0] & 2) ? (char *)bases[(data[0] >> 4) & 1] : NULL,
                                    (data[0] >> 2) & 1};
    const char *region = regions[(data[0] >> 5) & 3];
    ingot_objstore_param_t params[FUZZ_PARAMS_MAX];
    size_t n = 0;
    char *line = strtok_r(text, "\n", &save), *location = line;
    while ((line = strtok_r(NULL, "\n", &save)) != NULL && n < FUZZ_PARAMS_MAX) {
        char *eq = strchr(line, '=');
        if (eq != NULL) *eq = '\0';
        params[n++] = (ingot_objstore_param_t){line, eq != NULL ? eq + 1 : NULL};
    }
    check_query(params, n);
    ingot_location_t loc;
    if (location != NULL && ingot_location_parse(location, INGOT_LOCATION_URL, &loc) == INGOT_OK) {
        if (loc.scheme == INGOT_LOCATION_S3) {
            check_s3(&loc, &ep, region);
        } else {
            check_http(&loc, location);
        }
        ingot_location_release(&loc);
    }
    free(text);
    return 0;
}

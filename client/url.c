/* Request URLs: S3 key encoding, sorted queries, where a location's requests go (see url.h). */
#include "client/url.h"
#include "base/log.h"
#include <stdio.h>
#include <sys/types.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

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

/* Where an s3 request goes (*host_p, malloc'd: a custom endpoint's base, or AWS's scheme and
 * host); returns 1 when the bucket goes in the path, 0 when it is in the host (virtual-hosted),
 * -1 when out of memory. */
static int s3_host(const ingot_location_t *url, const ingot_objstore_endpoint_t *ep,
                   const char *region, char **host_p)
{
    int n, path_style = 1;
    if (ep != NULL && ep->base != NULL) {
        n = (*host_p = strdup(ep->base)) != NULL ? 0 : -1;
    } else if (bucket_is_dns_label(url->bucket) && !(ep != NULL && ep->path_style)) {
        n = asprintf(host_p, "https://%s.s3.%s.amazonaws.com", url->bucket, region);
        path_style = 0;
    } else {
        n = asprintf(host_p, "https://s3.%s.amazonaws.com", region);
    }
    return n < 0 ? -1 : path_style;
}

static ingot_status_t s3_url(const ingot_location_t *url, const ingot_objstore_endpoint_t *ep,
                             const char *region, const char *key, char **out_p)
{
    char *ekey = encode_dup(key, 1), *host = NULL, *out = NULL;
    int path_style = ekey != NULL ? s3_host(url, ep, region, &host) : -1;
    int n = -1;
    if (path_style == 1) {
        n = asprintf(&out, "%s/%s/%s", host, url->bucket, ekey);
    } else if (path_style == 0) {
        n = asprintf(&out, "%s/%s", host, ekey);
    }
    free(ekey);
    free(host);
    if (n < 0) return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
    *out_p = out;
    return INGOT_OK;
}

ingot_status_t ingot_objstore_url_request(const ingot_location_t *url,
                                          const ingot_objstore_endpoint_t *ep, const char *region,
                                          char **out_p)
{
    if (url->scheme == INGOT_LOCATION_S3) return s3_url(url, ep, region, url->key, out_p);
    char *out = NULL;
    if (asprintf(&out, "%s://%s%s", ingot_location_scheme_name(url->scheme), url->host, url->key) <
        0) {
        return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
    }
    *out_p = out;
    return INGOT_OK;
}

ingot_status_t ingot_objstore_url_bucket(const ingot_location_t *url,
                                         const ingot_objstore_endpoint_t *ep, const char *region,
                                         char **out_p)
{
    if (url->scheme != INGOT_LOCATION_S3) {
        return ingot_fail(INGOT_ERR_UNSUPPORTED, "objstore: %s:// URLs have no bucket to list",
                          ingot_location_scheme_name(url->scheme));
    }
    return s3_url(url, ep, region, "", out_p);
}

ingot_status_t ingot_objstore_url_endpoint(const ingot_location_t *url,
                                           const ingot_objstore_endpoint_t *ep, const char *region,
                                           char **out_p)
{
    int n;
    if (url->scheme == INGOT_LOCATION_S3) {
        n = s3_host(url, ep, region, out_p) < 0 ? -1 : 0;
    } else {
        n = asprintf(out_p, "%s://%s", ingot_location_scheme_name(url->scheme), url->host);
    }
    return n < 0 ? ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory") : INGOT_OK;
}

/*
 * Request URLs (url.c): where a request for a location (s3://BUCKET/KEY, http(s)://HOST/PATH,
 * parsed by base/location.h) goes on an endpoint (path-style or virtual-hosted), S3's key
 * encoding and the sorted query strings that SigV4 signs. Pure functions: no I/O, no globals.
 *
 * Why we encode and sort ourselves: libcurl 7.88's CURLOPT_AWS_SIGV4 signs the path and the
 * query exactly as sent, while S3 signs its canonical forms (the key's bytes with everything but
 * RFC 3986's unreserved characters and '/' as %XX; the parameters sorted). Sending the canonical
 * forms makes the two agree.
 */
#ifndef INGOT_CLIENT_URL_H
#define INGOT_CLIENT_URL_H

#include "base/location.h"
#include "base/uri.h" /* ingot_uri_encode, _decode */
#include <ingot/status.h>
#include <stddef.h>

/** One query parameter, unencoded. */
typedef struct ingot_objstore_param {
    const char *name;
    const char *value; /**< "" for an empty value (sent as "name=") */
} ingot_objstore_param_t;

/**
 * The query string of @p n parameters as SigV4 signs it: each name and value encoded
 * (ingot_uri_encode, '/' encoded), the pairs sorted by encoded name then value (byte
 * order), joined as "a=1&b=2". *out_p is malloc'd.
 * @return INGOT_OK, INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_objstore_query_build(const ingot_objstore_param_t *params, size_t n,
                                          char **out_p);

/** Where an s3 object's requests go. */
typedef struct ingot_objstore_endpoint {
    char *base;     /**< "http://127.0.0.1:8333" (no trailing '/'); NULL: AWS itself */
    int path_style; /**< 1: https://HOST/BUCKET/KEY; 0: virtual-hosted when the bucket allows */
} ingot_objstore_endpoint_t;

/**
 * The request URL of @p url (an object or a prefix) on @p ep in @p region: a custom endpoint
 * gets path-style (BASE/BUCKET/KEY), AWS virtual-hosted (https://BUCKET.s3.REGION.amazonaws.com/
 * KEY) when the bucket is a DNS label without dots, else path-style on s3.REGION.amazonaws.com;
 * http(s) URLs are used as written. The key is encoded (ingot_uri_encode, '/' kept).
 * *out_p is malloc'd.
 * @return INGOT_OK, INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_objstore_url_request(const ingot_location_t *url,
                                          const ingot_objstore_endpoint_t *ep, const char *region,
                                          char **out_p);

/** The request URL of @p url's bucket itself (for LIST): as above with an empty key, "/"-ended. */
ingot_status_t ingot_objstore_url_bucket(const ingot_location_t *url,
                                         const ingot_objstore_endpoint_t *ep, const char *region,
                                         char **out_p);

/**
 * Where the requests for @p url go, for messages: the custom endpoint of @p ep, else the
 * scheme and host of its request URL ("https://BUCKET.s3.REGION.amazonaws.com",
 * "http://HOST:PORT"). *out_p is malloc'd.
 * @return INGOT_OK, INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_objstore_url_endpoint(const ingot_location_t *url,
                                           const ingot_objstore_endpoint_t *ep, const char *region,
                                           char **out_p);

#endif

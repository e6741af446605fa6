/*
 * Object-store URLs (url.c): parsing s3://BUCKET/KEY and http(s)://HOST[:PORT]/PATH, the
 * request URL of an object on an endpoint (path-style or virtual-hosted), S3's key encoding and
 * the sorted query strings that SigV4 signs. Pure functions: no I/O, no globals.
 *
 * Why we encode and sort ourselves: libcurl 7.88's CURLOPT_AWS_SIGV4 signs the path and the
 * query exactly as sent, while S3 signs its canonical forms (the key's bytes with everything but
 * RFC 3986's unreserved characters and '/' as %XX; the parameters sorted). Sending the canonical
 * forms makes the two agree.
 */
#ifndef INGOT_CLIENT_URL_H
#define INGOT_CLIENT_URL_H

#include "base/uri.h" /* ingot_uri_encode, _decode */
#include <ingot/status.h>
#include <stddef.h>

typedef enum ingot_objstore_scheme {
    INGOT_OBJSTORE_SCHEME_S3,
    INGOT_OBJSTORE_SCHEME_HTTP,
    INGOT_OBJSTORE_SCHEME_HTTPS
} ingot_objstore_scheme_t;

/** A parsed URL. Strings are owned (ingot_objstore_url_release). */
typedef struct ingot_objstore_url {
    ingot_objstore_scheme_t scheme;
    char *bucket; /**< s3: the bucket; http(s): NULL */
    char *key;    /**< s3: the key or prefix, literal as written (may be ""); http(s): the path
                       after the host, '/' included, as written (already a URL) */
    char *host;   /**< http(s): "host[:port]"; s3: NULL */
} ingot_objstore_url_t;

/** S3's longest key, in bytes. */
#define INGOT_OBJSTORE_KEY_MAX 1024

/**
 * Parse @p text. With @p need_key, an s3 URL must name an object (s3://BUCKET/KEY); without, a
 * prefix (s3://BUCKET/ or s3://BUCKET/PREFIX) is enough. An s3 key is taken literally, as the
 * AWS CLI does ("s3://b/a%20b" is the key "a%20b"). http(s) URLs must be valid URLs already
 * (no space, control or non-ASCII byte), carry no user:password@ and have a path.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM, logged naming the URL and what is wrong.
 */
ingot_status_t ingot_objstore_url_parse(const char *text, int need_key, ingot_objstore_url_t *url);

/** Free @p url's strings and zero it. Accepts NULL. */
void ingot_objstore_url_release(ingot_objstore_url_t *url);

/** The scheme's name ("s3", "http", "https"). */
const char *ingot_objstore_scheme_name(ingot_objstore_scheme_t scheme);


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
 * Check an endpoint URL as AWS_ENDPOINT_URL takes it: http(s)://HOST[:PORT][/PATH], no query, no
 * user:password@. On success *base_p is a malloc'd copy without its trailing '/'.
 * @return INGOT_OK; INGOT_ERR_CONFIG, logged naming @p what (the variable or profile) and why.
 */
ingot_status_t ingot_objstore_endpoint_check(const char *text, const char *what, char **base_p);

/**
 * The request URL of @p url (an object or a prefix) on @p ep in @p region: a custom endpoint
 * gets path-style (BASE/BUCKET/KEY), AWS virtual-hosted (https://BUCKET.s3.REGION.amazonaws.com/
 * KEY) when the bucket is a DNS label without dots, else path-style on s3.REGION.amazonaws.com;
 * http(s) URLs are used as written. The key is encoded (ingot_uri_encode, '/' kept).
 * *out_p is malloc'd.
 * @return INGOT_OK, INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_objstore_url_request(const ingot_objstore_url_t *url,
                                          const ingot_objstore_endpoint_t *ep, const char *region,
                                          char **out_p);

/** The request URL of @p url's bucket itself (for LIST): as above with an empty key, "/"-ended. */
ingot_status_t ingot_objstore_url_bucket(const ingot_objstore_url_t *url,
                                         const ingot_objstore_endpoint_t *ep, const char *region,
                                         char **out_p);

#endif

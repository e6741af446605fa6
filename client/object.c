/*
 * Objects of a client: a parsed URL, its request URL on the client's endpoint, and its bucket's
 * slot in the client's throttle table; and how a request names itself in messages (endpoint,
 * bucket, key, range: never a secret, since no secret is ever part of a URL we build).
 */
#include "client/objstore_impl.h"
#include "base/log.h"
#include "base/status.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bucket's (or host's) index in the table, added on first sight. */
static ingot_status_t bucket_index(ingot_objstore_t *c, const char *name, uint32_t *index_p)
{
    ingot_status_t status = INGOT_OK;
    pthread_mutex_lock(&c->buckets_lock);
    uint32_t n = atomic_load(&c->nbuckets), i;
    for (i = 0; i < n && strcmp(c->buckets[i].name, name) != 0; i++) {
    }
    if (i == n && n == INGOT_OBJSTORE_MAX_BUCKETS) {
        status = ingot_fail(INGOT_ERR_NO_RESOURCE,
                            "objstore: '%s' would be the %dth bucket or host of one client", name,
                            INGOT_OBJSTORE_MAX_BUCKETS + 1);
    } else if (i == n) {
        snprintf(c->buckets[i].name, sizeof(c->buckets[i].name), "%s", name);
        ingot_objstore_throttle_init(&c->buckets[i].throttle, (double)c->cfg.connections,
                                     (double)c->cfg.rate_limit);
        atomic_store(&c->nbuckets, n + 1); /* the I/O thread reads entries below nbuckets */
    }
    pthread_mutex_unlock(&c->buckets_lock);
    *index_p = i;
    return status;
}

static ingot_status_t object_build(ingot_objstore_t *c, ingot_objstore_object_t *o, int list)
{
    int s3 = o->url.scheme == INGOT_LOCATION_S3;
    if (s3 && !c->signing) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "objstore: s3://%s/%s: this client was created for unsigned http(s) "
                          "URLs (create it with an s3:// url to resolve credentials)",
                          o->url.bucket, o->url.key);
    }
    o->sign = s3;
    const ingot_objstore_endpoint_t *ep = s3 ? &c->settings.endpoint : NULL;
    if (list) {
        INGOT_CHECK(ingot_objstore_url_bucket(&o->url, ep, c->settings.region, &o->request_url));
    } else {
        INGOT_CHECK(ingot_objstore_url_request(&o->url, ep, c->settings.region, &o->request_url));
    }
    INGOT_CHECK(ingot_objstore_url_endpoint(&o->url, ep, c->settings.region, &o->endpoint));
    return bucket_index(c, s3 ? o->url.bucket : o->url.host, &o->bucket);
}

ingot_status_t ingot_objstore_object_make(ingot_objstore_t *client, const ingot_location_t *url,
                                          int list, ingot_objstore_object_t **object_p)
{
    ingot_objstore_object_t *o = calloc(1, sizeof(*o));
    ingot_status_t status;

    if (client == NULL || o == NULL) {
        free(o);
        return ingot_fail(client ? INGOT_ERR_NO_MEMORY : INGOT_ERR_INVALID_PARAM,
                          "objstore: cannot make an object of '%s'", url->text);
    }
    o->client = client;
    status = list ? INGOT_OK : ingot_location_need_object(url);
    if (status == INGOT_OK) status = ingot_location_copy(url, &o->url);
    if (status == INGOT_OK) status = object_build(client, o, list);
    if (status != INGOT_OK) {
        ingot_objstore_object_destroy(o);
        return status;
    }
    *object_p = o;
    return INGOT_OK;
}

ingot_status_t ingot_objstore_object_create(ingot_objstore_t *client, const char *url,
                                            ingot_objstore_object_t **object_p)
{
    ingot_location_t loc;
    INGOT_CHECK(ingot_location_parse(url, INGOT_LOCATION_URL | INGOT_LOCATION_OBJECT, &loc));
    ingot_status_t status = ingot_objstore_object_at(client, &loc, object_p);
    ingot_location_release(&loc);
    return status;
}

ingot_status_t ingot_objstore_object_at(ingot_objstore_t *client, const ingot_location_t *url,
                                        ingot_objstore_object_t **object_p)
{
    if (url == NULL || !ingot_location_is_remote(url)) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "objstore: '%s' is not a URL",
                          url != NULL ? url->text : "(null)");
    }
    return ingot_objstore_object_make(client, url, 0, object_p);
}

void ingot_objstore_object_destroy(ingot_objstore_object_t *object)
{
    if (object == NULL) return;
    ingot_location_release(&object->url);
    free(object->request_url);
    free(object->endpoint);
    free(object);
}

const char *ingot_objstore_object_url(const ingot_objstore_object_t *object)
{
    return object->request_url;
}

/* Control bytes of a key printed as '?': a message stays one line. */
static void printable(const char *in, char *out, size_t len)
{
    size_t n = 0;
    for (; *in != '\0' && n + 1 < len; in++) {
        out[n++] = ((unsigned char)*in < 0x20 || *in == 0x7f) ? '?' : *in;
    }
    out[n] = '\0';
}

const char *ingot_objstore_object_describe(const ingot_objstore_object_t *o, char *buf, size_t len)
{
    char key[INGOT_LOCATION_KEY_MAX + 1];
    printable(o->url.key, key, sizeof(key));
    if (o->url.scheme == INGOT_LOCATION_S3) {
        snprintf(buf, len, "bucket '%s', key '%s' at %s", o->url.bucket, key, o->endpoint);
    } else {
        snprintf(buf, len, "%s%s", o->endpoint, key);
    }
    return buf;
}

void ingot_objstore_req_describe(const ingot_objstore_req_t *req, char *buf, size_t len)
{
    char obj[INGOT_OBJSTORE_DESCRIBE_MAX], size[32];
    ingot_objstore_object_describe(req->object, obj, sizeof(obj));
    if (req->priv.query != NULL) {
        char prefix[INGOT_LOCATION_KEY_MAX + 1];
        printable(req->object->url.key, prefix, sizeof(prefix));
        snprintf(buf, len, "LIST bucket '%s', prefix '%s' at %s", req->object->url.bucket, prefix,
                 req->object->endpoint);
    } else if (req->priv.put != NULL) {
        snprintf(buf, len, "PUT %s (%zu bytes)", obj, req->priv.put_size);
    } else if (req->priv.whole) {
        snprintf(buf, len, "GET %s (whole object)", obj);
    } else {
        if (req->object_size == INGOT_OBJSTORE_SIZE_UNKNOWN) {
            snprintf(size, sizeof(size), "?");
        } else {
            snprintf(size, sizeof(size), "%" PRIu64, req->object_size);
        }
        snprintf(buf, len, "GET %s, bytes %" PRIu64 "-%" PRIu64 " of %s", obj, req->offset,
                 req->offset + req->length - 1, size);
    }
}

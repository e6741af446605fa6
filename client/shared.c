/*
 * The process-wide clients (objstore.h, ingot_objstore_shared): one per endpoint, region and
 * credentials' identity, made at first use and kept until the process exits, for the calls that
 * have no client of their own (the tools' manifests, ingot-manifest build, ingot-info -s).
 */
#include "client/objstore_impl.h"
#include "base/log.h"
#include "base/status.h"
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct shared_client {
    struct shared_client *next;
    char *key; /* what the client is: endpoint, addressing, region, credentials (never a secret) */
    ingot_objstore_t *client;
} shared_client_t;

static pthread_mutex_t shared_lock = PTHREAD_MUTEX_INITIALIZER;
static shared_client_t *shared_clients;
static int shared_atexit_set;

static void shared_free(void)
{
    pthread_mutex_lock(&shared_lock);
    while (shared_clients != NULL) {
        shared_client_t *s = shared_clients;
        shared_clients = s->next;
        ingot_objstore_destroy(s->client);
        free(s->key);
        free(s);
    }
    pthread_mutex_unlock(&shared_lock);
}

/* What a client for @p loc would be (*key_p, malloc'd), and its identity written into @p loc:
 * an s3 URL's endpoint, addressing, region and credentials resolved as the client would resolve
 * them (the metadata service named, not asked); an http(s) URL's own scheme and host, unsigned. */
static ingot_status_t shared_key(ingot_location_t *loc, char **key_p)
{
    char endpoint[256];
    int n;
    if (loc->scheme != INGOT_LOCATION_S3) {
        snprintf(endpoint, sizeof(endpoint), "%s://%s", ingot_location_scheme_name(loc->scheme),
                 loc->host);
        INGOT_CHECK(ingot_location_identify(loc, endpoint, "", "none"));
        n = asprintf(key_p, "%s\n\nnone", endpoint);
        return n < 0 ? ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory") : INGOT_OK;
    }
    ingot_objstore_settings_t s;
    INGOT_CHECK(ingot_objstore_settings_identify(&s));
    snprintf(endpoint, sizeof(endpoint), "%.80s (%.160s)",
             s.endpoint.base ? s.endpoint.base : "AWS S3", s.endpoint_source);
    ingot_status_t st = ingot_location_identify(loc, endpoint, s.region, s.credential_source);
    /* the key id tells two principals of one source apart (never shown: the source is) */
    n = asprintf(key_p, "%s\n%d\n%s\n%s\n%s", s.endpoint.base ? s.endpoint.base : "",
                 s.endpoint.path_style, s.region, s.credential_source,
                 s.creds.access_key ? s.creds.access_key : "");
    ingot_objstore_settings_release(&s);
    if (st == INGOT_OK && n < 0) st = ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
    return st;
}

/* The client of @p key, made for @p loc when there is none yet (called under the lock). */
static ingot_status_t shared_find(ingot_location_t *loc, char *key, ingot_objstore_t **client_p)
{
    shared_client_t *s;
    for (s = shared_clients; s != NULL && strcmp(s->key, key) != 0; s = s->next) {
    }
    if (s != NULL) {
        free(key);
        *client_p = s->client;
        return INGOT_OK;
    }
    if ((s = calloc(1, sizeof(*s))) == NULL) {
        free(key);
        return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
    }
    ingot_objstore_params_t p = {.field_mask = INGOT_OBJSTORE_PARAM_LOCATION, .location = loc};
    ingot_status_t st = ingot_objstore_create(&p, &s->client);
    if (st != INGOT_OK) {
        free(key);
        free(s);
        return st;
    }
    if (!shared_atexit_set) {
        shared_atexit_set = atexit(shared_free) == 0;
    }
    s->key = key;
    s->next = shared_clients;
    shared_clients = s;
    *client_p = s->client;
    return INGOT_OK;
}

ingot_status_t ingot_objstore_shared(ingot_location_t *loc, ingot_objstore_t **client_p)
{
    char *key = NULL;
    if (loc == NULL || !ingot_location_is_remote(loc)) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "objstore: '%s' is not a URL",
                          loc != NULL && loc->text != NULL ? loc->text : "(null)");
    }
    INGOT_CHECK(shared_key(loc, &key));
    pthread_mutex_lock(&shared_lock);
    ingot_status_t st = shared_find(loc, key, client_p);
    pthread_mutex_unlock(&shared_lock);
    return st;
}

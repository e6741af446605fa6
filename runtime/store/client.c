/*
 * The process-wide object-store clients of the tool calls (store.h): one signing client for
 * s3:// URLs and one plain client for http(s):// URLs, each made at its first use and kept until
 * the process exits; the whole-object GET and PUT over them; URL helpers.
 */
#include "runtime/store/store.h"
#include "base/base_config.h"
#include "base/log.h"
#include "base/status.h"
#include "base/time.h"
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t store_lock = PTHREAD_MUTEX_INITIALIZER;
static ingot_objstore_t *store_clients[2]; /* [0] plain http(s), [1] signing s3 */
static int store_atexit_set;

int ingot_store_is_url(const char *path)
{
    return path != NULL && (strncmp(path, "s3://", 5) == 0 || strncmp(path, "http://", 7) == 0 ||
                            strncmp(path, "https://", 8) == 0);
}

static void store_clients_free(void)
{
    pthread_mutex_lock(&store_lock);
    for (int i = 0; i < 2; i++) {
        ingot_objstore_destroy(store_clients[i]);
        store_clients[i] = NULL;
    }
    pthread_mutex_unlock(&store_lock);
}

ingot_status_t ingot_store_client(const char *url, ingot_objstore_t **client_p)
{
    int s3 = strncmp(url, "s3://", 5) == 0;
    ingot_status_t st = INGOT_OK;
    pthread_mutex_lock(&store_lock);
    if (store_clients[s3] == NULL) {
        ingot_objstore_params_t p = {.field_mask = INGOT_OBJSTORE_PARAM_URL, .url = url};
        st = ingot_objstore_create(&p, &store_clients[s3]);
        if (st == INGOT_OK && !store_atexit_set) {
            store_atexit_set = atexit(store_clients_free) == 0;
        }
    }
    *client_p = store_clients[s3];
    pthread_mutex_unlock(&store_lock);
    return st;
}

uint64_t ingot_store_deadline(void)
{
    const ingot_base_config_t *cfg;
    uint64_t timeout = ingot_base_config(&cfg) == INGOT_OK ? cfg->timeout_ns
                                                           : 300ull * INGOT_NSEC_PER_SEC;
    return ingot_time_ns() + timeout;
}

ingot_status_t ingot_store_fetch(const char *url, uint64_t max_size, void **data_p, size_t *size_p,
                                 char *etag)
{
    ingot_objstore_t *c;
    ingot_objstore_object_t *o;
    INGOT_CHECK(ingot_store_client(url, &c));
    INGOT_CHECK(ingot_objstore_object_create(c, url, &o));
    ingot_status_t st = ingot_objstore_get(c, o, max_size, ingot_store_deadline(), data_p, size_p,
                                           etag);
    ingot_objstore_object_destroy(o);
    return st;
}

ingot_status_t ingot_store_put(const char *url, const void *data, size_t size)
{
    ingot_objstore_t *c;
    ingot_objstore_object_t *o;
    INGOT_CHECK(ingot_store_client(url, &c));
    INGOT_CHECK(ingot_objstore_object_create(c, url, &o));
    ingot_status_t st = ingot_objstore_put(c, o, data, size, ingot_store_deadline(), NULL);
    ingot_objstore_object_destroy(o);
    return st;
}

char *ingot_store_url_dir(const char *url)
{
    const char *slash = strrchr(url, '/');
    const char *scheme_end = strstr(url, "://");
    if (slash == NULL || scheme_end == NULL || slash < scheme_end + 3) {
        return NULL;
    }
    return strndup(url, (size_t)(slash - url));
}

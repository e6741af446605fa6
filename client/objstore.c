/*
 * A client's life: create (settings resolved on the calling thread, so their errors are the
 * caller's; the multi handle, its transfer slots, the I/O thread), destroy (the thread stopped,
 * every outstanding request cancelled), and what it tells about itself (identity, counters).
 */
#include "client/objstore_impl.h"
#include "base/log.h"
#include "base/param.h"
#include "base/status.h"
#include "base/time.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t curl_once = PTHREAD_ONCE_INIT;
static CURLcode curl_init_rc = CURLE_OK;

static void curl_init_once(void)
{
    curl_init_rc = curl_global_init(CURL_GLOBAL_DEFAULT);
}

/* s3 clients: resolve endpoint, region and credentials. */
static ingot_status_t client_settings(ingot_objstore_t *c, const ingot_objstore_params_t *params)
{
    const char *url = INGOT_PARAM_VALUE(params, url, INGOT_OBJSTORE_PARAM_URL, NULL);
    const ingot_location_t *loc = INGOT_PARAM_VALUE(params, location, INGOT_OBJSTORE_PARAM_LOCATION,
                                                    NULL);
    ingot_location_t parsed = {0};
    if (loc == NULL && url != NULL) {
        INGOT_CHECK(ingot_location_parse(url, INGOT_LOCATION_URL, &parsed));
        loc = &parsed;
    }
    int s3 = loc != NULL && loc->scheme == INGOT_LOCATION_S3;
    ingot_location_release(&parsed);
    if (!s3) return INGOT_OK;
    INGOT_CHECK(ingot_objstore_settings_resolve(c->cfg.imds_timeout_ns, &c->settings));
    c->signing = 1;
    snprintf(c->sigv4, sizeof(c->sigv4), "aws:amz:%s:s3", c->settings.region);
    ingot_info("objstore: endpoint %s (%s), region %s (%s), credentials: %s",
               c->settings.endpoint.base ? c->settings.endpoint.base : "AWS",
               c->settings.endpoint_source, c->settings.region, c->settings.region_source,
               c->settings.credential_source);
    return INGOT_OK;
}

static ingot_status_t client_transfers(ingot_objstore_t *c)
{
    long conns = (long)c->cfg.connections;
    c->multi = curl_multi_init();
    /* hedges get slots and connections of their own: one must not wait behind the transfer it
     * hedges, nor for the bucket's AIMD window */
    c->hedge_slots = c->cfg.hedge > 0 ? (size_t)conns / 4 + 1 : 0;
    c->nslots = (size_t)conns + c->hedge_slots;
    conns = (long)c->nslots;
    c->slots = calloc(c->nslots, sizeof(*c->slots));
    c->free_slots = calloc(c->nslots, sizeof(ingot_objstore_slot_t *));
    if (c->multi == NULL || c->slots == NULL || c->free_slots == NULL) {
        return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory for %ld transfers", conns);
    }
    curl_multi_setopt(c->multi, CURLMOPT_MAX_HOST_CONNECTIONS, conns);
    curl_multi_setopt(c->multi, CURLMOPT_MAXCONNECTS, conns);
    curl_multi_setopt(c->multi, CURLMOPT_PIPELINING, (long)CURLPIPE_NOTHING);
    for (size_t i = 0; i < c->nslots; i++) {
        if (ingot_objstore_slot_init(c, &c->slots[i]) != INGOT_OK) {
            return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: curl_easy_init failed");
        }
        c->free_slots[c->nfree++] = &c->slots[i];
    }
    return INGOT_OK;
}

static ingot_status_t client_config(ingot_objstore_t *c, const ingot_objstore_params_t *params)
{
    const ingot_objstore_config_t *cfg = INGOT_PARAM_VALUE(params, config,
                                                           INGOT_OBJSTORE_PARAM_CONFIG, NULL);
    if (cfg == NULL) INGOT_CHECK(ingot_objstore_config(&cfg));
    c->cfg = *cfg;
    return INGOT_OK;
}

static ingot_status_t client_start(ingot_objstore_t *c, const ingot_objstore_params_t *params)
{
    pthread_once(&curl_once, curl_init_once);
    if (curl_init_rc != CURLE_OK) {
        return ingot_fail(INGOT_ERR_IO, "objstore: curl_global_init: %s",
                          curl_easy_strerror(curl_init_rc));
    }
    INGOT_CHECK(client_config(c, params));
    INGOT_CHECK(client_settings(c, params));
    INGOT_CHECK(client_transfers(c));
    ingot_objstore_budget_init(&c->budget, c->cfg.retry_budget);
    ingot_objstore_hedge_init(&c->hedge, (uint32_t)c->cfg.hedge, c->cfg.hedge_floor_ns,
                              c->cfg.hedge_ceiling_ns);
    c->rng = ingot_time_ns() ^ ((uint64_t)getpid() << 32);
    int rc = pthread_create(&c->thread, NULL, ingot_objstore_io_main, c);
    if (rc != 0) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE, "objstore: cannot start the I/O thread: %s",
                          strerror(rc));
    }
    c->thread_started = 1;
    return INGOT_OK;
}

ingot_status_t ingot_objstore_create(const ingot_objstore_params_t *params,
                                     ingot_objstore_t **client_p)
{
    ingot_objstore_t *c = calloc(1, sizeof(*c));
    if (c == NULL) return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
    pthread_mutex_init(&c->lock, NULL);
    pthread_mutex_init(&c->settings_lock, NULL);
    pthread_mutex_init(&c->buckets_lock, NULL);
    ingot_status_t status = client_start(c, params);
    if (status != INGOT_OK) {
        ingot_objstore_destroy(c);
        return status;
    }
    *client_p = c;
    return INGOT_OK;
}

static void cancel_one(ingot_objstore_t *c, ingot_objstore_req_t *r)
{
    snprintf(r->message, sizeof(r->message), "objstore: the client was destroyed");
    ingot_objstore_req_complete(c, r, INGOT_ERR_CANCELED);
}

/* Cancel what the stopped I/O thread left: transfers, pending requests, the queue. */
static void client_cancel_all(ingot_objstore_t *c)
{
    for (size_t i = 0; i < c->nslots; i++) {
        ingot_objstore_req_t *r = c->slots[i].req;
        if (r == NULL) continue;
        curl_multi_remove_handle(c->multi, c->slots[i].easy);
        c->slots[i].req = NULL;
        if (--r->priv.active == 0) cancel_one(c, r); /* a hedged one holds several slots */
    }
    ingot_objstore_reqlist_t *lists[] = {&c->pending, &c->queue};
    for (size_t k = 0; k < 2; k++) {
        while (lists[k]->head != NULL) {
            ingot_objstore_req_t *r = lists[k]->head;
            ingot_objstore_reqlist_remove(lists[k], r);
            cancel_one(c, r);
        }
    }
}

void ingot_objstore_destroy(ingot_objstore_t *c)
{
    if (c == NULL) return;
    pthread_mutex_lock(&c->lock);
    c->destroying = 1;
    pthread_mutex_unlock(&c->lock);
    if (c->thread_started) {
        atomic_store(&c->stop, 1);
        curl_multi_wakeup(c->multi);
        pthread_join(c->thread, NULL);
    }
    client_cancel_all(c);
    for (size_t i = 0; c->slots != NULL && i < c->nslots; i++) {
        ingot_objstore_slot_fini(&c->slots[i]);
    }
    if (c->multi != NULL) curl_multi_cleanup(c->multi);
    free(c->slots);
    free(c->free_slots);
    ingot_objstore_settings_release(&c->settings);
    pthread_mutex_destroy(&c->lock);
    pthread_mutex_destroy(&c->settings_lock);
    pthread_mutex_destroy(&c->buckets_lock);
    free(c);
}

void ingot_objstore_identity(const ingot_objstore_t *client, ingot_objstore_identity_t *id)
{
    ingot_objstore_t *c = (ingot_objstore_t *)client;
    memset(id, 0, sizeof(*id));
    if (!c->signing) {
        snprintf(id->endpoint, sizeof(id->endpoint), "the URLs' own hosts (unsigned http(s))");
        snprintf(id->credential_source, sizeof(id->credential_source), "none");
        return;
    }
    pthread_mutex_lock(&c->settings_lock);
    snprintf(id->endpoint, sizeof(id->endpoint), "%.80s (%.160s)",
             c->settings.endpoint.base ? c->settings.endpoint.base : "AWS S3",
             c->settings.endpoint_source);
    snprintf(id->region, sizeof(id->region), "%s", c->settings.region);
    snprintf(id->region_source, sizeof(id->region_source), "%s", c->settings.region_source);
    snprintf(id->credential_source, sizeof(id->credential_source), "%s",
             c->settings.credential_source);
    pthread_mutex_unlock(&c->settings_lock);
}

const char *ingot_objstore_describe(const ingot_objstore_t *client, char *buf, size_t len)
{
    ingot_objstore_identity_t id;
    ingot_objstore_identity(client, &id);
    if (id.region[0] == '\0') {
        snprintf(buf, len, "objstore(unsigned http(s))");
    } else {
        snprintf(buf, len, "objstore(endpoint %s, region %s from %s, credentials %s)", id.endpoint,
                 id.region, id.region_source, id.credential_source);
    }
    return buf;
}

void ingot_objstore_stats(const ingot_objstore_t *client, ingot_objstore_stats_t *stats_p)
{
    ingot_objstore_counters_snapshot(&client->counters, stats_p);
}

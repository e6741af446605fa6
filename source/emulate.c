/* The emulated remote store (see emulate.h): a link model in front of an inner source. */
#include "source/emulate.h"
#include "base/config.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct emu_entry {
    ingot_source_req_t *req; /* NULL: free */
    uint64_t ready_ns;
} emu_entry_t;

typedef struct emu_source {
    ingot_source_t base;
    ingot_source_t *inner;
    ingot_source_emulation_t emu;
    pthread_mutex_t lock;
    uint64_t link_free_ns; /* when the link finishes its last transfer */
    uint32_t cap;
    emu_entry_t *entries; /* requests waiting on the link */
} emu_source_t;

/* When a request of @p len bytes submitted now is ready: after the link's earlier transfers,
 * its own transfer, and the latency. Called under the lock. */
static uint64_t emu_ready_time(emu_source_t *e, uint64_t len)
{
    uint64_t now = ingot_time_ns();
    uint64_t start = (e->link_free_ns > now) ? e->link_free_ns : now;
    uint64_t transfer = e->emu.bandwidth
                            ? (uint64_t)((long double)len * INGOT_NSEC_PER_SEC / e->emu.bandwidth)
                            : 0;
    e->link_free_ns = start + transfer;
    return e->link_free_ns + e->emu.latency_ns;
}

static ingot_status_t emu_submit(ingot_source_t *src, ingot_source_req_t *req)
{
    emu_source_t *e = (emu_source_t *)src;
    pthread_mutex_lock(&e->lock);
    for (uint32_t i = 0; i < e->cap; i++) {
        if (e->entries[i].req == NULL) {
            e->entries[i] = (emu_entry_t){.req = req, .ready_ns = emu_ready_time(e, req->length)};
            pthread_mutex_unlock(&e->lock);
            return INGOT_OK;
        }
    }
    pthread_mutex_unlock(&e->lock);
    return ingot_fail(INGOT_ERR_NO_RESOURCE, "emulated store: more than %u requests in flight",
                      e->cap);
}

/* Take the earliest request ready by @p now off the link, or say when the next one is ready. */
static ingot_source_req_t *emu_take_ready(emu_source_t *e, uint64_t now, uint64_t *next_p)
{
    uint64_t next = UINT64_MAX;
    emu_entry_t *best = NULL;
    for (uint32_t i = 0; i < e->cap; i++) {
        emu_entry_t *x = &e->entries[i];
        if (x->req != NULL && x->ready_ns < next) {
            next = x->ready_ns;
            best = x;
        }
    }
    *next_p = next;
    if (best == NULL || best->ready_ns > now) {
        return NULL;
    }
    ingot_source_req_t *req = best->req;
    best->req = NULL;
    return req;
}

/* Hand a ready request to the inner source (which completes it, or refuses it). */
static void emu_forward(emu_source_t *e, ingot_source_req_t *req)
{
    ingot_status_t st = e->inner->ops->submit(e->inner, req);
    if (st != INGOT_OK) {
        ingot_source_complete(req, st);
    }
}

static unsigned emu_progress(ingot_source_t *src, uint64_t until_ns)
{
    emu_source_t *e = (emu_source_t *)src;
    unsigned done = e->inner->ops->progress(e->inner, ingot_time_ns());
    uint64_t next;
    pthread_mutex_lock(&e->lock);
    ingot_source_req_t *req = emu_take_ready(e, ingot_time_ns(), &next);
    pthread_mutex_unlock(&e->lock);
    if (req == NULL && next != UINT64_MAX) {
        uint64_t wake = next < until_ns ? next : until_ns;
        struct timespec ts = {.tv_sec = (time_t)(wake / INGOT_NSEC_PER_SEC),
                              .tv_nsec = (long)(wake % INGOT_NSEC_PER_SEC)};
        while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
        }
        return done + 1; /* waited on the link: call again */
    }
    if (req != NULL) {
        emu_forward(e, req);
        done++;
    }
    return done;
}

static ingot_status_t emu_cancel(ingot_source_t *src, ingot_source_req_t *req)
{
    emu_source_t *e = (emu_source_t *)src;
    pthread_mutex_lock(&e->lock);
    for (uint32_t i = 0; i < e->cap; i++) {
        if (e->entries[i].req == req) {
            e->entries[i].req = NULL; /* still on the link: nothing was written */
            pthread_mutex_unlock(&e->lock);
            return INGOT_OK;
        }
    }
    pthread_mutex_unlock(&e->lock);
    return e->inner->ops->cancel(e->inner, req);
}

static const char *emu_describe(const ingot_source_t *src, uint32_t shard, char *buf, size_t len)
{
    const emu_source_t *e = (const emu_source_t *)src;
    char inner[INGOT_SOURCE_DESCRIBE_MAX];
    snprintf(buf, len, "emulated(bw=%.6gMiB/s,lat=%.6gms) over %s",
             (double)e->emu.bandwidth / (1024.0 * 1024.0),
             (double)e->emu.latency_ns / (double)INGOT_NSEC_PER_MSEC,
             ingot_source_describe(e->inner, shard, inner, sizeof(inner)));
    return buf;
}

static void emu_destroy(ingot_source_t *src)
{
    emu_source_t *e = (emu_source_t *)src;
    for (uint32_t i = 0; e->entries != NULL && i < e->cap; i++) {
        if (e->entries[i].req != NULL) {
            ingot_source_complete(e->entries[i].req, INGOT_ERR_CANCELED);
        }
    }
    ingot_source_destroy(e->inner);
    pthread_mutex_destroy(&e->lock);
    free(e->entries);
    free(e);
}

static const ingot_source_ops_t emu_ops = {.submit = emu_submit,
                                           .progress = emu_progress,
                                           .cancel = emu_cancel,
                                           .describe = emu_describe,
                                           .destroy = emu_destroy};

ingot_status_t ingot_source_emulate_create(const ingot_source_emulation_t *emu,
                                           ingot_source_t *inner, uint32_t max_inflight,
                                           ingot_source_t **src_p)
{
    emu_source_t *e = ingot_calloc(1, sizeof(*e), "emulated store");
    uint32_t cap = max_inflight ? max_inflight : 1;
    if (e == NULL ||
        (e->entries = ingot_calloc(cap, sizeof(*e->entries), "emulated link")) == NULL) {
        free(e);
        ingot_source_destroy(inner);
        return INGOT_ERR_NO_MEMORY;
    }
    e->base.ops = &emu_ops;
    e->inner = inner;
    e->emu = *emu;
    e->cap = cap;
    pthread_mutex_init(&e->lock, NULL);
    *src_p = &e->base;
    return INGOT_OK;
}

int ingot_source_emulation_active(const ingot_source_emulation_t *emu)
{
    return emu != NULL && (emu->bandwidth != 0 || emu->latency_ns != 0);
}

static const ingot_config_field_t emu_bw_field = {
    "STORAGE_EMULATE bw", "0", "", 0, INGOT_CONFIG_SIZE, 0, 0, 0, NULL, NULL, NULL, NULL};
static const ingot_config_field_t emu_lat_field = {
    "STORAGE_EMULATE lat", "0", "", 0, INGOT_CONFIG_DURATION, 0, 0, 0, NULL, NULL, NULL, NULL};

/* One "key=value" of an emulation spec into @p emu; 0, or -1 with the reason in @p err. */
static int emu_parse_part(char *tok, ingot_source_emulation_t *emu, char *err, size_t errlen)
{
    char *eq = strchr(tok, '='), why[384];
    if (eq == NULL) {
        snprintf(err, errlen, "'%s' is not key=value (keys: bw, lat)", tok);
        return -1;
    }
    *eq = '\0';
    const char *val = eq + 1;
    if (strcmp(tok, "bw") == 0) {
        size_t n = strlen(val);
        if (n < 2 || strcmp(val + n - 2, "/s") != 0) {
            snprintf(err, errlen, "bw='%s' needs a rate such as 200MiB/s", val);
            return -1;
        }
        char num[128];
        snprintf(num, sizeof(num), "%.*s", (int)(n - 2), val);
        if (ingot_config_parse(&emu_bw_field, num, &emu->bandwidth, why, sizeof(why)) != 0 ||
            emu->bandwidth == 0) {
            snprintf(err, errlen, "bw='%s' is not a positive size per second, e.g. 200MiB/s", val);
            return -1;
        }
    } else if (strcmp(tok, "lat") == 0) {
        if (ingot_config_parse(&emu_lat_field, val, &emu->latency_ns, why, sizeof(why)) != 0) {
            snprintf(err, errlen, "lat='%s' is not a duration such as 5ms", val);
            return -1;
        }
    } else {
        snprintf(err, errlen, "unknown key '%s' (keys: bw, lat)", tok);
        return -1;
    }
    return 0;
}

int ingot_source_emulation_parse(const char *spec, ingot_source_emulation_t *emu, char *err,
                                 size_t errlen)
{
    char buf[256];
    memset(emu, 0, sizeof(*emu));
    if (strcmp(spec, "none") == 0) {
        return 0;
    }
    if (strlen(spec) >= sizeof(buf)) {
        snprintf(err, errlen, "longer than %zu characters", sizeof(buf) - 1);
        return -1;
    }
    strcpy(buf, spec);
    char *save = NULL;
    int parts = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), parts++) {
        if (emu_parse_part(tok, emu, err, errlen) != 0) {
            return -1;
        }
    }
    if (parts == 0) {
        snprintf(err, errlen, "empty specification");
        return -1;
    }
    return 0;
}

static int emulation_parse(const char *str, void *value, char *err, size_t errlen)
{
    return ingot_source_emulation_parse(str, value, err, errlen);
}

static void emulation_format(const void *value, char *buf, size_t len)
{
    const ingot_source_emulation_t *emu = value;
    char bw[64] = "", lat[64] = "";
    if (!ingot_source_emulation_active(emu)) {
        snprintf(buf, len, "none");
        return;
    }
    if (emu->bandwidth != 0) {
        ingot_config_format(&emu_bw_field, &emu->bandwidth, bw, sizeof(bw));
    }
    if (emu->latency_ns != 0) {
        ingot_config_format(&emu_lat_field, &emu->latency_ns, lat, sizeof(lat));
    }
    snprintf(buf, len, "%s%s%s%s%s", bw[0] ? "bw=" : "", bw, bw[0] ? "/s" : "",
             bw[0] && lat[0] ? "," : "", lat[0] ? "lat=" : "");
    size_t n = strlen(buf);
    snprintf(buf + n, len > n ? len - n : 0, "%s", lat);
}

const ingot_config_codec_t ingot_source_emulation_codec = {
    .parse = emulation_parse,
    .format = emulation_format,
    .syntax = "none, or bw=RATE,lat=DURATION (e.g. bw=200MiB/s,lat=5ms)",
    .size = sizeof(ingot_source_emulation_t)};

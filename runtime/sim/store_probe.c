/*
 * The object store a manifest lives in, measured with the client a loader uses
 * (include/ingot/sim.h: ingot_sim_calibrate_store): a GET's latency, one GET's bandwidth and the
 * store's with 16 in flight, over the manifest's first shard. No MPI.
 */
#include "runtime/sim/sim_impl.h"
#include "client/objstore.h"
#include "client/objstore_config.h"
#include "base/base_config.h"
#include "base/location.h"
#include "base/log.h"
#include "base/status.h"
#include "base/time.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#define PROBE_SMALL   4096u
#define PROBE_LATENCY 16           /* small GETs one after another */
#define PROBE_STREAMS 4            /* part GETs one after another */
#define PROBE_WIDE    16           /* part GETs at once */
#define PROBE_SAMPLE  (128u << 10) /* a sample's GET, many at once: the store's GET rate */
#define PROBE_ROUNDS  8

typedef struct probe {
    ingot_objstore_t *client;
    ingot_objstore_object_t *object;
    uint64_t size;
    const char *etag;
    uint8_t *buf;
    uint64_t deadline_ns;
} probe_t;

/* @p n GETs of @p len bytes at once from offset 0, spread over the shard; their seconds. */
static ingot_status_t probe_gets(probe_t *pr, uint32_t n, uint64_t len, double *s_p)
{
    ingot_objstore_req_t reqs[PROBE_WIDE];
    struct iovec iov[PROBE_WIDE];
    uint64_t t0 = ingot_time_ns();
    for (uint32_t i = 0; i < n; i++) {
        uint64_t off = pr->size > len ? (uint64_t)i * len % (pr->size - len + 1) : 0;
        iov[i] = (struct iovec){.iov_base = pr->buf + (size_t)i * len, .iov_len = len};
        reqs[i] = (ingot_objstore_req_t){.object = pr->object,
                                         .offset = off,
                                         .length = len,
                                         .object_size = pr->size,
                                         .etag = pr->etag,
                                         .iov = &iov[i],
                                         .iovcnt = 1,
                                         .deadline_ns = pr->deadline_ns};
    }
    INGOT_CHECK(ingot_objstore_read_many(pr->client, reqs, n));
    *s_p = (double)(ingot_time_ns() - t0) / 1e9;
    return INGOT_OK;
}

static ingot_status_t probe_run(probe_t *pr, uint64_t part, ingot_sim_costs_t *c)
{
    double small = 0, s;
    for (int i = 0; i < PROBE_LATENCY; i++) {
        INGOT_CHECK(probe_gets(pr, 1, PROBE_SMALL, &s));
        small += s;
    }
    c->get_s = small / PROBE_LATENCY;
    double stream = 0;
    for (int i = 0; i < PROBE_STREAMS; i++) {
        INGOT_CHECK(probe_gets(pr, 1, part, &s));
        stream += s;
    }
    double body = stream / PROBE_STREAMS - c->get_s;
    c->get_bps = body > 0 ? (double)part / body : 0;
    INGOT_CHECK(probe_gets(pr, PROBE_WIDE, part, &s));
    c->store_bps = s > 0 ? (double)part * PROBE_WIDE / s : 0;
    uint64_t sample = PROBE_SAMPLE < pr->size ? PROBE_SAMPLE : pr->size;
    double many = 0;
    for (int i = 0; i < PROBE_ROUNDS; i++) {
        INGOT_CHECK(probe_gets(pr, PROBE_WIDE, sample, &s));
        many += s;
    }
    c->get_rate = many > 0 ? PROBE_WIDE * PROBE_ROUNDS / many : 0;
    ingot_info("ingot-sim: the store: a GET's latency %.2f ms, one GET %.1f MiB/s, %d at once "
               "%.1f MiB/s (parts of %" PRIu64 " bytes), %.0f GET/s of 128 KiB",
               c->get_s * 1e3, c->get_bps / 1048576, PROBE_WIDE, c->store_bps / 1048576, part,
               c->get_rate);
    return INGOT_OK;
}

ingot_status_t ingot_sim_calibrate_store(const char *url, ingot_sim_costs_t *c)
{
    ingot_manifest_h m;
    INGOT_CHECK(ingot_manifest_open(url, INGOT_MANIFEST_OPEN_LAZY, &m));
    const ingot_objstore_config_t *oc;
    ingot_shard_info_t si = {0};
    char shard[4096];
    ingot_location_t loc = {0};
    probe_t pr = {0};
    ingot_status_t st = ingot_objstore_config(&oc);
    st = st == INGOT_OK ? ingot_manifest_shard_get(m, 0, &si) : st;
    st = st == INGOT_OK ? ingot_manifest_shard_path(m, 0, shard, sizeof(shard)) : st;
    if (st == INGOT_OK && si.size < PROBE_SMALL) {
        st = ingot_fail(INGOT_ERR_INVALID_PARAM,
                        "%s: shard 0 (%" PRIu64 " bytes) is too small "
                        "to measure the store with",
                        url, si.size);
    }
    uint64_t part = st != INGOT_OK ? 0 : oc->part_size < si.size ? oc->part_size : si.size;
    st = st == INGOT_OK ? ingot_location_parse(shard, INGOT_LOCATION_URL, &loc) : st;
    st = st == INGOT_OK ? ingot_objstore_shared(&loc, &pr.client) : st;
    st = st == INGOT_OK ? ingot_objstore_object_at(pr.client, &loc, &pr.object) : st;
    if (st == INGOT_OK) {
        pr.size = si.size;
        pr.etag = ingot_manifest_shard_etag(m, 0);
        const ingot_base_config_t *bc;
        st = ingot_base_config(&bc);
        pr.deadline_ns = ingot_time_ns() +
                         (st == INGOT_OK ? bc->timeout_ns : 0); /* INGOT_TIMEOUT */
        pr.buf = st == INGOT_OK ? malloc((size_t)part * PROBE_WIDE) : NULL;
        st = st != INGOT_OK ? st : pr.buf != NULL ? probe_run(&pr, part, c) : INGOT_ERR_NO_MEMORY;
    }
    free(pr.buf);
    ingot_objstore_object_destroy(pr.object);
    ingot_location_release(&loc);
    ingot_manifest_close(m);
    return st;
}

/*
 * ingot.Loader's stats(): ingot_loader_stats as a dict (counts, stall, stages, memory, the
 * object store's requests under "store", the disk tier's counters), with the bytes by source (and
 * the object store's GETs) per epoch and summed.
 */
#include "pyingot.h"

#include <stdlib.h>
#include <string.h>

static int put_u64(PyObject *d, const char *key, uint64_t v)
{
    PyObject *o = PyLong_FromUnsignedLongLong(v);
    int rc = o ? PyDict_SetItemString(d, key, o) : -1;
    Py_XDECREF(o);
    return rc;
}

static int put_double(PyObject *d, const char *key, double v)
{
    PyObject *o = PyFloat_FromDouble(v);
    int rc = o ? PyDict_SetItemString(d, key, o) : -1;
    Py_XDECREF(o);
    return rc;
}

#define STATS_U64(s) \
    { \
#        s, offsetof(ingot_loader_stats_t, s) \
    }

static const struct {
    const char *name;
    size_t offset;
} stats_u64[] = {
    STATS_U64(steps),
    STATS_U64(samples),
    STATS_U64(bytes),
    STATS_U64(bytes_read),
    STATS_U64(read_requests),
    STATS_U64(skipped),
    STATS_U64(wall_ns),
    STATS_U64(stall_ns),
    STATS_U64(stall_first_ns),
    STATS_U64(stall_p50_ns),
    STATS_U64(stall_p99_ns),
    STATS_U64(read_p50_ns),
    STATS_U64(read_p99_ns),
    STATS_U64(verify_p50_ns),
    STATS_U64(verify_p99_ns),
    STATS_U64(decode_p50_ns),
    STATS_U64(decode_p99_ns),
    STATS_U64(transform_p50_ns),
    STATS_U64(transform_p99_ns),
    STATS_U64(h2d_p50_ns),
    STATS_U64(h2d_p99_ns),
    STATS_U64(memory_host),
    STATS_U64(memory_device),
    STATS_U64(memory_pinned),
    STATS_U64(minor_faults),
    STATS_U64(disk_hits), /* the node's disk tier (INGOT_DISK_CACHE_BYTES) */
    STATS_U64(disk_remote_hits),
    STATS_U64(disk_misses),
    STATS_U64(disk_bytes),
    STATS_U64(disk_bytes_below),
    STATS_U64(disk_admitted),
    STATS_U64(disk_refused),
    STATS_U64(disk_evictions),
    STATS_U64(disk_prefetched),
    STATS_U64(disk_prefetch_bytes),
    STATS_U64(disk_bad_entries),
    STATS_U64(disk_fill_errors),
    STATS_U64(disk_damaged_fills),
    STATS_U64(reread_storage),
    STATS_U64(reread_peer),
    STATS_U64(reread_disk),
    STATS_U64(reread_at_rest),
    STATS_U64(store_hedges),
    STATS_U64(store_hedge_wins),
    STATS_U64(bytes_hashed_landing), /* where the bytes were hashed (verify on) */
};

#define STORE_U64(s) \
    { \
#        s, offsetof(ingot_loader_stats_t, store_##s) \
    }

static const struct {
    const char *name;
    size_t offset;
} store_u64[] = {STORE_U64(requests),        STORE_U64(failed),           STORE_U64(attempts),
                 STORE_U64(bytes),           STORE_U64(retries_throttle), STORE_U64(retries_server),
                 STORE_U64(retries_network), STORE_U64(retries_stall),    STORE_U64(retries_auth),
                 STORE_U64(throttle_events), STORE_U64(get_p50_ns),       STORE_U64(get_p99_ns),
                 STORE_U64(part_hits)};

/* "store": the object store's requests (zeros when the manifest is a local file). */
static int put_store(const ingot_loader_stats_t *s, PyObject *d)
{
    PyObject *store = PyDict_New();
    int rc = store ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < sizeof(store_u64) / sizeof(store_u64[0]); i++) {
        uint64_t v;
        memcpy(&v, (const char *)s + store_u64[i].offset, sizeof(v));
        rc = put_u64(store, store_u64[i].name, v);
    }
    if (rc == 0) {
        rc = put_double(store, "gets_per_sample", s->store_gets_per_sample);
    }
    if (rc == 0) {
        rc = PyDict_SetItemString(d, "store", store);
    }
    Py_XDECREF(store);
    return rc;
}

/* One epoch's row: bytes by source (the disk tier's included) and the object store's GETs for it. */
static PyObject *epoch_row(pyingot_loader_t *l, uint64_t e, const ingot_loader_epoch_bytes_t *b)
{
    ingot_loader_store_stats_t ss = {.field_mask = INGOT_LOADER_STORE_STATS_FIELD_COUNTS |
                                                   INGOT_LOADER_STORE_STATS_FIELD_NODE};
    if (ingot_loader_epoch_store(l->h, e, &ss) != INGOT_OK) {
        memset(&ss, 0, sizeof(ss)); /* a local manifest: no object store */
    }
    uint64_t retries = ss.retries_throttle + ss.retries_server + ss.retries_network +
                       ss.retries_stall + ss.retries_auth;
    double amplification = ss.node_needed ? (double)ss.node_bytes / (double)ss.node_needed : 0;
    return Py_BuildValue(
        "{s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:K,s:d,s:K,s:K,s:K,s:d}", "epoch", (unsigned long long)e,
        "bytes_storage", (unsigned long long)b->bytes_storage, "bytes_peer",
        (unsigned long long)b->bytes_peer, "bytes_local", (unsigned long long)b->bytes_local,
        "bytes_disk", (unsigned long long)b->bytes_disk, "store_requests",
        (unsigned long long)ss.requests, "store_bytes", (unsigned long long)ss.bytes,
        "store_retries", (unsigned long long)retries, "store_gets_per_sample", ss.gets_per_sample,
        "store_node_requests", (unsigned long long)ss.node_requests, "store_node_bytes",
        (unsigned long long)ss.node_bytes, "store_node_needed", (unsigned long long)ss.node_needed,
        "amplification", amplification);
}

/* "epochs": where each epoch's record bytes came from (storage, a peer's cache window, this
 * rank's own, the node's disk tier), and "bytes_by_source", their sums over the epochs. */
static int put_epoch_bytes(pyingot_loader_t *l, PyObject *d)
{
    PyObject *list = PyList_New(0);
    uint64_t sum[4] = {0, 0, 0, 0};
    int rc = list ? 0 : -1;
    for (uint64_t e = l->first_epoch; rc == 0 && e < l->params.epochs; e++) {
        ingot_loader_epoch_bytes_t b;
        ingot_status_t st = ingot_loader_epoch_bytes(l->h, e, &b);
        if (st != INGOT_OK) {
            pyingot_raise(st, NULL);
            rc = -1;
            break;
        }
        sum[0] += b.bytes_storage;
        sum[1] += b.bytes_peer;
        sum[2] += b.bytes_local;
        sum[3] += b.bytes_disk;
        PyObject *row = epoch_row(l, e, &b);
        rc = row ? PyList_Append(list, row) : -1;
        Py_XDECREF(row);
    }
    PyObject *by = rc == 0
                       ? Py_BuildValue("{s:K,s:K,s:K,s:K}", "storage", (unsigned long long)sum[0],
                                       "peer", (unsigned long long)sum[1], "local",
                                       (unsigned long long)sum[2], "disk",
                                       (unsigned long long)sum[3])
                       : NULL;
    if (by == NULL || PyDict_SetItemString(d, "epochs", list) != 0 ||
        PyDict_SetItemString(d, "bytes_by_source", by) != 0) {
        rc = -1;
    }
    Py_XDECREF(by);
    Py_XDECREF(list);
    return rc;
}

PyObject *pyingot_loader_stats(pyingot_loader_t *l, PyObject *noargs)
{
    if (pyingot_loader_check(l) != 0) {
        return NULL;
    }
    ingot_loader_stats_t s = {
        .field_mask = INGOT_LOADER_STATS_FIELD_COUNTS | INGOT_LOADER_STATS_FIELD_STALL |
                      INGOT_LOADER_STATS_FIELD_STAGES | INGOT_LOADER_STATS_FIELD_QUEUES |
                      INGOT_LOADER_STATS_FIELD_MEMORY | INGOT_LOADER_STATS_FIELD_THREADS |
                      INGOT_LOADER_STATS_FIELD_STORE | INGOT_LOADER_STATS_FIELD_DISK |
                      INGOT_LOADER_STATS_FIELD_REREAD | INGOT_LOADER_STATS_FIELD_HEDGE |
                      INGOT_LOADER_STATS_FIELD_VERIFY};
    ingot_status_t st = ingot_loader_stats(l->h, &s);
    if (st != INGOT_OK) {
        return pyingot_raise(st, NULL);
    }
    PyObject *d = PyDict_New();
    int rc = d ? 0 : -1;
    for (size_t i = 0; rc == 0 && i < sizeof(stats_u64) / sizeof(stats_u64[0]); i++) {
        uint64_t v;
        memcpy(&v, (const char *)&s + stats_u64[i].offset, sizeof(v));
        rc = put_u64(d, stats_u64[i].name, v);
    }
    if (rc == 0) {
        rc = put_double(d, "read_queue_avg", s.read_queue_avg) ||
             put_double(d, "ready_slots_avg", s.ready_slots_avg) ||
             put_u64(d, "readers", s.readers) || put_u64(d, "workers", s.workers) ||
             put_u64(d, "depth", s.depth);
    }
    if (rc == 0) {
        rc = put_store(&s, d);
    }
    if (rc == 0) {
        rc = put_epoch_bytes(l, d);
    }
    if (rc != 0) {
        Py_XDECREF(d);
        return NULL;
    }
    return d;
}

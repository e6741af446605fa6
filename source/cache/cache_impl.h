/*
 * Peer cache internals shared by cache.c (budget, placement, window, fill) and cache_source.c
 * (the byte source reading cached samples from their homes).
 */
#ifndef INGOT_SOURCE_CACHE_IMPL_H
#define INGOT_SOURCE_CACHE_IMPL_H

#include "source/cache/cache.h"
#include "transport/transport.h"
#include "base/config.h"
#include <stdatomic.h>

/* INGOT_CACHE_BYTES, INGOT_PEER_FAILURE and INGOT_CACHE_MEMORY. */
/* INGOT_CACHE_MEMORY values. */
typedef enum { INGOT_CACHE_MEMORY_HOST = 0, INGOT_CACHE_MEMORY_DEVICE = 1 } ingot_cache_memory_t;

/* INGOT_CACHE_FETCH values. */
typedef enum {
    INGOT_CACHE_FETCH_AUTO = 0,
    INGOT_CACHE_FETCH_HOST = 1,
    INGOT_CACHE_FETCH_DEVICE = 2
} ingot_cache_fetch_t;

typedef struct ingot_cache_config {
    char *cache_bytes; /* "SIZE" (the job) or "SIZE/node"; ingot_cache_budget_parse() */
    ingot_peer_failure_t peer_failure;
    ingot_cache_memory_t memory;
    ingot_cache_fetch_t fetch;
} ingot_cache_config_t;

extern ingot_config_table_t ingot_cache_config_table;
/* INGOT_PEER_FAILURE's values by ingot_peer_failure_t. */
extern const char *const ingot_peer_failure_names[];
ingot_status_t ingot_cache_config(const ingot_cache_config_t **cfg_p);

/* INGOT_CACHE_BYTES parsed: a budget of the whole job, or of each node. */
typedef struct ingot_cache_budget {
    uint64_t bytes;
    bool per_node;
} ingot_cache_budget_t;
/* INGOT_OK, or INGOT_ERR_INVALID_PARAM (nothing logged: the table's check names it). */
ingot_status_t ingot_cache_budget_parse(const char *spec, ingot_cache_budget_t *budget_p);

enum { HOME_UNKNOWN = 0, HOME_READY = 1, HOME_FAILED = 2 };

/* One request of the cache source in flight. */
typedef struct cache_req {
    ingot_transport_op_t op; /* op.arg: this */
    struct ingot_cache *cache;
    ingot_source_req_t *req;
    int home;
    ingot_status_t sync_st; /* a read refused before it was sent */
    _Atomic int busy;
} cache_req_t;

struct ingot_cache {
    struct ingot_cache_table table; /* first: ingot_cache_entry() reads it */
    ingot_source_t source;
    int rank, world;
    ingot_cache_params_t params;
    ingot_peer_failure_t policy;
    ingot_transport_t *transport; /* the context's */
    ingot_transport_window_t *window;
    ingot_transport_window_t **dests; /* the loader's memory registered for put, or NULL */
    uint32_t ndests;
    ingot_cache_budget_t budget;
    uint64_t window_bytes;  /* this rank's */
    uint64_t *windows;      /* every rank's window size (they differ with a budget per node) */
    int *node_of;           /* every rank's node id */
    uint64_t dataset_bytes; /* every sample's record, summed */
    uint64_t needed;        /* the budget (of its kind) that would hold every sample */
    int device;             /* GPU of the window (INGOT_CACHE_MEMORY=device), or -1 */
    int fetch_device;       /* GPU that fetched bytes land in, or -1 (host memory) */
    char fetch_why[320];    /* where they land and why */
    uint64_t cached_samples, cached_bytes, fill_expected;
    _Atomic uint64_t filled;
    _Atomic int *home_state; /* per rank: HOME_* */
    cache_req_t *reqs;
    uint32_t nreqs;
    _Atomic uint64_t hash_fallbacks, peer_fallbacks, peers_failed;
    int leaked; /* a read still landing at destroy: its memory stays allocated */
};

void ingot_cache_free(ingot_cache_t *c);
/* cache_source.c */
ingot_status_t ingot_cache_source_init(ingot_cache_t *c);
/* Take back every request still in flight (their callbacks run); 0 when one is still landing
 * after a second (then c->leaked: the cache's memory must not be freed). */
int ingot_cache_source_fini(ingot_cache_t *c);

#endif

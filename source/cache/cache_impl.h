/*
 * Peer cache internals shared by cache.c (budget, window, fill), place.c (the placement),
 * cache_source.c (the byte source reading cached samples from their homes) and tier.c (the
 * cache as a tier).
 */
#ifndef INGOT_SOURCE_CACHE_IMPL_H
#define INGOT_SOURCE_CACHE_IMPL_H

#include "source/cache/cache.h"
#include "transport/transport.h"
#include <stdatomic.h>

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

typedef struct ingot_cache {
    ingot_tier_t tier; /* first: the cache is a tier */
    ingot_source_t source;
    int rank, world;
    ingot_tier_plan_t plan;
    const ingot_cache_config_t *cfg;
    uint64_t fill_epoch, fill_step; /* the first step this job delivers */
    uint64_t batch_stored;          /* stored bytes of one batch of this rank, at most */
    ingot_peer_failure_t policy;
    ingot_transport_t *transport; /* the job's */
    ingot_transport_window_t *window;
    ingot_transport_window_t **dests; /* the loader's memory registered for put, or NULL */
    uint32_t ndests;
    uint64_t window_bytes; /* this rank's */
    uint64_t *windows;     /* every rank's window size (they differ with a budget per node) */
    int *node_of;          /* every rank's node id */
    ingot_tier_facts_t facts;
    ingot_cache_placement_t place;
    int device;          /* GPU of the window (INGOT_CACHE_MEMORY=device), or -1 */
    int fetch_device;    /* GPU that fetched bytes land in, or -1 (host memory) */
    char fetch_why[320]; /* where they land and why */
    _Atomic uint64_t filled;
    _Atomic int *home_state; /* per rank: HOME_* */
    cache_req_t *reqs;
    uint32_t nreqs;
    _Atomic uint64_t hash_fallbacks, peer_fallbacks, peers_failed;
    int leaked; /* a read still landing at destroy: its memory stays allocated */
} ingot_cache_t;

/* Where sample @p index is cached (home -1: not cached). */
static inline ingot_cache_entry_t ingot_cache_entry(const ingot_cache_t *c, uint64_t index)
{
    if (index >= c->place.count) {
        return (ingot_cache_entry_t){.home = -1};
    }
    return c->place.entries[index];
}

/* cache.c */
ingot_status_t ingot_cache_create(const ingot_tier_plan_t *plan, ingot_cache_t **cache_p);
/* Take back every peer read still in flight and unregister the put destinations
 * (non-collective): before the memory those reads land in is freed. Accepts NULL. */
void ingot_cache_quiesce(ingot_cache_t *c);
/* Free the cache (collective: a barrier first, so no peer still reads this window). */
void ingot_cache_destroy(ingot_cache_t *c);
void ingot_cache_free(ingot_cache_t *c);
/* Keep a verified sample in this rank's window if it is its home (see ingot_tier_ops_t.fill). */
void ingot_cache_fill(ingot_cache_t *c, const ingot_shard_rows_t *rows, const void *stored,
                      int packed);
/* Log and count sample @p s whose bytes from @p home failed the hash. */
void ingot_cache_report_corrupt(ingot_cache_t *c, const ingot_sample_info_t *s, int home);
/* The counters, where fetched bytes land, the data path to every rank; returns @p buf. */
const char *ingot_cache_paths(ingot_cache_t *c, char *buf, size_t len);

/* cache_source.c */
ingot_status_t ingot_cache_source_init(ingot_cache_t *c);
/* Take back every request still in flight (their callbacks run); 0 when one is still landing
 * after a second (then c->leaked: the cache's memory must not be freed). */
int ingot_cache_source_fini(ingot_cache_t *c);

#endif

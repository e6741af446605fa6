/*
 * The object-store byte source's insides (objstore_source.h), shared by source.c (the source's
 * life, its requests, direct GETs, cancel) and parts.c (the part cache). One mutex guards the
 * request pool, every request's counters and the part cache; bytes are copied outside it.
 */
#ifndef INGOT_SOURCE_OBJSTORE_SOURCE_IMPL_H
#define INGOT_SOURCE_OBJSTORE_SOURCE_IMPL_H

#include "source/objstore/objstore_source.h"
#include "client/stats.h"
#include "base/mem.h"
#include <pthread.h>

/** Direct GETs one request is cut into at most (pieces of at least INGOT_S3_PART_SIZE). */
#define OS_PIECES_MAX 8
/** Parts one request may wait for; a longer request goes direct (it gains nothing from them). */
#define OS_WAITS_MAX 4
/** The request's deadline is moved this far past its GETs' (source.h: the source's verdict,
 *  naming the endpoint and the retries made, comes before the waiter's own timeout). */
#define OS_VERDICT_GRACE_NS (2ull * 1000000000ull)
/** The longest part: INGOT_S3_PART_SIZE and an eighth (parts.c: no sliver of a part). */
#define OS_PART_ROOM(_part_size) ((_part_size) + (_part_size) / 8)
/** Room for a shard's URL. */
#define OS_URL_MAX 8192

typedef struct os_source os_source_t;
typedef struct os_req os_req_t;
typedef struct os_part os_part_t;
typedef struct ingot_objsrc_node ingot_objsrc_node_t;

/** A request waiting for a part (in the part's waiters while attached). */
typedef struct os_wait {
    os_req_t *owner;
    os_part_t *part; /* NULL once served or detached */
    struct os_wait *next;
    int finish; /* its part failed and nothing else is left of its request */
} os_wait_t;

/** One direct GET of a request. */
typedef struct os_piece {
    ingot_objstore_req_t get;
    os_req_t *owner;
    uint64_t landed; /* (I/O thread) its bytes in place from its start, as the client reported */
} os_piece_t;

/** A source request's state, from the pool made at create. Fields marked (lock) are the
 *  source's lock's. */
struct os_req {
    os_source_t *src;
    ingot_source_req_t *req; /* the caller's, while in use */
    os_req_t *next_free;     /* (lock) */
    int direct;              /* 1: pieces; 0: parts */
    uint32_t left;           /* (lock) pieces or parts not yet in place */
    uint32_t copying;        /* (lock) copies out of parts running for it */
    uint32_t ended;          /* (lock) direct GETs whose completion came */
    int cancelled;           /* (lock) */
    ingot_status_t status;   /* (lock) the first failure */
    uint32_t npieces, nwaits;
    uint64_t piece_len; /* direct: bytes of each piece but the last */
    uint32_t whole;     /* (I/O thread) direct: pieces in place from the first on */
    uint64_t reported;  /* (I/O thread) direct: the prefix last reported to the caller */
    os_piece_t pieces[OS_PIECES_MAX];
    os_wait_t waits[OS_WAITS_MAX];
    struct iovec *iov; /* the pieces' iovecs: iov_max + OS_PIECES_MAX entries */
};

enum { OS_PART_FREE, OS_PART_FETCHING, OS_PART_READY };

/** A part of a shard, cached: [offset, offset + length) of shard @p shard. */
struct os_part {
    os_source_t *src;
    uint32_t shard;
    uint64_t index, offset, length;
    int state;          /* (lock) OS_PART_* */
    uint32_t pins;      /* (lock) copies out of it running */
    os_wait_t *waiters; /* (lock) while FETCHING */
    char *buf;          /* INGOT_S3_PART_SIZE bytes of the arena */
    struct iovec iov;
    ingot_objstore_req_t get;
    os_part_t *prev, *next; /* (lock) the LRU list (READY, unpinned) or the free list */
    os_part_t *hnext;       /* (lock) hash chain */
};

struct os_source {
    ingot_source_t base;
    ingot_objstore_t *client;
    ingot_manifest_h manifest;
    uint32_t nshards;
    ingot_objstore_object_t **objects;
    uint64_t *sizes;    /* per shard, as recorded */
    const char **etags; /* per shard (in the manifest), or NULL */
    uint64_t *part_len; /* per shard: its parts' length (the last may be shorter) */
    uint64_t part_size; /* INGOT_S3_PART_SIZE */
    uint64_t slot_room; /* a part cache slot: the longest part of any shard (a shard smaller
                           than a part takes a slot of its own size, not a part's) */
    char bucket[256];   /* the bucket, or the http(s) host */
    pthread_mutex_t lock;
    os_req_t *reqs, *free_reqs; /* (lock) */
    uint32_t nreqs, iov_max;
    struct iovec *iov_pool;
    /* the part cache (nparts == 0: none) */
    ingot_mem_t arena;
    os_part_t *parts;
    uint32_t nparts;
    os_part_t **hash; /* (lock) */
    uint32_t hash_mask;
    os_part_t lru;        /* (lock) sentinel: least recently used after it */
    os_part_t *free;      /* (lock) singly linked through next */
    uint32_t nfree, nlru; /* (lock) */
    uint64_t *shard_seq;  /* (lock) per shard: when it was last read */
    uint64_t seq;         /* (lock) */
    _Atomic uint64_t part_hits, part_fetches, part_bypass;
    /* GETs by epoch of the request that made them */
    ingot_objstore_counters_t *tallies;
    uint64_t first_epoch, nepochs;
    ingot_objsrc_node_t *node; /* the part cache the node's ranks share (node_parts.c), or NULL */
};

/* source.c */
/** The request's end: status and message into the caller's request, @p r back to the pool,
 *  the caller's completion. Called once, by the thread that brought left to 0 (not holding the
 *  lock). */
void ingot_objsrc_finish(os_source_t *s, os_req_t *r);
/** Note a failure of one of @p r's GETs (lock held): the first one is the request's. */
void ingot_objsrc_note_failure(os_req_t *r, ingot_status_t status, const char *message);
/** The counters of @p epoch's GETs, or NULL. */
ingot_objstore_counters_t *ingot_objsrc_tally(os_source_t *s, uint64_t epoch);
/** Copy @p len bytes of @p from into @p r's iovecs at byte @p at of the request. */
void ingot_objsrc_copy_in(const ingot_source_req_t *req, uint64_t at, const char *from,
                          uint64_t len);

/* parts.c */
/** Make the part cache of @p bytes (rounded down to whole parts). */
ingot_status_t ingot_objsrc_parts_create(os_source_t *s, uint64_t bytes, int numa_node);
void ingot_objsrc_parts_destroy(os_source_t *s);
/**
 * Serve @p r from parts: those cached are copied now, the others fetched (one GET each, shared
 * by every request that needs them). Returns 0 when @p r went this way, -1 when it must go
 * direct (no part cache, a range over OS_WAITS_MAX parts, no part free to fetch into).
 */
int ingot_objsrc_parts_submit(os_source_t *s, os_req_t *r, uint64_t deadline_ns);
/** Cancel a request served from parts (lock held): INGOT_OK when nothing more comes for it. */
ingot_status_t ingot_objsrc_parts_cancel(os_source_t *s, os_req_t *r);

/* node_parts.c */
/** Make the part cache of @p bytes the node's ranks share (collective over plan->node's ranks,
 *  agreed). */
ingot_status_t ingot_objsrc_node_create(os_source_t *s, const ingot_tier_plan_t *plan,
                                        uint64_t bytes, ingot_objsrc_node_t **node_p);
/** End it (collective over the node). Accepts NULL. */
void ingot_objsrc_node_destroy(ingot_objsrc_node_t *n);
/**
 * Serve @p r from the node's parts in the calling thread (waiting for another rank's fetch, or
 * fetching a part itself): 0 when @p r went this way (completed), -1 when it must go direct (no
 * node cache, a range over OS_WAITS_MAX parts, no room).
 */
int ingot_objsrc_node_submit(os_source_t *s, os_req_t *r, uint64_t deadline_ns);
/** This rank planned global step @p step (the node's ranks pace each other by it). NULL: none. */
void ingot_objsrc_node_advance(ingot_objsrc_node_t *n, uint64_t step);
/** Parts the node's cache holds (0: none). */
uint32_t ingot_objsrc_node_parts(const ingot_objsrc_node_t *n);
/** The node's figures for @p epoch: GETs, bytes fetched, bytes of samples read: 0, or -1. */
int ingot_objsrc_node_epoch(const ingot_objsrc_node_t *n, uint64_t epoch, uint64_t *gets_p,
                            uint64_t *bytes_p, uint64_t *needed_p);

#endif

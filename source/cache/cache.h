/*
 * The peer cache (cache.c, cache_source.c): every rank's registered window of INGOT_CACHE_BYTES /
 * world bytes, which sample lives in which window, the fill, and the byte source that reads
 * cached samples from their home straight into the loader's destination.
 *
 * Placement, computed by every rank alike without asking anyone: a sample's home is the rank that
 * reads it in the first epoch this job delivers (the fill epoch; from the resume step on when
 * the job resumes mid-epoch), so the fill reads nothing from storage twice and moves no byte
 * between ranks: each rank copies what it just read and verified into its own window. A home
 * caches its samples in the order it reads them until its window is full (a deterministic
 * prefix: what is read soonest is kept; the rest always comes from storage). Within a home's
 * window the records (the shard bytes from a sample's first field to the end of its last) lie
 * back to back in that order, so samples one rank read in one step are adjacent there.
 *
 * Readiness: a home marks its window ready once it has filled (or skipped as corrupt) every
 * sample it caches; a reader checks that word once per home (one 8-byte read; its own fill
 * count for this rank's window, whose last fill steps may still be in flight when the next
 * epoch's reads start) before its first fetch from it, waiting up to INGOT_TIMEOUT for a home
 * still in its fill epoch.
 */
#ifndef INGOT_SOURCE_CACHE_H
#define INGOT_SOURCE_CACHE_H

#include <ingot/ingot.h>
#include <ingot/order.h>
#include <ingot/shard.h>
#include "source/source.h"
#include "transport/transport.h"
#include "topology/topo.h"
#include <mpi.h>
#include "shard/codec.h"
#include <stdint.h>

/** INGOT_PEER_FAILURE values. */
typedef enum ingot_peer_failure {
    INGOT_PEER_FAILURE_ABORT = 0,  /**< end the job, naming the rank */
    INGOT_PEER_FAILURE_STORAGE = 1 /**< read that peer's samples from storage from then on */
} ingot_peer_failure_t;

typedef struct ingot_cache ingot_cache_t;

/** Where a sample is cached: its home rank (-1: not cached) and its offset in the home's window. */
typedef struct ingot_cache_entry {
    int32_t home;
    uint32_t length; /* the record's bytes */
    uint64_t offset;
} ingot_cache_entry_t;

/** Memory a peer may write fetched bytes into (INGOT_PEER_PROTOCOL=put). */
typedef struct ingot_cache_dest {
    void *ptr;
    size_t bytes;
} ingot_cache_dest_t;

typedef struct ingot_cache_params {
    MPI_Comm comm;                 /* the job's ranks (the transport's) */
    const ingot_node_info_t *node; /* this rank's node (budgets per node, messages) */
    ingot_transport_t *transport;  /* the job's transport, created by the caller */
    uint64_t timeout_ns;           /* INGOT_TIMEOUT: the bound of collective waits (destroy) */
    ingot_manifest_h manifest;
    ingot_order_h order;
    uint64_t fill_epoch, fill_step; /* the first step this job delivers */
    uint64_t steps_per_epoch;
    uint32_t slice;        /* samples per rank per step */
    uint64_t batch_stored; /* stored bytes of one batch of this rank, at most */
    int numa;              /* NUMA node of the window, or -1 */
    int cuda_device;       /* the placement's GPU, or -1 (for INGOT_CACHE_MEMORY=device) */
    uint32_t nreqs;        /* byte-source requests in flight at once */
    /* every destination of the loader's reads (staging, slots, scratch), registered for put;
     * the same count on every rank */
    const ingot_cache_dest_t *dests;
    uint32_t ndests;
    /* where fetched bytes could land: the loader's GPU (it delivers device batches), or -1; and
     * why they must stay in host memory even so (e.g. hashed on the host), or NULL */
    int gpu_slots;
    const char *gpu_host_only;
    /* raised when a peer misses INGOT_PEER_TIMEOUT under INGOT_PEER_FAILURE=abort, so that
     * other waits on that peer (the trainer's reductions) end too; may be NULL */
    ingot_abort_t *peer_lost;
} ingot_cache_params_t;

/** Whether INGOT_CACHE_BYTES asks for a cache (non-zero). */
int ingot_cache_enabled(void);

/**
 * Create the cache of a loader (collective over the context's communicator): checks the budget
 * (a window smaller than one batch, windows of one node over its MemAvailable: errors naming
 * both sizes), computes the placement, creates the context's transport at first use, allocates,
 * registers and exchanges the window. Every rank returns the same status.
 */
ingot_status_t ingot_cache_create(const ingot_cache_params_t *params, ingot_cache_t **cache_p);
/** Take back every peer read still in flight and unregister the put destinations
 *  (non-collective): call it before the memory those reads land in is freed. Accepts NULL. */
void ingot_cache_quiesce(ingot_cache_t *cache);
/** Free the cache (collective: a barrier first, so no peer still reads this window). Accepts NULL. */
void ingot_cache_destroy(ingot_cache_t *cache);

/** Where sample @p index is cached (home -1: not cached). */
static inline ingot_cache_entry_t ingot_cache_entry(const ingot_cache_t *cache, uint64_t index);

/** The first epoch this job delivers (the one that fills the windows). */
uint64_t ingot_cache_fill_epoch(const ingot_cache_t *cache);

/**
 * Fill epoch: keep sample @p rows (verified bytes at @p stored, in the shard's layout, or fields
 * back to back when @p packed) in this rank's window if it is its home; @p stored NULL: the sample
 * was skipped (corrupt), counted all the same. Thread-safe; marks the window ready after the
 * last one.
 */
void ingot_cache_fill(ingot_cache_t *cache, const ingot_shard_rows_t *rows, const void *stored,
                      int packed);

/**
 * The GPU whose memory a GPU loader should fetch peers' bytes into (its batch slot), or -1:
 * host memory. Decided at create by a calibration (ingot_transport_calibrate_gpu) where the
 * loader can take device bytes and UCX has CUDA memory; ingot_cache_paths() says why.
 */
int ingot_cache_fetch_device(const ingot_cache_t *cache);

/** The byte source of cached samples (owned by the cache). Its requests carry extents, all of
 *  one home (see ingot_source_req_t.extents); it answers "retry elsewhere" for a home that
 *  failed under INGOT_PEER_FAILURE=storage. */
ingot_source_t *ingot_cache_source(ingot_cache_t *cache);

/** Log and count sample @p s whose bytes from @p home failed the hash (read again from storage). */
void ingot_cache_report_corrupt(ingot_cache_t *cache, const ingot_sample_info_t *s, int home);
/**
 * The cache's counters (window, samples cached, hash fallbacks, reads sent to storage, homes
 * given up), where fetched bytes land, and the data path to every rank, one line each. Returns
 * @p buf.
 */
const char *ingot_cache_paths(ingot_cache_t *cache, char *buf, size_t len);

/* ---- inline */
struct ingot_cache_table {
    const ingot_cache_entry_t *entries;
    uint64_t count;
};
static inline ingot_cache_entry_t ingot_cache_entry(const ingot_cache_t *cache, uint64_t index)
{
    const struct ingot_cache_table *t = (const struct ingot_cache_table *)cache;
    if (index >= t->count) {
        return (ingot_cache_entry_t){.home = -1};
    }
    return t->entries[index];
}

#endif

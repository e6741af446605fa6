/*
 * The contract of a tier: what sits between the loader and the bytes of a dataset (storage at the
 * bottom, the caches above it) and how it plugs in. The loader builds one job plan and hands it
 * to the chain (tiers.h), which asks every kind of tier it knows whether the configuration wants
 * it and creates those that are wanted, bottom up; from then on the loader talks to the chain
 * only, and no file of the loader names a tier.
 *
 * A tier is one of two shapes, or both:
 *   - it decorates storage: its create takes the chain below (*below_p) and replaces it with its
 *     own byte source, which serves shard byte ranges and reads what it lacks from below (the
 *     node's disk tier; the object store, which is the bottom, decorates nothing);
 *   - it is read by location: at plan time it tells where a sample's bytes are (locate: a group,
 *     such as a home rank, and a key ordering the samples of a group), the loader groups a step's
 *     runs by it and sends each run to the tier's own source as a request naming its samples
 *     (extents), falling back to the chain below sample by sample when it answers "retry
 *     elsewhere" (the peer cache).
 * Either shape may fill from the bytes the loader verified (fill), follow the loader's clock
 * (advance: the global step the loader planned), report and count.
 *
 * A tier's planning (homes, admission, eviction, the order it prefetches in, sizing) takes facts
 * (ingot_tier_facts_t and plain numbers), not a communicator: the collective parts gather the
 * facts, then call the same functions that a simulator of a thousand nodes calls in one process.
 *
 * Thread safety: create, check and destroy on the loader's creating thread (collective); locate
 * on the planner; advance on the planner; fill, corrupt and the source's ops on the loader's
 * readers and workers at once; stats and report from any thread.
 */
#ifndef INGOT_SOURCE_TIER_H
#define INGOT_SOURCE_TIER_H

#include <ingot/loader.h>
#include <ingot/order.h>
#include <ingot/shard.h>
#include "base/location.h"
#include "shard/codec.h"
#include "source/source.h"
#include "topology/topo.h"
#include "transport/transport.h"
#include <mpi.h>
#include <stdint.h>

/** Where a sample's bytes came from, as the loader counts them per epoch. */
typedef enum ingot_tier_from {
    INGOT_TIER_FROM_STORAGE, /**< storage (files, the emulated store, the object store) */
    INGOT_TIER_FROM_PEER,    /**< another rank's memory */
    INGOT_TIER_FROM_LOCAL,   /**< this rank's own cache memory */
    INGOT_TIER_FROM_DISK,    /**< a node's disk */
    INGOT_TIER_FROM_COUNT
} ingot_tier_from_t;

/** The kinds of tier, as the loader's reports name them (ingot_tier_chain_report()). */
typedef enum ingot_tier_kind {
    INGOT_TIER_STORAGE,  /**< files, behind the emulated store when asked */
    INGOT_TIER_OBJSTORE, /**< the object store with its part cache */
    INGOT_TIER_DISK,     /**< the node's disk */
    INGOT_TIER_PEER,     /**< the peer cache */
    INGOT_TIER_KINDS
} ingot_tier_kind_t;

/** Memory the loader's reads land in (a tier may register it, e.g. for RDMA puts). */
typedef struct ingot_tier_dest {
    void *ptr;
    size_t bytes;
} ingot_tier_dest_t;

struct ingot_cache_config;
struct ingot_disk_config;
struct ingot_objstore_config;
struct ingot_parts_config;
struct ingot_storage_config;

/** The source layer's configuration, parsed once by the INGOT_* registry and handed down (the
 *  context reads it with ingot_tier_config()); a tier reads its own part only. */
typedef struct ingot_tier_config {
    const struct ingot_storage_config *storage;
    const struct ingot_cache_config *cache;
    const struct ingot_disk_config *disk;
    const struct ingot_objstore_config *objstore;
    const struct ingot_parts_config *parts;
} ingot_tier_config_t;

/** The job plan every tier receives. Pointers outlive the chain. */
typedef struct ingot_tier_plan {
    /* the job */
    MPI_Comm comm;                 /**< the job's ranks */
    const ingot_node_info_t *node; /**< this rank's node */
    int node_pus;                  /**< the node's allowed PUs (0: not known) */
    /** The job's transport, made at its first call (collective over comm, agreed); NULL: a
     *  job without one (tests). */
    ingot_status_t (*transport)(void *arg, ingot_transport_t **t_p);
    void *transport_arg;
    uint64_t timeout_ns;            /**< INGOT_TIMEOUT */
    uint64_t peer_timeout_ns;       /**< INGOT_PEER_TIMEOUT: a peer silent this long is lost */
    int peer_abort;                 /**< INGOT_PEER_FAILURE=abort: a lost peer ends the job */
    ingot_abort_t *peer_lost;       /**< raised when a peer is declared lost (may be NULL) */
    const ingot_tier_config_t *cfg; /**< the configuration of every tier */
    /* the data and its order */
    const ingot_location_t *location; /**< where the manifest is (resolved when it was opened) */
    ingot_manifest_h manifest;
    ingot_order_h order;
    ingot_order_mode_t order_mode;
    uint32_t order_window;            /**< shards per window (locality order) */
    uint32_t order_nodes;             /**< canonical nodes it is dealt to (locality order) */
    uint64_t start_step, total_steps; /**< global steps this job delivers */
    uint64_t steps_per_epoch, global_batch;
    uint64_t first_epoch, nepochs; /**< epochs counted apart (per-epoch figures) */
    uint32_t slice;                /**< samples per rank per step */
    const uint32_t *slice_of;      /**< per rank: the slice of every step it takes (the order's
                                        rank: ranks numbered node by node under a dealt order) */
    uint32_t depth;                /**< steps planned ahead */
    /* the loader's requests and memory */
    uint32_t nreqs;                 /**< requests in flight at once */
    uint32_t iov_max;               /**< iovecs of the longest request */
    uint64_t stored_max;            /**< stored bytes of the largest sample */
    int direct_io;                  /**< INGOT_DIRECT_IO */
    int numa;                       /**< NUMA node of the loader's memory, or -1 */
    int cuda_device;                /**< the placement's GPU, or -1 */
    int gpu_slots;                  /**< the GPU batches are delivered in, or -1 (host) */
    const char *gpu_host_only;      /**< why fetched bytes must stay in host memory, or NULL */
    const ingot_tier_dest_t *dests; /**< where reads land (the same count on every rank) */
    uint32_t ndests;
} ingot_tier_plan_t;

/** Facts about the job a tier plans from, gathered once (no communicator in sight). */
typedef struct ingot_tier_facts {
    int world, rank;
    int nnodes;
    const int *node_of;     /**< per rank: its node */
    const char *node_names; /**< per node: its host name, INGOT_TOPO_HOST_MAX bytes each */
} ingot_tier_facts_t;

/** Host name of node @p n in @p facts. */
static inline const char *ingot_tier_facts_host(const ingot_tier_facts_t *facts, int n)
{
    return facts->node_names + (size_t)n * INGOT_TOPO_HOST_MAX;
}

/** Where a located sample's bytes are (ingot_tier_ops_t.locate). */
typedef struct ingot_tier_loc {
    int32_t group;  /**< one request serves samples of one group (e.g. a home rank) */
    uint8_t from;   /**< ingot_tier_from_t of its bytes */
    uint8_t device; /**< the tier reads it straight into GPU memory (the batch slot) */
    uint8_t tier;   /**< set by the chain: the tier's place in it */
    uint64_t key;   /**< order within the group (e.g. an offset in a home's window) */
} ingot_tier_loc_t;

typedef struct ingot_tier ingot_tier_t;

/** What a kind of tier implements; NULL members: not this tier's shape. */
typedef struct ingot_tier_ops {
    const char *name;
    ingot_tier_kind_t kind;
    /** Whether the configuration asks for the tier (the same answer on every rank). */
    int (*wanted)(const ingot_tier_plan_t *plan);
    /**
     * Create the tier (collective over plan->comm; every rank returns the same status). A tier
     * that decorates storage replaces *@p below_p with its source (the chain keeps ownership of
     * the sources below it); storage fills *@p below_p.
     */
    ingot_status_t (*create)(const ingot_tier_plan_t *plan, ingot_source_t **below_p,
                             ingot_tier_t **tier_p);
    /** Job-wide checks once every rank's tiers exist (collective; the same status everywhere). */
    ingot_status_t (*check)(ingot_tier_t *t, MPI_Comm comm);
    /** Read by location: its source, whose requests name their samples (extents). */
    ingot_source_t *(*source)(ingot_tier_t *t);
    /** Whether the tier locates samples of @p epoch (asked once per step). */
    int (*locates)(const ingot_tier_t *t, uint64_t epoch);
    /** Where sample @p s is: 1 with *@p loc, 0 when the tier does not hold it. */
    int (*locate)(const ingot_tier_t *t, const ingot_sample_info_t *s, ingot_tier_loc_t *loc);
    /** The loader planned global step @p step. */
    void (*advance)(ingot_tier_t *t, uint64_t step);
    /** Whether verified samples of @p epoch fill the tier (asked once per step). */
    int (*fills)(const ingot_tier_t *t, uint64_t epoch);
    /** Keep a verified sample (stored bytes at @p stored in the shard's layout, or its fields back
     *  to back when @p packed; NULL: skipped as corrupt, counted all the same). */
    void (*fill)(ingot_tier_t *t, const ingot_shard_rows_t *rows, const void *stored, int packed);
    /** A sample read from group @p group failed its hash (it is read again from below). */
    void (*corrupt)(ingot_tier_t *t, const ingot_sample_info_t *s, int32_t group);
    /** A sample read through the chain below the located tiers failed its hash (it is read
     *  again from the source itself): let go of the bytes of it that the tier holds (the disk
     *  tier's entries). 1 when it held some. */
    int (*damaged)(ingot_tier_t *t, const ingot_sample_info_t *s);
    /** The GPU the tier reads straight into (ingot_tier_loc_t.device), or -1. */
    int (*fetch_device)(const ingot_tier_t *t);
    /** Its figures into the loader's statistics (its own fields only). */
    void (*stats)(const ingot_tier_t *t, ingot_loader_stats_t *s);
    /** Epoch @p epoch's figures: INGOT_OK, INGOT_ERR_OUT_OF_RANGE (an epoch not counted). */
    ingot_status_t (*epoch_stats)(const ingot_tier_t *t, uint64_t epoch,
                                  ingot_loader_store_stats_t *s);
    /** A report for people into @p buf; returns @p buf. */
    const char *(*report)(ingot_tier_t *t, char *buf, size_t len);
    /** Take back every read that could still land in the loader's memory (not collective). */
    void (*quiesce)(ingot_tier_t *t);
    /** Free the tier (collective; what it decorates stays the chain's). */
    void (*destroy)(ingot_tier_t *t);
} ingot_tier_ops_t;

/** Every tier object begins with this. */
struct ingot_tier {
    const ingot_tier_ops_t *ops;
};

/** A tier that is storage and nothing more: the byte source at the bottom of the chain. */
typedef struct ingot_tier_storage {
    ingot_tier_t base;
    ingot_source_t *src;
} ingot_tier_storage_t;

/**
 * Create a storage tier of @p ops whose source @p make makes for @p plan (collective, agreed):
 * *@p below_p and *@p tier_p set on success; nothing left on failure.
 */
ingot_status_t ingot_tier_storage_create(const ingot_tier_plan_t *plan, const ingot_tier_ops_t *ops,
                                         ingot_status_t (*make)(const ingot_tier_plan_t *plan,
                                                                ingot_source_t **src_p),
                                         ingot_source_t **below_p, ingot_tier_t **tier_p);
/** ingot_tier_ops_t.destroy of a storage tier: its source destroyed, the tier freed. */
void ingot_tier_storage_destroy(ingot_tier_t *t);

/**
 * Gather @p k values of every rank (@p mine, k of them) into @p all (world * k, rank-major),
 * with each rank's node id first (k + 1 values a rank; @p all holds world * (k + 1)), and fill
 * @p facts from them and plan->node (facts->node_of points into @p node_of, world entries the
 * caller owns). Collective over plan->comm, agreed.
 */
ingot_status_t ingot_tier_gather(const ingot_tier_plan_t *plan, const uint64_t *mine, uint32_t k,
                                 uint64_t *all, int *node_of, ingot_tier_facts_t *facts);

/** The source layer's configuration (every tier's table, parsed once): the context's call. */
ingot_status_t ingot_tier_config(ingot_tier_config_t *cfg_p);

#endif

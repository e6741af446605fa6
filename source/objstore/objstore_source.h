/*
 * The object-store byte source: the shards of a manifest that lives in a bucket (s3://) or on
 * an HTTP(S) server, read with ranged GETs through one object-store client (objstore.h) behind
 * the asynchronous byte-source interface (source/source.h).
 *
 * A request (a shard byte range into host iovecs) becomes either
 *   - direct GETs: the range itself, in pieces of at most INGOT_S3_PART_SIZE in flight at once,
 *     whose bytes curl's buffer copies once into the caller's iovecs (the global order: its
 *     samples are scattered, and a part would bring mostly bytes nobody asked for); or
 *   - parts (a part cache of INGOT_S3_CACHE bytes, under the locality order): the shard is cut
 *     into parts of at most INGOT_S3_PART_SIZE; a part is fetched with one GET the first time a
 *     request needs it and kept, so the samples a window of shards holds are served by one GET
 *     per part over the many steps that read them. The bytes are copied twice (curl's buffer to
 *     the part, the part to the caller's iovecs): the price of a GET serving many steps.
 * Every GET carries the shard's ETag from the manifest (If-Match) and its size (the 206's
 * Content-Range total), so an object replaced or truncated since the manifest was built is
 * named (412 or a size mismatch), never mixed in; the loader still hashes every sample.
 * Device-memory iovecs are answered "retry elsewhere" (INGOT_ERR_UNSUPPORTED). A request the
 * client holds cannot be taken back: cancel answers INGOT_ERR_BUSY (the caller quarantines it).
 * A request's failure message (endpoint, bucket, key, range, HTTP status, S3 code, retries)
 * reaches its waiter through ingot_source_req_t.error.
 *
 * Thread safety: as every source (source.h). Completions run on the client's I/O thread.
 */
#ifndef INGOT_SOURCE_OBJSTORE_SOURCE_H
#define INGOT_SOURCE_OBJSTORE_SOURCE_H

#include <ingot/shard.h>
#include <ingot/store.h>
#include "client/objstore.h"
#include "source/source.h"
#include "source/tier.h"
#include "base/config.h"
#include <mpi.h>

/** INGOT_S3_CACHE parsed (parts_config.c). */
typedef struct ingot_parts_budget {
    int is_auto;    /**< "auto": sized for the order */
    uint64_t bytes; /**< a size ("off": 0) */
    bool per_node;  /**< "SIZE/node": the part cache the node's ranks share */
    char given[48]; /**< as the user wrote it (messages quote it so) */
} ingot_parts_budget_t;

/** The part cache's INGOT_* table. */
typedef struct ingot_parts_config {
    ingot_parts_budget_t budget;
} ingot_parts_config_t;

extern ingot_config_table_t ingot_parts_config_table;
ingot_status_t ingot_parts_config(const ingot_parts_config_t **cfg_p);

/** How a manifest's shards cut into parts of INGOT_S3_PART_SIZE (a part cache's slots). */
typedef struct ingot_objsrc_shape {
    uint64_t slot;       /**< a slot's room: the longest part of any shard */
    uint64_t largest;    /**< the largest shard's bytes */
    uint32_t parts_max;  /**< the most parts of one shard */
    double samples_mean; /**< samples per shard, on average */
} ingot_objsrc_shape_t;

/** The length of the parts a shard of @p size bytes is cut into: equal parts of at most
 *  @p part_size and an eighth. Pure (a simulator cuts them alike). */
uint64_t ingot_objsrc_part_len(uint64_t size, uint64_t part_size);

/** The shape of @p manifest's shards in parts of @p part_size: INGOT_OK, or the manifest's error. */
ingot_status_t ingot_objsrc_shape(ingot_manifest_h manifest, uint64_t part_size,
                                  ingot_objsrc_shape_t *shape_p);

/**
 * INGOT_S3_CACHE for the job of @p plan, in *@p bytes_p (0: none), *@p node_p whether the node's
 * ranks share it, and the shards' shape in *@p sh: "auto" under the locality order, the parts
 * each canonical node the node reads has in flight, at most 2GiB per canonical node but never
 * less than one window's parts. Reads @p plan's manifest, cfg, order and batch fields, depth and
 * node->node_count only: a simulator calls it with a plan of its own.
 */
ingot_status_t ingot_objsrc_cache_bytes(const ingot_tier_plan_t *plan, ingot_objsrc_shape_t *sh,
                                        uint64_t *bytes_p, int *node_p);

/** Parameters of ingot_source_objstore_create(). */
typedef struct ingot_source_objstore_params {
    ingot_manifest_h manifest; /**< shards: URLs beside it, sizes and ETags (must outlive it) */
    const char *url;           /**< the manifest's URL (which client: signed s3 or plain) */
    uint32_t nreqs;            /**< source requests in flight at once, at most */
    uint32_t iov_max;          /**< iovecs of the longest request */
    uint64_t cache_bytes;      /**< this process's part cache (0: none; see the node's below) */
    uint64_t first_epoch;      /**< epochs counted apart (ingot_source_req_t.epoch) */
    uint64_t nepochs;
    int numa_node; /**< where the part cache lives, or -1 */
} ingot_source_objstore_params_t;

/**
 * Create the source: its client (endpoint, region and credentials resolved now), one object per
 * shard, the request pool and the part cache (pre-faulted).
 * @return INGOT_OK; the client's errors (no credentials, a malformed URL: logged, naming the
 *         variable, profile or URL); INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_source_objstore_create(const ingot_source_objstore_params_t *params,
                                            ingot_source_t **src_p);

/** The client's identity (endpoint, region, credential source; never a secret). */
void ingot_source_objstore_identity(const ingot_source_t *src, ingot_objstore_identity_t *id_p);

/** The bucket (or HTTP host) the source reads. */
const char *ingot_source_objstore_bucket(const ingot_source_t *src);

/** Index of the per-epoch counters for all epochs together (ingot_source_objstore_stats). */
#define INGOT_SOURCE_OBJSTORE_ALL UINT64_MAX

/**
 * The GETs made for epoch @p epoch's requests (or INGOT_SOURCE_OBJSTORE_ALL: the client's
 * totals, the manifest's GET excluded). A GET for a part counts in the epoch of the request
 * that fetched it.
 * @return INGOT_OK; INGOT_ERR_OUT_OF_RANGE for an epoch the source does not count.
 */
ingot_status_t ingot_source_objstore_stats(const ingot_source_t *src, uint64_t epoch,
                                           ingot_objstore_stats_t *stats_p);

/** Reads served from parts already fetched (the part cache's hits). */
uint64_t ingot_source_objstore_part_hits(const ingot_source_t *src);

/**
 * Give the source the part cache the ranks of @p plan's node share, of @p bytes (node_parts.c;
 * instead of a part cache of its own). Collective over the job, agreed: every rank calls it.
 * @return INGOT_OK; INGOT_ERR_NO_MEMORY; MPI's errors.
 */
ingot_status_t ingot_source_objstore_share(ingot_source_t *src, const ingot_tier_plan_t *plan,
                                           uint64_t bytes);

/** The loader planned global step @p step: the node's part cache learns how far this rank is
 *  (backpressure: docs/objectstore.md), whichever tier serves its reads. */
void ingot_source_objstore_advance(ingot_source_t *src, uint64_t step);

/** The node's part cache figures of @p epoch (GETs, bytes fetched, bytes of the samples its
 *  ranks read through it):
 *  INGOT_OK; INGOT_ERR_NOT_FOUND without a node cache or for an epoch it does not count. */
ingot_status_t ingot_source_objstore_node_epoch(const ingot_source_t *src, uint64_t epoch,
                                                uint64_t *gets_p, uint64_t *bytes_p,
                                                uint64_t *needed_p);

/**
 * The job-wide check of @p id (this rank's identity for the dataset's URL): rank 0's endpoint,
 * region, bucket and credential source must be every rank's. Collective over @p comm; every rank
 * returns the same status.
 * @return INGOT_OK; INGOT_ERR_CONFIG when a rank differs (each such rank logs what it resolved
 *         against rank 0's value; rank 0 names the ranks per field); INGOT_ERR_MPI.
 */
ingot_status_t ingot_objstore_check_job(MPI_Comm comm, const ingot_store_identity_t *id);

/** The object store as the chain's storage, with its part cache (tier.c): wanted when the
 *  manifest is at a URL. */
extern const ingot_tier_ops_t ingot_objstore_tier_ops;

#endif

/**
 * @file sim.h
 * @brief ingot-sim: a cluster of many nodes simulated in one process, driven by the planning code
 *        a job runs (the order and its dealing over nodes, the per-rank partition, the peer
 *        cache's placement, the planner's requests, the object store's part cache) and by
 *        measured or given stage costs (docs/sim.md).
 *
 * What is decided is decided by the job's own code, so the bytes each tier serves and the GETs
 * are exact where the planning decides them alone; only time is modelled: step by step, each
 * rank's ingest of a step is bound by the slowest of its own path (its link to storage, its
 * requests over its readers, its peer fetches, a sample's fixed cost) and its node's shared
 * resources (cores, NIC, disk) and the store's (bandwidth, GET rate, SlowDown), and its loader
 * runs up to `depth` steps ahead of its trainer. Every rank runs on its own clock, as
 * ingot-bench's ranks do: no all-reduce between them.
 *
 * No MPI: the calls work in a process that never called MPI_Init. Errors are returned as status
 * codes and logged, naming the field or the file.
 */
#ifndef INGOT_SIM_H
#define INGOT_SIM_H

#include <stdint.h>
#include <stdio.h>
#include <ingot/def.h>
#include <ingot/shard.h>
#include <ingot/status.h>

INGOT_BEGIN_DECLS

/** Format version of cost files (ingot_sim_costs_write()); a file of another is refused. */
#define INGOT_SIM_COSTS_VERSION 2

/** What each stage of the loader costs on one core, or one node's device, measured by
 *  ingot_sim_calibrate() or given by hand. Times in seconds, rates in bytes per second. */
typedef struct ingot_sim_costs {
    double verify_bps; /**< XXH3 of a sample's stored bytes, one core */
    double copy_bps;   /**< one copy of a sample into the batch, one core */
    double decode_bps; /**< zstd decoding, raw bytes out per second, one core */
    double sample_s;   /**< the rest of a sample's handling (collate, bookkeeping), one core */
    double read_bps;   /**< a rank's reads of local shard files (page cache or disk) */
    double read_s;     /**< one local read's fixed cost */
    double peer_bps;   /**< a peer fetch within a node (shared memory) */
    double peer_s;     /**< one peer fetch's fixed cost */
    double fault_bps;  /**< bytes/s one core maps in: a rank's first read of a mapped file's
                            pages (INGOT_MAP_SHARDS) */
    double disk_bps;   /**< bytes/s of a disk tier hit's work on one core beyond a read of the
                            same bytes from a file (its entry read into a buffer, checked,
                            copied into place), measured by running the tier */
    /* The object store, measured against an endpoint (ingot_sim_calibrate_store()); 0: not
     * measured, the store's figures come from ingot_sim_store_t alone. */
    double get_s;     /**< a GET's time to its last byte, less its bytes: its latency */
    double get_bps;   /**< the bytes/s of one GET */
    double store_bps; /**< the bytes/s of 16 GETs of a part in flight together */
    double get_rate;  /**< GET/s of 16 GETs of 128 KiB in flight together */
} ingot_sim_costs_t;

/** The store below the tiers. */
typedef struct ingot_sim_store {
    int      remote;     /**< 1: an object store (GETs over each node's NIC); 0: files */
    double   bw;         /**< bytes/s the whole store serves (0: no limit) */
    double   latency_s;  /**< a request's time to first byte */
    double   conn_bps;   /**< bytes/s of one GET (0: no limit) */
    double   gets_per_s; /**< GETs/s the store serves in all, queued beyond (0: no limit) */
    double   rate;       /**< requests/s per prefix before SlowDown (0: no limit) */
    uint32_t prefixes;   /**< prefixes the shards spread over (>= 1) */
    double   slowdown;   /**< fraction of requests answered SlowDown (503), retried */
    double   fail;       /**< fraction of requests that fail otherwise, retried */
    double   retry_s;    /**< the wait before a retry */
} ingot_sim_store_t;

/** The nodes. */
typedef struct ingot_sim_cluster {
    uint32_t        nodes;    /**< >= 1 */
    const uint32_t *ranks_of; /**< per node: its ranks (NULL: ranks_per_node each) */
    uint32_t        ranks_per_node;
    uint32_t        cores; /**< per node, >= 1 (ranks may outnumber them: they share) */
    uint32_t        gpus;  /**< per node (0: none); with INGOT_GPU_SHARING=error, at most one
                                   rank per GPU, as the placement allows */
    uint32_t bind_cores;   /**< cores each rank is bound to (mpirun --bind-to core: 1); 0: unbound,
                              the node's ranks share its cores */
    double   nic_bps;      /**< per node, each way (0: no limit) */
    double   disk_bps;     /**< per node's local disk (0: no limit) */
    double   memory;       /**< bytes per node the job may hold (0: not checked): its ranks'
                                batch slots, peer cache windows and the node part cache */
} ingot_sim_cluster_t;

/** The job. */
typedef struct ingot_sim_job {
    ingot_manifest_h
             manifest;     /**< the dataset (a file, an object store's or ingot_sim_describe()) */
    uint64_t global_batch; /**< 0: 64 per rank */
    uint64_t epochs;       /**< >= 1 */
    uint64_t seed;         /**< the order's seed (ingot-bench's default is 1) */
    double   compute_s;    /**< the trainer's step */
    uint32_t depth;        /**< steps the loader runs ahead (ingot-bench's --depth) */
    uint32_t readers, workers; /**< per rank (0: the INGOT_READERS / INGOT_WORKERS values) */
    int      verify;           /**< 1: every sample hashed (INGOT_VERIFY other than off) */
    uint32_t prior_jobs;       /**< earlier runs of this same job on these nodes: the disk tier's
                              entries they left are found (INGOT_DISK_CACHE_BYTES) */
} ingot_sim_job_t;

/** Where a step's bytes came from, as ingot-bench counts them. */
enum { INGOT_SIM_STORAGE, INGOT_SIM_PEER, INGOT_SIM_LOCAL, INGOT_SIM_DISK, INGOT_SIM_FROM };

/** One epoch, summed over the job (bytes, requests) or over its steps (times). */
typedef struct ingot_sim_epoch {
    uint64_t    steps;
    uint64_t    samples;
    uint64_t    bytes[INGOT_SIM_FROM]; /**< by tier, record bytes */
    uint64_t    bytes_cross;           /**< of the peer bytes, those that crossed nodes */
    uint64_t    store_bytes;           /**< bytes the GETs moved (whole parts under a part cache) */
    uint64_t    store_requests;        /**< requests to an object store (GETs), retries apart */
    uint64_t    store_retries;         /**< of them, asked again (SlowDown, failures) */
    uint64_t    file_reads;            /**< reads of shard files (a store of files) */
    uint64_t    slowdowns;             /**< of which answered SlowDown */
    uint64_t    node_store_max;        /**< the most bytes one node read from the store */
    uint64_t    disk_below;            /**< bytes the disk tier read below (misses, prefetches) */
    uint64_t    disk_prefetch;         /**< of them, the prefetchers' */
    uint64_t    disk_admitted, disk_refused, disk_evictions; /**< fills, as the keepers decided */
    double      wall_s, stall_s, compute_s;
    double      au;    /**< compute over wall */
    const char *bound; /**< what bound the slowest rank's steps most often */
} ingot_sim_epoch_t;

/** What a simulation found. */
typedef struct ingot_sim_result {
    uint64_t           nepochs;
    ingot_sim_epoch_t *epochs; /**< nepochs */
    uint64_t           world;
    uint64_t           dataset_bytes;      /**< every sample's record, summed */
    uint64_t           cache_needed;       /**< the peer cache budget (job-wide) that would hold the
                                          dataset where the fill epoch reads it */
    uint64_t           cache_cached_bytes; /**< what the configured budget holds */
    uint64_t           disk_needed; /**< INGOT_DISK_CACHE_BYTES that holds every piece homed at
                                         the busiest node (headers included); 0: no disk tier */
    double             sim_s;       /**< the simulator's own time */
} ingot_sim_result_t;

/**
 * @brief A dataset described by its sizes, with no bytes behind it: @p samples samples of
 *        @p sample_size bytes (each drawn from sample_size * (1 +- @p jitter)) in tar shards of
 *        about @p shard_size bytes, laid out as ingot-manifest lays out one file per sample.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM naming the option; INGOT_ERR_NO_MEMORY. Close with
 *         ingot_manifest_close().
 */
INGOT_API ingot_status_t ingot_sim_describe(uint64_t samples, uint64_t sample_size, double jitter,
                                            uint64_t shard_size, ingot_manifest_h *manifest_p);

/**
 * @brief Costs measured on this machine by the real code's stages, briefly (about 2 s): the hash,
 *        copies, zstd, reads of a file in the page cache, first touches of mapped pages. The
 *        loader's own cost per sample and per byte, which ingot-sim --calibrate measures by
 *        running it, is not measured here (it needs MPI): sample_s is a default of 2 us.
 */
INGOT_API ingot_status_t ingot_sim_calibrate(ingot_sim_costs_t *costs_p);

/**
 * @brief Measure the object store a manifest at @p url (s3:// or http(s)://) lives in, with the
 *        client a loader uses: 16 GETs of 4 KiB one after another (the latency), 4 of a part
 *        (one GET's bandwidth) and 16 parts at once (the store's), of the manifest's first
 *        shard, and 8 rounds of 16 GETs of 128 KiB at once (the GETs a second), into @p costs'
 *        get_s, get_bps, store_bps and get_rate.
 * @return INGOT_OK; the manifest's and the store's errors (logged, naming the URL).
 */
INGOT_API ingot_status_t ingot_sim_calibrate_store(const char *url, ingot_sim_costs_t *costs);

/** @brief Write @p costs to @p path (INGOT_SIM_COSTS_VERSION, one "stage value" per line). */
INGOT_API ingot_status_t ingot_sim_costs_write(const char *path, const ingot_sim_costs_t *costs);

/**
 * @brief Read a cost file. @return INGOT_OK; INGOT_ERR_FORMAT for a file of another version, a
 *        stage missing or unknown, or a value that is not a positive number (logged naming the
 *        file, its line and the stage); INGOT_ERR_NOT_FOUND / INGOT_ERR_IO.
 */
INGOT_API ingot_status_t ingot_sim_costs_read(const char *path, ingot_sim_costs_t *costs_p);

/**
 * @brief Check a cluster: INGOT_ERR_INVALID_PARAM naming the field that cannot be (0 nodes, a
 *        node without ranks or cores, more ranks on a node than its GPUs under
 *        INGOT_GPU_SHARING=error, which the placement refuses), logged.
 */
INGOT_API ingot_status_t ingot_sim_cluster_check(const ingot_sim_cluster_t *cluster);

/**
 * @brief A node's hardware from an hwloc XML export (such as tests/fixtures/topology/'s): its
 *        cores and GPUs replace @p cluster's, and the placement of every node's ranks on it is
 *        planned as ingot_init() plans it (INGOT_PLACEMENT, INGOT_GPUS, INGOT_GPU_SHARING,
 *        INGOT_INGEST_CORES): ranks it cannot place are refused as a job's would be.
 * @return INGOT_OK; the XML's errors (naming the file); the placement's (INGOT_ERR_NO_DEVICE:
 *         more ranks than GPUs under INGOT_GPU_SHARING=error...), logged naming the node.
 */
INGOT_API ingot_status_t ingot_sim_cluster_topology(ingot_sim_cluster_t *cluster,
                                                    const char          *xml_path);

/**
 * @brief Estimate a simulation's own time in seconds on this machine (its samples visited and its
 *        node-steps), before it runs. @return INGOT_OK, or ingot_sim_run()'s parameter errors.
 */
INGOT_API ingot_status_t ingot_sim_estimate(const ingot_sim_job_t     *job,
                                            const ingot_sim_cluster_t *cluster, double *seconds_p);

/**
 * @brief Simulate @p job on @p cluster over @p store with @p costs; the tiers and the order from
 *        the INGOT_* variables (INGOT_ORDER, INGOT_CACHE_BYTES, INGOT_STORAGE_EMULATE...).
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM (a field that cannot be, named); INGOT_ERR_UNSUPPORTED
 *         (a tier this simulator does not model yet, named); INGOT_ERR_NO_MEMORY; the order's
 *         and the manifest's errors. Free the result with ingot_sim_result_free().
 */
INGOT_API ingot_status_t ingot_sim_run(
    const ingot_sim_job_t *job, const ingot_sim_cluster_t *cluster, const ingot_sim_store_t *store,
    const ingot_sim_costs_t *costs, ingot_sim_result_t *result_p);

/** @brief Free what ingot_sim_run() allocated. Accepts a zeroed result. */
INGOT_API void ingot_sim_result_free(ingot_sim_result_t *result);

INGOT_END_DECLS

#endif

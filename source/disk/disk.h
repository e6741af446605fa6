/*
 * The node-local disk tier (docs/tiers.md): a byte source that decorates storage (POSIX files,
 * the emulated store, the object store) with a persistent, content-addressed cache on each node's
 * disk, shared by every job that runs there. The order of tiers is the peer memory cache, this
 * tier, storage.
 *
 * A request's byte range is cut into pieces (aligned slices of INGOT_DISK_CACHE_PIECE bytes of a
 * shard, named by the shard's content hash: entry.h). Each piece has a home node, chosen by
 * rendezvous hashing of its key over the job's node names (not weighted by the nodes' budgets:
 * docs/tiers.md says why), so a later job on the same nodes finds each piece at its home whatever
 * its ranks per node. For each piece:
 *   - homed here: read from this node's folder (any rank reads it directly), checked (entry.h);
 *   - homed elsewhere: asked of a rank of its home over the transport (a service read);
 *   - a miss: the whole piece is read from the source below, the request's part copied out, and
 *     the piece written through: handed to its home's keeper (pushed over the transport when
 *     that is another process), which admits it by the policy and writes it.
 * A bad entry (torn, truncated, damaged, older format) is removed and read from below; the first
 * one is said once (a warning naming the file and why), the rest counted.
 *
 * One rank per node (the node's lowest) is its keeper: it owns the node's budget for this job (the
 * budget in effect: INGOT_DISK_CACHE_BYTES or the folder's filesystem's room, whichever is smaller;
 * policy.h: clairvoyant admission and eviction over the known order), writes every fill, and runs
 * the prefetcher that fills the disk ahead of the loader within its bandwidth share. Every rank
 * serves reads of its node's folder to other nodes.
 *
 * Thread safety: the source's ops as source.h says; ingot_disk_advance and ingot_disk_stats from
 * any thread. Create and destroy are collective over the job.
 */
#ifndef INGOT_SOURCE_DISK_DISK_H
#define INGOT_SOURCE_DISK_DISK_H

#include "source/tier.h"
#include "source/disk/entry.h"
#include "base/config.h"
#include <stdbool.h>
#include <stdint.h>

typedef struct ingot_disk ingot_disk_t;

/** INGOT_DISK_CACHE_POLICY values. */
typedef enum ingot_disk_policy_kind {
    INGOT_DISK_POLICY_CLAIRVOYANT = 0,
    INGOT_DISK_POLICY_LRU = 1
} ingot_disk_policy_kind_t;

/** INGOT_DISK_CACHE_FILL values: how a missed piece gets its entry. */
typedef enum ingot_disk_fill_kind {
    INGOT_DISK_FILL_WHOLE = 0, /**< read whole from below by the first miss (the default) */
    INGOT_DISK_FILL_PARTS = 1  /**< assembled from the samples misses read (assemble.c) */
} ingot_disk_fill_kind_t;

/** The disk tier's INGOT_* table, parsed once (disk_config.c). */
typedef struct ingot_disk_config {
    char *dir;           /**< INGOT_DISK_CACHE_DIR (%u, %h not yet expanded) */
    bool shared;         /**< INGOT_DISK_CACHE_SHARED: a group's folder accepted */
    uint64_t bytes;      /**< INGOT_DISK_CACHE_BYTES: per node */
    uint32_t piece_log2; /**< INGOT_DISK_CACHE_PIECE: a power of two, 4KiB to 64MiB */
    ingot_disk_policy_kind_t policy;
    ingot_disk_fill_kind_t fill; /**< INGOT_DISK_CACHE_FILL */
    int64_t prefetch;            /**< INGOT_DISK_PREFETCH: percent */
} ingot_disk_config_t;

extern ingot_config_table_t ingot_disk_config_table;
ingot_status_t ingot_disk_config(const ingot_disk_config_t **cfg_p);

/** The node's disk tier, decorating storage (tier.c): wanted when INGOT_DISK_CACHE_BYTES is not
 *  zero. Its create is collective and agreed: the budgets of each node's ranks compared
 *  (differing ones refused, naming the ranks and values), each node's folder opened and checked
 *  (a folder that cannot serve: one warning naming it, and that node is no piece's home), the
 *  homes computed, the keeper's scan and policy built, the service and the threads started. Its
 *  end is collective too (pending fills written first). */
extern const ingot_tier_ops_t ingot_disk_tier_ops;

/** The nodes and homes of a job's pieces (ingot_disk_plan_homes()). */
typedef struct ingot_disk_homes {
    int nnodes;
    int *node_usable; /**< per node: its folder serves */
    int *node_keeper; /**< per node: its lowest rank, or -1 */
    int *node_first;  /**< per node: its ranks are node_ranks[node_first[n] .. node_first[n+1]) */
    int *node_ranks;
    int serving_nodes;
    int32_t *home; /**< per piece: its home node, or -1 (no node serves) */
} ingot_disk_homes_t;

/** The hash a piece's key weighs the nodes with (its home: ingot_disk_plan_homes()). */
uint64_t ingot_disk_key_hash(const ingot_disk_key_t *k);

/**
 * The homes of @p npieces pieces whose keys hash to @p key_hash (per piece), over the nodes of
 * @p facts whose ranks all found their folder usable (@p usable, per rank): rendezvous hashing of
 * each piece's key over the serving nodes' names, so a later job on the same nodes, of any size,
 * finds each piece where this one left it. Pure (a simulator calls it). INGOT_ERR_NO_MEMORY;
 * free with ingot_disk_homes_free().
 */
ingot_status_t ingot_disk_plan_homes(const ingot_tier_facts_t *facts, const uint64_t *usable,
                                     const uint64_t *key_hash, uint64_t npieces,
                                     ingot_disk_homes_t *homes_p);
void ingot_disk_homes_free(ingot_disk_homes_t *homes);

#endif

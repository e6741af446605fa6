/*
 * Storage at the bottom of the chain (tiers.h) for a manifest whose shards are files: POSIX reads,
 * behind the emulated remote store when INGOT_STORAGE_EMULATE asks for one (the object store is
 * the other storage: source/objstore/). Also how many requests storage wants in flight, which the
 * loader sizes its readers by before the chain exists.
 */
#ifndef INGOT_SOURCE_STORAGE_H
#define INGOT_SOURCE_STORAGE_H

#include "source/emulate.h"
#include "source/tier.h"
#include <stdbool.h>

/** INGOT_MAP_SHARDS: copy out of mapped shards, or preadv. */
typedef enum ingot_map_shards {
    INGOT_MAP_SHARDS_NO = 0,
    INGOT_MAP_SHARDS_YES = 1,
    INGOT_MAP_SHARDS_AUTO = 2 /**< mapped while a node's ranks are no more than its PUs */
} ingot_map_shards_t;

/** The storage table's values (INGOT_STORAGE_EMULATE, INGOT_MAP_SHARDS). */
typedef struct ingot_storage_config {
    ingot_source_emulation_t emulate;
    int map_shards; /* ingot_map_shards_t */
} ingot_storage_config_t;

/**
 * Whether shard files are read out of mappings (INGOT_MAP_SHARDS): 'y', 'n', or under 'auto'
 * while the node's ranks (@p node_ranks) are no more than its allowed PUs (@p node_pus; 0: not
 * known, mapped). Each rank faults in the pages it maps on its first read of them; once ranks
 * outnumber the PUs those faults cost more than the system calls they save (docs/loader.md).
 */
bool ingot_storage_map_shards(const ingot_storage_config_t *cfg, int node_ranks, int node_pus);

extern ingot_config_table_t ingot_storage_config_table;
ingot_status_t ingot_storage_config(const ingot_storage_config_t **cfg_p);

/** Files as storage: wanted when the manifest is a local path. */
extern const ingot_tier_ops_t ingot_storage_tier_ops;

/**
 * Reader threads that keep storage busy for a manifest at @p location (a folder or a URL) read in
 * @p mode: a couple for local files (the page cache or an NVMe answers at once; two, not one,
 * even where a rank's share of the cores is one: a reader also waits on the tiers above storage,
 * a peer that stopped answering for one, and the other keeps the step going), many for a remote
 * store (the emulated one, or an object store under the global order: each read is its own
 * request, and only many in flight hide the latency), a few for an object store under the
 * locality order (most reads are copies out of parts fetched whole).
 */
uint32_t ingot_storage_readers(const ingot_tier_config_t *cfg, const ingot_location_t *location,
                               ingot_order_mode_t mode);

#endif

/*
 * The peer cache (cache.c, place.c, cache_source.c, tier.c): every rank's registered window of
 * INGOT_CACHE_BYTES / world bytes, which sample lives in which window, the fill, and the byte
 * source that reads cached samples from their home straight into the loader's destination. It
 * plugs into the loader as a tier read by location (source/tier.h): ingot_cache_tier_ops.
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

#include "source/tier.h"
#include "base/config.h"
#include <stdbool.h>
#include <stdint.h>

/** INGOT_CACHE_MEMORY values. */
typedef enum ingot_cache_memory {
    INGOT_CACHE_MEMORY_HOST = 0,
    INGOT_CACHE_MEMORY_DEVICE = 1
} ingot_cache_memory_t;

/** INGOT_CACHE_FETCH values. */
typedef enum ingot_cache_fetch {
    INGOT_CACHE_FETCH_AUTO = 0,
    INGOT_CACHE_FETCH_HOST = 1,
    INGOT_CACHE_FETCH_DEVICE = 2
} ingot_cache_fetch_t;

/** INGOT_CACHE_BYTES parsed: a budget of the whole job, or of each node ("64GiB/node"). */
typedef struct ingot_cache_budget {
    uint64_t bytes;
    bool per_node;
    char given[48]; /**< as the user wrote it (messages quote it so) */
} ingot_cache_budget_t;

/** The cache's INGOT_* table, parsed once (cache_config.c). */
typedef struct ingot_cache_config {
    ingot_cache_budget_t budget;
    ingot_cache_memory_t memory;
    ingot_cache_fetch_t fetch;
} ingot_cache_config_t;

extern ingot_config_table_t ingot_cache_config_table;
ingot_status_t ingot_cache_config(const ingot_cache_config_t **cfg_p);
/** INGOT_CACHE_BYTES's codec: "96GiB" (the job) or "64GiB/node". */
extern const ingot_config_codec_t ingot_cache_budget_codec;

/** The peer cache as a tier (tier.c). */
extern const ingot_tier_ops_t ingot_cache_tier_ops;

/** Where a sample is cached: its home rank (-1: not cached) and its offset in the home's window. */
typedef struct ingot_cache_entry {
    int32_t home;
    uint32_t length; /* the record's bytes */
    uint64_t offset;
} ingot_cache_entry_t;

/** The facts and numbers the placement is computed from (no communicator: place.c). */
typedef struct ingot_cache_place_in {
    const ingot_tier_facts_t *facts;
    const uint64_t *windows; /**< per rank: its window's bytes */
    bool per_node;           /**< the budget is per node (what "needed" is measured in) */
    ingot_manifest_h manifest;
    ingot_order_h order;
    uint64_t fill_epoch, fill_step, steps_per_epoch;
    uint32_t slice;
    const uint32_t *slice_of; /**< per rank: its slice of every step (NULL: its rank) */
} ingot_cache_place_in_t;

/** The placement: every sample's entry and the figures of the plan. */
typedef struct ingot_cache_placement {
    ingot_cache_entry_t *entries; /**< per sample (malloc'd) */
    uint64_t count;               /**< samples */
    uint64_t cached_samples, cached_bytes;
    uint64_t fill_expected; /**< fills rank facts->rank makes in the fill epoch */
    uint64_t dataset_bytes; /**< every sample's record, summed */
    uint64_t needed;        /**< the budget (of its kind) that would hold every sample */
} ingot_cache_placement_t;

/**
 * Every sample's home: the rank that reads it in the fill epoch, while its window has room (a
 * prefix of what it reads). Pure: the same result on every rank and in a simulator.
 * @return INGOT_OK; INGOT_ERR_NO_MEMORY; the order's and manifest's errors.
 */
ingot_status_t ingot_cache_place(const ingot_cache_place_in_t *in, ingot_cache_placement_t *out);

#endif

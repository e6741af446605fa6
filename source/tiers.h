/*
 * The chain of tiers a loader reads through (tier.h has the contract each tier implements): made
 * from the job plan, it knows every kind of tier and creates those the configuration wants,
 * bottom up (storage; the tiers that decorate it; the tiers read by location), and is the one
 * thing the loader's planner, readers, workers and statistics talk to. A new kind of tier (the
 * part cache a node's ranks share) is one more row of the chain's table, in this layer; the
 * loader does not change.
 *
 * Thread safety: as tier.h says for each call; the chain adds no lock.
 */
#ifndef INGOT_SOURCE_TIERS_H
#define INGOT_SOURCE_TIERS_H

#include "source/tier.h"

/** Tiers a chain holds at most (storage included). */
#define INGOT_TIER_CHAIN_MAX 8
/** Byte sources tried in order for shard byte ranges, at most (front sources and storage). */
#define INGOT_TIER_SOURCES_MAX 8

typedef struct ingot_tier_chain ingot_tier_chain_t;

/** What the chain's tiers do in one step (ingot_tier_chain_step(), once per planned step). */
typedef struct ingot_tier_step {
    uint64_t epoch;
    uint32_t locating; /**< bit t: tier t locates samples of this epoch */
    uint32_t filling;  /**< bit t: verified samples of this epoch fill tier t */
} ingot_tier_step_t;

/**
 * Make the chain for @p plan (collective over plan->comm; every rank returns the same status):
 * storage for the manifest's location, then every tier the configuration wants, then their
 * job-wide checks. @p front (@p nfront sources, owned by the chain from the call on, also when it
 * fails) are tried before storage for shard byte ranges (tests: sources that answer "retry
 * elsewhere" or never complete).
 * @return INGOT_OK; the tiers' errors (logged by the tier, naming the variable or the rank).
 */
ingot_status_t ingot_tier_chain_create(const ingot_tier_plan_t *plan, ingot_source_t *const *front,
                                       uint32_t nfront, ingot_tier_chain_t **chain_p);

/** The sources tried in order for a shard byte range (storage last): *@p srcs_p, their count. */
uint32_t ingot_tier_chain_sources(const ingot_tier_chain_t *c, ingot_source_t *const **srcs_p);

/** The loader planned global step @p step (every tier that follows the clock). */
void ingot_tier_chain_advance(ingot_tier_chain_t *c, uint64_t step);

/** What the tiers do in @p epoch's steps. */
void ingot_tier_chain_step(const ingot_tier_chain_t *c, uint64_t epoch, ingot_tier_step_t *step);

/** Where sample @p s is in the first tier of @p step that locates it: 1 with *@p loc (its tier in
 *  loc->tier), 0 when only the chain of sources has it. */
int ingot_tier_chain_locate(const ingot_tier_chain_t *c, const ingot_tier_step_t *step,
                            const ingot_sample_info_t *s, ingot_tier_loc_t *loc);

/** The source of tier @p tier (one that locates): requests naming their samples. */
ingot_source_t *ingot_tier_chain_source(ingot_tier_chain_t *c, uint32_t tier);

/** Tier @p tier's bytes of sample @p s from @p group failed the hash. */
void ingot_tier_chain_corrupt(ingot_tier_chain_t *c, uint32_t tier, const ingot_sample_info_t *s,
                              int32_t group);

/** Sample @p s, read through the chain's sources, failed the hash: every tier lets go of the
 *  bytes of it that it holds. Where the bad bytes came from, as far as the tiers know:
 *  INGOT_TIER_FROM_DISK when a disk tier held some, else INGOT_TIER_FROM_STORAGE. */
int ingot_tier_chain_damaged(ingot_tier_chain_t *c, const ingot_sample_info_t *s);

/** Fill every tier of @p step that fills with a verified sample (tier.h: fill). */
void ingot_tier_chain_fill(ingot_tier_chain_t *c, const ingot_tier_step_t *step,
                           const ingot_shard_rows_t *rows, const void *stored, int packed);

/** The GPU some tier reads straight into, or -1. */
int ingot_tier_chain_fetch_device(const ingot_tier_chain_t *c);

/** Every tier's figures into @p s (each writes its own fields). */
void ingot_tier_chain_stats(const ingot_tier_chain_t *c, ingot_loader_stats_t *s);

/** Epoch @p epoch's figures of the tier that counts them per epoch: INGOT_OK;
 *  INGOT_ERR_NOT_FOUND (no such tier: nothing logged); INGOT_ERR_OUT_OF_RANGE. */
ingot_status_t ingot_tier_chain_epoch_stats(const ingot_tier_chain_t *c, uint64_t epoch,
                                            ingot_loader_store_stats_t *s);

/** The report of the tier of kind @p kind into @p buf: INGOT_OK; INGOT_ERR_NOT_FOUND when the
 *  chain has none (nothing written). */
ingot_status_t ingot_tier_chain_report(ingot_tier_chain_t *c, ingot_tier_kind_t kind, char *buf,
                                       size_t len);

/** The storage at the top of the source chain, described for messages (see source.h). */
const char *ingot_tier_chain_describe(const ingot_tier_chain_t *c, uint32_t shard, char *buf,
                                      size_t len);

/** Stop reading (not collective): every tier takes back what could still land in the loader's
 *  memory, and the sources and the tiers that decorate storage are destroyed (the node's disk
 *  tier is collective there). The tiers read by location stay until ingot_tier_chain_destroy(). */
void ingot_tier_chain_stop(ingot_tier_chain_t *c);

/** Free the chain (collective: the tiers read by location). Accepts NULL. */
void ingot_tier_chain_destroy(ingot_tier_chain_t *c);

#endif

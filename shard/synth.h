/*
 * A manifest described, not built (synth.c): the tables of N samples in tar shards, with no byte
 * behind them, for a simulator's planning (ingot-sim --samples N --sample-size S --shard-size Z).
 */
#ifndef INGOT_SHARD_SYNTH_H
#define INGOT_SHARD_SYNTH_H

#include <ingot/shard.h>
#include <stdint.h>

/** A dataset described by its sizes. */
typedef struct ingot_manifest_synth {
    uint64_t samples;                /**< N >= 1 */
    uint64_t sample_min, sample_max; /**< each sample's size, drawn from [min, max] (min == max:
                                          fixed), 1 byte to 4 GiB */
    uint64_t shard_bytes;            /**< a shard holds as many samples as fit (at least one) */
    uint64_t seed;                   /**< the sizes' draw */
    const char *name;                /**< in messages; NULL: "(described)" */
} ingot_manifest_synth_t;

/** INGOT_OK, or INGOT_ERR_INVALID_PARAM naming the option that cannot be (logged). */
ingot_status_t ingot_manifest_synth_check(const ingot_manifest_synth_t *p);

/** Sample @p i's size. */
uint64_t ingot_manifest_synth_size(const ingot_manifest_synth_t *p, uint64_t i);

/**
 * Make the manifest in memory (freed at ingot_manifest_close()): about 70 bytes a sample. Its
 * shards are named shard-NNNNNNNN.tar beside ".", which no read should open.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM (as ingot_manifest_synth_check()); INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_manifest_synth(const ingot_manifest_synth_t *p, ingot_manifest_h *manifest_p);

#endif

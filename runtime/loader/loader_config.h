/*
 * The loader's INGOT_* variables (config.c): traces, thread counts, memory budget, O_DIRECT, the
 * verify policy and its skip budget, read coalescing, the order, the pacing of reads while
 * gradient reductions run.
 */
#ifndef INGOT_RUNTIME_LOADER_CONFIG_H
#define INGOT_RUNTIME_LOADER_CONFIG_H

#include <ingot/loader.h>
#include "base/config.h"

/** INGOT_ORDER parsed: the mode, its window (1 under the full order) and the canonical nodes
 *  (0: the resumed cursor's, else the job's node count). */
typedef struct ingot_loader_order {
    ingot_order_mode_t mode;
    uint32_t window;
    uint32_t nodes;
} ingot_loader_order_t;

typedef struct ingot_loader_config {
    char *trace;            /* "none" or a Chrome-trace path pattern */
    int64_t readers;        /* storage reader threads per loader (0: auto) */
    int64_t workers;        /* verify/decode/collate threads per loader (0: auto) */
    uint64_t loader_memory; /* default memory budget of a loader */
    bool direct_io;         /* O_DIRECT shard reads */
    ingot_verify_policy_t verify;
    int64_t skip_budget;        /* corrupt samples skipped per epoch before failing */
    uint64_t coalesce_gap;      /* largest gap between samples read in one request */
    ingot_loader_order_t order; /* INGOT_ORDER */
    uint64_t ingest_pacing;     /* pause before each storage request while reductions run */
    uint64_t hash_piece;        /* bytes per read of a run hashed as it lands (0: one read) */
} ingot_loader_config_t;

_Static_assert(sizeof(ingot_verify_policy_t) == sizeof(int), "enum variables are stored as int");

extern ingot_config_table_t ingot_loader_config_table;


/** The loader's process-wide values. */
ingot_status_t ingot_loader_config(const ingot_loader_config_t **cfg_p);


#endif

/*
 * The loader's INGOT_* variables (loader_config.c): storage emulation, traces, thread counts,
 * memory budget, O_DIRECT, the verify policy and its skip budget, read coalescing.
 */
#ifndef INGOT_RUNTIME_LOADER_CONFIG_H
#define INGOT_RUNTIME_LOADER_CONFIG_H

#include <ingot/loader.h>
#include "base/config.h"
#include "source/emulate.h" /* INGOT_STORAGE_EMULATE's validator */

typedef struct ingot_loader_config {
    char *storage_emulate;  /* "none" or "bw=200MiB/s,lat=5ms" */
    char *trace;            /* "none" or a Chrome-trace path pattern */
    int64_t readers;        /* storage reader threads per loader (0: auto) */
    int64_t workers;        /* verify/decode/collate threads per loader (0: auto) */
    uint64_t loader_memory; /* default memory budget of a loader */
    bool direct_io;         /* O_DIRECT shard reads */
    ingot_verify_policy_t verify;
    int64_t skip_budget;   /* corrupt samples skipped per epoch before failing */
    uint64_t coalesce_gap; /* largest gap between samples read in one request */
    char *order;           /* "full" or "window:N" */
} ingot_loader_config_t;

_Static_assert(sizeof(ingot_verify_policy_t) == sizeof(int), "enum variables are stored as int");

extern ingot_config_table_t ingot_loader_config_table;

/** INGOT_ORDER's validator (base/config.h: ingot_config_check_fn_t). */
int ingot_loader_check_order(const char *value, char *err, size_t errlen);

/** INGOT_ORDER parsed: "full" (window 0) or "window:N". Returns 0, or -1 when malformed. */
int ingot_loader_order_parse(const char *value, ingot_order_mode_t *mode_p, uint32_t *window_p);

/** The loader's process-wide values. */
ingot_status_t ingot_loader_config(const ingot_loader_config_t **cfg_p);


#endif

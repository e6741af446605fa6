/*
 * base's INGOT_* variables (base_config.c): logging, the deadline of every wait, spinning,
 * memory (huge pages, pinning), the job-wide and launch checks, unknown-variable warnings, fault
 * injection.
 */
#ifndef INGOT_BASE_BASE_CONFIG_H
#define INGOT_BASE_BASE_CONFIG_H

#include "base/config.h"
#include "base/log.h"

/** INGOT_PIN. */
typedef enum ingot_mem_pin_mode {
    INGOT_MEM_PIN_AUTO, /**< cudaHostRegister where a GPU is usable, mlock otherwise */
    INGOT_MEM_PIN_OFF   /**< never pin */
} ingot_mem_pin_mode_t;

typedef struct ingot_base_config {
    ingot_log_level_t log_level;
    char *log_file;      /* "stderr" or a path pattern */
    uint64_t timeout_ns; /* deadline of every blocking wait */
    uint64_t spin_ns;    /* busy-wait before sleeping */
    bool hugepages;
    ingot_mem_pin_mode_t pin;
    bool check_job_config; /* compare job-wide variables at init */
    bool check_launch;     /* refuse a singleton world a launcher says is one of several */
    bool warn_unknown;     /* warn about unknown INGOT_* variables */
    char *fault;           /* fault-injection spec (test builds) */
} ingot_base_config_t;

/* The parser stores enum variables as int. */
_Static_assert(sizeof(ingot_log_level_t) == sizeof(int), "enum variables are stored as int");
_Static_assert(sizeof(ingot_mem_pin_mode_t) == sizeof(int), "enum variables are stored as int");

extern ingot_config_table_t ingot_base_config_table;

/** base's process-wide values (ingot_config_values()). */
ingot_status_t ingot_base_config(const ingot_base_config_t **cfg_p);

#endif

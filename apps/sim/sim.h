/*
 * ingot-sim's parts (apps/ingot-sim.c): its options (args.c) and its output, a table and
 * ingot-bench's JSON schema (output.c). The simulator itself is the library's (ingot/sim.h).
 */
#ifndef APPS_SIM_H
#define APPS_SIM_H

#include <ingot/ingot.h>
#include <ingot/sim.h>
#include <stdint.h>

typedef struct sim_args {
    const char *manifest; /* --manifest, or NULL: described by the sizes below */
    uint64_t samples, sample_size, shard_size;
    double jitter;
    ingot_sim_job_t job; /* but its manifest */
    double compute_ms;
    ingot_sim_cluster_t cluster;
    uint32_t *node_ranks; /* --node-ranks (malloc'd), or NULL */
    ingot_sim_store_t store;
    int store_given;                                 /* --store said files or remote */
    int lat_given, bw_given, conn_given, gets_given; /* the store's figures given (else measured) */
    const char *costs;                               /* --costs FILE */
    const char *calibrate;                           /* --calibrate FILE */
    const char *json;                                /* --json[=FILE]: "-" stdout */
    const char *svg;                                 /* --svg FILE: the plot */
    double max_s;         /* --max-s: refuse a simulation estimated longer */
    const char *topology; /* --topology FILE: a node's hwloc XML */
} sim_args_t;

/* Parse argv; exits APP_EXIT_USAGE naming a bad option. */
void sim_args_parse(int argc, char **argv, sim_args_t *a);
void sim_args_free(sim_args_t *a);

/* The loader's own cost per sample and per byte, measured by running it here (calibrate.c):
 * @p c's sample_s and copy_bps replaced. 0, or -1 (said). Starts and ends MPI. */
int sim_calibrate_loader(ingot_sim_costs_t *c);
/* A disk tier hit's cost beyond a file read's, measured by running the loader over the disk tier
 * (the process's INGOT_DISK_CACHE_* set by its parent): @p c's disk_bps replaced. 0, or -1. */
int sim_calibrate_disk(ingot_sim_costs_t *c);

/* The plot of --svg: bytes by tier and AU per epoch. 0, or -1 (said). */
int sim_plot(const char *path, const sim_args_t *a, const ingot_sim_result_t *r);

/* The table on stdout (unless the JSON goes there), and the JSON when asked. 0, or -1 when the
 * JSON file cannot be written (said). */
int sim_output(const sim_args_t *a, const ingot_sim_costs_t *costs, const ingot_sim_result_t *r);

#endif

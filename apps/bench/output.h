/* ingot-bench's output (output.c): what rank 0 prints once every rank's metrics are in. */
#ifndef INGOT_APPS_BENCH_OUTPUT_H
#define INGOT_APPS_BENCH_OUTPUT_H

#include "bench/bench.h"
#include "common/report.h"

typedef struct bench_output {
    const bench_args_t *args;
    const char *manifest;
    int world;
    const ingot_loader_stats_t *stats; /* rank 0's (thread counts) */
    const report_rank_t *ranks;        /* world entries */
    const double *all;                 /* world x M_COUNT */
    const double *agg;                 /* M_COUNT */
    uint64_t nepochs;                  /* rows of each rank's epochs */
    uint64_t epochs_left_out;          /* epochs delivered without a row (out of memory) */
    const double *epochs;              /* world x nepochs x E_COUNT */
    const char *paths;                 /* rank 0's cache paths, or "" */
    const char *disk;                  /* rank 0's disk tier report, or "" */
} bench_output_t;

/** Header block and table on stdout. */
void bench_print(const bench_output_t *o);
/** The JSON object to stdout ("-") or to the file of --json; 0 or -1 (reported). */
int bench_write_json(const bench_output_t *o);

#endif

/*
 * What every ingot benchmark prints, in the manner of nccl-tests (src/common.cu): a header
 * block (versions, configuration, rank -> device map), a table whose head has a names row and a
 * units row, one JSON object with the arguments and the environment, and a progress bar. Used
 * by ingot-bench; meant for every benchmark app (all-reduce, trainer). Public API only.
 *
 * Nothing here is thread-safe: one thread (rank 0's main thread) prints.
 */
#ifndef INGOT_APPS_REPORT_H
#define INGOT_APPS_REPORT_H

#include <ingot/ingot.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define REPORT_HOST_MAX   64
#define REPORT_DEVICE_MAX 32

/* ---------------------------------------------------------------- header block */

/** Where one rank runs: its host and the device its batches go to ("cuda0", "host"). */
typedef struct report_rank {
    char host[REPORT_HOST_MAX];
    char device[REPORT_DEVICE_MAX];
} report_rank_t;

/**
 * Every rank's report_rank_t (from its placement in @p ctx), gathered at rank 0 of @p comm:
 * collective over @p comm.
 * On rank 0, *all_p is a malloc'd array of the communicator's size (the caller frees it); NULL
 * elsewhere. Returns INGOT_OK or INGOT_ERR_NO_MEMORY / INGOT_ERR_MPI.
 */
ingot_status_t report_ranks_gather(ingot_ctx_h ctx, MPI_Comm comm, report_rank_t **all_p);

/** "# TOOL VERSION, N rank(s)" and a line with the MPI, hwloc, zstd and zlib versions. */
void report_header_versions(FILE *out, const char *tool, int ranks);
/** "# NAME=value ..." for each INGOT_* variable of @p names (effective values). */
void report_header_config(FILE *out, const char *const *names, size_t n);
/** "# rank -> host, device: 0->host:device ..." */
void report_header_ranks(FILE *out, const report_rank_t *ranks, int n);

/* ---------------------------------------------------------------- table */

/** One column: its name, its unit (the second head row), its width and decimals. */
typedef struct report_column {
    const char *name;
    const char *unit;
    int width;
    int decimals;
} report_column_t;

/** The two head rows (names, units), after a first column of @p who_width named @p who. */
void report_table_head(FILE *out, const char *who, int who_width, const report_column_t *cols,
                       size_t n);
/** One row: @p who, then values[i] printed as column i says. */
void report_table_row(FILE *out, const char *who, int who_width, const report_column_t *cols,
                      size_t n, const double *values);

/* ---------------------------------------------------------------- JSON */

#define REPORT_JSON_DEPTH 8

/** A JSON writer: objects and arrays nested up to REPORT_JSON_DEPTH, strings escaped. */
typedef struct report_json {
    FILE *out;
    int depth;
    bool first[REPORT_JSON_DEPTH]; /* no member written yet at that depth */
} report_json_t;

/** The file of a --json option: stdout for "-", else @p path created; NULL when it cannot be
 *  (said, naming the path and why). */
FILE *report_json_file_open(const char *path);
/** Close what report_json_file_open() gave (stdout is flushed); 0, or -1 when the bytes did not
 *  all reach the file (a full disk: said, naming the path). */
int report_json_file_close(FILE *f, const char *path);

/** Open a JSON document on @p out (its outermost object begins). */
void report_json_begin(report_json_t *j, FILE *out);
/** Close the outermost object and end the line. */
void report_json_end(report_json_t *j);
/** Begin an object or array member named @p key (NULL inside an array). */
void report_json_object(report_json_t *j, const char *key);
void report_json_array(report_json_t *j, const char *key);
/** End the innermost object or array. */
void report_json_close_object(report_json_t *j);
void report_json_close_array(report_json_t *j);
/** Members: a string (escaped), a number ("%.6g"), an unsigned integer, an integer. */
void report_json_str(report_json_t *j, const char *key, const char *value);
void report_json_num(report_json_t *j, const char *key, double value);
void report_json_u64(report_json_t *j, const char *key, uint64_t value);
void report_json_int(report_json_t *j, const char *key, long long value);
/** "env": every environment variable whose name starts with one of @p prefixes. */
void report_json_env(report_json_t *j, const char *const *prefixes, size_t n);

/* ---------------------------------------------------------------- progress */

/** "\r[####    ] done/total UNIT 1.2s" on @p out (a terminal); call with a newline at the end. */
void report_progress(FILE *out, uint64_t done, uint64_t total, const char *unit, double elapsed_s);

/** Monotonic seconds. */
double report_now(void);

#endif

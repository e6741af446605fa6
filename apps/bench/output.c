/* ingot-bench's output on rank 0: header block, table and JSON, over apps/common/report.h. */
#include "bench/bench.h"
#include "common/report.h"
#include "bench/output.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define OUT_WHO_WIDTH      6
#define OUT_WHO_MAX        16
#define OUT_PERCENT        100.0
#define OUT_ARRAY_SIZE(_a) (sizeof(_a) / sizeof((_a)[0]))

/* The loader's INGOT_* variables that change what a run measures. */
static const char *const out_vars[] = {"INGOT_STORAGE_EMULATE", "INGOT_VERIFY", "INGOT_DIRECT_IO",
                                       "INGOT_COALESCE_GAP", "INGOT_BIND"};
static const char *const out_env_prefixes[] = {"INGOT_", "UCX_"};

static const ingot_report_column_t out_columns[] = {
    {"samples", "/s", 9, 0},  {"rate", "MiB/s", 9, 1},   {"stall", "%", 7, 2},
    {"AU", "", 6, 3},         {"stall", "p50 ms", 8, 2}, {"stall", "p99 ms", 8, 2},
    {"read", "p50 ms", 8, 2}, {"read", "p99 ms", 8, 2},  {"1st step", "ms", 9, 1},
    {"steps", "", 7, 0}};

static void out_row(const char *who, const double *m)
{
    const double v[OUT_ARRAY_SIZE(out_columns)] = {
        m[M_SPS],      m[M_MIBS],      m[M_WALL] > 0 ? OUT_PERCENT * m[M_STALL] / m[M_WALL] : 0,
        m[M_AU],       m[M_STALL_P50], m[M_STALL_P99],
        m[M_READ_P50], m[M_READ_P99],  m[M_FIRST],
        m[M_STEPS]};
    ingot_report_table_row(stdout, who, OUT_WHO_WIDTH, out_columns, OUT_ARRAY_SIZE(out_columns), v);
}

void ingot_bench_print(const bench_output_t *o)
{
    const bench_args_t *a = o->args;
    ingot_report_header_versions(stdout, "ingot-bench", o->world);
    printf("# manifest %s\n", o->manifest);
    printf("# batch %" PRIu64 " global, depth %d, readers %u, workers %u, epochs %" PRIu64
           ", compute %.3g ms (%s)\n",
           ingot_bench_global_batch(a, o->world), a->depth, o->stats->readers, o->stats->workers,
           a->epochs, a->compute_ms,
           a->gpu    ? "gpu"
           : a->spin ? "spin"
                     : "sleep");
    ingot_report_header_config(stdout, out_vars, OUT_ARRAY_SIZE(out_vars));
    ingot_report_header_ranks(stdout, o->ranks, o->world);
    ingot_report_table_head(stdout, "rank", OUT_WHO_WIDTH, out_columns,
                            OUT_ARRAY_SIZE(out_columns));
    for (int r = 0; r < o->world; r++) {
        char who[OUT_WHO_MAX];
        snprintf(who, sizeof(who), "%d", r);
        out_row(who, o->all + (size_t)r * M_COUNT);
    }
    out_row("all", o->agg);
    printf("# AU min over ranks %.4f; rates summed, times and AU averaged over ranks\n",
           ingot_bench_au_min(o->all, o->world));
}

static void json_args(ingot_report_json_t *j, const bench_output_t *o)
{
    const bench_args_t *a = o->args;
    ingot_report_json_object(j, "args");
    ingot_report_json_str(j, "manifest", o->manifest);
    ingot_report_json_u64(j, "batch", ingot_bench_global_batch(a, o->world));
    ingot_report_json_int(j, "depth", a->depth);
    ingot_report_json_u64(j, "epochs", a->epochs);
    ingot_report_json_u64(j, "steps", a->steps);
    ingot_report_json_num(j, "compute_ms", a->compute_ms);
    ingot_report_json_int(j, "compute_spin", a->spin);
    ingot_report_json_int(j, "readers", a->readers);
    ingot_report_json_int(j, "workers", a->workers);
    ingot_report_json_u64(j, "samples", a->samples);
    ingot_report_json_u64(j, "sample_size", a->sample_size);
    ingot_report_json_int(j, "zstd", a->zstd);
    ingot_report_json_close_object(j);
}

static void json_metrics(ingot_report_json_t *j, const double *m)
{
    for (int k = 0; k < M_COUNT; k++) {
        ingot_report_json_num(j, ingot_bench_metric_names[k], m[k]);
    }
}

static void json_ranks(ingot_report_json_t *j, const bench_output_t *o)
{
    ingot_report_json_array(j, "per_rank");
    for (int r = 0; r < o->world; r++) {
        ingot_report_json_object(j, NULL);
        ingot_report_json_int(j, "rank", r);
        ingot_report_json_str(j, "host", o->ranks[r].host);
        ingot_report_json_str(j, "device", o->ranks[r].device);
        json_metrics(j, o->all + (size_t)r * M_COUNT);
        ingot_report_json_close_object(j);
    }
    ingot_report_json_close_array(j);
}

int ingot_bench_write_json(const bench_output_t *o)
{
    const char *path = o->args->json;
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "ingot-bench: cannot write %s: %s\n", path, strerror(errno));
        return -1;
    }
    ingot_report_json_t j;
    ingot_report_json_begin(&j, f);
    ingot_report_json_str(&j, "tool", "ingot-bench");
    ingot_report_json_str(&j, "version", ingot_version_string());
    ingot_report_json_int(&j, "ranks", o->world);
    json_args(&j, o);
    ingot_report_json_env(&j, out_env_prefixes, OUT_ARRAY_SIZE(out_env_prefixes));
    json_ranks(&j, o);
    ingot_report_json_object(&j, "aggregate");
    json_metrics(&j, o->agg);
    ingot_report_json_num(&j, "au_min", ingot_bench_au_min(o->all, o->world));
    ingot_report_json_close_object(&j);
    ingot_report_json_end(&j);
    return (f == stdout || fclose(f) == 0) ? 0 : -1;
}

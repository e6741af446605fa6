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
static const char *const out_vars[] = {
    "INGOT_STORAGE_EMULATE", "INGOT_VERIFY",       "INGOT_DIRECT_IO",
    "INGOT_COALESCE_GAP",    "INGOT_BIND",         "INGOT_CACHE_BYTES",
    "INGOT_PEER_PROTOCOL",   "INGOT_PEER_FAILURE", "INGOT_ORDER",
    "INGOT_S3_PART_SIZE",    "INGOT_S3_CACHE",     "INGOT_S3_CONNECTIONS",
    "INGOT_MAP_SHARDS",      "INGOT_HASH_PIECE",   "INGOT_READERS",
    "INGOT_WORKERS"};
static const char *const out_env_prefixes[] = {"INGOT_", "UCX_"};

static const report_column_t out_columns[] = {{"samples", "/s", 9, 0},   {"rate", "MiB/s", 9, 1},
                                              {"stall", "%", 7, 2},      {"AU", "", 6, 3},
                                              {"stall", "p50 ms", 8, 2}, {"stall", "p99 ms", 8, 2},
                                              {"read", "p50 ms", 8, 2},  {"read", "p99 ms", 8, 2},
                                              {"1st step", "ms", 9, 1},  {"steps", "", 7, 0}};

static void print_epochs(const bench_output_t *o);
static void print_store(const bench_output_t *o);

/* A table of one row per rank and one for all of them. */
static void out_table(const bench_output_t *o, const report_column_t *cols, size_t ncols,
                      void (*row)(const char *who, const double *m))
{
    report_table_head(stdout, "rank", OUT_WHO_WIDTH, cols, ncols);
    for (int r = 0; r < o->world; r++) {
        char who[OUT_WHO_MAX];
        snprintf(who, sizeof(who), "%d", r);
        row(who, o->all + (size_t)r * M_COUNT);
    }
    row("all", o->agg);
}

static void out_row(const char *who, const double *m)
{
    const double v[OUT_ARRAY_SIZE(out_columns)] = {
        m[M_SPS],      m[M_MIBS],      m[M_WALL] > 0 ? OUT_PERCENT * m[M_STALL] / m[M_WALL] : 0,
        m[M_AU],       m[M_STALL_P50], m[M_STALL_P99],
        m[M_READ_P50], m[M_READ_P99],  m[M_FIRST],
        m[M_STEPS]};
    report_table_row(stdout, who, OUT_WHO_WIDTH, out_columns, OUT_ARRAY_SIZE(out_columns), v);
}

void bench_print(const bench_output_t *o)
{
    const bench_args_t *a = o->args;
    report_header_versions(stdout, "ingot-bench", o->world);
    printf("# manifest %s\n", o->manifest);
    printf("# batch %" PRIu64 " global, depth %d, readers %u, workers %u, epochs %" PRIu64
           ", compute %.3g ms (%s)\n",
           bench_global_batch(a, o->world), a->depth, o->stats->readers, o->stats->workers,
           a->epochs, a->compute_ms,
           a->gpu    ? "gpu"
           : a->spin ? "spin"
                     : "sleep");
    report_header_config(stdout, out_vars, OUT_ARRAY_SIZE(out_vars));
    report_header_ranks(stdout, o->ranks, o->world);
    out_table(o, out_columns, OUT_ARRAY_SIZE(out_columns), out_row);
    printf("# AU min over ranks %.4f; rates summed, times and AU averaged over ranks\n",
           bench_au_min(o->all, o->world));
    print_store(o);
    if (o->agg[M_REREAD_STORAGE] + o->agg[M_REREAD_PEER] + o->agg[M_REREAD_DISK] > 0) {
        printf("# samples that failed their hash, read again from the source (all ranks): from "
               "storage %.0f, the peer cache %.0f, a node's disk %.0f; damaged at rest %.0f\n",
               o->agg[M_REREAD_STORAGE], o->agg[M_REREAD_PEER], o->agg[M_REREAD_DISK],
               o->agg[M_REREAD_AT_REST]);
    }
    print_epochs(o);
}

static const report_column_t store_columns[] = {
    {"GETs", "", 9, 0},           {"received", "MiB", 10, 1},   {"GET/", "sample", 8, 4},
    {"failed", "", 7, 0},         {"retries", "503/429", 8, 0}, {"retries", "5xx", 8, 0},
    {"retries", "network", 8, 0}, {"retries", "stall", 8, 0},   {"throttle", "events", 8, 0},
    {"GET", "p50 ms", 8, 2},      {"GET", "p99 ms", 8, 2},      {"part", "hits", 9, 0},
    {"hedges", "", 7, 0},         {"hedge", "wins", 6, 0}};

static void store_row(const char *who, const double *m)
{
    const double v[OUT_ARRAY_SIZE(store_columns)] = {m[M_GETS],
                                                     m[M_GET_BYTES] / (1024.0 * 1024.0),
                                                     m[M_GETS_PER_SAMPLE],
                                                     m[M_GET_FAILED],
                                                     m[M_RETRY_THROTTLE],
                                                     m[M_RETRY_SERVER],
                                                     m[M_RETRY_NETWORK],
                                                     m[M_RETRY_STALL],
                                                     m[M_THROTTLE_EVENTS],
                                                     m[M_GET_P50],
                                                     m[M_GET_P99],
                                                     m[M_PART_HITS],
                                                     m[M_HEDGES],
                                                     m[M_HEDGE_WINS]};
    report_table_row(stdout, who, OUT_WHO_WIDTH, store_columns, OUT_ARRAY_SIZE(store_columns), v);
}

/* The object store's requests (a manifest at a URL): what was fetched, retried and how fast. */
static void print_store(const bench_output_t *o)
{
    if (o->agg[M_GETS] == 0 && strstr(o->manifest, "://") == NULL) {
        return;
    }
    printf("# object store: GETs made by each rank's loader (the manifest's own GET left out), "
           "GET/sample over the samples read\n");
    out_table(o, store_columns, OUT_ARRAY_SIZE(store_columns), store_row);
}

static const report_column_t epoch_columns[] = {
    {"steps", "", 7, 0},       {"AU", "", 7, 4},        {"stall", "%", 7, 2},
    {"storage", "MiB", 10, 1}, {"peer", "MiB", 10, 1},  {"local", "MiB", 10, 1},
    {"disk", "MiB", 10, 1},    {"below", "MiB", 10, 1}, {"GETs", "", 8, 0},
    {"GET/", "sample", 8, 4},  {"retries", "", 8, 0},   {"RSS", "MiB", 8, 1},
    {"store", "MiB", 10, 1},   {"amplif.", "x", 8, 3}};

static const report_column_t node_columns[] = {
    {"store", "MiB", 10, 1}, {"needed", "MiB", 10, 1}, {"amplif.", "x", 8, 3}, {"GETs", "", 8, 0}};

/* Epoch @p e of rank @p r. */
static const double *epoch_of(const bench_output_t *o, int r, uint64_t e)
{
    return o->epochs + ((size_t)r * o->nepochs + e) * E_COUNT;
}

/* Epoch @p e over all ranks: counts summed, times averaged. */
static void epoch_sum(const bench_output_t *o, uint64_t e, double *sum)
{
    memset(sum, 0, sizeof(double) * E_COUNT);
    for (int r = 0; r < o->world; r++) {
        const double *x = epoch_of(o, r, e);
        for (int k = 0; k < E_NODE; k++) {
            sum[k] += x[k];
        }
        for (int k = E_NODE_GETS; x[E_NODE_FIRST] != 0 && k < E_COUNT; k++) {
            sum[k] += x[k]; /* the node's figures, once per node */
        }
        sum[E_NODE_FIRST] += x[E_NODE_FIRST]; /* the nodes */
    }
    sum[E_EPOCH] = epoch_of(o, 0, e)[E_EPOCH];
    sum[E_STEPS] /= o->world;
    sum[E_WALL] /= o->world;
    sum[E_COMPUTE] /= o->world;
    sum[E_STALL] /= o->world;
}

static double epoch_au(const double *x)
{
    return x[E_WALL] > 0 ? x[E_COMPUTE] / x[E_WALL] : 0;
}

/* Bytes that left the store for a node's part cache over the bytes of the samples it read. */
static double epoch_amplification(const double *x)
{
    return x[E_NODE_NEEDED] > 0 ? x[E_NODE_BYTES] / x[E_NODE_NEEDED] : 0;
}

/* Per node and epoch, under the part cache a node's ranks share: what left the store for it. */
static void print_nodes(const bench_output_t *o)
{
    const double mib = 1024.0 * 1024.0;
    int any = 0;
    for (uint64_t e = 0; e < o->nepochs && !any; e++) {
        for (int r = 0; r < o->world; r++) {
            any |= epoch_of(o, r, e)[E_NODE_NEEDED] > 0;
        }
    }
    if (!any) {
        return;
    }
    printf("# per node and epoch: bytes from the store for the node's part cache, the bytes its "
           "ranks' samples held (what the node needed), their ratio (the amplification; 1.0: each "
           "byte once), GETs\n");
    report_table_head(stdout, "e/node", OUT_WHO_WIDTH, node_columns, OUT_ARRAY_SIZE(node_columns));
    for (uint64_t e = 0; e < o->nepochs; e++) {
        for (int r = 0; r < o->world; r++) {
            const double *x = epoch_of(o, r, e);
            if (x[E_NODE_FIRST] == 0) {
                continue;
            }
            const double v[OUT_ARRAY_SIZE(node_columns)] = {x[E_NODE_BYTES] / mib,
                                                            x[E_NODE_NEEDED] / mib,
                                                            epoch_amplification(x), x[E_NODE_GETS]};
            char who[OUT_WHO_MAX];
            snprintf(who, sizeof(who), "%.0f/%.0f", x[E_EPOCH], x[E_NODE]);
            report_table_row(stdout, who, OUT_WHO_WIDTH, node_columns, OUT_ARRAY_SIZE(node_columns),
                             v);
        }
    }
}

/* A multi-line report of rank 0's under @p title, each line commented; nothing when empty. */
static void print_report(const char *title, const char *text)
{
    if (text == NULL || text[0] == '\0') {
        return;
    }
    printf("# %s:\n", title);
    for (const char *p = text; *p != '\0';) {
        const char *nl = strchr(p, '\n');
        int n = nl ? (int)(nl - p) : (int)strlen(p);
        printf("#   %.*s\n", n, p);
        p += n + (nl != NULL);
    }
}

/* Where each epoch's bytes came from (all ranks) and its AU. */
static void print_epochs(const bench_output_t *o)
{
    const double mib = 1024.0 * 1024.0;
    printf("# per epoch: record bytes by source over all ranks (storage below every cache, peers' "
           "cache windows, own window, the nodes' disk tier), the disk tier's own reads below it "
           "(what left the store with the tier on), object-store GETs for the epoch's "
           "reads and their retries, resident memory summed over ranks; AU and stall averaged over "
           "ranks (first step of the run left out)\n");
    report_table_head(stdout, "epoch", OUT_WHO_WIDTH, epoch_columns, OUT_ARRAY_SIZE(epoch_columns));
    for (uint64_t e = 0; e < o->nepochs; e++) {
        double x[E_COUNT];
        epoch_sum(o, e, x);
        const double v[OUT_ARRAY_SIZE(epoch_columns)] = {
            x[E_STEPS],
            epoch_au(x),
            x[E_WALL] > 0 ? OUT_PERCENT * x[E_STALL] / x[E_WALL] : 0,
            x[E_STORAGE] / mib,
            x[E_PEER] / mib,
            x[E_LOCAL] / mib,
            x[E_DISK] / mib,
            x[E_BELOW] / mib,
            x[E_GETS],
            x[E_READS] > 0 ? x[E_GETS] / x[E_READS] : 0,
            x[E_RETRIES],
            x[E_RSS] / mib,
            x[E_NODE_BYTES] / mib,
            epoch_amplification(x)};
        char who[OUT_WHO_MAX];
        snprintf(who, sizeof(who), "%.0f", x[E_EPOCH]);
        report_table_row(stdout, who, OUT_WHO_WIDTH, epoch_columns, OUT_ARRAY_SIZE(epoch_columns),
                         v);
    }
    if (o->epochs_left_out > 0) {
        printf("# %" PRIu64 " later epochs are left out of this table (no memory for their rows); "
               "the totals above include them\n",
               o->epochs_left_out);
    }
    print_nodes(o);
    print_report("peer cache paths seen from rank 0", o->paths);
    print_report("disk tier seen from rank 0", o->disk);
}

static void json_epoch_fields(report_json_t *j, const double *x)
{
    report_json_u64(j, "bytes_storage", (uint64_t)x[E_STORAGE]);
    report_json_u64(j, "bytes_peer", (uint64_t)x[E_PEER]);
    report_json_u64(j, "bytes_local", (uint64_t)x[E_LOCAL]);
    report_json_u64(j, "bytes_disk", (uint64_t)x[E_DISK]);
    report_json_u64(j, "disk_bytes_below", (uint64_t)x[E_BELOW]);
    report_json_num(j, "au", epoch_au(x));
    report_json_num(j, "wall_s", x[E_WALL]);
    report_json_num(j, "stall_s", x[E_STALL]);
    report_json_u64(j, "store_requests", (uint64_t)x[E_GETS]);
    report_json_u64(j, "store_bytes", (uint64_t)x[E_GET_BYTES]);
    report_json_u64(j, "store_retries", (uint64_t)x[E_RETRIES]);
    report_json_u64(j, "samples_read", (uint64_t)x[E_READS]);
    report_json_num(j, "store_gets_per_sample", x[E_READS] > 0 ? x[E_GETS] / x[E_READS] : 0);
    report_json_u64(j, "rss_bytes", (uint64_t)x[E_RSS]);
    report_json_u64(j, "store_node_requests", (uint64_t)x[E_NODE_GETS]);
    report_json_u64(j, "store_node_bytes", (uint64_t)x[E_NODE_BYTES]);
    report_json_u64(j, "store_node_needed", (uint64_t)x[E_NODE_NEEDED]);
    report_json_num(j, "amplification", epoch_amplification(x));
}

/* The epoch's nodes: what left the store for each node's part cache. */
static void json_nodes(report_json_t *j, const bench_output_t *o, uint64_t e)
{
    report_json_array(j, "nodes");
    for (int r = 0; r < o->world; r++) {
        const double *x = epoch_of(o, r, e);
        if (x[E_NODE_FIRST] == 0) {
            continue;
        }
        report_json_object(j, NULL);
        report_json_int(j, "node", (int)x[E_NODE]);
        report_json_int(j, "first_rank", r);
        report_json_u64(j, "store_node_requests", (uint64_t)x[E_NODE_GETS]);
        report_json_u64(j, "store_node_bytes", (uint64_t)x[E_NODE_BYTES]);
        report_json_u64(j, "store_node_needed", (uint64_t)x[E_NODE_NEEDED]);
        report_json_num(j, "amplification", epoch_amplification(x));
        report_json_close_object(j);
    }
    report_json_close_array(j);
}

static void json_epochs(report_json_t *j, const bench_output_t *o)
{
    report_json_array(j, "epochs");
    for (uint64_t e = 0; e < o->nepochs; e++) {
        double x[E_COUNT];
        epoch_sum(o, e, x);
        report_json_object(j, NULL);
        report_json_u64(j, "epoch", (uint64_t)x[E_EPOCH]);
        report_json_u64(j, "steps", (uint64_t)x[E_STEPS]);
        json_epoch_fields(j, x);
        json_nodes(j, o, e);
        report_json_array(j, "per_rank");
        for (int r = 0; r < o->world; r++) {
            report_json_object(j, NULL);
            report_json_int(j, "rank", r);
            json_epoch_fields(j, epoch_of(o, r, e));
            report_json_close_object(j);
        }
        report_json_close_array(j);
        report_json_close_object(j);
    }
    report_json_close_array(j);
    report_json_u64(j, "epochs_left_out", o->epochs_left_out);
    report_json_str(j, "cache_paths_rank0", o->paths != NULL ? o->paths : "");
    report_json_str(j, "disk_tier_rank0", o->disk != NULL ? o->disk : "");
}

static void json_args(report_json_t *j, const bench_output_t *o)
{
    const bench_args_t *a = o->args;
    report_json_object(j, "args");
    report_json_str(j, "manifest", o->manifest);
    report_json_u64(j, "batch", bench_global_batch(a, o->world));
    report_json_int(j, "depth", a->depth);
    report_json_u64(j, "epochs", a->epochs);
    report_json_u64(j, "steps", a->steps);
    report_json_num(j, "compute_ms", a->compute_ms);
    report_json_int(j, "compute_spin", a->spin);
    report_json_int(j, "readers", a->readers);
    report_json_int(j, "workers", a->workers);
    report_json_u64(j, "samples", a->samples);
    report_json_u64(j, "sample_size", a->sample_size);
    report_json_int(j, "zstd", a->zstd);
    report_json_close_object(j);
}

static void json_metrics(report_json_t *j, const double *m)
{
    for (int k = 0; k < M_COUNT; k++) {
        report_json_num(j, bench_metric_names[k], m[k]);
    }
}

static void json_ranks(report_json_t *j, const bench_output_t *o)
{
    report_json_array(j, "per_rank");
    for (int r = 0; r < o->world; r++) {
        report_json_object(j, NULL);
        report_json_int(j, "rank", r);
        report_json_str(j, "host", o->ranks[r].host);
        report_json_str(j, "device", o->ranks[r].device);
        json_metrics(j, o->all + (size_t)r * M_COUNT);
        report_json_close_object(j);
    }
    report_json_close_array(j);
}

int bench_write_json(const bench_output_t *o)
{
    const char *path = o->args->json;
    FILE *f = report_json_file_open(path);
    if (f == NULL) {
        return -1;
    }
    report_json_t j;
    report_json_begin(&j, f);
    report_json_str(&j, "tool", "ingot-bench");
    report_json_str(&j, "version", ingot_version_string());
    report_json_int(&j, "ranks", o->world);
    json_args(&j, o);
    report_json_env(&j, out_env_prefixes, OUT_ARRAY_SIZE(out_env_prefixes));
    json_ranks(&j, o);
    json_epochs(&j, o);
    report_json_object(&j, "aggregate");
    json_metrics(&j, o->agg);
    report_json_num(&j, "au_min", bench_au_min(o->all, o->world));
    report_json_close_object(&j);
    report_json_end(&j);
    return report_json_file_close(f, path);
}

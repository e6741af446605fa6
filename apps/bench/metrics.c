/* ingot-bench's metrics: one rank's from its result, and their aggregate over the ranks. */
#include "bench/bench.h"

#include <string.h>

#define METRICS_NS_PER_MS 1e6
#define METRICS_MIB       (1024.0 * 1024.0)
#define METRICS_MIN_WALL  1e-9 /* a zero wall time gives rates of zero, not a division by 0 */

const char *const bench_metric_names[M_COUNT] = {"wall_s",
                                                 "compute_s",
                                                 "stall_s",
                                                 "au",
                                                 "steps",
                                                 "samples",
                                                 "bytes",
                                                 "samples_per_s",
                                                 "mib_per_s",
                                                 "stall_p50_ms",
                                                 "stall_p99_ms",
                                                 "read_p50_ms",
                                                 "read_p99_ms",
                                                 "verify_p50_ms",
                                                 "decode_p50_ms",
                                                 "h2d_p50_ms",
                                                 "minor_faults",
                                                 "bytes_read",
                                                 "read_requests",
                                                 "first_step_ms",
                                                 "disk_hits",
                                                 "disk_misses",
                                                 "disk_bytes_below",
                                                 "disk_admitted",
                                                 "disk_refused",
                                                 "disk_evictions",
                                                 "disk_prefetch_bytes",
                                                 "disk_bad_entries",
                                                 "disk_damaged_fills",
                                                 "disk_fill_errors",
                                                 "store_requests",
                                                 "store_failed",
                                                 "store_bytes",
                                                 "store_retries_throttle",
                                                 "store_retries_server",
                                                 "store_retries_network",
                                                 "store_retries_stall",
                                                 "store_throttle_events",
                                                 "store_get_p50_ms",
                                                 "store_get_p99_ms",
                                                 "store_gets_per_sample",
                                                 "store_part_hits",
                                                 "reread_storage",
                                                 "reread_peer",
                                                 "reread_disk",
                                                 "reread_at_rest",
                                                 "store_hedges",
                                                 "store_hedge_wins",
                                                 "bytes_hashed_landing",
                                                 "rss_bytes"};

static double ms(uint64_t ns)
{
    return (double)ns / METRICS_NS_PER_MS;
}

void bench_metrics(const bench_result_t *r, double *m)
{
    double wall = r->wall_s > 0 ? r->wall_s : METRICS_MIN_WALL;
    m[M_WALL] = r->wall_s;
    m[M_COMPUTE] = r->compute_s;
    m[M_STALL] = r->stall_s;
    m[M_AU] = r->au;
    m[M_STEPS] = (double)r->steps;
    m[M_SAMPLES] = (double)r->samples;
    m[M_BYTES] = (double)r->bytes;
    m[M_SPS] = (double)(r->samples - r->samples0) / wall;
    m[M_MIBS] = (double)(r->bytes - r->bytes0) / METRICS_MIB / wall;
    m[M_STALL_P50] = ms(r->st.stall_p50_ns);
    m[M_STALL_P99] = ms(r->st.stall_p99_ns);
    m[M_READ_P50] = ms(r->st.read_p50_ns);
    m[M_READ_P99] = ms(r->st.read_p99_ns);
    m[M_VERIFY_P50] = ms(r->st.verify_p50_ns);
    m[M_DECODE_P50] = ms(r->st.decode_p50_ns);
    m[M_H2D_P50] = ms(r->st.h2d_p50_ns);
    m[M_FAULTS] = (double)r->st.minor_faults;
    m[M_BYTES_READ] = (double)r->st.bytes_read;
    m[M_REQUESTS] = (double)r->st.read_requests;
    m[M_FIRST] = ms(r->st.stall_first_ns);
    m[M_DISK_HITS] = (double)r->st.disk_hits;
    m[M_DISK_MISSES] = (double)r->st.disk_misses;
    m[M_DISK_BELOW] = (double)r->st.disk_bytes_below;
    m[M_DISK_ADMITTED] = (double)r->st.disk_admitted;
    m[M_DISK_REFUSED] = (double)r->st.disk_refused;
    m[M_DISK_EVICTIONS] = (double)r->st.disk_evictions;
    m[M_DISK_PREFETCH] = (double)r->st.disk_prefetch_bytes;
    m[M_DISK_BAD] = (double)r->st.disk_bad_entries;
    m[M_DISK_DAMAGED] = (double)r->st.disk_damaged_fills;
    m[M_DISK_FILL_ERRORS] = (double)r->st.disk_fill_errors;
    m[M_GETS] = (double)r->st.store_requests;
    m[M_GET_FAILED] = (double)r->st.store_failed;
    m[M_GET_BYTES] = (double)r->st.store_bytes;
    m[M_RETRY_THROTTLE] = (double)r->st.store_retries_throttle;
    m[M_RETRY_SERVER] = (double)r->st.store_retries_server;
    m[M_RETRY_NETWORK] = (double)r->st.store_retries_network;
    m[M_RETRY_STALL] = (double)r->st.store_retries_stall;
    m[M_THROTTLE_EVENTS] = (double)r->st.store_throttle_events;
    m[M_GET_P50] = ms(r->st.store_get_p50_ns);
    m[M_GET_P99] = ms(r->st.store_get_p99_ns);
    m[M_GETS_PER_SAMPLE] = r->st.store_gets_per_sample;
    m[M_PART_HITS] = (double)r->st.store_part_hits;
    m[M_REREAD_STORAGE] = (double)r->st.reread_storage;
    m[M_REREAD_PEER] = (double)r->st.reread_peer;
    m[M_REREAD_DISK] = (double)r->st.reread_disk;
    m[M_REREAD_AT_REST] = (double)r->st.reread_at_rest;
    m[M_HEDGES] = (double)r->st.store_hedges;
    m[M_HEDGE_WINS] = (double)r->st.store_hedge_wins;
    m[M_HASHED_LANDING] = (double)r->st.bytes_hashed_landing;
    m[M_RSS] = (double)r->rss_bytes;
}

void bench_aggregate(const double *all, int world, double *agg)
{
    /* Rates and counts add up; times and AU are means over ranks (AU min reported apart). */
    static const int mean[] = {M_WALL,      M_COMPUTE,  M_STALL,    M_AU,         M_STALL_P50,
                               M_STALL_P99, M_READ_P50, M_READ_P99, M_VERIFY_P50, M_DECODE_P50,
                               M_H2D_P50,   M_FIRST,    M_FAULTS,   M_GET_P50,    M_GET_P99};
    memset(agg, 0, sizeof(double) * M_COUNT);
    for (int r = 0; r < world; r++) {
        for (int k = 0; k < M_COUNT; k++) {
            agg[k] += all[(size_t)r * M_COUNT + k];
        }
    }
    for (size_t i = 0; i < sizeof(mean) / sizeof(mean[0]); i++) {
        agg[mean[i]] /= world;
    }
    agg[M_STEPS] = all[M_STEPS]; /* every rank runs the same steps */
    /* GETs per sample over the job: total GETs over total samples read */
    double reads = 0;
    for (int r = 0; r < world; r++) {
        const double *m = all + (size_t)r * M_COUNT;
        reads += m[M_GETS_PER_SAMPLE] > 0 ? m[M_GETS] / m[M_GETS_PER_SAMPLE] : 0;
    }
    agg[M_GETS_PER_SAMPLE] = reads > 0 ? agg[M_GETS] / reads : 0;
}

double bench_au_min(const double *all, int world)
{
    double v = all[M_AU];
    for (int r = 1; r < world; r++) {
        double au = all[(size_t)r * M_COUNT + M_AU];
        v = au < v ? au : v;
    }
    return v;
}

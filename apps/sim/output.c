/* ingot-sim's output (sim.h): a table per epoch, and ingot-bench's JSON schema with the cluster's
 * own figures beside it. */
#include "sim/sim.h"
#include "common/report.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define MIB (1024.0 * 1024.0)

static const report_column_t sim_cols[] = {
    {"steps", "", 7, 0},        {"wall", "s", 9, 3},       {"AU", "%", 6, 1},
    {"stall", "s", 9, 3},       {"storage", "MiB", 11, 1}, {"peer", "MiB", 10, 1},
    {"local", "MiB", 10, 1},    {"disk", "MiB", 10, 1},    {"x-node", "MiB", 10, 1},
    {"GETs|reads", "", 11, 0},  {"req/smp", "", 8, 3},     {"slowdown", "", 9, 0},
    {"node max", "MiB", 10, 1},
};
#define NCOLS (sizeof(sim_cols) / sizeof(sim_cols[0]))

static const char *const out_env_prefixes[] = {"INGOT_", "UCX_TLS"};

static void print_table(FILE *out, const sim_args_t *a, const ingot_sim_result_t *r)
{
    fprintf(out,
            "# ingot-sim %s: %u node(s), %" PRIu64 " ranks, %u cores per node, "
            "%.1f MiB of records, simulated in %.2f s\n",
            ingot_version_string(), a->cluster.nodes, r->world, a->cluster.cores,
            (double)r->dataset_bytes / MIB, r->sim_s);
    if (r->cache_needed > 0) {
        fprintf(out,
                "# peer cache: holds %.1f MiB of the dataset; INGOT_CACHE_BYTES=%" PRIu64
                " would hold all of it\n",
                (double)r->cache_cached_bytes / MIB, r->cache_needed);
    }
    if (r->disk_needed > 0) {
        fprintf(out,
                "# disk tier: INGOT_DISK_CACHE_BYTES=%" PRIu64 " per node would hold every piece "
                "homed at the busiest node; the job after %u earlier run(s) of it\n",
                r->disk_needed, a->job.prior_jobs);
    }
    report_table_head(out, "epoch", 6, sim_cols, NCOLS);
    for (uint64_t e = 0; e < r->nepochs; e++) {
        const ingot_sim_epoch_t *x = &r->epochs[e];
        double v[NCOLS] = {
            (double)x->steps,
            x->wall_s,
            100 * x->au,
            x->stall_s,
            (double)x->bytes[INGOT_SIM_STORAGE] / MIB,
            (double)x->bytes[INGOT_SIM_PEER] / MIB,
            (double)x->bytes[INGOT_SIM_LOCAL] / MIB,
            (double)x->bytes[INGOT_SIM_DISK] / MIB,
            (double)x->bytes_cross / MIB,
            (double)(x->store_requests + x->file_reads),
            x->samples ? (double)(x->store_requests + x->file_reads) / (double)x->samples : 0,
            (double)x->slowdowns,
            (double)x->node_store_max / MIB};
        char who[24];
        snprintf(who, sizeof(who), "%" PRIu64, e);
        report_table_row(out, who, 6, sim_cols, NCOLS, v);
    }
    for (uint64_t e = 0; e < r->nepochs; e++) {
        fprintf(out, "# epoch %" PRIu64 ": the slowest rank's steps were bound by %s most often\n",
                e, r->epochs[e].bound);
    }
}

static void json_epochs(report_json_t *j, const ingot_sim_result_t *r)
{
    report_json_array(j, "epochs");
    for (uint64_t e = 0; e < r->nepochs; e++) {
        const ingot_sim_epoch_t *x = &r->epochs[e];
        report_json_object(j, NULL);
        report_json_u64(j, "epoch", e);
        report_json_u64(j, "steps", x->steps);
        report_json_u64(j, "bytes_storage", x->bytes[INGOT_SIM_STORAGE]);
        report_json_u64(j, "bytes_peer", x->bytes[INGOT_SIM_PEER]);
        report_json_u64(j, "bytes_local", x->bytes[INGOT_SIM_LOCAL]);
        report_json_u64(j, "bytes_disk", x->bytes[INGOT_SIM_DISK]);
        report_json_u64(j, "disk_bytes_below", x->disk_below);
        report_json_u64(j, "disk_prefetch_bytes", x->disk_prefetch);
        report_json_u64(j, "disk_admitted", x->disk_admitted);
        report_json_u64(j, "disk_refused", x->disk_refused);
        report_json_u64(j, "disk_evictions", x->disk_evictions);
        report_json_num(j, "au", x->au);
        report_json_num(j, "wall_s", x->wall_s);
        report_json_num(j, "stall_s", x->stall_s);
        report_json_u64(j, "store_requests", x->store_requests);
        report_json_u64(j, "store_retries", x->store_retries);
        report_json_u64(j, "store_bytes", x->store_bytes);
        report_json_u64(j, "samples_read", x->samples);
        report_json_num(j, "store_gets_per_sample",
                        x->samples ? (double)x->store_requests / (double)x->samples : 0);
        report_json_u64(j, "file_reads", x->file_reads);
        report_json_u64(j, "bytes_cross_node", x->bytes_cross);
        report_json_u64(j, "store_slowdowns", x->slowdowns);
        report_json_u64(j, "store_node_bytes_max", x->node_store_max);
        report_json_str(j, "bound", x->bound);
        report_json_close_object(j);
    }
    report_json_close_array(j);
}

static void json_inputs(report_json_t *j, const sim_args_t *a, const ingot_sim_costs_t *c)
{
    report_json_object(j, "args");
    report_json_str(j, "manifest", a->manifest != NULL ? a->manifest : "");
    report_json_u64(j, "samples", a->samples);
    report_json_u64(j, "sample_size", a->sample_size);
    report_json_u64(j, "batch", a->job.global_batch);
    report_json_int(j, "depth", a->job.depth);
    report_json_u64(j, "epochs", a->job.epochs);
    report_json_num(j, "compute_ms", a->compute_ms);
    report_json_u64(j, "prior_jobs", a->job.prior_jobs);
    report_json_int(j, "readers", a->job.readers);
    report_json_int(j, "workers", a->job.workers);
    report_json_close_object(j);
    report_json_object(j, "cluster");
    report_json_u64(j, "nodes", a->cluster.nodes);
    report_json_u64(j, "ranks_per_node", a->cluster.ranks_of ? 0 : a->cluster.ranks_per_node);
    report_json_u64(j, "cores", a->cluster.cores);
    report_json_u64(j, "gpus", a->cluster.gpus);
    report_json_u64(j, "bind_cores", a->cluster.bind_cores);
    report_json_num(j, "nic_bps", a->cluster.nic_bps);
    report_json_num(j, "disk_bps", a->cluster.disk_bps);
    report_json_num(j, "memory", a->cluster.memory);
    report_json_str(j, "topology", a->topology != NULL ? a->topology : "");
    report_json_close_object(j);
    report_json_object(j, "store");
    report_json_str(j, "kind", a->store.remote ? "remote" : "files");
    report_json_num(j, "bw", a->store.bw);
    report_json_num(j, "latency_s", a->store.latency_s);
    report_json_num(j, "get_bps", a->store.conn_bps);
    report_json_num(j, "gets_per_s", a->store.gets_per_s);
    report_json_num(j, "rate_per_prefix", a->store.rate);
    report_json_u64(j, "prefixes", a->store.prefixes);
    report_json_num(j, "slowdown", a->store.slowdown);
    report_json_num(j, "fail", a->store.fail);
    report_json_close_object(j);
    report_json_object(j, "costs");
    report_json_num(j, "verify_bps", c->verify_bps);
    report_json_num(j, "copy_bps", c->copy_bps);
    report_json_num(j, "decode_bps", c->decode_bps);
    report_json_num(j, "sample_s", c->sample_s);
    report_json_num(j, "read_bps", c->read_bps);
    report_json_num(j, "read_s", c->read_s);
    report_json_num(j, "peer_bps", c->peer_bps);
    report_json_num(j, "peer_s", c->peer_s);
    report_json_num(j, "fault_bps", c->fault_bps);
    report_json_num(j, "get_s", c->get_s);
    report_json_num(j, "get_bps", c->get_bps);
    report_json_num(j, "store_bps", c->store_bps);
    report_json_num(j, "get_rate", c->get_rate);
    report_json_close_object(j);
}

int sim_output(const sim_args_t *a, const ingot_sim_costs_t *costs, const ingot_sim_result_t *r)
{
    int to_stdout = a->json != NULL && strcmp(a->json, "-") == 0;
    if (!to_stdout) {
        print_table(stdout, a, r);
    }
    if (a->json == NULL) {
        return 0;
    }
    FILE *f = report_json_file_open(a->json);
    if (f == NULL) {
        return -1;
    }
    report_json_t j;
    report_json_begin(&j, f);
    report_json_str(&j, "tool", "ingot-sim");
    report_json_str(&j, "version", ingot_version_string());
    report_json_u64(&j, "ranks", r->world);
    json_inputs(&j, a, costs);
    report_json_env(&j, out_env_prefixes, sizeof(out_env_prefixes) / sizeof(out_env_prefixes[0]));
    json_epochs(&j, r);
    report_json_object(&j, "aggregate");
    report_json_u64(&j, "dataset_bytes", r->dataset_bytes);
    report_json_u64(&j, "cache_cached_bytes", r->cache_cached_bytes);
    report_json_u64(&j, "cache_bytes_needed", r->cache_needed);
    report_json_u64(&j, "disk_bytes_needed", r->disk_needed);
    report_json_num(&j, "sim_s", r->sim_s);
    report_json_close_object(&j);
    report_json_end(&j);
    return report_json_file_close(f, a->json);
}

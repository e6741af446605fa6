/*
 * ingot-sim's inputs that are not costs: the cluster's checks, a dataset described by its sizes,
 * and the estimate of a simulation's own time said before it starts.
 */
#include "runtime/sim/sim_impl.h"
#include "topology/topo.h"
#include "shard/synth.h"
#include "base/log.h"
#include "base/status.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <ingot/config.h>

/* The simulator's own time, measured on the build VM (docs/sim.md): per sample of a step visited
 * (its order position, its tier) and per node-step (its resources and clocks), and per sample
 * of the dataset planned (its sizes; the peer cache's placement walks the fill epoch once). */
#define SIM_NS_PER_VISIT    250.0
#define SIM_NS_PER_NODESTEP 120.0
#define SIM_NS_PER_SAMPLE   250.0
/* With the disk tier: every epoch's traces made in one pass over the order (per sample), and
 * the keepers setting each of their pieces' next use at each epoch (per piece). */
#define SIM_NS_PER_TRACE 150.0
#define SIM_NS_PER_PIECE 4.0

ingot_status_t ingot_sim_cluster_check(const ingot_sim_cluster_t *c)
{
    if (c == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "the cluster: NULL");
    }
    if (c->nodes == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "--nodes is 0: a cluster has at least one node");
    }
    if (c->cores == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "--cores is 0: a node without cores runs nothing");
    }
    if (c->bind_cores > c->cores) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "--bind %u is more than the node's --cores %u",
                          c->bind_cores, c->cores);
    }
    const struct {
        const char *name;
        double v;
    } sizes[] = {{"--nic-bw", c->nic_bps}, {"--disk-bw", c->disk_bps}, {"--memory", c->memory}};
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        if (!(sizes[i].v >= 0)) {
            return ingot_fail(INGOT_ERR_INVALID_PARAM, "the cluster: %s %g is not a size",
                              sizes[i].name, sizes[i].v);
        }
    }
    char sharing[16] = "";
    int sharing_error = ingot_config_get("INGOT_GPU_SHARING", sharing, sizeof(sharing)) ==
                            INGOT_OK &&
                        strcmp(sharing, "error") == 0;
    for (uint32_t n = 0; n < c->nodes; n++) {
        uint32_t k = c->ranks_of != NULL ? c->ranks_of[n] : c->ranks_per_node;
        if (k == 0) {
            return ingot_fail(INGOT_ERR_INVALID_PARAM, "%s: node %u has no ranks",
                              c->ranks_of != NULL ? "--node-ranks" : "--ranks-per-node", n);
        }
        if (c->gpus > 0 && k > c->gpus && sharing_error) {
            return ingot_fail(INGOT_ERR_INVALID_PARAM,
                              "%s: node %u has %u ranks and --gpus %u: the placement allows at "
                              "most one rank per GPU under INGOT_GPU_SHARING=error",
                              c->ranks_of != NULL ? "--node-ranks" : "--ranks-per-node", n, k,
                              c->gpus);
        }
        if (c->ranks_of == NULL) {
            break; /* every node alike */
        }
    }
    return INGOT_OK;
}

ingot_status_t ingot_sim_describe(uint64_t samples, uint64_t sample_size, double jitter,
                                  uint64_t shard_size, ingot_manifest_h *manifest_p)
{
    if (!(jitter >= 0 && jitter < 1)) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "--jitter %g is not in [0, 1)", jitter);
    }
    ingot_manifest_synth_t d = {.samples = samples,
                                .sample_min = (uint64_t)llround((double)sample_size * (1 - jitter)),
                                .sample_max = (uint64_t)llround((double)sample_size * (1 + jitter)),
                                .shard_bytes = shard_size,
                                .seed = 1,
                                .name = "(described dataset)"};
    return ingot_manifest_synth(&d, manifest_p);
}

ingot_status_t ingot_sim_cluster_topology(ingot_sim_cluster_t *c, const char *xml)
{
    if (c == NULL || xml == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_sim_cluster_topology: NULL argument");
    }
    const ingot_topo_config_t *cfg;
    INGOT_CHECK(ingot_topo_config(&cfg));
    ingot_topo_t *topo = NULL;
    INGOT_CHECK(ingot_topo_load(xml, &topo));
    uint64_t mask = 0;
    ingot_status_t st = ingot_topo_gpu_mask(topo, cfg->gpus, getenv("CUDA_VISIBLE_DEVICES"), &mask);
    c->cores = (uint32_t)topo->ncores;
    c->gpus = (uint32_t)topo->ngpus;
    uint32_t planned = 0; /* the last node's ranks planned (nodes alike are planned once) */
    for (uint32_t n = 0; st == INGOT_OK && n < c->nodes; n++) {
        uint32_t k = c->ranks_of != NULL ? c->ranks_of[n] : c->ranks_per_node;
        if (k == 0 || k == planned) {
            continue; /* a node without ranks: ingot_sim_cluster_check() names it */
        }
        ingot_plan_params_t p;
        ingot_topo_plan_params_from_config(cfg, mask, &p);
        ingot_plan_t *plan = NULL;
        st = ingot_topo_plan(topo, (int)k, &p, &plan);
        ingot_topo_plan_destroy(plan);
        if (st != INGOT_OK) {
            st = ingot_fail(st,
                            "node %u: its %u ranks cannot be placed on the node of %s (%d "
                            "cores, %d GPUs), as a job's would not be",
                            n, k, xml, topo->ncores, topo->ngpus);
        }
        planned = k;
    }
    ingot_topo_destroy(topo);
    return st;
}

ingot_status_t ingot_sim_estimate(const ingot_sim_job_t *job, const ingot_sim_cluster_t *c,
                                  double *seconds_p)
{
    INGOT_CHECK(ingot_sim_cluster_check(c));
    ingot_manifest_info_t mi;
    INGOT_CHECK(ingot_manifest_query(job->manifest, &mi));
    uint64_t world = 0;
    for (uint32_t n = 0; n < c->nodes; n++) {
        world += c->ranks_of != NULL ? c->ranks_of[n] : c->ranks_per_node;
    }
    uint64_t batch = job->global_batch != 0 ? job->global_batch : 64 * world;
    double steps = floor((double)mi.sample_count / (double)batch) * (double)job->epochs;
    double visits = steps * (double)batch;
    const ingot_disk_config_t *dc;
    INGOT_CHECK(ingot_disk_config(&dc));
    double traces = 0;
    if (dc->bytes > 0) {
        double bytes = 0;
        for (uint64_t s = 0; s < mi.shard_count; s++) {
            ingot_shard_info_t si;
            INGOT_CHECK(ingot_manifest_shard_get(job->manifest, (uint32_t)s, &si));
            bytes += (double)si.size;
        }
        double pieces = bytes / (double)(UINT64_C(1) << dc->piece_log2);
        traces = ((double)mi.sample_count * SIM_NS_PER_TRACE + pieces * SIM_NS_PER_PIECE) *
                 (double)(job->epochs + 1);
    }
    double job_ns = visits * SIM_NS_PER_VISIT + steps * c->nodes * SIM_NS_PER_NODESTEP + traces;
    *seconds_p = (job_ns * ((double)job->prior_jobs + 1) +
                  (double)mi.sample_count * SIM_NS_PER_SAMPLE) /
                 1e9;
    return INGOT_OK;
}

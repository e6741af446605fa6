/*
 * ingot-sim: an ingot-bench job on a cluster of many nodes, simulated in one process by the job's
 * own planning code with measured or given stage costs (include/ingot/sim.h, docs/sim.md). No
 * MPI is started. Exit 0; 1 for a cluster, dataset or cost file that cannot be (named), or a
 * simulation estimated longer than --max-s; 2 for a bad option.
 */
#include "common/cli.h"
#include "sim/sim.h"
#include <ingot/config.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

/* The costs: read from --costs, or measured here (and written with --calibrate). */
static int sim_costs(const sim_args_t *a, ingot_sim_costs_t *c)
{
    if (a->costs != NULL) {
        return ingot_sim_costs_read(a->costs, c) == INGOT_OK ? 0 : 1;
    }
    if (ingot_sim_calibrate(c) != INGOT_OK) {
        return 1;
    }
    if (a->calibrate != NULL) {
        if (ingot_sim_costs_write(a->calibrate, c) != INGOT_OK) {
            return 1;
        }
        printf("# ingot-sim: costs measured here written to %s\n", a->calibrate);
    }
    return 0;
}

static int sim_dataset(const sim_args_t *a, ingot_manifest_h *m)
{
    ingot_status_t st = a->manifest != NULL
                            ? ingot_manifest_open(a->manifest, INGOT_MANIFEST_OPEN_LAZY, m)
                            : ingot_sim_describe(a->samples, a->sample_size, a->jitter,
                                                 a->shard_size, m);
    return st == INGOT_OK ? 0 : 1;
}

int main(int argc, char **argv)
{
    sim_args_t a;
    sim_args_parse(argc, argv, &a);
    if (ingot_config_check() != INGOT_OK) {
        return 1; /* the bad variable was logged */
    }
    ingot_sim_costs_t costs;
    ingot_manifest_h m = NULL;
    int rc = sim_costs(&a, &costs);
    if (rc != 0 || (a.manifest == NULL && a.samples == 0)) {
        sim_args_free(&a);
        return rc; /* --calibrate alone, or costs that cannot be read (said) */
    }
    rc = ingot_sim_cluster_check(&a.cluster) == INGOT_OK ? sim_dataset(&a, &m) : 1;
    a.job.manifest = m;
    double est = 0;
    if (rc == 0 && ingot_sim_estimate(&a.job, &a.cluster, &est) != INGOT_OK) {
        rc = 1;
    }
    if (rc == 0 && est > a.max_s) {
        fprintf(stderr,
                "ingot-sim: this simulation would take about %.0f s here (%.1f h), more than "
                "--max-s %.0f: raise --max-s to run it, or simulate fewer samples or epochs\n",
                est, est / 3600, a.max_s);
        rc = 1;
    } else if (rc == 0 && est > 10) {
        fprintf(stderr, "ingot-sim: about %.0f s to simulate\n", est);
    }
    ingot_sim_result_t r = {0};
    if (rc == 0 && ingot_sim_run(&a.job, &a.cluster, &a.store, &costs, &r) != INGOT_OK) {
        rc = 1;
    }
    if (rc == 0 && sim_output(&a, &costs, &r) != 0) {
        rc = 1;
    }
    ingot_sim_result_free(&r);
    ingot_manifest_close(m);
    sim_args_free(&a);
    return rc;
}

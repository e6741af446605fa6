/*
 * ingot-sim: an ingot-bench job on a cluster of many nodes, simulated in one process by the job's
 * own planning code with measured or given stage costs (include/ingot/sim.h, docs/sim.md). The
 * simulation starts no MPI; a calibration (--calibrate, or a run without --costs) measures the
 * loader in a child process of its own, an MPI singleton (apps/sim/calibrate.c). Exit 0; 1 for a
 * cluster, dataset or cost file that cannot be (named), or a simulation estimated longer than
 * --max-s; 2 for a bad option.
 */
#include "common/cli.h"
#include "sim/sim.h"
#include <ingot/config.h>
#include <inttypes.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The variables a calibration runs without: it measures the loader over files in the page
 * cache, with no tier, store or order of the job's. */
static const char *const cal_unset[] = {"INGOT_CACHE_BYTES",
                                        "INGOT_DISK_CACHE_BYTES",
                                        "INGOT_DISK_CACHE_PIECE",
                                        "INGOT_DISK_CACHE_POLICY",
                                        "INGOT_DISK_PREFETCH",
                                        "INGOT_STORAGE_EMULATE",
                                        "INGOT_ORDER",
                                        "INGOT_READERS",
                                        "INGOT_WORKERS"};
#define CAL_CHILD "SIM_CALIBRATE_CHILD" /* set in the calibrating child */

/* Measure the costs in a child of this program (its own MPI singleton, the variables above
 * unset) into @p path: the stages and the loader (@p disk_dir NULL), or a disk tier hit in
 * @p disk_dir (the costs already in @p path). 0, or 1 (said). */
static int sim_calibrate_child(const char *path, const char *disk_dir)
{
    pid_t pid = fork();
    if (pid < 0) {
        perror("ingot-sim: fork");
        return 1;
    }
    if (pid == 0) {
        for (size_t i = 0; i < sizeof(cal_unset) / sizeof(cal_unset[0]); i++) {
            unsetenv(cal_unset[i]);
        }
        setenv(CAL_CHILD, disk_dir != NULL ? "disk" : "1", 1);
        if (disk_dir != NULL) { /* a budget holding the dataset; no prefetcher */
            setenv("INGOT_DISK_CACHE_BYTES", "512MiB", 1);
            setenv("INGOT_DISK_CACHE_DIR", disk_dir, 1);
            setenv("INGOT_DISK_PREFETCH", "0", 1);
        }
        setenv("INGOT_LOG_LEVEL", "error", 1); /* its binding to one core is meant */
        execl("/proc/self/exe", "ingot-sim", "--calibrate", path, (char *)NULL);
        perror("ingot-sim: exec /proc/self/exe");
        _exit(1);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

/* The costs: read from --costs, else measured (the calibrating child measures in-process). */
static int sim_costs(const sim_args_t *a, ingot_sim_costs_t *c)
{
    if (a->costs != NULL) {
        return ingot_sim_costs_read(a->costs, c) == INGOT_OK ? 0 : 1;
    }
    const char *child = getenv(CAL_CHILD);
    if (child != NULL && strcmp(child, "disk") == 0) {
        return ingot_sim_costs_read(a->calibrate, c) == INGOT_OK && sim_calibrate_disk(c) == 0 &&
                       ingot_sim_costs_write(a->calibrate, c) == INGOT_OK
                   ? 0
                   : 1;
    }
    if (child != NULL) {
        if (ingot_sim_calibrate(c) != INGOT_OK || sim_calibrate_loader(c) != 0 ||
            ingot_sim_costs_write(a->calibrate, c) != INGOT_OK) {
            return 1;
        }
        return 0;
    }
    char tmp[] = "/tmp/ingot-sim-costsXXXXXX";
    const char *path = a->calibrate;
    if (path == NULL) {
        int fd = mkstemp(tmp);
        if (fd < 0) {
            perror("ingot-sim: mkstemp");
            return 1;
        }
        close(fd);
        path = tmp;
    }
    int rc = sim_calibrate_child(path, NULL);
    char disk[] = "/tmp/ingot-sim-diskXXXXXX";
    if (rc == 0 && mkdtemp(disk) == NULL) {
        perror("ingot-sim: mkdtemp");
        rc = 1;
    } else if (rc == 0) {
        rc = sim_calibrate_child(path, disk);
        char rm[64];
        snprintf(rm, sizeof(rm), "rm -rf '%s'", disk);
        if (system(rm) != 0) {
            fprintf(stderr, "ingot-sim: could not remove %s\n", disk);
        }
    }
    if (rc == 0) {
        rc = ingot_sim_costs_read(path, c) == INGOT_OK ? 0 : 1;
    }
    if (rc == 0 && a->manifest != NULL && strstr(a->manifest, "://") != NULL) {
        /* a manifest in a bucket: its store's GETs measured here too */
        rc = ingot_sim_calibrate_store(a->manifest, c) == INGOT_OK &&
                     ingot_sim_costs_write(path, c) == INGOT_OK
                 ? 0
                 : 1;
    }
    if (path == tmp) {
        unlink(tmp);
    } else if (rc == 0) {
        printf("# ingot-sim: costs measured here written to %s\n", path);
    }
    return rc;
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
    if (rc != 0 || a.calibrate != NULL) {
        sim_args_free(&a);
        return rc; /* --calibrate (its manifest's store measured too), or costs that cannot be
                      read (said) */
    }
    /* the store's figures not given: as measured against it, else the defaults */
    if (!a.lat_given && costs.get_s > 0) {
        a.store.latency_s = costs.get_s;
    }
    if (!a.conn_given && costs.get_bps > 0) {
        a.store.conn_bps = costs.get_bps;
    }
    if (!a.bw_given && costs.store_bps > 0) {
        a.store.bw = costs.store_bps;
    }
    if (!a.gets_given && costs.get_rate > 0) {
        a.store.gets_per_s = costs.get_rate;
    }
    if (a.topology != NULL && ingot_sim_cluster_topology(&a.cluster, a.topology) != INGOT_OK) {
        rc = 1; /* said, naming the file or the node */
    }
    rc = rc == 0 && ingot_sim_cluster_check(&a.cluster) == INGOT_OK ? sim_dataset(&a, &m) : 1;
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
    if (rc == 0 && a.svg != NULL && sim_plot(a.svg, &a, &r) != 0) {
        rc = 1;
    }
    ingot_sim_result_free(&r);
    ingot_manifest_close(m);
    sim_args_free(&a);
    return rc;
}

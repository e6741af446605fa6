/*
 * ingot-sim --calibrate: the loader's own cost per sample and per byte on this machine, measured
 * by running it (one rank, MPI started as a singleton, its default threads) over two datasets
 * packed here of equal bytes and different sample sizes, read from the page cache: an epoch takes
 * t = N * a + B * b, two epochs of (N, B) give a (a sample's fixed cost) and b (a byte's). These
 * replace the micro-measured sample_s and the per-byte cost besides hashing (copy_bps). The
 * process is bound to one core first, so its threads share that core and the times are
 * core-seconds (docs/sim.md, Calibration). A second process runs the loader over the disk tier
 * (its variables set by its parent): the large dataset's epochs served from the node's disk, over
 * what the first process's costs say the same epoch from files takes, give a hit's own cost.
 */
#include "sim/sim.h"
#include "common/report.h"

#include <inttypes.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CAL_BYTES       (96u << 20) /* each dataset: fits the page cache, takes tens of ms */
#define CAL_SMALL       2048u       /* bytes per sample of the first dataset */
#define CAL_LARGE       (256u << 10)
#define CAL_EPOCHS      4 /* the first (the pages mapped in) left out */
#define CAL_DISK_EPOCHS 9 /* a disk tier hit's cost is smaller than the loader's: more epochs */
#define CAL_DISK_RUNS   3 /* loaders read from the disk; the median one is taken */
#define CAL_BATCH       64

static void cal_fill(uint8_t *buf, size_t len, uint64_t i)
{
    uint64_t x = i * 0x9e3779b97f4a7c15ull + 1;
    for (size_t k = 0; k + 8 <= len; k += 8) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(buf + k, &x, 8);
    }
}

/* A dataset of CAL_BYTES in samples of @p size bytes under @p dir. */
static ingot_status_t cal_pack(const char *dir, size_t size, uint64_t *n_p)
{
    uint64_t n = CAL_BYTES / size;
    ingot_packer_params_t pp = {.field_mask = INGOT_PACKER_PARAM_FIELD_OUT_DIR |
                                              INGOT_PACKER_PARAM_FIELD_SHARD_SIZE,
                                .out_dir = dir,
                                .shard_size = 32u << 20};
    ingot_packer_h pk;
    ingot_status_t st = ingot_packer_create(&pp, &pk);
    uint8_t *buf = malloc(size);
    if (st == INGOT_OK && buf == NULL) {
        st = INGOT_ERR_NO_MEMORY;
    }
    for (uint64_t i = 0; st == INGOT_OK && i < n; i++) {
        char key[32];
        snprintf(key, sizeof(key), "%08" PRIu64, i);
        cal_fill(buf, size, i);
        st = ingot_packer_add(pk, key, "bin", buf, size);
    }
    if (st == INGOT_OK) {
        st = ingot_packer_finish(pk, NULL, NULL);
    }
    ingot_packer_destroy(pk);
    free(buf);
    *n_p = n;
    return st;
}

/* Seconds per epoch of the loader over @p manifest in @p epochs epochs, its first left out (mean
 * of the rest), and its workers. */
static ingot_status_t cal_epoch(ingot_ctx_h ctx, const char *manifest, uint64_t epochs, double *s_p,
                                double *first_p, uint32_t *workers_p)
{
    ingot_loader_params_t p = {.field_mask = INGOT_LOADER_PARAM_FIELD_MANIFEST |
                                             INGOT_LOADER_PARAM_FIELD_BATCH |
                                             INGOT_LOADER_PARAM_FIELD_EPOCHS,
                               .manifest_path = manifest,
                               .global_batch = CAL_BATCH,
                               .epochs = epochs};
    ingot_loader_h l;
    ingot_status_t st = ingot_loader_create(ctx, &p, &l);
    if (st != INGOT_OK) {
        return st;
    }
    ingot_batch_t b;
    double t0 = 0, t1 = 0, t_end = 0;
    uint64_t steps0 = 0;
    while ((st = ingot_loader_next(l, &b)) == INGOT_OK) {
        uint64_t epoch = b.epoch;
        st = ingot_loader_release(l, &b);
        if (st != INGOT_OK) {
            break;
        }
        t_end = report_now();
        if (epoch == 0) {
            t0 = steps0++ == 0 ? t_end : t0; /* the first release: the pipeline filled */
            t1 = t_end;                      /* the last of the first epoch */
        }
    }
    if (st == INGOT_END_OF_DATA) {
        st = INGOT_OK;
    }
    ingot_loader_stats_t ls = {.field_mask = INGOT_LOADER_STATS_FIELD_THREADS};
    ingot_loader_stats(l, &ls);
    *workers_p = ls.workers;
    ingot_loader_destroy(l);
    *s_p = (t_end - t1) / (double)(epochs - 1);
    *first_p = steps0 > 1 ? (t1 - t0) * (double)steps0 / (double)(steps0 - 1) : *s_p;
    return st;
}

static int cal_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void cal_remove(const char *dir)
{
    char rm[128];
    snprintf(rm, sizeof(rm), "rm -rf '%s'", dir);
    if (system(rm) != 0) {
        fprintf(stderr, "ingot-sim: calibrate: could not remove %s\n", dir);
    }
}

/* Bind this process (and the threads it starts) to the first core it may run on. */
static void cal_one_core(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof(set), &set) != 0) {
        return;
    }
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (CPU_ISSET(cpu, &set)) {
            CPU_ZERO(&set);
            CPU_SET(cpu, &set);
            if (sched_setaffinity(0, sizeof(set), &set) != 0) {
                perror("ingot-sim: calibrate: sched_setaffinity");
            }
            return;
        }
    }
}

int sim_calibrate_disk(ingot_sim_costs_t *c)
{
    cal_one_core();
    char dir[] = "/tmp/ingot-sim-calXXXXXX", large[64], path[96];
    if (mkdtemp(dir) == NULL) {
        perror("ingot-sim: calibrate: mkdtemp");
        return -1;
    }
    snprintf(large, sizeof(large), "%s/large", dir);
    ingot_ctx_h ctx;
    uint64_t nl = 0;
    double tl = 0, first = 0;
    uint32_t workers = 1;
    ingot_status_t st = ingot_init(NULL, &ctx);
    int inited = st == INGOT_OK;
    st = st == INGOT_OK ? cal_pack(large, CAL_LARGE, &nl) : st;
    snprintf(path, sizeof(path), "%s/" INGOT_PACK_MANIFEST_NAME, large);
    /* a first loader fills the disk; the next ones read every epoch from it: the median of
     * CAL_DISK_RUNS loaders' epochs */
    st = st == INGOT_OK ? cal_epoch(ctx, path, 2, &tl, &first, &workers) : st;
    double runs[CAL_DISK_RUNS];
    for (int i = 0; i < CAL_DISK_RUNS && st == INGOT_OK; i++) {
        st = cal_epoch(ctx, path, CAL_DISK_EPOCHS, &runs[i], &first, &workers);
    }
    if (st == INGOT_OK) {
        qsort(runs, CAL_DISK_RUNS, sizeof(runs[0]), cal_cmp);
        tl = runs[CAL_DISK_RUNS / 2];
    }
    if (inited) {
        ingot_finalize(ctx);
    }
    cal_remove(dir);
    if (st != INGOT_OK) {
        return -1; /* said by the library */
    }
    double bl = (double)nl * CAL_LARGE;
    double files = (double)nl * c->sample_s + bl / c->copy_bps + bl / c->verify_bps;
    double extra = (tl - files) / bl;
    if (extra > 0) {
        c->disk_bps = 1 / extra;
    }
    printf("# ingot-sim: the disk tier here: %.4f s an epoch of %" PRIu64 " samples of %u B "
           "from the node's disk (the median of %d loaders), %.4f s from files: %.3f ns a byte "
           "more\n",
           tl, nl, CAL_LARGE, CAL_DISK_RUNS, files, extra > 0 ? extra * 1e9 : 0);
    return 0;
}

int sim_calibrate_loader(ingot_sim_costs_t *c)
{
    cal_one_core();
    char dir[] = "/tmp/ingot-sim-calXXXXXX", small[64], large[64], path[96];
    if (mkdtemp(dir) == NULL) {
        perror("ingot-sim: calibrate: mkdtemp");
        return -1;
    }
    snprintf(small, sizeof(small), "%s/small", dir);
    snprintf(large, sizeof(large), "%s/large", dir);
    ingot_ctx_h ctx;
    uint64_t ns = 0, nl = 0;
    double ts = 0, tl = 0, first = 0;
    uint32_t workers = 1;
    ingot_status_t st = ingot_init(NULL, &ctx);
    int inited = st == INGOT_OK;
    st = st == INGOT_OK ? cal_pack(small, CAL_SMALL, &ns) : st;
    st = st == INGOT_OK ? cal_pack(large, CAL_LARGE, &nl) : st;
    snprintf(path, sizeof(path), "%s/" INGOT_PACK_MANIFEST_NAME, small);
    st = st == INGOT_OK ? cal_epoch(ctx, path, CAL_EPOCHS, &ts, &first, &workers) : st;
    snprintf(path, sizeof(path), "%s/" INGOT_PACK_MANIFEST_NAME, large);
    st = st == INGOT_OK ? cal_epoch(ctx, path, CAL_EPOCHS, &tl, &first, &workers) : st;
    if (inited) {
        ingot_finalize(ctx);
    }
    cal_remove(dir);
    if (st != INGOT_OK) {
        return -1; /* said by the library */
    }
    /* t = N a + B b over both datasets (B equal up to a sample): a from the difference in N */
    double bs = (double)ns * CAL_SMALL, bl = (double)nl * CAL_LARGE;
    double a = (ts - tl * bs / bl) / ((double)ns - (double)nl * bs / bl);
    double b = (tl - (double)nl * a) / bl;
    double k = 1; /* one core: the times are core-seconds */
    if (!(a > 0) || !(b > 0)) {
        fprintf(stderr,
                "ingot-sim: calibrate: the loader's epochs (%.4f s over %" PRIu64
                " samples, %.4f s over %" PRIu64 ") give no positive cost per sample and per "
                "byte; the machine was busy? Keeping the micro-measured costs.\n",
                ts, ns, tl, nl);
        return 0;
    }
    c->sample_s = a * k;
    double rest = b * k - 1 / c->verify_bps; /* a byte's cost besides its hash */
    if (rest > 0) {
        c->copy_bps = 1 / rest;
    }
    /* the first epoch of the large samples maps every page in: its extra time over the bytes */
    double fault = (first - tl) / bl * k;
    if (fault > 0) {
        c->fault_bps = 1 / fault;
    }
    printf("# ingot-sim: the loader here: %.2f us a sample, %.3f ns a byte, on %u workers "
           "(%.4f s for %" PRIu64 " samples of %u B, %.4f s for %" PRIu64 " of %u B; its first "
           "epoch %.4f s: %.3f ns a byte mapped in)\n",
           a * 1e6, b * 1e9, workers, ts, ns, CAL_SMALL, tl, nl, CAL_LARGE, first,
           fault > 0 ? fault / k * 1e9 : 0);
    return 0;
}

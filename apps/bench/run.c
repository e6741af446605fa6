/*
 * ingot-bench's measured loop: a loader over the manifest, each batch followed by the emulated
 * compute step. AU and the rates leave out the first step (the pipeline filling), as DLIO does.
 */
#include "bench/bench.h"
#include "common/report.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define RUN_SKIP_BUDGET    100 /* samples --verify skip may drop before failing */
#define RUN_PROGRESS_EVERY 16  /* steps between progress bar updates */
#define RUN_NS_PER_S       1e9
#define RUN_EPOCHS_FIRST   16 /* rows of the per-epoch table allocated at first, doubled as needed */
#define RUN_RSS_EVERY      8  /* steps between readings of the resident memory */

static ingot_status_t run_loader(ingot_ctx_h ctx, const bench_args_t *a, const char *manifest,
                                 int world, ingot_loader_h *l_p)
{
    ingot_loader_params_t p = {
        .field_mask = INGOT_LOADER_PARAM_FIELD_MANIFEST | INGOT_LOADER_PARAM_FIELD_BATCH |
                      INGOT_LOADER_PARAM_FIELD_SEED | INGOT_LOADER_PARAM_FIELD_EPOCHS |
                      INGOT_LOADER_PARAM_FIELD_DEPTH | INGOT_LOADER_PARAM_FIELD_DEVICE |
                      INGOT_LOADER_PARAM_FIELD_THREADS,
        .manifest_path = manifest,
        .global_batch = bench_global_batch(a, world),
        .seed = a->seed,
        .epochs = a->epochs,
        .depth = (uint32_t)a->depth,
        .device = a->device,
        .readers = (uint32_t)a->readers,
        .workers = (uint32_t)a->workers};
    if (a->verify != NULL) {
        p.field_mask |= INGOT_LOADER_PARAM_FIELD_VERIFY;
        p.verify = !strcmp(a->verify, "fail")   ? INGOT_VERIFY_FAIL
                   : !strcmp(a->verify, "skip") ? INGOT_VERIFY_SKIP
                                                : INGOT_VERIFY_OFF;
        p.skip_budget = RUN_SKIP_BUDGET;
    }
    return ingot_loader_create(ctx, &p, l_p);
}

/* The CUDA device of --compute-gpu: --device N, else the placement's. */
static int run_device(ingot_ctx_h ctx, const bench_args_t *a)
{
    ingot_placement_t pl = {.field_mask = INGOT_PLACEMENT_FIELD_GPU};
    if (a->device >= 0) {
        return a->device;
    }
    return ingot_placement_get(ctx, &pl) == INGOT_OK ? pl.cuda_device : -1;
}

/* The epochs table's row of @p b's epoch (started at @p t when it is new); NULL only when memory
 * for a new epoch's row ran out (said once; the totals stay whole). */
/* The disk tier's bytes read below so far (0 without the tier). */
static double run_below(ingot_loader_h l)
{
    ingot_loader_stats_t s = {.field_mask = INGOT_LOADER_STATS_FIELD_DISK};
    return ingot_loader_stats(l, &s) == INGOT_OK ? (double)s.disk_bytes_below : 0;
}

static double *run_epoch(ingot_loader_h l, bench_result_t *r, const ingot_batch_t *b, double t,
                         double *t_epoch_p)
{
    if (r->epochs_seen == 0 || r->epoch_last != b->epoch) {
        r->epochs_seen++;
        r->epoch_last = b->epoch;
    }
    if (r->nepochs == 0 || r->epochs[r->nepochs - 1][E_EPOCH] != (double)b->epoch) {
        if (r->epochs_cut) {
            return NULL;
        }
        if (r->nepochs == r->epochs_cap) { /* once per epoch: off the per-step path */
            uint64_t cap = r->epochs_cap ? 2 * r->epochs_cap : RUN_EPOCHS_FIRST;
            void *grown = realloc(r->epochs, (size_t)cap * sizeof(*r->epochs));
            if (grown == NULL) {
                fprintf(stderr,
                        "ingot-bench: out of memory for the row of epoch %" PRIu64
                        "; the per-epoch table stops at %" PRIu64 " epochs\n",
                        b->epoch, r->nepochs);
                r->epochs_cut = 1;
                return NULL;
            }
            r->epochs = grown;
            memset(r->epochs + r->nepochs, 0, (size_t)(cap - r->nepochs) * sizeof(*r->epochs));
            r->epochs_cap = cap;
        }
        r->epochs[r->nepochs][E_EPOCH] = (double)b->epoch;
        /* so far (the run's first reads, before its first batch, the first epoch's): made the
         * epoch's at the end */
        r->epochs[r->nepochs][E_BELOW] = r->nepochs == 0 ? 0 : run_below(l);
        r->nepochs++;
        *t_epoch_p = t;
    }
    return r->epochs[r->nepochs - 1];
}

/* Every step until the end of data or --steps; @p r gets the totals and the epochs. */
static ingot_status_t run_steps(ingot_loader_h l, const bench_args_t *a, int bar, bench_result_t *r,
                                double *t_first_p)
{
    double t_start = report_now(), t_epoch = t_start, t_prev = t_start;
    ingot_batch_t b;
    ingot_status_t st = INGOT_OK;
    while ((a->steps == 0 || r->steps < a->steps) && (st = ingot_loader_next(l, &b)) == INGOT_OK) {
        double t_got = report_now();
        double c = bench_compute(a, &b);
        double *e = run_epoch(l, r, &b, t_prev, &t_epoch);
        if (e != NULL && r->steps > 0) { /* the pipeline's fill stays out, as in the totals */
            e[E_STEPS] += 1;
            e[E_COMPUTE] += c;
            e[E_STALL] += t_got - t_prev;
        }
        r->compute_s += (r->steps > 0) ? c : 0;
        r->samples += b.count;
        r->bytes += b.bytes;
        st = ingot_loader_release(l, &b);
        if (st != INGOT_OK) {
            return st;
        }
        if (r->steps == 0) {
            *t_first_p = report_now();
            r->samples0 = b.count;
            r->bytes0 = b.bytes;
        }
        t_prev = report_now();
        if (e != NULL && r->steps > 0) {
            e[E_WALL] = t_prev - (r->nepochs == 1 ? *t_first_p : t_epoch);
        }
        if (e != NULL && (b.epoch_step + 1) % RUN_RSS_EVERY == 0) {
            e[E_RSS] = (double)bench_rss(); /* a flat RSS over epochs: nothing leaks */
        }
        if (++r->steps % RUN_PROGRESS_EVERY == 0 && bar) {
            report_progress(stderr, r->steps, a->steps, "steps", t_prev - t_start);
        }
    }
    return st;
}

uint64_t bench_rss(void)
{
    unsigned long long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (f == NULL) {
        return 0;
    }
    int n = fscanf(f, "%llu %llu", &size, &resident);
    fclose(f);
    return n == 2 ? (uint64_t)resident * (uint64_t)sysconf(_SC_PAGESIZE) : 0;
}

/* Epoch @p i's object-store requests (none when the manifest is local). */
static void run_store(ingot_loader_h l, bench_result_t *r, uint64_t i)
{
    ingot_loader_store_stats_t ss = {.field_mask = INGOT_LOADER_STORE_STATS_FIELD_COUNTS |
                                                   INGOT_LOADER_STORE_STATS_FIELD_NODE};
    r->epochs[i][E_NODE] = r->node;
    r->epochs[i][E_NODE_FIRST] = r->node_first;
    if (ingot_loader_epoch_store(l, (uint64_t)r->epochs[i][E_EPOCH], &ss) == INGOT_OK) {
        r->epochs[i][E_NODE_GETS] = (double)ss.node_requests;
        r->epochs[i][E_NODE_BYTES] = (double)ss.node_bytes;
        r->epochs[i][E_NODE_NEEDED] = (double)ss.node_needed;
        r->epochs[i][E_GETS] = (double)ss.requests;
        r->epochs[i][E_GET_BYTES] = (double)ss.bytes;
        r->epochs[i][E_RETRIES] = (double)(ss.retries_throttle + ss.retries_server +
                                           ss.retries_network + ss.retries_stall + ss.retries_auth);
        r->epochs[i][E_READS] = (double)ss.samples;
    }
}

/* Where each epoch's bytes came from, and the cache's paths. */
static void run_sources(ingot_loader_h l, bench_result_t *r)
{
    double below = run_below(l); /* each epoch's: from its start to the next one's */
    for (uint64_t i = r->nepochs; i-- > 0;) {
        double at = r->epochs[i][E_BELOW];
        r->epochs[i][E_BELOW] = below - at;
        below = at;
    }
    for (uint64_t i = 0; i < r->nepochs; i++) {
        ingot_loader_epoch_bytes_t eb;
        if (ingot_loader_epoch_bytes(l, (uint64_t)r->epochs[i][E_EPOCH], &eb) == INGOT_OK) {
            r->epochs[i][E_STORAGE] = (double)eb.bytes_storage;
            r->epochs[i][E_PEER] = (double)eb.bytes_peer;
            r->epochs[i][E_LOCAL] = (double)eb.bytes_local;
            r->epochs[i][E_DISK] = (double)eb.bytes_disk;
        }
        run_store(l, r, i);
    }
    if (ingot_loader_cache_paths(l, r->paths, sizeof(r->paths)) != INGOT_OK) {
        r->paths[0] = '\0';
    }
    if (ingot_loader_disk_report(l, r->disk, sizeof(r->disk)) != INGOT_OK) {
        r->disk[0] = '\0';
    }
}

ingot_status_t bench_run(ingot_ctx_h ctx, const bench_args_t *a, const char *manifest, int rank,
                         int world, bench_result_t *r)
{
    ingot_loader_h l;
    memset(r, 0, sizeof(*r));
    ingot_placement_t pl = {.field_mask = INGOT_PLACEMENT_FIELD_NODE};
    if (ingot_placement_get(ctx, &pl) == INGOT_OK) {
        r->node = pl.node_id;
        r->node_first = pl.local_rank == 0;
    }
    ingot_status_t st = run_loader(ctx, a, manifest, world, &l);
    if (st != INGOT_OK) {
        return st;
    }
    st = bench_compute_init(a, run_device(ctx, a));
    if (st != INGOT_OK) {
        ingot_loader_destroy(l);
        return st;
    }
    double t_first = 0;
    int bar = a->progress && rank == 0 && isatty(2);
    st = run_steps(l, a, bar, r, &t_first);
    if (bar) {
        fprintf(stderr, "\n");
    }
    double t_end = report_now();
    r->st.field_mask = INGOT_LOADER_STATS_FIELD_COUNTS | INGOT_LOADER_STATS_FIELD_STALL |
                       INGOT_LOADER_STATS_FIELD_STAGES | INGOT_LOADER_STATS_FIELD_MEMORY |
                       INGOT_LOADER_STATS_FIELD_DISK | INGOT_LOADER_STATS_FIELD_STORE |
                       INGOT_LOADER_STATS_FIELD_REREAD | INGOT_LOADER_STATS_FIELD_HEDGE |
                       INGOT_LOADER_STATS_FIELD_VERIFY;
    ingot_loader_stats(l, &r->st);
    run_sources(l, r);
    r->rss_bytes = bench_rss();
    ingot_loader_destroy(l);
    if (st != INGOT_OK && st != INGOT_END_OF_DATA) {
        return st;
    }
    r->wall_s = t_end - (t_first ? t_first : t_end);
    r->stall_s = (double)r->st.stall_ns / RUN_NS_PER_S;
    r->au = r->wall_s > 0 ? r->compute_s / r->wall_s : 0;
    return INGOT_OK;
}

void bench_result_free(bench_result_t *r)
{
    free(r->epochs);
    r->epochs = NULL;
    r->nepochs = r->epochs_cap = 0;
}

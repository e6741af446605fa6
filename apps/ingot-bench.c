/*
 * ingot-bench: run the loader with an emulated compute step per batch, as DLIO / MLPerf Storage
 * do, and report accelerator utilisation (AU = compute time / wall time, first step excluded),
 * throughput, data stall and batch latency per rank and aggregated. --generate makes a
 * synthetic dataset first (rank 0 writes, the others wait), so runs need no other data.
 * Output: a header block (versions, config, rank -> device), a table with a units row, and
 * with --json one JSON object (stdout, or a file with --json=FILE). Exits 1 when the aggregate
 * AU is below --min-au. Modules: apps/bench/ (bench.h), apps/common/report.h.
 */
#include "bench/bench.h"
#include "bench/output.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The manifest to run over; with --generate, rank 0 makes it while the others wait. */
static int bench_manifest(const bench_args_t *a, int rank, char *manifest, size_t len)
{
    int rc = 0;
    if (a->generate == NULL) {
        snprintf(manifest, len, "%s", a->manifest);
        return 0;
    }
    if (rank == 0) {
        rc = ingot_bench_generate(a);
    }
    snprintf(manifest, len, "%s/" INGOT_PACK_MANIFEST_NAME, a->generate);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

/* Gather every rank's metrics and placement; rank 0 prints. Returns the exit code (agreed). */
static int bench_report(ingot_ctx_h ctx, const bench_args_t *a, const char *manifest, int rank,
                        int world, const bench_result_t *r)
{
    double mine[M_COUNT], agg[M_COUNT], *all = malloc(sizeof(double) * M_COUNT * (size_t)world);
    ingot_report_rank_t *ranks = NULL;
    int rc = 0;
    if (all == NULL) {
        fprintf(stderr, "ingot-bench: rank %d: out of memory gathering metrics\n", rank);
        MPI_Abort(MPI_COMM_WORLD, BENCH_EXIT_FAIL); /* the others wait in the gather */
    }
    const int per_rank = BENCH_EPOCHS_MAX * E_COUNT;
    double *epochs = malloc(sizeof(double) * (size_t)per_rank * (size_t)world);
    if (epochs == NULL) {
        fprintf(stderr, "ingot-bench: rank %d: out of memory gathering epochs\n", rank);
        MPI_Abort(MPI_COMM_WORLD, BENCH_EXIT_FAIL);
    }
    ingot_bench_metrics(r, mine);
    MPI_Gather(mine, M_COUNT, MPI_DOUBLE, all, M_COUNT, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(r->epochs, per_rank, MPI_DOUBLE, epochs, per_rank, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    if (ingot_report_ranks_gather(ctx, MPI_COMM_WORLD, &ranks) != INGOT_OK) {
        rc = BENCH_EXIT_FAIL;
    }
    if (rank == 0 && rc == 0) {
        ingot_bench_aggregate(all, world, agg);
        bench_output_t o = {.args = a,
                            .manifest = manifest,
                            .world = world,
                            .stats = &r->st,
                            .ranks = ranks,
                            .all = all,
                            .agg = agg,
                            .nepochs = r->nepochs,
                            .epochs = epochs,
                            .paths = r->paths};
        if (a->json == NULL || strcmp(a->json, "-") != 0) {
            ingot_bench_print(&o);
        }
        if (a->json != NULL && ingot_bench_write_json(&o) != 0) {
            rc = BENCH_EXIT_FAIL;
        }
        if (a->min_au > 0 && agg[M_AU] < a->min_au) {
            fprintf(stderr, "ingot-bench: aggregate AU %.4f is below --min-au %.4f\n", agg[M_AU],
                    a->min_au);
            rc = BENCH_EXIT_FAIL;
        }
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(all);
    free(epochs);
    free(ranks);
    return rc;
}

int main(int argc, char **argv)
{
    bench_args_t a;
    int rank, world, ok, all_ok = 0;
    ingot_bench_args_parse(argc, argv, &a);
    ingot_ctx_h ctx;
    if (ingot_config_check() != INGOT_OK || ingot_init(NULL, &ctx) != INGOT_OK) {
        return BENCH_EXIT_FAIL; /* the variable or the failing step was logged */
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    char manifest[PATH_MAX];
    bench_result_t r;
    ingot_status_t st = bench_manifest(&a, rank, manifest, sizeof(manifest)) != 0
                            ? INGOT_ERR_IO
                            : ingot_bench_run(ctx, &a, manifest, rank, world, &r);
    ok = (st == INGOT_OK);
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (st != INGOT_OK) {
            fprintf(stderr, "ingot-bench: rank %d: %s\n", rank, ingot_status_string(st));
        }
        ingot_finalize(ctx);
        return BENCH_EXIT_FAIL;
    }
    int rc = bench_report(ctx, &a, manifest, rank, world, &r);
    ingot_finalize(ctx);
    return rc;
}

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
#include "common/cli.h"
#include "common/job.h"

#include <inttypes.h>
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
        rc = bench_generate(a);
    }
    snprintf(manifest, len, "%s/" INGOT_PACK_MANIFEST_NAME, a->generate);
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    return rc;
}

/* Every rank's per-epoch rows, padded to the most any rank has, gathered in *all_p on rank 0 (a
 * rank may deliver fewer epochs when --steps ends it first). 0, or -1 on every rank. */
static int bench_gather_epochs(const bench_result_t *r, int rank, int world, double **all_p,
                               uint64_t *rows_p, uint64_t *left_out_p)
{
    uint64_t mine[2] = {r->nepochs, r->epochs_seen - r->nepochs}, most[2];
    MPI_Allreduce(mine, most, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
    size_t per_rank = (size_t)most[0] * E_COUNT;
    double *send = calloc(per_rank ? per_rank : 1, sizeof(double));
    double *all = rank == 0 ? calloc(per_rank * (size_t)world + 1, sizeof(double)) : NULL;
    int ok = send != NULL && (rank != 0 || all != NULL), all_ok;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all_ok && per_rank > 0) {
        if (r->nepochs > 0 && send != NULL && r->epochs != NULL) {
            memcpy(send, r->epochs, (size_t)r->nepochs * sizeof(*r->epochs));
        }
        MPI_Gather(send, (int)per_rank, MPI_DOUBLE, all, (int)per_rank, MPI_DOUBLE, 0,
                   MPI_COMM_WORLD);
    }
    free(send);
    if (!all_ok) {
        free(all);
        if (rank == 0) {
            fprintf(stderr, "ingot-bench: out of memory gathering %" PRIu64 " epochs of %d ranks\n",
                    most[0], world);
        }
        return -1;
    }
    *all_p = all;
    *rows_p = most[0];
    *left_out_p = most[1];
    return 0;
}

/* Gather every rank's metrics and placement; rank 0 prints. Returns the exit code (agreed). */
static int bench_report(ingot_ctx_h ctx, const bench_args_t *a, const char *manifest, int rank,
                        int world, const bench_result_t *r)
{
    double mine[M_COUNT], agg[M_COUNT], *all = malloc(sizeof(double) * M_COUNT * (size_t)world);
    report_rank_t *ranks = NULL;
    uint64_t rows = 0, left_out = 0;
    int ok = all != NULL, rc = 0;
    MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!ok) {
        if (all == NULL) {
            fprintf(stderr, "ingot-bench: rank %d: out of memory gathering metrics\n", rank);
        }
        free(all);
        return BENCH_EXIT_FAIL;
    }
    bench_metrics(r, mine);
    MPI_Gather(mine, M_COUNT, MPI_DOUBLE, all, M_COUNT, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    double *epochs = NULL;
    if (bench_gather_epochs(r, rank, world, &epochs, &rows, &left_out) != 0 ||
        report_ranks_gather(ctx, MPI_COMM_WORLD, &ranks) != INGOT_OK) {
        rc = BENCH_EXIT_FAIL;
    }
    if (rank == 0 && rc == 0) {
        bench_aggregate(all, world, agg);
        bench_output_t o = {.args = a,
                            .manifest = manifest,
                            .world = world,
                            .stats = &r->st,
                            .ranks = ranks,
                            .all = all,
                            .agg = agg,
                            .nepochs = rows,
                            .epochs_left_out = left_out,
                            .epochs = epochs,
                            .paths = r->paths,
                            .disk = r->disk};
        if (a->json == NULL || strcmp(a->json, "-") != 0) {
            bench_print(&o);
        }
        if (a->json != NULL && bench_write_json(&o) != 0) {
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
    int rank, world;
    cli_quiet_begin(); /* every rank parses; a usage error is said once */
    bench_args_parse(argc, argv, &a);
    cli_quiet_end();
    ingot_ctx_h ctx;
    if (ingot_init(NULL, &ctx) != INGOT_OK) {
        return BENCH_EXIT_FAIL; /* agreed on every rank, said once (the variable or the step) */
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    char manifest[PATH_MAX];
    bench_result_t r = {0};
    ingot_status_t st = bench_manifest(&a, rank, manifest, sizeof(manifest)) != 0
                            ? INGOT_ERR_IO
                            : bench_run(ctx, &a, manifest, rank, world, &r);
    /* Every rank gets here: the loader's destroy is collective, so even a fault one rank saw
     * (a damaged sample) is agreed on; its cause was logged where it was found (the library's
     * line, or the generator's), so nothing more is said. */
    int rc = app_job_agree(st != INGOT_OK ? BENCH_EXIT_FAIL : 0, NULL);
    if (rc == 0) {
        rc = bench_report(ctx, &a, manifest, rank, world, &r);
    }
    bench_result_free(&r);
    ingot_finalize(ctx);
    return rc;
}

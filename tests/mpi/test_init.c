/*
 * ingot_init / ingot_finalize over MPI.
 *   test_init ok          trainer owns MPI; two contexts (world and a split) side by side
 *   test_init self-mpi    ingot initialises and finalises MPI itself
 *   test_init expect-config-error
 *                         some rank has a bad or different INGOT_* value: every rank must get
 *                         INGOT_ERR_CONFIG (none may hang in a collective)
 */
#include "unit/test.h"
#include <ingot/ingot.h>

static void run_ok(void)
{
    int provided, wrank, wsize;
    MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    ingot_ctx_h world, half;
    CHECK_OK(ingot_init(NULL, &world));
    MPI_Comm split;
    MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, wrank, &split);
    ingot_init_params_t params = {.field_mask = INGOT_INIT_PARAM_FIELD_COMM, .comm = split};
    CHECK_OK(ingot_init(&params, &half));
    ingot_ctx_attr_t a, b;
    CHECK_OK(ingot_ctx_query(world, &a));
    CHECK_OK(ingot_ctx_query(half, &b));
    CHECK(a.rank == wrank && a.size == wsize && a.mpi_owned == 0);
    CHECK(a.mpi_thread_level == provided);
    CHECK(b.rank == wrank / 2 && b.size == (wsize + 1 - wrank % 2) / 2);
    CHECK_STATUS(ingot_ctx_query(NULL, &a), INGOT_ERR_INVALID_PARAM);
    /* The context carries this rank's placement: one node here, CPU-only, ranks 0..size-1. */
    ingot_placement_t pl;
    CHECK_OK(ingot_placement_get(world, &pl));
    CHECK(pl.node_count == 1 && pl.node_id == 0 && pl.local_rank == wrank);
    CHECK(pl.local_size == wsize && pl.node_leader == 0 && pl.hostname[0] != '\0');
    CHECK(pl.gpu_index == -1 && pl.cuda_device == -1 && pl.cpuset[0] != '\0');
    CHECK_STATUS(ingot_placement_get(world, NULL), INGOT_ERR_INVALID_PARAM);
    ingot_topology_summary_t sum;
    CHECK_OK(ingot_topology_query(world, &sum));
    ingot_finalize(half);
    ingot_finalize(world);
    ingot_finalize(NULL);
    MPI_Comm_free(&split);
    int finalized = 0;
    MPI_Finalized(&finalized);
    CHECK(!finalized); /* the trainer's MPI stays up */
    MPI_Finalize();
}

static void run_self_mpi(void)
{
    ingot_ctx_h ctx;
    ingot_init_params_t bad = {.field_mask = INGOT_INIT_PARAM_FIELD_COMM, .comm = MPI_COMM_WORLD};
    CHECK_STATUS(ingot_init(&bad, &ctx), INGOT_ERR_INVALID_PARAM); /* comm before MPI_Init */
    CHECK_OK(ingot_init(NULL, &ctx));
    ingot_ctx_attr_t a;
    CHECK_OK(ingot_ctx_query(ctx, &a));
    CHECK(a.mpi_owned == 1 && a.size >= 1);
    ingot_finalize(ctx);
    int finalized = 0;
    MPI_Finalized(&finalized);
    CHECK(finalized);
}

static void run_expect_config_error(void)
{
    MPI_Init(NULL, NULL);
    ingot_ctx_h ctx = (ingot_ctx_h)0x1;
    CHECK_STATUS(ingot_init(NULL, &ctx), INGOT_ERR_CONFIG);
    CHECK(ctx == (ingot_ctx_h)0x1); /* output untouched on failure */
    MPI_Barrier(MPI_COMM_WORLD);    /* every rank got here: nobody hung */
    MPI_Finalize();
}

int main(int argc, char **argv)
{
    const char *mode = (argc > 1) ? argv[1] : "ok";
    if (strcmp(mode, "ok") == 0) {
        run_ok();
    } else if (strcmp(mode, "self-mpi") == 0) {
        run_self_mpi();
    } else if (strcmp(mode, "expect-config-error") == 0) {
        run_expect_config_error();
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}

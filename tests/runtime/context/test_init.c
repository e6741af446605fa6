/*
 * ingot_init / ingot_finalize over MPI.
 *   test_init ok          trainer owns MPI; two contexts (world and a split) side by side
 *   test_init self-mpi    ingot initialises and finalises MPI itself
 *   test_init expect-config-error
 *                         some rank has a bad or different INGOT_* value: every rank must get
 *                         INGOT_ERR_CONFIG (none may hang in a collective)
 *   test_init expect-launch-refused
 *                         a singleton whose environment a launcher filled (launch_check.sh): init
 *                         must refuse with INGOT_ERR_MISMATCH, leave MPI finalised as it found
 *                         it, and print its message on stdout for the script to read
 */
#include "common/test.h"
#include <ingot/ingot.h>

/** Byte the output structs are filled with before a query: fields left out must keep it. */
#define SENTINEL     0xa5
#define SENTINEL_INT ((int)0xa5a5a5a5u)
#define SENTINEL_U64 0xa5a5a5a5a5a5a5a5ull

/* A query with field_mask 0 writes nothing: every byte keeps the sentinel. */
#define CHECK_MASK_ZERO_WRITES_NOTHING(_query, _ctx, _type) \
    do { \
        _type x_, x0_; \
        memset(&x_, SENTINEL, sizeof(x_)); \
        x_.field_mask = 0; \
        memcpy(&x0_, &x_, sizeof(x_)); /* padding included */ \
        CHECK_OK(_query(_ctx, &x_)); \
        CHECK(memcmp(&x_, &x0_, sizeof(x_)) == 0); \
    } while (0)

/* Output structs: a query writes only the fields its field_mask names (mask 0: nothing). */
static void check_field_masks(ingot_ctx_h ctx)
{
    CHECK_MASK_ZERO_WRITES_NOTHING(ingot_ctx_query, ctx, ingot_ctx_attr_t);
    CHECK_MASK_ZERO_WRITES_NOTHING(ingot_placement_get, ctx, ingot_placement_t);
    CHECK_MASK_ZERO_WRITES_NOTHING(ingot_topology_query, ctx, ingot_topology_summary_t);
    ingot_ctx_attr_t a;
    memset(&a, SENTINEL, sizeof(a));
    a.field_mask = INGOT_CTX_ATTR_FIELD_SIZE;
    CHECK_OK(ingot_ctx_query(ctx, &a));
    CHECK(a.field_mask == INGOT_CTX_ATTR_FIELD_SIZE && a.size >= 1 && a.rank == SENTINEL_INT);
    CHECK(a.mpi_thread_level == SENTINEL_INT && a.mpi_owned == SENTINEL_INT);

    ingot_runtime_info_t ri;
    memset(&ri, SENTINEL, sizeof(ri));
    ri.field_mask = INGOT_RUNTIME_INFO_FIELD_CUDA;
    CHECK_OK(ingot_runtime_info_query(&ri));
    CHECK(ri.cuda_compiled == INGOT_BUILD_CUDA && ri.cuda_device_count >= 0);
    CHECK(ri.nccl_compiled == SENTINEL_INT && ri.ucx_major == (unsigned)SENTINEL_INT);

    ingot_placement_t pl;
    memset(&pl, SENTINEL, sizeof(pl));
    pl.field_mask = INGOT_PLACEMENT_FIELD_GPU;
    CHECK_OK(ingot_placement_get(ctx, &pl));
    CHECK((pl.cuda_device == -1) == (pl.gpu_index == -1) && pl.node_id == SENTINEL_INT);
    CHECK(pl.local_rank == SENTINEL_INT && (unsigned char)pl.hostname[0] == SENTINEL);
    CHECK((unsigned char)pl.nic_name[0] == SENTINEL && (unsigned char)pl.cpuset[0] == SENTINEL);
    CHECK(pl.flags == SENTINEL_U64 && (unsigned char)pl.conflict[0] == SENTINEL);

    ingot_topology_summary_t s;
    memset(&s, SENTINEL, sizeof(s));
    s.field_mask = INGOT_TOPOLOGY_SUMMARY_FIELD_HOST;
    CHECK_OK(ingot_topology_query(ctx, &s));
    CHECK(s.hostname[0] != '\0' && s.packages == SENTINEL_INT && s.storage == SENTINEL_INT);
    CHECK((unsigned char)s.allowed_cpuset[0] == SENTINEL);
    s.field_mask = INGOT_TOPOLOGY_SUMMARY_FIELD_COUNTS;
    CHECK_OK(ingot_topology_query(ctx, &s));
    if (s.nics > 0) {
        ingot_topology_device_t d;
        memset(&d, SENTINEL, sizeof(d));
        d.field_mask = INGOT_TOPOLOGY_DEVICE_FIELD_NAME;
        CHECK_OK(ingot_topology_device_query(ctx, INGOT_TOPOLOGY_DEVICE_NIC, 0, &d));
        CHECK(d.kind == INGOT_TOPOLOGY_DEVICE_NIC && d.index == 0 && d.name[0] != '\0');
        CHECK(d.numa_node == SENTINEL_INT && d.port == SENTINEL_INT);
        CHECK((unsigned char)d.locality[0] == SENTINEL);
    }
}

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
    const uint64_t all_attr = INGOT_CTX_ATTR_FIELD_RANK | INGOT_CTX_ATTR_FIELD_SIZE |
                              INGOT_CTX_ATTR_FIELD_THREAD_LEVEL | INGOT_CTX_ATTR_FIELD_MPI_OWNED;
    ingot_ctx_attr_t a = {.field_mask = all_attr}, b = {.field_mask = all_attr};
    CHECK_OK(ingot_ctx_query(world, &a));
    CHECK_OK(ingot_ctx_query(half, &b));
    CHECK(a.rank == wrank && a.size == wsize && a.mpi_owned == 0);
    CHECK(a.mpi_thread_level == provided);
    CHECK(b.rank == wrank / 2 && b.size == (wsize + 1 - wrank % 2) / 2);
    CHECK_STATUS(ingot_ctx_query(NULL, &a), INGOT_ERR_INVALID_PARAM);
    check_field_masks(world);
    /* The context carries this rank's placement: one node here, ranks 0..size-1; a GPU when the
     * node has one (its GPUs shared by the ranks), else none. */
    ingot_placement_t pl = {.field_mask = INGOT_PLACEMENT_FIELD_NODE | INGOT_PLACEMENT_FIELD_GPU |
                                          INGOT_PLACEMENT_FIELD_CPUS};
    CHECK_OK(ingot_placement_get(world, &pl));
    CHECK(pl.node_count == 1 && pl.node_id == 0 && pl.local_rank == wrank);
    CHECK(pl.local_size == wsize && pl.node_leader == 0 && pl.hostname[0] != '\0');
    CHECK((pl.gpu_index == -1) == (pl.cuda_device == -1) && pl.cpuset[0] != '\0');
    CHECK_STATUS(ingot_placement_get(world, NULL), INGOT_ERR_INVALID_PARAM);
    ingot_topology_summary_t sum = {.field_mask = INGOT_TOPOLOGY_SUMMARY_FIELD_COUNTS};
    CHECK_OK(ingot_topology_query(world, &sum));
    CHECK(sum.pus >= 1 && sum.cores >= 1);
    CHECK(pl.gpu_index < sum.gpus && (sum.gpus > 0 || pl.gpu_index == -1));
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
    ingot_ctx_attr_t a = {.field_mask = INGOT_CTX_ATTR_FIELD_MPI_OWNED | INGOT_CTX_ATTR_FIELD_SIZE};
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
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "rank %d last error: %s\n", rank, ingot_last_error()); /* why, on every rank */
    MPI_Barrier(MPI_COMM_WORLD); /* every rank got here: nobody hung */
    MPI_Finalize();
}

static void run_expect_launch_refused(void)
{
    ingot_ctx_h ctx = (ingot_ctx_h)0x1;
    CHECK_STATUS(ingot_init(NULL, &ctx), INGOT_ERR_MISMATCH);
    CHECK(ctx == (ingot_ctx_h)0x1);
    int finalized = 0;
    MPI_Finalized(&finalized);
    CHECK(finalized); /* ingot initialised MPI for the attempt, and finalised it again */
    printf("refused: %s\n", ingot_last_error());
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
    } else if (strcmp(mode, "expect-launch-refused") == 0) {
        run_expect_launch_refused();
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    return 0;
}

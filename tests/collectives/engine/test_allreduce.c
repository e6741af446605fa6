/*
 * The public all-reduce and gradient buckets over MPI (any rank count).
 *   test_allreduce exact       one-shot all-reduce of integer-valued floats, exact, for sizes on
 *                              both sides of the ring threshold, in place and out of place, sum
 *                              and average; a request completed while the trainer calls nothing
 *   test_allreduce exact-serialized
 *                              the same where MPI grants only MPI_THREAD_SERIALIZED: no progress
 *                              thread, requests advance inside ingot calls, and the stats say
 *                              the overlap is reduced
 *   test_allreduce buckets     registered gradients in buckets: identical to one all-reduce over
 *                              their concatenation (bitwise for integer values, within
 *                              n*eps*sum|x| otherwise), for caps that make one bucket, several,
 *                              and tensors larger than the cap
 *   test_allreduce bad         bad input: each named, nothing hangs
 *   test_allreduce stop        the last rank stops itself (SIGSTOP) before a reduction: the
 *                              others' wait fails within INGOT_TIMEOUT naming the reduction,
 *                              and they end the job with MPI_Abort, as a trainer does
 *   test_allreduce stop-finalize
 *                              the same, but ingot owns MPI and the survivors only call
 *                              ingot_finalize(): its MPI_Finalize cannot complete, and the
 *                              watchdog ends them past INGOT_TIMEOUT
 *   test_allreduce kill        the last rank kills itself before the reduction: the launcher
 *                              ends the survivors
 * (the fault modes are run by coll_fault.sh, which bounds and checks them)
 */
#include "common/test.h"
#include <ingot/ingot.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <signal.h>
#include <unistd.h>

static int rank, size;

/* Element i of rank r: an integer, so every sum is exact in float32 (|x| < 2^24 / size). */
static float value(int r, size_t i)
{
    return (float)((int)((i * 7 + (size_t)r * 13) % 1001) - 500);
}

static float expected_sum(size_t i)
{
    float s = 0;
    for (int r = 0; r < size; r++) {
        s += value(r, i);
    }
    return s;
}

static void check_one(ingot_comm_h comm, size_t n, bool in_place, ingot_op_t op)
{
    float *send = malloc(n * sizeof(float)), *recv = malloc(n * sizeof(float));
    CHECK(send != NULL && recv != NULL);
    for (size_t i = 0; i < n; i++) {
        send[i] = value(rank, i);
        recv[i] = -1e30f;
    }
    float *dst = in_place ? send : recv;
    ingot_request_h req = NULL;
    CHECK_OK(ingot_allreduce_start(comm, send, dst, n, INGOT_DTYPE_FLOAT32, op, &req));
    CHECK_OK(ingot_request_wait(&req));
    CHECK(req == NULL);
    for (size_t i = 0; i < n; i++) {
        float want = expected_sum(i);
        if (op == INGOT_OP_AVG) {
            want = want / (float)size;
            if (fabsf(dst[i] - want) > 1e-5f * fabsf(want) + 1e-6f) {
                fprintf(stderr, "rank %d: n %zu avg element %zu: %g, want %g\n", rank, n, i, dst[i],
                        want);
                CHECK(0);
            }
        } else if (dst[i] != want) {
            fprintf(stderr, "rank %d: n %zu %s element %zu: %g, want %g\n", rank, n,
                    in_place ? "in place" : "out of place", i, dst[i], want);
            CHECK(0);
        }
    }
    free(send);
    free(recv);
}

/* While every rank sleeps and calls nothing, a started reduction completes in the background
 * (where MPI granted MPI_THREAD_MULTIPLE: the progress thread). */
static void check_background(ingot_comm_h comm)
{
    ingot_comm_stats_t s = {.field_mask = INGOT_COMM_STATS_FIELD_SETUP};
    CHECK_OK(ingot_comm_stats(comm, &s));
    if (!s.progress_thread) {
        CHECK_CONTAINS(s.reason, "overlap reduced");
        printf("rank %d: no progress thread (%s): background completion not checked\n", rank,
               s.reason);
        return;
    }
    size_t n = 1 << 20;
    float *buf = malloc(n * sizeof(float));
    CHECK(buf != NULL);
    for (size_t i = 0; i < n; i++) {
        buf[i] = value(rank, i);
    }
    s.field_mask = INGOT_COMM_STATS_FIELD_COUNTS;
    CHECK_OK(ingot_comm_stats(comm, &s));
    uint64_t completed = s.completed, background = s.background;
    ingot_request_h req = NULL;
    CHECK_OK(ingot_allreduce_start(comm, buf, buf, n, INGOT_DTYPE_FLOAT32, INGOT_OP_SUM, &req));
    CHECK_OK(ingot_comm_stats(comm, &s));
    /* Completed on the trainer's thread inside the start call (alone, or peers very quick)? */
    bool by_trainer = s.completed == completed + 1 && s.background == background;
    sleep(1); /* the trainer computes: no ingot or MPI call */
    CHECK_OK(ingot_comm_stats(comm, &s));
    /* Complete without a test or a wait: in the background, unless inside the start call. */
    CHECK(s.completed == completed + 1);
    CHECK(s.background == background + (by_trainer ? 0 : 1));
    CHECK_OK(ingot_request_test(&req)); /* done already: no wait */
    CHECK(req == NULL);
    for (size_t i = 0; i < n; i++) {
        CHECK(buf[i] == expected_sum(i));
    }
    free(buf);
}

static void mode_exact(ingot_ctx_h ctx, bool serialized)
{
    ingot_comm_params_t p = {.field_mask = INGOT_COMM_PARAM_FIELD_BACKEND,
                             .backend = INGOT_COMM_BACKEND_MPI};
    ingot_comm_h comm = NULL;
    CHECK_OK(ingot_comm_create(ctx, &p, &comm));
    const size_t sizes[] = {1, 3, 1000, 16383, 16384, 16385, 300001, 4u << 20};
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        check_one(comm, sizes[k], true, INGOT_OP_SUM);
        check_one(comm, sizes[k], false, INGOT_OP_SUM);
        check_one(comm, sizes[k], false, INGOT_OP_AVG);
        check_one(comm, sizes[k], true, INGOT_OP_AVG);
    }
    /* Several in flight at once, completed out of order by the caller. */
    float *b[3];
    ingot_request_h r[3];
    for (int k = 0; k < 3; k++) {
        b[k] = malloc((100000 + (size_t)k) * sizeof(float));
        for (size_t i = 0; i < 100000 + (size_t)k; i++) {
            b[k][i] = value(rank, i + (size_t)k);
        }
        CHECK_OK(ingot_allreduce_start(comm, b[k], b[k], 100000 + (size_t)k, INGOT_DTYPE_FLOAT32,
                                       INGOT_OP_SUM, &r[k]));
    }
    for (int k = 2; k >= 0; k--) {
        CHECK_OK(ingot_request_wait(&r[k]));
        for (size_t i = 0; i < 100000 + (size_t)k; i++) {
            CHECK(b[k][i] == expected_sum(i + (size_t)k));
        }
        free(b[k]);
    }
    check_background(comm);
    ingot_comm_stats_t s = {.field_mask = INGOT_COMM_STATS_FIELD_SETUP |
                                          INGOT_COMM_STATS_FIELD_COUNTS};
    CHECK_OK(ingot_comm_stats(comm, &s));
    CHECK(s.backend == INGOT_COMM_BACKEND_MPI && s.size == size && s.completed == s.started);
    CHECK(s.progress_thread == !serialized);
    if (serialized) {
        CHECK(s.background == 0);
        CHECK_CONTAINS(s.reason, "overlap reduced: MPI did not grant MPI_THREAD_MULTIPLE");
    }
    ingot_placement_t pl = {.field_mask = INGOT_PLACEMENT_FIELD_NODE};
    CHECK_OK(ingot_placement_get(ctx, &pl));
    if (rank == 0) {
        printf("exact: %d ranks on %d node(s), %" PRIu64 " reductions, %" PRIu64
               " completed in the background; %s\n",
               size, pl.node_count, s.completed, s.background, s.reason);
    }
    ingot_comm_destroy(comm);
}

/* Gradients of a model: tensor t has counts[t] elements. */
static void check_buckets(ingot_ctx_h ctx, const size_t *counts, size_t nt, size_t cap,
                          size_t first_cap, bool integers, size_t want_buckets)
{
    ingot_comm_params_t p = {.field_mask = INGOT_COMM_PARAM_FIELD_BACKEND |
                                           INGOT_COMM_PARAM_FIELD_BUCKETS,
                             .backend = INGOT_COMM_BACKEND_MPI,
                             .bucket_bytes = cap,
                             .first_bucket_bytes = first_cap};
    ingot_comm_h comm = NULL;
    CHECK_OK(ingot_comm_create(ctx, &p, &comm));
    size_t total = 0;
    for (size_t t = 0; t < nt; t++) {
        total += counts[t];
    }
    float *flat = malloc(total * sizeof(float)), *ref = malloc(total * sizeof(float));
    float *abs_sum = malloc(total * sizeof(float));
    ingot_grad_t *g = calloc(nt, sizeof(*g));
    float **tens = calloc(nt, sizeof(*tens));
    CHECK(flat && ref && abs_sum && g && tens);
    srand(1234 + (unsigned)rank);
    for (size_t i = 0; i < total; i++) {
        flat[i] = integers ? value(rank, i) : (float)rand() / RAND_MAX * 2.0f - 1.0f;
    }
    for (size_t t = 0, o = 0; t < nt; o += counts[t], t++) {
        tens[t] = malloc(counts[t] * sizeof(float));
        memcpy(tens[t], flat + o, counts[t] * sizeof(float));
        g[t] = (ingot_grad_t){.buf = tens[t], .count = counts[t], .dtype = INGOT_DTYPE_FLOAT32};
    }
    for (size_t i = 0; i < total; i++) {
        abs_sum[i] = fabsf(flat[i]);
    }
    ingot_request_h req;
    CHECK_OK(ingot_allreduce_start(comm, flat, ref, total, INGOT_DTYPE_FLOAT32, INGOT_OP_SUM,
                                   &req));
    CHECK_OK(ingot_request_wait(&req));
    CHECK_OK(ingot_allreduce_start(comm, abs_sum, abs_sum, total, INGOT_DTYPE_FLOAT32, INGOT_OP_SUM,
                                   &req));
    CHECK_OK(ingot_request_wait(&req));
    CHECK_OK(ingot_grads_register(comm, g, nt, INGOT_OP_SUM));
    ingot_comm_stats_t s = {.field_mask = INGOT_COMM_STATS_FIELD_COUNTS};
    CHECK_OK(ingot_comm_stats(comm, &s));
    CHECK(s.buckets == want_buckets);
    for (int step = 0; step < 2; step++) {
        if (step == 1) { /* the tensors are reduced in place: start again from the inputs */
            for (size_t t = 0, o = 0; t < nt; o += counts[t], t++) {
                memcpy(tens[t], flat + o, counts[t] * sizeof(float));
            }
        }
        for (size_t t = nt; t-- > 0;) { /* backward: last layer first */
            CHECK_OK(ingot_grads_ready(comm, t));
        }
        CHECK_OK(ingot_grads_wait(comm));
        for (size_t t = 0, o = 0; t < nt; o += counts[t], t++) {
            for (size_t i = 0; i < counts[t]; i++) {
                float got = tens[t][i], want = ref[o + i];
                float tol = integers ? 0.0f : (float)size * 1.2e-7f * abs_sum[o + i];
                if (fabsf(got - want) > tol) {
                    fprintf(stderr, "rank %d: tensor %zu element %zu: %.9g, want %.9g (tol %g)\n",
                            rank, t, i, got, want, tol);
                    CHECK(0);
                }
            }
        }
    }
    s.field_mask = INGOT_COMM_STATS_FIELD_TIMES;
    CHECK_OK(ingot_comm_stats(comm, &s));
    CHECK(s.steps == 2);
    ingot_comm_destroy(comm);
    for (size_t t = 0; t < nt; t++) {
        free(tens[t]);
    }
    free(tens);
    free(g);
    free(flat);
    free(ref);
    free(abs_sum);
}

/* Registration while a one-shot reduction is in flight: it completes first (the agreement of
 * the registration never interleaves with it), and both results are right. */
static void check_register_in_flight(ingot_ctx_h ctx)
{
    ingot_comm_params_t p = {.field_mask = INGOT_COMM_PARAM_FIELD_BACKEND,
                             .backend = INGOT_COMM_BACKEND_MPI};
    ingot_comm_h comm = NULL;
    CHECK_OK(ingot_comm_create(ctx, &p, &comm));
    size_t n = 300001;
    float *x = malloc(n * sizeof(float)), g[100];
    CHECK(x != NULL);
    for (size_t i = 0; i < n; i++) {
        x[i] = value(rank, i);
    }
    for (int i = 0; i < 100; i++) {
        g[i] = value(rank, (size_t)i);
    }
    ingot_request_h req;
    CHECK_OK(ingot_allreduce_start(comm, x, x, n, INGOT_DTYPE_FLOAT32, INGOT_OP_SUM, &req));
    ingot_grad_t grad = {g, 100, INGOT_DTYPE_FLOAT32};
    CHECK_OK(ingot_grads_register(comm, &grad, 1, INGOT_OP_SUM));
    CHECK_OK(ingot_request_wait(&req));
    CHECK_OK(ingot_grads_ready(comm, 0));
    CHECK_OK(ingot_grads_wait(comm));
    for (size_t i = 0; i < n; i++) {
        CHECK(x[i] == expected_sum(i));
    }
    for (int i = 0; i < 100; i++) {
        CHECK(g[i] == expected_sum((size_t)i));
    }
    free(x);
    ingot_comm_destroy(comm);
}

static void mode_buckets(ingot_ctx_h ctx)
{
    check_register_in_flight(ctx);
    /* A small model: layer sizes as (weight, bias) pairs. */
    const size_t counts[] = {3000, 30, 200000, 500, 70000, 70, 1000, 10};
    const size_t nt = sizeof(counts) / sizeof(counts[0]);
    const size_t KiB = 1024, MiB = 1 << 20;
    for (int integers = 1; integers >= 0; integers--) {
        /* Caps above the model: one bucket. */
        check_buckets(ctx, counts, nt, 64 * MiB, 64 * MiB, integers, 1);
        /* DDP's caps scaled down: the 4 KiB first bucket holds tensors 7 and 6 (40 + 4000 B);
         * 300 KiB buckets then hold {5, 4, 3} (282,280 B), tensor 2 alone (800,000 B: over
         * the cap) and {1, 0}. */
        check_buckets(ctx, counts, nt, 300 * KiB, 4 * KiB, integers, 4);
        /* A cap below every tensor but one: each tensor a bucket of its own. */
        check_buckets(ctx, counts, nt, 64, 64, integers, 8);
    }
    if (rank == 0) {
        printf("buckets: %d ranks: bucketed reductions match one all-reduce\n", size);
    }
}

static void mode_bad(ingot_ctx_h ctx)
{
    ingot_comm_h comm = NULL;
    ingot_comm_params_t p = {.field_mask = INGOT_COMM_PARAM_FIELD_BACKEND,
                             .backend = INGOT_COMM_BACKEND_NCCL};
    ingot_runtime_info_t ri = {.field_mask = INGOT_RUNTIME_INFO_FIELD_CUDA};
    CHECK_OK(ingot_runtime_info_query(&ri));
    if (ri.cuda_device_count == 0) { /* nccl where no GPU: an error naming the ranks */
        CHECK_STATUS(ingot_comm_create(ctx, &p, &comm), INGOT_ERR_NO_DEVICE);
        CHECK_CONTAINS(ingot_last_error(), "backend nccl asked for, but rank(s) 0");
        /* auto falls back to MPI and says why */
        p.backend = INGOT_COMM_BACKEND_AUTO;
        CHECK_OK(ingot_comm_create(ctx, &p, &comm));
        ingot_comm_stats_t s = {.field_mask = INGOT_COMM_STATS_FIELD_SETUP};
        CHECK_OK(ingot_comm_stats(comm, &s));
        CHECK(s.backend == INGOT_COMM_BACKEND_MPI);
        CHECK_CONTAINS(s.reason, "auto fell back from nccl");
        CHECK_CONTAINS(s.reason, "no usable GPU");
        ingot_comm_destroy(comm);
    }
    p.backend = INGOT_COMM_BACKEND_MPI;
    CHECK_OK(ingot_comm_create(ctx, &p, &comm));
    float a[64], b[64];
    memset(a, 0, sizeof(a));
    ingot_request_h req = NULL;
    CHECK_STATUS(ingot_allreduce_start(comm, a, b, 64, INGOT_DTYPE_FLOAT16, INGOT_OP_SUM, &req),
                 INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "float16");
    CHECK_STATUS(ingot_allreduce_start(comm, a, b, 0, INGOT_DTYPE_FLOAT32, INGOT_OP_SUM, &req),
                 INGOT_ERR_INVALID_PARAM);
    CHECK_STATUS(ingot_allreduce_start(comm, a, b, 64, INGOT_DTYPE_FLOAT32, (ingot_op_t)7, &req),
                 INGOT_ERR_INVALID_PARAM);
    CHECK_STATUS(ingot_request_wait(&req), INGOT_ERR_INVALID_PARAM); /* NULL request */
    void *buf = NULL;
    CHECK_STATUS(ingot_comm_buffer_alloc(comm, 0, &buf), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "0 bytes");
    CHECK_OK(ingot_comm_buffer_alloc(comm, 1000, &buf)); /* host memory on the MPI backend */
    memset(buf, 1, 1000);
    CHECK_OK(ingot_comm_buffer_copy(comm, a, buf, sizeof(a)));
    CHECK(((unsigned char *)a)[17] == 1);
    ingot_comm_buffer_free(buf);
    memset(a, 0, sizeof(a));

    /* A tensor given twice, and an empty one. */
    ingot_grad_t g[3] = {{a, 32, INGOT_DTYPE_FLOAT32},
                         {b, 64, INGOT_DTYPE_FLOAT32},
                         {a + 16, 8, INGOT_DTYPE_FLOAT32}};
    CHECK_STATUS(ingot_grads_register(comm, g, 3, INGOT_OP_SUM), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "gradient 2");
    CHECK_CONTAINS(ingot_last_error(), "overlaps gradient 0");
    /* Counts differing across ranks: every rank fails, naming the odd ones. */
    if (size > 1) {
        g[1].count = (rank == size - 1) ? 63 : 64;
        CHECK_STATUS(ingot_grads_register(comm, g, 2, INGOT_OP_SUM), INGOT_ERR_MISMATCH);
        char want[64];
        snprintf(want, sizeof(want), "rank(s) %d registered another list", size - 1);
        CHECK_CONTAINS(ingot_last_error(), want);
        g[1].count = 64;
    }
    CHECK_STATUS(ingot_grads_ready(comm, 0), INGOT_ERR_INVALID_PARAM); /* none registered */
    CHECK_STATUS(ingot_grads_wait(comm), INGOT_ERR_INVALID_PARAM);
    CHECK_OK(ingot_grads_register(comm, g, 2, INGOT_OP_AVG));
    CHECK_STATUS(ingot_grads_register(comm, g, 2, INGOT_OP_AVG), INGOT_ERR_EXISTS);
    CHECK_STATUS(ingot_grads_ready(comm, 2), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "index 2 is not a registered gradient (2 registered)");
    CHECK_OK(ingot_grads_ready(comm, 1));
    CHECK_STATUS(ingot_grads_ready(comm, 1), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "gradient 1 marked ready twice in step 0");
    CHECK_STATUS(ingot_grads_wait(comm), INGOT_ERR_INVALID_PARAM); /* 0 is not ready */
    CHECK_CONTAINS(ingot_last_error(), "gradient 0 is not");
    CHECK_OK(ingot_grads_ready(comm, 0));
    CHECK_OK(ingot_grads_wait(comm));
    ingot_comm_destroy(comm);
    if (rank == 0) {
        printf("bad: every bad input refused with its name\n");
    }
}

/* The last rank stops (or dies) before the reduction the others start. */
static int mode_fault(ingot_ctx_h ctx, bool kill_self)
{
    ingot_comm_h comm = NULL;
    ingot_comm_params_t p = {.field_mask = INGOT_COMM_PARAM_FIELD_BACKEND,
                             .backend = INGOT_COMM_BACKEND_MPI};
    CHECK_OK(ingot_comm_create(ctx, &p, &comm));
    size_t n = 8u << 20;
    float *buf = calloc(n, sizeof(float));
    CHECK(buf != NULL);
    if (rank == size - 1) {
        fprintf(stderr, "rank %d (pid %d): %s before the all-reduce\n", rank, (int)getpid(),
                kill_self ? "killing myself" : "stopping");
        fflush(stderr);
        raise(kill_self ? SIGKILL : SIGSTOP);
    }
    ingot_request_h req = NULL;
    CHECK_OK(ingot_allreduce_start(comm, buf, buf, n, INGOT_DTYPE_FLOAT32, INGOT_OP_SUM, &req));
    ingot_status_t st = ingot_request_wait(&req);
    fprintf(stderr, "rank %d: wait returned %s: %s\n", rank, ingot_status_string(st),
            ingot_last_error());
    ingot_comm_destroy(comm); /* broken: no MPI call */
    free(buf);
    return st == INGOT_OK ? 0 : 3;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exact";
    bool self_mpi = strcmp(mode, "stop-finalize") == 0;
    int level;
    bool serialized = strcmp(mode, "exact-serialized") == 0;
    if (!self_mpi) {
        MPI_Init_thread(&argc, &argv, serialized ? MPI_THREAD_SERIALIZED : MPI_THREAD_MULTIPLE,
                        &level);
    }
    ingot_ctx_h ctx = NULL;
    CHECK_OK(ingot_init(NULL, &ctx));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rc = 0;
    if (strcmp(mode, "exact") == 0 || serialized) {
        mode_exact(ctx, serialized);
    } else if (strcmp(mode, "buckets") == 0) {
        mode_buckets(ctx);
    } else if (strcmp(mode, "bad") == 0) {
        mode_bad(ctx);
    } else if (strcmp(mode, "stop") == 0 || strcmp(mode, "kill") == 0 || self_mpi) {
        rc = mode_fault(ctx, strcmp(mode, "kill") == 0);
        if (rc != 0 && !self_mpi) {
            fprintf(stderr, "rank %d: ending the job (MPI_Abort)\n", rank);
            MPI_Abort(MPI_COMM_WORLD, rc);
        }
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        rc = 2;
    }
    ingot_finalize(ctx); /* stop-finalize: the watchdog ends the survivors in here */
    if (!self_mpi) {
        MPI_Finalize();
    }
    return rc;
}

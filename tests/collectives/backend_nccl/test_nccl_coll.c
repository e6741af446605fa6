/*
 * The NCCL backend on a GPU node (one GPU per rank; 1 rank on a 1-GPU machine). Exits 77 with
 * the reason where no CUDA device is usable or NCCL does not load.
 *   test_nccl_coll exact    float32 sums and averages (in and out of place), float16 and
 *                           bfloat16 sums of small integers (exact), buckets of device
 *                           tensors, and a host buffer refused naming it
 *   test_nccl_coll staged   the MPI backend with device gradients: staged through pinned host
 *                           memory, exact
 *   test_nccl_coll abort    a host function blocks the trainer's stream ahead of the
 *                           reduction: the wait fails at INGOT_TIMEOUT naming it, and the
 *                           abort (ncclCommAbort) is timed
 */
#include "common/test.h"
#include "base/cuda.h"
#include <ingot/ingot.h>
#include <inttypes.h>
#include <math.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <time.h>
#if INGOT_BUILD_CUDA
#    include <cuda_runtime_api.h>
#endif

#if INGOT_BUILD_CUDA && INGOT_BUILD_NCCL
static int rank, size;

static float value(int r, size_t i)
{
    return (float)((int)((i * 7 + (size_t)r * 13) % 31) - 15); /* exact in fp16 and bf16 sums */
}

static float expected_sum(size_t i)
{
    float s = 0;
    for (int r = 0; r < size; r++) {
        s += value(r, i);
    }
    return s;
}

/* float -> fp16 / bf16 bits for small integers (exact), and back. */
static uint16_t to_half(float f)
{
    if (f == 0) {
        return 0;
    }
    uint16_t sign = f < 0 ? 0x8000 : 0;
    float a = f < 0 ? -f : f;
    int e = 0;
    while (a >= 2.0f) {
        a /= 2;
        e++;
    }
    while (a < 1.0f) {
        a *= 2;
        e--;
    }
    return (uint16_t)(sign | (uint16_t)((e + 15) << 10) | (uint16_t)((a - 1.0f) * 1024.0f));
}

static float from_half(uint16_t h)
{
    if ((h & 0x7fff) == 0) {
        return 0;
    }
    int e = ((h >> 10) & 0x1f) - 15;
    float m = 1.0f + (float)(h & 0x3ff) / 1024.0f;
    float v = m;
    for (; e > 0; e--) {
        v *= 2;
    }
    for (; e < 0; e++) {
        v /= 2;
    }
    return (h & 0x8000) ? -v : v;
}

static uint16_t to_bf16(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return (uint16_t)(u >> 16); /* small integers are exact: no rounding needed */
}

static float from_bf16(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float f;
    memcpy(&f, &u, 4);
    return f;
}

static void *device_copy_of(const void *host, size_t bytes)
{
    void *d = NULL;
    CHECK(cudaMalloc(&d, bytes) == cudaSuccess);
    CHECK(cudaMemcpy(d, host, bytes, cudaMemcpyHostToDevice) == cudaSuccess);
    return d;
}

static ingot_comm_h make_comm(ingot_ctx_h ctx, ingot_comm_backend_t backend)
{
    ingot_comm_params_t p = {.field_mask = INGOT_COMM_PARAM_FIELD_BACKEND, .backend = backend};
    ingot_comm_h comm = NULL;
    CHECK_OK(ingot_comm_create(ctx, &p, &comm));
    return comm;
}

static void check_f32(ingot_comm_h comm, size_t n, bool in_place, ingot_op_t op)
{
    float *h = malloc(n * sizeof(float));
    for (size_t i = 0; i < n; i++) {
        h[i] = value(rank, i);
    }
    float *send = device_copy_of(h, n * sizeof(float)), *recv = send;
    if (!in_place) {
        CHECK(cudaMalloc((void **)&recv, n * sizeof(float)) == cudaSuccess);
    }
    ingot_request_h req;
    CHECK_OK(ingot_allreduce_start(comm, send, recv, n, INGOT_DTYPE_FLOAT32, op, &req));
    CHECK_OK(ingot_request_wait(&req));
    CHECK(cudaMemcpy(h, recv, n * sizeof(float), cudaMemcpyDeviceToHost) == cudaSuccess);
    for (size_t i = 0; i < n; i++) {
        float want = expected_sum(i) / (op == INGOT_OP_AVG ? (float)size : 1.0f);
        CHECK(fabsf(h[i] - want) <= 1e-6f * fabsf(want));
    }
    cudaFree(send);
    if (!in_place) {
        cudaFree(recv);
    }
    free(h);
}

static void check_16(ingot_comm_h comm, size_t n, ingot_dtype_t dtype)
{
    uint16_t *h = malloc(n * 2);
    for (size_t i = 0; i < n; i++) {
        h[i] = dtype == INGOT_DTYPE_FLOAT16 ? to_half(value(rank, i)) : to_bf16(value(rank, i));
    }
    uint16_t *d = device_copy_of(h, n * 2);
    ingot_request_h req;
    CHECK_OK(ingot_allreduce_start(comm, d, d, n, dtype, INGOT_OP_SUM, &req));
    CHECK_OK(ingot_request_wait(&req));
    CHECK(cudaMemcpy(h, d, n * 2, cudaMemcpyDeviceToHost) == cudaSuccess);
    for (size_t i = 0; i < n; i++) {
        float got = dtype == INGOT_DTYPE_FLOAT16 ? from_half(h[i]) : from_bf16(h[i]);
        CHECK(got == expected_sum(i));
    }
    cudaFree(d);
    free(h);
}

/* Device tensors in buckets (two caps): equal to the sums. */
static void check_buckets(ingot_ctx_h ctx, ingot_comm_backend_t backend)
{
    const size_t counts[] = {3000, 30, 200000, 500, 70000, 70};
    const size_t nt = sizeof(counts) / sizeof(counts[0]);
    ingot_comm_params_t p = {.field_mask = INGOT_COMM_PARAM_FIELD_BACKEND |
                                           INGOT_COMM_PARAM_FIELD_BUCKETS,
                             .backend = backend,
                             .bucket_bytes = 300 * 1024,
                             .first_bucket_bytes = 4096};
    ingot_comm_h comm = NULL;
    CHECK_OK(ingot_comm_create(ctx, &p, &comm));
    ingot_grad_t g[6];
    float *host[6];
    for (size_t t = 0; t < nt; t++) {
        host[t] = malloc(counts[t] * sizeof(float));
        for (size_t i = 0; i < counts[t]; i++) {
            host[t][i] = value(rank, i + t);
        }
        g[t] = (ingot_grad_t){device_copy_of(host[t], counts[t] * sizeof(float)), counts[t],
                              INGOT_DTYPE_FLOAT32};
    }
    CHECK_OK(ingot_grads_register(comm, g, nt, INGOT_OP_SUM));
    for (size_t t = nt; t-- > 0;) {
        CHECK_OK(ingot_grads_ready(comm, t));
    }
    CHECK_OK(ingot_grads_wait(comm));
    CHECK(cudaDeviceSynchronize() == cudaSuccess); /* test only: the results are read below */
    for (size_t t = 0; t < nt; t++) {
        CHECK(cudaMemcpy(host[t], g[t].buf, counts[t] * sizeof(float), cudaMemcpyDeviceToHost) ==
              cudaSuccess);
        for (size_t i = 0; i < counts[t]; i++) {
            CHECK(host[t][i] == expected_sum(i + t));
        }
        cudaFree(g[t].buf);
        free(host[t]);
    }
    ingot_comm_destroy(comm);
}

static void mode_exact(ingot_ctx_h ctx)
{
    ingot_comm_h comm = make_comm(ctx, INGOT_COMM_BACKEND_NCCL);
    const size_t sizes[] = {1, 1000, 1 << 20, 10000001};
    for (size_t k = 0; k < 4; k++) {
        check_f32(comm, sizes[k], true, INGOT_OP_SUM);
        check_f32(comm, sizes[k], false, INGOT_OP_SUM);
        check_f32(comm, sizes[k], false, INGOT_OP_AVG);
        check_16(comm, sizes[k], INGOT_DTYPE_FLOAT16);
        check_16(comm, sizes[k], INGOT_DTYPE_BFLOAT16);
    }
    float host[16] = {0};
    ingot_request_h req;
    CHECK_STATUS(ingot_allreduce_start(comm, host, host, 16, INGOT_DTYPE_FLOAT32, INGOT_OP_SUM,
                                       &req),
                 INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "is host memory");
    ingot_comm_stats_t s = {.field_mask = INGOT_COMM_STATS_FIELD_SETUP};
    CHECK_OK(ingot_comm_stats(comm, &s));
    CHECK(s.backend == INGOT_COMM_BACKEND_NCCL && s.progress_thread);
    ingot_comm_destroy(comm);
    check_buckets(ctx, INGOT_COMM_BACKEND_NCCL);
    if (rank == 0) {
        printf("nccl exact: %d rank(s) ok (%s)\n", size, s.reason);
    }
}

static _Atomic int release_stream;

static void CUDART_CB block_stream(void *arg)
{
    (void)arg;
    while (!atomic_load(&release_stream)) {
        struct timespec t = {0, 1000000};
        nanosleep(&t, NULL);
    }
}

static void mode_abort(ingot_ctx_h ctx)
{
    ingot_comm_h comm = make_comm(ctx, INGOT_COMM_BACKEND_NCCL);
    size_t n = 1 << 20;
    float *d = NULL;
    CHECK(cudaMalloc((void **)&d, n * sizeof(float)) == cudaSuccess);
    /* The trainer's stream (the legacy default here) holds work that never ends. */
    CHECK(cudaLaunchHostFunc(NULL, block_stream, NULL) == cudaSuccess);
    ingot_request_h req;
    CHECK_OK(ingot_allreduce_start(comm, d, d, n, INGOT_DTYPE_FLOAT32, INGOT_OP_SUM, &req));
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    CHECK_STATUS(ingot_request_wait(&req), INGOT_ERR_TIMED_OUT);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    CHECK_CONTAINS(ingot_last_error(), "nccl backend");
    printf("abort: the wait failed after %.3f s (INGOT_TIMEOUT), ncclCommAbort included\n",
           (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    atomic_store(&release_stream, 1);
    ingot_comm_destroy(comm);
    cudaDeviceSynchronize();
    cudaGetLastError();
}
#endif

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exact";
    int level;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
    if (!ingot_cuda_usable()) {
        printf("skipped: no usable CUDA device (%s)\n", ingot_cuda_probe()->reason);
        MPI_Finalize();
        return 77;
    }
#if INGOT_BUILD_CUDA && INGOT_BUILD_NCCL
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    ingot_ctx_h ctx = NULL;
    CHECK_OK(ingot_init(NULL, &ctx));
    if (strcmp(mode, "exact") == 0) {
        mode_exact(ctx);
    } else if (strcmp(mode, "staged") == 0) {
        check_buckets(ctx, INGOT_COMM_BACKEND_MPI);
        printf("staged: device gradients reduced by the MPI backend ok\n");
    } else if (strcmp(mode, "abort") == 0) {
        mode_abort(ctx);
    }
    ingot_finalize(ctx);
    MPI_Finalize();
    return 0;
#else
    printf("skipped: built without CUDA or NCCL (%s)\n", mode);
    MPI_Finalize();
    return 77;
#endif
}

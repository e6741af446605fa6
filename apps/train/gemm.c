/*
 * ingot-train's matrix products, C = op(A) op(B) + beta C over row-major float32 matrices: on
 * the CPU through CBLAS, or on a GPU through cuBLAS.
 *
 * cuBLAS is loaded with dlopen when a run asks for it, so the trainer needs no libcublas to start
 * and a process on a node without a GPU never touches it. Its few entry points are declared here
 * rather than taken from cublas_v2.h: the build then needs only the CUDA runtime, as the library
 * does, and these are cuBLAS's v2 API, whose ABI has not changed since CUDA 4.
 *
 * The model stays in host memory (SGD and the MPI all-reduce work on it there): each product
 * copies its operands into device buffers allocated once at open, runs cublasSgemm and copies C
 * back, all on a stream of its own, then waits for it. cuBLAS is column-major: a row-major M is
 * the column-major M^T, so C = op(A) op(B) is computed as C^T = op(B)^T op(A)^T, B first.
 */
#include "train/train.h"
#include <cblas.h>
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if INGOT_BUILD_CUDA
#    include <cuda_runtime_api.h>
#endif

const char *train_gemm_error(const train_gemm_t *g)
{
    return g->error[0] != '\0' ? g->error : NULL;
}

static void gemm_cpu(bool ta, bool tb, size_t m, size_t n, size_t k, const float *a, const float *b,
                     float beta, float *c)
{
    cblas_sgemm(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans,
                (int)m, (int)n, (int)k, 1.0f, a, ta ? (int)m : (int)k, b, tb ? (int)k : (int)n,
                beta, c, (int)n);
}

#if INGOT_BUILD_CUDA

#    define CUBLAS_OP_N       0 /* cublasOperation_t */
#    define CUBLAS_OP_T       1
#    define CUBLAS_SUCCESS    0 /* cublasStatus_t */
#    define GEMM_OPERANDS     3 /* A, B, C */
#    define CUBLAS_SONAME_MAX 32

typedef struct cublas_ctx *cublas_handle_t; /* cublasHandle_t */

/* The entry points ingot-train calls (cublas_api.h's prototypes, with int for the enums). */
typedef struct cublas_api {
    int (*create)(cublas_handle_t *);
    int (*destroy)(cublas_handle_t);
    int (*set_stream)(cublas_handle_t, cudaStream_t);
    int (*get_version)(cublas_handle_t, int *);
    int (*sgemm)(cublas_handle_t, int, int, int, int, int, const float *, const float *, int,
                 const float *, int, const float *, float *, int);
    const char *(*status_string)(int); /* cuBLAS 11.4 and later; NULL before */
} cublas_api_t;

struct train_gemm_cuda {
    int device;
    cudaStream_t stream;
    cublas_handle_t handle;
    float *buf[GEMM_OPERANDS];
    size_t cap; /* floats in each buffer */
};

static cublas_api_t cublas;
static bool cublas_loaded; /* the library stays loaded for the life of the process */

/* libcublas of the toolkit this was built with (libcublas.so.13), else the unversioned name. */
static int cublas_load(char *msg, size_t len)
{
    if (cublas_loaded) {
        return 0;
    }
    char name[CUBLAS_SONAME_MAX], first[256];
    snprintf(name, sizeof(name), "libcublas.so.%d", CUDART_VERSION / 1000);
    void *lib = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (lib == NULL) {
        snprintf(first, sizeof(first), "%s", dlerror());
        lib = dlopen("libcublas.so", RTLD_NOW | RTLD_LOCAL);
        if (lib == NULL) {
            snprintf(msg, len, "cuBLAS not found: %s; %s", first, dlerror());
            return -1;
        }
    }
    static const struct {
        const char *name;
        size_t offset;
    } syms[] = {{"cublasCreate_v2", offsetof(cublas_api_t, create)},
                {"cublasDestroy_v2", offsetof(cublas_api_t, destroy)},
                {"cublasSetStream_v2", offsetof(cublas_api_t, set_stream)},
                {"cublasGetVersion_v2", offsetof(cublas_api_t, get_version)},
                {"cublasSgemm_v2", offsetof(cublas_api_t, sgemm)}};
    for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
        void *fn = dlsym(lib, syms[i].name);
        if (fn == NULL) {
            snprintf(msg, len, "%s lacks %s", name, syms[i].name);
            dlclose(lib);
            return -1;
        }
        memcpy((char *)&cublas + syms[i].offset, &fn, sizeof(fn));
    }
    void *fn = dlsym(lib, "cublasGetStatusString");
    memcpy(&cublas.status_string, &fn, sizeof(fn));
    cublas_loaded = true;
    return 0;
}

/* "GPU 0: <call>: <why>" into @p msg when @p err is an error; true then. */
static bool cuda_failed(cudaError_t err, int device, const char *call, char *msg, size_t len)
{
    if (err == cudaSuccess) {
        return false;
    }
    snprintf(msg, len, "GPU %d: %s: %s", device, call, cudaGetErrorString(err));
    cudaGetLastError(); /* a non-sticky error must not fail the next call */
    return true;
}

static bool cublas_failed(int st, int device, const char *call, char *msg, size_t len)
{
    if (st == CUBLAS_SUCCESS) {
        return false;
    }
    if (cublas.status_string != NULL) {
        snprintf(msg, len, "GPU %d: %s: %s", device, call, cublas.status_string(st));
    } else {
        snprintf(msg, len, "GPU %d: %s: cuBLAS status %d", device, call, st);
    }
    return true;
}

static void cuda_state_free(train_gemm_cuda_t *d)
{
    if (d->handle != NULL) {
        cublas.destroy(d->handle);
    }
    for (int i = 0; i < GEMM_OPERANDS; i++) {
        cudaFree(d->buf[i]);
    }
    if (d->stream != NULL) {
        cudaStreamDestroy(d->stream);
    }
    cudaGetLastError();
    free(d);
}

/* Stream, buffers and handle on @p d->device; "cuBLAS 13.1.0 on GPU 0 (name)" in @p msg. */
static int cuda_state_init(train_gemm_cuda_t *d, char *msg, size_t len)
{
    int dev = d->device, version = 0;
    if (cuda_failed(cudaSetDevice(dev), dev, "cudaSetDevice", msg, len) ||
        cuda_failed(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking), dev,
                    "cudaStreamCreateWithFlags", msg, len)) {
        return -1;
    }
    for (int i = 0; i < GEMM_OPERANDS; i++) {
        if (cuda_failed(cudaMalloc((void **)&d->buf[i], d->cap * sizeof(float)), dev, "cudaMalloc",
                        msg, len)) {
            return -1;
        }
    }
    if (cublas_failed(cublas.create(&d->handle), dev, "cublasCreate_v2", msg, len) ||
        cublas_failed(cublas.set_stream(d->handle, d->stream), dev, "cublasSetStream_v2", msg,
                      len) ||
        cublas_failed(cublas.get_version(d->handle, &version), dev, "cublasGetVersion_v2", msg,
                      len)) {
        return -1;
    }
    struct cudaDeviceProp prop;
    if (cuda_failed(cudaGetDeviceProperties(&prop, dev), dev, "cudaGetDeviceProperties", msg,
                    len)) {
        return -1;
    }
    snprintf(msg, len, "cuBLAS %d.%d.%d on GPU %d (%s)", version / 10000, version / 100 % 100,
             version % 100, dev, prop.name);
    return 0;
}

int train_gemm_open_cuda(train_gemm_t *g, int device, size_t max_elems, char *msg, size_t len)
{
    if (cublas_load(msg, len) != 0) {
        return -1;
    }
    train_gemm_cuda_t *d = calloc(1, sizeof(*d));
    if (d == NULL) {
        snprintf(msg, len, "out of memory");
        return -1;
    }
    d->device = device;
    d->cap = max_elems;
    if (cuda_state_init(d, msg, len) != 0) {
        cuda_state_free(d);
        return -1;
    }
    train_gemm_close(g);
    g->cuda = d;
    return 0;
}

void train_gemm_close(train_gemm_t *g)
{
    if (g != NULL && g->cuda != NULL) {
        cuda_state_free(g->cuda);
        g->cuda = NULL;
    }
}

static void gemm_cuda(train_gemm_t *g, bool ta, bool tb, size_t m, size_t n, size_t k,
                      const float *a, const float *b, float beta, float *c)
{
    train_gemm_cuda_t *d = g->cuda;
    size_t bytes[GEMM_OPERANDS] = {m * k * sizeof(float), k * n * sizeof(float),
                                   m * n * sizeof(float)};
    char *e = g->error;
    const size_t elen = sizeof(g->error);
    if (m * k > d->cap || k * n > d->cap || m * n > d->cap) {
        snprintf(e, elen, "GPU %d: a %zu x %zu x %zu product exceeds the %zu floats of its buffers",
                 d->device, m, n, k, d->cap);
        return;
    }
    const float one = 1.0f;
    if (cuda_failed(cudaMemcpyAsync(d->buf[0], a, bytes[0], cudaMemcpyHostToDevice, d->stream),
                    d->device, "cudaMemcpyAsync (A to the GPU)", e, elen) ||
        cuda_failed(cudaMemcpyAsync(d->buf[1], b, bytes[1], cudaMemcpyHostToDevice, d->stream),
                    d->device, "cudaMemcpyAsync (B to the GPU)", e, elen) ||
        (beta != 0 &&
         cuda_failed(cudaMemcpyAsync(d->buf[2], c, bytes[2], cudaMemcpyHostToDevice, d->stream),
                     d->device, "cudaMemcpyAsync (C to the GPU)", e, elen)) ||
        cublas_failed(cublas.sgemm(d->handle, tb ? CUBLAS_OP_T : CUBLAS_OP_N,
                                   ta ? CUBLAS_OP_T : CUBLAS_OP_N, (int)n, (int)m, (int)k, &one,
                                   d->buf[1], tb ? (int)k : (int)n, d->buf[0], ta ? (int)m : (int)k,
                                   &beta, d->buf[2], (int)n),
                      d->device, "cublasSgemm_v2", e, elen) ||
        cuda_failed(cudaMemcpyAsync(c, d->buf[2], bytes[2], cudaMemcpyDeviceToHost, d->stream),
                    d->device, "cudaMemcpyAsync (C to the host)", e, elen)) {
        return;
    }
    cuda_failed(cudaStreamSynchronize(d->stream), d->device, "cudaStreamSynchronize", e, elen);
}

#else /* !INGOT_BUILD_CUDA */

int train_gemm_open_cuda(train_gemm_t *g, int device, size_t max_elems, char *msg, size_t len)
{
    (void)g;
    (void)device;
    (void)max_elems;
    snprintf(msg, len,
             "this ingot-train was built without CUDA (-DINGOT_WITH_CUDA=OFF or no toolkit "
             "found at configure time)");
    return -1;
}

void train_gemm_close(train_gemm_t *g)
{
    (void)g;
}

#endif

void train_gemm(train_gemm_t *g, bool ta, bool tb, size_t m, size_t n, size_t k, const float *a,
                const float *b, float beta, float *c)
{
    if (g->error[0] != '\0') {
        return;
    }
#if INGOT_BUILD_CUDA
    if (g->cuda != NULL) {
        gemm_cuda(g, ta, tb, m, n, k, a, b, beta, c);
        return;
    }
#endif
    gemm_cpu(ta, tb, m, n, k, a, b, beta, c);
}

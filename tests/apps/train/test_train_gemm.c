/*
 * ingot-train's matrix products (apps/train/gemm.c) and its model on them, without MPI; one mode
 * per test:
 *   cpu     CBLAS against a reference in double for each transposition and beta 0 or 1, odd
 *           sizes; and the comparison itself fails on one element off by 0.01 (some 1.5e-4 of
 *           its scale)
 *   refuse  cuBLAS on a device that does not exist: -1 naming why (a build without CUDA, cuBLAS
 *           not found, or the CUDA call that failed), no crash, and the products stay on the CPU
 *   cuda    (a GPU: exit 77 with the reason where none is usable) cuBLAS against CBLAS as in
 *           cpu; a product larger than the device buffers fails, naming them, and every later one
 *           is a no-op; and both models trained for STEPS steps from the same seed on each
 *           backend agree in every step's loss and in the final weights (tolerances below)
 */
#include "common/test.h"
#include "train/train.h"
#include <math.h>

#define GEMM_TOL     2e-5 /* |C - ref| / (sum |a b| + |beta c|): k eps for k <= 300 */
#define MODEL_BATCH  64
#define MODEL_HIDDEN 32
#define STEPS        20
#define BATCHES      4           /* distinct synthetic batches, cycled */
#define NO_DEVICE    4096        /* a CUDA ordinal no machine has */
#define SPOIL        0.01f       /* against a scale of k / 4 (uniform [-1, 1) operands), k = 257 */
#define SMALL_CAP    (257 * 129) /* floats per device buffer: the largest operand of gemm_all */
/* cuBLAS sums in another order than OpenBLAS. Debian's reference BLAS does too (plain loops, no
 * FMA): swapped in for OpenBLAS (LD_PRELOAD) it moved these losses and weights by at most 1.2e-7
 * over the STEPS steps: these tolerances leave that a margin of 100. */
#define LOSS_TOL   1e-5 /* |loss_cuda - loss_cpu| / max(1, loss_cpu), every step */
#define WEIGHT_TOL 1e-5 /* max |w_cuda - w_cpu| after STEPS steps (weights up to 0.6) */

static uint64_t rng_state = 42;

/* A float in [-1, 1) (xorshift64*). */
static float rnd(void)
{
    rng_state ^= rng_state >> 12;
    rng_state ^= rng_state << 25;
    rng_state ^= rng_state >> 27;
    return (float)((double)((rng_state * 2685821657736338717ull) >> 11) / 4503599627370496.0 - 1);
}

static float *rnd_matrix(size_t elems)
{
    float *p = malloc(elems * sizeof(float));
    CHECK(p != NULL);
    for (size_t i = 0; i < elems; i++) {
        p[i] = rnd();
    }
    return p;
}

/* op(M)[i][j] of a row-major M stored rows x cols (transposed when t). */
static double at(const float *p, bool t, size_t i, size_t j, size_t cols_of_op)
{
    return t ? p[j * cols_of_op + i] : p[i * cols_of_op + j];
}

/* The worst element of @p c against C = op(A) op(B) + beta c0 in double, over its scale. */
static double gemm_error(bool ta, bool tb, size_t m, size_t n, size_t k, const float *a,
                         const float *b, float beta, const float *c0, const float *c)
{
    double worst = 0;
    for (size_t i = 0; i < m; i++) {
        for (size_t j = 0; j < n; j++) {
            double sum = beta * (double)c0[i * n + j], scale = fabs(sum);
            for (size_t p = 0; p < k; p++) {
                double x = at(a, ta, i, p, ta ? m : k) * at(b, tb, p, j, tb ? k : n);
                sum += x;
                scale += fabs(x);
            }
            double err = fabs((double)c[i * n + j] - sum) / (scale > 0 ? scale : 1);
            worst = err > worst ? err : worst;
        }
    }
    return worst;
}

/* One product on @p g checked against the reference; @p spoil adds SPOIL to one element first
 * (the check must then fail). Returns the worst relative error. */
static double gemm_one(train_gemm_t *g, bool ta, bool tb, size_t m, size_t n, size_t k, float beta,
                       bool spoil)
{
    float *a = rnd_matrix(m * k), *b = rnd_matrix(k * n), *c0 = rnd_matrix(m * n);
    float *c = malloc(m * n * sizeof(float));
    CHECK(c != NULL);
    memcpy(c, c0, m * n * sizeof(float));
    train_gemm(g, ta, tb, m, n, k, a, b, beta, c);
    CHECK(train_gemm_error(g) == NULL);
    if (spoil) {
        c[(m / 2) * n + n / 2] += SPOIL;
    }
    double err = gemm_error(ta, tb, m, n, k, a, b, beta, c0, c);
    free(a);
    free(b);
    free(c0);
    free(c);
    return err;
}

/* Every transposition, beta 0 and 1, sizes that fit no kernel's blocking. */
static void gemm_all(train_gemm_t *g, const char *what)
{
    static const size_t dims[][3] = {{1, 1, 1}, {7, 13, 5}, {64, 10, 784 / 4}, {33, 129, 257}};
    for (size_t d = 0; d < sizeof(dims) / sizeof(dims[0]); d++) {
        for (int t = 0; t < 8; t++) {
            bool ta = t & 1, tb = t & 2;
            float beta = (t & 4) ? 1.0f : 0.0f;
            double err = gemm_one(g, ta, tb, dims[d][0], dims[d][1], dims[d][2], beta, false);
            if (err > GEMM_TOL) {
                fprintf(stderr, "%s: %zu x %zu x %zu, ta %d tb %d beta %g: error %.3g > %g\n", what,
                        dims[d][0], dims[d][1], dims[d][2], ta, tb, beta, err, GEMM_TOL);
                exit(1);
            }
        }
    }
    printf("%s: every transposition and beta within %g of the reference\n", what, GEMM_TOL);
}

static void test_cpu(void)
{
    train_gemm_t g = {0};
    gemm_all(&g, "CBLAS");
    double err = gemm_one(&g, true, false, 33, 129, 257, 1.0f, true);
    CHECK(err > GEMM_TOL); /* the comparison sees one element off */
    printf("a spoiled element: error %.3g, caught\n", err);
}

static void test_refuse(void)
{
    train_gemm_t g = {0};
    char msg[256] = "";
    CHECK(train_gemm_open_cuda(&g, NO_DEVICE, 16, msg, sizeof(msg)) == -1);
    CHECK(g.cuda == NULL && train_gemm_error(&g) == NULL);
    printf("refused: %s\n", msg);
    CHECK(strstr(msg, "built without CUDA") != NULL || strstr(msg, "cuBLAS not found") != NULL ||
          strstr(msg, "GPU 4096: cudaSetDevice: ") != NULL);
    CHECK(gemm_one(&g, false, true, 7, 13, 5, 1.0f, false) <= GEMM_TOL); /* still on the CPU */
}

static ingot_status_t no_reduce(size_t tensor, void *arg)
{
    (void)tensor;
    (void)arg;
    return INGOT_OK;
}

/* STEPS of SGD on synthetic batches; each step's loss into @p loss. */
static void model_run(train_model_t *m, const float *x, const int32_t *labels, double *loss)
{
    for (int s = 0; s < STEPS; s++) {
        size_t b = (size_t)s % BATCHES;
        ingot_status_t st;
        loss[s] = train_model_step(m, x + b * MODEL_BATCH * TRAIN_PIXELS, labels + b * MODEL_BATCH,
                                   MODEL_BATCH, no_reduce, NULL, &st);
        CHECK(st == INGOT_OK && train_gemm_error(m->gemm) == NULL);
        train_model_update(m, 0.05, 0.9);
    }
}

static void model_compare(train_model_kind_t kind, int device)
{
    float *x = rnd_matrix((size_t)BATCHES * MODEL_BATCH * TRAIN_PIXELS);
    int32_t labels[BATCHES * MODEL_BATCH];
    for (size_t i = 0; i < BATCHES * MODEL_BATCH; i++) {
        labels[i] = (int32_t)((x[i * TRAIN_PIXELS] + 1) * 5) % TRAIN_CLASSES; /* learnable */
    }
    train_gemm_t cpu = {0}, gpu = {0};
    train_model_t mc, mg;
    char msg[256];
    CHECK(train_model_init(&mc, kind, MODEL_HIDDEN, MODEL_BATCH, 7, &cpu) == 0);
    CHECK(train_model_init(&mg, kind, MODEL_HIDDEN, MODEL_BATCH, 7, &gpu) == 0);
    if (train_gemm_open_cuda(&gpu, device, train_model_gemm_elems(&mg), msg, sizeof(msg)) != 0) {
        fprintf(stderr, "cuBLAS on GPU %d: %s\n", device, msg);
        exit(1);
    }
    double lc[STEPS], lg[STEPS], worst = 0;
    model_run(&mc, x, labels, lc);
    model_run(&mg, x, labels, lg);
    for (int s = 0; s < STEPS; s++) {
        double d = fabs(lg[s] - lc[s]) / fmax(1, lc[s]);
        if (d > LOSS_TOL) {
            fprintf(stderr, "step %d: loss %.7f on cuBLAS, %.7f on CBLAS\n", s, lg[s], lc[s]);
            exit(1);
        }
    }
    for (size_t i = 0; i < mc.nparams; i++) {
        worst = fmax(worst, fabs((double)mg.params[i] - (double)mc.params[i]));
    }
    printf("%s on %s: %d steps, loss %.4f -> %.4f on both; weights within %.3g\n",
           kind == TRAIN_MLP ? "mlp" : "softmax", msg, STEPS, lc[0], lc[STEPS - 1], worst);
    CHECK(worst <= WEIGHT_TOL);
    CHECK(lc[STEPS - 1] < lc[0]); /* it trained */
    train_model_free(&mc);
    train_model_free(&mg);
    train_gemm_close(&gpu);
    free(x);
}

static void test_cuda(void)
{
    ingot_runtime_info_t info = {.field_mask = INGOT_RUNTIME_INFO_FIELD_CUDA};
    CHECK_OK(ingot_runtime_info_query(&info));
    if (info.cuda_device_count == 0) {
        SKIP("no usable CUDA device: %s", info.cuda_reason);
    }
    train_gemm_t g = {0};
    char msg[256];
    if (train_gemm_open_cuda(&g, 0, SMALL_CAP, msg, sizeof(msg)) != 0) {
        fprintf(stderr, "cuBLAS on GPU 0: %s\n", msg);
        exit(1);
    }
    printf("%s\n", msg);
    gemm_all(&g, "cuBLAS");
    CHECK(gemm_one(&g, true, false, 33, 129, 257, 1.0f, true) > GEMM_TOL);
    float *big = rnd_matrix(SMALL_CAP + 1), c[1] = {0};
    train_gemm(&g, false, false, 1, 1, SMALL_CAP + 1, big, big, 0.0f, c); /* A too large */
    CHECK_CONTAINS(train_gemm_error(&g), "exceeds the 33153 floats of its buffers");
    train_gemm(&g, false, false, 1, 1, 1, big, big, 0.0f, c); /* a no-op now */
    CHECK(c[0] == 0);
    free(big);
    train_gemm_close(&g);
    model_compare(TRAIN_SOFTMAX, 0);
    model_compare(TRAIN_MLP, 0);
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    if (strcmp(mode, "cpu") == 0) {
        test_cpu();
    } else if (strcmp(mode, "refuse") == 0) {
        test_refuse();
    } else if (strcmp(mode, "cuda") == 0) {
        test_cuda();
    } else {
        fprintf(stderr, "usage: %s cpu|refuse|cuda\n", argv[0]);
        return 2;
    }
    return 0;
}

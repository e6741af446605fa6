/*
 * ingot-train's modules (apps/train/README.md has the table): the command line (args.c), the
 * model (model.c: softmax regression or a one-hidden-layer MLP, forward and backward, SGD with
 * momentum), its matrix products (gemm.c: CBLAS, or cuBLAS loaded at run time) and which of them
 * a run takes (blas.c: --blas, agreed over the ranks), checkpoints (ckpt.c: model, optimizer and
 * loader cursor, written atomically); the run itself (run.h: setup.c, loop.c, report.c).
 */
#ifndef INGOT_APPS_TRAIN_H
#define INGOT_APPS_TRAIN_H

#include <ingot/ingot.h>
#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRAIN_TOOL              "ingot-train"
#define TRAIN_PIXELS            784 /* 28 x 28 */
#define TRAIN_CLASSES           10
#define TRAIN_EXIT_FAIL         1
#define TRAIN_EXIT_USAGE        2
#define TRAIN_EXIT_CHECKPOINTED 85 /* stopped on request (SIGUSR1/SIGTERM) after a checkpoint */

typedef enum train_model_kind { TRAIN_SOFTMAX = 0, TRAIN_MLP = 1 } train_model_kind_t;

/** --blas: where the matrix products run. */
typedef enum train_blas {
    TRAIN_BLAS_AUTO = 0, /* cuBLAS when every rank's placement has a GPU it can use, else CBLAS */
    TRAIN_BLAS_CPU = 1,  /* CBLAS */
    TRAIN_BLAS_CUDA = 2  /* cuBLAS on the placement's GPU, or an error saying why not */
} train_blas_t;

/** The command line. */
typedef struct train_args {
    const char *train, *test;   /* manifests */
    const char *checkpoint_dir; /* NULL: no checkpoints */
    const char *json;           /* NULL: no JSON */
    train_model_kind_t model;
    train_blas_t blas;
    uint32_t hidden;
    uint64_t epochs, batch, seed;
    double lr, momentum;
    bool resume;
    bool decode; /* --decode: the image decode transform (JPEG/PNG/PNM) instead of P5 pixels */
} train_args_t;

/** Parse or exit(TRAIN_EXIT_USAGE) naming the option and value. */
void train_args_parse(int argc, char **argv, train_args_t *a);

/* ---------------------------------------------------------------- matrix products */

typedef struct train_gemm_cuda train_gemm_cuda_t; /* gemm.c's device state */

/**
 * Where the model's products run. A zeroed one is the CPU's (CBLAS);
 * train_gemm_open_cuda() moves it to a GPU. One thread uses it: the one that opened it.
 */
typedef struct train_gemm {
    train_gemm_cuda_t *cuda; /* NULL: CBLAS */
    char error[256];         /* the first CUDA or cuBLAS call that failed; "" while none */
} train_gemm_t;

/**
 * Run @p g's products through cuBLAS on CUDA device @p device (made current for this thread):
 * loads libcublas with dlopen, creates a stream, a cuBLAS handle and three device buffers of
 * @p max_elems floats each (the largest operand of any product; nothing is allocated per
 * product). 0, with "cuBLAS <version> on GPU <device> (<name>)" in @p msg; else -1 with why in
 * @p msg (the dlerror text, the failed CUDA or cuBLAS call, or a build without CUDA), and @p g
 * left on the CPU.
 */
int train_gemm_open_cuda(train_gemm_t *g, int device, size_t max_elems, char *msg, size_t len);
/** Free the device state: @p g is the CPU's again. NULL and a CPU backend are fine. */
void train_gemm_close(train_gemm_t *g);
/**
 * C[m x n] = op(A) op(B) + beta C over dense row-major float32 matrices, op(A) m x k and op(B)
 * k x n (A is stored k x m when @p ta, B n x k when @p tb). On the GPU each operand is copied to
 * the device and C back. A failed CUDA or cuBLAS call is kept in g->error and turns every later
 * product into a no-op: check train_gemm_error() after a step.
 */
void train_gemm(train_gemm_t *g, bool ta, bool tb, size_t m, size_t n, size_t k, const float *a,
                const float *b, float beta, float *c);
/** The first failed CUDA or cuBLAS call ("GPU 0: cublasSgemm_v2: ..."), or NULL. */
const char *train_gemm_error(const train_gemm_t *g);

/**
 * Choose and open the products' backend for --blas @p want (collective over MPI_COMM_WORLD):
 * cpu; cuda, refused on every rank when one cannot (each such rank prints why); auto, cuBLAS
 * when every rank can, else CBLAS. @p max_elems as for train_gemm_open_cuda(). @p why gets the
 * reason the report shows: "auto: the placement of rank 0 has no GPU", "cuBLAS 13.1.0 on GPU 0
 * (...)". 0, or TRAIN_EXIT_FAIL on every rank.
 */
int train_blas_choose(ingot_ctx_h ctx, train_blas_t want, size_t max_elems, train_gemm_t *g,
                      char *why, size_t len);

/* ---------------------------------------------------------------- model */

/** Parameters, gradients and momentum, each one flat array in parameter order:
 *  W1 [in x h], b1 [h], W2 [h x 10], b2 [10] for the MLP; W [in x 10], b [10] for softmax. */
typedef struct train_model {
    train_model_kind_t kind;
    uint32_t hidden;
    size_t ntensors;
    size_t count[4], offset[4]; /* elements of each tensor and where it starts */
    size_t nparams;
    float *params, *grads, *velocity;
    float *act, *dact, *logits; /* per batch: hidden activations and their gradient, logits */
    size_t batch_cap;
    train_gemm_t *gemm; /* the products (the caller's; outlives the model) */
} train_model_t;

/** A model for batches of up to @p batch samples whose products run on @p gemm. 0, or -1 when
 *  out of memory. */
int train_model_init(train_model_t *m, train_model_kind_t kind, uint32_t hidden, size_t batch,
                     uint64_t seed, train_gemm_t *gemm);
/** The largest operand (floats) of any of @p m's products: train_gemm_open_cuda()'s size. */
size_t train_model_gemm_elems(const train_model_t *m);
void train_model_free(train_model_t *m);
/** Forward and backward over @p n samples (x: n x 784, labels): the mean loss, gradients in
 *  m->grads; calls ready(i, arg) as each tensor's gradient is done (last tensor first). */
double train_model_step(train_model_t *m, const float *x, const int32_t *labels, size_t n,
                        ingot_status_t (*ready)(size_t tensor, void *arg), void *arg,
                        ingot_status_t *st_p);
/** Samples of @p n predicted right. */
size_t train_model_correct(train_model_t *m, const float *x, const int32_t *labels, size_t n);
/** SGD with momentum on the (reduced) gradients. */
void train_model_update(train_model_t *m, double lr, double momentum);
/** 0 when every label is a class (0-9); else -1, naming the sample's key. */
int train_labels_check(const int32_t *labels, size_t n, const char *const *keys);
/** FNV-1a of the model's shape: a checkpoint of another model is refused. */
uint64_t train_model_shape(const train_model_t *m);

/* ---------------------------------------------------------------- checkpoints */

/** FNV-1a over @p n bytes, continuing from @p h (TRAIN_FNV_BASIS to start): checkpoint
 *  checksums and model shapes. */
#define TRAIN_FNV_BASIS 1469598103934665603ull
uint64_t train_fnv(uint64_t h, const void *p, size_t n);

/** What a checkpoint records beside the weights. */
typedef struct train_ckpt_meta {
    uint64_t shape;           /* train_model_shape */
    uint32_t kind, hidden;    /* the model, to name it when another one is refused */
    uint64_t manifest_digest; /* the training manifest's */
    uint64_t seed;
    uint64_t generation;      /* checkpoints written so far; its cursor file is slot gen % 2 */
    uint64_t epoch, consumed; /* the loader cursor's position (checked against the cursor) */
} train_ckpt_meta_t;

/**
 * Write a checkpoint into @p dir (rank 0): the cursor first into slot generation % 2
 * (cursor.<slot>.ingot, atomic), then model.ckpt (weights, momentum, meta, checksum) by a
 * rename, so a crash at any point leaves the previous model and its cursor whole.
 */
int train_ckpt_write(const char *dir, const train_model_t *m, const train_ckpt_meta_t *meta,
                     const ingot_cursor_t *cursor);
/**
 * Read model.ckpt and its cursor: a file that is not one, truncated or whose checksum fails,
 * another model, another dataset or another seed is refused, naming what differs (both
 * values). On success the weights and momentum are in @p m and the cursor in @p cursor_p
 * (release it with ingot_cursor_release). 0 on success.
 */
int train_ckpt_read(const char *dir, train_model_t *m, const train_ckpt_meta_t *expect,
                    uint32_t world, train_ckpt_meta_t *meta_p, ingot_cursor_t *cursor_p);

/** Set by SIGUSR1 / SIGTERM: checkpoint at the next step boundary and exit. */
extern volatile sig_atomic_t train_stop_requested;

#endif

/*
 * The two models of ingot-train, in float32, their products through train_gemm() (CBLAS, or
 * cuBLAS on the placement's GPU: gemm.c): softmax regression (logits = X W + b) and a
 * one-hidden-layer MLP (logits = relu(X W1 + b1) W2 + b2), the mean cross-entropy over the
 * rank's batch, its gradients by hand, and SGD with momentum. Every buffer is allocated at init
 * for the largest batch: nothing per step.
 */
#include "train/train.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { T_W1, T_B1, T_W2, T_B2 };

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Xavier-uniform weights from the seed (the same on every rank), zero biases. */
static void model_init_params(train_model_t *m, uint64_t seed)
{
    uint64_t s = seed ^ 0x696e676f74ull;
    size_t fan[4][2] = {{TRAIN_PIXELS, m->kind == TRAIN_MLP ? m->hidden : TRAIN_CLASSES},
                        {0, 0},
                        {m->hidden, TRAIN_CLASSES},
                        {0, 0}};
    for (size_t t = 0; t < m->ntensors; t++) {
        float *p = m->params + m->offset[t];
        if (fan[t][0] == 0) {
            memset(p, 0, m->count[t] * sizeof(float));
            continue;
        }
        double a = sqrt(6.0 / (double)(fan[t][0] + fan[t][1]));
        for (size_t i = 0; i < m->count[t]; i++) {
            double u = (double)(splitmix64(&s) >> 11) / 9007199254740992.0; /* [0, 1) */
            p[i] = (float)((2 * u - 1) * a);
        }
    }
}

int train_model_init(train_model_t *m, train_model_kind_t kind, uint32_t hidden, size_t batch,
                     uint64_t seed, train_gemm_t *gemm)
{
    memset(m, 0, sizeof(*m));
    m->gemm = gemm;
    m->kind = kind;
    m->hidden = kind == TRAIN_MLP ? hidden : 0;
    size_t out1 = kind == TRAIN_MLP ? hidden : TRAIN_CLASSES;
    m->ntensors = kind == TRAIN_MLP ? 4 : 2;
    m->count[T_W1] = (size_t)TRAIN_PIXELS * out1;
    m->count[T_B1] = out1;
    if (kind == TRAIN_MLP) {
        m->count[T_W2] = (size_t)hidden * TRAIN_CLASSES;
        m->count[T_B2] = TRAIN_CLASSES;
    }
    for (size_t t = 0; t < m->ntensors; t++) {
        m->offset[t] = m->nparams;
        m->nparams += m->count[t];
    }
    m->batch_cap = batch;
    m->params = calloc(m->nparams, sizeof(float));
    m->grads = calloc(m->nparams, sizeof(float));
    m->velocity = calloc(m->nparams, sizeof(float));
    m->logits = calloc(batch * TRAIN_CLASSES, sizeof(float));
    if (kind == TRAIN_MLP) {
        m->act = calloc(batch * hidden, sizeof(float));
        m->dact = calloc(batch * hidden, sizeof(float));
    }
    if (!m->params || !m->grads || !m->velocity || !m->logits ||
        (kind == TRAIN_MLP && (!m->act || !m->dact))) {
        train_model_free(m);
        return -1;
    }
    model_init_params(m, seed);
    return 0;
}

size_t train_model_gemm_elems(const train_model_t *m)
{
    /* X [n x 784], W1 and its gradient [784 x out1], the first layer's output [n x out1]; every
     * other operand (the output layer's, n x 10 and h x 10) is smaller than one of these. */
    size_t n = m->batch_cap, out1 = m->kind == TRAIN_MLP ? m->hidden : TRAIN_CLASSES;
    size_t elems = n * TRAIN_PIXELS;
    elems = elems > (size_t)TRAIN_PIXELS * out1 ? elems : (size_t)TRAIN_PIXELS * out1;
    return elems > n * out1 ? elems : n * out1;
}

void train_model_free(train_model_t *m)
{
    free(m->params);
    free(m->grads);
    free(m->velocity);
    free(m->logits);
    free(m->act);
    free(m->dact);
    memset(m, 0, sizeof(*m));
}

/* out[n x cols] = in[n x k] W[k x cols] + b (broadcast over rows). */
static void affine(train_gemm_t *g, const float *in, const float *w, const float *b, float *out,
                   size_t n, size_t k, size_t cols)
{
    for (size_t r = 0; r < n; r++) {
        memcpy(out + r * cols, b, cols * sizeof(float));
    }
    train_gemm(g, false, false, n, cols, k, in, w, 1.0f, out);
}

/* Logits of the batch; the MLP's hidden activations stay in m->act. */
static void forward(train_model_t *m, const float *x, size_t n)
{
    const float *p = m->params;
    if (m->kind == TRAIN_SOFTMAX) {
        affine(m->gemm, x, p + m->offset[T_W1], p + m->offset[T_B1], m->logits, n, TRAIN_PIXELS,
               TRAIN_CLASSES);
        return;
    }
    affine(m->gemm, x, p + m->offset[T_W1], p + m->offset[T_B1], m->act, n, TRAIN_PIXELS,
           m->hidden);
    for (size_t i = 0; i < n * m->hidden; i++) {
        m->act[i] = m->act[i] > 0 ? m->act[i] : 0;
    }
    affine(m->gemm, m->act, p + m->offset[T_W2], p + m->offset[T_B2], m->logits, n, m->hidden,
           TRAIN_CLASSES);
}

/* logits -> d(mean loss)/d(logits) in place; returns the mean loss. */
static double softmax_xent(float *logits, const int32_t *labels, size_t n)
{
    double loss = 0;
    for (size_t r = 0; r < n; r++) {
        float *z = logits + r * TRAIN_CLASSES, mx = z[0];
        for (int c = 1; c < TRAIN_CLASSES; c++) {
            mx = z[c] > mx ? z[c] : mx;
        }
        int y = labels[r]; /* in [0, 10): checked by train_labels_check() */
        double zy = (double)(z[y] - mx), sum = 0;
        for (int c = 0; c < TRAIN_CLASSES; c++) {
            z[c] = expf(z[c] - mx);
            sum += z[c];
        }
        loss += log(sum) - zy; /* -log softmax_y, with no log(0) when exp underflows */
        for (int c = 0; c < TRAIN_CLASSES; c++) {
            z[c] = (float)((z[c] / sum - (c == y ? 1.0 : 0.0)) / (double)n);
        }
    }
    return loss / (double)n;
}

/* db = column sums of d[n x cols]. */
static void bias_grad(const float *d, float *db, size_t n, size_t cols)
{
    memset(db, 0, cols * sizeof(float));
    for (size_t r = 0; r < n; r++) {
        for (size_t c = 0; c < cols; c++) {
            db[c] += d[r * cols + c];
        }
    }
}

double train_model_step(train_model_t *m, const float *x, const int32_t *labels, size_t n,
                        ingot_status_t (*ready)(size_t tensor, void *arg), void *arg,
                        ingot_status_t *st_p)
{
    forward(m, x, n);
    double loss = softmax_xent(m->logits, labels, n);
    float *g = m->grads;
    const float *p = m->params;
    ingot_status_t st = INGOT_OK;
    size_t out1 = m->kind == TRAIN_MLP ? m->hidden : TRAIN_CLASSES;
    const float *d1 = m->logits; /* gradient at the first layer's output */
    if (m->kind == TRAIN_MLP) {
        /* The last layer first, as backward makes its gradients ready. */
        bias_grad(m->logits, g + m->offset[T_B2], n, TRAIN_CLASSES);
        st = ready(T_B2, arg);
        train_gemm(m->gemm, true, false, m->hidden, TRAIN_CLASSES, n, m->act, m->logits, 0.0f,
                   g + m->offset[T_W2]);
        if (st == INGOT_OK) {
            st = ready(T_W2, arg);
        }
        train_gemm(m->gemm, false, true, n, m->hidden, TRAIN_CLASSES, m->logits,
                   p + m->offset[T_W2], 0.0f, m->dact);
        for (size_t i = 0; i < n * m->hidden; i++) {
            m->dact[i] = m->act[i] > 0 ? m->dact[i] : 0;
        }
        d1 = m->dact;
    }
    bias_grad(d1, g + m->offset[T_B1], n, out1);
    if (st == INGOT_OK) {
        st = ready(T_B1, arg);
    }
    train_gemm(m->gemm, true, false, TRAIN_PIXELS, out1, n, x, d1, 0.0f, g + m->offset[T_W1]);
    if (st == INGOT_OK) {
        st = ready(T_W1, arg);
    }
    *st_p = st;
    return loss;
}

size_t train_model_correct(train_model_t *m, const float *x, const int32_t *labels, size_t n)
{
    size_t right = 0;
    forward(m, x, n);
    for (size_t r = 0; r < n; r++) {
        const float *z = m->logits + r * TRAIN_CLASSES;
        int best = 0;
        for (int c = 1; c < TRAIN_CLASSES; c++) {
            best = z[c] > z[best] ? c : best;
        }
        right += best == labels[r];
    }
    return right;
}

void train_model_update(train_model_t *m, double lr, double momentum)
{
    float mu = (float)momentum, eta = (float)lr;
    for (size_t i = 0; i < m->nparams; i++) {
        m->velocity[i] = mu * m->velocity[i] + m->grads[i];
        m->params[i] -= eta * m->velocity[i];
    }
}

int train_labels_check(const int32_t *labels, size_t n, const char *const *keys)
{
    for (size_t r = 0; r < n; r++) {
        if (labels[r] < 0 || labels[r] >= TRAIN_CLASSES) {
            fprintf(stderr,
                    TRAIN_TOOL ": sample %s: label %d is not a Fashion-MNIST class "
                               "(0-9)\n",
                    keys ? keys[r] : "?", (int)labels[r]);
            return -1;
        }
    }
    return 0;
}

uint64_t train_model_shape(const train_model_t *m)
{
    uint64_t v[3] = {(uint64_t)m->kind, m->hidden, m->nparams};
    return train_fnv(TRAIN_FNV_BASIS, v, sizeof(v));
}

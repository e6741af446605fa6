/*
 * Gradient buckets, as PyTorch DDP builds and launches them. Registration plans buckets over the
 * tensors in reverse order (backward makes the last layer's gradient ready first), capped at
 * bucket_bytes with a smaller first bucket so the first reduction starts early; a tensor is
 * never split. Every rank checks with one reduction that all registered the same counts and
 * dtypes. Each step, ingot_grads_ready() counts a bucket's tensors, and a full bucket starts as
 * soon as every earlier bucket has started (buckets start in order on every rank, so their
 * requests are served in the same order everywhere). A bucket of one tensor is reduced in that
 * tensor's memory; a bucket of several is copied into its own flat buffer and back.
 */
#include "collectives/engine_impl.h"
#include "base/cuda.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/time.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t ingot_bucket_plan(const size_t *bytes, size_t n, size_t first_cap, size_t cap,
                         ingot_bucket_span_t *spans)
{
    size_t nb = 0;
    size_t i = n;
    while (i > 0) {
        size_t limit = (nb == 0) ? first_cap : cap;
        size_t end = i, sum = 0; /* the bucket is [i, end) once i stops moving */
        do {
            sum += bytes[--i];
        } while (i > 0 && sum + bytes[i - 1] <= limit);
        if (spans != NULL) {
            spans[nb] = (ingot_bucket_span_t){.first = i, .ntensors = end - i, .bytes = sum};
        }
        nb++;
    }
    return nb;
}

ingot_status_t ingot_collectives_bucket_copy(ingot_collectives_t *c, collectives_bucket_t *b,
                                             bool in)
{
    const collectives_grads_t *g = &c->grads;
    size_t esize = ingot_dtype_size(g->grads[b->first].dtype);
    char *flat = b->flat;
    /* The flat buffer holds the bucket's tensors in registration order. */
    for (size_t k = 0; k < b->ntensors; k++) {
        const ingot_grad_t *t = &g->grads[b->first + k];
        size_t bytes = t->count * esize;
        ingot_status_t st = in ? c->ops->copy(c, flat, t->buf, bytes, true)
                               : c->ops->copy(c, t->buf, flat, bytes, false);
        if (st != INGOT_OK) {
            return st;
        }
        flat += bytes;
    }
    return INGOT_OK;
}

/* One reduction over every rank: do all ranks hold the same tensor list? */
static ingot_status_t grads_agree(ingot_collectives_t *c, const ingot_grad_t *grads, size_t n)
{
    /* A multiplicative hash of the caps (they decide the buckets) and the (count, dtype) pairs */
    uint64_t h = 1469598103934665603ull;
    h = (h ^ c->prm.bucket_bytes) * 1099511628211ull;
    h = (h ^ c->prm.first_bucket_bytes) * 1099511628211ull;
    for (size_t i = 0; grads != NULL && i < n; i++) {
        h = (h ^ grads[i].count) * 1099511628211ull;
        h = (h ^ (uint64_t)grads[i].dtype) * 1099511628211ull;
        h ^= h >> 29;
    }
    uint64_t mine[2] = {h ^ n, ~(h ^ n)}, agg[2];
    ingot_status_t st = INGOT_MPI_CALL("gradient registration", MPI_Allreduce, mine, agg, 2,
                                       MPI_UINT64_T, MPI_MAX, c->ctl);
    if (st != INGOT_OK) {
        return st;
    }
    if (agg[0] == mine[0] && agg[1] == mine[1]) {
        return INGOT_OK; /* max(x) == x and max(~x) == ~x on every rank: all equal */
    }
    /* Name the ranks that differ from rank 0 (everyone learns the list). */
    uint64_t *all = malloc(sizeof(uint64_t) * (size_t)c->size);
    uint64_t first_count[2] = {n, (grads != NULL && n > 0) ? grads[0].count : 0};
    if (all == NULL || INGOT_MPI_CALL("gradient registration", MPI_Allgather, &mine[0], 1,
                                      MPI_UINT64_T, all, 1, MPI_UINT64_T, c->ctl) != INGOT_OK) {
        free(all);
        return ingot_fail(INGOT_ERR_MISMATCH,
                          "ingot_grads_register: the ranks registered different gradient lists");
    }
    char ranks[160] = "";
    size_t o = 0;
    for (int r = 0; r < c->size && o < sizeof(ranks) - 12; r++) {
        if (all[r] != all[0]) {
            o += (size_t)snprintf(ranks + o, sizeof(ranks) - o, "%s%d", o ? "," : "", r);
        }
    }
    free(all);
    return ingot_fail(INGOT_ERR_MISMATCH,
                      "ingot_grads_register: gradient counts, dtypes or bucket caps differ "
                      "across ranks: "
                      "rank(s) %s registered another list than rank 0 (this rank %d: %zu "
                      "tensors, the first of %" PRIu64 " elements)",
                      ranks, c->rank, n, first_count[1]);
}

static ingot_status_t grads_check(ingot_collectives_t *c, const ingot_grad_t *grads, size_t n)
{
    ingot_status_t st;
    for (size_t i = 0; i < n; i++) {
        char what[64];
        snprintf(what, sizeof(what), "ingot_grads_register: gradient %zu", i);
        if (grads[i].buf == NULL || grads[i].count == 0) {
            return ingot_fail(INGOT_ERR_INVALID_PARAM, "%s: %s", what,
                              grads[i].buf == NULL ? "buf is NULL" : "count is 0");
        }
        if ((st = c->ops->check_dtype(c, grads[i].dtype, what)) != INGOT_OK) {
            return st;
        }
        if (grads[i].dtype != grads[0].dtype) {
            return ingot_fail(INGOT_ERR_INVALID_PARAM,
                              "%s: dtype %s differs from gradient 0's %s (one dtype per model)",
                              what, ingot_dtype_name(grads[i].dtype),
                              ingot_dtype_name(grads[0].dtype));
        }
        if (c->ops == &ingot_collectives_nccl_ops &&
            (st = c->ops->check_buf(c, grads[i].buf, what))) {
            return st; /* MPI stages device gradients; NCCL needs them on its device */
        }
        size_t esize = ingot_dtype_size(grads[i].dtype);
        const char *a0 = grads[i].buf, *a1 = a0 + grads[i].count * esize;
        for (size_t j = 0; j < i; j++) { /* registration only: quadratic is fine */
            const char *b0 = grads[j].buf, *b1 = b0 + grads[j].count * esize;
            if (a0 < b1 && b0 < a1) {
                return ingot_fail(INGOT_ERR_INVALID_PARAM,
                                  "%s (%p, %zu elements) overlaps gradient %zu (%p, %zu "
                                  "elements): a tensor registered twice?",
                                  what, grads[i].buf, grads[i].count, j, grads[j].buf,
                                  grads[j].count);
            }
        }
    }
    return INGOT_OK;
}

static ingot_status_t grads_build(ingot_collectives_t *c, const ingot_grad_t *grads, size_t n)
{
    collectives_grads_t *g = &c->grads;
    if (grads == NULL || n == 0) {
        return INGOT_ERR_INVALID_PARAM; /* checked before: every rank registered gradients */
    }
    size_t *bytes = malloc(n * sizeof(*bytes));
    ingot_bucket_span_t *spans = malloc(n * sizeof(*spans));
    g->grads = malloc(n * sizeof(*g->grads));
    g->bucket_of = malloc(n * sizeof(*g->bucket_of));
    g->ready = calloc(n, sizeof(*g->ready));
    if (!bytes || !spans || !g->grads || !g->bucket_of || !g->ready) {
        free(bytes);
        free(spans);
        return ingot_fail(INGOT_ERR_NO_MEMORY, "ingot_grads_register: %zu gradients", n);
    }
    memcpy(g->grads, grads, n * sizeof(*grads));
    g->n = n;
    for (size_t i = 0; i < n; i++) {
        bytes[i] = grads[i].count * ingot_dtype_size(grads[i].dtype);
    }
    size_t nb = ingot_bucket_plan(bytes, n, c->prm.first_bucket_bytes, c->prm.bucket_bytes, spans);
    g->buckets = calloc(nb, sizeof(*g->buckets));
    g->nbuckets = g->buckets ? nb : 0;
    ingot_status_t st = g->buckets ? INGOT_OK
                                   : ingot_fail(INGOT_ERR_NO_MEMORY,
                                                "ingot_grads_register: %zu buckets", nb);
    bool staged = c->ops == &ingot_collectives_mpi_ops &&
                  ingot_cuda_pointer_device(grads[0].buf) >= 0;
    for (size_t b = 0; b < g->nbuckets && st == INGOT_OK; b++) {
        collectives_bucket_t *k = &g->buckets[b];
        k->first = spans[b].first;
        k->ntensors = spans[b].ntensors;
        k->count = spans[b].bytes / ingot_dtype_size(grads[0].dtype);
        for (size_t t = k->first; t < k->first + k->ntensors; t++) {
            g->bucket_of[t] = b;
        }
        k->req.coll = c;
        k->req.bucket = k;
        k->req.count = k->count;
        k->req.dtype = grads[0].dtype;
        k->req.op = g->op;
        if (k->ntensors > 1 || staged) {
            st = c->ops->bucket_alloc(c, k, spans[b].bytes);
            k->req.send = k->req.recv = k->flat;
        } else { /* one tensor: reduced where it lies */
            k->req.send = k->req.recv = grads[k->first].buf;
        }
    }
    free(bytes);
    free(spans);
    return st;
}

void ingot_collectives_grads_release(ingot_collectives_t *c)
{
    collectives_grads_t *g = &c->grads;
    for (size_t b = 0; b < g->nbuckets; b++) {
        if (g->buckets[b].flat != NULL) {
            c->ops->bucket_free(c, &g->buckets[b]);
        }
    }
    free(g->buckets);
    free(g->grads);
    free(g->bucket_of);
    free(g->ready);
    memset(g, 0, sizeof(*g));
}

/* The arguments of a registration, on this rank. */
static ingot_status_t grads_args_check(ingot_collectives_t *c, const ingot_grad_t *grads, size_t n,
                                       ingot_op_t op)
{
    if (c->grads.n != 0) {
        return ingot_fail(INGOT_ERR_EXISTS,
                          "ingot_grads_register: %zu gradients are already registered on this "
                          "communicator (register once; create another communicator for another "
                          "model)",
                          c->grads.n);
    }
    if (grads == NULL || n == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_grads_register: no gradients given");
    }
    if (op != INGOT_OP_SUM && op != INGOT_OP_AVG) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_grads_register: unknown op %d", (int)op);
    }
    return grads_check(c, grads, n);
}

/* Wait until this engine has no reduction in flight (bounded by INGOT_TIMEOUT). */
static ingot_status_t collectives_drain(ingot_collectives_t *c, const char *what)
{
    uint64_t deadline = ingot_deadline_after(c->prm.timeout_ns);
    while (ingot_collectives_in_flight(c) > 0 && !atomic_load(&c->broken)) {
        ingot_collectives_progress(c);
        if (ingot_time_ns() >= deadline) {
            return ingot_fail(INGOT_ERR_TIMED_OUT,
                              "%s: %d reduction(s) still in flight after %.1f s (INGOT_TIMEOUT)",
                              what, ingot_collectives_in_flight(c), c->prm.timeout_ns / 1e9);
        }
        sched_yield();
    }
    return INGOT_OK;
}

ingot_status_t ingot_collectives_grads_register(ingot_collectives_t *c, const ingot_grad_t *grads,
                                                size_t n, ingot_op_t op)
{
    /* Every rank first lets its one-shot reductions in flight finish (they need every rank's
     * progress, so all drain before any check): the buckets' device memory is allocated below,
     * and cudaMalloc beside running NCCL kernels can deadlock. */
    ingot_status_t st = collectives_drain(c, "ingot_grads_register");
    if (st == INGOT_OK) {
        st = grads_args_check(c, grads, n, op);
    }
    /* Agreed before the comparison so that a rank with a local error does not leave the others
     * in the comparison's reduction. */
    if ((st = ingot_mpi_agree(&c->ctl, st, "ingot_grads_register")) != INGOT_OK ||
        (st = grads_agree(c, grads, n)) != INGOT_OK) {
        return st;
    }
    c->grads.op = op;
    st = grads_build(c, grads, n);
    if ((st = ingot_mpi_agree(&c->ctl, st, "ingot_grads_register: buckets")) != INGOT_OK) {
        ingot_collectives_grads_release(c);
        return st;
    }
    ingot_info("gradients registered: %zu tensors in %zu buckets (caps %zu and %zu bytes)", n,
               c->grads.nbuckets, c->prm.first_bucket_bytes, c->prm.bucket_bytes);
    return INGOT_OK;
}

static ingot_status_t bucket_launch(ingot_collectives_t *c, collectives_bucket_t *b)
{
    ingot_status_t st = INGOT_OK;
    if (b->flat != NULL && !c->ops->eager) { /* NCCL copies on its stream, in begin */
        st = ingot_collectives_bucket_copy(c, b, true);
    }
    if (st == INGOT_OK) {
        st = ingot_collectives_enqueue(c, &b->req);
    } else { /* not started: done with the error, so that grads_wait reports it */
        b->req.status = st;
        atomic_store(&b->req.state, COLLECTIVES_REQ_DONE);
    }
    if (st != INGOT_OK) {
        /* This rank's reductions are now out of step with its peers': nothing after this can
         * be matched, so every later call fails at once instead of waiting out the deadline. */
        ingot_collectives_break(c, st, false);
    }
    return st;
}

ingot_status_t ingot_collectives_grads_ready(ingot_collectives_t *c, size_t index)
{
    collectives_grads_t *g = &c->grads;
    if (index >= g->n) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "ingot_grads_ready: index %zu is not a registered gradient (%zu "
                          "registered)",
                          index, g->n);
    }
    if (g->ready[index]) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "ingot_grads_ready: gradient %zu marked ready twice in step %" PRIu64,
                          index, atomic_load(&c->steps));
    }
    g->ready[index] = true;
    g->nready++;
    collectives_bucket_t *b = &g->buckets[g->bucket_of[index]];
    b->ready++;
    ingot_status_t st = INGOT_OK;
    while (g->next_launch < g->nbuckets && st == INGOT_OK) {
        collectives_bucket_t *next = &g->buckets[g->next_launch];
        if (next->ready < next->ntensors) {
            break;
        }
        st = bucket_launch(c, next);
        g->next_launch++;
    }
    ingot_collectives_progress(c);
    return st;
}

ingot_status_t ingot_collectives_grads_wait(ingot_collectives_t *c)
{
    collectives_grads_t *g = &c->grads;
    if (g->n == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_grads_wait: no gradients registered");
    }
    if (g->nready < g->n) {
        size_t missing = 0;
        while (missing < g->n && g->ready[missing]) {
            missing++;
        }
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "ingot_grads_wait: %zu of %zu gradients marked ready in step %" PRIu64
                          " (gradient %zu is not): every gradient must be marked each step",
                          g->nready, g->n, atomic_load(&c->steps), missing);
    }
    ingot_status_t st = INGOT_OK;
    for (size_t b = 0; b < g->nbuckets; b++) {
        ingot_status_t bst = ingot_collectives_wait_req(c, &g->buckets[b].req, "gradient bucket");
        if (st == INGOT_OK) {
            st = bst;
        }
        if (bst == INGOT_ERR_TIMED_OUT) {
            break; /* the communicator is broken: the others fail at once anyway */
        }
    }
    for (size_t b = 0; b < g->nbuckets; b++) {
        g->buckets[b].ready = 0;
    }
    memset(g->ready, 0, g->n * sizeof(*g->ready));
    g->nready = 0;
    g->next_launch = 0;
    if (st == INGOT_OK) {
        atomic_fetch_add(&c->steps, 1);
    }
    return st;
}

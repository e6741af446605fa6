/*
 * MPI backend: float32 all-reduce of host memory on a duplicate of the job's communicator.
 *
 * Large reductions run ingot's own ring (reduce-scatter then all-gather, 2(p-1) steps, each rank
 * sending and receiving one p-th of the buffer per step), on non-blocking point-to-point
 * messages of INGOT_COMM_SEGMENT bytes. Why not MPI_Iallreduce or a persistent
 * MPIX_Allreduce_init: measured here (Open MPI 4.1, 2 and 4 ranks, 1-64 MiB) libnbc picks a
 * binomial tree for in-place reductions and under 4 ranks (about half the busbw of the blocking
 * MPI_Allreduce); its temporaries are allocated per call; and a persistent request is bound to
 * buffer addresses, which differ between ranks, so a per-rank cache of them cannot be kept in
 * step. The ring is in place or out of place at no extra copy, allocates nothing per call
 * (scratch for a few segments, grown only for a larger reduction than any before), and every
 * element's sum is computed by one rank in one order, so all ranks get identical bits.
 * Small reductions (under INGOT_COMM_RING_MIN) use MPI_Iallreduce, latency-bound and
 * well served by libnbc.
 *
 * Requests are served one at a time in start order; ring messages are tagged with the
 * request's sequence number and the step, so a neighbour one request or several steps ahead
 * never matches the wrong receive.
 */
#include "collectives/engine_impl.h"
#include "base/cuda.h"
#include "base/errors.h"
#include "base/log.h"
#include <stdlib.h>
#include <string.h>

#define RING_SEGS_MAX  64  /* messages per chunk at most: larger chunks get larger segments */
#define RING_WINDOW    4   /* reduce-scatter receives in flight (scratch slots) */
#define RING_RANKS_MAX 128 /* tags hold the step in 8 bits: 2(p-1) <= 254 */

typedef struct mpi_ring {
    int t, nsteps;
    size_t seg;              /* elements per message */
    size_t snd_off, snd_len; /* chunk sent this step (elements) */
    size_t rcv_off, rcv_len; /* chunk received this step */
    int nsend, nrecv;        /* messages this step */
    int recv_posted, recv_done;
    MPI_Request sreq[RING_SEGS_MAX];
    MPI_Request rreq[RING_SEGS_MAX];
} mpi_ring_t;

typedef struct mpi_be {
    bool small; /* the head request runs as MPI_Iallreduce */
    MPI_Request small_req;
    mpi_ring_t ring;
    ingot_mem_t scratch; /* RING_WINDOW segments */
} mpi_be_t;

static ingot_status_t mpi_init(ingot_collectives_t *c)
{
    c->be = ingot_calloc(1, sizeof(mpi_be_t), "MPI all-reduce state");
    return c->be ? INGOT_OK : INGOT_ERR_NO_MEMORY;
}

static void mpi_fini(ingot_collectives_t *c)
{
    mpi_be_t *be = c->be;
    if (be != NULL) {
        ingot_mem_free(&be->scratch);
        free(be);
        c->be = NULL;
    }
}

static ingot_status_t mpi_check_buf(ingot_collectives_t *c, const void *buf, const char *what)
{
    int dev = ingot_cuda_pointer_device(buf);
    if (dev >= 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "%s: %p is memory of CUDA device %d, and the MPI backend reduces host "
                          "memory (register device gradients with ingot_grads_register to have "
                          "them staged through pinned host memory, or use the nccl backend)",
                          what, buf, dev);
    }
    return INGOT_OK;
}

static ingot_status_t mpi_check_dtype(ingot_collectives_t *c, ingot_dtype_t dtype, const char *what)
{
    if (dtype != INGOT_DTYPE_FLOAT32) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "%s: dtype %s (%d): the MPI backend reduces float32 only (float16 and "
                          "bfloat16 need the nccl backend)",
                          what, ingot_dtype_name(dtype), (int)dtype);
    }
    return INGOT_OK;
}

/* ---------------------------------------------------------------- the ring */

static void chunk_of(size_t count, int p, int chunk, size_t *off, size_t *len)
{
    size_t base = count / (size_t)p, rem = count % (size_t)p;
    size_t c = (size_t)chunk;
    *off = c * base + (c < rem ? c : rem);
    *len = base + (c < rem ? 1 : 0);
}

static int mod(int a, int p)
{
    return ((a % p) + p) % p;
}

static int ring_tag(const struct ingot_request *r, int t)
{
    return (int)(((r->seq & 0x7F) << 8) | ((unsigned)t & 0xFF));
}

/*
 * dst = (a + b) * scale over n floats; dst may be a (in place). Written as fixed blocks of
 * REDUCE_BLOCK over restrict pointers so that -O2 vectorises it (SLP) with no run-time alias
 * check: a plain loop whose dst may equal a is either left scalar or versioned onto its scalar
 * path in place, which made in-place reductions a third slower.
 */
#define REDUCE_BLOCK 16

static void reduce_add_block(float *restrict dst, const float *restrict b, size_t n, float scale)
{
    size_t i = 0;
    for (; i + REDUCE_BLOCK <= n; i += REDUCE_BLOCK) {
        for (size_t k = 0; k < REDUCE_BLOCK; k++) {
            dst[i + k] = (dst[i + k] + b[i + k]) * scale;
        }
    }
    for (; i < n; i++) {
        dst[i] = (dst[i] + b[i]) * scale;
    }
}

static void reduce_add_out(float *restrict dst, const float *restrict a, const float *restrict b,
                           size_t n, float scale)
{
    size_t i = 0;
    for (; i + REDUCE_BLOCK <= n; i += REDUCE_BLOCK) {
        for (size_t k = 0; k < REDUCE_BLOCK; k++) {
            dst[i + k] = (a[i + k] + b[i + k]) * scale;
        }
    }
    for (; i < n; i++) {
        dst[i] = (a[i] + b[i]) * scale;
    }
}

static void reduce_add(float *dst, const float *a, const float *b, size_t n, float scale)
{
    if (dst == a) {
        reduce_add_block(dst, b, n, scale);
    } else {
        reduce_add_out(dst, a, b, n, scale);
    }
}

static float *scratch_slot(mpi_be_t *be, int i)
{
    return (float *)be->scratch.ptr + (size_t)(i % RING_WINDOW) * be->ring.seg;
}

static ingot_status_t ring_post_recv(ingot_collectives_t *c, struct ingot_request *r, int i)
{
    mpi_be_t *be = c->be;
    mpi_ring_t *g = &be->ring;
    size_t off = (size_t)i * g->seg;
    size_t n = (g->rcv_len - off < g->seg) ? g->rcv_len - off : g->seg;
    bool rs = g->t < c->size - 1;
    float *dst = rs ? scratch_slot(be, i) : (float *)r->recv + g->rcv_off + off;
    MPI_Request *req = g->rreq + i;
    g->recv_posted++;
    return INGOT_MPI_CALL("all-reduce ring", MPI_Irecv, dst, (int)n, MPI_FLOAT,
                          mod(c->rank - 1, c->size), ring_tag(r, g->t), c->comm, req);
}

/* Post every send of step t and the first receives. */
static ingot_status_t ring_step(ingot_collectives_t *c, struct ingot_request *r)
{
    mpi_be_t *be = c->be;
    mpi_ring_t *g = &be->ring;
    int p = c->size, me = c->rank, t = g->t;
    int snd, rcv;
    if (t < p - 1) { /* reduce-scatter */
        snd = mod(me - t, p);
        rcv = mod(me - t - 1, p);
    } else { /* all-gather */
        int u = t - (p - 1);
        snd = mod(me + 1 - u, p);
        rcv = mod(me - u, p);
    }
    chunk_of(r->count, p, snd, &g->snd_off, &g->snd_len);
    chunk_of(r->count, p, rcv, &g->rcv_off, &g->rcv_len);
    g->nsend = (int)((g->snd_len + g->seg - 1) / g->seg);
    g->nrecv = (int)((g->rcv_len + g->seg - 1) / g->seg);
    g->recv_posted = g->recv_done = 0;
    /* Step 0 sends this rank's own chunk from the send buffer; later steps send what the
     * previous step completed in recv (the chunk sent at t + 1 is the one received at t). */
    const float *src = (t == 0) ? (const float *)r->send : (const float *)r->recv;
    ingot_status_t st = INGOT_OK;
    for (int i = 0; i < g->nsend && st == INGOT_OK; i++) {
        size_t off = (size_t)i * g->seg;
        size_t n = (g->snd_len - off < g->seg) ? g->snd_len - off : g->seg;
        /* Completed by ring_advance(), a later call of the state machine, which the MPI checker
         * cannot follow. NOLINTNEXTLINE(clang-analyzer-optin.mpi.MPI-Checker) */
        st = INGOT_MPI_CALL("all-reduce ring", MPI_Isend, src + g->snd_off + off, (int)n, MPI_FLOAT,
                            mod(me + 1, p), ring_tag(r, t), c->comm, &g->sreq[i]);
    }
    int window = (t < p - 1) ? RING_WINDOW : RING_SEGS_MAX; /* all-gather: straight into recv */
    for (int i = 0; i < g->nrecv && i < window && st == INGOT_OK; i++) {
        st = ring_post_recv(c, r, i);
    }
    return st;
}

static ingot_status_t ring_begin(ingot_collectives_t *c, struct ingot_request *r)
{
    mpi_be_t *be = c->be;
    mpi_ring_t *g = &be->ring;
    size_t chunk = (r->count + (size_t)c->size - 1) / (size_t)c->size;
    size_t seg = c->prm.segment_bytes / sizeof(float);
    size_t need = (chunk + RING_SEGS_MAX - 1) / RING_SEGS_MAX;
    g->seg = seg > need ? seg : need;
    size_t bytes = g->seg * RING_WINDOW * sizeof(float);
    if (be->scratch.size < bytes) { /* only for a reduction larger than any before */
        ingot_mem_free(&be->scratch);
        ingot_status_t st = ingot_mem_alloc(bytes, INGOT_MEM_F_PREFAULT, -1,
                                            "all-reduce ring scratch", &be->scratch);
        if (st != INGOT_OK) {
            return st;
        }
    }
    g->t = 0;
    g->nsteps = 2 * (c->size - 1);
    return ring_step(c, r);
}

static ingot_status_t ring_advance(ingot_collectives_t *c, struct ingot_request *r, bool *done)
{
    mpi_be_t *be = c->be;
    mpi_ring_t *g = &be->ring;
    int p = c->size;
    for (;;) {
        bool rs = g->t < p - 1;
        float scale = (rs && g->t == p - 2 && r->op == INGOT_OP_AVG) ? 1.0f / (float)p : 1.0f;
        while (g->recv_done < g->nrecv) {
            int i = g->recv_done, flag = 0;
            ingot_status_t st = INGOT_MPI_CALL("all-reduce ring", MPI_Test, &g->rreq[i], &flag,
                                               MPI_STATUS_IGNORE);
            if (st != INGOT_OK) {
                return st;
            }
            if (!flag) {
                return INGOT_OK;
            }
            if (rs) { /* first touch of this chunk: recv = send + what the left sent */
                size_t off = g->rcv_off + (size_t)i * g->seg;
                size_t n = (g->rcv_len - (size_t)i * g->seg < g->seg)
                               ? g->rcv_len - (size_t)i * g->seg
                               : g->seg;
                reduce_add((float *)r->recv + off, (const float *)r->send + off,
                           scratch_slot(be, i), n, scale);
            }
            g->recv_done++;
#ifndef __clang_analyzer__ /* clang-tidy-14's analyzer crashes here (unbounded recursion in
                            * MemRegion::getDescriptiveName); the compiled code is unaffected */
            if (g->recv_posted < g->nrecv && (st = ring_post_recv(c, r, g->recv_posted))) {
                return st;
            }
#endif
        }
        int flag = 0;
        ingot_status_t st = INGOT_MPI_CALL("all-reduce ring", MPI_Testall, g->nsend, g->sreq, &flag,
                                           MPI_STATUSES_IGNORE);
        if (st != INGOT_OK || !flag) {
            return st;
        }
        if (++g->t == g->nsteps) {
            *done = true;
            return INGOT_OK;
        }
        if ((st = ring_step(c, r)) != INGOT_OK) {
            return st;
        }
    }
}

/* ---------------------------------------------------------------- ops */

static ingot_status_t mpi_begin(ingot_collectives_t *c, struct ingot_request *r)
{
    mpi_be_t *be = c->be;
    size_t bytes = r->count * sizeof(float);
    if (c->size == 1) {
        if (r->send != r->recv) {
            memcpy(r->recv, r->send, bytes);
        }
        be->small = true;
        be->small_req = MPI_REQUEST_NULL;
        return INGOT_OK;
    }
    be->small = bytes < c->prm.ring_min_bytes || c->size > RING_RANKS_MAX;
    if (!be->small) {
        return ring_begin(c, r);
    }
    if (r->count > (size_t)INT32_MAX) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "all-reduce of %zu elements on %d ranks: over MPI's int count, and "
                          "the ring serves at most %d ranks; split it",
                          r->count, c->size, RING_RANKS_MAX);
    }
    /* Tested by mpi_advance(). NOLINTNEXTLINE(clang-analyzer-optin.mpi.MPI-Checker) */
    return INGOT_MPI_CALL("all-reduce", MPI_Iallreduce, r->send == r->recv ? MPI_IN_PLACE : r->send,
                          r->recv, (int)r->count, MPI_FLOAT, MPI_SUM, c->comm, &be->small_req);
}

static ingot_status_t mpi_advance(ingot_collectives_t *c, struct ingot_request *r, bool *done)
{
    mpi_be_t *be = c->be;
    if (!be->small) {
        /* The ring's requests are waited for across calls. NOLINTNEXTLINE(clang-analyzer-optin.mpi.MPI-Checker) */
        return ring_advance(c, r, done);
    }
    int flag = 1;
    if (be->small_req != MPI_REQUEST_NULL) {
        ingot_status_t st = INGOT_MPI_CALL("all-reduce", MPI_Test, &be->small_req, &flag,
                                           MPI_STATUS_IGNORE);
        if (st != INGOT_OK) {
            return st;
        }
    }
    if (flag) {
        if (r->op == INGOT_OP_AVG && c->size > 1) {
            float *x = r->recv, inv = 1.0f / (float)c->size;
            for (size_t i = 0; i < r->count; i++) {
                x[i] *= inv;
            }
        }
        *done = true;
    }
    return INGOT_OK;
}

static void mpi_thread_init(ingot_collectives_t *c)
{
    (void)c;
}

static void mpi_abort(ingot_collectives_t *c)
{
    (void)c; /* an MPI collective cannot be cancelled: the caller ends the job */
}

static void mpi_delivered(ingot_collectives_t *c, struct ingot_request *r)
{
    (void)c;
    (void)r;
}

/* Buckets: host memory, pinned when its tensors are device memory (they are staged). */
static ingot_status_t mpi_bucket_alloc(ingot_collectives_t *c, collectives_bucket_t *b,
                                       size_t bytes)
{
    bool staged = ingot_cuda_pointer_device(c->grads.grads[b->first].buf) >= 0;
    ingot_status_t st = ingot_mem_alloc(bytes,
                                        INGOT_MEM_F_PREFAULT | (staged ? INGOT_MEM_F_PINNED : 0),
                                        -1, "gradient bucket", &b->flat_mem);
    b->flat = (st == INGOT_OK) ? b->flat_mem.ptr : NULL;
    return st;
}

static void mpi_bucket_free(ingot_collectives_t *c, collectives_bucket_t *b)
{
    ingot_mem_free(&b->flat_mem);
    b->flat = NULL;
}

static ingot_status_t mpi_copy(ingot_collectives_t *c, void *dst, const void *src, size_t bytes,
                               bool to_flat)
{
    const void *tensor = to_flat ? src : dst;
    int device = ingot_cuda_pointer_device(tensor);
    if (device >= 0) {
        /* Staged: in, after the work the trainer's stream holds (the backward that wrote the
         * gradient); out, on the gradient's device (this may be the progress thread). */
        return ingot_cuda_copy_after(dst, src, bytes, device, to_flat, c->prm.stream,
                                     "gradient staging through host memory");
    }
    memcpy(dst, src, bytes);
    return INGOT_OK;
}

const collectives_ops_t ingot_collectives_mpi_ops = {
    .eager = false,
    .init = mpi_init,
    .fini = mpi_fini,
    .thread_init = mpi_thread_init,
    .check_buf = mpi_check_buf,
    .check_dtype = mpi_check_dtype,
    .begin = mpi_begin,
    .advance = mpi_advance,
    .abort = mpi_abort,
    .delivered = mpi_delivered,
    .copy = mpi_copy,
    .bucket_alloc = mpi_bucket_alloc,
    .bucket_free = mpi_bucket_free,
};

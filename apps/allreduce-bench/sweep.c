/*
 * The size sweep: for each size, out of place then in place, ingot's all-reduce
 * (ingot_allreduce_start + ingot_request_wait) and MPI_Allreduce on the same buffers, each
 * timed over --iters iterations after --warmup_iters, then one more ingot all-reduce of known
 * integer values checked element by element against the exact sum.
 */
#include "allreduce-bench/arb.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define SWEEP_FLOAT_BYTES 4
#define SWEEP_MIX         0x9e3779b1ull /* Fibonacci hashing: no block shift repeats values */
#define SWEEP_MIX_SHIFT   16
#define SWEEP_RANK_STEP   13
#define SWEEP_MODULUS     1001 /* values -500 .. 500: every partial sum is an exact float */
#define SWEEP_OFFSET      500
#define SWEEP_POISON      0xff /* recvbuf bytes before the checked reduction: NaN floats */

/* The buffers of every size, allocated once at the largest by the communicator (device memory
 * on nccl, pre-faulted host memory on mpi), and a host buffer to fill and check them through. */
typedef struct sweep_bufs {
    float *send, *recv;
    float *host;
} sweep_bufs_t;

/* One all-reduce of count elements: send == recv is in place. */
typedef struct sweep_op {
    ingot_comm_h comm;
    float *send;
    float *recv;
    float *host; /* staging for the check */
    size_t count;
} sweep_op_t;

typedef ingot_status_t (*sweep_fn_t)(const sweep_op_t *op);

static ingot_status_t op_ingot(const sweep_op_t *op)
{
    ingot_request_h req;
    ingot_status_t st = ingot_allreduce_start(op->comm, op->send, op->recv, op->count,
                                              INGOT_DTYPE_FLOAT32, INGOT_OP_SUM, &req);
    return st == INGOT_OK ? ingot_request_wait(&req) : st;
}

static ingot_status_t op_mpi(const sweep_op_t *op)
{
    const void *send = op->send == op->recv ? MPI_IN_PLACE : op->send;
    return MPI_Allreduce(send, op->recv, (int)op->count, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD) ==
                   MPI_SUCCESS
               ? INGOT_OK
               : INGOT_ERR_MPI;
}

/* Element i's value on rank r: an integer in -500 .. 500. */
static float sweep_value(size_t i, int r)
{
    uint64_t h = ((uint64_t)i * SWEEP_MIX) >> SWEEP_MIX_SHIFT;
    return (float)((int)((h + (uint64_t)r * SWEEP_RANK_STEP) % SWEEP_MODULUS) - SWEEP_OFFSET);
}

/* Max over ranks of the mean time of one call, in seconds; the statuses agreed. */
static ingot_status_t sweep_time(sweep_fn_t fn, const sweep_op_t *op, const arb_args_t *a,
                                 double *s_p)
{
    ingot_status_t st = INGOT_OK;
    for (uint64_t i = 0; i < a->warmup && st == INGOT_OK; i++) {
        st = fn(op);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t t0 = arb_now_ns();
    for (uint64_t i = 0; i < a->iters && st == INGOT_OK; i++) {
        st = fn(op);
    }
    double mine = (double)(arb_now_ns() - t0) / ARB_NS_PER_S / (double)a->iters;
    MPI_Allreduce(&mine, s_p, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return arb_agree(st);
}

/* One ingot all-reduce of known values; the elements that differ from the exact sum. The
 * buffers are filled and read through host memory (they may be device memory). */
static ingot_status_t sweep_check(const arb_setup_t *s, const sweep_op_t *op, uint64_t *wrong_p)
{
    size_t bytes = op->count * sizeof(float);
    for (size_t i = 0; i < op->count; i++) op->host[i] = sweep_value(i, s->rank);
    ingot_status_t st = ingot_comm_buffer_copy(op->comm, op->send, op->host, bytes);
    if (st == INGOT_OK && op->send != op->recv) {
        memset(op->host, SWEEP_POISON, bytes);
        st = ingot_comm_buffer_copy(op->comm, op->recv, op->host, bytes);
    }
    if (st == INGOT_OK) {
        st = op_ingot(op);
    }
    if (st == INGOT_OK) {
        st = ingot_comm_buffer_copy(op->comm, op->host, op->recv, bytes);
    }
    uint64_t wrong = 0;
    for (size_t i = 0; i < op->count && st == INGOT_OK; i++) {
        float want = 0;
        for (int r = 0; r < s->world; r++) want += sweep_value(i, r);
        wrong += op->host[i] != want;
    }
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    *wrong_p = wrong;
    return arb_agree(st);
}

double arb_bus_factor(int world)
{
    return 2.0 * (world - 1) / world;
}

/* Both implementations in one mode of one size, and the check. */
static ingot_status_t sweep_mode(const arb_setup_t *s, const arb_args_t *a, const sweep_op_t *op,
                                 uint64_t bytes, arb_mode_result_t *m)
{
    double t, t_mpi;
    ingot_status_t st = sweep_time(op_ingot, op, a, &t);
    if (st != INGOT_OK) {
        return arb_fail(s, "ingot all-reduce", st);
    }
    /* MPI_Allreduce is the reference on host memory; on nccl's device buffers there is none
     * (this MPI is not CUDA-aware): its columns stay 0. */
    bool host = s->setup.backend == INGOT_COMM_BACKEND_MPI;
    if (host && (st = sweep_time(op_mpi, op, a, &t_mpi)) != INGOT_OK) {
        return arb_fail(s, "MPI_Allreduce", st);
    }
    if ((st = sweep_check(s, op, &m->wrong)) != INGOT_OK) {
        return arb_fail(s, "checked ingot all-reduce", st);
    }
    m->time_us = t * ARB_US_PER_S;
    m->algbw = (double)bytes / ARB_GB / t;
    m->busbw = m->algbw * arb_bus_factor(s->world);
    m->mpi_time_us = host ? t_mpi * ARB_US_PER_S : 0;
    m->mpi_busbw = host ? (double)bytes / ARB_GB / t_mpi * arb_bus_factor(s->world) : 0;
    m->ratio = host ? t_mpi / t : 0; /* = busbw / mpi_busbw, and defined on one rank too */
    return INGOT_OK;
}

static ingot_status_t sweep_size(const arb_setup_t *s, const arb_args_t *a, const sweep_bufs_t *b,
                                 uint64_t bytes, arb_row_t *row)
{
    row->count = bytes / SWEEP_FLOAT_BYTES;
    row->bytes = row->count * SWEEP_FLOAT_BYTES;
    sweep_op_t oop = {
        .comm = s->comm, .send = b->send, .recv = b->recv, .host = b->host, .count = row->count};
    sweep_op_t ip = {
        .comm = s->comm, .send = b->recv, .recv = b->recv, .host = b->host, .count = row->count};
    ingot_status_t st = sweep_mode(s, a, &oop, row->bytes, &row->oop);
    return st == INGOT_OK ? sweep_mode(s, a, &ip, row->bytes, &row->ip) : st;
}

/* Sizes from -b, times -f, while within -e (-b <= -e: at least one). */
static size_t sweep_rows(const arb_args_t *a)
{
    size_t n = 1;
    for (uint64_t b = a->min_bytes; b <= a->max_bytes / a->factor; b *= a->factor) n++;
    return n;
}

/* The communicator's buffers (pre-faulted on the host; device memory on nccl, zeroed), and the
 * host staging buffer. */
static ingot_status_t sweep_alloc(const arb_setup_t *s, uint64_t bytes, sweep_bufs_t *b)
{
    ingot_status_t st = ingot_comm_buffer_alloc(s->comm, bytes, (void **)&b->send);
    if (st == INGOT_OK) {
        st = ingot_comm_buffer_alloc(s->comm, bytes, (void **)&b->recv);
    }
    b->host = (st == INGOT_OK) ? calloc(1, bytes) : NULL;
    if (st == INGOT_OK && b->host == NULL) {
        st = INGOT_ERR_NO_MEMORY;
    }
    if (st == INGOT_OK) {
        st = ingot_comm_buffer_copy(s->comm, b->send, b->host, bytes);
    }
    if (st == INGOT_OK) {
        st = ingot_comm_buffer_copy(s->comm, b->recv, b->host, bytes);
    }
    if (st != INGOT_OK) {
        fprintf(stderr, ARB_TOOL ": rank %d: cannot allocate 2 x %llu bytes: %s\n", s->rank,
                (unsigned long long)bytes, ingot_last_error());
    }
    return arb_agree(st);
}

ingot_status_t arb_sweep_run(const arb_args_t *a, const arb_setup_t *s, arb_sweep_t *sw)
{
    sweep_bufs_t b = {NULL, NULL, NULL};
    size_t n = sweep_rows(a);
    sw->rows = calloc(n, sizeof(*sw->rows));
    sw->nrows = sw->rows ? n : 0;
    uint64_t largest = a->min_bytes;
    for (size_t i = 1; i < n; i++) largest *= a->factor;
    ingot_status_t st = arb_agree(sw->rows ? INGOT_OK : INGOT_ERR_NO_MEMORY);
    if (st == INGOT_OK) {
        st = sweep_alloc(s, largest, &b);
    }
    uint64_t bytes = a->min_bytes;
    /* b.host: agreed allocated when st is OK (the analyser cannot see through the agreement) */
    for (size_t i = 0; i < sw->nrows && st == INGOT_OK && b.host != NULL; i++, bytes *= a->factor) {
        st = sweep_size(s, a, &b, bytes, &sw->rows[i]);
    }
    ingot_comm_buffer_free(b.send);
    ingot_comm_buffer_free(b.recv);
    free(b.host);
    return st;
}

void arb_sweep_free(arb_sweep_t *sw)
{
    free(sw->rows);
    sw->rows = NULL;
}

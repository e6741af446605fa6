/*
 * NCCL backend: one GPU per rank. The communicator is created non-blocking
 * (ncclConfig_t.blocking = 0) so that its init and every call can be abandoned with
 * ncclCommAbort; the unique id travels with MPI_Bcast. Reductions are enqueued at start, in
 * start order, on a stream of ingot's own that first waits for the trainer's stream (the
 * gradients are produced there); each request records an event. Completion is an event query,
 * and NCCL's asynchronous errors are polled beside it and turned into INGOT_ERR_NCCL with NCCL's
 * message. The trainer's stream waits for a result before the trainer sees it. Bucket buffers
 * are allocated at registration, never while reductions run (cudaMalloc may then deadlock with
 * NCCL kernels, as NCCL documents).
 */
#include "collectives/engine_impl.h"
#include "base/cuda.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/time.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#if INGOT_BUILD_NCCL
#    include <cuda_runtime_api.h>

typedef struct nccl_be {
    const ingot_nccl_api_t *api;
    ncclComm_t comm;
    cudaStream_t stream;
    cudaEvent_t produced; /* recorded on the trainer's stream before each reduction */
    cudaEvent_t events[INGOT_COMM_MAX_REQUESTS];
    int nevents;
} nccl_be_t;

static ingot_status_t nccl_check(ingot_collectives_t *c, ncclResult_t rc, const char *call)
{
    nccl_be_t *be = c->be;
    if (rc == ncclSuccess || rc == ncclInProgress) {
        return INGOT_OK;
    }
    const char *last = (be->comm != NULL) ? be->api->get_last_error(be->comm) : "";
    return ingot_fail(INGOT_ERR_NCCL, "%s failed on rank %d (device %d): %s%s%s", call, c->rank,
                      c->prm.device, be->api->get_error_string(rc), last && *last ? ": " : "",
                      last ? last : "");
}

/* Wait out a non-blocking NCCL call (ncclInProgress) with the INGOT_TIMEOUT deadline. */
static ingot_status_t nccl_settle(ingot_collectives_t *c, const char *what)
{
    nccl_be_t *be = c->be;
    uint64_t deadline = ingot_deadline_after(c->prm.timeout_ns);
    for (;;) {
        ncclResult_t state = ncclSuccess;
        ingot_status_t st = nccl_check(c, be->api->comm_get_async_error(be->comm, &state),
                                       "ncclCommGetAsyncError");
        if (st != INGOT_OK || state == ncclSuccess) {
            return st;
        }
        if (state != ncclInProgress) {
            return nccl_check(c, state, what);
        }
        if (ingot_time_ns() >= deadline) {
            return ingot_fail(INGOT_ERR_TIMED_OUT,
                              "%s on rank %d not complete after %.1f s (INGOT_TIMEOUT): a rank "
                              "stopped or did not join",
                              what, c->rank, c->prm.timeout_ns / 1e9);
        }
        sched_yield();
    }
}

static ingot_status_t nccl_init(ingot_collectives_t *c)
{
    nccl_be_t *be = ingot_calloc(1, sizeof(*be), "NCCL communicator state");
    if (be == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    c->be = be;
    be->api = c->prm.nccl;
    ncclUniqueId id;
    memset(&id, 0, sizeof(id));
    ingot_status_t st = INGOT_OK;
    if (c->rank == 0) {
        st = nccl_check(c, be->api->get_unique_id(&id), "ncclGetUniqueId");
    }
    st = ingot_mpi_agree(&c->ctl, st, "NCCL unique id");
    if (st == INGOT_OK) {
        st = INGOT_MPI_CALL("NCCL unique id", MPI_Bcast, &id, (int)sizeof(id), MPI_BYTE, 0, c->ctl);
    }
    if (st == INGOT_OK) {
        st = ingot_cuda_check((int)cudaSetDevice(c->prm.device), "cudaSetDevice",
                              "NCCL communicator");
    }
    if (st == INGOT_OK) {
        st = ingot_cuda_check((int)cudaStreamCreateWithFlags(&be->stream, cudaStreamNonBlocking),
                              "cudaStreamCreate", "NCCL communicator");
    }
    if (st == INGOT_OK) {
        st = ingot_cuda_check((int)cudaEventCreateWithFlags(&be->produced, cudaEventDisableTiming),
                              "cudaEventCreate", "NCCL communicator");
    }
    for (int i = 0; i < INGOT_COMM_MAX_REQUESTS && st == INGOT_OK; i++) {
        st = ingot_cuda_check((int)cudaEventCreateWithFlags(&be->events[i], cudaEventDisableTiming),
                              "cudaEventCreate", "NCCL communicator");
        be->nevents += (st == INGOT_OK);
        c->pool[i].event = be->events[i];
    }
    /* Every rank's local set-up agreed before NCCL's init, so that a rank that failed here
     * does not leave the others waiting in it until INGOT_TIMEOUT for the wrong reason. */
    st = ingot_mpi_agree(&c->ctl, st, "NCCL communicator set-up");
    if (st == INGOT_OK) {
        ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
        config.blocking = 0;
        st = nccl_check(c, be->api->comm_init_rank_config(&be->comm, c->size, id, c->rank, &config),
                        "ncclCommInitRankConfig");
        if (st == INGOT_OK) {
            st = nccl_settle(c, "ncclCommInitRankConfig");
        }
        if (st != INGOT_OK && be->comm != NULL) {
            be->api->comm_abort(be->comm);
            be->comm = NULL;
        }
    }
    return st;
}

static void nccl_fini(ingot_collectives_t *c)
{
    nccl_be_t *be = c->be;
    if (be == NULL) {
        return;
    }
    if (be->comm != NULL) {
        if (atomic_load(&c->broken)) {
            be->api->comm_abort(be->comm);
        } else {
            ingot_status_t st = nccl_check(c, be->api->comm_finalize(be->comm), "ncclCommFinalize");
            if (st == INGOT_OK) {
                st = nccl_settle(c, "ncclCommFinalize");
            }
            if (st == INGOT_OK) {
                be->api->comm_destroy(be->comm);
            } else {
                be->api->comm_abort(be->comm);
            }
        }
    }
    for (size_t b = 0; b < c->grads.nbuckets; b++) {
        if (c->grads.buckets[b].req.event != NULL) {
            cudaEventDestroy((cudaEvent_t)c->grads.buckets[b].req.event);
        }
    }
    for (int i = 0; i < be->nevents; i++) {
        cudaEventDestroy(be->events[i]);
    }
    if (be->produced != NULL) {
        cudaEventDestroy(be->produced);
    }
    if (be->stream != NULL) {
        cudaStreamDestroy(be->stream);
    }
    cudaGetLastError();
    free(be);
    c->be = NULL;
}

static ingot_status_t nccl_check_buf(ingot_collectives_t *c, const void *buf, const char *what)
{
    int dev = ingot_cuda_pointer_device(buf);
    if (dev != c->prm.device) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "%s: %p is %s, and this rank's NCCL communicator reduces memory of "
                          "CUDA device %d",
                          what, buf, dev < 0 ? "host memory" : "memory of another CUDA device",
                          c->prm.device);
    }
    return INGOT_OK;
}

static ingot_status_t nccl_check_dtype(ingot_collectives_t *c, ingot_dtype_t dtype,
                                       const char *what)
{
    if (dtype != INGOT_DTYPE_FLOAT32 && dtype != INGOT_DTYPE_FLOAT16 &&
        dtype != INGOT_DTYPE_BFLOAT16) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "%s: unknown dtype %d", what, (int)dtype);
    }
    return INGOT_OK;
}

static ncclDataType_t nccl_type(ingot_dtype_t dtype)
{
    return dtype == INGOT_DTYPE_FLOAT16    ? ncclFloat16
           : dtype == INGOT_DTYPE_BFLOAT16 ? ncclBfloat16
                                           : ncclFloat32;
}

static ingot_status_t nccl_copy(ingot_collectives_t *c, void *dst, const void *src, size_t bytes,
                                bool to_flat)
{
    nccl_be_t *be = c->be;
    (void)to_flat;
    return ingot_cuda_check((int)cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice,
                                                 be->stream),
                            "cudaMemcpyAsync", "gradient bucket");
}

static ingot_status_t nccl_begin(ingot_collectives_t *c, struct ingot_request *r)
{
    nccl_be_t *be = c->be;
    cudaStream_t user = (cudaStream_t)c->prm.stream;
    /* The trainer's thread may have another device current by now. */
    ingot_status_t st = ingot_cuda_check((int)cudaSetDevice(c->prm.device), "cudaSetDevice",
                                         "all-reduce");
    if (st == INGOT_OK) {
        st = ingot_cuda_check((int)cudaEventRecord(be->produced, user), "cudaEventRecord",
                              "all-reduce");
    }
    if (st == INGOT_OK) {
        st = ingot_cuda_check((int)cudaStreamWaitEvent(be->stream, be->produced, 0),
                              "cudaStreamWaitEvent", "all-reduce");
    }
    if (st == INGOT_OK && r->event == NULL) { /* a bucket's request: its event, made once */
        cudaEvent_t ev;
        st = ingot_cuda_check((int)cudaEventCreateWithFlags(&ev, cudaEventDisableTiming),
                              "cudaEventCreate", "gradient bucket");
        r->event = (st == INGOT_OK) ? ev : NULL;
    }
    if (st == INGOT_OK && r->bucket != NULL && r->bucket->flat != NULL) {
        st = ingot_collectives_bucket_copy(c, r->bucket, true);
    }
    if (st == INGOT_OK) {
        ncclResult_t rc = be->api->all_reduce(r->send, r->recv, r->count, nccl_type(r->dtype),
                                              r->op == INGOT_OP_AVG ? ncclAvg : ncclSum, be->comm,
                                              be->stream);
        st = nccl_check(c, rc, "ncclAllReduce");
        if (st == INGOT_OK && rc == ncclInProgress) {
            /* Non-blocking communicator: the call may still be enqueuing (connecting, the
             * first time). Nothing may follow it on the stream before it is. */
            st = nccl_settle(c, "ncclAllReduce");
        }
    }
    if (st == INGOT_OK && r->bucket != NULL && r->bucket->flat != NULL) {
        st = ingot_collectives_bucket_copy(c, r->bucket, false);
    }
    if (st == INGOT_OK) {
        st = ingot_cuda_check((int)cudaEventRecord((cudaEvent_t)r->event, be->stream),
                              "cudaEventRecord", "all-reduce");
    }
    return st;
}

static ingot_status_t nccl_advance(ingot_collectives_t *c, struct ingot_request *r, bool *done)
{
    nccl_be_t *be = c->be;
    cudaError_t q = cudaEventQuery((cudaEvent_t)r->event);
    if (q == cudaSuccess) {
        *done = true;
        return INGOT_OK;
    }
    if (q != cudaErrorNotReady) {
        return ingot_cuda_check((int)q, "cudaEventQuery", "all-reduce");
    }
    ncclResult_t async = ncclSuccess;
    ingot_status_t st = nccl_check(c, be->api->comm_get_async_error(be->comm, &async),
                                   "ncclCommGetAsyncError");
    if (st == INGOT_OK && async != ncclSuccess && async != ncclInProgress) {
        st = nccl_check(c, async, "ncclAllReduce (asynchronous error)");
    }
    return st;
}

static void nccl_thread_init(ingot_collectives_t *c)
{
    if (cudaSetDevice(c->prm.device) != cudaSuccess) {
        cudaGetLastError();
        ingot_warn("collectives progress thread: cudaSetDevice(%d) failed", c->prm.device);
    }
}

static void nccl_abort(ingot_collectives_t *c)
{
    nccl_be_t *be = c->be;
    if (be != NULL && be->comm != NULL) {
        uint64_t t0 = ingot_time_ns();
        be->api->comm_abort(be->comm);
        be->comm = NULL;
        ingot_info("ncclCommAbort took %.1f ms", (ingot_time_ns() - t0) / 1e6);
    }
}

static void nccl_delivered(ingot_collectives_t *c, struct ingot_request *r)
{
    /* The trainer's stream sees the result only after the reduction (no host synchronisation
     * is needed for work it enqueues next). The host already saw the event complete, so a
     * failure here loses no ordering; it is reported all the same. */
    cudaError_t rc = cudaStreamWaitEvent((cudaStream_t)c->prm.stream, (cudaEvent_t)r->event, 0);
    if (rc != cudaSuccess) {
        ingot_warn("all-reduce %" PRIu64 ": cudaStreamWaitEvent on the trainer's stream: %s",
                   r->seq, cudaGetErrorString(rc));
        cudaGetLastError();
    }
}

static ingot_status_t nccl_bucket_alloc(ingot_collectives_t *c, collectives_bucket_t *b,
                                        size_t bytes)
{
    return ingot_cuda_malloc(&b->flat, bytes, "gradient bucket");
}

static void nccl_bucket_free(ingot_collectives_t *c, collectives_bucket_t *b)
{
    cudaFree(b->flat);
    cudaGetLastError();
    b->flat = NULL;
}

const collectives_ops_t ingot_collectives_nccl_ops = {
    .eager = true,
    .init = nccl_init,
    .fini = nccl_fini,
    .thread_init = nccl_thread_init,
    .check_buf = nccl_check_buf,
    .check_dtype = nccl_check_dtype,
    .begin = nccl_begin,
    .advance = nccl_advance,
    .abort = nccl_abort,
    .delivered = nccl_delivered,
    .copy = nccl_copy,
    .bucket_alloc = nccl_bucket_alloc,
    .bucket_free = nccl_bucket_free,
};

#else /* a build without NCCL: the backend exists and refuses to start */

static ingot_status_t nccl_unavailable(ingot_collectives_t *c)
{
    return ingot_fail(INGOT_ERR_UNSUPPORTED, "the nccl backend: this ingot was built without NCCL");
}

static void nccl_nothing(ingot_collectives_t *c)
{
    free(c->be);
    c->be = NULL;
}

const collectives_ops_t ingot_collectives_nccl_ops = {
    .init = nccl_unavailable,
    .fini = nccl_nothing,
};
#endif

/*
 * Internal API of the collectives layer: an all-reduce engine over an MPI communicator (host
 * memory) or an NCCL communicator (one GPU per rank), with asynchronous requests, a progress
 * thread, and DDP-style gradient buckets. It takes everything from its caller (the
 * communicator, the device, the CPUs to progress on, NCCL's function table, the deadline) and
 * never sees a context: runtime/collectives.c builds these parameters from one.
 *
 * Requests are served in the order they were started, one at a time, as NCCL serves one stream:
 * every rank starts the same reductions in the same order, so the order is the same everywhere
 * and no tag or persistent request depends on a buffer address.
 */
#ifndef INGOT_COLLECTIVES_ENGINE_H
#define INGOT_COLLECTIVES_ENGINE_H

#include <ingot/collectives.h>
#include <mpi.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "collectives/nccl_load.h"
#include "base/wait.h"

typedef struct ingot_coll ingot_collectives_t;

/** Parameters of ingot_collectives_create(). */
typedef struct ingot_collectives_params {
    MPI_Comm comm;                  /* duplicated inside (collective) */
    ingot_comm_backend_t backend;   /* MPI or NCCL (already resolved and agreed) */
    int device;                     /* NCCL: the CUDA device; MPI: -1 */
    void *stream;                   /* NCCL: the trainer's cudaStream_t (NULL: legacy default) */
    const ingot_nccl_api_t *nccl;   /* NCCL's table (NCCL backend) */
    bool thread_multiple;           /* MPI granted MPI_THREAD_MULTIPLE */
    const cpu_set_t *progress_cpus; /* where the progress thread runs; NULL: unbound */
    const char *progress_cpus_text; /* the same as a list, for the stats ("" unbound) */
    uint64_t timeout_ns;            /* INGOT_TIMEOUT */
    size_t bucket_bytes, first_bucket_bytes;
    size_t ring_min_bytes;          /* MPI: reductions from this size use the ring */
    size_t segment_bytes;           /* MPI ring: message size */
    const char *reason;             /* why this backend (for the stats) */
    _Atomic int *in_flight_total;   /* also counts this engine's reductions in flight (the
                                       context's, for ingest pacing); may be NULL */
    _Atomic int *in_flight_device;  /* the same for reductions that run GPU kernels (the
                                      context's: the loader allocates no device memory while
                                      any is in flight); may be NULL */
    const ingot_abort_t *peer_lost; /* raised when a rank is known to be lost (the peer cache
                                       declared it failed): a wait ends at once; may be NULL */
    /* called by a wait that has waited INGOT_COLLECTIVES_STALL_NS, then every INGOT_COLLECTIVES_STALL_NS,
     * with how long: it may look for a lost rank and raise peer_lost; may be NULL */
    void (*stalled)(void *arg, uint64_t waited_ns);
    void *stalled_arg;
} ingot_collectives_params_t;

/** How long a wait goes before it asks params->stalled, and then how often. */
#define INGOT_COLLECTIVES_STALL_NS (1000ull * 1000 * 1000)

/** Create an engine over @p params->comm (collective over it). */
ingot_status_t ingot_collectives_create(const ingot_collectives_params_t *params,
                                        ingot_collectives_t **collectives_p);
/** Destroy (waits for requests in flight, bounded; collective when healthy). Accepts NULL. */
void ingot_collectives_destroy(ingot_collectives_t *coll);

ingot_status_t ingot_collectives_allreduce_start(ingot_collectives_t *coll, const void *sendbuf,
                                                 void *recvbuf, size_t count, ingot_dtype_t dtype,
                                                 ingot_op_t op, ingot_request_h *req_p);
ingot_status_t ingot_collectives_request_test(ingot_request_h *req_p);
ingot_status_t ingot_collectives_request_wait(ingot_request_h *req_p);

ingot_status_t ingot_collectives_grads_register(ingot_collectives_t *coll,
                                                const ingot_grad_t *grads, size_t n, ingot_op_t op);
ingot_status_t ingot_collectives_grads_ready(ingot_collectives_t *coll, size_t index);
ingot_status_t ingot_collectives_grads_wait(ingot_collectives_t *coll);

/** Advance requests on the calling thread (what test and wait do when there is no progress
 *  thread); a no-op when a progress thread runs. */
void ingot_collectives_progress(ingot_collectives_t *coll);

/** Number of reductions in flight (for ingest pacing); any thread. */
int ingot_collectives_in_flight(const ingot_collectives_t *coll);

ingot_status_t ingot_collectives_stats(ingot_collectives_t *coll, ingot_comm_stats_t *stats_p);

/* ---------------------------------------------------------------- buckets (buckets.c) */

/** A bucket: registered tensors [first, first + ntensors) in reverse registration order. */
typedef struct ingot_bucket_span {
    size_t first; /* lowest tensor index of the bucket */
    size_t ntensors;
    size_t bytes;
} ingot_bucket_span_t;

/**
 * Plan buckets as DDP does: tensors taken from the last to the first, a bucket closed when the
 * next tensor would take it past its cap (first bucket: @p first_cap, others @p cap); a tensor
 * larger than the cap gets a bucket of its own. Pure. Writes at most @p n spans into @p spans
 * and returns how many buckets there are.
 */
size_t ingot_bucket_plan(const size_t *bytes, size_t n, size_t first_cap, size_t cap,
                         ingot_bucket_span_t *spans);

#endif

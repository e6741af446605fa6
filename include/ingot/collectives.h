/**
 * @file collectives.h
 * @brief Gradient all-reduce for data-parallel training: NCCL (GPU) and MPI (host) backends,
 *        asynchronous requests, and DDP-style bucketing that overlaps the reduction of one step
 *        with the compute of its backward pass and the ingest of the next step.
 *
 * A communicator (ingot_comm_h) is created from a context, over the context's ranks. Backends:
 *  - nccl: one GPU per rank, the GPU of the rank's placement; NCCL is loaded at run time
 *    (libnccl.so.2), so a process that already holds PyTorch's NCCL is not disturbed. Buffers
 *    are device memory of that GPU. Reduces float32, float16 and bfloat16.
 *  - mpi: MPI_Allreduce semantics on a duplicate of the context's communicator, host buffers
 *    (registered device gradients are staged through pinned host memory), float32. Large
 *    reductions run ingot's ring over point-to-point messages, with no allocation per call
 *    (docs/collectives.md says why not MPI_Iallreduce). Where MPI granted MPI_THREAD_MULTIPLE a
 *    progress thread
 *    (named ingot-coll, on the trainer's cores, never the ingest cores) advances every request
 *    while the trainer computes; otherwise a request advances only inside ingot calls (test,
 *    wait, grads_ready, loader_next), and ingot_comm_stats() says the overlap is reduced.
 *  - auto (default, INGOT_COMM_BACKEND): nccl when every rank has a GPU of its own and NCCL
 *    loads on every rank, else mpi; agreed by all ranks, the reason is in the stats.
 *
 * With nccl, ingot_comm_create() makes the placement's GPU the current device of the calling
 * thread (the trainer's, which computes on that GPU anyway).
 *
 * Every wait is bounded by INGOT_TIMEOUT. A request that does not complete in time fails with
 * INGOT_ERR_TIMED_OUT naming the operation; the communicator is then broken (NCCL: aborted with
 * ncclCommAbort; MPI: every later call fails at once) and the program should end: a rank that
 * stopped or died cannot be waited out, and ingot's own MPI calls in ingot_comm_destroy() and
 * ingot_finalize() are bounded by the watchdog, which ends the process past INGOT_TIMEOUT.
 *
 * Threads: the calls of one communicator are made by one thread at a time (the trainer's).
 * ingot_comm_create(), ingot_grads_register() and ingot_comm_destroy() are collective over the
 * context's communicator; the all-reduce calls are collective in the MPI sense (every rank
 * starts the same reductions in the same order).
 *
 * Implemented by runtime/collectives.c (the backend's choice needs the context's placement) over
 * the collectives layer (collectives/: the engine, the backends, the buckets).
 */
#ifndef INGOT_COLLECTIVES_H
#define INGOT_COLLECTIVES_H

#include <ingot/def.h>
#include <ingot/status.h>

INGOT_BEGIN_DECLS

/** Opaque handle to a communicator for gradient reductions. */
typedef struct ingot_comm    *ingot_comm_h;
/** Opaque handle to one asynchronous all-reduce. */
typedef struct ingot_request *ingot_request_h;

/** Element types. */
typedef enum ingot_dtype {
    INGOT_DTYPE_FLOAT32  = 0, /**< Both backends. */
    INGOT_DTYPE_FLOAT16  = 1, /**< IEEE half; NCCL only. */
    INGOT_DTYPE_BFLOAT16 = 2  /**< bfloat16; NCCL only. */
} ingot_dtype_t;

/** Reductions. */
typedef enum ingot_op {
    INGOT_OP_SUM = 0, /**< Sum over ranks. */
    INGOT_OP_AVG = 1  /**< Sum divided by the number of ranks (as DDP averages gradients). */
} ingot_op_t;

/** Backends. */
typedef enum ingot_comm_backend {
    INGOT_COMM_BACKEND_AUTO = 0, /**< NCCL when every rank has a GPU of its own, else MPI. */
    INGOT_COMM_BACKEND_MPI  = 1, /**< MPI on host memory. */
    INGOT_COMM_BACKEND_NCCL = 2  /**< NCCL on the placement's GPU. */
} ingot_comm_backend_t;

/** Fields of ingot_comm_params_t. */
typedef enum ingot_comm_param_field {
    INGOT_COMM_PARAM_FIELD_BACKEND = INGOT_BIT(0), /**< backend (default INGOT_COMM_BACKEND). */
    INGOT_COMM_PARAM_FIELD_BUCKETS =
        INGOT_BIT(1), /**< bucket_bytes, first_bucket_bytes (default INGOT_BUCKET_BYTES and
                           INGOT_FIRST_BUCKET_BYTES). */
    INGOT_COMM_PARAM_FIELD_STREAM = INGOT_BIT(2) /**< stream (default: the legacy default
                                                      stream, NULL). */
} ingot_comm_param_field_t;

/** Parameters of ingot_comm_create(). */
typedef struct ingot_comm_params {
    uint64_t             field_mask; /**< ingot_comm_param_field bits. */
    ingot_comm_backend_t backend;
    size_t               bucket_bytes;       /**< Cap of a gradient bucket (DDP: 25 MiB). */
    size_t               first_bucket_bytes; /**< Cap of the first bucket (DDP: 1 MiB). */
    void *stream; /**< nccl: the cudaStream_t the trainer computes gradients and reads results
                       on. A reduction waits for the work enqueued there before it starts, and
                       that stream waits for a result when ingot_request_wait() or
                       ingot_grads_wait() returns it. */
} ingot_comm_params_t;

/** Fields of ingot_comm_stats_t. */
typedef enum ingot_comm_stats_field {
    INGOT_COMM_STATS_FIELD_SETUP  = INGOT_BIT(0), /**< backend .. reason. */
    INGOT_COMM_STATS_FIELD_COUNTS = INGOT_BIT(1), /**< started .. buckets. */
    INGOT_COMM_STATS_FIELD_TIMES  = INGOT_BIT(2)  /**< reduce_ns .. steps. */
} ingot_comm_stats_field_t;

#define INGOT_COMM_STR_MAX 256

/**
 * Statistics of a communicator. The caller sets field_mask; ingot writes the fields it names
 * and leaves every other byte untouched (see def.h). Times in nanoseconds.
 */
typedef struct ingot_comm_stats {
    uint64_t             field_mask; /**< In: ingot_comm_stats_field bits of fields to write. */
    ingot_comm_backend_t backend;    /**< The backend chosen (MPI or NCCL, never AUTO). */
    int                  device;     /**< CUDA device of the NCCL backend, else -1. */
    int                  size;       /**< Ranks. */
    int                  progress_thread;         /**< 1: a progress thread advances requests. */
    char     progress_cpuset[INGOT_COMM_STR_MAX]; /**< CPUs of the progress thread ("" unbound). */
    char     reason[INGOT_COMM_STR_MAX];          /**< Why this backend and progress mode. */
    uint64_t started;                             /**< All-reduces started (buckets included). */
    uint64_t completed;                           /**< All-reduces completed. */
    uint64_t background; /**< Of completed: completed by the progress thread before the trainer
                              began to wait for them (the reductions that overlapped fully). */
    uint64_t bytes;      /**< Bytes reduced (per rank, the buffer sizes). */
    uint64_t buckets;    /**< Buckets of the registered gradients. */
    uint64_t reduce_ns;  /**< Sum over reductions of start -> completion. */
    uint64_t exposed_ns; /**< Time the trainer spent blocked in waits (not hidden). */
    uint64_t steps;      /**< ingot_grads_wait() calls that completed a step. */
} ingot_comm_stats_t;

/** One gradient tensor of ingot_grads_register(). */
typedef struct ingot_grad {
    void         *buf;   /**< Its memory (host, or the NCCL backend's device); reduced in place. */
    size_t        count; /**< Elements. */
    ingot_dtype_t dtype;
} ingot_grad_t;

/**
 * @brief Create a communicator over the context's ranks (collective).
 * @return INGOT_OK; INGOT_ERR_NO_DEVICE (nccl asked for where a rank has no GPU, or ranks share
 *         one: logged naming the ranks); INGOT_ERR_NOT_FOUND / INGOT_ERR_UNSUPPORTED (nccl asked
 *         for and NCCL does not load: logged with why); INGOT_ERR_CONFIG; INGOT_ERR_MPI;
 *         INGOT_ERR_NCCL; INGOT_ERR_TIMED_OUT (NCCL init past INGOT_TIMEOUT). Every rank
 *         returns the same status.
 */
INGOT_API ingot_status_t ingot_comm_create(ingot_ctx_h ctx, const ingot_comm_params_t *params,
                                           ingot_comm_h *comm_p);

/**
 * @brief Destroy a communicator (collective when it is healthy). Requests still in flight are
 *        waited for (bounded by INGOT_TIMEOUT); a broken communicator is torn down without
 *        waiting. Accepts NULL.
 */
INGOT_API void ingot_comm_destroy(ingot_comm_h comm);

/**
 * @brief Start an all-reduce of @p count elements from @p sendbuf into @p recvbuf
 *        (@p sendbuf == @p recvbuf: in place).
 * @param req_p out: the request; complete it with ingot_request_test() or ingot_request_wait().
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM (NULL, count 0, a dtype or op the backend does not
 *         reduce, a buffer on the wrong device: logged naming it); INGOT_ERR_NO_RESOURCE (more
 *         than INGOT_COMM_MAX_REQUESTS in flight); INGOT_ERR_CANCELED (the communicator broke).
 */
INGOT_API ingot_status_t ingot_allreduce_start(ingot_comm_h comm, const void *sendbuf,
                                               void *recvbuf, size_t count, ingot_dtype_t dtype,
                                               ingot_op_t op, ingot_request_h *req_p);

/** Requests one communicator may have in flight. */
#define INGOT_COMM_MAX_REQUESTS 64

/**
 * @brief Whether a request is complete, without blocking.
 * @return INGOT_OK: complete, the result is in recvbuf and the request is freed (*@p req_p set
 *         to NULL); INGOT_INPROGRESS: not yet; an error (the request is freed, the
 *         communicator broken).
 */
INGOT_API ingot_status_t ingot_request_test(ingot_request_h *req_p);

/**
 * @brief Wait for a request (bounded by INGOT_TIMEOUT) and free it (*@p req_p set to NULL).
 * @return INGOT_OK; INGOT_ERR_TIMED_OUT (logged naming the operation, its size, the backend
 *         and the deadline; the communicator is broken); INGOT_ERR_NCCL / INGOT_ERR_MPI.
 */
INGOT_API ingot_status_t ingot_request_wait(ingot_request_h *req_p);

/**
 * @brief Register the model's gradient tensors, in parameter order, once (collective). They are
 *        grouped into buckets as PyTorch DDP does: in reverse order (gradients become ready from
 *        the last layer back), each bucket capped at bucket_bytes, the first one at
 *        first_bucket_bytes; a tensor is never split (one larger than the cap gets a bucket of
 *        its own). Every rank must register the same counts and dtypes.
 * @return INGOT_OK; INGOT_ERR_MISMATCH (counts or dtypes differ across ranks: logged naming the
 *         ranks); INGOT_ERR_INVALID_PARAM (a tensor given twice, NULL, count 0, a dtype the
 *         backend does not reduce, a buffer on the wrong device); INGOT_ERR_EXISTS (already
 *         registered); INGOT_ERR_NO_MEMORY.
 */
INGOT_API ingot_status_t ingot_grads_register(ingot_comm_h comm, const ingot_grad_t *grads,
                                              size_t count, ingot_op_t op);

/**
 * @brief Mark gradient @p index (its position in the registration) ready for this step. When
 *        it completes its bucket, and every earlier bucket has been started, the bucket's
 *        all-reduce starts at once (buckets start in order).
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM (unknown index, or marked twice in one step: logged
 *         with the index); INGOT_ERR_CANCELED (the communicator broke).
 */
INGOT_API ingot_status_t ingot_grads_ready(ingot_comm_h comm, size_t index);

/**
 * @brief Wait until every bucket of the step is reduced (bounded by INGOT_TIMEOUT) and the
 *        results are in the registered tensors; starts the next step.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM (gradients not marked ready: logged with the first
 *         missing index; nothing is waited for); INGOT_ERR_TIMED_OUT; INGOT_ERR_NCCL;
 *         INGOT_ERR_MPI.
 */
INGOT_API ingot_status_t ingot_grads_wait(ingot_comm_h comm);

/**
 * @brief Allocate @p bytes of memory this communicator reduces (as ncclMemAlloc): device memory
 *        of its GPU for nccl, page-aligned host memory, pre-faulted, for mpi. For benchmarks and
 *        tests that have no CUDA of their own; trainers pass their framework's tensors.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM (NULL, 0 bytes); INGOT_ERR_NO_MEMORY (logged with
 *         the size and the device's free memory).
 */
INGOT_API ingot_status_t ingot_comm_buffer_alloc(ingot_comm_h comm, size_t bytes, void **ptr_p);

/** @brief Free a buffer of ingot_comm_buffer_alloc() (NULL: nothing), also after its
 *         communicator was destroyed (as ncclMemFree). */
INGOT_API void ingot_comm_buffer_free(void *ptr);

/**
 * @brief Copy @p bytes between host memory and a buffer of ingot_comm_buffer_alloc() (either
 *        way, or host to host) and wait for it.
 * @return INGOT_OK; INGOT_ERR_CUDA (logged).
 */
INGOT_API ingot_status_t ingot_comm_buffer_copy(ingot_comm_h comm, void *dst, const void *src,
                                                size_t bytes);

/**
 * @brief Statistics so far.
 * @param stats_p in: field_mask; out: the fields it names.
 */
INGOT_API ingot_status_t ingot_comm_stats(ingot_comm_h comm, ingot_comm_stats_t *stats_p);

/** Name of a backend ("auto", "mpi", "nccl"), "unknown" otherwise. */
INGOT_API const char *ingot_comm_backend_name(ingot_comm_backend_t backend);

INGOT_END_DECLS

#endif /* INGOT_COLLECTIVES_H */

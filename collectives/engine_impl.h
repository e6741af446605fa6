/*
 * The engine behind engine.h, shared by its sources: engine.c (requests, queue, progress
 * thread, waits, stats), buckets.c (gradient buckets), backend_mpi.c and backend_nccl.c (the
 * backends).
 */
#ifndef INGOT_COLLECTIVES_ENGINE_IMPL_H
#define INGOT_COLLECTIVES_ENGINE_IMPL_H

#include "collectives/engine.h"
#include "base/mem.h"
#include "base/wait.h"
#include <pthread.h>
#include <stdatomic.h>

typedef enum collectives_req_state {
    COLLECTIVES_REQ_FREE = 0,   /* in the user pool */
    COLLECTIVES_REQ_QUEUED = 1, /* started, waiting or being served */
    COLLECTIVES_REQ_DONE = 2,   /* complete (status says how) */
    COLLECTIVES_REQ_LOST = 3    /* abandoned after a timeout: never reused */
} collectives_req_state_t;

typedef struct collectives_bucket collectives_bucket_t;

struct ingot_request {
    ingot_collectives_t *coll;
    _Atomic int state; /* collectives_req_state_t */
    const void *send;  /* what is reduced ... */
    void *recv;        /* ... into where */
    size_t count;
    ingot_dtype_t dtype;
    ingot_op_t op;
    bool begun;          /* the backend has started it */
    bool user;           /* a user handle (pool) rather than a bucket's */
    bool background;     /* completed by the progress thread while nobody waited for it */
    _Atomic bool waited; /* the trainer began to wait for it before it completed */
    uint64_t seq;        /* start order, the same on every rank */
    uint64_t start_ns;
    ingot_status_t status;        /* when DONE */
    collectives_bucket_t *bucket; /* the bucket it reduces, or NULL */
    void *event;                  /* NCCL: its cudaEvent_t */
    struct ingot_request *next;   /* queue link */
};

/** A gradient bucket: tensors [first, first + n) reduced together. */
struct collectives_bucket {
    size_t first, ntensors;
    size_t count;         /* elements */
    void *flat;           /* the bucket's buffer (NULL: one tensor reduced in place) */
    ingot_mem_t flat_mem; /* MPI: its host memory */
    size_t ready;         /* tensors marked ready this step */
    struct ingot_request req;
};

/** What a backend provides. */
typedef struct collectives_ops {
    bool eager; /* begin at start (NCCL: enqueue on the stream) vs at queue head */
    ingot_status_t (*init)(ingot_collectives_t *c);
    void (*fini)(ingot_collectives_t *c);
    /** Called first on the progress thread (NCCL: make the communicator's device current, so
     *  the thread never creates a context on device 0). */
    void (*thread_init)(ingot_collectives_t *c);
    /** Is @p buf memory this backend reduces? (logged with @p what on error) */
    ingot_status_t (*check_buf)(ingot_collectives_t *c, const void *buf, const char *what);
    ingot_status_t (*check_dtype)(ingot_collectives_t *c, ingot_dtype_t dtype, const char *what);
    ingot_status_t (*begin)(ingot_collectives_t *c, struct ingot_request *r);
    ingot_status_t (*advance)(ingot_collectives_t *c, struct ingot_request *r, bool *done);
    void (*abort)(ingot_collectives_t *c);
    /** Called on the trainer's thread when a request it waited for completed. */
    void (*delivered)(ingot_collectives_t *c, struct ingot_request *r);
    /** Copy between a tensor and a bucket's flat buffer (@p to_flat: before the reduction). */
    ingot_status_t (*copy)(ingot_collectives_t *c, void *dst, const void *src, size_t bytes,
                           bool to_flat);
    ingot_status_t (*bucket_alloc)(ingot_collectives_t *c, collectives_bucket_t *b, size_t bytes);
    void (*bucket_free)(ingot_collectives_t *c, collectives_bucket_t *b);
} collectives_ops_t;

extern const collectives_ops_t ingot_collectives_mpi_ops;
extern const collectives_ops_t ingot_collectives_nccl_ops;

typedef struct collectives_grads {
    ingot_grad_t *grads; /* registered tensors */
    size_t n;
    ingot_op_t op;
    size_t *bucket_of; /* tensor -> bucket index */
    bool *ready;       /* tensor marked ready this step */
    collectives_bucket_t *buckets;
    size_t nbuckets;
    size_t next_launch; /* buckets start in order */
    size_t nready;
} collectives_grads_t;

struct ingot_coll {
    ingot_collectives_params_t prm;
    char reason[INGOT_COMM_STR_MAX];
    char progress_cpus[INGOT_COMM_STR_MAX];
    const collectives_ops_t *ops;
    void *be;      /* backend state */
    MPI_Comm comm; /* duplicate of prm.comm: the reductions */
    MPI_Comm ctl;  /* another: the blocking agreements (create, registration) */
    int rank, size;

    pthread_mutex_t mu; /* queue, pool */
    pthread_cond_t cv;  /* progress thread: work queued or stop */
    struct ingot_request *head, *tail;
    _Atomic int in_flight;
    uint64_t next_seq;
    struct ingot_request pool[INGOT_COMM_MAX_REQUESTS];

    pthread_mutex_t engine; /* one thread serves the queue at a time */
    _Atomic int broken;     /* ingot_status_t that broke the communicator, 0 if healthy */

    bool progress_thread;
    bool progress_failed; /* wanted, but pthread_create failed */
    pthread_t progress;
    _Atomic int stop;

    collectives_grads_t grads;

    _Atomic uint64_t started, completed, background, bytes, reduce_ns, exposed_ns, steps;
};

size_t ingot_dtype_size(ingot_dtype_t dtype);
const char *ingot_dtype_name(ingot_dtype_t dtype);

/** Queue @p r (already filled) and, for eager backends, begin it. */
ingot_status_t ingot_collectives_enqueue(ingot_collectives_t *c, struct ingot_request *r);
/** Wait for @p r with the INGOT_TIMEOUT deadline; the time blocked counts as exposed. */
ingot_status_t ingot_collectives_wait_req(ingot_collectives_t *c, struct ingot_request *r,
                                          const char *what);
/** Mark the communicator broken with @p st (first cause wins) and abort the backend, under the
 *  engine lock (@p engine_held: the caller holds it already). */
void ingot_collectives_break(ingot_collectives_t *c, ingot_status_t st, bool engine_held);

/* buckets.c */
void ingot_collectives_grads_release(ingot_collectives_t *c);
/** Copy a bucket's tensors into its flat buffer (@p in, before the reduction) or back. */
ingot_status_t ingot_collectives_bucket_copy(ingot_collectives_t *c, collectives_bucket_t *b,
                                             bool in);

#endif

/*
 * The all-reduce engine (engine.h): requests queued in start order and served by one thread at a
 * time, either the progress thread (NCCL always; MPI where MPI_THREAD_MULTIPLE was granted) or
 * the trainer's own ingot calls. Waits are bounded by INGOT_TIMEOUT; a timeout or a backend
 * error breaks the communicator, and every later call fails at once.
 */
#include "collectives/engine_impl.h"
#include "collectives/collectives_config.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/thread.h"
#include "base/time.h"
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

size_t ingot_dtype_size(ingot_dtype_t dtype)
{
    return dtype == INGOT_DTYPE_FLOAT32 ? 4 : 2;
}

const char *ingot_dtype_name(ingot_dtype_t dtype)
{
    switch (dtype) {
    case INGOT_DTYPE_FLOAT32: return "float32";
    case INGOT_DTYPE_FLOAT16: return "float16";
    case INGOT_DTYPE_BFLOAT16: return "bfloat16";
    }
    return "unknown";
}

static const char *op_name(ingot_op_t op)
{
    return op == INGOT_OP_AVG ? "avg" : "sum";
}

void ingot_collectives_break(ingot_collectives_t *c, ingot_status_t st, bool engine_held)
{
    int expected = 0;
    if (atomic_compare_exchange_strong(&c->broken, &expected, (int)st)) {
        /* The backend is aborted with the engine held, so that no thread is inside it (NCCL:
         * ncclCommAbort must not race an event query or an async-error poll of the progress
         * thread). The engine never waits for anything while held, so this is bounded. */
        if (!engine_held) {
            pthread_mutex_lock(&c->engine);
        }
        c->ops->abort(c);
        if (!engine_held) {
            pthread_mutex_unlock(&c->engine);
        }
    }
}

/* Reductions in flight: this engine's, and the context's totals it was given. */
static void in_flight_add(ingot_collectives_t *c, int delta)
{
    atomic_fetch_add(&c->in_flight, delta);
    if (c->prm.in_flight_total != NULL) {
        atomic_fetch_add(c->prm.in_flight_total, delta);
    }
    if (c->prm.in_flight_device != NULL) {
        atomic_fetch_add(c->prm.in_flight_device, delta);
    }
}

static void req_finish(ingot_collectives_t *c, struct ingot_request *r, ingot_status_t st, bool bg)
{
    if (st == INGOT_OK && r->bucket != NULL && r->bucket->flat != NULL && !c->ops->eager) {
        st = ingot_collectives_bucket_copy(c, r->bucket, false);
    }
    r->status = st;
    r->background = bg && !atomic_load(&r->waited);
    atomic_fetch_add(&c->reduce_ns, ingot_time_ns() - r->start_ns);
    if (r->background) { /* before completed: a reader of completed then background sees both */
        atomic_fetch_add(&c->background, 1);
    }
    atomic_fetch_add(&c->completed, 1);
    in_flight_add(c, -1);
    atomic_store_explicit(&r->state, COLLECTIVES_REQ_DONE, memory_order_release);
}

/* Serve the queue from its head; the caller holds c->engine. Returns whether anything moved. */
static bool engine_serve(ingot_collectives_t *c, bool bg)
{
    bool moved = false;
    for (;;) {
        if (atomic_load(&c->broken)) {
            return moved;
        }
        pthread_mutex_lock(&c->mu);
        struct ingot_request *r = c->head;
        pthread_mutex_unlock(&c->mu);
        if (r == NULL) {
            return moved;
        }
        ingot_status_t st = INGOT_OK;
        bool done = false;
        if (!r->begun) {
            r->begun = true;
            st = c->ops->begin(c, r);
            moved = true;
        }
        if (st == INGOT_OK) {
            st = c->ops->advance(c, r, &done);
        }
        if (st != INGOT_OK) {
            ingot_collectives_break(c, st, true);
            done = true;
        }
        if (!done) {
            return moved;
        }
        pthread_mutex_lock(&c->mu);
        c->head = r->next;
        if (c->head == NULL) {
            c->tail = NULL;
        }
        pthread_mutex_unlock(&c->mu);
        req_finish(c, r, st, bg);
        moved = true;
    }
}

void ingot_collectives_progress(ingot_collectives_t *c)
{
    /* With a progress thread too: a start or a wait that finds the engine free serves the queue
     * itself, so a small reduction completes without waiting for another thread to wake. */
    if (pthread_mutex_trylock(&c->engine) != 0) {
        return;
    }
    engine_serve(c, false);
    pthread_mutex_unlock(&c->engine);
}

static void *progress_main(void *arg)
{
    ingot_collectives_t *c = arg;
    c->ops->thread_init(c);
    if (c->prm.progress_cpus != NULL &&
        pthread_setaffinity_np(pthread_self(), sizeof(cpu_set_t), c->prm.progress_cpus) != 0) {
        ingot_warn("collectives progress thread stays unbound: pthread_setaffinity_np to %s "
                   "failed",
                   c->progress_cpus);
    }
    for (;;) {
        pthread_mutex_lock(&c->mu);
        while (!atomic_load(&c->stop) && (c->head == NULL || atomic_load(&c->broken))) {
            pthread_cond_wait(&c->cv, &c->mu);
        }
        pthread_mutex_unlock(&c->mu);
        if (atomic_load(&c->stop)) {
            return NULL;
        }
        bool moved = false;
        if (pthread_mutex_trylock(&c->engine) == 0) { /* else a waiter is serving: let it */
            moved = engine_serve(c, true);
            pthread_mutex_unlock(&c->engine);
        }
        if (!moved) {
            sched_yield(); /* transfers advance only inside MPI or the GPU: poll again soon */
        }
    }
}

ingot_status_t ingot_collectives_enqueue(ingot_collectives_t *c, struct ingot_request *r)
{
    int broken = atomic_load(&c->broken);
    if (broken) { /* done with that status: a later wait on it fails too, never succeeds */
        r->status = INGOT_ERR_CANCELED;
        atomic_store(&r->state, COLLECTIVES_REQ_DONE);
        return ingot_fail(INGOT_ERR_CANCELED,
                          "all-reduce refused: the communicator broke earlier (%s)",
                          ingot_status_string((ingot_status_t)broken));
    }
    r->begun = false;
    r->background = false;
    atomic_store(&r->waited, false);
    r->next = NULL;
    r->start_ns = ingot_time_ns();
    r->seq = c->next_seq++;
    atomic_store(&r->state, COLLECTIVES_REQ_QUEUED);
    if (c->ops->eager) {
        /* Enqueued on the GPU stream now, in start order, with the engine held: no abort can
         * run while this thread is inside the backend. */
        pthread_mutex_lock(&c->engine);
        r->begun = true;
        ingot_status_t st = atomic_load(&c->broken) ? INGOT_ERR_CANCELED : c->ops->begin(c, r);
        if (st != INGOT_OK) {
            ingot_collectives_break(c, st, true);
        }
        pthread_mutex_unlock(&c->engine);
        if (st != INGOT_OK) {
            r->status = st;
            atomic_store(&r->state, COLLECTIVES_REQ_DONE);
            return st;
        }
    }
    atomic_fetch_add(&c->started, 1);
    atomic_fetch_add(&c->bytes, r->count * ingot_dtype_size(r->dtype));
    in_flight_add(c, 1);
    pthread_mutex_lock(&c->mu);
    if (c->tail != NULL) {
        c->tail->next = r;
    } else {
        c->head = r;
    }
    c->tail = r;
    pthread_cond_signal(&c->cv);
    pthread_mutex_unlock(&c->mu);
    ingot_collectives_progress(c); /* inline progress: start it now */
    return INGOT_OK;
}

static bool req_done(void *arg)
{
    const struct ingot_request *r = arg;
    return atomic_load_explicit(&r->state, memory_order_acquire) == COLLECTIVES_REQ_DONE ||
           atomic_load(&r->coll->broken) != 0;
}

ingot_status_t ingot_collectives_wait_req(ingot_collectives_t *c, struct ingot_request *r,
                                          const char *what)
{
    uint64_t t0 = ingot_time_ns();
    uint64_t deadline = ingot_deadline_after(c->prm.timeout_ns);
    uint64_t next_stall_check = t0 + INGOT_COLLECTIVES_STALL_NS;
    ingot_status_t st = INGOT_OK;
    atomic_store(&r->waited, true); /* what completes from now on was not hidden */
    /* The waiting thread drives the queue itself, as MPI_Wait polls (with a progress thread
     * too: handing the completion over to a sleeping waiter cost a 1 MiB reduction a third of
     * its speed here). It is blocked anyway; between passes that move nothing it yields. */
    while (!req_done(r)) {
        ingot_collectives_progress(c);
        if (req_done(r)) {
            break;
        }
        if (ingot_time_ns() >= deadline) {
            st = INGOT_ERR_TIMED_OUT;
            break;
        }
        if (c->prm.stalled != NULL && ingot_time_ns() >= next_stall_check) {
            c->prm.stalled(c->prm.stalled_arg, ingot_time_ns() - t0);
            next_stall_check = ingot_time_ns() + INGOT_COLLECTIVES_STALL_NS;
        }
        if (ingot_abort_is_raised(c->prm.peer_lost)) {
            st = INGOT_ERR_CANCELED;
            break;
        }
        sched_yield();
    }
    atomic_fetch_add(&c->exposed_ns, ingot_time_ns() - t0);
    if (st == INGOT_OK && atomic_load(&r->state) == COLLECTIVES_REQ_DONE) {
        if (r->status == INGOT_OK) {
            c->ops->delivered(c, r);
        }
        return r->status;
    }
    int broken = atomic_load(&c->broken);
    if (st == INGOT_OK && broken) { /* broken by another request or by a backend error */
        return ingot_fail((ingot_status_t)broken,
                          "%s (%zu x %s %s, request %" PRIu64 ") did not complete: the "
                          "communicator broke (%s)",
                          what, r->count, ingot_dtype_name(r->dtype), op_name(r->op), r->seq,
                          ingot_status_string((ingot_status_t)broken));
    }
    /* Past the deadline. Under the engine lock the request cannot complete any more: if it
     * did just now, it is a success after all; else the communicator is broken (no thread
     * touches the request again). */
    pthread_mutex_lock(&c->engine);
    bool done_late = atomic_load(&r->state) == COLLECTIVES_REQ_DONE;
    if (!done_late) {
        ingot_collectives_break(c, st, true);
    }
    pthread_mutex_unlock(&c->engine);
    if (done_late) {
        if (r->status == INGOT_OK) {
            c->ops->delivered(c, r);
        }
        return r->status;
    }
    atomic_store(&r->state, COLLECTIVES_REQ_LOST);
    if (st == INGOT_ERR_CANCELED) {
        return ingot_fail(INGOT_ERR_CANCELED,
                          "%s (%zu x %s %s, request %" PRIu64 ", %s backend, %d ranks) abandoned: "
                          "a rank of the job is lost (named above; INGOT_PEER_FAILURE=abort); the "
                          "communicator is broken",
                          what, r->count, ingot_dtype_name(r->dtype), op_name(r->op), r->seq,
                          ingot_collectives_backend_names[c->prm.backend], c->size);
    }
    return ingot_fail(INGOT_ERR_TIMED_OUT,
                      "%s (%zu x %s %s, request %" PRIu64 ", %s backend, %d ranks) not complete "
                      "after %.1f s (INGOT_TIMEOUT): a rank stopped, died or did not start the "
                      "same reduction; the communicator is broken",
                      what, r->count, ingot_dtype_name(r->dtype), op_name(r->op), r->seq,
                      ingot_collectives_backend_names[c->prm.backend], c->size,
                      c->prm.timeout_ns / 1e9);
}

/* ---------------------------------------------------------------- one-shot requests */

ingot_status_t ingot_collectives_allreduce_start(ingot_collectives_t *c, const void *sendbuf,
                                                 void *recvbuf, size_t count, ingot_dtype_t dtype,
                                                 ingot_op_t op, ingot_request_h *req_p)
{
    ingot_status_t st;
    if (req_p == NULL || sendbuf == NULL || recvbuf == NULL || count == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_allreduce_start: %s",
                          req_p == NULL ? "req_p is NULL"
                          : count == 0  ? "count is 0"
                                        : "a buffer is NULL");
    }
    if (op != INGOT_OP_SUM && op != INGOT_OP_AVG) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_allreduce_start: unknown op %d", (int)op);
    }
    if (count > (size_t)INT32_MAX * 64) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_allreduce_start: count %zu too large",
                          count);
    }
    if ((st = c->ops->check_dtype(c, dtype, "ingot_allreduce_start")) != INGOT_OK ||
        (st = c->ops->check_buf(c, sendbuf, "ingot_allreduce_start: sendbuf")) != INGOT_OK ||
        (st = c->ops->check_buf(c, recvbuf, "ingot_allreduce_start: recvbuf")) != INGOT_OK) {
        return st;
    }
    struct ingot_request *r = NULL;
    pthread_mutex_lock(&c->mu);
    for (int i = 0; i < INGOT_COMM_MAX_REQUESTS && r == NULL; i++) {
        if (atomic_load(&c->pool[i].state) == COLLECTIVES_REQ_FREE) {
            r = &c->pool[i];
            atomic_store(&r->state, COLLECTIVES_REQ_QUEUED);
        }
    }
    pthread_mutex_unlock(&c->mu);
    if (r == NULL) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE,
                          "ingot_allreduce_start: %d requests already in flight or not yet "
                          "completed with ingot_request_test/wait",
                          INGOT_COMM_MAX_REQUESTS);
    }
    r->send = sendbuf;
    r->recv = recvbuf;
    r->count = count;
    r->dtype = dtype;
    r->op = op;
    r->bucket = NULL;
    if ((st = ingot_collectives_enqueue(c, r)) != INGOT_OK) {
        atomic_store(&r->state, COLLECTIVES_REQ_FREE);
        return st;
    }
    *req_p = r;
    return INGOT_OK;
}

static ingot_status_t request_check(ingot_request_h *req_p, const char *fn)
{
    if (req_p == NULL || *req_p == NULL || !(*req_p)->user ||
        atomic_load(&(*req_p)->state) == COLLECTIVES_REQ_FREE) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "%s: %s", fn,
                          (req_p == NULL || *req_p == NULL)
                              ? "no request (NULL)"
                              : "not a live request (already completed, or not from "
                                "ingot_allreduce_start)");
    }
    return INGOT_OK;
}

static ingot_status_t request_release(ingot_request_h *req_p, ingot_status_t st)
{
    struct ingot_request *r = *req_p;
    if (atomic_load(&r->state) != COLLECTIVES_REQ_LOST) {
        atomic_store(&r->state, COLLECTIVES_REQ_FREE);
    }
    *req_p = NULL;
    return st;
}

ingot_status_t ingot_collectives_request_test(ingot_request_h *req_p)
{
    ingot_status_t st = request_check(req_p, "ingot_request_test");
    if (st != INGOT_OK) {
        return st;
    }
    struct ingot_request *r = *req_p;
    ingot_collectives_progress(r->coll);
    if (!req_done(r)) {
        return INGOT_INPROGRESS;
    }
    return request_release(req_p, ingot_collectives_wait_req(r->coll, r, "all-reduce"));
}

ingot_status_t ingot_collectives_request_wait(ingot_request_h *req_p)
{
    ingot_status_t st = request_check(req_p, "ingot_request_wait");
    if (st != INGOT_OK) {
        return st;
    }
    return request_release(req_p, ingot_collectives_wait_req((*req_p)->coll, *req_p, "all-reduce"));
}

int ingot_collectives_in_flight(const ingot_collectives_t *c)
{
    return atomic_load(&((ingot_collectives_t *)c)->in_flight);
}

/* ---------------------------------------------------------------- create, destroy, stats */

ingot_status_t ingot_collectives_create(const ingot_collectives_params_t *prm,
                                        ingot_collectives_t **collectives_p)
{
    ingot_collectives_t *c = ingot_calloc(1, sizeof(*c), "collectives communicator");
    if (c == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    c->prm = *prm;
    c->prm.progress_cpus = NULL; /* the caller's set may not outlive this call: copied below */
    snprintf(c->reason, sizeof(c->reason), "%s", prm->reason ? prm->reason : "");
    snprintf(c->progress_cpus, sizeof(c->progress_cpus), "%s",
             prm->progress_cpus_text ? prm->progress_cpus_text : "");
    c->ops = prm->backend == INGOT_COMM_BACKEND_NCCL ? &ingot_collectives_nccl_ops
                                                     : &ingot_collectives_mpi_ops;
    pthread_mutex_init(&c->mu, NULL);
    pthread_mutex_init(&c->engine, NULL);
    pthread_cond_init(&c->cv, NULL);
    for (int i = 0; i < INGOT_COMM_MAX_REQUESTS; i++) {
        c->pool[i].coll = c;
        c->pool[i].user = true;
    }
    /* Two duplicates: reductions on one, the blocking agreements of create and registration on
     * the other, so that an agreement never interleaves with a reduction a rank has begun and
     * another not yet. */
    c->comm = c->ctl = MPI_COMM_NULL;
    ingot_status_t st = INGOT_MPI_CALL("collectives create", MPI_Comm_dup, prm->comm, &c->comm);
    if (st == INGOT_OK) {
        st = INGOT_MPI_CALL("collectives create", MPI_Comm_dup, prm->comm, &c->ctl);
    }
    if (st == INGOT_OK) {
        MPI_Comm_set_errhandler(c->comm, MPI_ERRORS_RETURN);
        MPI_Comm_set_errhandler(c->ctl, MPI_ERRORS_RETURN);
        MPI_Comm_rank(c->comm, &c->rank);
        MPI_Comm_size(c->comm, &c->size);
        st = c->ops->init(c);
        st = ingot_mpi_agree(&c->ctl, st, "collectives create");
    }
    if (st != INGOT_OK) {
        if (c->be != NULL) {
            c->ops->fini(c);
        }
        if (c->comm != MPI_COMM_NULL) {
            MPI_Comm_free(&c->comm);
        }
        if (c->ctl != MPI_COMM_NULL) {
            MPI_Comm_free(&c->ctl);
        }
        free(c);
        return st;
    }
    /* NCCL completes on the GPU whatever MPI allows; MPI requests advance off the trainer's
     * thread only where MPI lets another thread call it. */
    c->progress_thread = prm->backend == INGOT_COMM_BACKEND_NCCL || prm->thread_multiple;
    cpu_set_t *cpus = NULL;
    if (c->progress_thread && prm->progress_cpus != NULL) {
        cpus = malloc(sizeof(*cpus));
        if (cpus != NULL) {
            *cpus = *prm->progress_cpus;
            c->prm.progress_cpus = cpus;
        }
    }
    if (c->progress_thread) {
        if (ingot_thread_start(&c->progress, "ingot-coll", progress_main, c, INGOT_THREAD_QUIET) !=
            INGOT_OK) {
            ingot_warn("collectives progress thread could not start: requests advance only "
                       "inside ingot calls");
            c->progress_thread = false;
            c->progress_failed = true;
        }
    }
    *collectives_p = c;
    return INGOT_OK;
}

void ingot_collectives_destroy(ingot_collectives_t *c)
{
    if (c == NULL) {
        return;
    }
    /* Requests in flight complete first (bounded): their buffers are the caller's. */
    for (int i = 0; i < INGOT_COMM_MAX_REQUESTS; i++) {
        if (atomic_load(&c->pool[i].state) == COLLECTIVES_REQ_QUEUED) {
            ingot_collectives_wait_req(c, &c->pool[i], "all-reduce left in flight at destroy");
        }
    }
    for (size_t b = 0; b < c->grads.nbuckets; b++) {
        if (atomic_load(&c->grads.buckets[b].req.state) == COLLECTIVES_REQ_QUEUED) {
            ingot_collectives_wait_req(c, &c->grads.buckets[b].req,
                                       "bucket left in flight at destroy");
        }
    }
    if (c->progress_thread) {
        pthread_mutex_lock(&c->mu);
        atomic_store(&c->stop, 1);
        pthread_cond_signal(&c->cv);
        pthread_mutex_unlock(&c->mu);
        pthread_join(c->progress, NULL);
    }
    int broken = atomic_load(&c->broken);
    in_flight_add(c, -atomic_load(&c->in_flight)); /* what a broken communicator left */
    if (broken && !c->ops->eager) {
        /* Receives may still be posted into the ring's scratch and the buckets, and a stopped
         * peer may resume: their memory and the communicator are left to the exit. */
        ingot_warn("destroying a broken communicator: its buffers and MPI communicator are "
                   "left allocated (receives may still be posted into them)");
    } else {
        c->ops->fini(c); /* before the buckets: NCCL destroys their events */
        ingot_collectives_grads_release(c);
    }
    if (!broken) {
        (void)INGOT_MPI_CALL("collectives destroy", MPI_Comm_free, &c->comm);
        (void)INGOT_MPI_CALL("collectives destroy", MPI_Comm_free, &c->ctl);
    }
    free((void *)c->prm.progress_cpus);
    pthread_mutex_destroy(&c->mu);
    pthread_mutex_destroy(&c->engine);
    pthread_cond_destroy(&c->cv);
    free(c);
}

ingot_status_t ingot_collectives_stats(ingot_collectives_t *c, ingot_comm_stats_t *s)
{
    if (s->field_mask & INGOT_COMM_STATS_FIELD_SETUP) {
        s->backend = c->prm.backend;
        s->device = c->prm.backend == INGOT_COMM_BACKEND_NCCL ? c->prm.device : -1;
        s->size = c->size;
        s->progress_thread = c->progress_thread;
        snprintf(s->progress_cpuset, sizeof(s->progress_cpuset), "%s",
                 c->progress_thread ? c->progress_cpus : "");
        if (c->progress_thread) {
            snprintf(s->reason, sizeof(s->reason), "%s", c->reason);
        } else if (c->progress_failed) {
            snprintf(s->reason, sizeof(s->reason),
                     "%.140s; overlap reduced: the progress thread could not start, so "
                     "reductions advance only inside ingot calls",
                     c->reason);
        } else {
            snprintf(
                s->reason, sizeof(s->reason),
                "%.140s; overlap reduced: MPI did not grant MPI_THREAD_MULTIPLE, so reductions "
                "advance only inside ingot calls",
                c->reason);
        }
    }
    if (s->field_mask & INGOT_COMM_STATS_FIELD_COUNTS) {
        s->started = atomic_load(&c->started);
        s->completed = atomic_load(&c->completed);
        s->background = atomic_load(&c->background);
        s->bytes = atomic_load(&c->bytes);
        s->buckets = c->grads.nbuckets;
    }
    if (s->field_mask & INGOT_COMM_STATS_FIELD_TIMES) {
        s->reduce_ns = atomic_load(&c->reduce_ns);
        s->exposed_ns = atomic_load(&c->exposed_ns);
        s->steps = atomic_load(&c->steps);
    }
    return INGOT_OK;
}

/*
 * Thread pool: task slots come from a free ring filled at create, so submit never allocates.
 * Workers sleep on the work ring; destroy drains the queue, raises the stop flag and joins with
 * a deadline.
 */
#include "base/pool.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/thread.h"
#include "base/mem.h"
#include "base/ring.h"
#include "base/status.h"
#include "base/time.h"
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define POOL_THREADS_MAX 1024 /* power of two: thread names show i & (MAX - 1) */
#define POOL_THREAD_NAME 16   /* Linux limit, NUL included */

typedef struct pool_task {
    ingot_task_fn_t fn;
    void *arg;
} pool_task_t;

struct ingot_pool {
    char name[POOL_THREAD_NAME];
    unsigned nthreads;
    unsigned started;
    pthread_t *threads;
    pool_task_t *tasks;
    ingot_mpmc_t free_q;
    ingot_mpmc_t work_q;
    ingot_abort_t stop;
    _Atomic uint64_t pending;
    ingot_event_t idle;
};

static void *pool_worker(void *arg)
{
    ingot_pool_t *pool = arg;
    for (;;) {
        void *item;
        if (ingot_mpmc_pop_wait(&pool->work_q, &item, INGOT_DEADLINE_NONE, &pool->stop) !=
            INGOT_OK) {
            return NULL; /* stop raised */
        }
        pool_task_t *task = item;
        task->fn(task->arg);
        /* Return the slot before announcing completion, so wait_idle implies free slots. The
         * ring has a cell per slot: this waits only while another thread finishes a pop. */
        ingot_mpmc_push_wait(&pool->free_q, task, INGOT_DEADLINE_NONE, NULL);
        if (atomic_fetch_sub(&pool->pending, 1) == 1) {
            ingot_event_notify(&pool->idle);
        }
    }
}

static ingot_status_t pool_join(ingot_pool_t *pool, uint64_t deadline_ns)
{
    ingot_status_t status = INGOT_OK;
    for (unsigned i = 0; i < pool->started; i++) {
        int rc;
        if (deadline_ns == INGOT_DEADLINE_NONE) {
            rc = pthread_join(pool->threads[i], NULL);
        } else {
            uint64_t now = ingot_time_ns(), left = (deadline_ns > now) ? deadline_ns - now : 0;
            struct timespec ts;
            clock_gettime(CLOCK_REALTIME, &ts);
            uint64_t abs = (uint64_t)ts.tv_sec * INGOT_NSEC_PER_SEC + (uint64_t)ts.tv_nsec + left;
            ts.tv_sec = (time_t)(abs / INGOT_NSEC_PER_SEC);
            ts.tv_nsec = (long)(abs % INGOT_NSEC_PER_SEC);
            rc = pthread_timedjoin_np(pool->threads[i], NULL, &ts);
        }
        if (rc != 0) {
            pthread_detach(pool->threads[i]);
            status = INGOT_ERR_TIMED_OUT;
        }
    }
    return status;
}

static void pool_free(ingot_pool_t *pool)
{
    ingot_mpmc_cleanup(&pool->work_q);
    ingot_mpmc_cleanup(&pool->free_q);
    free(pool->tasks);
    free(pool->threads);
    free(pool);
}

static ingot_status_t pool_start_threads(ingot_pool_t *pool)
{
    for (unsigned i = 0; i < pool->nthreads; i++) {
        char name[32]; /* the kernel keeps 15 characters of it */
        snprintf(name, sizeof(name), "ingot-%.6s%u", pool->name, i & 0xff);
        if (ingot_thread_start(&pool->threads[i], name, pool_worker, pool, INGOT_THREAD_QUIET) !=
            INGOT_OK) {
            ingot_error("thread pool '%s': cannot start thread %u of %u", pool->name, i,
                        pool->nthreads);
            return INGOT_ERR_NO_RESOURCE;
        }
        pool->started++;
        char tname[POOL_THREAD_NAME];
        snprintf(tname, sizeof(tname), "ingot-%.5s%u", pool->name, i & (POOL_THREADS_MAX - 1));
        pthread_setname_np(pool->threads[i], tname);
    }
    return INGOT_OK;
}

ingot_status_t ingot_pool_create(const char *name, unsigned nthreads, unsigned capacity,
                                 ingot_pool_t **pool_p)
{
    ingot_status_t status;
    if (name == NULL || nthreads == 0 || nthreads > POOL_THREADS_MAX || capacity == 0 ||
        pool_p == NULL) {
        ingot_error("thread pool '%s': invalid parameters (threads %u, capacity %u; threads must "
                    "be 1..%d and capacity > 0)",
                    name ? name : "?", nthreads, capacity, POOL_THREADS_MAX);
        return INGOT_ERR_INVALID_PARAM;
    }
    ingot_pool_t *pool = ingot_calloc(1, sizeof(*pool), "thread pool");
    if (pool == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    snprintf(pool->name, sizeof(pool->name), "%s", name);
    pool->nthreads = nthreads;
    ingot_event_init(&pool->idle);
    atomic_init(&pool->pending, 0);
    atomic_init(&pool->stop.raised, 0);
    pool->threads = ingot_calloc(nthreads, sizeof(*pool->threads), "thread pool threads");
    pool->tasks = ingot_calloc(capacity, sizeof(*pool->tasks), "thread pool tasks");
    if (pool->threads == NULL || pool->tasks == NULL) {
        status = INGOT_ERR_NO_MEMORY;
        goto err_free;
    }
    status = ingot_mpmc_init(&pool->free_q, capacity);
    if (status != INGOT_OK) {
        goto err_free;
    }
    status = ingot_mpmc_init(&pool->work_q, capacity);
    if (status != INGOT_OK) {
        goto err_free;
    }
    for (unsigned i = 0; i < capacity; i++) {
        ingot_mpmc_try_push(&pool->free_q, &pool->tasks[i]);
    }
    status = pool_start_threads(pool);
    if (status != INGOT_OK) {
        goto err_stop;
    }
    *pool_p = pool;
    return INGOT_OK;

err_stop:
    ingot_abort_raise(&pool->stop);
    ingot_mpmc_wake_all(&pool->work_q);
    pool_join(pool, INGOT_DEADLINE_NONE); /* idle threads exit at once */
err_free:
    pool_free(pool);
    return status;
}

ingot_status_t ingot_pool_submit(ingot_pool_t *pool, ingot_task_fn_t fn, void *arg,
                                 uint64_t deadline_ns)
{
    void *slot;
    ingot_status_t st = ingot_mpmc_pop_wait(&pool->free_q, &slot, deadline_ns, &pool->stop);
    if (st != INGOT_OK) {
        return st;
    }
    pool_task_t *task = slot;
    task->fn = fn;
    task->arg = arg;
    atomic_fetch_add(&pool->pending, 1);
    /* work_q has a cell for every slot, but a consumer that has claimed a cell and not yet
     * released it makes the ring look full for a moment: wait rather than try once. */
    st = ingot_mpmc_push_wait(&pool->work_q, task, deadline_ns, &pool->stop);
    if (st != INGOT_OK) {
        atomic_fetch_sub(&pool->pending, 1);
        ingot_mpmc_push_wait(&pool->free_q, task, INGOT_DEADLINE_NONE, NULL);
    }
    return st;
}

static bool pool_is_idle(void *arg)
{
    return atomic_load(&((ingot_pool_t *)arg)->pending) == 0;
}

ingot_status_t ingot_pool_wait_idle(ingot_pool_t *pool, uint64_t deadline_ns)
{
    return ingot_event_wait_until(&pool->idle, pool_is_idle, pool, deadline_ns, NULL);
}

unsigned ingot_pool_size(const ingot_pool_t *pool)
{
    return pool->nthreads;
}

ingot_status_t ingot_pool_destroy(ingot_pool_t *pool, uint64_t deadline_ns)
{
    if (pool == NULL) {
        return INGOT_OK;
    }
    ingot_status_t st = ingot_pool_wait_idle(pool, deadline_ns);
    ingot_abort_raise(&pool->stop);
    ingot_mpmc_wake_all(&pool->work_q);
    ingot_mpmc_wake_all(&pool->free_q);
    if (st == INGOT_OK) {
        st = pool_join(pool, deadline_ns); /* detaches the threads it could not join */
    } else {
        for (unsigned i = 0; i < pool->started; i++) {
            pthread_detach(pool->threads[i]);
        }
    }
    if (st != INGOT_OK) {
        ingot_error("thread pool '%s': %" PRIu64 " task(s) still running at the deadline; "
                    "threads detached and the pool leaked so they cannot touch freed memory",
                    pool->name, (uint64_t)atomic_load(&pool->pending));
        return INGOT_ERR_TIMED_OUT;
    }
    pool_free(pool);
    return INGOT_OK;
}

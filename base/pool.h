/*
 * Fixed thread pool with named threads ("ingot-<name><i>") and a bounded task queue. Task slots
 * are allocated at create: submitting never allocates. Every blocking call takes a deadline.
 * Thread safety: submit and wait_idle may be called from any thread; destroy from one thread
 * once no other thread submits.
 */
#ifndef INGOT_BASE_POOL_H
#define INGOT_BASE_POOL_H

#include <ingot/status.h>
#include <stdint.h>
#include "base/wait.h"

typedef struct ingot_pool ingot_pool_t;
typedef void (*ingot_task_fn_t)(void *arg);

/**
 * @param name      short name used in thread names "ingot-<name><i>" (the first 5 characters
 *                  are shown: Linux keeps 15).
 * @param nthreads  1..1024.
 * @param capacity  queued tasks at most (submit waits beyond that).
 * @param pool_p    out.
 */
ingot_status_t ingot_pool_create(const char *name, unsigned nthreads, unsigned capacity,
                                 ingot_pool_t **pool_p);
/** Queue @p fn(arg); waits for room until @p deadline_ns. */
ingot_status_t ingot_pool_submit(ingot_pool_t *pool, ingot_task_fn_t fn, void *arg,
                                 uint64_t deadline_ns);
/** Wait until every submitted task has finished. */
ingot_status_t ingot_pool_wait_idle(ingot_pool_t *pool, uint64_t deadline_ns);
/** Number of threads. */
unsigned ingot_pool_size(const ingot_pool_t *pool);
/**
 * Stop the threads after the queued tasks and join them. If a thread does not finish by
 * @p deadline_ns (a task is stuck), the threads are detached, the pool is leaked on purpose (a
 * running thread may still touch it) and INGOT_ERR_TIMED_OUT is returned. Accepts NULL.
 */
ingot_status_t ingot_pool_destroy(ingot_pool_t *pool, uint64_t deadline_ns);

#endif

/*
 * Thread pool: every task runs once on a named thread, wait_idle honours its deadline while a
 * task is stuck, destroy joins, and a failure to start a thread is reported and cleaned up.
 */
#include "common/test.h"
#include "base/fault.h"
#include "base/pool.h"
#include "base/time.h"
#include <pthread.h>

#define TASKS 10000

static _Atomic int counter;
static _Atomic int bad_name;
static _Atomic int release_stuck;

static void count_task(void *arg)
{
    char name[16] = "";
    pthread_getname_np(pthread_self(), name, sizeof(name));
    if (strncmp(name, "ingot-test", 10) != 0) {
        atomic_store(&bad_name, 1);
    }
    atomic_fetch_add(&counter, (int)(intptr_t)arg);
}

static void stuck_task(void *arg)
{
    while (!atomic_load(&release_stuck)) {
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    (void)arg;
}

int main(void)
{
    ingot_pool_t *pool;
    CHECK_OK(ingot_pool_create("test", 3, 16, &pool));
    CHECK(ingot_pool_size(pool) == 3);
    for (int i = 0; i < TASKS; i++) {
        CHECK_OK(ingot_pool_submit(pool, count_task, (void *)(intptr_t)1,
                                   ingot_deadline_after(30 * INGOT_NSEC_PER_SEC)));
    }
    CHECK_OK(ingot_pool_wait_idle(pool, ingot_deadline_after(30 * INGOT_NSEC_PER_SEC)));
    CHECK(atomic_load(&counter) == TASKS);
    CHECK(!atomic_load(&bad_name));

    /* A stuck task: wait_idle times out instead of hanging, then succeeds once released. */
    CHECK_OK(ingot_pool_submit(pool, stuck_task, NULL, ingot_deadline_after(INGOT_NSEC_PER_SEC)));
    CHECK_STATUS(ingot_pool_wait_idle(pool, ingot_deadline_after(50 * INGOT_NSEC_PER_MSEC)),
                 INGOT_ERR_TIMED_OUT);
    atomic_store(&release_stuck, 1);
    CHECK_OK(ingot_pool_wait_idle(pool, ingot_deadline_after(30 * INGOT_NSEC_PER_SEC)));
    CHECK_OK(ingot_pool_destroy(pool, ingot_deadline_after(30 * INGOT_NSEC_PER_SEC)));
    CHECK_OK(ingot_pool_destroy(NULL, 0));

    CHECK_STATUS(ingot_pool_create("bad", 0, 4, &pool), INGOT_ERR_INVALID_PARAM);
    CHECK_STATUS(ingot_pool_create("bad", 2, 0, &pool), INGOT_ERR_INVALID_PARAM);
    if (!INGOT_FAULT_ENABLED) {
        SKIP("fault sites not compiled in (configure with -DINGOT_FAULT_INJECTION=ON)");
    }
    char err[128];
    CHECK_OK(ingot_fault_arm("thread:2:EAGAIN", err, sizeof(err)));
    pool = NULL;
    CHECK_STATUS(ingot_pool_create("faulty", 3, 4, &pool), INGOT_ERR_NO_RESOURCE);
    CHECK(pool == NULL); /* output untouched on failure; thread 1 was joined, nothing leaked */
    CHECK_OK(ingot_fault_arm("none", err, sizeof(err)));
    return 0;
}

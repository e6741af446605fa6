/*
 * Rings under two or more threads: SPSC keeps order, MPMC delivers every item exactly once,
 * full and empty rings refuse, blocking waits end at their deadline or on abort.
 */
#include "common/test.h"
#include "base/ring.h"
#include "base/time.h"
#include <pthread.h>
#include <stdint.h>

#define SPSC_ITEMS  2000000ul
#define MPMC_ITEMS  500000ul
#define MPMC_PROD   2
#define MPMC_CONS   2
#define DEADLINE_NS (30ull * INGOT_NSEC_PER_SEC) /* generous: only a hang would reach it */

static ingot_spsc_t spsc;
static ingot_mpmc_t mpmc;
static _Atomic unsigned char seen[MPMC_ITEMS * MPMC_PROD];

static void *spsc_producer(void *arg)
{
    for (uintptr_t i = 1; i <= SPSC_ITEMS; i++) {
        CHECK_OK(ingot_spsc_push_wait(&spsc, (void *)i, ingot_deadline_after(DEADLINE_NS), NULL));
    }
    return arg;
}

static void test_spsc(void)
{
    CHECK_OK(ingot_spsc_init(&spsc, 100));
    CHECK(ingot_spsc_capacity(&spsc) == 128);
    pthread_t th;
    CHECK(pthread_create(&th, NULL, spsc_producer, NULL) == 0);
    for (uintptr_t i = 1; i <= SPSC_ITEMS; i++) {
        void *item;
        CHECK_OK(ingot_spsc_pop_wait(&spsc, &item, ingot_deadline_after(DEADLINE_NS), NULL));
        if ((uintptr_t)item != i) {
            fprintf(stderr, "out of order: got %lu, want %lu\n", (unsigned long)(uintptr_t)item,
                    (unsigned long)i);
            exit(1);
        }
    }
    pthread_join(th, NULL);
    CHECK(ingot_spsc_size(&spsc) == 0);
    /* Full ring refuses without blocking; empty ring likewise. */
    for (uintptr_t i = 0; i < 128; i++) {
        CHECK(ingot_spsc_try_push(&spsc, (void *)i));
    }
    CHECK(!ingot_spsc_try_push(&spsc, (void *)1));
    CHECK(ingot_spsc_size(&spsc) == 128);
    CHECK_STATUS(ingot_spsc_push_wait(&spsc, (void *)1, ingot_deadline_after(20000000), NULL),
                 INGOT_ERR_TIMED_OUT);
    void *item;
    for (int i = 0; i < 128; i++) {
        CHECK(ingot_spsc_try_pop(&spsc, &item) && (uintptr_t)item == (uintptr_t)i);
    }
    CHECK(!ingot_spsc_try_pop(&spsc, &item));
    ingot_spsc_cleanup(&spsc);
}

static void *mpmc_producer(void *arg)
{
    uintptr_t base = (uintptr_t)arg * MPMC_ITEMS;
    for (uintptr_t i = 0; i < MPMC_ITEMS; i++) {
        CHECK_OK(ingot_mpmc_push_wait(&mpmc, (void *)(base + i + 1),
                                      ingot_deadline_after(DEADLINE_NS), NULL));
    }
    return NULL;
}

static void *mpmc_consumer(void *arg)
{
    uintptr_t count = (uintptr_t)arg;
    for (uintptr_t i = 0; i < count; i++) {
        void *item;
        CHECK_OK(ingot_mpmc_pop_wait(&mpmc, &item, ingot_deadline_after(DEADLINE_NS), NULL));
        uintptr_t v = (uintptr_t)item - 1;
        CHECK(v < MPMC_ITEMS * MPMC_PROD);
        CHECK(atomic_fetch_add(&seen[v], 1) == 0); /* never delivered twice */
    }
    return NULL;
}

static void test_mpmc(void)
{
    CHECK_OK(ingot_mpmc_init(&mpmc, 64));
    pthread_t prod[MPMC_PROD], cons[MPMC_CONS];
    for (uintptr_t p = 0; p < MPMC_PROD; p++) {
        CHECK(pthread_create(&prod[p], NULL, mpmc_producer, (void *)p) == 0);
    }
    for (int c = 0; c < MPMC_CONS; c++) {
        CHECK(pthread_create(&cons[c], NULL, mpmc_consumer,
                             (void *)(uintptr_t)(MPMC_ITEMS * MPMC_PROD / MPMC_CONS)) == 0);
    }
    for (int p = 0; p < MPMC_PROD; p++) {
        pthread_join(prod[p], NULL);
    }
    for (int c = 0; c < MPMC_CONS; c++) {
        pthread_join(cons[c], NULL);
    }
    for (size_t i = 0; i < MPMC_ITEMS * MPMC_PROD; i++) {
        CHECK(atomic_load(&seen[i]) == 1); /* every item exactly once */
    }
    CHECK(ingot_mpmc_size(&mpmc) == 0);
    ingot_mpmc_cleanup(&mpmc);
}

static ingot_abort_t abort_flag;

static void *raise_later(void *arg)
{
    struct timespec ts = {0, 50 * 1000 * 1000};
    nanosleep(&ts, NULL);
    ingot_abort_raise(&abort_flag);
    return arg;
}

static void test_deadline_and_abort(void)
{
    CHECK_OK(ingot_mpmc_init(&mpmc, 4));
    void *item;
    uint64_t t0 = ingot_time_ns(), deadline = t0 + 30 * INGOT_NSEC_PER_MSEC;
    CHECK_STATUS(ingot_mpmc_pop_wait(&mpmc, &item, deadline, NULL), INGOT_ERR_TIMED_OUT);
    CHECK(ingot_time_ns() >= deadline); /* it did not give up early */
    /* An abort ends a wait that has no deadline (it would otherwise never return). */
    pthread_t th;
    CHECK(pthread_create(&th, NULL, raise_later, NULL) == 0);
    CHECK_STATUS(ingot_mpmc_pop_wait(&mpmc, &item, INGOT_DEADLINE_NONE, &abort_flag),
                 INGOT_ERR_CANCELED);
    pthread_join(th, NULL);
    /* A raised abort does not hide an item that is already there: it is returned first. */
    CHECK(ingot_mpmc_try_push(&mpmc, (void *)7));
    CHECK_OK(ingot_mpmc_pop_wait(&mpmc, &item, INGOT_DEADLINE_NONE, &abort_flag));
    CHECK((uintptr_t)item == 7);
    CHECK_STATUS(ingot_mpmc_init(&mpmc, 0), INGOT_ERR_INVALID_PARAM);
    ingot_mpmc_cleanup(&mpmc);
}

int main(void)
{
    test_spsc();
    test_mpmc();
    test_deadline_and_abort();
    return 0;
}

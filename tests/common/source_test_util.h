/*
 * A byte source for tests, put in front of storage: it answers "retry elsewhere", except that
 * in stuck mode it keeps its first request and completes it only when the test says so
 * (ingot_source_complete(atomic_load(&src.held), ...)). Its cancel never takes a request back.
 * Static objects: destroy frees nothing.
 */
#ifndef INGOT_TEST_SOURCE_UTIL_H
#define INGOT_TEST_SOURCE_UTIL_H

#include "source/source.h"
#include <stdio.h>

typedef struct test_source {
    ingot_source_t base;
    int stuck;
    _Atomic int submitted, cancels;
    ingot_source_req_t *_Atomic held;
    void *held_buf;
} test_source_t;

static ingot_status_t test_source_submit(ingot_source_t *src, ingot_source_req_t *req)
{
    test_source_t *t = (test_source_t *)src;
    ingot_source_req_t *none = NULL;
    atomic_fetch_add(&t->submitted, 1);
    if (t->stuck && atomic_compare_exchange_strong(&t->held, &none, req)) {
        t->held_buf = req->iov[0].iov_base;
        return INGOT_OK; /* never completed by the source itself */
    }
    ingot_source_retry(req, INGOT_ERR_NOT_FOUND);
    return INGOT_OK;
}

static unsigned test_source_progress(ingot_source_t *src, uint64_t until_ns)
{
    (void)src;
    (void)until_ns;
    return 0;
}

static ingot_status_t test_source_cancel(ingot_source_t *src, ingot_source_req_t *req)
{
    test_source_t *t = (test_source_t *)src;
    if (req == atomic_load(&t->held)) {
        atomic_fetch_add(&t->cancels, 1);
    }
    return INGOT_ERR_BUSY; /* the bytes may still arrive */
}

static const char *test_source_describe(const ingot_source_t *src, uint32_t shard, char *buf,
                                        size_t len)
{
    snprintf(buf, len, "%s:shard-%u", ((const test_source_t *)src)->stuck ? "stuck" : "retry",
             shard);
    return buf;
}

static void test_source_destroy(ingot_source_t *src)
{
    (void)src;
}

static const ingot_source_ops_t test_source_ops = {test_source_submit,  test_source_progress,
                                                   test_source_cancel,  test_source_describe,
                                                   test_source_destroy, 1 /* local */};

#endif

/* Named threads and the stage loop (thread.h). */
#include "base/thread.h"
#include "base/log.h"
#include "base/time.h"
#include <stdio.h>
#include <string.h>

ingot_status_t ingot_thread_start(pthread_t *t, const char *name, void *(*fn)(void *), void *arg)
{
    int rc = pthread_create(t, NULL, fn, arg);
    if (rc != 0) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE, "cannot start thread %s: %s", name, strerror(rc));
    }
    char shown[16]; /* the kernel keeps 15 characters */
    snprintf(shown, sizeof(shown), "%s", name);
    pthread_setname_np(*t, shown);
    return INGOT_OK;
}

void ingot_stage_run(ingot_mpmc_t *q, const ingot_abort_t *stop, ingot_stage_end_t end,
                     void (*fn)(void *arg, void *item), void *arg)
{
    for (;;) {
        void *item;
        if (ingot_mpmc_pop_wait(q, &item, INGOT_DEADLINE_NONE, stop) != INGOT_OK &&
            (end == INGOT_STAGE_STOP || !ingot_mpmc_try_pop(q, &item))) {
            return; /* stopped (and, draining, nothing left) */
        }
        fn(arg, item);
    }
}

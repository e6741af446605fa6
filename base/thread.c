/* Named threads (thread.h). */
#include "base/thread.h"
#include "base/fault.h"
#include "base/log.h"
#include <stdio.h>
#include <string.h>

ingot_status_t ingot_thread_start(pthread_t *t, const char *name, void *(*fn)(void *), void *arg,
                                  unsigned flags)
{
    int rc = ingot_fault_check(INGOT_FAULT_THREAD);
    if (rc == 0) {
        rc = pthread_create(t, NULL, fn, arg);
    }
    if (rc != 0) {
        if (!(flags & INGOT_THREAD_QUIET)) {
            ingot_error("cannot start thread %s: %s", name, strerror(rc));
        }
        return INGOT_ERR_NO_RESOURCE;
    }
    if (flags & INGOT_THREAD_DETACHED) {
        pthread_detach(*t);
    }
    char shown[16]; /* the kernel keeps 15 characters */
    snprintf(shown, sizeof(shown), "%s", name);
    pthread_setname_np(*t, shown);
    return INGOT_OK;
}

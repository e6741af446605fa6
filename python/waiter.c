/*
 * waiter.c: ingot_loader_next() on a helper thread. The trainer's thread waits on a condition
 * variable in short slices with the GIL released and checks for signals between them, so
 * Ctrl-C interrupts a wait at once (the C call itself waits up to INGOT_TIMEOUT and cannot be
 * cancelled). A call interrupted that way stays in flight; its batch is handed over by the next
 * call. One thread at a time calls ingot_loader_next(), as loader.h asks.
 */
#include "pyingot.h"

#include <errno.h>
#include <string.h>
#include <time.h>

/* How often a waiting trainer thread looks at pending signals. */
#define PYINGOT_SIGNAL_POLL_NS 50000000L

void pyingot_waiter_init(pyingot_waiter_t *w)
{
    memset(w, 0, sizeof(*w));
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    pthread_mutex_init(&w->call, NULL);
}

static void *waiter_main(void *arg)
{
    pyingot_waiter_t *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->requested && !w->stop) {
            pthread_cond_wait(&w->cv, &w->mu);
        }
        if (w->stop) {
            break;
        }
        pthread_mutex_unlock(&w->mu);
        ingot_batch_t b;
        pthread_mutex_lock(&w->call);
        ingot_status_t st = ingot_loader_next(w->loader, &b);
        pthread_mutex_unlock(&w->call);
        pthread_mutex_lock(&w->mu);
        w->batch = b;
        w->status = st;
        w->msg[0] = '\0';
        if (st != INGOT_OK && st != INGOT_END_OF_DATA) {
            snprintf(w->msg, sizeof(w->msg), "%s", ingot_last_error());
        }
        w->requested = 0;
        w->done = 1;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

static int waiter_start(pyingot_waiter_t *w)
{
    if (w->started) {
        return 0;
    }
    int rc = pthread_create(&w->thread, NULL, waiter_main, w);
    if (rc != 0) {
        pyingot_raisef(INGOT_ERR_NO_RESOURCE, "cannot start the loader's wait thread: %s",
                       strerror(rc));
        return -1;
    }
    pthread_setname_np(w->thread, "ingot-py-next");
    w->started = 1;
    return 0;
}

static void deadline_in(struct timespec *ts, long ns)
{
    clock_gettime(CLOCK_REALTIME, ts);
    ts->tv_nsec += ns;
    ts->tv_sec += ts->tv_nsec / 1000000000L;
    ts->tv_nsec %= 1000000000L;
}

/* Wait for the result with the GIL released; 1 when done, 0 after a slice without it. */
static int wait_slice(pyingot_waiter_t *w)
{
    int done;
    Py_BEGIN_ALLOW_THREADS struct timespec ts;
    deadline_in(&ts, PYINGOT_SIGNAL_POLL_NS);
    pthread_mutex_lock(&w->mu);
    while (!w->done && pthread_cond_timedwait(&w->cv, &w->mu, &ts) != ETIMEDOUT) {
    }
    done = w->done;
    pthread_mutex_unlock(&w->mu);
    Py_END_ALLOW_THREADS return done;
}

int pyingot_waiter_next(pyingot_waiter_t *w, ingot_loader_h loader, ingot_batch_t *b,
                        ingot_status_t *st, char *msg, size_t len)
{
    if (waiter_start(w) != 0) {
        return -1;
    }
    pthread_mutex_lock(&w->mu);
    if (!w->requested && !w->done) { /* else: the call an interruption left is still ours */
        w->loader = loader;
        w->requested = 1;
        pthread_cond_broadcast(&w->cv);
    }
    pthread_mutex_unlock(&w->mu);
    while (!wait_slice(w)) {
        if (PyErr_CheckSignals() != 0) {
            return -1;
        }
    }
    pthread_mutex_lock(&w->mu);
    *b = w->batch;
    *st = w->status;
    w->done = 0;
    snprintf(msg, len, "%s", w->msg);
    pthread_mutex_unlock(&w->mu);
    return 0;
}

int pyingot_waiter_parked(pyingot_waiter_t *w)
{
    pthread_mutex_lock(&w->mu);
    int parked = w->requested || w->done;
    pthread_mutex_unlock(&w->mu);
    return parked;
}

int pyingot_waiter_stop(pyingot_waiter_t *w, ingot_batch_t *parked_p)
{
    if (!w->started) {
        return 0;
    }
    Py_BEGIN_ALLOW_THREADS pthread_mutex_lock(&w->mu);
    while (w->requested) { /* an in-flight call ends within INGOT_TIMEOUT */
        pthread_cond_wait(&w->cv, &w->mu);
    }
    w->stop = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    pthread_join(w->thread, NULL);
    Py_END_ALLOW_THREADS w->started = 0;
    w->stop = 0;
    int parked = w->done && w->status == INGOT_OK; /* a batch nobody took: the caller's now */
    if (parked && parked_p != NULL) {
        *parked_p = w->batch;
    }
    w->done = 0;
    return parked;
}

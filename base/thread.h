/*
 * Threads of ingot's own, started with a name (what top -H, gdb and perf show), a failure said
 * once naming the thread and its cause (stage.h has the loop of a thread that serves a queue).
 */
#ifndef INGOT_BASE_THREAD_H
#define INGOT_BASE_THREAD_H

#include <ingot/status.h>
#include <pthread.h>

/** ingot_thread_start() flags. */
enum {
    INGOT_THREAD_DETACHED = 1u << 0, /**< nobody joins it (*t still receives its id) */
    INGOT_THREAD_QUIET = 1u << 1     /**< a failure is the caller's to say (it has a fallback) */
};

/**
 * Start thread @p name (at most 15 characters shown) running @p fn(@p arg) into *@p t.
 * @return INGOT_OK; INGOT_ERR_NO_RESOURCE, logged as "cannot start thread <name>: <cause>"
 *         unless INGOT_THREAD_QUIET.
 */
ingot_status_t ingot_thread_start(pthread_t *t, const char *name, void *(*fn)(void *), void *arg,
                                  unsigned flags);

#endif

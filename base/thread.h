/*
 * Threads of ingot's own: started with a name (what top -H, gdb and perf show), a failure said
 * once naming the thread and its cause; and the loop of a stage thread, which takes items off a
 * queue until it is told to stop (and then, when asked, what is still queued).
 */
#ifndef INGOT_BASE_THREAD_H
#define INGOT_BASE_THREAD_H

#include <ingot/status.h>
#include "base/ring.h"
#include "base/wait.h"
#include <pthread.h>

/**
 * Start thread @p name (at most 15 characters shown) running @p fn(@p arg) into *@p t.
 * @return INGOT_OK; INGOT_ERR_NO_RESOURCE, logged as "cannot start thread <name>: <cause>".
 */
ingot_status_t ingot_thread_start(pthread_t *t, const char *name, void *(*fn)(void *), void *arg);

/** What a stage does with the items still queued when it is told to stop. */
typedef enum ingot_stage_end {
    INGOT_STAGE_STOP, /**< leave them (their owner takes them back) */
    INGOT_STAGE_DRAIN /**< handle every one of them first */
} ingot_stage_end_t;

/**
 * A stage thread's loop: hand every item popped from @p q to @p fn(@p arg, item) until @p stop is
 * raised; then, under INGOT_STAGE_DRAIN, the items still queued until it is empty. Returns when
 * the stage is over (the thread's main then returns).
 */
void ingot_stage_run(ingot_mpmc_t *q, const ingot_abort_t *stop, ingot_stage_end_t end,
                     void (*fn)(void *arg, void *item), void *arg);

#endif

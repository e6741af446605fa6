/*
 * The loop of a stage thread: it takes items off a queue until it is told to stop, and then, when
 * asked, what is still queued (writers that must not lose a fill, servers that must answer every
 * call), handing each to the stage's function.
 */
#ifndef INGOT_BASE_STAGE_H
#define INGOT_BASE_STAGE_H

#include "base/ring.h"
#include "base/wait.h"

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

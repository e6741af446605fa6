/* The stage loop (stage.h). */
#include "base/stage.h"
#include "base/time.h"

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

/* Monotonic clock and deadlines. A deadline is an absolute CLOCK_MONOTONIC time in ns. */
#ifndef INGOT_BASE_TIME_H
#define INGOT_BASE_TIME_H

#include <stdint.h>
#include <time.h>

#define INGOT_NSEC_PER_USEC 1000ull
#define INGOT_NSEC_PER_MSEC 1000000ull
#define INGOT_NSEC_PER_SEC  1000000000ull
/** No deadline: only for waits that also observe an abort flag (e.g. idle worker threads). */
#define INGOT_DEADLINE_NONE UINT64_MAX

static inline uint64_t ingot_time_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * INGOT_NSEC_PER_SEC + (uint64_t)ts.tv_nsec;
}

/** Deadline @p timeout_ns from now, saturating at INGOT_DEADLINE_NONE. */
static inline uint64_t ingot_deadline_after(uint64_t timeout_ns)
{
    uint64_t now = ingot_time_ns();
    return (timeout_ns >= INGOT_DEADLINE_NONE - now) ? INGOT_DEADLINE_NONE : now + timeout_ns;
}

#endif

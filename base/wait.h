/*
 * Blocking waits with a deadline and an abort flag. An ingot_event_t is an event count: waiters
 * sleep on a futex until a notify, the deadline, or an abort; the abort flag is re-checked at
 * least every INGOT_WAIT_ABORT_POLL_NS, so nothing blocks forever and an abort is seen quickly.
 */
#ifndef INGOT_BASE_WAIT_H
#define INGOT_BASE_WAIT_H

#include <ingot/status.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#define INGOT_WAIT_ABORT_POLL_NS (10ull * 1000 * 1000)

/** Abort flag: once raised, every wait observing it returns INGOT_ERR_CANCELED. */
typedef struct ingot_abort {
    _Atomic int raised;
} ingot_abort_t;

/** Raise @p a (NULL: nothing). */
static inline void ingot_abort_raise(ingot_abort_t *a)
{
    if (a != NULL) {
        atomic_store(&a->raised, 1);
    }
}
static inline bool ingot_abort_is_raised(const ingot_abort_t *a)
{
    return a != NULL && atomic_load_explicit(&((ingot_abort_t *)a)->raised, memory_order_acquire);
}

typedef struct ingot_event {
    _Atomic uint32_t seq;
    _Atomic uint32_t waiters;
} ingot_event_t;

static inline void ingot_event_init(ingot_event_t *ev)
{
    atomic_init(&ev->seq, 0);
    atomic_init(&ev->waiters, 0);
}

/** Wake every waiter of @p ev (call after publishing the state they wait for). */
void ingot_event_notify(ingot_event_t *ev);
/**
 * ingot_event_notify() waking one waiter: for events whose waiters all wait for the same thing,
 * one item each (a queue's poppers or pushers), where waking them all for one item makes every
 * push cost a wake-up per idle thread (32 readers: 25 futex calls per sample, measured). A
 * waiter that another takes the item from sleeps again; one that leaves without it (abort) is
 * covered by the others' abort-poll slices.
 */
void ingot_event_notify_one(ingot_event_t *ev);

/** Condition polled by ingot_event_wait_until(); returns true when the wait is over. */
typedef bool (*ingot_wait_cond_t)(void *arg);

/**
 * Wait until @p cond(arg) holds. Spins for INGOT_SPIN first, then sleeps on @p ev.
 * @return INGOT_OK, INGOT_ERR_TIMED_OUT at @p deadline_ns, INGOT_ERR_CANCELED when @p abort
 *         (may be NULL) is raised. Never logs: the caller knows what it was waiting for.
 */
ingot_status_t ingot_event_wait_until(ingot_event_t *ev, ingot_wait_cond_t cond, void *arg,
                                      uint64_t deadline_ns, const ingot_abort_t *abort);

/** Set the spin time before sleeping (from INGOT_SPIN). */
void ingot_wait_set_spin(uint64_t spin_ns);

#endif

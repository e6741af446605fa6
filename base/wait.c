/*
 * Event count on a futex: a waiter registers, re-checks its condition, then sleeps until the
 * sequence number changes. Notifiers bump the sequence and wake only when someone waits, so the
 * uncontended push/pop path costs one atomic increment and one load. Sleeps are cut into slices
 * of INGOT_WAIT_ABORT_POLL_NS so an abort flag is observed even without a notify.
 */
#include "base/wait.h"
#include "base/time.h"
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <sys/syscall.h>
#include <unistd.h>

static _Atomic uint64_t wait_spin_ns = 0; /* INGOT_SPIN */

void ingot_wait_set_spin(uint64_t spin_ns)
{
    atomic_store(&wait_spin_ns, spin_ns);
}

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield" ::: "memory");
#endif
}

static void futex_wait(_Atomic uint32_t *addr, uint32_t expected, uint64_t timeout_ns)
{
    struct timespec ts = {
        .tv_sec = (time_t)(timeout_ns / INGOT_NSEC_PER_SEC),
        .tv_nsec = (long)(timeout_ns % INGOT_NSEC_PER_SEC),
    };
    /* EAGAIN (value changed), EINTR and ETIMEDOUT all send the caller back to its checks. */
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT_PRIVATE, expected, &ts, NULL, 0);
}

void ingot_event_notify(ingot_event_t *ev)
{
    atomic_fetch_add(&ev->seq, 1);
    if (atomic_load(&ev->waiters) != 0) {
        syscall(SYS_futex, (uint32_t *)&ev->seq, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
    }
}

void ingot_event_notify_one(ingot_event_t *ev)
{
    atomic_fetch_add(&ev->seq, 1);
    if (atomic_load(&ev->waiters) != 0) {
        syscall(SYS_futex, (uint32_t *)&ev->seq, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
    }
}

ingot_status_t ingot_event_wait_until(ingot_event_t *ev, ingot_wait_cond_t cond, void *arg,
                                      uint64_t deadline_ns, const ingot_abort_t *abort)
{
    if (cond(arg)) {
        return INGOT_OK;
    }
    uint64_t spin_end = ingot_time_ns() + atomic_load_explicit(&wait_spin_ns, memory_order_relaxed);
    for (;;) {
        if (ingot_abort_is_raised(abort)) {
            return INGOT_ERR_CANCELED;
        }
        uint64_t now = ingot_time_ns();
        if (now >= deadline_ns) {
            return cond(arg) ? INGOT_OK : INGOT_ERR_TIMED_OUT;
        }
        if (now < spin_end) {
            for (int i = 0; i < 64; i++) {
                cpu_relax();
            }
            if (cond(arg)) {
                return INGOT_OK;
            }
            continue;
        }
        atomic_fetch_add(&ev->waiters, 1);
        uint32_t key = atomic_load(&ev->seq);
        if (cond(arg)) {
            atomic_fetch_sub(&ev->waiters, 1);
            return INGOT_OK;
        }
        uint64_t left = deadline_ns - now;
        futex_wait(&ev->seq, key,
                   left < INGOT_WAIT_ABORT_POLL_NS ? left : INGOT_WAIT_ABORT_POLL_NS);
        atomic_fetch_sub(&ev->waiters, 1);
        if (cond(arg)) {
            return INGOT_OK;
        }
    }
}

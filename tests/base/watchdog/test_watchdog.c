/*
 * The watchdog of ingot's MPI calls, without MPI: its action replaced so that a firing is
 * observed instead of ending the process. A call armed past the deadline fires once, naming
 * the call and what it was for; a call disarmed in time, or armed with the watchdog off, never
 * fires; a second thread's call is watched in its own slot. Firings are awaited, not slept for,
 * and a disarm counts as in time only when it was, as measured here: a loaded machine delays the
 * monitor or this thread, never the verdict.
 */
#include "common/test.h"
#include "base/watchdog.h"
#include "base/time.h"
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>

static _Atomic int fired;
static char fired_what[64], fired_call[64];
static _Atomic uint64_t fired_waited;

static void record(const char *what, const char *call, uint64_t waited_ns)
{
    snprintf(fired_what, sizeof(fired_what), "%s", what);
    snprintf(fired_call, sizeof(fired_call), "%s", call);
    atomic_store(&fired_waited, waited_ns);
    atomic_fetch_add(&fired, 1);
}

#define TIMEOUT_NS (200ull * 1000 * 1000)
#define WAIT_MS    10000 /* how long a firing may take on a loaded machine: a bound, not a cue */

static void sleep_ms(long ms)
{
    struct timespec t = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&t, NULL);
}

/* Wait until @p n firings were recorded (each waits for the monitor, not a fixed time). */
static void await_fired(int n)
{
    for (int ms = 0; atomic_load(&fired) < n && ms < WAIT_MS; ms += 5) {
        sleep_ms(5);
    }
    CHECK(atomic_load(&fired) == n);
}

/* Disarmed in time: nothing, even given time to fire. Only a try disarmed before the timeout
 * (as measured here) counts: one the machine stalled past it is taken again. */
static void check_disarmed_in_time(void)
{
    for (int tries = 0;; tries++) {
        CHECK(tries < 20);
        uint64_t t0 = ingot_time_ns();
        ingot_watchdog_arm("quick", "MPI_Allreduce");
        sleep_ms(50);
        CHECK(ingot_watchdog_disarm(7) == 7); /* returns the call's code unchanged */
        int in_time = ingot_time_ns() - t0 < TIMEOUT_NS;
        sleep_ms(400);
        if (in_time) {
            CHECK(atomic_load(&fired) == 0);
            return;
        }
        atomic_store(&fired, 0); /* it may have fired, rightly: disarmed, it fires no more */
    }
}

static void *other_thread(void *arg)
{
    (void)arg;
    ingot_watchdog_arm("second thread", "MPI_Bcast");
    await_fired(2);
    ingot_watchdog_disarm(0);
    return NULL;
}

int main(void)
{
    ingot_watchdog_set_action(record);
    ingot_watchdog_set_timeout(TIMEOUT_NS);
    check_disarmed_in_time();

    /* Past the deadline: fires once, naming the call, even if it stays armed longer. */
    ingot_watchdog_arm("loader destroy: manifest window", "MPI_Win_free");
    await_fired(1);
    sleep_ms(500); /* armed on, past more than another timeout: no second firing */
    ingot_watchdog_disarm(0);
    CHECK(atomic_load(&fired) == 1);
    CHECK(strcmp(fired_call, "MPI_Win_free") == 0);
    CHECK(strcmp(fired_what, "loader destroy: manifest window") == 0);
    CHECK(atomic_load(&fired_waited) >= TIMEOUT_NS);

    /* Another thread's call has a slot of its own. */
    pthread_t t;
    CHECK(pthread_create(&t, NULL, other_thread, NULL) == 0);
    pthread_join(t, NULL);
    CHECK(atomic_load(&fired) == 2);
    CHECK(strcmp(fired_what, "second thread") == 0);

    /* Off (timeout 0): arming watches nothing. */
    ingot_watchdog_set_timeout(0);
    ingot_watchdog_arm("off", "MPI_Barrier");
    sleep_ms(400);
    ingot_watchdog_disarm(0);
    CHECK(atomic_load(&fired) == 2);
    printf("watchdog ok\n");
    return 0;
}

/* The watchdog of ingot's own MPI calls (see watchdog.h). */
#include "base/watchdog.h"
#include "base/log.h"
#include "base/thread.h"
#include "base/time.h"
#include <mpi.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define WATCHDOG_SLOTS 64 /* threads that have ever armed a call; more go unwatched */

typedef struct watch_slot {
    _Atomic uint64_t deadline_ns; /* 0: disarmed */
    _Atomic uint64_t armed_ns;
    _Atomic uint64_t live_check_ns; /* next liveness check of this arming (monitor only) */
    const char *_Atomic what;
    const char *_Atomic call;
} watch_slot_t;

static watch_slot_t slots[WATCHDOG_SLOTS];
static _Atomic int slots_used;
static _Atomic uint64_t timeout_ns = 300ull * 1000 * 1000 * 1000;
static _Atomic int thread_multiple;
static _Atomic int world_rank = -1;
static _Atomic(ingot_watchdog_action_t) action;
static pthread_once_t monitor_once = PTHREAD_ONCE_INIT;
/* The liveness check (ingot_watchdog_set_liveness), run by the monitor under live_lock. */
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static ingot_watchdog_liveness_fn_t live_fn;
static void *live_arg;
static uint64_t live_after_ns;
static _Thread_local watch_slot_t *my_slot;
static _Thread_local int my_slot_taken;

void ingot_watchdog_set_timeout(uint64_t ns)
{
    atomic_store(&timeout_ns, ns);
}

void ingot_watchdog_set_mpi(bool multiple, int rank)
{
    atomic_store(&thread_multiple, multiple ? 1 : 0);
    atomic_store(&world_rank, rank);
}

void ingot_watchdog_set_action(ingot_watchdog_action_t fn)
{
    atomic_store(&action, fn);
}

/* If MPI_Abort has not ended the process after this long, abort() does. */
#define WATCHDOG_ABORT_GRACE_S 3
/* Before MPI_Abort: the launcher forwards this rank's last line ahead of its abort banner (the
 * line and the abort travel different paths to mpirun). */
#define WATCHDOG_LINE_FIRST_NS (250L * 1000 * 1000)

static void *watchdog_abort_backstop(void *arg)
{
    (void)arg;
    struct timespec grace = {WATCHDOG_ABORT_GRACE_S, 0};
    nanosleep(&grace, NULL);
    ingot_error("watchdog: MPI_Abort has not ended this process after %d s; abort()",
                WATCHDOG_ABORT_GRACE_S);
    abort();
    return NULL;
}

/* How ingot_job_end() can end the job from this thread: "MPI_Abort", or why abort(). */
static const char *job_end_how(int mpi_thread, const char *call, int *use_mpi_p)
{
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    /* MPI_Finalize that hangs holds MPI's own state: MPI_Abort from another thread may hang
     * with it (seen under load: the job then outlived the watchdog by a minute). */
    int in_finalize = call != NULL && strcmp(call, "MPI_Finalize") == 0;
    *use_mpi_p = inited && !finalized && !in_finalize &&
                 (mpi_thread || atomic_load(&thread_multiple));
    return *use_mpi_p                 ? "MPI_Abort"
           : !inited                  ? "abort() (MPI is not initialised)"
           : finalized || in_finalize ? "abort() (MPI is being finalised)"
                                      : "abort() (MPI did not grant MPI_THREAD_MULTIPLE)";
}

void ingot_job_end(int code, int mpi_thread)
{
    int use_mpi;
    (void)job_end_how(mpi_thread, NULL, &use_mpi);
    if (use_mpi) {
        pthread_t t; /* MPI_Abort is bounded too: a backstop ends the process if it hangs */
        (void)ingot_thread_start(&t, "ingot-backstop", watchdog_abort_backstop, NULL,
                                 INGOT_THREAD_DETACHED | INGOT_THREAD_QUIET);
        struct timespec first = {0, WATCHDOG_LINE_FIRST_NS};
        nanosleep(&first, NULL);
        MPI_Abort(MPI_COMM_WORLD, code);
    }
    abort();
}

static void watchdog_end_process(const char *what, const char *call, uint64_t waited_ns)
{
    char host[72] = "";
    gethostname(host, sizeof(host) - 1);
    int use_mpi;
    const char *how = job_end_how(0, call, &use_mpi);
    ingot_error("watchdog: %s (%s) on rank %d (host %s, pid %d) has not returned after %.1f s "
                "(INGOT_TIMEOUT): another rank stopped, died or is far behind; ending this "
                "process with %s so the launcher ends the job",
                call, what, atomic_load(&world_rank), host, (int)getpid(), waited_ns / 1e9, how);
    if (use_mpi) {
        ingot_job_end(70, 0);
    }
    abort();
}

/* A call that a liveness check found hopeless (a rank silent): say so, then end the job. */
static void watchdog_end_lost(const char *what, const char *call, uint64_t waited_ns,
                              const char *why)
{
    int use_mpi;
    const char *how = job_end_how(0, call, &use_mpi);
    ingot_error("watchdog: %s (%s) on rank %d has waited %.1f s, and %s: it stopped, died or "
                "hangs, so the call cannot complete (INGOT_PEER_FAILURE=abort); ending this "
                "process with %s so the launcher ends the job",
                call, what, atomic_load(&world_rank), waited_ns / 1e9, why, how);
    if (use_mpi) {
        ingot_job_end(70, 0);
    }
    abort();
}

/* Ask the liveness check about slot @p s, armed long enough; 1 when it ended the call. */
static int watchdog_live_check(watch_slot_t *s, uint64_t now)
{
    uint64_t armed = atomic_load(&s->armed_ns), next = atomic_load(&s->live_check_ns);
    char why[256] = "";
    pthread_mutex_lock(&live_lock);
    int due = live_fn != NULL && now >= armed + live_after_ns && now >= next;
    int lost = due && live_fn(live_arg, why, sizeof(why));
    uint64_t after = live_after_ns;
    pthread_mutex_unlock(&live_lock);
    if (due) {
        atomic_store(&s->live_check_ns, ingot_time_ns() + after);
    }
    uint64_t deadline = atomic_load(&s->deadline_ns);
    if (!lost || deadline == 0 || atomic_load(&s->armed_ns) != armed ||
        !atomic_compare_exchange_strong(&s->deadline_ns, &deadline, 0)) {
        return 0; /* fine, or the call returned meanwhile */
    }
    ingot_watchdog_action_t fn = atomic_load(&action);
    if (fn != NULL) {
        fn(atomic_load(&s->what), atomic_load(&s->call), ingot_time_ns() - armed);
    } else {
        watchdog_end_lost(atomic_load(&s->what), atomic_load(&s->call), ingot_time_ns() - armed,
                          why);
    }
    return 1;
}

static void *watchdog_monitor(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec tick = {0, (long)INGOT_WATCHDOG_TICK_NS};
        nanosleep(&tick, NULL);
        uint64_t now = ingot_time_ns();
        int used = atomic_load(&slots_used);
        for (int i = 0; i < used && i < WATCHDOG_SLOTS; i++) {
            uint64_t deadline = atomic_load(&slots[i].deadline_ns);
            if (deadline != 0 && now < deadline && watchdog_live_check(&slots[i], now)) {
                continue;
            }
            if (deadline == 0 || now < deadline ||
                !atomic_compare_exchange_strong(&slots[i].deadline_ns, &deadline, 0)) {
                continue;
            }
            ingot_watchdog_action_t fn = atomic_load(&action);
            (fn ? fn : watchdog_end_process)(atomic_load(&slots[i].what),
                                             atomic_load(&slots[i].call),
                                             now - atomic_load(&slots[i].armed_ns));
        }
    }
    return NULL;
}

void ingot_watchdog_set_liveness(ingot_watchdog_liveness_fn_t fn, void *arg, uint64_t after_ns)
{
    pthread_mutex_lock(&live_lock);
    live_fn = fn;
    live_arg = arg;
    live_after_ns = after_ns;
    pthread_mutex_unlock(&live_lock);
}

void ingot_watchdog_unset_liveness(void *arg)
{
    pthread_mutex_lock(&live_lock);
    if (live_arg == arg) {
        live_fn = NULL;
        live_arg = NULL;
    }
    pthread_mutex_unlock(&live_lock);
}

static void watchdog_start(void)
{
    pthread_t t;
    if (ingot_thread_start(&t, "ingot-watchdog", watchdog_monitor, NULL,
                           INGOT_THREAD_DETACHED | INGOT_THREAD_QUIET) != INGOT_OK) {
        ingot_warn("watchdog thread could not start: ingot's MPI calls are not bounded by "
                   "INGOT_TIMEOUT in this process");
    }
}

void ingot_watchdog_arm(const char *what, const char *call)
{
    uint64_t timeout = atomic_load(&timeout_ns);
    if (timeout == 0) {
        return;
    }
    if (!my_slot_taken) {
        my_slot_taken = 1;
        int i = atomic_fetch_add(&slots_used, 1);
        my_slot = i < WATCHDOG_SLOTS ? &slots[i] : NULL;
        pthread_once(&monitor_once, watchdog_start);
    }
    if (my_slot != NULL) {
        uint64_t now = ingot_time_ns();
        atomic_store(&my_slot->what, what);
        atomic_store(&my_slot->call, call);
        atomic_store(&my_slot->armed_ns, now);
        atomic_store(&my_slot->live_check_ns, 0);
        atomic_store(&my_slot->deadline_ns, now + timeout);
    }
}

int ingot_watchdog_disarm(int rc)
{
    if (my_slot != NULL) {
        atomic_store(&my_slot->deadline_ns, 0);
    }
    return rc;
}

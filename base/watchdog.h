/*
 * The watchdog of ingot's own blocking MPI calls. Every MPI call made through INGOT_MPI_CALL is
 * armed here for its duration: a collective that a stopped or lost rank never completes (an
 * MPI_Bcast at init, the MPI_Win_free barrier at loader destroy, the cursor agreement) would
 * otherwise hang its caller forever. Past INGOT_TIMEOUT a monitor thread logs the call, what it
 * was for, this rank and host, and then ends its own process, as PyTorch's NCCL watchdog does:
 * MPI_Abort where MPI granted MPI_THREAD_MULTIPLE (so the launcher ends the job at once), else
 * abort() (the launcher sees a process die and ends the others). There is no way to cancel an
 * MPI collective and continue, so ending the process is the only bounded outcome.
 *
 * Arming is cheap (a thread-local slot, two atomic stores); the monitor thread starts at the
 * first arm and wakes every INGOT_WATCHDOG_TICK_NS. One armed call per thread at a time.
 */
#ifndef INGOT_BASE_WATCHDOG_H
#define INGOT_BASE_WATCHDOG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define INGOT_WATCHDOG_TICK_NS (100ull * 1000 * 1000)

/** Deadline of every armed call, from INGOT_TIMEOUT (0 disables the watchdog). */
void ingot_watchdog_set_timeout(uint64_t timeout_ns);

/** Whether MPI granted MPI_THREAD_MULTIPLE (then the monitor may call MPI_Abort), and this
 *  process's rank in MPI_COMM_WORLD for the log line. */
void ingot_watchdog_set_mpi(bool thread_multiple, int world_rank);

/** Arm the calling thread's slot for @p call (e.g. "MPI_Win_free"), made for @p what. */
void ingot_watchdog_arm(const char *what, const char *call);

/** Disarm the calling thread's slot; returns @p rc unchanged (so calls can be wrapped). */
int ingot_watchdog_disarm(int rc);

/**
 * End the whole job after a fault the ranks cannot agree on (the caller has logged why):
 * MPI_Abort (after a moment, so the launcher prints this rank's last line ahead of its abort
 * banner, and with a backstop abort() should it hang) when MPI may be called from this thread
 * (@p mpi_thread: the thread making ingot's MPI calls; else only with MPI_THREAD_MULTIPLE),
 * otherwise abort(): the launcher sees a process die and ends the others.
 */
_Noreturn void ingot_job_end(int code, int mpi_thread);

/**
 * A liveness check for calls that wait long: the monitor calls @p fn(@p arg) for an armed call
 * that has waited @p after_ns, then every @p after_ns; when it returns 1 (a rank found silent,
 * said in why), the call is ended as past its deadline, with that reason. One check at a time:
 * the last set wins. ingot_watchdog_unset_liveness(@p arg) removes it, waiting for a check in
 * progress to return.
 */
typedef int (*ingot_watchdog_liveness_fn_t)(void *arg, char *why, size_t len);
void ingot_watchdog_set_liveness(ingot_watchdog_liveness_fn_t fn, void *arg, uint64_t after_ns);
void ingot_watchdog_unset_liveness(void *arg);

/** What the monitor does past the deadline; tests replace it to observe a firing without
 *  ending the process (tests/base/watchdog/test_watchdog.c). The default logs and ends the process as
 *  described above. A call fires once per arming. */
typedef void (*ingot_watchdog_action_t)(const char *what, const char *call, uint64_t waited_ns);
void ingot_watchdog_set_action(ingot_watchdog_action_t action);

#endif

/*
 * Error boundary: turn an MPI or CUDA return code into an ingot status, logging the
 * library's own text once together with the call and what it was for. Communicators ingot owns
 * use MPI_ERRORS_RETURN so MPI errors come back here instead of aborting the job.
 */
#ifndef INGOT_BASE_ERRORS_H
#define INGOT_BASE_ERRORS_H

#include <ingot/status.h>
#include <stddef.h>
#include "base/watchdog.h"

/** INGOT_OK for MPI_SUCCESS; else log "<call> (<what>) failed: <MPI text>", INGOT_ERR_MPI. */
ingot_status_t ingot_mpi_check(int rc, const char *call, const char *what);
/** INGOT_OK for cudaSuccess; else log cudaGetErrorString, clear the error, INGOT_ERR_CUDA.
 *  In a build without CUDA every non-zero code maps to INGOT_ERR_UNSUPPORTED. */
ingot_status_t ingot_cuda_check(int cuda_error, const char *call, const char *what);

/**
 * Agree on a status over @p comm (collective): every rank returns the worst (lowest) status of
 * all ranks, so a step that failed on one rank fails on all and no rank is left waiting in the
 * next collective. On a failure, the error lines held since ingot_mpi_hold_begin() are written
 * once for the job (see ingot_log_hold_begin); a rank that succeeded gets "<what> failed on
 * rank N: <status>" as its last error (logged at info level: the failing rank said why).
 * @p comm is an MPI_Comm passed as a pointer so this header needs no <mpi.h>.
 */
ingot_status_t ingot_mpi_agree(const void *comm, ingot_status_t mine, const char *what);

/** Hold the calling thread's error lines for the agreements of a collective call over @p comm
 *  (an MPI_Comm *), so a fault every rank finds is written once; ingot_mpi_hold_end() writes
 *  whatever no agreement took. Nestable: the outermost call's communicator decides. */
void ingot_mpi_hold_begin(const void *comm);
void ingot_mpi_hold_end(void);

/* Every MPI call ingot makes is armed on the watchdog (base/watchdog.h) while it runs, so a
 * collective that another rank never joins ends this process after INGOT_TIMEOUT instead of
 * hanging it. The comma operator sequences arm, call, disarm. */
#define INGOT_MPI_CALL(_what, _call, ...) \
    (ingot_watchdog_arm(_what, #_call), \
     ingot_mpi_check(ingot_watchdog_disarm(_call(__VA_ARGS__)), #_call, _what))

#endif

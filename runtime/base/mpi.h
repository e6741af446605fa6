/* MPI error boundary: turn an MPI return code into an ingot status, logging MPI's own text. */
#ifndef INGOT_BASE_MPI_H
#define INGOT_BASE_MPI_H

#include <ingot/status.h>
#include <mpi.h>

/**
 * INGOT_OK when @p rc is MPI_SUCCESS; otherwise log "<call> (<what>) failed: <MPI error text>"
 * once and return INGOT_ERR_MPI. Communicators ingot owns use MPI_ERRORS_RETURN.
 */
ingot_status_t ingot_mpi_check(int rc, const char *call, const char *what);

#define INGOT_MPI_CALL(_what, _call, ...) ingot_mpi_check(_call(__VA_ARGS__), #_call, _what)

#endif

/* MPI error boundary (see mpi.h). */
#include "runtime/base/mpi.h"
#include "runtime/base/log.h"
#include <stdio.h>

ingot_status_t ingot_mpi_check(int rc, const char *call, const char *what)
{
    if (rc == MPI_SUCCESS) {
        return INGOT_OK;
    }
    char text[MPI_MAX_ERROR_STRING];
    int len = 0;
    if (MPI_Error_string(rc, text, &len) != MPI_SUCCESS) {
        len = snprintf(text, sizeof(text), "MPI error %d", rc);
    }
    ingot_error("%s (%s) failed: %.*s", call, what, len, text);
    return INGOT_ERR_MPI;
}

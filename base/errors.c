/* Error boundary for MPI, UCX, zstd and CUDA (see errors.h). */
#include "base/errors.h"
#include "base/log.h"
#include <ingot/version.h>
#include <mpi.h>
#include <stdio.h>
#include <ucs/type/status.h>
#include <zstd.h>
#if INGOT_BUILD_CUDA
#    include <cuda_runtime_api.h>
#endif

ingot_status_t ingot_mpi_check(int rc, const char *call, const char *what)
{
    if (rc == MPI_SUCCESS) {
        return INGOT_OK;
    }
    char text[MPI_MAX_ERROR_STRING];
    int len = 0, inited = 0;
    MPI_Initialized(&inited); /* MPI_Error_string before MPI_Init aborts under Open MPI 4 */
    if (!inited || MPI_Error_string(rc, text, &len) != MPI_SUCCESS) {
        len = snprintf(text, sizeof(text), "MPI error %d", rc);
    }
    ingot_error("%s (%s) failed: %.*s", call, what, len, text);
    return INGOT_ERR_MPI;
}

ingot_status_t ingot_mpi_agree(const void *comm, ingot_status_t mine, const char *what)
{
    int local = (int)mine, worst = (int)mine;
    ingot_status_t st = INGOT_MPI_CALL(what, MPI_Allreduce, &local, &worst, 1, MPI_INT, MPI_MIN,
                                       *(const MPI_Comm *)comm);
    if (st != INGOT_OK) {
        return st;
    }
    if (worst != INGOT_OK && mine == INGOT_OK) {
        ingot_error("%s failed on another rank: %s", what,
                    ingot_status_string((ingot_status_t)worst));
    }
    return (ingot_status_t)worst;
}

ingot_status_t ingot_ucx_check(int ucs_status, const char *call, const char *what)
{
    if (ucs_status == UCS_OK || ucs_status == UCS_INPROGRESS) {
        return INGOT_OK;
    }
    ingot_error("%s (%s) failed: %s", call, what, ucs_status_string((ucs_status_t)ucs_status));
    return INGOT_ERR_UCX;
}

ingot_status_t ingot_zstd_check(size_t rc, const char *call, const char *what)
{
    if (!ZSTD_isError(rc)) {
        return INGOT_OK;
    }
    ingot_error("%s (%s) failed: %s", call, what, ZSTD_getErrorName(rc));
    return INGOT_ERR_ZSTD;
}

ingot_status_t ingot_cuda_check(int cuda_error, const char *call, const char *what)
{
    if (cuda_error == 0) {
        return INGOT_OK;
    }
#if INGOT_BUILD_CUDA
    ingot_error("%s (%s) failed: %s", call, what, cudaGetErrorString((cudaError_t)cuda_error));
    cudaGetLastError(); /* do not leave a sticky error for a framework sharing the process */
    return INGOT_ERR_CUDA;
#else
    ingot_error("%s (%s): this build has no CUDA support", call, what);
    return INGOT_ERR_UNSUPPORTED;
#endif
}

/* Status strings are distinct and meaningful; errno maps to the right codes. */
#include "common/test.h"
#include "base/config.h"
#include "base/errors.h"
#include "transport/transport.h"
#include "base/status.h"
#include <errno.h>
#include <mpi.h>
#include <ucs/type/status.h>

/* Each boundary wrapper maps the library's error and logs its own text with call and purpose. */
static void test_boundaries(void)
{
    char path[1024];
    snprintf(path, sizeof(path), "%s/errors.log", test_tmpdir());
    setenv("INGOT_LOG_FILE", path, 1);
    CHECK_OK(ingot_config_load());
    CHECK_OK(ingot_mpi_check(MPI_SUCCESS, "MPI_Bcast", "x"));
    CHECK_STATUS(ingot_mpi_check(MPI_ERR_COMM, "MPI_Bcast", "mpi purpose"), INGOT_ERR_MPI);
    CHECK_OK(ingot_ucx_check(UCS_OK, "ucp_init", "x"));
    CHECK_STATUS(ingot_ucx_check(UCS_ERR_NO_MEMORY, "ucp_init", "ucx purpose"), INGOT_ERR_UCX);
    CHECK_OK(ingot_cuda_check(0, "cudaMemcpyAsync", "x"));
    ingot_status_t cst = ingot_cuda_check(2 /* cudaErrorMemoryAllocation */, "cudaMalloc",
                                          "cuda purpose");
    CHECK(cst == INGOT_ERR_CUDA || cst == INGOT_ERR_UNSUPPORTED);
    char *text = test_read_file(path, NULL);
    char want[128];
    snprintf(want, sizeof(want), "MPI_Bcast (mpi purpose) failed: MPI error %d", MPI_ERR_COMM);
    CHECK_CONTAINS(text, want); /* before MPI_Init only the code can be given */
    CHECK_CONTAINS(text, "ucp_init (ucx purpose) failed: Out of memory");
    CHECK_CONTAINS(text, "cudaMalloc (cuda purpose)");
    free(text);
}

int main(void)
{
    for (int s = INGOT_END_OF_DATA; s > INGOT_ERR_LAST; s--) {
        const char *str = ingot_status_string((ingot_status_t)s);
        CHECK(str != NULL && strcmp(str, "Unknown ingot status") != 0);
        for (int t = s - 1; t > INGOT_ERR_LAST; t--) {
            if (strcmp(str, ingot_status_string((ingot_status_t)t)) == 0) {
                fprintf(stderr, "status %d and %d share the string '%s'\n", s, t, str);
                return 1;
            }
        }
    }
    CHECK(strcmp(ingot_status_string(INGOT_ERR_LAST), "Unknown ingot status") == 0);
    CHECK(strcmp(ingot_status_string((ingot_status_t)12345), "Unknown ingot status") == 0);
    CHECK(ingot_status_from_errno(0) == INGOT_OK);
    CHECK(ingot_status_from_errno(ENOMEM) == INGOT_ERR_NO_MEMORY);
    CHECK(ingot_status_from_errno(ENOENT) == INGOT_ERR_NOT_FOUND);
    CHECK(ingot_status_from_errno(EACCES) == INGOT_ERR_PERMISSION);
    CHECK(ingot_status_from_errno(EIO) == INGOT_ERR_IO);
    CHECK(ingot_status_from_errno(ETIMEDOUT) == INGOT_ERR_TIMED_OUT);
    CHECK(ingot_status_from_errno(EAGAIN) == INGOT_ERR_NO_RESOURCE);
    CHECK(ingot_status_from_errno(EOVERFLOW) == INGOT_ERR_OUT_OF_RANGE);
    test_boundaries();
    return 0;
}

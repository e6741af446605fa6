/* Run-time CUDA detection (see cuda.h). */
#include "base/cuda.h"
#include <ingot/version.h>
#include <pthread.h>
#include <stdio.h>
#if INGOT_BUILD_CUDA
#    include <cuda_runtime_api.h>
#endif

static pthread_once_t probe_once = PTHREAD_ONCE_INIT;
static ingot_cuda_probe_t probe_result;

static void cuda_probe_once(void)
{
#if INGOT_BUILD_CUDA
    cudaRuntimeGetVersion(&probe_result.runtime_version);
    cudaError_t rc = cudaDriverGetVersion(&probe_result.driver_version);
    if (rc != cudaSuccess || probe_result.driver_version == 0) {
        snprintf(probe_result.reason, sizeof(probe_result.reason),
                 "no CUDA driver on this node (libcuda.so.1 not loaded)");
        probe_result.driver_version = 0;
        cudaGetLastError();
        return;
    }
    int n = 0;
    rc = cudaGetDeviceCount(&n);
    if (rc != cudaSuccess) {
        snprintf(probe_result.reason, sizeof(probe_result.reason), "cudaGetDeviceCount: %s",
                 cudaGetErrorString(rc));
        n = 0;
    } else if (n == 0) {
        snprintf(probe_result.reason, sizeof(probe_result.reason),
                 "the driver reports no device (check CUDA_VISIBLE_DEVICES)");
    }
    cudaGetLastError(); /* leave no sticky error behind */
    probe_result.device_count = n;
#else
    snprintf(probe_result.reason, sizeof(probe_result.reason),
             "built without CUDA (-DINGOT_WITH_CUDA=OFF or toolkit not found)");
#endif
}

const ingot_cuda_probe_t *ingot_cuda_probe(void)
{
    pthread_once(&probe_once, cuda_probe_once);
    return &probe_result;
}

int ingot_cuda_usable(void)
{
    return ingot_cuda_probe()->device_count > 0;
}

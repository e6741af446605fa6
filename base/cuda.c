/* Run-time CUDA detection (see cuda.h). */
#include "base/cuda.h"
#include "base/errors.h"
#include "base/fault.h"
#include "base/log.h"
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

#if INGOT_BUILD_CUDA
/* Copy on a stream of ingot's own (never the legacy default stream, which waits for every
 * other) after @p event (NULL: none), and wait for that stream only. */
static ingot_status_t cuda_copy_sync(void *dst, const void *src, size_t bytes,
                                     enum cudaMemcpyKind kind, void *event, const char *what)
{
    cudaStream_t stream;
    ingot_status_t st = ingot_cuda_check(
        (int)cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate", what);
    if (st != INGOT_OK) {
        return st;
    }
    if (event != NULL) {
        st = ingot_cuda_check((int)cudaStreamWaitEvent(stream, (cudaEvent_t)event, 0),
                              "cudaStreamWaitEvent", what);
    }
    if (st == INGOT_OK && bytes > 0) {
        st = ingot_cuda_check((int)cudaMemcpyAsync(dst, src, bytes, kind, stream),
                              "cudaMemcpyAsync", what);
    }
    if (st == INGOT_OK) {
        st = ingot_cuda_check((int)cudaStreamSynchronize(stream), "cudaStreamSynchronize", what);
    }
    cudaStreamDestroy(stream);
    return st;
}
#endif

ingot_status_t ingot_cuda_copy_to_host(void *dst, const void *src, size_t bytes, void *event,
                                       const char *what)
{
#if INGOT_BUILD_CUDA
    /* As a trainer reads a batch: on a stream that waits on the batch's event, no host
     * synchronisation before the read. */
    return cuda_copy_sync(dst, src, bytes, cudaMemcpyDeviceToHost, event, what);
#else
    (void)dst;
    (void)src;
    (void)bytes;
    (void)event;
    ingot_error("%s: cannot copy device memory to the host: %s", what, ingot_cuda_probe()->reason);
    return INGOT_ERR_UNSUPPORTED;
#endif
}

ingot_status_t ingot_cuda_malloc(void **ptr_p, size_t bytes, const char *what)
{
#if INGOT_BUILD_CUDA
    int err = ingot_fault_check(INGOT_FAULT_CUDA_MALLOC);
    cudaError_t rc = err ? cudaErrorMemoryAllocation : cudaMalloc(ptr_p, bytes);
    if (rc == cudaSuccess) {
        return INGOT_OK;
    }
    cudaGetLastError();
    *ptr_p = NULL;
    int device = -1;
    size_t free_bytes = 0, total = 0;
    cudaGetDevice(&device);
    cudaMemGetInfo(&free_bytes, &total);
    cudaGetLastError();
    ingot_error("%s: cannot allocate %zu bytes on CUDA device %d (%zu bytes free of %zu): %s", what,
                bytes, device, free_bytes, total, cudaGetErrorString(rc));
    return INGOT_ERR_NO_MEMORY;
#else
    (void)bytes;
    *ptr_p = NULL;
    ingot_error("%s: cannot allocate device memory: %s", what, ingot_cuda_probe()->reason);
    return INGOT_ERR_UNSUPPORTED;
#endif
}

ingot_status_t ingot_cuda_device_push(int device, int *prev_p, const char *what)
{
    *prev_p = -1;
#if INGOT_BUILD_CUDA
    if (cudaGetDevice(prev_p) != cudaSuccess) {
        *prev_p = -1;
        cudaGetLastError();
    }
    return ingot_cuda_check((int)cudaSetDevice(device), "cudaSetDevice", what);
#else
    (void)device;
    (void)what;
    return INGOT_ERR_UNSUPPORTED;
#endif
}

void ingot_cuda_device_pop(int prev)
{
#if INGOT_BUILD_CUDA
    if (prev >= 0) {
        cudaSetDevice(prev);
    }
#else
    (void)prev;
#endif
}

ingot_status_t ingot_cuda_malloc_on(int device, void **ptr_p, size_t bytes, const char *what)
{
    const ingot_cuda_probe_t *probe = ingot_cuda_probe();
    if (device < 0 || device >= probe->device_count) {
        return ingot_fail(INGOT_ERR_NO_DEVICE, "%s: CUDA device %d is not usable here (%d visible)",
                          what, device, probe->device_count);
    }
#if INGOT_BUILD_CUDA
    int prev;
    ingot_status_t st = ingot_cuda_device_push(device, &prev, what);
    if (st == INGOT_OK) {
        st = ingot_cuda_malloc(ptr_p, bytes, what);
    }
    ingot_cuda_device_pop(prev);
    return st;
#else
    (void)ptr_p;
    (void)bytes;
    return INGOT_ERR_UNSUPPORTED;
#endif
}

ingot_status_t ingot_cuda_mem_info(int device, size_t *free_p, size_t *total_p)
{
    const ingot_cuda_probe_t *probe = ingot_cuda_probe();
    if (device < 0 || device >= probe->device_count) {
        return INGOT_ERR_NO_DEVICE;
    }
#if INGOT_BUILD_CUDA
    int prev;
    ingot_status_t st = ingot_cuda_device_push(device, &prev, "device memory query");
    if (st == INGOT_OK) {
        st = ingot_cuda_check((int)cudaMemGetInfo(free_p, total_p), "cudaMemGetInfo",
                              "device memory query");
    }
    ingot_cuda_device_pop(prev);
    return st;
#else
    (void)free_p;
    (void)total_p;
    return INGOT_ERR_UNSUPPORTED;
#endif
}

void ingot_cuda_free(void *ptr)
{
#if INGOT_BUILD_CUDA
    if (ptr != NULL) {
        cudaFree(ptr);
        cudaGetLastError();
    }
#else
    (void)ptr;
#endif
}

int ingot_cuda_pointer_device(const void *ptr)
{
#if INGOT_BUILD_CUDA
    if (ptr == NULL || !ingot_cuda_usable()) {
        return -1;
    }
    struct cudaPointerAttributes attr;
    cudaError_t rc = cudaPointerGetAttributes(&attr, ptr);
    if (rc != cudaSuccess) {
        cudaGetLastError(); /* unregistered host memory on older runtimes: not an error */
        return -1;
    }
    return (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) ? attr.device
                                                                                     : -1;
#else
    (void)ptr;
    return -1;
#endif
}

ingot_status_t ingot_cuda_copy(void *dst, const void *src, size_t bytes, const char *what)
{
#if INGOT_BUILD_CUDA
    /* cudaMemcpyDefault: the direction from the pointers (unified addressing). */
    return cuda_copy_sync(dst, src, bytes, cudaMemcpyDefault, NULL, what);
#else
    (void)dst;
    (void)src;
    (void)bytes;
    ingot_error("%s: cannot copy device memory: %s", what, ingot_cuda_probe()->reason);
    return INGOT_ERR_UNSUPPORTED;
#endif
}

ingot_status_t ingot_cuda_copy_after(void *dst, const void *src, size_t bytes, int device,
                                     bool after, void *stream, const char *what)
{
#if INGOT_BUILD_CUDA
    ingot_status_t st = ingot_cuda_check((int)cudaSetDevice(device), "cudaSetDevice", what);
    cudaEvent_t ev = NULL;
    if (st == INGOT_OK && after) {
        st = ingot_cuda_check((int)cudaEventCreateWithFlags(&ev, cudaEventDisableTiming),
                              "cudaEventCreate", what);
        if (st == INGOT_OK) {
            st = ingot_cuda_check((int)cudaEventRecord(ev, (cudaStream_t)stream), "cudaEventRecord",
                                  what);
        }
    }
    if (st == INGOT_OK) {
        st = cuda_copy_sync(dst, src, bytes, cudaMemcpyDefault, ev, what);
    }
    if (ev != NULL) {
        cudaEventDestroy(ev);
    }
    return st;
#else
    (void)dst;
    (void)src;
    (void)bytes;
    (void)device;
    (void)after;
    (void)stream;
    ingot_error("%s: cannot copy device memory: %s", what, ingot_cuda_probe()->reason);
    return INGOT_ERR_UNSUPPORTED;
#endif
}

/*
 * Run-time CUDA detection. A CUDA build must still run its host paths on a node without a GPU or
 * driver: these calls answer "is a device usable here" without leaving a sticky CUDA error for a
 * framework (PyTorch) sharing the process.
 */
#ifndef INGOT_BASE_CUDA_H
#define INGOT_BASE_CUDA_H

#include <ingot/status.h>
#include <stdbool.h>
#include <stddef.h>

typedef struct ingot_cuda_probe {
    int device_count;    /* usable devices (0 when none, no driver, or not built with CUDA) */
    int driver_version;  /* e.g. 13000, 0 without a driver */
    int runtime_version; /* runtime linked into ingot, 0 without CUDA */
    char reason[160];    /* why no device is usable */
} ingot_cuda_probe_t;

/** Probe once per process (thread-safe) and return the cached result. */
const ingot_cuda_probe_t *ingot_cuda_probe(void);

/** 1 when at least one CUDA device is usable by this process. */
int ingot_cuda_usable(void);

/**
 * Copy @p bytes of device memory at @p src into host memory at @p dst, after @p event (a
 * cudaEvent_t, e.g. a batch's ready_event; NULL for none), as a trainer reads a batch: on a
 * stream of its own that waits on the event (cudaStreamWaitEvent, no host synchronisation before
 * the copy); returns when the copy is done. For tests
 * and tools that check device data on the host: INGOT_ERR_UNSUPPORTED in a build without CUDA,
 * INGOT_ERR_CUDA (logged with @p what) when a CUDA call fails.
 */
ingot_status_t ingot_cuda_copy_to_host(void *dst, const void *src, size_t bytes, void *event,
                                       const char *what);

/**
 * cudaMalloc @p bytes on the current device into *@p ptr_p (fault site cuda_malloc). On failure:
 * INGOT_ERR_NO_MEMORY, logged with @p what, the size asked for and the device's free and total
 * memory; INGOT_ERR_UNSUPPORTED without CUDA in the build.
 */
ingot_status_t ingot_cuda_malloc(void **ptr_p, size_t bytes, const char *what);

/**
 * Make CUDA device @p device current for the calling thread, keeping the one that was in
 * *@p prev_p for ingot_cuda_device_pop() (call it whatever this returns). INGOT_ERR_CUDA (logged
 * with @p what) when @p device cannot be made current; INGOT_ERR_UNSUPPORTED without CUDA.
 */
ingot_status_t ingot_cuda_device_push(int device, int *prev_p, const char *what);
/** Make the device ingot_cuda_device_push() kept current again (none: nothing done). */
void ingot_cuda_device_pop(int prev);

/** ingot_cuda_malloc() on CUDA device @p device (made current for the call, then restored).
 *  INGOT_ERR_NO_DEVICE (logged) when that device is not usable here. */
ingot_status_t ingot_cuda_malloc_on(int device, void **ptr_p, size_t bytes, const char *what);

/** Bytes of free and total memory of CUDA device @p device (INGOT_ERR_NO_DEVICE when there is
 *  no such usable device, INGOT_ERR_UNSUPPORTED without CUDA in the build). */
ingot_status_t ingot_cuda_mem_info(int device, size_t *free_p, size_t *total_p);

/** cudaFree (clearing any error it leaves). No-op without CUDA in the build. */
void ingot_cuda_free(void *ptr);

/** The CUDA device whose memory @p ptr points into (device or managed memory), or -1 for host
 *  memory, NULL, no usable device or a build without CUDA. Leaves no CUDA error behind. */
int ingot_cuda_pointer_device(const void *ptr);

/** As ingot_cuda_copy(), with CUDA device @p device made current first, and, when @p after, only
 *  once the work enqueued so far on @p stream (a cudaStream_t; NULL: the legacy default stream)
 *  is done, e.g. the kernel that wrote what is copied. */
ingot_status_t ingot_cuda_copy_after(void *dst, const void *src, size_t bytes, int device,
                                     bool after, void *stream, const char *what);

/** Copy @p bytes between any two of host and device memory (direction from the pointers) and
 *  wait for it, on a stream of its own. INGOT_ERR_CUDA (logged with @p what) on failure,
 *  INGOT_ERR_UNSUPPORTED without CUDA in the build. */
ingot_status_t ingot_cuda_copy(void *dst, const void *src, size_t bytes, const char *what);

#endif

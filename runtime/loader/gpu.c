/*
 * GPU path of the loader: each slot's pinned host payload is copied with one cudaMemcpyAsync
 * on the loader's own non-blocking stream into the slot's device buffer, and an event recorded
 * after it is handed to the trainer, whose stream waits on it (no host synchronisation). Without
 * CUDA in the build these calls fail cleanly or do nothing.
 */
#include "runtime/loader/loader_impl.h"
#include "runtime/context_impl.h"
#include "base/cuda.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/time.h"
#include <ingot/version.h>
#if INGOT_BUILD_CUDA
#    include <cuda_runtime_api.h>
#endif

#define GPU_CALL(_what, _call, ...) ingot_cuda_check((int)_call(__VA_ARGS__), #_call, _what)

ingot_status_t ingot_loader_gpu_device_check(int device)
{
    const ingot_cuda_probe_t *probe = ingot_cuda_probe();
    if (device >= 0 && device < probe->device_count) {
        return INGOT_OK;
    }
    return ingot_fail(INGOT_ERR_NO_DEVICE,
                      "loader device %d: this process sees %d usable CUDA device(s)%s%s; "
                      "deliver to host memory (device = INGOT_DEVICE_HOST, --device host) or "
                      "check CUDA_VISIBLE_DEVICES",
                      device, probe->device_count, probe->device_count ? "" : ": ",
                      probe->device_count ? "" : probe->reason);
}

ingot_status_t ingot_loader_gpu_ring_fits(int device, uint32_t depth, size_t slot_bytes,
                                          size_t free_bytes, size_t total_bytes)
{
    if (slot_bytes <= free_bytes / depth) {
        return INGOT_OK;
    }
    return ingot_fail(INGOT_ERR_NO_MEMORY,
                      "loader device %d: the device slot ring needs %u x %zu = %llu bytes but the "
                      "device has %zu bytes free (of %zu); lower the depth or the batch size, or "
                      "free device memory before creating the loader",
                      device, depth, slot_bytes,
                      (unsigned long long)depth * (unsigned long long)slot_bytes, free_bytes,
                      total_bytes);
}

#if INGOT_BUILD_CUDA
/* The loader's stream and, per slot, its device buffer and its two events. */
static ingot_status_t gpu_slots_create(ingot_loader_h l)
{
    cudaStream_t stream;
    ingot_status_t st = GPU_CALL("loader ingest stream", cudaStreamCreateWithFlags, &stream,
                                 cudaStreamNonBlocking);
    if (st != INGOT_OK) {
        return st;
    }
    l->stream = stream;
    for (uint32_t i = 0; i < l->depth && st == INGOT_OK; i++) {
        loader_slot_t *slot = &l->slots[i];
        cudaEvent_t done, start;
        st = ingot_cuda_malloc(&slot->device, l->slot_bytes, "loader device slot");
        if (st == INGOT_OK) {
            st = GPU_CALL("loader slot event", cudaEventCreate, &done);
        }
        if (st == INGOT_OK) {
            slot->event = done;
            st = GPU_CALL("loader slot event", cudaEventCreate, &start);
        }
        if (st == INGOT_OK) {
            slot->h2d_start = start;
            st = GPU_CALL("loader slot event", cudaEventCreateWithFlags, &done,
                          cudaEventDisableTiming);
        }
        if (st == INGOT_OK) {
            slot->consumed = done;
        }
    }
    return st;
}
#endif

#if INGOT_BUILD_CUDA
/* cudaMalloc and cudaFree may synchronise the device, and NCCL documents that doing so while its
 * kernels run can deadlock (a kernel waits for a peer that waits for us). Device memory is
 * allocated only at create and freed at destroy; both first let the context's reductions drain
 * (bounded by INGOT_TIMEOUT). */
static ingot_status_t gpu_quiesce(ingot_loader_h l, const char *what)
{
    uint64_t deadline = ingot_deadline_after(l->timeout_ns);
    while (atomic_load(&l->ctx->device_reductions) > 0) {
        if (ingot_time_ns() >= deadline) {
            return ingot_fail(INGOT_ERR_TIMED_OUT,
                              "%s: %d gradient reduction(s) still in flight after %.1f s "
                              "(INGOT_TIMEOUT); device memory is not allocated or freed while "
                              "NCCL kernels may run",
                              what, atomic_load(&l->ctx->device_reductions), l->timeout_ns / 1e9);
        }
        struct timespec pause = {0, 100000};
        nanosleep(&pause, NULL);
    }
    return INGOT_OK;
}
#endif

ingot_status_t ingot_loader_gpu_init(ingot_loader_h l)
{
#if INGOT_BUILD_CUDA
    size_t free_bytes = 0, total = 0;
    ingot_status_t qst = gpu_quiesce(l, "ingot_loader_create");
    if (qst != INGOT_OK) {
        return qst;
    }
    /* The device was checked by ingot_loader_create() before anything was allocated. */
    ingot_status_t st = GPU_CALL("loader device", cudaSetDevice, l->device);
    if (st == INGOT_OK) {
        st = ingot_cuda_mem_info(l->device, &free_bytes, &total);
    }
    if (st == INGOT_OK) {
        st = ingot_loader_gpu_ring_fits(l->device, l->depth, l->slot_bytes, free_bytes, total);
    }
    return st == INGOT_OK ? gpu_slots_create(l) : st;
#else
    ingot_error("loader device %d: this build of ingot has no CUDA support", l->device);
    return INGOT_ERR_NO_DEVICE;
#endif
}

ingot_status_t ingot_loader_gpu_copy(ingot_loader_h l, loader_slot_t *slot)
{
#if INGOT_BUILD_CUDA
    cudaSetDevice(l->device); /* worker threads start on device 0 */
    ingot_status_t st = GPU_CALL("H2D start", cudaEventRecord, (cudaEvent_t)slot->h2d_start,
                                 (cudaStream_t)l->stream);
    if (st == INGOT_OK && atomic_load(&slot->ndevice) > 0) {
        /* peers' bytes fetched into the device slot: copy only what lies between them */
        uint64_t cursor = 0;
        for (uint32_t pos = 0; pos <= slot->nsamples && st == INGOT_OK; pos++) {
            int last = (pos == slot->nsamples);
            if (!last && !slot->on_device[pos]) {
                continue;
            }
            uint64_t end = last ? slot->bytes : slot->offsets[pos];
            if (end > cursor) {
                st = GPU_CALL("H2D batch copy", cudaMemcpyAsync, (char *)slot->device + cursor,
                              (char *)slot->host.ptr + cursor, end - cursor, cudaMemcpyHostToDevice,
                              (cudaStream_t)l->stream);
            }
            cursor = last ? end : slot->offsets[pos] + slot->lengths[pos];
        }
    } else if (st == INGOT_OK && slot->bytes > 0) {
        st = GPU_CALL("H2D batch copy", cudaMemcpyAsync, slot->device, slot->host.ptr, slot->bytes,
                      cudaMemcpyHostToDevice, (cudaStream_t)l->stream);
    }
    if (st == INGOT_OK) {
        st = GPU_CALL("H2D done", cudaEventRecord, (cudaEvent_t)slot->event,
                      (cudaStream_t)l->stream);
    }
    return st;
#else
    (void)l;
    (void)slot;
    return INGOT_ERR_UNSUPPORTED;
#endif
}

void ingot_loader_gpu_release(ingot_loader_h l, loader_slot_t *slot)
{
#if INGOT_BUILD_CUDA
    if (l->device == INGOT_DEVICE_HOST || slot->event == NULL) {
        return;
    }
    /* The slot is about to be refilled: its previous copy must be finished (it nearly always
     * is, since the trainer consumed the batch). Its duration feeds the H2D histogram. */
    if (cudaEventSynchronize((cudaEvent_t)slot->event) == cudaSuccess) {
        float ms = 0;
        if (cudaEventElapsedTime(&ms, (cudaEvent_t)slot->h2d_start, (cudaEvent_t)slot->event) ==
            cudaSuccess) {
            ingot_hist_record(&l->h_h2d, (uint64_t)(ms * 1e6));
        }
    }
    cudaGetLastError();
#else
    (void)l;
    (void)slot;
#endif
}

ingot_status_t ingot_loader_gpu_release_after(ingot_loader_h l, loader_slot_t *slot, void *stream)
{
#if INGOT_BUILD_CUDA
    if (l->device == INGOT_DEVICE_HOST || slot->consumed == NULL) {
        return INGOT_OK; /* host memory: the trainer's CPU work is done when it releases */
    }
    int prev;
    ingot_status_t st = ingot_cuda_device_push(l->device, &prev, "ingot_loader_release_after");
    if (st == INGOT_OK) {
        st = GPU_CALL("ingot_loader_release_after", cudaEventRecord, (cudaEvent_t)slot->consumed,
                      (cudaStream_t)stream);
    }
    ingot_cuda_device_pop(prev);
    if (st == INGOT_OK) {
        atomic_store(&slot->consumed_pending, 1);
    }
    return st;
#else
    (void)l;
    (void)slot;
    (void)stream;
    return INGOT_OK;
#endif
}

void ingot_loader_gpu_reuse(ingot_loader_h l, loader_slot_t *slot)
{
#if INGOT_BUILD_CUDA
    if (atomic_exchange(&slot->consumed_pending, 0)) {
        /* The trainer's kernels reading the batch it released may still run: the slot's
         * device memory is written (H2D copy, peers' fetches) only once they are done. */
        if (cudaEventSynchronize((cudaEvent_t)slot->consumed) != cudaSuccess) {
            ingot_warn("loader slot %u: waiting for the trainer's stream failed: %s", slot->id,
                       cudaGetErrorString(cudaGetLastError()));
        }
    }
#else
    (void)l;
    (void)slot;
#endif
}

ingot_status_t ingot_batch_stream_wait(const ingot_batch_t *batch, void *stream)
{
    if (batch == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_batch_stream_wait: NULL batch");
    }
    if (batch->device < 0 || batch->ready_event == NULL) {
        return INGOT_OK; /* host batch: ready when handed over */
    }
#if INGOT_BUILD_CUDA
    int prev;
    ingot_status_t st = ingot_cuda_device_push(batch->device, &prev, "ingot_batch_stream_wait");
    if (st == INGOT_OK) {
        st = GPU_CALL("ingot_batch_stream_wait", cudaStreamWaitEvent, (cudaStream_t)stream,
                      (cudaEvent_t)batch->ready_event, 0);
    }
    ingot_cuda_device_pop(prev);
    return st;
#else
    (void)stream;
    return ingot_fail(INGOT_ERR_UNSUPPORTED,
                      "ingot_batch_stream_wait: a batch on device %d, but this build of ingot has "
                      "no CUDA support",
                      batch->device);
#endif
}

void ingot_loader_gpu_cleanup(ingot_loader_h l)
{
#if INGOT_BUILD_CUDA
    if (l->stream == NULL) {
        return;
    }
    if (gpu_quiesce(l, "ingot_loader_destroy") != INGOT_OK) {
        ingot_warn("ingot_loader_destroy: freeing device memory with reductions in flight");
    }
    cudaStreamSynchronize((cudaStream_t)l->stream);
    for (uint32_t i = 0; i < l->depth; i++) {
        loader_slot_t *slot = &l->slots[i];
        if (slot->device) cudaFree(slot->device);
        if (slot->event) cudaEventDestroy((cudaEvent_t)slot->event);
        if (slot->h2d_start) cudaEventDestroy((cudaEvent_t)slot->h2d_start);
        if (slot->consumed) cudaEventDestroy((cudaEvent_t)slot->consumed);
    }
    cudaStreamDestroy((cudaStream_t)l->stream);
    cudaGetLastError();
#else
    (void)l;
#endif
}

/*
 * Where a GPU loader's fetched bytes should land, measured at start-up: a peer's window read
 * straight into GPU memory (ucp_get_nbx; UCX moves the bytes by memory type) against the same
 * bytes read into pinned host memory by the pair's protocol and copied to the GPU, which is what
 * the loader does otherwise. One-sided: the peer's progress thread answers on am.
 */
#include "transport/transport_impl.h"
#include "base/cuda.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/time.h"

#define CALIBRATE_PIECE  ((size_t)1 << 20) /* bytes per read, as the loader's larger runs */
#define CALIBRATE_ROUNDS 3                 /* timed rounds per destination, after one untimed */

/* Read @p bytes of @p peer's window into @p dst (GPU memory when @p device); *ns_p: how long. */
static ingot_status_t read_all(ingot_transport_window_t *w, int peer, char *dst, size_t bytes,
                               int device, uint64_t *ns_p)
{
    ingot_transport_t *t = w->t;
    ingot_transport_op_t op = {0};
    uint64_t t0 = ingot_time_ns();
    ingot_transport_op_begin(t, &op, peer, ingot_deadline_after(t->peer_timeout_ns), &op);
    ingot_status_t st = INGOT_OK;
    for (size_t at = 0; at < bytes && st == INGOT_OK; at += CALIBRATE_PIECE) {
        size_t n = bytes - at < CALIBRATE_PIECE ? bytes - at : CALIBRATE_PIECE;
        st = device ? ingot_transport_read_device(w, &op, at, dst + at, n)
                    : ingot_transport_read(w, &op, at, dst + at, n);
    }
    ingot_transport_op_end(t, &op);
    ingot_transport_op_wait(t, &op);
    *ns_p = ingot_time_ns() - t0;
    return st != INGOT_OK ? st : atomic_load(&op.status);
}

ingot_status_t ingot_transport_calibrate_gpu(ingot_transport_window_t *w, int peer, int cuda_device,
                                             size_t bytes, ingot_transport_gpu_calibration_t *out)
{
    void *gpu = NULL;
    ingot_mem_t host = {0};
    *out = (ingot_transport_gpu_calibration_t){.bytes = bytes};
    ingot_status_t st = ingot_cuda_malloc_on(cuda_device, &gpu, bytes, "fetch calibration");
    if (st == INGOT_OK) {
        st = ingot_mem_alloc(bytes, INGOT_MEM_F_PINNED | INGOT_MEM_F_PREFAULT, -1,
                             "fetch calibration", &host);
    }
    uint64_t best_device = UINT64_MAX, best_host = UINT64_MAX;
    for (int round = 0; round <= CALIBRATE_ROUNDS && st == INGOT_OK; round++) {
        uint64_t ns_device = 0, ns_read = 0;
        st = read_all(w, peer, gpu, bytes, 1, &ns_device);
        if (st == INGOT_OK) {
            st = read_all(w, peer, host.ptr, bytes, 0, &ns_read);
        }
        uint64_t t0 = ingot_time_ns();
        if (st == INGOT_OK) {
            st = ingot_cuda_copy(gpu, host.ptr, bytes, "fetch calibration H2D");
        }
        uint64_t ns_host = ns_read + (ingot_time_ns() - t0);
        if (st == INGOT_OK && round > 0) { /* round 0 maps the window and warms both paths */
            best_device = ns_device < best_device ? ns_device : best_device;
            best_host = ns_host < best_host ? ns_host : best_host;
        }
    }
    if (st == INGOT_OK) {
        out->device_gbps = (double)bytes / (double)(best_device ? best_device : 1);
        out->host_gbps = (double)bytes / (double)(best_host ? best_host : 1);
        ingot_debug("transport: fetch calibration from rank %d, %zu bytes: into GPU %d %.2f GB/s, "
                    "host then H2D %.2f GB/s",
                    peer, bytes, cuda_device, out->device_gbps, out->host_gbps);
    }
    ingot_mem_free(&host);
    ingot_cuda_free(gpu);
    return st;
}

/*
 * ingot-bench's emulated compute step: sleep (DLIO's way), spin on the CPU, or, with
 * --compute-gpu in a CUDA build, a busy kernel on a stream that first waits for the batch's
 * ready event, so the GPU is busy exactly as a training step would keep it.
 */
#include "bench/bench.h"
#include "common/report.h"

#include <math.h>
#include <stdio.h>
#include <time.h>
#if INGOT_BUILD_CUDA
#    include <cuda_runtime_api.h>
#    include <dlfcn.h>
#endif

#define COMPUTE_MS_PER_S   1e3
#define COMPUTE_NS_PER_MS  1e6
#define COMPUTE_SPIN_CHUNK 1000 /* iterations between clock reads */

#if INGOT_BUILD_CUDA
/* A kernel that spins for a number of SM clock cycles, as hand-written PTX so the build needs
 * no nvcc; the driver JIT-compiles it for the device. Loaded through the driver API, opened at
 * run time (libcuda.so.1 exists only where a driver does). */
static const char spin_ptx[] = ".version 7.0\n.target sm_50\n.address_size 64\n"
                               ".visible .entry ingot_spin(.param .u64 cycles)\n{\n"
                               "  .reg .pred %p<2>;\n  .reg .b64 %rd<6>;\n"
                               "  ld.param.u64 %rd1, [cycles];\n  mov.u64 %rd2, %clock64;\n"
                               "$L_spin:\n  mov.u64 %rd3, %clock64;\n  sub.s64 %rd4, %rd3, %rd2;\n"
                               "  setp.lt.u64 %p1, %rd4, %rd1;\n  @%p1 bra $L_spin;\n  ret;\n}\n";

#    define GPU_PROBE_CYCLES      50000000ull /* ~30 ms at 1.7 GHz */
#    define GPU_DEFAULT_CYCLES_MS 1.5e6       /* when the probe cannot be timed */

typedef int (*cu_load_t)(void **, const void *);
typedef int (*cu_func_t)(void **, void *, const char *);
typedef int (*cu_launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, void *, void **, void **);

typedef struct gpu_compute {
    void *kernel;
    cu_launch_t launch;
    cudaStream_t stream;
    double cycles_per_ms;
} gpu_compute_t;

static gpu_compute_t gpu;

static int gpu_spin(uint64_t cycles)
{
    void *args[] = {&cycles};
    return gpu.launch(gpu.kernel, 1, 1, 1, 1, 1, 1, 0, gpu.stream, args, NULL);
}

/* Load the kernel on @p device. */
static int gpu_load(int device)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL), *module;
    cu_load_t load = lib ? (cu_load_t)dlsym(lib, "cuModuleLoadData") : NULL;
    cu_func_t func = lib ? (cu_func_t)dlsym(lib, "cuModuleGetFunction") : NULL;
    gpu.launch = lib ? (cu_launch_t)dlsym(lib, "cuLaunchKernel") : NULL;
    if (!load || !func || !gpu.launch || cudaSetDevice(device) != cudaSuccess ||
        cudaFree(0) != cudaSuccess || load(&module, spin_ptx) != 0 ||
        func(&gpu.kernel, module, "ingot_spin") != 0 ||
        cudaStreamCreateWithFlags(&gpu.stream, cudaStreamNonBlocking) != cudaSuccess) {
        fprintf(stderr, "ingot-bench: --compute-gpu: cannot load the busy kernel on device %d\n",
                device);
        return -1;
    }
    return 0;
}

/* Measure the SM clock with events (cycles per ms). */
static int gpu_clock(void)
{
    cudaEvent_t e0, e1;
    float ms = 0;
    if (cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) {
        fprintf(stderr, "ingot-bench: --compute-gpu: cannot create CUDA events\n");
        return -1;
    }
    cudaEventRecord(e0, gpu.stream);
    gpu_spin(GPU_PROBE_CYCLES);
    cudaEventRecord(e1, gpu.stream);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
    gpu.cycles_per_ms = ms > 0 ? (double)GPU_PROBE_CYCLES / ms : GPU_DEFAULT_CYCLES_MS;
    return 0;
}

/* One step's compute on the GPU: wait for the batch's copy, spin, wait for the kernel. */
static double gpu_compute_step(const bench_args_t *a, const ingot_batch_t *b)
{
    double t0 = report_now();
    if (b->ready_event != NULL) {
        cudaStreamWaitEvent(gpu.stream, (cudaEvent_t)b->ready_event, 0);
    }
    gpu_spin((uint64_t)(a->compute_ms * gpu.cycles_per_ms));
    cudaStreamSynchronize(gpu.stream);
    return report_now() - t0;
}
#endif

ingot_status_t bench_compute_init(const bench_args_t *a, int device)
{
    if (!a->gpu) {
        return INGOT_OK;
    }
#if INGOT_BUILD_CUDA
    if (device < 0 || gpu_load(device) != 0 || gpu_clock() != 0) {
        fprintf(stderr, "ingot-bench: --compute-gpu needs a usable GPU (placement: %d)\n", device);
        return INGOT_ERR_NO_DEVICE;
    }
    return INGOT_OK;
#else
    (void)device;
    fprintf(stderr, "ingot-bench: --compute-gpu: this build has no CUDA support\n");
    return INGOT_ERR_UNSUPPORTED;
#endif
}

/* Sleep (DLIO) or spin for the compute time; returns the time it took. */
static double cpu_compute_step(const bench_args_t *a)
{
    double t0 = report_now(), end = t0 + a->compute_ms / COMPUTE_MS_PER_S;
    if (a->compute_ms <= 0) {
        return 0;
    }
    if (a->spin) {
        volatile uint64_t x = 0;
        while (report_now() < end) {
            for (int i = 0; i < COMPUTE_SPIN_CHUNK; i++) x += (uint64_t)i;
        }
    } else {
        struct timespec ts = {
            .tv_sec = (time_t)(a->compute_ms / COMPUTE_MS_PER_S),
            .tv_nsec = (long)(fmod(a->compute_ms, COMPUTE_MS_PER_S) * COMPUTE_NS_PER_MS)};
        nanosleep(&ts, NULL);
    }
    return report_now() - t0;
}

double bench_compute(const bench_args_t *a, const ingot_batch_t *b)
{
#if INGOT_BUILD_CUDA
    if (a->gpu) {
        return gpu_compute_step(a, b);
    }
#endif
    (void)b;
    return cpu_compute_step(a);
}

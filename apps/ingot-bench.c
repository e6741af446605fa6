/*
 * ingot-bench: run the loader with an emulated compute step per batch, as DLIO / MLPerf Storage
 * do, and report accelerator utilisation (AU = compute time / wall time, first step excluded),
 * throughput, data stall and batch latency per rank and aggregated. --generate makes a
 * synthetic dataset first (rank 0 writes, the others wait), so runs need no other data.
 * Output: a header block (versions, config, rank -> device), a table with a units row, and
 * with --json one JSON object (stdout, or a file with --json=FILE). Exits 1 when the aggregate
 * AU is below --min-au.
 */
#include <ingot/ingot.h>
#include <ingot/loader.h>
#include <ingot/shard.h>
#include "shard/pack.h"
#include "base/config.h"
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#if INGOT_BUILD_CUDA
#  include <cuda_runtime_api.h>
#  include <dlfcn.h>
#endif

#define BENCH_KEY_MAX 32
#define NS_PER_MS     1000000.0
#define MIB           (1024.0 * 1024.0)

typedef struct bench_args {
    const char *manifest, *generate, *json, *verify;
    uint64_t    samples, sample_size, shard_size, batch, epochs, steps, seed;
    double      jitter, compute_ms, min_au;
    int         spin, gpu, zstd, compressible, depth, readers, workers, device, progress;
} bench_args_t;

typedef struct bench_result {
    double   wall_s, compute_s, stall_s, au;
    uint64_t steps, samples, bytes;
    uint64_t samples0, bytes0; /* of the first step, left out of the rates */
    ingot_loader_stats_t st;
} bench_result_t;

static int rank, world;

static void usage(FILE *out)
{
    fprintf(out,
        "usage: ingot-bench (--manifest FILE | --generate DIR) [options]\n"
        "  --generate DIR       make a synthetic dataset in DIR (reused when it exists)\n"
        "    --samples N          samples (default 4096)\n"
        "    --sample-size SIZE   bytes per sample, e.g. 110KiB, 2MiB, 140MiB (default 110KiB)\n"
        "    --jitter F           sizes uniform in SIZE*(1-F)..SIZE*(1+F) (default 0)\n"
        "    --shard-size SIZE    target shard size (default 256MiB)\n"
        "    --zstd LEVEL         compress members (use --compressible data)\n"
        "    --compressible       text-like data instead of random bytes\n"
        "  --batch N            global batch (default 64 * ranks)\n"
        "  --epochs N           epochs (default 1)\n"
        "  --steps N            stop after N steps (default: all)\n"
        "  --seed N             shuffle seed (default 1)\n"
        "  --depth N            prefetch depth (default 4)\n"
        "  --readers N, --workers N   loader threads (default: INGOT_READERS/INGOT_WORKERS)\n"
        "  --verify fail|skip|off     hash policy (default: INGOT_VERIFY)\n"
        "  --device host|placement|N  where batches go (default placement)\n"
        "  --compute-ms MS      emulated compute per step: sleep (DLIO's way)\n"
        "  --compute-spin       burn the CPU for the compute time instead of sleeping\n"
        "  --compute-gpu        run a GPU busy kernel for the compute time, on a stream that\n"
        "                       waits for each batch's ready event (GPU batches only)\n"
        "  --min-au F           exit 1 when the aggregate AU is below F\n"
        "  --json[=FILE]        one JSON object on stdout (rank 0) or in FILE\n"
        "  --no-progress        no progress bar\n");
}

/* Sizes take the syntax of every INGOT_* size (110KiB, 2MiB, 1.5GiB, 4k; KB = 1000). */
static uint64_t parse_size(const char *opt, const char *s)
{
    static const ingot_config_field_t size_field = {"(bench size)", "0", "", 0,
                                                    INGOT_CONFIG_SIZE, 0, 0, 0, NULL, NULL};
    uint64_t v;
    char err[512];
    if (ingot_config_parse(&size_field, s, &v, err, sizeof(err)) != INGOT_OK) {
        fprintf(stderr, "ingot-bench: %s '%s' is not a size (e.g. 110KiB, 2MiB, 1.5GiB)\n", opt, s);
        exit(2);
    }
    return v;
}

static uint64_t parse_u64(const char *opt, const char *s)
{
    char *end;
    errno = 0;
    /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): s is a required optarg */
    unsigned long long v = strtoull(s, &end, 10);
    if (*s == '-' || end == s || *end != '\0' || errno) {
        fprintf(stderr, "ingot-bench: %s '%s' is not a non-negative integer\n", opt, s);
        exit(2);
    }
    return v;
}

static double parse_double(const char *opt, const char *s)
{
    char *end;
    /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): s is a required optarg */
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || v < 0 || isnan(v)) {
        fprintf(stderr, "ingot-bench: %s '%s' is not a non-negative number\n", opt, s);
        exit(2);
    }
    return v;
}

static void parse_args(int argc, char **argv, bench_args_t *a)
{
    enum { O_MANIFEST = 256, O_GENERATE, O_SAMPLES, O_SIZE, O_JITTER, O_SHARD, O_ZSTD, O_COMP,
           O_BATCH, O_EPOCHS, O_STEPS, O_SEED, O_DEPTH, O_READERS, O_WORKERS, O_VERIFY,
           O_DEVICE, O_COMPUTE, O_SPIN, O_GPU, O_MINAU, O_JSON, O_NOPROG };
    static const struct option opts[] = {
        {"manifest", 1, 0, O_MANIFEST}, {"generate", 1, 0, O_GENERATE},
        {"samples", 1, 0, O_SAMPLES}, {"sample-size", 1, 0, O_SIZE}, {"jitter", 1, 0, O_JITTER},
        {"shard-size", 1, 0, O_SHARD}, {"zstd", 1, 0, O_ZSTD}, {"compressible", 0, 0, O_COMP},
        {"batch", 1, 0, O_BATCH}, {"epochs", 1, 0, O_EPOCHS}, {"steps", 1, 0, O_STEPS},
        {"seed", 1, 0, O_SEED}, {"depth", 1, 0, O_DEPTH}, {"readers", 1, 0, O_READERS},
        {"workers", 1, 0, O_WORKERS}, {"verify", 1, 0, O_VERIFY}, {"device", 1, 0, O_DEVICE},
        {"compute-ms", 1, 0, O_COMPUTE}, {"compute-spin", 0, 0, O_SPIN},
        {"compute-gpu", 0, 0, O_GPU},
        {"min-au", 1, 0, O_MINAU}, {"json", 2, 0, O_JSON}, {"no-progress", 0, 0, O_NOPROG},
        {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
    *a = (bench_args_t){.samples = 4096, .sample_size = 110 << 10, .shard_size = 256ull << 20,
                        .epochs = 1, .seed = 1, .depth = 4, .device = INGOT_DEVICE_PLACEMENT,
                        .progress = 1};
    int o;
    while ((o = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
        switch (o) {
        case O_MANIFEST: a->manifest = optarg; break;
        case O_GENERATE: a->generate = optarg; break;
        case O_SAMPLES:  a->samples = parse_u64("--samples", optarg); break;
        case O_SIZE:     a->sample_size = parse_size("--sample-size", optarg); break;
        case O_JITTER:   a->jitter = parse_double("--jitter", optarg); break;
        case O_SHARD:    a->shard_size = parse_size("--shard-size", optarg); break;
        case O_ZSTD:     a->zstd = (int)parse_u64("--zstd", optarg); break;
        case O_COMP:     a->compressible = 1; break;
        case O_BATCH:    a->batch = parse_u64("--batch", optarg); break;
        case O_EPOCHS:   a->epochs = parse_u64("--epochs", optarg); break;
        case O_STEPS:    a->steps = parse_u64("--steps", optarg); break;
        case O_SEED:     a->seed = parse_u64("--seed", optarg); break;
        case O_DEPTH:    a->depth = (int)parse_u64("--depth", optarg); break;
        case O_READERS:  a->readers = (int)parse_u64("--readers", optarg); break;
        case O_WORKERS:  a->workers = (int)parse_u64("--workers", optarg); break;
        case O_VERIFY:   a->verify = optarg; break;
        case O_DEVICE:
            /* NOLINTNEXTLINE(clang-analyzer-core.NonNullParamChecker): required arg */
            a->device = !strcmp(optarg, "host") ? INGOT_DEVICE_HOST
                        : !strcmp(optarg, "placement") ? INGOT_DEVICE_PLACEMENT
                        : (int)parse_u64("--device", optarg);
            break;
        case O_COMPUTE:  a->compute_ms = parse_double("--compute-ms", optarg); break;
        case O_SPIN:     a->spin = 1; break;
        case O_GPU:      a->gpu = 1; break;
        case O_MINAU:    a->min_au = parse_double("--min-au", optarg); break;
        case O_JSON:     a->json = optarg ? optarg : "-"; break;
        case O_NOPROG:   a->progress = 0; break;
        case 'h':        usage(stdout); exit(0);
        default:         usage(stderr); exit(2);
        }
    }
    if (optind != argc || (a->manifest == NULL) == (a->generate == NULL) || a->jitter >= 1 ||
        a->samples == 0 || a->sample_size == 0 || a->epochs == 0 ||
        (a->verify && strcmp(a->verify, "fail") && strcmp(a->verify, "skip") &&
         strcmp(a->verify, "off"))) {
        fprintf(stderr, "ingot-bench: give exactly one of --manifest or --generate; --jitter "
                "< 1; --samples, --sample-size, --epochs > 0; --verify fail|skip|off\n");
        usage(stderr);
        exit(2);
    }
}

/* ---------------------------------------------------------------- dataset generation */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void fill_sample(uint8_t *buf, size_t len, uint64_t index, int compressible)
{
    static const char *const words[] = {"ingot ", "batch ", "shard ", "tensor ", "gradient ",
                                        "epoch ", "sample ", "rank "};
    uint64_t s = index * 0x2545f4914f6cdd1dull + 1;
    size_t i = 0;
    if (compressible) {
        while (i < len) {
            const char *w = words[splitmix(&s) % 8];
            for (; *w && i < len; w++) buf[i++] = (uint8_t)*w;
        }
        return;
    }
    for (; i + 8 <= len; i += 8) {
        uint64_t v = splitmix(&s);
        memcpy(buf + i, &v, 8);
    }
    for (uint64_t v = splitmix(&s); i < len; i++, v >>= 8) buf[i] = (uint8_t)v;
}

static size_t sample_len(const bench_args_t *a, uint64_t index)
{
    if (a->jitter == 0) {
        return (size_t)a->sample_size;
    }
    uint64_t s = index ^ 0xabcdefull;
    double u = (double)(splitmix(&s) >> 11) / 9007199254740992.0; /* [0, 1) */
    return (size_t)((double)a->sample_size * (1.0 - a->jitter + 2.0 * a->jitter * u)) + 1;
}

static int generate(const bench_args_t *a, char *manifest, size_t len)
{
    char stamp_path[4096], stamp[512], old[512] = "";
    snprintf(manifest, len, "%s/" PACK_MANIFEST_NAME, a->generate);
    snprintf(stamp_path, sizeof(stamp_path), "%s/ingot-bench.params", a->generate);
    snprintf(stamp, sizeof(stamp), "samples=%" PRIu64 " size=%" PRIu64 " jitter=%g shard=%"
             PRIu64 " zstd=%d compressible=%d\n", a->samples, a->sample_size, a->jitter,
             a->shard_size, a->zstd, a->compressible);
    FILE *f = fopen(stamp_path, "r");
    if (f != NULL) {
        size_t n = fread(old, 1, sizeof(old) - 1, f);
        old[n] = '\0';
        fclose(f);
    }
    if (strcmp(old, stamp) == 0 && access(manifest, R_OK) == 0) {
        return 0; /* the same dataset is already there */
    }
    pack_params_t prm = {.out_dir = a->generate, .shard_size = a->shard_size,
                         .zstd_level = a->zstd, .progress = a->progress && isatty(2)};
    packer_t *p;
    size_t cap = (size_t)(a->sample_size * (1 + a->jitter)) + 2;
    uint8_t *buf = malloc(cap);
    if (buf == NULL || ingot_pack_create(&prm, &p) != INGOT_OK) {
        fprintf(stderr, "ingot-bench: cannot generate into %s\n", a->generate);
        free(buf);
        return -1;
    }
    int rc = 0;
    for (uint64_t i = 0; i < a->samples && rc == 0; i++) {
        char key[BENCH_KEY_MAX];
        size_t n = sample_len(a, i);
        snprintf(key, sizeof(key), "%08" PRIu64, i);
        fill_sample(buf, n, i, a->compressible);
        rc = (ingot_pack_add(p, key, "bin", buf, n) == INGOT_OK) ? 0 : -1;
    }
    uint64_t samples, shards;
    if (rc == 0 && ingot_pack_finish(p, &samples, &shards) != INGOT_OK) {
        rc = -1;
    }
    ingot_pack_destroy(p);
    free(buf);
    if (rc == 0 && (f = fopen(stamp_path, "w")) != NULL) {
        fputs(stamp, f);
        fclose(f);
    }
    return rc;
}

/* ---------------------------------------------------------------- the run */

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---------------------------------------------------------------- GPU busy kernel */

#if INGOT_BUILD_CUDA
/* A kernel that spins for a number of SM clock cycles, as hand-written PTX so the build needs
 * no nvcc; the driver JIT-compiles it for the device. Loaded through the driver API, opened at
 * run time (libcuda.so.1 exists only where a driver does). */
static const char spin_ptx[] =
    ".version 7.0\n.target sm_50\n.address_size 64\n"
    ".visible .entry ingot_spin(.param .u64 cycles)\n{\n"
    "  .reg .pred %p<2>;\n  .reg .b64 %rd<6>;\n"
    "  ld.param.u64 %rd1, [cycles];\n  mov.u64 %rd2, %clock64;\n"
    "$L_spin:\n  mov.u64 %rd3, %clock64;\n  sub.s64 %rd4, %rd3, %rd2;\n"
    "  setp.lt.u64 %p1, %rd4, %rd1;\n  @%p1 bra $L_spin;\n  ret;\n}\n";

typedef int (*cu_load_t)(void **, const void *);
typedef int (*cu_func_t)(void **, void *, const char *);
typedef int (*cu_launch_t)(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           unsigned, void *, void **, void **);

typedef struct gpu_compute {
    void        *kernel;
    cu_launch_t  launch;
    cudaStream_t stream;
    double       cycles_per_ms;
} gpu_compute_t;

static gpu_compute_t gpu;

static int gpu_spin(uint64_t cycles)
{
    void *args[] = {&cycles};
    return gpu.launch(gpu.kernel, 1, 1, 1, 1, 1, 1, 0, gpu.stream, args, NULL);
}

/* Load the kernel and measure the SM clock with events (cycles per ms). */
static int gpu_compute_init(int device)
{
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL), *module;
    cu_load_t load = lib ? (cu_load_t)dlsym(lib, "cuModuleLoadData") : NULL;
    cu_func_t func = lib ? (cu_func_t)dlsym(lib, "cuModuleGetFunction") : NULL;
    gpu.launch = lib ? (cu_launch_t)dlsym(lib, "cuLaunchKernel") : NULL;
    cudaEvent_t e0, e1;
    float ms = 0;
    if (!load || !func || !gpu.launch || cudaSetDevice(device) != cudaSuccess ||
        cudaFree(0) != cudaSuccess || load(&module, spin_ptx) != 0 ||
        func(&gpu.kernel, module, "ingot_spin") != 0 ||
        cudaStreamCreateWithFlags(&gpu.stream, cudaStreamNonBlocking) != cudaSuccess ||
        cudaEventCreate(&e0) != cudaSuccess || cudaEventCreate(&e1) != cudaSuccess) {
        fprintf(stderr, "ingot-bench: --compute-gpu: cannot load the busy kernel on device %d\n",
                device);
        return -1;
    }
    const uint64_t probe = 50000000; /* ~30 ms at 1.7 GHz */
    cudaEventRecord(e0, gpu.stream);
    gpu_spin(probe);
    cudaEventRecord(e1, gpu.stream);
    cudaEventSynchronize(e1);
    cudaEventElapsedTime(&ms, e0, e1);
    gpu.cycles_per_ms = ms > 0 ? (double)probe / ms : 1.5e6;
    return 0;
}

/* One step's compute on the GPU: wait for the batch's copy, spin, wait for the kernel. */
static double gpu_compute_step(const bench_args_t *a, const ingot_batch_t *b, double (*now)(void))
{
    double t0 = now();
    if (b->ready_event != NULL) {
        cudaStreamWaitEvent(gpu.stream, (cudaEvent_t)b->ready_event, 0);
    }
    gpu_spin((uint64_t)(a->compute_ms * gpu.cycles_per_ms));
    cudaStreamSynchronize(gpu.stream);
    return now() - t0;
}
#endif

/* Emulated compute: sleep (DLIO) or spin; returns the time it took. */
static double compute(const bench_args_t *a)
{
    double t0 = now_s(), end = t0 + a->compute_ms / 1e3;
    if (a->compute_ms <= 0) {
        return 0;
    }
    if (a->spin) {
        volatile uint64_t x = 0;
        while (now_s() < end) {
            for (int i = 0; i < 1000; i++) x += (uint64_t)i;
        }
    } else {
        struct timespec ts = {.tv_sec = (time_t)(a->compute_ms / 1e3),
                              .tv_nsec = (long)(fmod(a->compute_ms, 1e3) * 1e6)};
        nanosleep(&ts, NULL);
    }
    return now_s() - t0;
}

static void progress(uint64_t step, uint64_t total, double t0)
{
    int width = 40, done = total ? (int)(width * step / total) : width;
    fprintf(stderr, "\r[%.*s%*s] %" PRIu64 "/%" PRIu64 " steps %.1fs", done,
            "########################################", width - done, "", step, total,
            now_s() - t0);
}

static ingot_status_t run(ingot_ctx_h ctx, const bench_args_t *a, const char *manifest,
                          bench_result_t *r)
{
    ingot_loader_params_t p = {
        .field_mask = INGOT_LOADER_PARAM_FIELD_MANIFEST | INGOT_LOADER_PARAM_FIELD_BATCH |
                      INGOT_LOADER_PARAM_FIELD_SEED | INGOT_LOADER_PARAM_FIELD_EPOCHS |
                      INGOT_LOADER_PARAM_FIELD_DEPTH | INGOT_LOADER_PARAM_FIELD_DEVICE |
                      INGOT_LOADER_PARAM_FIELD_THREADS,
        .manifest_path = manifest, .global_batch = a->batch ? a->batch : (uint64_t)64 * (uint64_t)world,
        .seed = a->seed, .epochs = a->epochs, .depth = (uint32_t)a->depth, .device = a->device,
        .readers = (uint32_t)a->readers, .workers = (uint32_t)a->workers};
    if (a->verify != NULL) {
        p.field_mask |= INGOT_LOADER_PARAM_FIELD_VERIFY;
        p.verify = !strcmp(a->verify, "fail") ? INGOT_VERIFY_FAIL
                   : !strcmp(a->verify, "skip") ? INGOT_VERIFY_SKIP : INGOT_VERIFY_OFF;
        p.skip_budget = 100;
    }
    ingot_loader_h l;
    ingot_status_t st = ingot_loader_create(ctx, &p, &l);
    if (st != INGOT_OK) {
        return st;
    }
    if (a->gpu) {
#if INGOT_BUILD_CUDA
        ingot_placement_t pl;
        ingot_placement_get(ctx, &pl);
        int dev = a->device >= 0 ? a->device : pl.cuda_device;
        if (dev < 0 || gpu_compute_init(dev) != 0) {
            fprintf(stderr, "ingot-bench: --compute-gpu needs a usable GPU (placement: %d)\n",
                    pl.cuda_device);
            ingot_loader_destroy(l);
            return INGOT_ERR_NO_DEVICE;
        }
#else
        fprintf(stderr, "ingot-bench: --compute-gpu: this build has no CUDA support\n");
        ingot_loader_destroy(l);
        return INGOT_ERR_UNSUPPORTED;
#endif
    }
    memset(r, 0, sizeof(*r));
    double t_start = now_s(), t_first = 0;
    int bar = a->progress && rank == 0 && isatty(2);
    ingot_batch_t b;
    while ((a->steps == 0 || r->steps < a->steps) && (st = ingot_loader_next(l, &b)) == INGOT_OK) {
        double c;
#if INGOT_BUILD_CUDA
        c = a->gpu ? gpu_compute_step(a, &b, now_s) : compute(a);
#else
        c = compute(a);
#endif
        r->compute_s += (r->steps > 0) ? c : 0;
        r->samples += b.count;
        r->bytes += b.bytes;
        st = ingot_loader_release(l, &b);
        if (st != INGOT_OK) {
            break;
        }
        if (r->steps == 0) {
            /* AU and rates exclude the first step (pipeline fill): its wait, compute and data. */
            t_first = now_s();
            r->samples0 = b.count;
            r->bytes0 = b.bytes;
        }
        if (++r->steps % 16 == 0 && bar) {
            progress(r->steps, a->steps, t_start);
        }
    }
    if (bar) {
        fprintf(stderr, "\n");
    }
    double t_end = now_s();
    ingot_loader_stats(l, &r->st);
    ingot_loader_destroy(l);
    if (st != INGOT_OK && st != INGOT_END_OF_DATA) {
        return st;
    }
    r->wall_s = t_end - (t_first ? t_first : t_end);
    r->stall_s = (double)r->st.stall_ns / 1e9;
    r->au = r->wall_s > 0 ? r->compute_s / r->wall_s : 0;
    return INGOT_OK;
}

/* ---------------------------------------------------------------- report */

enum { M_WALL, M_COMPUTE, M_STALL, M_AU, M_STEPS, M_SAMPLES, M_BYTES, M_SPS, M_MIBS,
       M_STALL_P50, M_STALL_P99, M_READ_P50, M_READ_P99, M_VERIFY_P50, M_DECODE_P50,
       M_H2D_P50, M_FAULTS, M_BYTES_READ, M_REQUESTS, M_FIRST, M_COUNT };

static const char *const metric_names[M_COUNT] = {
    "wall_s", "compute_s", "stall_s", "au", "steps", "samples", "bytes", "samples_per_s",
    "mib_per_s", "stall_p50_ms", "stall_p99_ms", "read_p50_ms", "read_p99_ms",
    "verify_p50_ms", "decode_p50_ms", "h2d_p50_ms", "minor_faults", "bytes_read",
    "read_requests", "first_step_ms"};

static void metrics(const bench_result_t *r, double *m)
{
    /* r is filled: main() gets here only when run() succeeded on every rank (MPI_Allreduce).
     * NOLINTNEXTLINE(clang-analyzer-core.UndefinedBinaryOperatorResult) */
    double wall = r->wall_s > 0 ? r->wall_s : 1e-9;
    m[M_WALL] = r->wall_s;
    m[M_COMPUTE] = r->compute_s;
    m[M_STALL] = r->stall_s;
    m[M_AU] = r->au;
    m[M_STEPS] = (double)r->steps;
    m[M_SAMPLES] = (double)r->samples;
    m[M_BYTES] = (double)r->bytes;
    m[M_SPS] = (double)(r->samples - r->samples0) / wall;
    m[M_MIBS] = (double)(r->bytes - r->bytes0) / MIB / wall;
    m[M_STALL_P50] = (double)r->st.stall_p50_ns / NS_PER_MS;
    m[M_STALL_P99] = (double)r->st.stall_p99_ns / NS_PER_MS;
    m[M_READ_P50] = (double)r->st.read_p50_ns / NS_PER_MS;
    m[M_READ_P99] = (double)r->st.read_p99_ns / NS_PER_MS;
    m[M_VERIFY_P50] = (double)r->st.verify_p50_ns / NS_PER_MS;
    m[M_DECODE_P50] = (double)r->st.decode_p50_ns / NS_PER_MS;
    m[M_H2D_P50] = (double)r->st.h2d_p50_ns / NS_PER_MS;
    m[M_FAULTS] = (double)r->st.minor_faults;
    m[M_BYTES_READ] = (double)r->st.bytes_read;
    m[M_REQUESTS] = (double)r->st.read_requests;
    m[M_FIRST] = (double)r->st.stall_first_ns / NS_PER_MS;
}

typedef struct rank_info {
    char host[64];
    char device[32];
} rank_info_t;

static void aggregate(const double *all, double *agg)
{
    memset(agg, 0, sizeof(double) * M_COUNT);
    for (int r = 0; r < world; r++) {
        const double *m = all + (size_t)r * M_COUNT;
        for (int k = 0; k < M_COUNT; k++) {
            agg[k] += m[k];
        }
    }
    /* Rates and counts add up; times and AU are means over ranks (AU min reported apart). */
    static const int mean[] = {M_WALL, M_COMPUTE, M_STALL, M_AU, M_STALL_P50, M_STALL_P99,
                               M_READ_P50, M_READ_P99, M_VERIFY_P50, M_DECODE_P50, M_H2D_P50,
                               M_FIRST};
    for (size_t i = 0; i < sizeof(mean) / sizeof(mean[0]); i++) {
        agg[mean[i]] /= world;
    }
    agg[M_STEPS] = all[M_STEPS]; /* every rank runs the same steps */
    agg[M_FAULTS] /= world;
}

static double au_min_of(const double *all)
{
    double v = 1e9;
    for (int r = 0; r < world; r++) {
        v = all[(size_t)r * M_COUNT + M_AU] < v ? all[(size_t)r * M_COUNT + M_AU] : v;
    }
    return v;
}

static void print_header(const bench_args_t *a, const char *manifest, const rank_info_t *info,
                         const ingot_loader_stats_t *st)
{
    char v[128];
    printf("# ingot-bench %s, %d rank(s)\n", ingot_version_string(), world);
    printf("# manifest %s\n", manifest);
    printf("# batch %" PRIu64 " global, depth %d, readers %u, workers %u, epochs %" PRIu64
           ", compute %.3g ms (%s)\n", a->batch ? a->batch : (uint64_t)64 * (uint64_t)world, a->depth,
           st->readers, st->workers, a->epochs, a->compute_ms, a->gpu ? "gpu" : a->spin ? "spin" : "sleep");
    static const char *const vars[] = {"INGOT_STORAGE_EMULATE", "INGOT_VERIFY", "INGOT_DIRECT_IO",
                                       "INGOT_COALESCE_GAP", "INGOT_BIND"};
    printf("#");
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        if (ingot_config_get(vars[i], v, sizeof(v)) == INGOT_OK) {
            printf(" %s=%s", vars[i], v);
        }
    }
    printf("\n# rank -> host, device:");
    for (int r = 0; r < world; r++) {
        printf(" %d->%s:%s", r, info[r].host, info[r].device);
    }
    printf("\n");
}

static void print_row(const char *who, const double *m)
{
    printf("%6s %9.0f %9.1f %7.2f %6.3f %8.2f %8.2f %8.2f %8.2f %9.1f %7.0f\n", who, m[M_SPS],
           m[M_MIBS], m[M_WALL] > 0 ? 100.0 * m[M_STALL] / m[M_WALL] : 0, m[M_AU],
           m[M_STALL_P50], m[M_STALL_P99], m[M_READ_P50], m[M_READ_P99], m[M_FIRST],
           m[M_STEPS]);
}

static void print_table(const double *all, const double *agg)
{
    printf("%6s %9s %9s %7s %6s %8s %8s %8s %8s %9s %7s\n", "rank", "samples", "rate",
           "stall", "AU", "stall", "stall", "read", "read", "1st step", "steps");
    printf("%6s %9s %9s %7s %6s %8s %8s %8s %8s %9s %7s\n", "", "/s", "MiB/s", "%", "", "p50 ms",
           "p99 ms", "p50 ms", "p99 ms", "ms", "");
    for (int r = 0; r < world; r++) {
        char who[16];
        snprintf(who, sizeof(who), "%d", r);
        print_row(who, all + (size_t)r * M_COUNT);
    }
    print_row("all", agg);
    printf("# AU min over ranks %.4f; rates summed, times and AU averaged over ranks\n",
           au_min_of(all));
}

static void json_metrics(FILE *f, const double *m)
{
    for (int k = 0; k < M_COUNT; k++) {
        fprintf(f, "%s\"%s\":%.6g", k ? "," : "", metric_names[k], m[k]);
    }
}

static int write_json(const bench_args_t *a, const char *manifest, const double *all,
                      const double *agg, const rank_info_t *info)
{
    FILE *f = strcmp(a->json, "-") == 0 ? stdout : fopen(a->json, "w");
    if (f == NULL) {
        fprintf(stderr, "ingot-bench: cannot write %s: %s\n", a->json, strerror(errno));
        return -1;
    }
    fprintf(f, "{\"tool\":\"ingot-bench\",\"version\":\"%s\",\"ranks\":%d,\"args\":{"
            "\"manifest\":\"%s\",\"batch\":%" PRIu64 ",\"depth\":%d,\"epochs\":%" PRIu64
            ",\"steps\":%" PRIu64 ",\"compute_ms\":%g,\"compute_spin\":%d,\"readers\":%d,"
            "\"workers\":%d,\"samples\":%" PRIu64 ",\"sample_size\":%" PRIu64 ",\"zstd\":%d},"
            "\"env\":{", ingot_version_string(), world, manifest,
            a->batch ? a->batch : (uint64_t)64 * (uint64_t)world, a->depth, a->epochs, a->steps,
            a->compute_ms, a->spin, a->readers, a->workers, a->samples, a->sample_size, a->zstd);
    extern char **environ;
    int first = 1;
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "INGOT_", 6) == 0 || strncmp(*e, "UCX_", 4) == 0) {
            const char *eq = strchr(*e, '=');
            fprintf(f, "%s\"%.*s\":\"%s\"", first ? "" : ",", (int)(eq - *e), *e, eq + 1);
            first = 0;
        }
    }
    fprintf(f, "},\"per_rank\":[");
    for (int r = 0; r < world; r++) {
        fprintf(f, "%s{\"rank\":%d,\"host\":\"%s\",\"device\":\"%s\",", r ? "," : "", r,
                info[r].host, info[r].device);
        json_metrics(f, all + (size_t)r * M_COUNT);
        fprintf(f, "}");
    }
    fprintf(f, "],\"aggregate\":{");
    json_metrics(f, agg);
    fprintf(f, ",\"au_min\":%.6g}}\n", au_min_of(all));
    return (f == stdout || fclose(f) == 0) ? 0 : -1;
}

static void rank_info(ingot_ctx_h ctx, rank_info_t *mine)
{
    ingot_placement_t pl;
    memset(mine, 0, sizeof(*mine));
    if (ingot_placement_get(ctx, &pl) == INGOT_OK) {
        snprintf(mine->host, sizeof(mine->host), "%.63s", pl.hostname);
        if (pl.cuda_device >= 0) {
            snprintf(mine->device, sizeof(mine->device), "cuda%d", pl.cuda_device);
        } else {
            snprintf(mine->device, sizeof(mine->device), "host");
        }
    }
}

int main(int argc, char **argv)
{
    bench_args_t a;
    parse_args(argc, argv, &a);
    ingot_ctx_h ctx;
    if (ingot_init(NULL, &ctx) != INGOT_OK) {
        return 1;
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    char manifest[4096];
    int gen_rc = 0;
    if (a.generate != NULL) {
        if (rank == 0) {
            gen_rc = generate(&a, manifest, sizeof(manifest));
        }
        snprintf(manifest, sizeof(manifest), "%s/" PACK_MANIFEST_NAME, a.generate);
        MPI_Bcast(&gen_rc, 1, MPI_INT, 0, MPI_COMM_WORLD); /* the others wait for rank 0 */
    } else {
        snprintf(manifest, sizeof(manifest), "%s", a.manifest);
    }
    bench_result_t r;
    ingot_status_t st = gen_rc ? INGOT_ERR_IO : run(ctx, &a, manifest, &r);
    int ok = (st == INGOT_OK), all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (!all_ok) {
        if (st != INGOT_OK) {
            fprintf(stderr, "ingot-bench: rank %d: %s\n", rank, ingot_status_string(st));
        }
        ingot_finalize(ctx);
        return 1;
    }
    double mine[M_COUNT], *all = malloc(sizeof(double) * M_COUNT * (size_t)world), agg[M_COUNT];
    rank_info_t me, *info = malloc(sizeof(rank_info_t) * (size_t)world);
    metrics(&r, mine);
    rank_info(ctx, &me);
    MPI_Gather(mine, M_COUNT, MPI_DOUBLE, all, M_COUNT, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    MPI_Gather(&me, sizeof(me), MPI_BYTE, info, sizeof(me), MPI_BYTE, 0, MPI_COMM_WORLD);
    int rc = 0;
    if (rank == 0) {
        aggregate(all, agg);
        int json_stdout = a.json && strcmp(a.json, "-") == 0;
        if (!json_stdout) {
            print_header(&a, manifest, info, &r.st);
            print_table(all, agg);
        }
        if (a.json && write_json(&a, manifest, all, agg, info) != 0) {
            rc = 1;
        }
        if (a.min_au > 0 && agg[M_AU] < a.min_au) {
            fprintf(stderr, "ingot-bench: aggregate AU %.4f is below --min-au %.4f\n", agg[M_AU],
                    a.min_au);
            rc = 1;
        }
    }
    MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(all);
    free(info);
    ingot_finalize(ctx);
    return rc;
}

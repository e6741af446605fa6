/*
 * GPU-path tests (ctest -L gpu), one mode per test: each exits 77 with the reason where this
 * process sees no usable CUDA device, and checks for real where it does.
 *   match    every batch delivered into GPU memory is byte-identical to the host path's batch
 *            of the same step over two epochs (xxHash checksums of the bytes read back after the
 *            ready event, and the same offsets, lengths, labels and indices)
 *   reuse    held device batches keep their bytes while the slots around them are refilled
 *   pin      pinning falls back cleanly under injected cuda_pin and mlock faults, one warning
 *   nccl     NCCL is found through dlopen (libnccl is not linked into the process)
 *   stream   the consumer's side through the public API alone: ingot_batch_stream_wait() on a
 *            stream of the test's, a device-to-device copy of each batch enqueued on it, and
 *            ingot_loader_release_after() on that stream at once, before the copy is done; the
 *            copies, read after the whole run, equal the host path's batches
 *   oom      a device slot allocation failing (fault site cuda_malloc): create fails with
 *            INGOT_ERR_NO_MEMORY naming the size asked for and the device's free memory, frees
 *            what it had allocated (a loader created next gets every slot)
 */
#include "common/test.h"
#include "common/loader_data.h"
#include "base/config.h"
#include "base/cuda.h"
#include "base/fault.h"
#include "base/mem.h"
#include <ingot/info.h>
#include <ingot/ingot.h>
#include <ingot/loader.h>
#include <ingot/version.h>
#include <sys/resource.h>
#include <xxhash.h>
#if INGOT_BUILD_CUDA
#    include <cuda_runtime_api.h>
#endif

#define N_SAMPLES 240
#define SLICE     8
#define SEED      11
#define DEPTH     4
#define EPOCHS    2
#define PIN_BYTES (1u << 20)
#define PIN_ROOM  (64u << 20) /* RLIMIT_MEMLOCK that surely leaves room to mlock PIN_BYTES */

static ingot_ctx_h ctx;
static char log_path[1024];

/* Exit 77 unless a CUDA device is usable here. */
static void require_gpu(void)
{
    const ingot_cuda_probe_t *probe = ingot_cuda_probe();
    if (probe->device_count == 0) {
        SKIP("no usable CUDA device: %s", probe->reason);
    }
}

/* Checksum of a batch: its bytes where they live, and every per-sample array. */
static uint64_t batch_sum(const ingot_batch_t *b)
{
    void *copy;
    const uint8_t *data = data_host_bytes(b, &copy);
    XXH3_state_t *st = XXH3_createState();
    CHECK(st != NULL && XXH3_64bits_reset(st) == XXH_OK);
    XXH3_64bits_update(st, data, b->bytes);
    XXH3_64bits_update(st, b->offsets, b->count * sizeof(*b->offsets));
    XXH3_64bits_update(st, b->lengths, b->count * sizeof(*b->lengths));
    XXH3_64bits_update(st, b->labels, b->count * sizeof(*b->labels));
    XXH3_64bits_update(st, b->indices, b->count * sizeof(*b->indices));
    uint64_t sum = XXH3_64bits_digest(st);
    XXH3_freeState(st);
    for (uint32_t i = 0; i < b->count; i++) {
        CHECK(data_check(b->indices[i], data + b->offsets[i], b->lengths[i], b->labels[i]) == 0);
    }
    free(copy);
    return sum;
}

/* A loader over @p manifest delivering to @p device. */
static ingot_loader_h loader_on(const char *manifest, int device)
{
    ingot_loader_params_t p = data_params(manifest, SLICE, SEED, DEPTH, 1, 2);
    p.field_mask |= INGOT_LOADER_PARAM_FIELD_DEVICE | INGOT_LOADER_PARAM_FIELD_EPOCHS;
    p.device = device;
    p.epochs = EPOCHS;
    ingot_loader_h l;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    return l;
}

static const char *make_data(void)
{
    const char *m = data_set(test_tmpdir(), "gpu", N_SAMPLES, 16 << 10, 0);
    CHECK(m != NULL);
    return m;
}

static void test_match(void)
{
    const char *m = make_data();
    ingot_loader_h host = loader_on(m, INGOT_DEVICE_HOST), gpu = loader_on(m, 0);
    ingot_batch_t hb, gb;
    uint64_t steps = 0;
    ingot_status_t hs;
    while ((hs = ingot_loader_next(host, &hb)) == INGOT_OK) {
        CHECK_OK(ingot_loader_next(gpu, &gb));
        CHECK(hb.device == INGOT_DEVICE_HOST && gb.device == 0 && gb.ready_event != NULL);
        CHECK(hb.step == gb.step && hb.count == gb.count && hb.bytes == gb.bytes);
        if (batch_sum(&hb) != batch_sum(&gb)) {
            fprintf(stderr, "step %llu: GPU batch differs from the host batch\n",
                    (unsigned long long)hb.step);
            exit(1);
        }
        CHECK_OK(ingot_loader_release(host, &hb));
        CHECK_OK(ingot_loader_release(gpu, &gb));
        steps++;
    }
    CHECK_STATUS(hs, INGOT_END_OF_DATA);
    CHECK_STATUS(ingot_loader_next(gpu, &gb), INGOT_END_OF_DATA);
    CHECK(steps == EPOCHS * (N_SAMPLES / SLICE));
    ingot_loader_destroy(gpu);
    ingot_loader_destroy(host);
    printf("match ok: %llu steps\n", (unsigned long long)steps);
}

/* Hold depth - 1 batches at all times (the most the loader hands over); each step releases the
 * oldest (releases go in order), takes the next into the slot freed, and re-checks that every
 * batch still held kept its bytes while the slots around it were refilled. */
static void test_reuse(void)
{
    enum { HELD = DEPTH - 1 };
    ingot_loader_h l = loader_on(make_data(), 0);
    ingot_batch_t held[HELD];
    uint64_t sums[HELD], steps = 0;
    for (int i = 0; i < HELD; i++) {
        CHECK_OK(ingot_loader_next(l, &held[i]));
        sums[i] = batch_sum(&held[i]);
    }
    for (;; steps++) {
        int oldest = (int)(steps % HELD);
        CHECK_OK(ingot_loader_release(l, &held[oldest]));
        if (ingot_loader_next(l, &held[oldest]) != INGOT_OK) {
            break;
        }
        sums[oldest] = batch_sum(&held[oldest]);
        for (int i = 0; i < HELD; i++) {
            CHECK(batch_sum(&held[i]) == sums[i]);
        }
    }
    for (uint64_t k = 1; k < HELD; k++) {
        CHECK_OK(ingot_loader_release(l, &held[(steps + k) % HELD]));
    }
    CHECK(steps + HELD == EPOCHS * (N_SAMPLES / SLICE));
    ingot_loader_destroy(l);
    printf("reuse ok: %llu slot refills with %d batches held\n", (unsigned long long)steps, HELD);
}

static void test_stream(void)
{
#if INGOT_BUILD_CUDA
    enum { STEPS = EPOCHS * (N_SAMPLES / SLICE) };
    const char *m = make_data();
    ingot_loader_h host = loader_on(m, INGOT_DEVICE_HOST), gpu = loader_on(m, 0);
    cudaStream_t s;
    CHECK(cudaSetDevice(0) == cudaSuccess);
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess);
    void *copies[STEPS];
    uint64_t want[STEPS];
    size_t bytes[STEPS];
    ingot_batch_t hb, gb;
    uint64_t steps = 0;
    while (ingot_loader_next(host, &hb) == INGOT_OK) {
        CHECK(steps < STEPS);
        CHECK_OK(ingot_loader_next(gpu, &gb));
        CHECK(gb.device == 0 && gb.bytes == hb.bytes);
        want[steps] = XXH3_64bits(hb.data, hb.bytes);
        bytes[steps] = gb.bytes;
        CHECK(cudaMalloc(&copies[steps], gb.bytes ? gb.bytes : 1) == cudaSuccess);
        CHECK_OK(ingot_batch_stream_wait(&gb, s));
        CHECK(cudaMemcpyAsync(copies[steps], gb.data, gb.bytes, cudaMemcpyDeviceToDevice, s) ==
              cudaSuccess);
        CHECK_OK(ingot_loader_release_after(gpu, &gb, s)); /* the copy may still be queued */
        CHECK_OK(ingot_loader_release(host, &hb));
        steps++;
    }
    CHECK(steps == STEPS);
    CHECK(cudaStreamSynchronize(s) == cudaSuccess);
    for (uint64_t i = 0; i < steps; i++) {
        uint8_t *h = malloc(bytes[i] ? bytes[i] : 1);
        CHECK(h != NULL &&
              cudaMemcpy(h, copies[i], bytes[i], cudaMemcpyDeviceToHost) == cudaSuccess);
        if (XXH3_64bits(h, bytes[i]) != want[i]) {
            fprintf(stderr,
                    "step %llu: the copy made on the consumer's stream differs from the "
                    "host batch\n",
                    (unsigned long long)i);
            exit(1);
        }
        free(h);
        cudaFree(copies[i]);
    }
    CHECK_STATUS(ingot_batch_stream_wait(NULL, s), INGOT_ERR_INVALID_PARAM);
    cudaStreamDestroy(s);
    ingot_loader_destroy(gpu);
    ingot_loader_destroy(host);
    printf("stream ok: %llu steps\n", (unsigned long long)steps);
#else
    SKIP("this build has no CUDA support");
#endif
}

static void test_oom(void)
{
    if (!INGOT_FAULT_ENABLED) {
        SKIP("fault sites not compiled in (configure with -DINGOT_FAULT_INJECTION=ON)");
    }
    const char *m = make_data();
    ingot_loader_params_t p = data_params(m, SLICE, SEED, DEPTH, 1, 2);
    ingot_loader_h l = NULL;
    char err[256];
    p.field_mask |= INGOT_LOADER_PARAM_FIELD_DEVICE;
    p.device = 0;
    CHECK_OK(ingot_fault_arm("cuda_malloc:2:ENOMEM", err, sizeof(err)));
    CHECK_STATUS(ingot_loader_create(ctx, &p, &l), INGOT_ERR_NO_MEMORY);
    CHECK(l == NULL);
    CHECK_OK(ingot_fault_arm("none", err, sizeof(err)));
    CHECK_CONTAINS(ingot_last_error(), "loader device slot: cannot allocate ");
    CHECK_CONTAINS(ingot_last_error(), " bytes on CUDA device 0 (");
    CHECK_CONTAINS(ingot_last_error(), " bytes free of ");
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    ingot_loader_destroy(l);
    printf("oom ok\n");
}

/* Occurrences of @p needle in the log. */
static int log_count(const char *needle)
{
    char *text = test_read_file(log_path, NULL);
    int n = 0;
    for (const char *p = text ? strstr(text, needle) : NULL; p != NULL; p = strstr(p + 1, needle)) {
        n++;
    }
    free(text);
    return n;
}

/* Allocate pinned under fault @p spec; return the kind it got. */
static ingot_mem_kind_t pin_under(const char *spec, const char *what)
{
    char err[256];
    ingot_mem_t mem;
    CHECK_OK(ingot_fault_arm(spec, err, sizeof(err)));
    CHECK_OK(ingot_mem_alloc(PIN_BYTES, INGOT_MEM_F_PINNED, -1, what, &mem));
    ingot_mem_kind_t kind = mem.kind;
    memset(mem.ptr, 1, mem.size); /* usable whatever it got */
    ingot_mem_free(&mem);
    CHECK_OK(ingot_fault_arm("none", err, sizeof(err)));
    return kind;
}

static void test_pin(void)
{
    if (!INGOT_FAULT_ENABLED) {
        SKIP("fault sites not compiled in (configure with -DINGOT_FAULT_INJECTION=ON)");
    }
    struct rlimit lim;
    CHECK(getrlimit(RLIMIT_MEMLOCK, &lim) == 0);
    /* Well within the limit mlock must succeed; near it, other locked pages may use it up. */
    int can_mlock = lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= PIN_ROOM;
    CHECK(pin_under("none", "plain pin") == INGOT_MEM_KIND_CUDA_HOST);
    CHECK(log_count("pinning plain pin") == 0);
    ingot_mem_kind_t k = pin_under("cuda_pin:1:ENOMEM", "cuda fault");
    CHECK(k == INGOT_MEM_KIND_MLOCKED || (!can_mlock && k == INGOT_MEM_KIND_PAGEABLE));
    CHECK(log_count("pinning cuda fault (1048576 bytes) failed: ") == 1);
    CHECK(log_count("cudaHostRegister: ") == 1);
    CHECK(pin_under("cuda_pin:1:ENOMEM,mlock:1:EPERM", "both faults") == INGOT_MEM_KIND_PAGEABLE);
    CHECK(log_count("pinning both faults (1048576 bytes) failed: mlock: Operation not "
                    "permitted, after cudaHostRegister: ") == 1);
    CHECK(log_count("pinning both faults") == 1);
    CHECK(pin_under("mlock:1:EPERM", "mlock fault") == INGOT_MEM_KIND_CUDA_HOST);
    CHECK(log_count("pinning mlock fault") == 0);
    printf("pin ok\n");
}

/* 1 when a library whose path contains @p name is mapped into this process. */
static int mapped(const char *name)
{
    char *maps = test_read_file("/proc/self/maps", NULL);
    int found = maps != NULL && strstr(maps, name) != NULL;
    free(maps);
    return found;
}

static void test_nccl(void)
{
    CHECK(!mapped("libnccl")); /* never linked */
    ingot_runtime_info_t info = {.field_mask = INGOT_RUNTIME_INFO_FIELD_NCCL};
    CHECK_OK(ingot_runtime_info_query(&info));
    if (!info.nccl_compiled) {
        SKIP("this build has no NCCL backend");
    }
    if (info.nccl_version == 0) {
        fprintf(stderr, "NCCL not found through dlopen on a GPU node: %s\n", info.nccl_reason);
        exit(1);
    }
    CHECK(info.nccl_version >= 20000);
    printf("nccl ok: %d\n", info.nccl_version);
}

int main(int argc, char **argv)
{
    CHECK(argc == 2);
    snprintf(log_path, sizeof(log_path), "%s/gpu.log", test_tmpdir());
    setenv("INGOT_LOG_FILE", log_path, 1);
    require_gpu();
    const char *mode = argv[1];
    if (strcmp(mode, "pin") == 0 || strcmp(mode, "nccl") == 0) {
        CHECK_OK(ingot_config_load());
        (strcmp(mode, "pin") == 0 ? test_pin : test_nccl)();
        return 0;
    }
    CHECK_OK(ingot_init(NULL, &ctx));
    if (strcmp(mode, "match") == 0) {
        test_match();
    } else if (strcmp(mode, "reuse") == 0) {
        test_reuse();
    } else if (strcmp(mode, "stream") == 0) {
        test_stream();
    } else if (strcmp(mode, "oom") == 0) {
        test_oom();
    } else {
        fprintf(stderr, "unknown mode '%s'\n", mode);
        return 2;
    }
    ingot_finalize(ctx);
    return 0;
}

/*
 * Payload memory: alignment, pre-faulting (no page faults when the buffer is first written),
 * huge-page alignment, NUMA binding, pinning within RLIMIT_MEMLOCK, the fallback to pageable
 * memory beyond it (warning names the limit and the size), and fault-injected failures.
 */
#include "common/test.h"
#include "base/config.h"
#include "base/cuda.h"
#include "base/fault.h"
#include "base/mem.h"
#include <stdint.h>
#include <sys/resource.h>

static long minor_faults(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_minflt;
}

static char log_path[4096];

static char *log_text(void)
{
    return test_read_file(log_path, NULL);
}

/* Minor faults taken while writing a whole fresh buffer allocated with @flags. */
static long faults_of_first_write(size_t size, unsigned flags, ingot_mem_t *mem)
{
    CHECK_OK(ingot_mem_alloc(size, flags, -1, "prefault test", mem));
    long before = minor_faults();
    memset(mem->ptr, 0xab, size);
    return minor_faults() - before;
}

static void test_prefault(void)
{
    const size_t size = 32u << 20;
    ingot_mem_t mem, lazy;
    long prefaulted = faults_of_first_write(size, INGOT_MEM_F_PREFAULT, &mem);
    long plain = faults_of_first_write(size, 0, &lazy);
    CHECK(((uintptr_t)mem.ptr & 4095) == 0 && mem.size == size);
    CHECK(mem.kind == INGOT_MEM_KIND_PAGEABLE);
    /* 8192 pages: the lazy buffer faults on (nearly) each; the pre-faulted one must not. A
     * ratio, because sanitizers add their own faults (shadow memory) to both. ThreadSanitizer's
     * shadow is 4x the buffer and drowns the difference: there only the ASan and plain builds
     * can check it. */
#if defined(__SANITIZE_THREAD__)
    (void)prefaulted;
    (void)plain;
#else
    if (!(prefaulted * 4 < plain)) {
        fprintf(stderr, "first write faults: pre-faulted %ld, plain %ld\n", prefaulted, plain);
        exit(1);
    }
#endif
    ingot_mem_free(&lazy);
    ingot_mem_free(&mem);
    CHECK(mem.ptr == NULL);
    ingot_mem_free(&mem); /* a freed (zeroed) descriptor is accepted */
}

static void test_hugepage_and_numa(void)
{
    ingot_mem_t mem;
    CHECK_OK(ingot_mem_alloc(8u << 20, INGOT_MEM_F_HUGEPAGE | INGOT_MEM_F_PREFAULT, 0, "huge test",
                             &mem));
    CHECK(((uintptr_t)mem.ptr & ((2u << 20) - 1)) == 0);
    CHECK(mem.numa_node == 0);
    memset(mem.ptr, 1, mem.size);
    ingot_mem_free(&mem);
    CHECK_STATUS(ingot_mem_alloc(4096, 0, 999, "numa test", &mem), INGOT_ERR_INVALID_PARAM);
    char *text = log_text();
    CHECK_CONTAINS(text, "numa test: NUMA node 999 does not exist");
    free(text);
    CHECK_STATUS(ingot_mem_alloc(0, 0, -1, "zero test", &mem), INGOT_ERR_INVALID_PARAM);
}

static void test_pinned(void)
{
    struct rlimit lim;
    CHECK(getrlimit(RLIMIT_MEMLOCK, &lim) == 0);
    ingot_mem_t small, big;
    if (lim.rlim_cur == RLIM_INFINITY || lim.rlim_cur >= (2u << 20)) {
        CHECK_OK(ingot_mem_alloc(1u << 20, INGOT_MEM_F_PINNED, -1, "small pinned", &small));
        CHECK(small.kind == INGOT_MEM_KIND_MLOCKED || small.kind == INGOT_MEM_KIND_CUDA_HOST);
        ingot_mem_free(&small);
    }
    if (lim.rlim_cur == RLIM_INFINITY) {
        return; /* nothing beyond the limit to test */
    }
    size_t over = (size_t)lim.rlim_cur + (16u << 20);
    CHECK_OK(ingot_mem_alloc(over, INGOT_MEM_F_PINNED, -1, "big pinned", &big));
    CHECK(big.kind == INGOT_MEM_KIND_PAGEABLE || big.kind == INGOT_MEM_KIND_CUDA_HOST);
    memset(big.ptr, 2, over); /* usable all the same */
    ingot_mem_free(&big);
    if (big.kind == INGOT_MEM_KIND_PAGEABLE) {
        char *text = log_text(), want[128];
        CHECK_CONTAINS(text, "pinning big pinned");
        CHECK_CONTAINS(text, "RLIMIT_MEMLOCK (ulimit -l) is");
        snprintf(want, sizeof(want), "is %llu bytes", (unsigned long long)lim.rlim_cur);
        CHECK_CONTAINS(text, want);
        CHECK_CONTAINS(text, "using pageable memory");
        free(text);
    }
}

/* Occurrences of @p needle in @p hay. */
static int test_count(const char *hay, const char *needle)
{
    int n = 0;
    for (const char *p = strstr(hay, needle); p != NULL; p = strstr(p + 1, needle)) {
        n++;
    }
    return n;
}

static void test_faults(void)
{
    char err[256];
    ingot_mem_t mem;
    if (!INGOT_FAULT_ENABLED) {
        SKIP("fault sites not compiled in (configure with -DINGOT_FAULT_INJECTION=ON)");
    }
    CHECK_OK(ingot_fault_arm("mmap:1:ENOMEM", err, sizeof(err)));
    CHECK_STATUS(ingot_mem_alloc(1u << 20, 0, -1, "faulty map", &mem), INGOT_ERR_NO_MEMORY);
    CHECK_OK(ingot_mem_alloc(1u << 20, 0, -1, "second map", &mem)); /* only the 1st failed */
    ingot_mem_free(&mem);
    /* Where a CUDA device is usable cudaHostRegister pins first and mlock is never reached. */
    int cuda = ingot_cuda_usable();
    CHECK_OK(ingot_fault_arm("mlock:1:EPERM", err, sizeof(err)));
    CHECK_OK(ingot_mem_alloc(1u << 20, INGOT_MEM_F_PINNED, -1, "faulty mlock", &mem));
    CHECK(mem.kind == (cuda ? INGOT_MEM_KIND_CUDA_HOST : INGOT_MEM_KIND_PAGEABLE));
    ingot_mem_free(&mem);
    /* Both pinning ways failing: pageable, one warning naming each failure. */
    CHECK_OK(ingot_fault_arm("cuda_pin:1:ENOMEM,mlock:1:EPERM", err, sizeof(err)));
    CHECK_OK(ingot_mem_alloc(1u << 20, INGOT_MEM_F_PINNED, -1, "faulty pin", &mem));
    CHECK(mem.kind == INGOT_MEM_KIND_PAGEABLE);
    ingot_mem_free(&mem);
    CHECK_OK(ingot_fault_arm("malloc:1:ENOMEM", err, sizeof(err)));
    CHECK(ingot_calloc(1, 16, "faulty calloc") == NULL);
    void *p = ingot_malloc(16, "fine malloc");
    CHECK(p != NULL);
    free(p);
    CHECK_OK(ingot_fault_arm("none", err, sizeof(err)));
    char *text = log_text();
    CHECK_CONTAINS(text, "cannot map 1048576 bytes for faulty map: Cannot allocate memory");
    CHECK_CONTAINS(text,
                   "pinning faulty pin (1048576 bytes) failed: mlock: Operation not permitted");
    CHECK(test_count(text, "pinning faulty pin ") == 1);
    if (cuda) {
        CHECK_CONTAINS(text, "Operation not permitted, after cudaHostRegister: ");
        CHECK(strstr(text, "pinning faulty mlock") == NULL);
    } else {
        CHECK_CONTAINS(text, "pinning faulty mlock (1048576 bytes) failed: mlock: Operation not "
                             "permitted; RLIMIT_MEMLOCK");
    }
    CHECK_CONTAINS(text, "cannot allocate 1 x 16 bytes for faulty calloc");
    free(text);
}

int main(void)
{
    snprintf(log_path, sizeof(log_path), "%s/mem.log", test_tmpdir());
    setenv("INGOT_LOG_FILE", log_path, 1);
    CHECK_OK(ingot_config_load());
    test_prefault();
    test_hugepage_and_numa();
    test_pinned();
    test_faults();
    return 0;
}

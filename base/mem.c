/*
 * Payload memory: mmap, optional THP, NUMA binding (hwloc), pre-faulting, pinning with a clean
 * fallback. Order matters: bind before the first touch so pages land on the right node, and
 * pre-fault before pinning so mlock/cudaHostRegister find the pages resident.
 */
#include "base/mem.h"
#include "base/base_config.h"
#include "base/cuda.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/status.h"
#include <ingot/version.h>
#include <errno.h>
#include <hwloc.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>
#if INGOT_BUILD_CUDA
#    include <cuda_runtime_api.h>
#endif

#define MEM_HUGEPAGE_SIZE (2ull << 20)
#ifndef MADV_POPULATE_WRITE
#    define MADV_POPULATE_WRITE 23 /* Linux 5.14; older kernels answer EINVAL and we touch pages */
#endif

static pthread_once_t mem_topo_once = PTHREAD_ONCE_INIT;
static hwloc_topology_t mem_topo;

static void mem_topo_load(void)
{
    if (hwloc_topology_init(&mem_topo) != 0 || hwloc_topology_load(mem_topo) != 0) {
        ingot_warn("hwloc could not load the topology: NUMA binding of buffers is disabled");
        mem_topo = NULL;
    }
}

static const ingot_base_config_t *mem_config(void)
{
    static const ingot_base_config_t defaults = {.hugepages = true, .pin = INGOT_MEM_PIN_AUTO};
    const ingot_base_config_t *cfg;
    return (ingot_base_config(&cfg) == INGOT_OK) ? cfg : &defaults;
}

const char *ingot_mem_kind_name(ingot_mem_kind_t kind)
{
    switch (kind) {
    case INGOT_MEM_KIND_MLOCKED: return "mlocked";
    case INGOT_MEM_KIND_CUDA_HOST: return "cuda-pinned";
    default: return "pageable";
    }
}

void *ingot_malloc(size_t size, const char *what)
{
    int err = ingot_fault_check(INGOT_FAULT_MALLOC);
    void *p = err ? NULL : malloc(size);
    if (p == NULL) {
        ingot_error("cannot allocate %zu bytes for %s: %s", size, what,
                    strerror(err ? err : ENOMEM));
    }
    return p;
}

void *ingot_calloc(size_t n, size_t size, const char *what)
{
    int err = ingot_fault_check(INGOT_FAULT_MALLOC);
    void *p = err ? NULL : calloc(n, size);
    if (p == NULL) {
        ingot_error("cannot allocate %zu x %zu bytes for %s: %s", n, size, what,
                    strerror(err ? err : ENOMEM));
    }
    return p;
}

ingot_status_t ingot_mem_bind_area(void *addr, size_t size, int numa_node, const char *what)
{
    pthread_once(&mem_topo_once, mem_topo_load);
    if (mem_topo == NULL) {
        return INGOT_OK;
    }
    hwloc_obj_t node = hwloc_get_numanode_obj_by_os_index(mem_topo, (unsigned)numa_node);
    if (node == NULL) {
        ingot_error("%s: NUMA node %d does not exist on this machine (%d node(s))", what, numa_node,
                    hwloc_get_nbobjs_by_type(mem_topo, HWLOC_OBJ_NUMANODE));
        return INGOT_ERR_INVALID_PARAM;
    }
    if (hwloc_set_area_membind(mem_topo, addr, size, node->nodeset, HWLOC_MEMBIND_BIND,
                               HWLOC_MEMBIND_BYNODESET) != 0) {
        ingot_warn("%s: cannot bind %zu bytes to NUMA node %d: %s (memory stays unbound)", what,
                   size, numa_node, strerror(errno));
        return INGOT_ERR_UNSUPPORTED;
    }
    return INGOT_OK;
}

static ingot_status_t mem_bind(ingot_mem_t *mem, int numa_node, const char *what)
{
    ingot_status_t st = ingot_mem_bind_area(mem->map_base, mem->map_size, numa_node, what);
    if (st == INGOT_OK) {
        mem->numa_node = numa_node;
    }
    return st == INGOT_ERR_UNSUPPORTED ? INGOT_OK : st;
}

static void mem_prefault(ingot_mem_t *mem)
{
    if (madvise(mem->map_base, mem->map_size, MADV_POPULATE_WRITE) == 0) {
        return;
    }
    long page = sysconf(_SC_PAGESIZE);
    for (size_t off = 0; off < mem->map_size; off += (size_t)page) {
        ((volatile char *)mem->map_base)[off] = 0;
    }
}

/* Pin @p mem with cudaHostRegister when a CUDA device is usable: 1 when pinned, else 0 with
 * @p why naming the failure ("" when not tried). */
static int mem_pin_cuda(ingot_mem_t *mem, char *why, size_t why_len)
{
    why[0] = '\0';
#if INGOT_BUILD_CUDA
    if (!ingot_cuda_usable()) {
        return 0;
    }
    int err = ingot_fault_check(INGOT_FAULT_CUDA_PIN);
    cudaError_t rc = err ? cudaErrorMemoryAllocation
                         : cudaHostRegister(mem->ptr, mem->size, cudaHostRegisterPortable);
    if (rc == cudaSuccess) {
        mem->kind = INGOT_MEM_KIND_CUDA_HOST;
        return 1;
    }
    cudaGetLastError();
    snprintf(why, why_len, "cudaHostRegister: %s", cudaGetErrorString(rc));
#else
    (void)mem;
    (void)why_len;
#endif
    return 0;
}

/* mlock @p mem within RLIMIT_MEMLOCK (returned in @p lim): 0, or the errno of the failure. */
static int mem_pin_mlock(ingot_mem_t *mem, struct rlimit *lim)
{
    getrlimit(RLIMIT_MEMLOCK, lim);
    int err = ingot_fault_check(INGOT_FAULT_MLOCK);
    if (err == 0 && lim->rlim_cur != RLIM_INFINITY && mem->map_size > lim->rlim_cur) {
        err = ENOMEM; /* would exceed the limit: do not even try */
    }
    if (err == 0 && mlock(mem->map_base, mem->map_size) != 0) {
        err = errno;
    }
    if (err == 0) {
        mem->kind = INGOT_MEM_KIND_MLOCKED;
    }
    return err;
}

/* Pin: cudaHostRegister where a device is usable, else (or when it fails) mlock, else stay
 * pageable. Each fallback is one warning naming every failure. */
static void mem_pin(ingot_mem_t *mem, const char *what)
{
    char cuda_why[256];
    if (mem_pin_cuda(mem, cuda_why, sizeof(cuda_why))) {
        return;
    }
    struct rlimit lim = {0};
    int err = mem_pin_mlock(mem, &lim);
    if (err == 0) {
        if (cuda_why[0] != '\0') {
            ingot_warn("pinning %s (%zu bytes) failed: %s; mlocked instead", what, mem->size,
                       cuda_why);
        }
        return;
    }
    char limit[64] = "unlimited";
    if (lim.rlim_cur != RLIM_INFINITY) {
        snprintf(limit, sizeof(limit), "%" PRIu64 " bytes", (uint64_t)lim.rlim_cur);
    }
    ingot_warn("pinning %s (%zu bytes) failed: mlock: %s%s%s; RLIMIT_MEMLOCK (ulimit -l) is %s; "
               "using pageable memory (raise the limit to pin it)",
               what, mem->map_size, strerror(err), cuda_why[0] ? ", after " : "", cuda_why, limit);
}

ingot_status_t ingot_mem_alloc(size_t size, unsigned flags, int numa_node, const char *what,
                               ingot_mem_t *mem_p)
{
    const ingot_base_config_t *cfg = mem_config();
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    int huge = (flags & INGOT_MEM_F_HUGEPAGE) && cfg->hugepages && size >= MEM_HUGEPAGE_SIZE;
    size_t align = huge ? MEM_HUGEPAGE_SIZE : page;
    if (size == 0 || size > SIZE_MAX - 2 * align || mem_p == NULL || numa_node < -1) {
        ingot_error("%s: invalid allocation request (%zu bytes, NUMA node %d)", what, size,
                    numa_node);
        return INGOT_ERR_INVALID_PARAM;
    }
    ingot_mem_t mem = {.size = size, .kind = INGOT_MEM_KIND_PAGEABLE, .numa_node = -1};
    mem.map_size = (size + align - 1) & ~(align - 1);
    size_t over = mem.map_size + (huge ? align : 0);
    int err = ingot_fault_check(INGOT_FAULT_MMAP);
    void *base = err ? MAP_FAILED
                     : mmap(NULL, over, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (base == MAP_FAILED) {
        err = err ? err : errno;
        ingot_error("cannot map %zu bytes for %s: %s", size, what, strerror(err));
        return INGOT_ERR_NO_MEMORY;
    }
    if (huge) { /* trim to a 2 MiB aligned mapping so whole huge pages back it */
        uintptr_t start = ((uintptr_t)base + align - 1) & ~(uintptr_t)(align - 1);
        size_t head = start - (uintptr_t)base, tail = over - head - mem.map_size;
        if (head) munmap(base, head);
        if (tail) munmap((char *)start + mem.map_size, tail);
        base = (void *)start;
        madvise(base, mem.map_size, MADV_HUGEPAGE);
    }
    mem.map_base = mem.ptr = base;
    if (numa_node >= 0) {
        ingot_status_t st = mem_bind(&mem, numa_node, what);
        if (st != INGOT_OK) {
            munmap(base, mem.map_size);
            return st;
        }
    }
    if (flags & (INGOT_MEM_F_PREFAULT | INGOT_MEM_F_PINNED)) {
        mem_prefault(&mem);
    }
    if ((flags & INGOT_MEM_F_PINNED) && cfg->pin != INGOT_MEM_PIN_OFF) {
        mem_pin(&mem, what);
    }
    ingot_debug("%s: %zu bytes at %p (%s, NUMA %d, %s pages)", what, size, mem.ptr,
                ingot_mem_kind_name(mem.kind), mem.numa_node, huge ? "huge" : "base");
    *mem_p = mem;
    return INGOT_OK;
}

void ingot_mem_free(ingot_mem_t *mem)
{
    if (mem == NULL || mem->map_base == NULL) {
        return;
    }
#if INGOT_BUILD_CUDA
    if (mem->kind == INGOT_MEM_KIND_CUDA_HOST) {
        cudaHostUnregister(mem->ptr);
    }
#endif
    if (mem->kind == INGOT_MEM_KIND_MLOCKED) {
        munlock(mem->map_base, mem->map_size);
    }
    munmap(mem->map_base, mem->map_size);
    memset(mem, 0, sizeof(*mem));
}

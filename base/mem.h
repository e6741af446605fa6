/*
 * Payload memory: page-aligned, pre-faulted once (page faults cost ~10 us per 4 KiB page on our
 * machines), optionally on transparent huge pages, bound to a NUMA node, and pinned
 * (page-locked). Pinning uses cudaHostRegister where a CUDA device is usable (not bounded by
 * RLIMIT_MEMLOCK) and mlock otherwise; when pinning fails the buffer stays pageable and one
 * warning names the limit and the requested size. Memory is mapped with mmap: one call per
 * buffer, meant for pools sized at create time, never per sample.
 */
#ifndef INGOT_BASE_MEM_H
#define INGOT_BASE_MEM_H

#include <ingot/status.h>
#include <stddef.h>

typedef enum ingot_mem_kind {
    INGOT_MEM_KIND_PAGEABLE = 0, /**< ordinary memory */
    INGOT_MEM_KIND_MLOCKED = 1,  /**< page-locked with mlock */
    INGOT_MEM_KIND_CUDA_HOST = 2 /**< page-locked and registered with CUDA */
} ingot_mem_kind_t;

enum {
    INGOT_MEM_F_PREFAULT = 1u << 0, /**< touch every page now */
    INGOT_MEM_F_HUGEPAGE = 1u << 1, /**< madvise(MADV_HUGEPAGE), 2 MiB aligned when large */
    INGOT_MEM_F_PINNED = 1u << 2    /**< page-lock (falls back to pageable with a warning) */
};

typedef struct ingot_mem {
    void *ptr;             /**< start of the usable buffer */
    size_t size;           /**< bytes requested */
    size_t map_size;       /**< bytes mapped (rounded to pages) */
    void *map_base;        /**< start of the mapping */
    ingot_mem_kind_t kind; /**< what pinning was achieved */
    int numa_node;         /**< node it was bound to, or -1 */
} ingot_mem_t;

/**
 * Allocate @p size bytes (page aligned) with @p flags (INGOT_MEM_F_*), bound to @p numa_node
 * (-1: no binding; a node that does not exist is INGOT_ERR_INVALID_PARAM). @p what names the
 * buffer in messages. Returns INGOT_ERR_NO_MEMORY (logged) when the mapping fails.
 */
ingot_status_t ingot_mem_alloc(size_t size, unsigned flags, int numa_node, const char *what,
                               ingot_mem_t *mem_p);
/** Unpin and unmap. Accepts a zeroed ingot_mem_t. */
void ingot_mem_free(ingot_mem_t *mem);
/**
 * Bind [addr, addr + size) (not yet touched) to NUMA node @p numa_node (memory someone else
 * mapped, e.g. a UCX-allocated window). INGOT_OK; INGOT_ERR_INVALID_PARAM for a node that does
 * not exist; INGOT_ERR_UNSUPPORTED (warned) when the kernel refused. No-op without a topology.
 */
ingot_status_t ingot_mem_bind_area(void *addr, size_t size, int numa_node, const char *what);
const char *ingot_mem_kind_name(ingot_mem_kind_t kind);

/** malloc/calloc for control structures (fault-injectable as site "malloc"; logs on failure). */
void *ingot_calloc(size_t n, size_t size, const char *what);
void *ingot_malloc(size_t size, const char *what);

#endif

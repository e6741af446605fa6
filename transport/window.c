/*
 * Windows: memory every peer can read (UCX's shared memory, ingot's own registered, or GPU
 * memory), its key and address exchanged with every rank, its ready word, the destinations of
 * put, and its end: every rank arrives (a silent one named) before any frees.
 */
#include "transport/transport_impl.h"
#include "base/arrival.h"
#include "base/cuda.h"
#include "base/errors.h"
#include "base/fault.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/mem.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

void *ingot_transport_window_data(ingot_transport_window_t *w)
{
    return (char *)w->base + TRANSPORT_WINDOW_HDR;
}

ingot_status_t ingot_transport_window_write(ingot_transport_window_t *w, uint64_t off,
                                            const void *src, size_t len)
{
    char *dst = (char *)w->base + TRANSPORT_WINDOW_HDR + off;
    if (w->cuda_device >= 0) {
        return ingot_cuda_copy(dst, src, len, "cache window fill");
    }
    memcpy(dst, src, len);
    return INGOT_OK;
}

ingot_status_t ingot_transport_window_read_local(ingot_transport_window_t *w, uint64_t off,
                                                 void *dst, size_t len)
{
    const char *src = (const char *)w->base + TRANSPORT_WINDOW_HDR + off;
    if (w->cuda_device >= 0) {
        return ingot_cuda_copy(dst, src, len, "cache window read");
    }
    memcpy(dst, src, len);
    return INGOT_OK;
}

void ingot_transport_window_set_ready(ingot_transport_window_t *w)
{
    if (w->cuda_device >= 0) {
        /* the fill's copies are synchronous: they are all in device memory before this one */
        static const uint64_t one = 1;
        (void)ingot_cuda_copy(w->base, &one, sizeof(one), "cache window ready word");
        return;
    }
    atomic_store_explicit((_Atomic uint64_t *)w->base, 1, memory_order_release);
}

/* Exchange every rank's window address, size and packed key (collective). */
static ingot_status_t window_exchange(ingot_transport_window_t *w, const void *packed,
                                      size_t packed_len)
{
    ingot_transport_t *t = w->t;
    MPI_Comm comm = t->comm;
    /* UCX does not validate a packed key (a truncated one crashes ucp_ep_rkey_unpack), so each
     * key travels with its length and checksum, checked on arrival. */
    uint64_t sum = ingot_hash64(packed, packed_len);
    if (ingot_fault_check(INGOT_FAULT_PEER_KEY) != 0) {
        packed_len = 1; /* a truncated key */
    }
    uint64_t mine[5] = {(uint64_t)(uintptr_t)w->base, w->bytes, packed_len, sum,
                        (uint64_t)(w->cuda_device >= 0)};
    uint64_t *all = ingot_calloc((size_t)t->world, sizeof(mine), "window cards");
    int *counts = ingot_calloc((size_t)t->world, 2 * sizeof(int), "window counts");
    ingot_status_t st = (all && counts) ? INGOT_OK : INGOT_ERR_NO_MEMORY;
    if (st == INGOT_OK) {
        st = INGOT_MPI_CALL("cache: key exchange", MPI_Allgather, mine, 5, MPI_UINT64_T, all, 5,
                            MPI_UINT64_T, comm);
    }
    size_t total = 0;
    int *displs = counts ? counts + t->world : NULL;
    for (int r = 0; st == INGOT_OK && r < t->world; r++) {
        if (all[5 * r + 2] == 0 || all[5 * r + 2] > TRANSPORT_RKEY_MAX) {
            st = ingot_fail(INGOT_ERR_FORMAT,
                            "cache: rank %d sent a packed memory key of %" PRIu64
                            " bytes (expected 1 to %d)",
                            r, all[5 * r + 2], TRANSPORT_RKEY_MAX);
            break;
        }
        counts[r] = (int)all[5 * r + 2];
        displs[r] = (int)total;
        total += all[5 * r + 2];
    }
    if (st == INGOT_OK && (w->packed_all = ingot_malloc(total, "window keys")) == NULL) {
        st = INGOT_ERR_NO_MEMORY;
    }
    if (st == INGOT_OK) {
        st = INGOT_MPI_CALL("cache: key exchange", MPI_Allgatherv, packed, (int)packed_len,
                            MPI_BYTE, w->packed_all, counts, displs, MPI_BYTE, comm);
    }
    for (int r = 0; st == INGOT_OK && w->remote != NULL && r < t->world; r++) {
        const void *key = (char *)w->packed_all + displs[r];
        if (ingot_hash64(key, (size_t)counts[r]) != all[5 * r + 3]) {
            st = ingot_fail(INGOT_ERR_FORMAT,
                            "cache: the memory key of rank %d's window (%d bytes) fails its "
                            "checksum: truncated or damaged on the way",
                            r, counts[r]);
            break;
        }
        w->remote[r] = (transport_remote_t){.base = all[5 * r],
                                            .bytes = all[5 * r + 1],
                                            .packed = (char *)w->packed_all + displs[r],
                                            .packed_len = (size_t)counts[r],
                                            .device = (int)all[5 * r + 4]};
    }
    free(all);
    free(counts);
    return st;
}

/* Map (UCX allocates, so shared-memory transports can map it) and pack the window's key. */
static ingot_status_t window_map(ingot_transport_window_t *w, int numa, void **packed_p,
                                 size_t *packed_len_p)
{
    ingot_transport_t *t = w->t;
    ucp_mem_map_params_t mp = {.field_mask = UCP_MEM_MAP_PARAM_FIELD_ADDRESS |
                                             UCP_MEM_MAP_PARAM_FIELD_LENGTH |
                                             UCP_MEM_MAP_PARAM_FIELD_FLAGS,
                               .address = NULL,
                               .length = w->bytes,
                               .flags = UCP_MEM_MAP_ALLOCATE};
    ingot_status_t st = INGOT_OK;
    if (w->cuda_device >= 0) { /* device memory of the placement's GPU, registered */
        unsigned major, minor, release;
        ucp_get_version(&major, &minor, &release);
        if (!t->cuda_memory) {
            return ingot_fail(INGOT_ERR_UNSUPPORTED,
                              "INGOT_CACHE_MEMORY=device needs a UCX built with CUDA; UCX "
                              "%u.%u.%u here has no CUDA memory type (docs/cache.md, 'Using a "
                              "CUDA-enabled UCX')",
                              major, minor, release);
        }
        if ((st = ingot_cuda_malloc_on(w->cuda_device, &w->device_ptr, w->bytes, "cache window")) !=
            INGOT_OK) {
            return st;
        }
        mp.field_mask |= UCP_MEM_MAP_PARAM_FIELD_MEMORY_TYPE;
        mp.memory_type = UCS_MEMORY_TYPE_CUDA;
        mp.address = w->device_ptr;
        mp.flags = 0;
        numa = -1;
    } else if (w->dest) { /* the caller's memory, registered as it is */
        mp.address = w->base;
        mp.flags = 0;
        numa = -1;
    } else if (!t->window_ucx) { /* ours (huge pages, NUMA-bound), registered */
        st = ingot_mem_alloc(w->bytes, INGOT_MEM_F_HUGEPAGE | INGOT_MEM_F_PREFAULT, numa,
                             "cache window", &w->mem);
        if (st != INGOT_OK) {
            return st;
        }
        mp.address = w->mem.ptr;
        mp.flags = 0;
        numa = -1; /* bound already */
    }
    pthread_mutex_lock(&t->lock);
    st = INGOT_UCX_CALL("cache window", ucp_mem_map, t->ucp, &mp, &w->memh);
    if (st == INGOT_OK) {
        ucp_mem_attr_t attr = {.field_mask = UCP_MEM_ATTR_FIELD_ADDRESS};
        st = INGOT_UCX_CALL("cache window", ucp_mem_query, w->memh, &attr);
        w->base = attr.address;
    } else {
        w->memh = NULL;
    }
    if (st == INGOT_OK) {
        st = INGOT_UCX_CALL("cache window", ucp_rkey_pack, t->ucp, w->memh, packed_p, packed_len_p);
    }
    pthread_mutex_unlock(&t->lock);
    if (st == INGOT_OK && numa >= 0) {
        /* Bind before the first touch; a refusal only costs locality (warned). */
        (void)ingot_mem_bind_area(w->base, w->bytes, numa, "cache window");
    }
    if (st == INGOT_OK && !w->dest) { /* not ready */
        static const char zero[TRANSPORT_WINDOW_HDR];
        st = w->cuda_device >= 0
                 ? ingot_cuda_copy(w->base, zero, sizeof(zero), "cache window header")
                 : (memset(w->base, 0, TRANSPORT_WINDOW_HDR), INGOT_OK);
    }
    return st;
}

/* Whether a window slot is free (windows freed leave theirs for the next one). */
static int window_slot_free(ingot_transport_t *t)
{
    pthread_mutex_lock(&t->lock);
    int free_slot = (t->nwindows < TRANSPORT_WINDOWS_MAX);
    for (uint32_t i = 0; i < t->nwindows && !free_slot; i++) {
        free_slot = (t->windows[i] == NULL);
    }
    pthread_mutex_unlock(&t->lock);
    return free_slot;
}

/* A window over new memory (@p ext NULL: @p bytes of data after the header), or a put
 * destination over the caller's @p bytes at @p ext (collective). */
static ingot_status_t window_create(ingot_transport_t *t, size_t bytes, int numa, int cuda_device,
                                    void *ext, ingot_transport_window_t **w_p)
{
    ingot_transport_window_t *w = ingot_calloc(1, sizeof(*w), "cache window");
    if (w == NULL) {
        (void)ingot_mpi_agree(&t->comm, INGOT_ERR_NO_MEMORY,
                              "cache: window"); /* the others fail too */
        return INGOT_ERR_NO_MEMORY;
    }
    void *packed = NULL;
    size_t packed_len = 0;
    w->t = t;
    w->cuda_device = cuda_device;
    w->id = UINT32_MAX; /* not registered yet */
    w->dest = (ext != NULL);
    w->base = ext;
    w->bytes = ext ? bytes : bytes + TRANSPORT_WINDOW_HDR;
    w->remote = ingot_calloc((size_t)t->world, sizeof(*w->remote), "cache window peers");
    ingot_status_t st = (w->remote == NULL) ? INGOT_ERR_NO_MEMORY
                        : !window_slot_free(t)
                            ? ingot_fail(INGOT_ERR_NO_RESOURCE,
                                         "cache: more than %d windows and put "
                                         "destinations at once (a cached loader takes one "
                                         "window, and depth + 2 destinations under put)",
                                         TRANSPORT_WINDOWS_MAX)
                            : window_map(w, numa, &packed, &packed_len);
    st = ingot_mpi_agree(&t->comm, st, "cache: window");
    if (st == INGOT_OK) {
        st = ingot_mpi_agree(&t->comm, window_exchange(w, packed, packed_len),
                             "cache: key exchange");
    }
    if (packed != NULL) {
        ucp_rkey_buffer_release(packed);
    }
    if (st != INGOT_OK) {
        ingot_transport_window_destroy_local(w);
        return st;
    }
    pthread_mutex_lock(&t->lock);
    /* the lowest free slot: ids agree, as every rank creates and frees windows collectively in
     * the same order */
    uint32_t id = 0;
    while (id < t->nwindows && t->windows[id] != NULL) {
        id++;
    }
    w->id = id;
    t->windows[id] = w;
    t->nwindows += (id == t->nwindows);
    pthread_mutex_unlock(&t->lock);
    *w_p = w;
    return INGOT_OK;
}

ingot_status_t ingot_transport_window_create(ingot_transport_t *t, size_t bytes, int numa,
                                             int cuda_device, ingot_transport_window_t **w_p)
{
    return window_create(t, bytes, numa, cuda_device, NULL, w_p);
}

ingot_status_t ingot_transport_dest_create(ingot_transport_t *t, void *ptr, size_t bytes,
                                           ingot_transport_window_t **w_p)
{
    return window_create(t, bytes, -1, -1, ptr, w_p);
}

void ingot_transport_dest_release(ingot_transport_window_t *w)
{
    ingot_transport_t *t = w->t;
    pthread_mutex_lock(&t->lock);
    if (w->dest && w->memh != NULL) {
        ucp_mem_unmap(t->ucp, w->memh);
        w->memh = NULL;
    }
    pthread_mutex_unlock(&t->lock);
}

void ingot_transport_window_destroy_local(ingot_transport_window_t *w)
{
    if (w == NULL) {
        return;
    }
    ingot_transport_t *t = w->t;
    pthread_mutex_lock(&t->lock);
    if (w->id < t->nwindows && t->windows[w->id] == w) {
        t->windows[w->id] = NULL; /* requests for it are refused from now on */
    }
    for (int r = 0; w->remote != NULL && r < t->world; r++) {
        if (w->remote[r].rkey != NULL) {
            ucp_rkey_destroy(w->remote[r].rkey);
        }
    }
    if (w->memh != NULL) {
        ucp_mem_unmap(t->ucp, w->memh);
    }
    pthread_mutex_unlock(&t->lock);
    ingot_mem_free(&w->mem); /* accepts a zeroed one */
    ingot_cuda_free(w->device_ptr);
    free(w->packed_all);
    free(w->remote);
    free(w);
}

static void window_alive(const int *ranks, int n, uint64_t deadline_ns, int *silent, void *arg)
{
    ingot_transport_ping(((ingot_transport_window_t *)arg)->t, ranks, n, deadline_ns, silent);
}

static const char *window_host(int rank, void *arg)
{
    return ingot_transport_host(((ingot_transport_window_t *)arg)->t, rank);
}

void ingot_transport_window_arrive(ingot_transport_window_t *w, const char *what,
                                   uint64_t timeout_ns, uint64_t silence_ns)
{
    ingot_arrival_t a = {.comm = &w->t->comm,
                         .what = what,
                         .timeout_ns = timeout_ns,
                         .silence_ns = silence_ns,
                         .alive = silence_ns > 0 ? window_alive : NULL,
                         .arg = w,
                         .host = window_host};
    (void)ingot_mpi_arrive(&a); /* returns only when every rank is here */
}

void ingot_transport_window_destroy(ingot_transport_window_t *w, uint64_t timeout_ns,
                                    uint64_t silence_ns)
{
    if (w == NULL) {
        return;
    }
    /* Nobody reads this window any more once every rank is here. */
    ingot_transport_window_arrive(w, "cache: window free", timeout_ns, silence_ns);
    ingot_transport_window_destroy_local(w);
}

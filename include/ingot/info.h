/**
 * @file info.h
 * @brief What this build of ingot contains and what it found on this machine at run time.
 *
 * Build options say which paths are compiled in; run-time detection says which of them can be
 * used here (a CUDA build on a node without a GPU or driver runs its host paths). These calls
 * need no context and may be used before ingot_init().
 */
#ifndef INGOT_INFO_H
#define INGOT_INFO_H

#include <stdio.h>
#include <ingot/status.h>

INGOT_BEGIN_DECLS

/** Which fields of ingot_runtime_info_t to fill (each bit covers the members named). */
enum ingot_runtime_info_field {
    INGOT_RUNTIME_INFO_FIELD_CUDA = INGOT_BIT(0), /**< cuda_compiled .. cuda_reason. */
    INGOT_RUNTIME_INFO_FIELD_NCCL = INGOT_BIT(1), /**< nccl_compiled .. nccl_reason. */
    INGOT_RUNTIME_INFO_FIELD_UCX  = INGOT_BIT(2), /**< ucx_major .. ucx_cuda_transports. */
    INGOT_RUNTIME_INFO_FIELD_LIBS = INGOT_BIT(3)  /**< version_hwloc .. version_zlib (hwloc, zstd
                                                       and zlib). */
};

/** Run-time facts about this machine, as seen by this build. */
typedef struct ingot_runtime_info {
    uint64_t field_mask; /**< In: fields to fill (ingot_runtime_info_field). */

    int  cuda_compiled;        /**< 1 if built with CUDA. */
    int  cuda_device_count;    /**< Usable CUDA devices (0 when none or no driver). */
    int  cuda_driver_version;  /**< e.g. 13000; 0 when no driver. */
    int  cuda_runtime_version; /**< Runtime linked into ingot; 0 when not built with CUDA. */
    char cuda_reason[160];     /**< Why no device is usable, when cuda_device_count == 0. */

    int  nccl_compiled;    /**< 1 if built with NCCL support. */
    int  nccl_version;     /**< e.g. 22807 when libnccl was loaded; 0 otherwise. */
    char nccl_reason[160]; /**< Why NCCL is not usable, when nccl_version == 0. */

    unsigned ucx_major, ucx_minor, ucx_release; /**< UCX library version at run time. */
    int      ucx_cuda_memory;          /**< 1 if UCX reports the CUDA memory type (cuda_copy is
                                         enough: it says nothing of GPUDirect RDMA). */
    char     ucx_memory_types[128];    /**< Comma-separated memory types UCX supports. */
    char     ucx_cuda_transports[128]; /**< The transports that move CUDA memory, e.g.
                                            "cuda_copy, cuda_ipc"; "rc_mlx5 (GPUDirect RDMA)"
                                            only where a NIC registers GPU memory; "" none. */

    char version_hwloc[32]; /**< hwloc release ingot was built with ("2.9.0"; hwloc reports
                                          only its API version at run time). */
    char version_zstd[32];  /**< zstd library version at run time ("1.5.4"). */
    char version_zlib[32];  /**< zlib library version at run time ("1.2.13"). */
} ingot_runtime_info_t;

/**
 * @brief Detect CUDA devices, NCCL and UCX capabilities on this machine.
 * @param info_p in: field_mask; out: the requested fields, written only on success; every
 *        other byte is left untouched (see the field-mask convention in ingot/def.h).
 * @return INGOT_OK even when devices are absent (that is what the fields report); an error only
 *         when detection itself failed (e.g. UCX could not be initialised);
 *         INGOT_ERR_INVALID_PARAM for NULL.
 * Thread-safe; may initialise a throwaway UCX context.
 */
INGOT_API ingot_status_t ingot_runtime_info_query(ingot_runtime_info_t *info_p);

/**
 * @brief Print UCX's transports (component, memory domain, transport, device) and memory types,
 *        one per line, as `ingot-info -t` shows them.
 * @return INGOT_OK, or INGOT_ERR_UCX when UCX cannot enumerate its components.
 */
INGOT_API ingot_status_t ingot_ucx_transports_print(FILE *stream);

/**
 * @brief The data path the peer cache takes from this rank to every rank of @p ctx, one line per
 *        rank (as ingot_loader_cache_paths() words them), into @p buf. Collective: creates the
 *        context's UCX transport when no cached loader did, and an endpoint to every rank.
 * @return INGOT_OK; INGOT_ERR_UCX / INGOT_ERR_CONFIG (a rank unreachable with this UCX_TLS,
 *         named with its host in the line and the log).
 */
INGOT_API ingot_status_t ingot_peer_paths(ingot_ctx_h ctx, char *buf, size_t len);

INGOT_END_DECLS

#endif /* INGOT_INFO_H */

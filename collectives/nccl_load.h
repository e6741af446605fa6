/*
 * NCCL, loaded at run time. libingot never links NCCL: a host-only node must load it, and a
 * process whose framework (PyTorch) already holds its own NCCL must not get a second copy
 * resolved against the first. ingot_nccl_load() dlopens libnccl.so.2 once per process
 * (RTLD_LOCAL) and resolves the calls the collectives need into a table that the runtime hands
 * down to collectives/ (which never loads anything itself).
 */
#ifndef INGOT_COLLECTIVES_NCCL_LOAD_H
#define INGOT_COLLECTIVES_NCCL_LOAD_H

#include <ingot/status.h>
#include <ingot/version.h>
#include <stddef.h>

#define INGOT_NCCL_LIBRARY "libnccl.so.2"

#if INGOT_BUILD_NCCL
#    include <nccl.h>

/** The NCCL calls ingot makes, resolved from the loaded library. */
typedef struct ingot_nccl_api {
    int version; /* ncclGetVersion(), e.g. 22805 */
    ncclResult_t (*get_unique_id)(ncclUniqueId *id);
    ncclResult_t (*comm_init_rank_config)(ncclComm_t *comm, int nranks, ncclUniqueId id, int rank,
                                          ncclConfig_t *config);
    ncclResult_t (*comm_get_async_error)(ncclComm_t comm, ncclResult_t *error);
    ncclResult_t (*comm_abort)(ncclComm_t comm);
    ncclResult_t (*comm_finalize)(ncclComm_t comm);
    ncclResult_t (*comm_destroy)(ncclComm_t comm);
    ncclResult_t (*all_reduce)(const void *send, void *recv, size_t count, ncclDataType_t type,
                               ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream);
    const char *(*get_error_string)(ncclResult_t result);
    const char *(*get_last_error)(ncclComm_t comm);
} ingot_nccl_api_t;
#else
typedef struct ingot_nccl_api {
    int version;
} ingot_nccl_api_t;
#endif

/**
 * Load NCCL once per process (thread-safe) and return its table in *@p api_p. When it cannot be
 * used (not built in, library absent, a symbol missing) returns INGOT_ERR_NOT_FOUND or
 * INGOT_ERR_UNSUPPORTED with the reason in @p why (never logged: the caller decides whether
 * that is an error or a fallback).
 */
ingot_status_t ingot_nccl_load(const ingot_nccl_api_t **api_p, char *why, size_t whylen);

/** The version of the NCCL library found at run time (loading no symbols beyond
 *  ncclGetVersion, built with NCCL or not), or 0 with the reason in @p why. */
int ingot_nccl_probe_version(char *why, size_t whylen);

#endif

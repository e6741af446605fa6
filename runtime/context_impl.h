/* The context behind ingot_ctx_h (internal to runtime/). */
#ifndef INGOT_RUNTIME_CONTEXT_IMPL_H
#define INGOT_RUNTIME_CONTEXT_IMPL_H

#include <ingot/ingot.h>
#include "base/base_config.h"
#include "runtime/loader/loader_config.h"
#include "collectives/collectives_config.h"
#include "source/tier.h"
#include "transport/transport.h"
#include "base/wait.h"
#include "topology/topo.h"
#include <ingot/shard.h>
#include <stdatomic.h>

/** The process-wide values of every module's INGOT_* table (parsed once, never freed). */
typedef struct ingot_ctx_config {
    const ingot_base_config_t *base;
    const ingot_topo_config_t *topo;
    const ingot_transport_config_t *transport;
    const ingot_collectives_config_t *collectives;
    ingot_tier_config_t tiers; /* storage and the cache tiers (source/tier.h) */
    const ingot_loader_config_t *loader;
} ingot_ctx_config_t;

#define INGOT_CTX_INLINE_COLLS 8

struct ingot_ctx {
    MPI_Comm comm; /* duplicate of the user's communicator */
    int rank, size;
    int thread_level; /* what MPI granted */
    int mpi_owned;    /* ingot called MPI_Init_thread */
    ingot_ctx_config_t cfg;
    ingot_abort_t abort;           /* raised at finalize: every wait of this context ends */
    ingot_abort_t peer_lost;       /* raised when a peer cache declares a rank failed under
                                INGOT_PEER_FAILURE=abort: the collectives' waits end at once */
    ingot_topo_setup_t *topo;      /* node comm, topology, plan, this rank's placement */
    _Atomic int reductions;        /* gradient reductions in flight on this context's communicators
                                 (loaders pace their reads on it: INGOT_INGEST_PACING) */
    _Atomic int device_reductions; /* of them, NCCL's (GPU kernels that a cudaMalloc or
                                      cudaFree beside them could deadlock) */
    /* The context's communicators whose reductions advance only inside ingot calls (no
     * MPI_THREAD_MULTIPLE): ingot_loader_next() advances them too. Trainer thread only. */
    struct ingot_coll *inline_colls[INGOT_CTX_INLINE_COLLS];
    int ninline_colls;
    struct ingot_transport *transport; /* UCX, created by the first cached loader (collective) */
};

/**
 * Check that the job-wide variables of every registered table are equal on every rank of
 * @p comm (collective). A mismatch is
 * logged by rank 0 (variable, its value, the differing ranks) and by each differing rank (its own
 * value); it returns INGOT_ERR_CONFIG on every rank when @p strict, else it only warns.
 */
ingot_status_t ingot_config_check_job(MPI_Comm comm, int strict);

/**
 * The context's transport, created at first use (collective over the context's communicator,
 * agreed; the watchdog then asks it about silent ranks: runtime/liveness.h). Every rank must
 * call it at the same point.
 */
ingot_status_t ingot_ctx_transport(ingot_ctx_h ctx, struct ingot_transport **t_p);

#endif

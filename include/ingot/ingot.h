/**
 * @file ingot.h
 * @brief ingot: distributed ingest runtime for GPU training clusters (umbrella header: it
 *        includes every public header, so a program needs only this one).
 *
 * Lifecycle: ingot_init() creates a context on a communicator (the trainer keeps its own; ingot
 * duplicates it), ingot_finalize() destroys it. A process may hold several contexts.
 *
 * Threads, MPI and fork: ingot's own threads call MPI only when the MPI library granted
 * MPI_THREAD_MULTIPLE; otherwise every MPI call happens inside an ingot API call on the
 * caller's thread. ingot_init() and ingot_finalize() are collective over the communicator and
 * call MPI. ingot is not fork-safe after ingot_init() (as NCCL): a forked child must not call
 * ingot, and must exec or exit.
 */
#ifndef INGOT_H
#define INGOT_H

#include <mpi.h>
#include <ingot/def.h>
#include <ingot/status.h>
#include <ingot/version.h>
#include <ingot/config.h>
#include <ingot/info.h>
#include <ingot/topology.h>
#include <ingot/shard.h>
#include <ingot/sim.h>
#include <ingot/order.h>
#include <ingot/loader.h>
#include <ingot/transform.h>
#include <ingot/vision.h>
#include <ingot/collectives.h>
#include <ingot/pack.h>
#include <ingot/disk_cache.h>
#include <ingot/store.h>

INGOT_BEGIN_DECLS

/** Fields of ingot_init_params_t. */
enum ingot_init_params_field {
    INGOT_INIT_PARAM_FIELD_COMM = INGOT_BIT(0) /**< comm is set. */
};

/** Parameters of ingot_init(). Unset fields take their defaults. */
typedef struct ingot_init_params {
    uint64_t field_mask; /**< Bits of ingot_init_params_field saying which fields are set. */
    /**
     * Communicator of the ranks taking part (default MPI_COMM_WORLD). ingot duplicates it. If
     * MPI is not initialised when ingot_init() is called, ingot initialises it (asking for
     * MPI_THREAD_MULTIPLE) and finalises it in the last ingot_finalize(); comm must then be
     * unset.
     */
    MPI_Comm comm;
} ingot_init_params_t;

/** Fields of ingot_ctx_attr_t. */
enum ingot_ctx_attr_field {
    INGOT_CTX_ATTR_FIELD_RANK         = INGOT_BIT(0), /**< rank. */
    INGOT_CTX_ATTR_FIELD_SIZE         = INGOT_BIT(1), /**< size. */
    INGOT_CTX_ATTR_FIELD_THREAD_LEVEL = INGOT_BIT(2), /**< mpi_thread_level. */
    INGOT_CTX_ATTR_FIELD_MPI_OWNED    = INGOT_BIT(3)  /**< mpi_owned. */
};

/**
 * Attributes of a context (ingot_ctx_query()). Like every struct ingot writes into caller memory,
 * it begins with a field_mask the caller sets: ingot writes the fields asked for and leaves every
 * other byte untouched (field_mask included; bits this library does not know are ignored), so
 * fields can be appended in later releases without breaking programs built against this header.
 */
typedef struct ingot_ctx_attr {
    uint64_t field_mask;       /**< In: ingot_ctx_attr_field bits of the fields to write. */
    int      rank;             /**< Rank in the context's communicator. */
    int      size;             /**< Size of the context's communicator. */
    int      mpi_thread_level; /**< Thread level MPI granted (MPI_THREAD_*). */
    int      mpi_owned;        /**< 1 if ingot initialised MPI and will finalise it. */
} ingot_ctx_attr_t;

/**
 * @brief Create a context: read and check the configuration, duplicate the communicator.
 *
 * Collective over the communicator. Parses every INGOT_* variable (an invalid value fails with
 * INGOT_ERR_CONFIG naming the variable, value and syntax) and checks that job-wide variables are
 * equal on every rank (a mismatch fails on every rank, naming the variable and the ranks).
 * Refuses a process alone in MPI_COMM_WORLD whose environment a launcher says is one of several
 * (torchrun's WORLD_SIZE, Slurm's SLURM_STEP_NUM_TASKS or SLURM_NTASKS outside a step,
 * OMPI_COMM_WORLD_SIZE, PMI_SIZE above 1, unless an MPI launcher's own count says 1): started
 * without MPI's wire-up, it would read the whole dataset (INGOT_CHECK_LAUNCH=n allows it).
 *
 * @param params  may be NULL for all defaults.
 * @param ctx_p   out: the new context, written only on success.
 * @return INGOT_OK, INGOT_ERR_CONFIG, INGOT_ERR_MPI, INGOT_ERR_NO_MEMORY, INGOT_ERR_INVALID_PARAM,
 *         INGOT_ERR_MISMATCH (the launch check: logged naming each variable, its value and how to
 *         launch).
 */
INGOT_API ingot_status_t ingot_init(const ingot_init_params_t *params, ingot_ctx_h *ctx_p);

/**
 * @brief Destroy a context (collective over its communicator). Accepts NULL.
 */
INGOT_API void ingot_finalize(ingot_ctx_h ctx);

/**
 * @brief Query a context's attributes.
 * @param attr_p in: field_mask; out: the fields it names (nothing else is written).
 * @return INGOT_OK, or INGOT_ERR_INVALID_PARAM for NULL arguments.
 * Thread-safe; no MPI call.
 */
INGOT_API ingot_status_t ingot_ctx_query(ingot_ctx_h ctx, ingot_ctx_attr_t *attr_p);

/** @brief The library's version string (e.g. "0.1.0"), which may differ from INGOT_VERSION_STRING
 *  of the headers a program was compiled with. */
INGOT_API const char *ingot_version_string(void);

INGOT_END_DECLS

#endif /* INGOT_H */

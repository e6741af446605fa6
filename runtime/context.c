/*
 * ingot_init / ingot_finalize: MPI (initialised here if the trainer has not), the configuration
 * (parsed once, agreed on by every rank), the launch check (launch.c), the duplicated
 * communicator. Every step that can fail on one rank only is followed by an agreement, so a
 * failure returns on every rank instead of leaving the others blocked in the next collective.
 */
#include "runtime/context_impl.h"
#include "runtime/launch.h"
#include "runtime/liveness.h"
#include "transport/transport.h"
#include "base/param.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/errors.h"
#include "base/field_mask.h"
#include "base/status.h"
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t ctx_lock = PTHREAD_MUTEX_INITIALIZER;
static int ctx_live;      /* contexts alive */
static int ctx_mpi_owned; /* ingot initialised MPI */

const char *ingot_version_string(void)
{
    return INGOT_VERSION_STRING;
}

/* A failed ingot_init leaves the process as it found it: MPI that it initialised itself is
 * finalised again (every rank agreed on the failure, so every rank gets here), and the launcher
 * sees a clean non-zero exit rather than a process that left without MPI_Finalize. */
static void ctx_init_failed(void)
{
    pthread_mutex_lock(&ctx_lock);
    if (ctx_mpi_owned && ctx_live == 0) {
        ctx_mpi_owned = 0;
        (void)INGOT_MPI_CALL("ingot_init: failed", MPI_Finalize);
    }
    pthread_mutex_unlock(&ctx_lock);
}

static ingot_status_t ctx_init_mpi(const ingot_init_params_t *params, int *thread_level_p)
{
    int inited = 0, finalized = 0;
    MPI_Initialized(&inited);
    MPI_Finalized(&finalized);
    if (finalized) {
        ingot_error("ingot_init: MPI was already finalised");
        return INGOT_ERR_MPI;
    }
    if (inited) {
        MPI_Query_thread(thread_level_p);
        return INGOT_OK;
    }
    if (params != NULL && (params->field_mask & INGOT_INIT_PARAM_FIELD_COMM)) {
        ingot_error("ingot_init: params->comm is set but MPI is not initialised");
        return INGOT_ERR_INVALID_PARAM;
    }
    ingot_status_t st = INGOT_MPI_CALL("ingot_init", MPI_Init_thread, NULL, NULL,
                                       MPI_THREAD_MULTIPLE, thread_level_p);
    if (st == INGOT_OK) {
        ctx_mpi_owned = 1;
    }
    return st;
}

static ingot_status_t ctx_create(MPI_Comm user, int level, ingot_ctx_h *ctx_p);

ingot_status_t ingot_init(const ingot_init_params_t *params, ingot_ctx_h *ctx_p)
{
    ingot_status_t st;
    if (ctx_p == NULL) {
        ingot_error("ingot_init: ctx_p is NULL");
        return INGOT_ERR_INVALID_PARAM;
    }
    pthread_mutex_lock(&ctx_lock);
    int level = MPI_THREAD_SINGLE;
    st = ctx_init_mpi(params, &level);
    pthread_mutex_unlock(&ctx_lock);
    if (st != INGOT_OK) {
        return st;
    }
    MPI_Comm user = INGOT_PARAM_VALUE(params, comm, INGOT_INIT_PARAM_FIELD_COMM, MPI_COMM_WORLD);
    ingot_mpi_hold_begin(&user); /* a fault every rank finds is written once */
    st = ctx_create(user, level, ctx_p);
    ingot_mpi_hold_end();
    if (st != INGOT_OK) {
        ctx_init_failed();
    }
    return st;
}

/* ingot_init's collective steps, agreed on every rank of @p user. */
static ingot_status_t ctx_create(MPI_Comm user, int level, ingot_ctx_h *ctx_p)
{
    ingot_status_t st;
    ingot_ctx_config_t cfg = {0};
    st = ingot_base_config(&cfg.base);
    if (st == INGOT_OK) { /* parsed together: the first accessor parsed every table */
        ingot_topo_config(&cfg.topo);
        ingot_transport_config(&cfg.transport);
        ingot_collectives_config(&cfg.collectives);
        ingot_tier_config(&cfg.tiers);
        ingot_loader_config(&cfg.loader);
        /* A singleton world that a launcher says is one of several: refused before anything
         * is planned for it (every rank of a world of one is this process). */
        st = ingot_launch_check(cfg.base->check_launch);
    }
    ingot_ctx_h ctx = (st == INGOT_OK) ? ingot_calloc(1, sizeof(*ctx), "ingot context") : NULL;
    if (st == INGOT_OK && ctx == NULL) {
        st = INGOT_ERR_NO_MEMORY;
    }
    if ((st = ingot_mpi_agree(&user, st, "ingot_init: configuration")) != INGOT_OK) {
        goto err_free;
    }
    /* ctx != NULL: ingot_mpi_agree() returns the worst status of all ranks, never OK when
     * ours is not. NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
    ctx->cfg = cfg;
    ctx->thread_level = level;
    if ((st = INGOT_MPI_CALL("ingot_init", MPI_Comm_dup, user, &ctx->comm)) != INGOT_OK) {
        goto err_free;
    }
    MPI_Comm_set_errhandler(ctx->comm, MPI_ERRORS_RETURN);
    MPI_Comm_rank(ctx->comm, &ctx->rank);
    MPI_Comm_size(ctx->comm, &ctx->size);
    int world_rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &world_rank);
    ingot_log_set_rank(world_rank);
    ingot_watchdog_set_mpi(level == MPI_THREAD_MULTIPLE, world_rank);
    st = ingot_config_check_job(ctx->comm, cfg.base->check_job_config);
    if (st != INGOT_OK) {
        goto err_comm;
    }
    /* Node grouping, discovery and this rank's placement (collective, agreed on every rank). */
    st = ingot_topo_setup_create(ctx->comm, cfg.topo, NULL, &ctx->topo);
    if (st != INGOT_OK) {
        goto err_comm;
    }
    pthread_mutex_lock(&ctx_lock);
    ctx->mpi_owned = ctx_mpi_owned;
    ctx_live++;
    pthread_mutex_unlock(&ctx_lock);
    ingot_liveness_watch(ctx); /* a rank a tier declares lost ends the job at the watchdog */
    ingot_info("context ready: rank %d of %d, MPI thread level %d%s", ctx->rank, ctx->size, level,
               ctx->mpi_owned ? " (MPI initialised by ingot)" : "");
    *ctx_p = ctx;
    return INGOT_OK;

err_comm:
    MPI_Comm_free(&ctx->comm);
err_free:
    free(ctx);
    return st;
}

ingot_status_t ingot_ctx_transport(ingot_ctx_h ctx, struct ingot_transport **t_p)
{
    if (ctx->transport == NULL) {
        ingot_transport_params_t p = {.comm = ctx->comm,
                                      .node = &ctx->topo->node,
                                      .timeout_ns = ctx->cfg.base->timeout_ns,
                                      .cfg = ctx->cfg.transport};
        ingot_status_t st = ingot_transport_create(&p, &ctx->transport); /* collective, agreed */
        if (st != INGOT_OK) {
            return st;
        }
        ingot_liveness_watch(ctx); /* ingot's MPI calls notice a silent rank early */
    }
    *t_p = ctx->transport;
    return INGOT_OK;
}

void ingot_finalize(ingot_ctx_h ctx)
{
    if (ctx == NULL) {
        return;
    }
    ingot_abort_raise(&ctx->abort);
    ingot_liveness_unwatch(ctx);
    ingot_transport_destroy(ctx->transport); /* collective, as finalize is */
    ingot_topo_setup_destroy(ctx->topo);
    MPI_Comm_free(&ctx->comm);
    free(ctx);
    pthread_mutex_lock(&ctx_lock);
    int last = (--ctx_live == 0) && ctx_mpi_owned;
    if (last) {
        ctx_mpi_owned = 0;
        (void)INGOT_MPI_CALL("ingot_finalize", MPI_Finalize);
    }
    pthread_mutex_unlock(&ctx_lock);
}

ingot_status_t ingot_ctx_query(ingot_ctx_h ctx, ingot_ctx_attr_t *attr_p)
{
    if (ctx == NULL || attr_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_ctx_query: NULL %s",
                          ctx == NULL ? "ctx" : "attr_p");
    }
    static const ingot_field_span_t spans[] = {
        INGOT_FIELD_SPAN(INGOT_CTX_ATTR_FIELD_RANK, ingot_ctx_attr_t, rank, rank),
        INGOT_FIELD_SPAN(INGOT_CTX_ATTR_FIELD_SIZE, ingot_ctx_attr_t, size, size),
        INGOT_FIELD_SPAN(INGOT_CTX_ATTR_FIELD_THREAD_LEVEL, ingot_ctx_attr_t, mpi_thread_level,
                         mpi_thread_level),
        INGOT_FIELD_SPAN(INGOT_CTX_ATTR_FIELD_MPI_OWNED, ingot_ctx_attr_t, mpi_owned, mpi_owned)};
    ingot_ctx_attr_t all = {.rank = ctx->rank,
                            .size = ctx->size,
                            .mpi_thread_level = ctx->thread_level,
                            .mpi_owned = ctx->mpi_owned};
    ingot_field_mask_copy(attr_p, &all, attr_p->field_mask, spans, INGOT_ARRAY_SIZE(spans));
    return INGOT_OK;
}

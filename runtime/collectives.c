/*
 * The public collectives (include/ingot/collectives.h) over collectives/: chooses and agrees
 * the backend from the context's placements, hands the layer below what it needs (the
 * communicator, the device, the trainer's CPUs to progress on, NCCL's table, the deadline) and
 * forwards the calls.
 */
#include <ingot/collectives.h>
#include "runtime/context_impl.h"
#include "collectives/engine.h"
#include "collectives/collectives_config.h"
#include "runtime/liveness.h"
#include "base/cuda.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "collectives/nccl_load.h"
#include "base/param.h"
#include "base/time.h"
#include <hwloc/glibc-sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ingot_comm {
    ingot_ctx_h ctx;
    ingot_collectives_t *coll;
};

const char *ingot_comm_backend_name(ingot_comm_backend_t backend)
{
    return (unsigned)backend <= INGOT_COMM_BACKEND_NCCL ? ingot_collectives_backend_names[backend]
                                                        : "unknown";
}

/* Can this rank run NCCL? 1 when it has a GPU of its own and NCCL loads; else why not. */
static int comm_nccl_local(ingot_ctx_h ctx, ingot_comm_backend_t asked,
                           const ingot_nccl_api_t **api_p, char *why, size_t whylen)
{
    const ingot_placement_t *pl = &ctx->topo->placement;
    if (pl->cuda_device < 0 || !ingot_cuda_usable()) {
        snprintf(why, whylen, "no usable GPU (%s)",
                 ingot_cuda_usable() ? "CPU-only placement" : ingot_cuda_probe()->reason);
        return 0;
    }
    /* Ranks sharing a GPU are refused by NCCL ("Duplicate GPU detected") unless each poses as
     * a host of its own (NCCL_HOSTID): let an explicit request with NCCL_HOSTID try it. */
    const char *hostid = getenv("NCCL_HOSTID");
    bool hostid_trial = asked == INGOT_COMM_BACKEND_NCCL && hostid != NULL && *hostid != '\0';
    if (pl->gpu_ranks > 1 && hostid_trial) {
        ingot_warn("backend nccl with %d ranks on GPU %d: trying NCCL_HOSTID=%s (NCCL may still "
                   "refuse ranks that share a GPU)",
                   pl->gpu_ranks, pl->gpu_index, hostid);
    } else if (pl->gpu_ranks > 1) {
        snprintf(why, whylen,
                 "GPU %d is shared with %d other local rank(s), and NCCL refuses two ranks of "
                 "one communicator on one GPU",
                 pl->gpu_index, pl->gpu_ranks - 1);
        return 0;
    }
    char nwhy[200];
    if (ingot_nccl_load(api_p, nwhy, sizeof(nwhy)) != INGOT_OK) {
        snprintf(why, whylen, "NCCL does not load: %s", nwhy);
        return 0;
    }
    return 1;
}

/* Decide the backend on every rank alike; nccl asked for where a rank cannot is an error
 * naming the ranks that cannot. */
static ingot_status_t comm_choose(ingot_ctx_h ctx, ingot_comm_backend_t asked,
                                  ingot_comm_backend_t *backend_p, const ingot_nccl_api_t **api_p,
                                  char *reason, size_t reasonlen)
{
    char why[256] = "";
    int mine = (asked == INGOT_COMM_BACKEND_MPI)
                   ? 0
                   : comm_nccl_local(ctx, asked, api_p, why, sizeof(why));
    int all = 0;
    ingot_status_t st = INGOT_MPI_CALL("ingot_comm_create", MPI_Allreduce, &mine, &all, 1, MPI_INT,
                                       MPI_MIN, ctx->comm);
    if (st != INGOT_OK) {
        return st;
    }
    if (asked == INGOT_COMM_BACKEND_MPI) {
        *backend_p = INGOT_COMM_BACKEND_MPI;
        snprintf(reason, reasonlen, "mpi: asked for (INGOT_COMM_BACKEND or params)");
        return INGOT_OK;
    }
    if (all) {
        *backend_p = INGOT_COMM_BACKEND_NCCL;
        snprintf(reason, reasonlen, "nccl: every rank has a GPU of its own and NCCL %d loads",
                 *api_p != NULL ? (*api_p)->version : 0);
        return INGOT_OK;
    }
    /* Someone cannot: which ranks (everyone learns the list) and why (each logs its own). */
    int *cannot = malloc(sizeof(int) * (size_t)ctx->size);
    st = cannot ? INGOT_MPI_CALL("ingot_comm_create", MPI_Allgather, &mine, 1, MPI_INT, cannot, 1,
                                 MPI_INT, ctx->comm)
                : INGOT_ERR_NO_MEMORY;
    char ranks[96] = "";
    size_t o = 0;
    int first = -1;
    for (int r = 0; st == INGOT_OK && r < ctx->size && o < sizeof(ranks) - 16; r++) {
        if (!cannot[r]) {
            o += (size_t)snprintf(ranks + o, sizeof(ranks) - o, "%s%d", o ? "," : "", r);
            first = first < 0 ? r : first;
        }
    }
    free(cannot);
    if (st != INGOT_OK) {
        return st;
    }
    if (asked == INGOT_COMM_BACKEND_NCCL) {
        /* Worded without this rank's number, so ranks that fail alike say it once (held). */
        return ingot_fail(INGOT_ERR_NO_DEVICE,
                          "ingot_comm_create: backend nccl asked for, but rank(s) %s cannot run "
                          "it (set INGOT_COMM_BACKEND=auto or mpi)%s%s",
                          ranks, mine ? "" : "; this rank: ", mine ? "" : why);
    }
    *backend_p = INGOT_COMM_BACKEND_MPI;
    if (!mine) {
        snprintf(reason, reasonlen, "mpi: auto fell back from nccl: rank %d: %s", ctx->rank, why);
    } else {
        snprintf(reason, reasonlen,
                 "mpi: auto fell back from nccl: rank %d cannot run it (see its "
                 "log)",
                 first);
    }
    return INGOT_OK;
}

/* The progress thread runs on the trainer's CPUs when ingot binds its threads (INGOT_BIND):
 * ingest threads then own the ingest cores, and nothing of the collectives runs there. */
static bool comm_progress_cpus(ingot_ctx_h ctx, cpu_set_t *set, char *text, size_t textlen)
{
    const ingot_plan_rank_t *pr = &ctx->topo->plan->ranks[ctx->topo->node.local_rank];
    const char *why = ctx->cfg.topo->bind == INGOT_TOPO_BIND_NONE
                          ? "INGOT_BIND=none: no thread of ingot is bound"
                      : ctx->topo->topo->from_xml
                          ? "the topology is an XML export of another machine"
                      : hwloc_bitmap_iszero(pr->trainer_cpuset)
                          ? "the placement leaves the trainer no CPU"
                          : NULL;
    if (why != NULL) {
        snprintf(text, textlen, "unbound (%s)", why);
        return false;
    }
    CPU_ZERO(set);
    hwloc_cpuset_to_glibc_sched_affinity(ctx->topo->topo->hw, pr->trainer_cpuset, set,
                                         sizeof(*set));
    hwloc_bitmap_list_snprintf(text, textlen, pr->trainer_cpuset);
    return true;
}

static ingot_status_t comm_create(ingot_ctx_h ctx, const ingot_comm_params_t *params,
                                  ingot_comm_h *comm_p);

/* A reduction has waited a while: where a peer cache runs under INGOT_PEER_FAILURE=abort, a
 * rank silent for INGOT_PEER_TIMEOUT is named and the context's peer_lost raised, so the wait
 * ends now rather than at INGOT_TIMEOUT (runtime/liveness.h). */
static void comm_stalled(void *arg, uint64_t waited_ns)
{
    ingot_ctx_h ctx = arg;
    char why[256];
    if (!ingot_abort_is_raised(&ctx->peer_lost) &&
        ingot_liveness_find_lost(ctx, why, sizeof(why))) {
        ingot_error("a reduction waited %.1f s, and %s: it stopped, died or hangs; "
                    "INGOT_PEER_FAILURE=abort ends the job",
                    (double)waited_ns / 1e9, why);
    }
}

ingot_status_t ingot_comm_create(ingot_ctx_h ctx, const ingot_comm_params_t *params,
                                 ingot_comm_h *comm_p)
{
    if (ctx == NULL || comm_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_comm_create: %s is NULL",
                          ctx == NULL ? "ctx" : "comm_p");
    }
    ingot_mpi_hold_begin(&ctx->comm); /* a fault every rank finds is written once */
    ingot_status_t st = comm_create(ctx, params, comm_p);
    ingot_mpi_hold_end();
    return st;
}

static ingot_status_t comm_create(ingot_ctx_h ctx, const ingot_comm_params_t *params,
                                  ingot_comm_h *comm_p)
{
    const ingot_collectives_config_t *cfg = NULL;
    ingot_status_t st = ingot_collectives_config(&cfg);
    if (st != INGOT_OK) {
        return st;
    }
    ingot_comm_backend_t asked = INGOT_PARAM_VALUE(params, backend, INGOT_COMM_PARAM_FIELD_BACKEND,
                                                   cfg->backend);
    size_t bucket = INGOT_PARAM_VALUE(params, bucket_bytes, INGOT_COMM_PARAM_FIELD_BUCKETS,
                                      (size_t)cfg->bucket_bytes);
    size_t first = INGOT_PARAM_VALUE(params, first_bucket_bytes, INGOT_COMM_PARAM_FIELD_BUCKETS,
                                     (size_t)cfg->first_bucket_bytes);
    if ((unsigned)asked > INGOT_COMM_BACKEND_NCCL || bucket == 0 || first == 0) {
        st = ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_comm_create: %s",
                        bucket == 0 || first == 0 ? "bucket_bytes and first_bucket_bytes must "
                                                    "be positive"
                                                  : "unknown backend");
    }
    if ((st = ingot_mpi_agree(&ctx->comm, st, "ingot_comm_create")) != INGOT_OK) {
        return st;
    }
    ingot_comm_h comm = ingot_calloc(1, sizeof(*comm), "communicator");
    ingot_collectives_params_t prm = {
        .comm = ctx->comm,
        .device = -1,
        .thread_multiple = ctx->thread_level == MPI_THREAD_MULTIPLE,
        .timeout_ns = ctx->cfg.base->timeout_ns,
        .bucket_bytes = bucket,
        .first_bucket_bytes = first,
        .ring_min_bytes = cfg->ring_min,
        .segment_bytes = cfg->segment,
        .in_flight_total = &ctx->reductions,
        .peer_lost = &ctx->peer_lost,
        .stalled = comm_stalled,
        .stalled_arg = ctx,
        .stream = INGOT_PARAM_VALUE(params, stream, INGOT_COMM_PARAM_FIELD_STREAM, NULL)};
    char reason[INGOT_COMM_STR_MAX];
    st = comm == NULL ? INGOT_ERR_NO_MEMORY
                      : comm_choose(ctx, asked, &prm.backend, &prm.nccl, reason, sizeof(reason));
    if ((st = ingot_mpi_agree(&ctx->comm, st, "ingot_comm_create")) != INGOT_OK || comm == NULL) {
        free(comm);
        return st != INGOT_OK ? st : INGOT_ERR_NO_MEMORY;
    }
    if (prm.backend == INGOT_COMM_BACKEND_NCCL) {
        prm.device = ctx->topo->placement.cuda_device;
        prm.in_flight_device = &ctx->device_reductions;
    }
    prm.reason = reason;
    cpu_set_t cpus;
    char cpus_text[INGOT_COMM_STR_MAX];
    prm.progress_cpus = comm_progress_cpus(ctx, &cpus, cpus_text, sizeof(cpus_text)) ? &cpus : NULL;
    prm.progress_cpus_text = cpus_text;
    if ((st = ingot_collectives_create(&prm, &comm->coll)) != INGOT_OK) {
        free(comm);
        return st;
    }
    comm->ctx = ctx;
    ingot_comm_stats_t mode = {.field_mask = INGOT_COMM_STATS_FIELD_SETUP};
    ingot_collectives_stats(comm->coll, &mode);
    if (!mode.progress_thread && ctx->ninline_colls < INGOT_CTX_INLINE_COLLS) {
        ctx->inline_colls[ctx->ninline_colls++] = comm->coll;
    }
    ingot_info("communicator ready: %s; progress %s", reason,
               prm.backend == INGOT_COMM_BACKEND_NCCL || prm.thread_multiple
                   ? cpus_text
                   : "inside ingot calls (no MPI_THREAD_MULTIPLE)");
    *comm_p = comm;
    return INGOT_OK;
}

void ingot_comm_destroy(ingot_comm_h comm)
{
    if (comm == NULL) {
        return;
    }
    ingot_ctx_h ctx = comm->ctx;
    for (int i = 0; i < ctx->ninline_colls; i++) {
        if (ctx->inline_colls[i] == comm->coll) {
            ctx->inline_colls[i] = ctx->inline_colls[--ctx->ninline_colls];
            break;
        }
    }
    ingot_collectives_destroy(comm->coll);
    free(comm);
}

#define COMM_CHECK(_comm, _fn) \
    do { \
        if ((_comm) == NULL) { \
            return ingot_fail(INGOT_ERR_INVALID_PARAM, _fn ": comm is NULL"); \
        } \
    } while (0)

ingot_status_t ingot_allreduce_start(ingot_comm_h comm, const void *sendbuf, void *recvbuf,
                                     size_t count, ingot_dtype_t dtype, ingot_op_t op,
                                     ingot_request_h *req_p)
{
    COMM_CHECK(comm, "ingot_allreduce_start");
    return ingot_collectives_allreduce_start(comm->coll, sendbuf, recvbuf, count, dtype, op, req_p);
}

ingot_status_t ingot_request_test(ingot_request_h *req_p)
{
    return ingot_collectives_request_test(req_p);
}

ingot_status_t ingot_request_wait(ingot_request_h *req_p)
{
    return ingot_collectives_request_wait(req_p);
}

ingot_status_t ingot_grads_register(ingot_comm_h comm, const ingot_grad_t *grads, size_t count,
                                    ingot_op_t op)
{
    COMM_CHECK(comm, "ingot_grads_register");
    return ingot_collectives_grads_register(comm->coll, grads, count, op);
}

ingot_status_t ingot_grads_ready(ingot_comm_h comm, size_t index)
{
    COMM_CHECK(comm, "ingot_grads_ready");
    return ingot_collectives_grads_ready(comm->coll, index);
}

ingot_status_t ingot_grads_wait(ingot_comm_h comm)
{
    COMM_CHECK(comm, "ingot_grads_wait");
    return ingot_collectives_grads_wait(comm->coll);
}

ingot_status_t ingot_comm_stats(ingot_comm_h comm, ingot_comm_stats_t *stats_p)
{
    COMM_CHECK(comm, "ingot_comm_stats");
    if (stats_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_comm_stats: stats_p is NULL");
    }
    return ingot_collectives_stats(comm->coll, stats_p);
}

/* ---------------------------------------------------------------- buffers */

/* Host buffers carry their size in a page in front of them, so free needs no table. */
#define COMM_BUFFER_HEADER 4096

ingot_status_t ingot_comm_buffer_alloc(ingot_comm_h comm, size_t bytes, void **ptr_p)
{
    COMM_CHECK(comm, "ingot_comm_buffer_alloc");
    if (ptr_p == NULL || bytes == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_comm_buffer_alloc: %s",
                          ptr_p == NULL ? "ptr_p is NULL" : "0 bytes");
    }
    ingot_comm_stats_t s = {.field_mask = INGOT_COMM_STATS_FIELD_SETUP};
    ingot_collectives_stats(comm->coll, &s);
    if (s.backend == INGOT_COMM_BACKEND_NCCL) {
        return ingot_cuda_malloc(ptr_p, bytes, "ingot_comm_buffer_alloc");
    }
    ingot_mem_t mem;
    ingot_status_t st = ingot_mem_alloc(bytes + COMM_BUFFER_HEADER, INGOT_MEM_F_PREFAULT, -1,
                                        "ingot_comm_buffer_alloc", &mem);
    if (st != INGOT_OK) {
        return st;
    }
    memcpy(mem.ptr, &mem, sizeof(mem));
    *ptr_p = (char *)mem.ptr + COMM_BUFFER_HEADER;
    return INGOT_OK;
}

void ingot_comm_buffer_free(void *ptr)
{
    if (ptr == NULL) {
        return;
    }
    if (ingot_cuda_pointer_device(ptr) >= 0) {
        ingot_cuda_free(ptr);
        return;
    }
    ingot_mem_t mem;
    memcpy(&mem, (char *)ptr - COMM_BUFFER_HEADER, sizeof(mem));
    ingot_mem_free(&mem);
}

ingot_status_t ingot_comm_buffer_copy(ingot_comm_h comm, void *dst, const void *src, size_t bytes)
{
    COMM_CHECK(comm, "ingot_comm_buffer_copy");
    if (ingot_cuda_pointer_device(dst) >= 0 || ingot_cuda_pointer_device(src) >= 0) {
        return ingot_cuda_copy(dst, src, bytes, "ingot_comm_buffer_copy");
    }
    memcpy(dst, src, bytes);
    return INGOT_OK;
}

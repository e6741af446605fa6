/*
 * The overlap mode: ResNet-50's gradients registered with ingot_grads_register (op AVG), checked
 * once, then each part measured alone: the all-reduce (every gradient ready at once, T_ar, the
 * median of a few steps) and, with --manifest, the loader (batches taken back to back). Then
 * --steps training steps (step.c) with all of them together, one untimed step first.
 */
#include "allreduce-bench/arb.h"
#include "common/job.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>

#define OVERLAP_AR_STEPS    5  /* all-reduce alone: the median of these */
#define OVERLAP_DEPTH       4  /* loader batches ahead (the loader's default, set to know it) */
#define OVERLAP_BATCH       64 /* global batch per rank without --batch (as ingot-bench) */
#define OVERLAP_CHECK_TOL   1e-6
#define OVERLAP_TIMER_SLACK 1UL /* ns: wake-ups on time, not 50 us late */

/* One buffer for every gradient, from the communicator (device memory on nccl), zeroed;
 * registered in parameter order. */
static ingot_status_t overlap_register(const arb_setup_t *s, const arb_model_t *m, float **mem_p)
{
    ingot_grad_t grads[ARB_RESNET50_TENSORS];
    size_t bytes = m->params * sizeof(float);
    float *mem = NULL, *zero = calloc(1, bytes);
    ingot_status_t st = zero ? ingot_comm_buffer_alloc(s->comm, bytes, (void **)&mem)
                             : INGOT_ERR_NO_MEMORY;
    if (st == INGOT_OK) {
        st = ingot_comm_buffer_copy(s->comm, mem, zero, bytes);
    }
    free(zero);
    *mem_p = mem;
    if ((st = arb_agree(st)) != INGOT_OK) {
        fprintf(stderr, ARB_TOOL ": rank %d: gradients of %llu floats: %s\n", s->rank,
                (unsigned long long)m->params, ingot_status_string(st));
        return st;
    }
    size_t off = 0;
    for (size_t i = 0; i < m->n; i++) {
        grads[i] = (ingot_grad_t){
            .buf = mem + off, .count = m->counts[i], .dtype = INGOT_DTYPE_FLOAT32};
        off += m->counts[i];
    }
    if ((st = ingot_grads_register(s->comm, grads, m->n, INGOT_OP_AVG)) != INGOT_OK) {
        arb_fail(s, "ingot_grads_register", st);
    }
    return st;
}

/* One step of every rank's rank number: each element must become the mean, (n - 1) / 2. */
static ingot_status_t overlap_check(const arb_trainer_t *t, float *mem)
{
    const arb_setup_t *s = t->s;
    size_t n = t->model->params, wrong = 0;
    double want = (s->world - 1) / 2.0, ms;
    float *host = malloc(n * sizeof(float));
    ingot_status_t st = host ? INGOT_OK : INGOT_ERR_NO_MEMORY;
    for (size_t i = 0; i < n && host != NULL; i++) host[i] = (float)s->rank;
    if (st == INGOT_OK) {
        st = ingot_comm_buffer_copy(s->comm, mem, host, n * sizeof(float));
    }
    if (st == INGOT_OK) {
        st = arb_step_allreduce(t, &ms);
    }
    if (st == INGOT_OK) {
        st = ingot_comm_buffer_copy(s->comm, host, mem, n * sizeof(float));
    }
    for (size_t i = 0; i < n && st == INGOT_OK; i++) {
        wrong += fabs(host[i] - want) > OVERLAP_CHECK_TOL * (1 + want);
    }
    free(host);
    if (wrong != 0) {
        fprintf(stderr, ARB_TOOL ": rank %d: %zu of %zu averaged gradients differ from %g\n",
                s->rank, wrong, n, want);
        st = INGOT_ERR_MISMATCH;
    }
    return arb_agree(st);
}

/* T_ar: the all-reduce alone, the median over steps of the slowest rank's time. */
static ingot_status_t overlap_t_ar(const arb_trainer_t *t, double *ms_p)
{
    double mine[OVERLAP_AR_STEPS] = {0}, slowest[OVERLAP_AR_STEPS];
    ingot_status_t st = INGOT_OK;
    for (int i = 0; i < OVERLAP_AR_STEPS && st == INGOT_OK; i++) {
        MPI_Barrier(MPI_COMM_WORLD);
        st = arb_step_allreduce(t, &mine[i]);
    }
    MPI_Allreduce(mine, slowest, OVERLAP_AR_STEPS, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    *ms_p = arb_median(slowest, OVERLAP_AR_STEPS);
    return arb_agree(st);
}

static ingot_status_t overlap_loader(const arb_args_t *a, const arb_setup_t *s, uint64_t batch,
                                     ingot_loader_h *l_p)
{
    /* Each epoch is at least one step: enough epochs never end the data within the run. */
    uint64_t steps = 1 + OVERLAP_DEPTH + a->steps + 1 + a->steps;
    ingot_loader_params_t p = {
        .field_mask = INGOT_LOADER_PARAM_FIELD_MANIFEST | INGOT_LOADER_PARAM_FIELD_BATCH |
                      INGOT_LOADER_PARAM_FIELD_EPOCHS | INGOT_LOADER_PARAM_FIELD_DEPTH |
                      INGOT_LOADER_PARAM_FIELD_DEVICE,
        .manifest_path = a->manifest,
        .global_batch = batch,
        .epochs = steps + 1,
        .depth = OVERLAP_DEPTH,
        .device = INGOT_DEVICE_HOST}; /* the emulated trainer reads no batch */
    ingot_status_t st = ingot_loader_create(s->ctx, &p, l_p);
    return st == INGOT_OK ? st : arb_fail(s, "ingot_loader_create", st);
}

static ingot_status_t loader_take(const arb_setup_t *s, ingot_loader_h l, uint64_t n)
{
    ingot_batch_t b;
    ingot_status_t st = INGOT_OK;
    for (uint64_t i = 0; i < n && st == INGOT_OK; i++) {
        if ((st = ingot_loader_next(l, &b)) == INGOT_OK) {
            st = ingot_loader_release(l, &b);
        }
    }
    if (st == INGOT_END_OF_DATA) {
        fprintf(stderr,
                ARB_TOOL ": rank %d: the manifest holds no full global batch per epoch "
                         "(a smaller --batch?)\n",
                s->rank);
        return INGOT_ERR_OUT_OF_RANGE;
    }
    return st == INGOT_OK ? st : arb_fail(s, "ingot_loader_next/release", st);
}

/* The loader alone: after the first batch (the pipeline filling) and the batches it prepared
 * ahead, --steps batches back to back; per step, the slowest rank's. */
static ingot_status_t overlap_ingest_alone(const arb_args_t *a, const arb_setup_t *s,
                                           ingot_loader_h l, double *ms_p)
{
    ingot_status_t st = loader_take(s, l, 1 + OVERLAP_DEPTH);
    MPI_Barrier(MPI_COMM_WORLD);
    uint64_t t0 = arb_now_ns();
    if (st == INGOT_OK) {
        st = loader_take(s, l, a->steps);
    }
    double mine = (double)(arb_now_ns() - t0) / ARB_NS_PER_MS / (double)a->steps;
    MPI_Allreduce(&mine, ms_p, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return arb_agree(st);
}

/* One untimed step, then --steps; per step the slowest rank's times, the ranks' background
 * completions summed, and the bucket reductions of the steps over all ranks. */
static ingot_status_t overlap_train(const arb_args_t *a, const arb_trainer_t *t, arb_overlap_t *o)
{
    size_t n = (size_t)a->steps * S_COUNT;
    double *mine = calloc(n, sizeof(double)), warm[S_COUNT];
    uint64_t counts[2];
    ingot_comm_stats_t before = {.field_mask = INGOT_COMM_STATS_FIELD_COUNTS}, after = before;
    o->steps = calloc(n, sizeof(double));
    ingot_status_t st = arb_agree(mine && o->steps ? INGOT_OK : INGOT_ERR_NO_MEMORY);
    if (st == INGOT_OK) {
        st = arb_step(t, warm);
    }
    ingot_comm_stats(t->s->comm, &before);
    for (uint64_t i = 0; i < a->steps && st == INGOT_OK; i++) {
        st = arb_step(t, mine + i * S_COUNT);
    }
    ingot_comm_stats(t->s->comm, &after);
    if ((st = arb_agree(st)) == INGOT_OK) {
        MPI_Allreduce(mine, o->steps, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        for (size_t i = S_BACKGROUND; i < n; i += S_COUNT) {
            MPI_Allreduce(&mine[i], &o->steps[i], 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
        counts[0] = after.background - before.background;
        counts[1] = after.completed - before.completed;
        MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
        o->background = counts[0];
        o->completed = counts[1];
        o->nsteps = a->steps;
    }
    free(mine);
    return st;
}

/* Every rank's cores, at rank 0. */
static ingot_status_t overlap_cpus(const arb_setup_t *s, arb_overlap_t *o)
{
    ingot_placement_t pl = {.field_mask = INGOT_PLACEMENT_FIELD_CPUS};
    arb_cpus_t mine;
    memset(&mine, 0, sizeof(mine));
    if (ingot_placement_get(s->ctx, &pl) == INGOT_OK) {
        snprintf(mine.cpuset, sizeof(mine.cpuset), "%s", pl.cpuset);
        snprintf(mine.ingest, sizeof(mine.ingest), "%s", pl.ingest_cpuset);
        snprintf(mine.trainer, sizeof(mine.trainer), "%s", pl.trainer_cpuset);
    }
    snprintf(mine.progress, sizeof(mine.progress), "%s",
             s->setup.progress_thread ? s->setup.progress_cpuset : "(no progress thread)");
    if (s->rank == 0 && (o->cpus = calloc((size_t)s->world, sizeof(mine))) == NULL) {
        fprintf(stderr, ARB_TOOL ": rank 0: out of memory for the cores of %d ranks\n", s->world);
        app_job_abort(ARB_EXIT_FAIL); /* the others wait in the gather */
    }
    return MPI_Gather(&mine, (int)sizeof(mine), MPI_BYTE, o->cpus, (int)sizeof(mine), MPI_BYTE, 0,
                      MPI_COMM_WORLD) == MPI_SUCCESS
               ? INGOT_OK
               : INGOT_ERR_MPI;
}

/* The loader's part: created, measured alone, then the training steps with it. */
static ingot_status_t overlap_with_loader(const arb_args_t *a, arb_trainer_t *t, arb_overlap_t *o)
{
    ingot_loader_stats_t ls = {.field_mask = INGOT_LOADER_STATS_FIELD_STALL};
    ingot_loader_h l = NULL;
    ingot_status_t st = arb_agree(overlap_loader(a, t->s, o->batch, &l));
    if (st == INGOT_OK) {
        st = overlap_ingest_alone(a, t->s, l, &o->ingest_ms);
    }
    uint64_t wall0 = 0;
    if (st == INGOT_OK && ingot_loader_stats(l, &ls) == INGOT_OK) {
        wall0 = ls.wall_ns;
    }
    t->loader = l;
    if (st == INGOT_OK) {
        st = overlap_train(a, t, o);
    }
    if (st == INGOT_OK && ingot_loader_stats(l, &ls) == INGOT_OK) {
        o->loader_wall_ms = (double)(ls.wall_ns - wall0) / ARB_NS_PER_MS / (double)(a->steps + 1);
    }
    t->loader = NULL;
    ingot_loader_destroy(l);
    return st;
}

static ingot_status_t overlap_model(const arb_setup_t *s, arb_model_t *m)
{
    char total[32];
    arb_resnet50(m);
    if (m->params != ARB_RESNET50_PARAMS || m->n != ARB_RESNET50_TENSORS) {
        fprintf(stderr,
                ARB_TOOL ": rank %d: ResNet-50 built with %zu tensors, %s parameters "
                         "(not %u and 25,557,032): the architecture is wrong\n",
                s->rank, m->n, arb_grouped(m->params, total, sizeof(total)), ARB_RESNET50_TENSORS);
        return INGOT_ERR_INTERNAL;
    }
    return INGOT_OK;
}

ingot_status_t arb_overlap_run(const arb_args_t *a, const arb_setup_t *s, arb_overlap_t *o)
{
    ingot_comm_stats_t cs = {.field_mask = INGOT_COMM_STATS_FIELD_COUNTS};
    arb_trainer_t t = {.s = s, .model = &o->model};
    memset(o, 0, sizeof(*o));
    o->batch = a->batch ? a->batch : (uint64_t)OVERLAP_BATCH * (uint64_t)s->world;
    prctl(PR_SET_TIMERSLACK, OVERLAP_TIMER_SLACK);
    ingot_status_t st = arb_agree(overlap_model(s, &o->model));
    if (st == INGOT_OK && (st = overlap_register(s, &o->model, &o->grads)) == INGOT_OK &&
        (st = overlap_check(&t, o->grads)) == INGOT_OK) {
        st = overlap_t_ar(&t, &o->t_ar_ms);
    }
    if (st == INGOT_OK && ingot_comm_stats(s->comm, &cs) == INGOT_OK) {
        o->buckets = cs.buckets;
    }
    o->compute_ms = a->compute_ms >= 0 ? a->compute_ms : o->t_ar_ms;
    o->forward = a->forward;
    t.forward_ns = (uint64_t)(o->compute_ms * ARB_NS_PER_MS * a->forward);
    t.backward_ns = (uint64_t)(o->compute_ms * ARB_NS_PER_MS) - t.forward_ns;
    t.ready_by_params = a->ready_by_params;
    if (st == INGOT_OK) {
        st = a->manifest ? overlap_with_loader(a, &t, o) : overlap_train(a, &t, o);
    }
    if (st == INGOT_OK) {
        st = arb_agree(overlap_cpus(s, o));
    }
    return st;
}

void arb_overlap_free(arb_overlap_t *o)
{
    free(o->steps);
    free(o->cpus);
    ingot_comm_buffer_free(o->grads);
    o->steps = NULL;
    o->cpus = NULL;
    o->grads = NULL;
}

void arb_overlap_summary(const arb_overlap_t *o, arb_summary_t *sum)
{
    double *col = malloc(sizeof(double) * (o->nsteps ? o->nsteps : 1));
    double *med[S_BACKGROUND] = {&sum->step_ms, &sum->wait_ms, &sum->exposed_ms, &sum->stall_ms};
    memset(sum, 0, sizeof(*sum));
    for (int k = 0; k < S_BACKGROUND && col != NULL; k++) {
        for (uint64_t i = 0; i < o->nsteps; i++) col[i] = o->steps[i * S_COUNT + k];
        *med[k] = arb_median(col, o->nsteps);
    }
    free(col);
    double busiest = fmax(o->compute_ms, fmax(o->t_ar_ms, o->ingest_ms));
    sum->efficiency = sum->step_ms > 0 ? busiest / sum->step_ms : 0;
    sum->hidden_ms = fmax(0, o->t_ar_ms - sum->exposed_ms);
    sum->bound_ms = fmax(busiest, o->compute_ms * o->forward + o->t_ar_ms);
    sum->efficiency_max = sum->bound_ms > 0 ? busiest / sum->bound_ms : 0;
}

/*
 * One emulated training step of the overlap mode, as DDP runs it: the next batch from the loader
 * (the data stall is the time inside ingot_loader_next), a forward pass (--forward of the compute,
 * slept), a backward pass over the tensors from the last to the first, each given its share of
 * the rest of the compute by its layer's multiply-adds (--ready-by params: by its size) and
 * marked ready when its share ends (ingot_grads_ready
 * starts a bucket's all-reduce as soon as it is full), then ingot_grads_wait (the exposed
 * all-reduce) and the batch's release. The sleeps end at absolute deadlines, so 161 short
 * sleeps do not add up their wake-up latencies.
 */
#include "allreduce-bench/arb.h"

#include <errno.h>
#include <string.h>
#include <time.h>

static double ms_since(uint64_t t0)
{
    return (double)(arb_now_ns() - t0) / ARB_NS_PER_MS;
}

static void sleep_until(uint64_t t_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(t_ns / (uint64_t)ARB_NS_PER_S),
                          .tv_nsec = (long)(t_ns % (uint64_t)ARB_NS_PER_S)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static ingot_status_t step_backward(const arb_trainer_t *t)
{
    const arb_model_t *m = t->model;
    uint64_t t0 = arb_now_ns();
    double done = 0, total = t->ready_by_params ? (double)m->params : m->total_macs;
    for (size_t i = m->n; i-- > 0;) {
        done += t->ready_by_params ? (double)m->counts[i] : m->macs[i];
        sleep_until(t0 + (uint64_t)((double)t->backward_ns * done / total));
        ingot_status_t st = ingot_grads_ready(t->s->comm, i);
        if (st != INGOT_OK) {
            return arb_fail(t->s, "ingot_grads_ready", st);
        }
    }
    return INGOT_OK;
}

static ingot_status_t step_next(const arb_trainer_t *t, ingot_batch_t *b)
{
    ingot_status_t st = ingot_loader_next(t->loader, b);
    if (st == INGOT_END_OF_DATA) {
        fprintf(stderr, ARB_TOOL ": the loader ran out of batches: the manifest holds no full "
                                 "global batch per epoch (a smaller --batch?)\n");
        return INGOT_ERR_OUT_OF_RANGE;
    }
    return st == INGOT_OK ? st : arb_fail(t->s, "ingot_loader_next", st);
}

/* The exposed time (exposed_ns) and background completions so far. */
static void step_stats(ingot_comm_h comm, ingot_comm_stats_t *st)
{
    st->field_mask = INGOT_COMM_STATS_FIELD_COUNTS | INGOT_COMM_STATS_FIELD_TIMES;
    if (ingot_comm_stats(comm, st) != INGOT_OK) {
        memset(st, 0, sizeof(*st));
    }
}

/* grads_wait, with the time blocked in it and the stats' deltas over it. */
static ingot_status_t step_wait(const arb_trainer_t *t, double *m)
{
    ingot_comm_stats_t before, after;
    step_stats(t->s->comm, &before);
    uint64_t t0 = arb_now_ns();
    ingot_status_t st = ingot_grads_wait(t->s->comm);
    m[S_WAIT] = ms_since(t0);
    step_stats(t->s->comm, &after);
    m[S_EXPOSED] = (double)(after.exposed_ns - before.exposed_ns) / ARB_NS_PER_MS;
    return st == INGOT_OK ? st : arb_fail(t->s, "ingot_grads_wait", st);
}

ingot_status_t arb_step(const arb_trainer_t *t, double *m)
{
    ingot_batch_t b;
    ingot_comm_stats_t before, after;
    ingot_status_t st = INGOT_OK;
    memset(m, 0, sizeof(double) * S_COUNT);
    step_stats(t->s->comm, &before);
    uint64_t t0 = arb_now_ns();
    if (t->loader != NULL && (st = step_next(t, &b)) != INGOT_OK) {
        return st;
    }
    m[S_STALL] = ms_since(t0);
    sleep_until(arb_now_ns() + t->forward_ns);
    if ((st = step_backward(t)) == INGOT_OK) {
        st = step_wait(t, m);
    }
    if (t->loader != NULL) {
        ingot_status_t rst = ingot_loader_release(t->loader, &b);
        if (st == INGOT_OK && rst != INGOT_OK) {
            st = arb_fail(t->s, "ingot_loader_release", rst);
        }
    }
    m[S_STEP] = ms_since(t0);
    step_stats(t->s->comm, &after);
    m[S_BACKGROUND] = (double)(after.background - before.background);
    return st;
}

ingot_status_t arb_step_allreduce(const arb_trainer_t *t, double *ms_p)
{
    const arb_model_t *m = t->model;
    ingot_status_t st = INGOT_OK;
    uint64_t t0 = arb_now_ns();
    for (size_t i = m->n; i-- > 0 && st == INGOT_OK;) {
        st = ingot_grads_ready(t->s->comm, i);
    }
    if (st != INGOT_OK) {
        return arb_fail(t->s, "ingot_grads_ready", st);
    }
    if ((st = ingot_grads_wait(t->s->comm)) != INGOT_OK) {
        return arb_fail(t->s, "ingot_grads_wait", st);
    }
    *ms_p = ms_since(t0);
    return INGOT_OK;
}

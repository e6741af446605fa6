/*
 * ingot-train's loop: each step's batch, forward and backward with the gradients reduced in
 * buckets as backward produces them, the update; at each epoch's end the test accuracy, the
 * epoch's figures and the checkpoint; a stop asked for by a signal taken at the same step on
 * every rank.
 */
#include "train/run.h"
#include "common/report.h"
#include <math.h>
#include <stdio.h>
#include <string.h>

static ingot_status_t grad_ready(size_t tensor, void *arg)
{
    return ingot_grads_ready(((train_t *)arg)->comm, tensor);
}

/* Test accuracy over one pass of the test loader (all ranks' counts summed). */
static int train_evaluate(train_t *t, double *acc_p, uint64_t *n_p)
{
    uint64_t counts[2] = {0, 0}; /* right, seen */
    /* A loader of one epoch per evaluation: every evaluation (and a resumed run's) sees the same
     * samples, also when the test batch leaves a tail out. */
    ingot_status_t lst = train_loader_open(t, t->a.test, t->test_batch, 1, NULL, &t->test_l);
    if (lst != INGOT_OK) {
        return train_fail_shared(t, "test loader", lst);
    }
    for (uint64_t s = 0; s < t->test_steps; s++) {
        ingot_batch_t b;
        ingot_status_t st = ingot_loader_next(t->test_l, &b);
        if (st != INGOT_OK) {
            return train_fail(t, "test ingot_loader_next", st);
        }
        if (train_labels_check(b.labels, b.count, b.keys) != 0) {
            t->local_fault = true; /* the others wait in the next reduction */
            return TRAIN_EXIT_FAIL;
        }
        counts[0] += train_model_correct(&t->m, b.data, b.labels, b.count);
        counts[1] += b.count;
        if (train_gemm_check(t) != 0) {
            return TRAIN_EXIT_FAIL;
        }
        if ((st = ingot_loader_release(t->test_l, &b)) != INGOT_OK) {
            return train_fail(t, "test ingot_loader_release", st);
        }
    }
    ingot_loader_destroy(t->test_l);
    t->test_l = NULL;
    MPI_Allreduce(MPI_IN_PLACE, counts, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    *acc_p = counts[1] ? (double)counts[0] / (double)counts[1] : 0;
    *n_p = counts[1];
    return 0;
}

typedef struct epoch_acc {
    double t0, loss, compute_s; /* compute: forward, backward (marking gradients), update */
    uint64_t steps;
    ingot_loader_stats_t ls0;
    ingot_comm_stats_t cs0;
} epoch_acc_t;

static void epoch_begin(train_t *t, epoch_acc_t *e)
{
    memset(e, 0, sizeof(*e));
    e->t0 = report_now();
    e->ls0.field_mask = INGOT_LOADER_STATS_FIELD_STALL;
    ingot_loader_stats(t->train_l, &e->ls0);
    e->cs0.field_mask = INGOT_COMM_STATS_FIELD_TIMES;
    ingot_comm_stats(t->comm, &e->cs0);
}

/* Evaluate, gather the epoch's figures, checkpoint. */
static int epoch_end(train_t *t, uint64_t epoch, const epoch_acc_t *e)
{
    train_epoch_t *r = &t->epochs[t->nepochs];
    ingot_loader_stats_t ls = {.field_mask = INGOT_LOADER_STATS_FIELD_STALL};
    ingot_comm_stats_t cs = {.field_mask = INGOT_COMM_STATS_FIELD_TIMES};
    ingot_loader_stats(t->train_l, &ls);
    ingot_comm_stats(t->comm, &cs);
    double wall = report_now() - e->t0;
    ingot_loader_epoch_bytes_t eb = {0};
    (void)ingot_loader_epoch_bytes(t->train_l, epoch, &eb);
    double sums[8] = {
        e->loss,
        (double)e->steps,
        (double)(ls.stall_ns + ls.stall_first_ns - e->ls0.stall_ns - e->ls0.stall_first_ns) / 1e9,
        (double)(cs.reduce_ns - e->cs0.reduce_ns) / 1e6,
        (double)(cs.exposed_ns - e->cs0.exposed_ns) / 1e6,
        e->compute_s * 1e3,
        (double)eb.bytes_storage,
        (double)eb.bytes_disk};
    MPI_Allreduce(MPI_IN_PLACE, sums, 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double wmax = wall;
    MPI_Allreduce(MPI_IN_PLACE, &wmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int rc = train_evaluate(t, &r->accuracy, &r->evaluated);
    if (rc != 0) {
        return rc;
    }
    double steps = sums[1] > 0 ? sums[1] : 1; /* over all ranks */
    r->epoch = epoch;
    r->loss = sums[0] / steps;
    r->wall_s = wmax;
    r->samples_per_s = (double)e->steps * (double)t->a.batch / wmax;
    r->stall_pct = 100.0 * sums[2] / (double)t->world / wmax;
    r->reduce_ms = sums[3] / steps;
    r->exposed_ms = sums[4] / steps;
    r->compute_ms = sums[5] / steps;
    r->bytes_storage = (uint64_t)sums[6];
    r->bytes_disk = (uint64_t)sums[7];
    r->step_ms = e->steps ? 1e3 * wmax / (double)e->steps : 0;
    /* As ingot-allreduce-bench --overlap defines it: the busiest part alone over the step
     * (the all-reduce alone is T_ar, measured before training; ingest never stalled it here
     * when stall is 0). */
    r->overlap = r->step_ms > 0 ? fmax(r->compute_ms, t->t_ar_ms) / r->step_ms : 0;
    t->nepochs++;
    if (t->rank == 0) {
        train_report_epoch(t, r);
    }
    return train_checkpoint(t);
}

/* The training loop: steps until the loader ends, an epoch report at each epoch's last step. */
int train_loop(train_t *t)
{
    epoch_acc_t e;
    epoch_begin(t, &e);
    for (;;) {
        ingot_batch_t b;
        ingot_status_t st = ingot_loader_next(t->train_l, &b);
        if (st == INGOT_END_OF_DATA) {
            return 0;
        }
        if (st != INGOT_OK) {
            return train_fail(t, "ingot_loader_next", st);
        }
        if (train_labels_check(b.labels, b.count, b.keys) != 0) {
            t->local_fault = true; /* the others wait in this step's reduction */
            return TRAIN_EXIT_FAIL;
        }
        double c0 = report_now();
        t->stop_flag = train_stop_requested ? 1.0f : 0.0f;
        st = ingot_grads_ready(t->comm, t->m.ntensors);
        if (st != INGOT_OK) {
            return train_fail(t, "ingot_grads_ready", st);
        }
        e.loss += train_model_step(&t->m, b.data, b.labels, b.count, grad_ready, t, &st);
        double c1 = report_now();
        if (train_gemm_check(t) != 0) {
            return TRAIN_EXIT_FAIL;
        }
        if (st == INGOT_OK) {
            st = ingot_grads_wait(t->comm);
        }
        if (st != INGOT_OK) {
            return train_fail(t, "gradient all-reduce", st);
        }
        double c2 = report_now();
        train_model_update(&t->m, t->a.lr, t->a.momentum);
        e.compute_s += (c1 - c0) + (report_now() - c2);
        e.steps++;
        uint64_t epoch = b.epoch, b_step = b.epoch_step;
        bool last = b.epoch_step + 1 == t->steps_per_epoch;
        if ((st = ingot_loader_release(t->train_l, &b)) != INGOT_OK) {
            return train_fail(t, "ingot_loader_release", st);
        }
        bool stop = t->stop_flag > 0; /* the same on every rank: it was reduced */
        if (last) {
            int rc = epoch_end(t, epoch, &e); /* checkpoints */
            if (rc != 0) {
                return rc;
            }
            t->start_epoch = epoch + 1;
            if (epoch + 1 == t->a.epochs) {
                return 0; /* done: a stop asked for now has nothing left to resume */
            }
            epoch_begin(t, &e);
        }
        if (stop && t->a.checkpoint_dir == NULL) {
            if (t->rank == 0) {
                fprintf(stderr,
                        TRAIN_TOOL ": stopped on request at epoch %llu step %llu "
                                   "without --checkpoint: nothing was saved\n",
                        (unsigned long long)epoch + 1, (unsigned long long)b_step + 1);
            }
            return TRAIN_EXIT_FAIL; /* not 85: a requeued job would start again from scratch */
        }
        if (stop) {
            int rc = last ? 0 : train_checkpoint(t); /* the epoch's checkpoint is this step's */
            if (t->rank == 0 && rc == 0) {
                printf("checkpointed on request at epoch %llu step %llu in %s; resume with "
                       "--resume\n",
                       (unsigned long long)epoch + 1, (unsigned long long)b_step + 1,
                       t->a.checkpoint_dir);
            }
            return rc ? rc : TRAIN_EXIT_CHECKPOINTED;
        }
    }
}

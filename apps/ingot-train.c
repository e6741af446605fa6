/*
 * ingot-train: the reference embedding of ingot in a data-parallel trainer. Fashion-MNIST
 * (ingot-manifest pack --fashion-mnist --split train / --split test: two manifests that share no
 * sample) through two loaders of one context, a transform that turns each image into normalised
 * floats in the loaders' workers, softmax regression or an MLP (apps/train/model.c; its products
 * through CBLAS, or cuBLAS on the placement's GPU with --blas: apps/train/gemm.c, blas.c), the
 * gradients registered layer by layer with ingot's collectives so that their all-reduce starts
 * during backward, SGD with momentum, evaluation on the test split each epoch, a checkpoint each
 * epoch (model, momentum, loader cursor; atomic) and --resume, also with another world size.
 *
 * SIGUSR1 (Slurm's --signal=USR1@120) and SIGTERM set a flag; ranks see a signal at different
 * steps, so the flag is reduced with each step's gradients (one more element in the first
 * bucket) and every rank stops after the same step: a checkpoint is written and the program
 * exits 85 ("checkpointed on request").
 *
 * Report per epoch, as a table and JSON: loss, test accuracy, samples/s, stall %, all-reduce
 * time hidden and exposed.
 */
#include "train/train.h"
#include "common/cli.h"
#include "common/job.h"
#include "common/report.h"
#include <dlfcn.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TRAIN_TEST_BATCH         1000 /* test samples per evaluation step over all ranks (about) */
#define TRAIN_BUCKET_BYTES       (1u << 20)
#define TRAIN_FIRST_BUCKET_BYTES 8192

volatile sig_atomic_t train_stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    train_stop_requested = 1;
}

/* One epoch's figures (rank 0's table and JSON). */
typedef struct train_epoch {
    uint64_t epoch;
    double loss, accuracy, samples_per_s, stall_pct, wall_s;
    double reduce_ms, exposed_ms;        /* per step: all-reduce start to completion, and blocked */
    double compute_ms, step_ms, overlap; /* per step; overlap = max(compute, reduce) / step */
    uint64_t evaluated;
} train_epoch_t;

typedef struct train {
    train_args_t a;
    ingot_ctx_h ctx;
    ingot_comm_h comm;
    ingot_loader_h train_l, test_l;
    ingot_image_norm_t pixels; /* the loaders' transform: P5 28x28 to normalised floats */
    ingot_vision_h vision;     /* --decode: the image decode transform, 28x28 gray floats */
    train_model_t m;
    train_gemm_t gemm;  /* where m's products run */
    char blas_why[384]; /* why there (the report's words) */
    int rank, world;
    uint64_t digest, steps_per_epoch, test_steps, test_batch;
    uint64_t start_epoch, generation;
    train_epoch_t *epochs;
    size_t nepochs;
    float stop_flag;  /* reduced with the gradients: > 0 when any rank was asked to stop */
    double t_ar_ms;   /* the gradients' all-reduce alone (every tensor ready at once), median */
    bool local_fault; /* a failure not every rank shares: the job ends with MPI_Abort */
} train_t;

/* A failure this rank saw alone (a step's batch, its products, a reduction): others may wait in
 * a collective it will never join, so the job ends with MPI_Abort after this line. */
static int fail(train_t *t, const char *what, ingot_status_t st)
{
    fprintf(stderr, TRAIN_TOOL ": rank %d: %s: %s (%s)\n", t->rank, what, ingot_status_string(st),
            ingot_last_error());
    t->local_fault = true;
    return TRAIN_EXIT_FAIL;
}

/* A failure of a collective call that every rank returned alike (ingot agreed on it, and said
 * why once): rank 0 names the step, every rank leaves through MPI_Finalize. */
static int fail_shared(const train_t *t, const char *what, ingot_status_t st)
{
    if (t->rank == 0) {
        fprintf(stderr, TRAIN_TOOL ": %s: %s\n", what, ingot_status_string(st));
    }
    return TRAIN_EXIT_FAIL;
}

/* A failed CUDA or cuBLAS call in the products: the step's results are not to be used. */
static int gemm_check(train_t *t)
{
    const char *e = train_gemm_error(&t->gemm);
    if (e == NULL) {
        return 0;
    }
    fprintf(stderr, TRAIN_TOOL ": rank %d: cuBLAS products: %s\n", t->rank, e);
    t->local_fault = true;
    return TRAIN_EXIT_FAIL;
}

static int agree(int rc)
{
    int worst = rc;
    MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    return worst;
}

/* A manifest's digest and sample count, read by rank 0 and given to every rank (one open per
 * job, and a missing or damaged file is named once). 0, or TRAIN_EXIT_FAIL on every rank. */
static int manifest_facts(const train_t *t, const char *opt, const char *path,
                          ingot_manifest_info_t *info)
{
    int64_t st = INGOT_OK;
    memset(info, 0, sizeof(*info));
    if (t->rank == 0) {
        ingot_manifest_h man = NULL;
        st = ingot_manifest_open(path, INGOT_MANIFEST_OPEN_LAZY, &man);
        if (st == INGOT_OK) {
            st = ingot_manifest_query(man, info);
        }
        ingot_manifest_close(man);
        if (st != INGOT_OK) { /* the library's line above said what is wrong with the file */
            fprintf(stderr, TRAIN_TOOL ": %s %s: %s\n", opt, path,
                    ingot_status_string((ingot_status_t)st));
        }
    }
    uint64_t v[3] = {(uint64_t)st, info->digest, info->sample_count};
    MPI_Bcast(v, 3, MPI_UINT64_T, 0, MPI_COMM_WORLD);
    info->digest = v[1];
    info->sample_count = v[2];
    return (int64_t)v[0] == INGOT_OK ? 0 : TRAIN_EXIT_FAIL;
}

/* The training manifest's digest and size, and the batch that fits them (the same on every
 * rank: rank 0 says what does not fit). */
static int train_dataset(train_t *t)
{
    ingot_manifest_info_t info;
    if (manifest_facts(t, "--train", t->a.train, &info) != 0) {
        return TRAIN_EXIT_FAIL;
    }
    const char *why = NULL;
    char msg[512];
    t->digest = info.digest;
    t->steps_per_epoch = info.sample_count / t->a.batch;
    t->test_batch = (uint64_t)t->world * (TRAIN_TEST_BATCH / (uint64_t)t->world);
    if (t->a.batch % (uint64_t)t->world != 0) {
        snprintf(msg, sizeof(msg), "--batch %llu is not a multiple of the %d ranks",
                 (unsigned long long)t->a.batch, t->world);
        why = msg;
    } else if (t->steps_per_epoch == 0) {
        snprintf(msg, sizeof(msg), "--batch %llu exceeds the %llu samples of %s",
                 (unsigned long long)t->a.batch, (unsigned long long)info.sample_count, t->a.train);
        why = msg;
    }
    if (why != NULL && t->rank == 0) {
        fprintf(stderr, TRAIN_TOOL ": %s\n", why);
    }
    return why != NULL ? TRAIN_EXIT_FAIL : 0;
}

/* The loaders' transform, in their workers: a sample's P5 image (the `pgm` member that
 * ingot-manifest pack --fashion-mnist writes) to 784 floats normalised with the training images'
 * mean and standard deviation (of pixel / 255). The label comes with the batch (`cls`). */
static ingot_status_t pixels_prepare(train_t *t)
{
    if (t->a.decode) {
        /* --decode: any JPEG/PNG/PNM to 28x28 gray (the whole image, resized when it is not
         * 28x28), normalised alike: a JPEG-encoded Fashion-MNIST trains as the P5 one */
        ingot_vision_params_t v = {
            .field_mask = INGOT_VISION_PARAM_FIELD_SIZE | INGOT_VISION_PARAM_FIELD_CHANNELS |
                          INGOT_VISION_PARAM_FIELD_CROP | INGOT_VISION_PARAM_FIELD_NORMALIZE,
            .height = 28,
            .width = 28,
            .channels = 1,
            .crop = INGOT_IMAGE_CROP_NONE,
            .mean = {0.2860f},
            .std = {0.3530f}};
        ingot_status_t st = t->vision ? INGOT_OK : ingot_vision_create(&v, &t->vision);
        t->pixels.out_size = st == INGOT_OK ? ingot_vision_out_size(t->vision) : 0;
        return st;
    }
    t->pixels = (ingot_image_norm_t){.field = "pgm",
                                     .channels = 1,
                                     .height = 28,
                                     .width = 28,
                                     .mean = {0.2860f},
                                     .std = {0.3530f}};
    return ingot_image_norm_prepare(&t->pixels);
}

static ingot_status_t loader_open(train_t *t, const char *manifest, uint64_t batch, uint64_t epochs,
                                  const ingot_cursor_t *cursor, ingot_loader_h *l_p)
{
    ingot_status_t st = t->pixels.out_size ? INGOT_OK : pixels_prepare(t);
    if (st != INGOT_OK) {
        return st;
    }
    ingot_loader_params_t p = {
        .field_mask = INGOT_LOADER_PARAM_FIELD_MANIFEST | INGOT_LOADER_PARAM_FIELD_BATCH |
                      INGOT_LOADER_PARAM_FIELD_SEED | INGOT_LOADER_PARAM_FIELD_EPOCHS |
                      INGOT_LOADER_PARAM_FIELD_DEVICE | INGOT_LOADER_PARAM_FIELD_TRANSFORM |
                      (cursor ? INGOT_LOADER_PARAM_FIELD_CURSOR : 0),
        .manifest_path = manifest,
        .global_batch = batch,
        .seed = t->a.seed,
        .epochs = epochs,
        .device = INGOT_DEVICE_HOST, /* the model lives on the host, also with cuBLAS */
        .transform = t->vision ? ingot_transform_image_decode : ingot_transform_image_norm,
        .transform_arg = t->vision ? (void *)t->vision : (void *)&t->pixels,
        .sample_out_size = t->pixels.out_size, /* TRAIN_PIXELS floats */
        .cursor = cursor};
    return ingot_loader_create(t->ctx, &p, l_p);
}

static ingot_status_t grad_ready(size_t tensor, void *arg)
{
    return ingot_grads_ready(((train_t *)arg)->comm, tensor);
}

/* Register the model's tensors (parameter order) for bucketed, averaged all-reduce. */
static int train_register(train_t *t)
{
    ingot_grad_t g[5];
    for (size_t i = 0; i < t->m.ntensors; i++) {
        g[i] = (ingot_grad_t){t->m.grads + t->m.offset[i], t->m.count[i], INGOT_DTYPE_FLOAT32};
    }
    /* The stop flag rides with the gradients, last in parameter order so first in the first
     * bucket: ranks see a signal at different steps, and the reduction gives every rank the
     * same answer at the same step without a reduction of its own. */
    g[t->m.ntensors] = (ingot_grad_t){&t->stop_flag, 1, INGOT_DTYPE_FLOAT32};
    ingot_status_t st = ingot_grads_register(t->comm, g, t->m.ntensors + 1, INGOT_OP_AVG);
    return st == INGOT_OK ? 0 : fail_shared(t, "ingot_grads_register", st);
}

/* T_ar: the all-reduce alone, as ingot-allreduce-bench --overlap measures it (median of 5 of
 * the slowest rank), on the gradient buffers before training writes them. */
static int train_measure_ar(train_t *t)
{
    double ms[5];
    for (int k = 0; k < 5; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = ingot_report_now();
        ingot_status_t st = INGOT_OK;
        for (size_t i = t->m.ntensors + 1; i-- > 0 && st == INGOT_OK;) {
            st = ingot_grads_ready(t->comm, i);
        }
        if (st == INGOT_OK) {
            st = ingot_grads_wait(t->comm);
        }
        if (st != INGOT_OK) {
            return fail(t, "all-reduce alone", st);
        }
        ms[k] = 1e3 * (ingot_report_now() - t0);
    }
    MPI_Allreduce(MPI_IN_PLACE, ms, 5, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    for (int i = 1; i < 5; i++) { /* insertion sort of five */
        for (int j = i; j > 0 && ms[j] < ms[j - 1]; j--) {
            double x = ms[j];
            ms[j] = ms[j - 1];
            ms[j - 1] = x;
        }
    }
    t->t_ar_ms = ms[2];
    memset(t->m.grads, 0, t->m.nparams * sizeof(float));
    t->stop_flag = 0;
    return 0;
}

static train_ckpt_meta_t train_meta(const train_t *t)
{
    return (train_ckpt_meta_t){.shape = train_model_shape(&t->m),
                               .kind = (uint32_t)t->m.kind,
                               .hidden = t->m.hidden,
                               .manifest_digest = t->digest,
                               .seed = t->a.seed};
}

/* Checkpoint at this step boundary (collective: the cursor is agreed; rank 0 writes). */
static int train_checkpoint(train_t *t)
{
    if (t->a.checkpoint_dir == NULL) {
        return 0;
    }
    ingot_cursor_t c;
    ingot_status_t st = ingot_loader_save(t->train_l, &c);
    if (st != INGOT_OK) {
        return fail(t, "ingot_loader_save", st);
    }
    train_ckpt_meta_t meta = train_meta(t);
    meta.generation = t->generation;
    meta.epoch = c.epoch;
    meta.consumed = c.consumed;
    int rc = t->rank == 0 ? train_ckpt_write(t->a.checkpoint_dir, &t->m, &meta, &c) : 0;
    ingot_cursor_release(&c);
    rc = agree(rc != 0); /* rank 0's failure is everyone's: no rank may report a checkpoint */
    t->generation++;
    return rc ? TRAIN_EXIT_FAIL : 0;
}

/* --resume: weights, momentum and cursor from the checkpoint (every rank reads it). */
static int train_resume(train_t *t, ingot_cursor_t *c, bool *have)
{
    *have = false;
    if (!t->a.resume) {
        /* A fresh run would number its checkpoints from 0 again and overwrite the cursor slot
         * the existing model names: refuse rather than leave a checkpoint that cannot resume. */
        char path[4096];
        int exists = 0;
        if (t->a.checkpoint_dir != NULL) {
            snprintf(path, sizeof(path), "%s/model.ckpt", t->a.checkpoint_dir);
            exists = access(path, F_OK) == 0;
        }
        if (exists && t->rank == 0) {
            fprintf(stderr,
                    TRAIN_TOOL ": --checkpoint %s holds a checkpoint: give --resume, or "
                               "another directory\n",
                    t->a.checkpoint_dir);
        }
        return agree(exists) ? TRAIN_EXIT_FAIL : 0;
    }
    train_ckpt_meta_t expect = train_meta(t), got;
    /* Rank 0 reads first and names what is wrong with the checkpoint; then the others read it
     * (from the shared folder; one that cannot says so itself). */
    int rc = t->rank == 0
                 ? train_ckpt_read(t->a.checkpoint_dir, &t->m, &expect, (uint32_t)t->world, &got, c)
                 : 0;
    if (agree(rc != 0) != 0) {
        return TRAIN_EXIT_FAIL;
    }
    if (t->rank != 0) {
        rc = train_ckpt_read(t->a.checkpoint_dir, &t->m, &expect, (uint32_t)t->world, &got, c);
    }
    if ((rc = agree(rc != 0)) != 0 && t->rank == 0) {
        ingot_cursor_release(c);
    }
    if (rc == 0) {
        *have = true;
        t->start_epoch = got.epoch;
        t->generation = got.generation + 1;
        if (t->rank == 0) {
            printf("# resumed from %s: epoch %llu, sample %llu of it, checkpoint %llu\n",
                   t->a.checkpoint_dir, (unsigned long long)got.epoch,
                   (unsigned long long)got.consumed, (unsigned long long)got.generation);
        }
    }
    return rc ? TRAIN_EXIT_FAIL : 0;
}

/* Test accuracy over one pass of the test loader (all ranks' counts summed). */
static int train_evaluate(train_t *t, double *acc_p, uint64_t *n_p)
{
    uint64_t counts[2] = {0, 0}; /* right, seen */
    /* A loader of one epoch per evaluation: every evaluation (and a resumed run's) sees the same
     * samples, also when the test batch leaves a tail out. */
    ingot_status_t lst = loader_open(t, t->a.test, t->test_batch, 1, NULL, &t->test_l);
    if (lst != INGOT_OK) {
        return fail_shared(t, "test loader", lst);
    }
    for (uint64_t s = 0; s < t->test_steps; s++) {
        ingot_batch_t b;
        ingot_status_t st = ingot_loader_next(t->test_l, &b);
        if (st != INGOT_OK) {
            return fail(t, "test ingot_loader_next", st);
        }
        if (train_labels_check(b.labels, b.count, b.keys) != 0) {
            t->local_fault = true; /* the others wait in the next reduction */
            return TRAIN_EXIT_FAIL;
        }
        counts[0] += train_model_correct(&t->m, b.data, b.labels, b.count);
        counts[1] += b.count;
        if (gemm_check(t) != 0) {
            return TRAIN_EXIT_FAIL;
        }
        if ((st = ingot_loader_release(t->test_l, &b)) != INGOT_OK) {
            return fail(t, "test ingot_loader_release", st);
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
    e->t0 = ingot_report_now();
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
    double wall = ingot_report_now() - e->t0;
    double sums[6] = {
        e->loss,
        (double)e->steps,
        (double)(ls.stall_ns + ls.stall_first_ns - e->ls0.stall_ns - e->ls0.stall_first_ns) / 1e9,
        (double)(cs.reduce_ns - e->cs0.reduce_ns) / 1e6,
        (double)(cs.exposed_ns - e->cs0.exposed_ns) / 1e6,
        e->compute_s * 1e3};
    MPI_Allreduce(MPI_IN_PLACE, sums, 6, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
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
    r->step_ms = e->steps ? 1e3 * wmax / (double)e->steps : 0;
    /* As ingot-allreduce-bench --overlap defines it: the busiest part alone over the step
     * (the all-reduce alone is T_ar, measured before training; ingest never stalled it here
     * when stall is 0). */
    r->overlap = r->step_ms > 0 ? fmax(r->compute_ms, t->t_ar_ms) / r->step_ms : 0;
    t->nepochs++;
    if (t->rank == 0) {
        static const ingot_report_column_t cols[] = {{"loss", "", 8, 4},
                                                     {"test_acc", "%", 9, 2},
                                                     {"samples/s", "", 10, 0},
                                                     {"stall", "%", 6, 1},
                                                     {"compute", "ms/step", 8, 2},
                                                     {"ar", "ms/step", 8, 2},
                                                     {"ar_hidden", "ms/step", 9, 2},
                                                     {"ar_exposed", "ms/step", 10, 2},
                                                     {"step", "ms", 7, 2},
                                                     {"overlap", "", 7, 3}};
        double v[] = {r->loss,
                      100 * r->accuracy,
                      r->samples_per_s,
                      r->stall_pct,
                      r->compute_ms,
                      r->reduce_ms,
                      fmax(0, r->reduce_ms - r->exposed_ms),
                      r->exposed_ms,
                      r->step_ms,
                      r->overlap};
        char who[16];
        snprintf(who, sizeof(who), "%llu", (unsigned long long)epoch + 1);
        if (t->nepochs == 1) {
            ingot_report_table_head(stdout, "epoch", 5, cols, sizeof(cols) / sizeof(cols[0]));
        }
        ingot_report_table_row(stdout, who, 5, cols, sizeof(cols) / sizeof(cols[0]), v);
        fflush(stdout);
    }
    return train_checkpoint(t);
}

/* The training loop: steps until the loader ends, an epoch report at each epoch's last step. */
static int train_loop(train_t *t)
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
            return fail(t, "ingot_loader_next", st);
        }
        if (train_labels_check(b.labels, b.count, b.keys) != 0) {
            t->local_fault = true; /* the others wait in this step's reduction */
            return TRAIN_EXIT_FAIL;
        }
        double c0 = ingot_report_now();
        t->stop_flag = train_stop_requested ? 1.0f : 0.0f;
        st = ingot_grads_ready(t->comm, t->m.ntensors);
        if (st != INGOT_OK) {
            return fail(t, "ingot_grads_ready", st);
        }
        e.loss += train_model_step(&t->m, b.data, b.labels, b.count, grad_ready, t, &st);
        double c1 = ingot_report_now();
        if (gemm_check(t) != 0) {
            return TRAIN_EXIT_FAIL;
        }
        if (st == INGOT_OK) {
            st = ingot_grads_wait(t->comm);
        }
        if (st != INGOT_OK) {
            return fail(t, "gradient all-reduce", st);
        }
        double c2 = ingot_report_now();
        train_model_update(&t->m, t->a.lr, t->a.momentum);
        e.compute_s += (c1 - c0) + (ingot_report_now() - c2);
        e.steps++;
        uint64_t epoch = b.epoch, b_step = b.epoch_step;
        bool last = b.epoch_step + 1 == t->steps_per_epoch;
        if ((st = ingot_loader_release(t->train_l, &b)) != INGOT_OK) {
            return fail(t, "ingot_loader_release", st);
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

static void train_json(const train_t *t)
{
    FILE *f = strcmp(t->a.json, "-") == 0 ? stdout : fopen(t->a.json, "w");
    if (f == NULL) {
        fprintf(stderr, TRAIN_TOOL ": --json %s: %s\n", t->a.json, strerror(errno));
        return;
    }
    ingot_report_json_t j;
    ingot_report_json_begin(&j, f);
    ingot_report_json_str(&j, "tool", TRAIN_TOOL);
    ingot_report_json_int(&j, "ranks", t->world);
    ingot_report_json_str(&j, "model", t->m.kind == TRAIN_MLP ? "mlp" : "softmax");
    ingot_report_json_str(&j, "blas", t->gemm.cuda != NULL ? "cuda" : "cpu");
    ingot_report_json_str(&j, "blas_reason", t->blas_why);
    ingot_report_json_u64(&j, "hidden", t->m.hidden);
    ingot_report_json_u64(&j, "global_batch", t->a.batch);
    ingot_report_json_num(&j, "lr", t->a.lr);
    ingot_report_json_num(&j, "momentum", t->a.momentum);
    ingot_report_json_num(&j, "t_ar_ms", t->t_ar_ms);
    ingot_report_json_array(&j, "epochs");
    for (size_t i = 0; i < t->nepochs; i++) {
        const train_epoch_t *r = &t->epochs[i];
        ingot_report_json_object(&j, NULL);
        ingot_report_json_u64(&j, "epoch", r->epoch + 1);
        ingot_report_json_num(&j, "loss", r->loss);
        ingot_report_json_num(&j, "test_accuracy", r->accuracy);
        ingot_report_json_u64(&j, "test_samples", r->evaluated);
        ingot_report_json_num(&j, "samples_per_s", r->samples_per_s);
        ingot_report_json_num(&j, "stall_pct", r->stall_pct);
        ingot_report_json_num(&j, "allreduce_ms_per_step", r->reduce_ms);
        ingot_report_json_num(&j, "allreduce_exposed_ms_per_step", r->exposed_ms);
        ingot_report_json_num(&j, "compute_ms_per_step", r->compute_ms);
        ingot_report_json_num(&j, "step_ms", r->step_ms);
        ingot_report_json_num(&j, "overlap_efficiency", r->overlap);
        ingot_report_json_num(&j, "wall_s", r->wall_s);
        ingot_report_json_close_object(&j);
    }
    ingot_report_json_close_array(&j);
    ingot_report_json_end(&j);
    if (f != stdout) {
        fclose(f);
    }
}

/* OpenBLAS starts a thread per core by default; ranks share the node's cores, so each rank's
 * products run on one thread unless OPENBLAS_NUM_THREADS says otherwise (the reference BLAS has
 * no threads: the symbol is absent and nothing is done). */
static void train_blas_threads(void)
{
    if (getenv("OPENBLAS_NUM_THREADS") != NULL || getenv("OMP_NUM_THREADS") != NULL) {
        return;
    }
    void (*set)(int) = NULL;
    *(void **)&set = dlsym(RTLD_DEFAULT, "openblas_set_num_threads");
    if (set != NULL) {
        set(1);
    }
}

static int train_setup(train_t *t, ingot_cursor_t *cursor, bool *have_cursor)
{
    train_blas_threads();
    MPI_Comm_rank(MPI_COMM_WORLD, &t->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &t->world);
    ingot_status_t st = ingot_init(NULL, &t->ctx);
    if (st != INGOT_OK) {
        return TRAIN_EXIT_FAIL; /* agreed on every rank, and said once (the variable, the step) */
    }
    int rc = train_dataset(t);
    if (rc != 0) {
        return rc;
    }
    /* Bucket caps scaled to these small models (DDP's 25 MiB and 1 MiB would put the whole
     * model in one bucket): the output layer is the first bucket, reduced while backward
     * computes the first layer's gradient. INGOT_BUCKET_BYTES / INGOT_FIRST_BUCKET_BYTES set
     * them instead when given. */
    bool caps_set = getenv("INGOT_BUCKET_BYTES") || getenv("INGOT_FIRST_BUCKET_BYTES");
    /* The model and its gradients live in host memory (with cuBLAS too): the MPI backend, unless
     * INGOT_COMM_BACKEND says otherwise (auto would take NCCL on a GPU node, which reduces
     * device memory only). */
    bool backend_set = getenv("INGOT_COMM_BACKEND") != NULL;
    ingot_comm_params_t cp = {.field_mask = (caps_set ? 0 : INGOT_COMM_PARAM_FIELD_BUCKETS) |
                                            (backend_set ? 0 : INGOT_COMM_PARAM_FIELD_BACKEND),
                              .backend = INGOT_COMM_BACKEND_MPI,
                              .bucket_bytes = TRAIN_BUCKET_BYTES,
                              .first_bucket_bytes = TRAIN_FIRST_BUCKET_BYTES};
    if ((st = ingot_comm_create(t->ctx, &cp, &t->comm)) != INGOT_OK) {
        return fail_shared(t, "ingot_comm_create", st);
    }
    uint64_t local = t->a.batch / (uint64_t)t->world, test_local = t->test_batch / t->world;
    rc = train_model_init(&t->m, t->a.model, t->a.hidden, local > test_local ? local : test_local,
                          t->a.seed, &t->gemm);
    if (agree(rc != 0) ||
        (rc = train_blas_choose(t->ctx, t->a.blas, train_model_gemm_elems(&t->m), &t->gemm,
                                t->blas_why, sizeof(t->blas_why))) != 0 ||
        (rc = train_register(t)) != 0 || (rc = train_measure_ar(t)) != 0 ||
        (rc = train_resume(t, cursor, have_cursor)) != 0) {
        return rc ? rc : TRAIN_EXIT_FAIL;
    }
    t->epochs = calloc(t->a.epochs, sizeof(*t->epochs));
    if ((st = loader_open(t, t->a.train, t->a.batch, t->a.epochs, *have_cursor ? cursor : NULL,
                          &t->train_l)) != INGOT_OK) {
        return fail_shared(t, "training loader", st);
    }
    ingot_manifest_info_t info;
    if (manifest_facts(t, "--test", t->a.test, &info) != 0) {
        return TRAIN_EXIT_FAIL;
    }
    t->test_steps = info.sample_count / t->test_batch;
    if (t->test_steps == 0 && t->rank == 0) {
        fprintf(stderr, TRAIN_TOOL ": --test %s: fewer samples than one test batch (%llu)\n",
                t->a.test, (unsigned long long)t->test_batch);
    }
    return t->test_steps == 0 ? TRAIN_EXIT_FAIL : 0;
}

static void train_header(const train_t *t)
{
    ingot_comm_stats_t cs = {.field_mask = INGOT_COMM_STATS_FIELD_SETUP |
                                           INGOT_COMM_STATS_FIELD_COUNTS};
    ingot_comm_stats(t->comm, &cs);
    ingot_report_header_versions(stdout, TRAIN_TOOL, t->world);
    printf("# model %s%s, %zu parameters in %zu tensors; global batch %llu (%llu per rank), "
           "%llu steps per epoch; lr %g, momentum %g, seed %llu\n",
           t->m.kind == TRAIN_MLP ? "mlp" : "softmax",
           t->m.kind == TRAIN_MLP ? " (hidden layer)" : "", t->m.nparams, t->m.ntensors,
           (unsigned long long)t->a.batch, (unsigned long long)(t->a.batch / (uint64_t)t->world),
           (unsigned long long)t->steps_per_epoch, t->a.lr, t->a.momentum,
           (unsigned long long)t->a.seed);
    printf("# blas: %s (%s)\n", t->gemm.cuda != NULL ? "cuda" : "cpu", t->blas_why);
    printf("# gradients: %s backend (%s), %llu bucket(s); their all-reduce alone (T_ar) %.3f ms\n",
           ingot_comm_backend_name(cs.backend), cs.reason, (unsigned long long)cs.buckets,
           t->t_ar_ms);
    printf("# per step: compute = forward + backward + update; ar = all-reduce start to "
           "completion summed over buckets; overlap = max(compute, T_ar) / step\n");
}

int main(int argc, char **argv)
{
    train_t t;
    memset(&t, 0, sizeof(t));
    ingot_cli_quiet_begin(); /* every rank parses; a usage error is said once */
    train_args_parse(argc, argv, &t.a);
    ingot_cli_quiet_end();
    /* First, before MPI and ingot start: a SIGUSR1 during start-up must not kill the rank. */
    struct sigaction sa = {.sa_handler = on_signal, .sa_flags = SA_RESTART};
    sigemptyset(&sa.sa_mask);
    sigaction(SIGUSR1, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    int level;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &level);
    ingot_cursor_t cursor;
    bool have_cursor = false;
    int rc = train_setup(&t, &cursor, &have_cursor);
    if (rc == 0) {
        if (t.rank == 0) {
            train_header(&t);
        }
        rc = train_loop(&t);
    }
    if (rc == 0 && t.rank == 0 && t.nepochs > 0) {
        printf("final test accuracy %.2f%% after %llu epochs\n",
               100 * t.epochs[t.nepochs - 1].accuracy,
               (unsigned long long)t.epochs[t.nepochs - 1].epoch + 1);
    }
    if ((rc == 0 || rc == TRAIN_EXIT_CHECKPOINTED) && t.rank == 0 && t.a.json != NULL) {
        train_json(&t);
    }
    if (rc != 0 && rc != TRAIN_EXIT_CHECKPOINTED && t.local_fault) {
        app_job_abort(rc); /* a rank may be inside a collective the others left */
    }
    if (have_cursor) {
        ingot_cursor_release(&cursor);
    }
    ingot_loader_destroy(t.test_l);
    ingot_loader_destroy(t.train_l);
    ingot_vision_destroy(t.vision);
    ingot_comm_destroy(t.comm);
    train_model_free(&t.m);
    train_gemm_close(&t.gemm);
    free(t.epochs);
    ingot_finalize(t.ctx);
    MPI_Finalize();
    return rc;
}

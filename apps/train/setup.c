/*
 * ingot-train's set-up, collective over the ranks: the context, the manifests' facts (read once,
 * by rank 0), the transform, the loaders, the communicator and its gradients, the all-reduce
 * measured alone, the choice of BLAS, the resume; and the checkpoint at a step boundary. Every
 * failure here is agreed on, so the job ends cleanly, with one message.
 */
#include "train/run.h"
#include "common/report.h"
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A failure this rank saw alone (a step's batch, its products, a reduction): others may wait in
 * a collective it will never join, so the job ends with MPI_Abort after this line. */
int train_fail(train_t *t, const char *what, ingot_status_t st)
{
    fprintf(stderr, TRAIN_TOOL ": rank %d: %s: %s (%s)\n", t->rank, what, ingot_status_string(st),
            ingot_last_error());
    t->local_fault = true;
    return TRAIN_EXIT_FAIL;
}

/* A failure of a collective call that every rank returned alike (ingot agreed on it, and said
 * why once): rank 0 names the step, every rank leaves through MPI_Finalize. */
int train_fail_shared(const train_t *t, const char *what, ingot_status_t st)
{
    if (t->rank == 0) {
        fprintf(stderr, TRAIN_TOOL ": %s: %s\n", what, ingot_status_string(st));
    }
    return TRAIN_EXIT_FAIL;
}

/* A failed CUDA or cuBLAS call in the products: the step's results are not to be used. */
int train_gemm_check(train_t *t)
{
    const char *e = train_gemm_error(&t->gemm);
    if (e == NULL) {
        return 0;
    }
    fprintf(stderr, TRAIN_TOOL ": rank %d: cuBLAS products: %s\n", t->rank, e);
    t->local_fault = true;
    return TRAIN_EXIT_FAIL;
}

int train_agree(int rc)
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

ingot_status_t train_loader_open(train_t *t, const char *manifest, uint64_t batch, uint64_t epochs,
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
    return st == INGOT_OK ? 0 : train_fail_shared(t, "ingot_grads_register", st);
}

/* T_ar: the all-reduce alone, as ingot-allreduce-bench --overlap measures it (median of 5 of
 * the slowest rank), on the gradient buffers before training writes them. */
static int train_measure_ar(train_t *t)
{
    double ms[5];
    for (int k = 0; k < 5; k++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = report_now();
        ingot_status_t st = INGOT_OK;
        for (size_t i = t->m.ntensors + 1; i-- > 0 && st == INGOT_OK;) {
            st = ingot_grads_ready(t->comm, i);
        }
        if (st == INGOT_OK) {
            st = ingot_grads_wait(t->comm);
        }
        if (st != INGOT_OK) {
            return train_fail(t, "all-reduce alone", st);
        }
        ms[k] = 1e3 * (report_now() - t0);
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
int train_checkpoint(train_t *t)
{
    if (t->a.checkpoint_dir == NULL) {
        return 0;
    }
    ingot_cursor_t c;
    ingot_status_t st = ingot_loader_save(t->train_l, &c);
    if (st != INGOT_OK) {
        return train_fail(t, "ingot_loader_save", st);
    }
    train_ckpt_meta_t meta = train_meta(t);
    meta.generation = t->generation;
    meta.epoch = c.epoch;
    meta.consumed = c.consumed;
    int rc = t->rank == 0 ? train_ckpt_write(t->a.checkpoint_dir, &t->m, &meta, &c) : 0;
    ingot_cursor_release(&c);
    rc = train_agree(rc != 0); /* rank 0's failure is everyone's: no rank may report a checkpoint */
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
        return train_agree(exists) ? TRAIN_EXIT_FAIL : 0;
    }
    train_ckpt_meta_t expect = train_meta(t), got;
    /* Rank 0 reads first and names what is wrong with the checkpoint; then the others read it
     * (from the shared folder; one that cannot says so itself). */
    int rc = t->rank == 0
                 ? train_ckpt_read(t->a.checkpoint_dir, &t->m, &expect, (uint32_t)t->world, &got, c)
                 : 0;
    if (train_agree(rc != 0) != 0) {
        return TRAIN_EXIT_FAIL;
    }
    if (t->rank != 0) {
        rc = train_ckpt_read(t->a.checkpoint_dir, &t->m, &expect, (uint32_t)t->world, &got, c);
    }
    if ((rc = train_agree(rc != 0)) != 0 && t->rank == 0) {
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

int train_setup(train_t *t, ingot_cursor_t *cursor, bool *have_cursor)
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
        return train_fail_shared(t, "ingot_comm_create", st);
    }
    uint64_t local = t->a.batch / (uint64_t)t->world, test_local = t->test_batch / t->world;
    rc = train_model_init(&t->m, t->a.model, t->a.hidden, local > test_local ? local : test_local,
                          t->a.seed, &t->gemm);
    if (train_agree(rc != 0) ||
        (rc = train_blas_choose(t->ctx, t->a.blas, train_model_gemm_elems(&t->m), &t->gemm,
                                t->blas_why, sizeof(t->blas_why))) != 0 ||
        (rc = train_register(t)) != 0 || (rc = train_measure_ar(t)) != 0 ||
        (rc = train_resume(t, cursor, have_cursor)) != 0) {
        return rc ? rc : TRAIN_EXIT_FAIL;
    }
    t->epochs = calloc(t->a.epochs, sizeof(*t->epochs));
    if ((st = train_loader_open(t, t->a.train, t->a.batch, t->a.epochs,
                                *have_cursor ? cursor : NULL, &t->train_l)) != INGOT_OK) {
        return train_fail_shared(t, "training loader", st);
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

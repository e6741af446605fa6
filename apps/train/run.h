/*
 * ingot-train's run: the state every part of the run shares (apps/ingot-train.c, setup.c,
 * loop.c, report.c), and the calls between them.
 */
#ifndef INGOT_APPS_TRAIN_RUN_H
#define INGOT_APPS_TRAIN_RUN_H

#include "train/train.h"
#include <ingot/collectives.h>
#include <ingot/loader.h>
#include <ingot/transform.h>
#include <ingot/vision.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TRAIN_TEST_BATCH         1000 /* test samples per evaluation step over all ranks (about) */
#define TRAIN_BUCKET_BYTES       (1u << 20)
#define TRAIN_FIRST_BUCKET_BYTES 8192

/* One epoch's figures (rank 0's table and JSON). */
typedef struct train_epoch {
    uint64_t epoch;
    double loss, accuracy, samples_per_s, stall_pct, wall_s;
    double reduce_ms, exposed_ms;        /* per step: all-reduce start to completion, and blocked */
    double compute_ms, step_ms, overlap; /* per step; overlap = max(compute, reduce) / step */
    uint64_t evaluated;
    uint64_t bytes_storage, bytes_disk; /* the training loader's, over all ranks: the remote's
                                           and the node disk tier's */
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

/* setup.c: a failure this rank saw alone (the job then ends with MPI_Abort), or one every rank
 * returned alike from a collective call (rank 0 names the step); the products' failure; the
 * worst of every rank's @p rc. */
int train_fail(train_t *t, const char *what, ingot_status_t st);
int train_fail_shared(const train_t *t, const char *what, ingot_status_t st);
int train_gemm_check(train_t *t);
int train_agree(int rc);
/* setup.c: a loader over @p manifest (the run's transform); everything before the first step
 * (collective; 0 or an exit code, agreed); the checkpoint at this step boundary (collective). */
ingot_status_t train_loader_open(train_t *t, const char *manifest, uint64_t batch, uint64_t epochs,
                                 const ingot_cursor_t *cursor, ingot_loader_h *l_p);
int train_setup(train_t *t, ingot_cursor_t *cursor, bool *have_cursor);
int train_checkpoint(train_t *t);
/* loop.c: the training loop, until the loader ends (0), a stop was asked for (85) or a failure. */
int train_loop(train_t *t);
/* report.c: the header block, an epoch's row (rank 0), the JSON report. */
void train_header(const train_t *t);
void train_report_epoch(const train_t *t, const train_epoch_t *r);
int train_json(const train_t *t); /* 0, or TRAIN_EXIT_FAIL (said) */

#endif

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
#include "train/run.h"
#include "common/cli.h"
#include "common/job.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


volatile sig_atomic_t train_stop_requested;

static void on_signal(int sig)
{
    (void)sig;
    train_stop_requested = 1;
}

int main(int argc, char **argv)
{
    train_t t;
    memset(&t, 0, sizeof(t));
    cli_quiet_begin(); /* every rank parses; a usage error is said once */
    train_args_parse(argc, argv, &t.a);
    cli_quiet_end();
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
    if ((rc == 0 || rc == TRAIN_EXIT_CHECKPOINTED) && t.rank == 0 && t.a.json != NULL &&
        train_json(&t) != 0 && rc == 0) {
        rc = TRAIN_EXIT_FAIL; /* the report could not be written (said); nothing else is lost */
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

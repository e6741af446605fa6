/*
 * ingot-train's report (rank 0): the header block, a row per epoch, and the JSON.
 */
#include "train/run.h"
#include "common/report.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

void train_header(const train_t *t)
{
    ingot_comm_stats_t cs = {.field_mask = INGOT_COMM_STATS_FIELD_SETUP |
                                           INGOT_COMM_STATS_FIELD_COUNTS};
    ingot_comm_stats(t->comm, &cs);
    report_header_versions(stdout, TRAIN_TOOL, t->world);
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

int train_json(const train_t *t)
{
    FILE *f = report_json_file_open(t->a.json);
    if (f == NULL) {
        return TRAIN_EXIT_FAIL;
    }
    report_json_t j;
    report_json_begin(&j, f);
    report_json_str(&j, "tool", TRAIN_TOOL);
    report_json_int(&j, "ranks", t->world);
    report_json_str(&j, "model", t->m.kind == TRAIN_MLP ? "mlp" : "softmax");
    report_json_str(&j, "blas", t->gemm.cuda != NULL ? "cuda" : "cpu");
    report_json_str(&j, "blas_reason", t->blas_why);
    report_json_u64(&j, "hidden", t->m.hidden);
    report_json_u64(&j, "global_batch", t->a.batch);
    report_json_num(&j, "lr", t->a.lr);
    report_json_num(&j, "momentum", t->a.momentum);
    report_json_num(&j, "t_ar_ms", t->t_ar_ms);
    report_json_array(&j, "epochs");
    for (size_t i = 0; i < t->nepochs; i++) {
        const train_epoch_t *r = &t->epochs[i];
        report_json_object(&j, NULL);
        report_json_u64(&j, "epoch", r->epoch + 1);
        report_json_num(&j, "loss", r->loss);
        report_json_num(&j, "test_accuracy", r->accuracy);
        report_json_u64(&j, "test_samples", r->evaluated);
        report_json_num(&j, "samples_per_s", r->samples_per_s);
        report_json_num(&j, "stall_pct", r->stall_pct);
        report_json_num(&j, "allreduce_ms_per_step", r->reduce_ms);
        report_json_num(&j, "allreduce_exposed_ms_per_step", r->exposed_ms);
        report_json_num(&j, "compute_ms_per_step", r->compute_ms);
        report_json_num(&j, "step_ms", r->step_ms);
        report_json_num(&j, "overlap_efficiency", r->overlap);
        report_json_num(&j, "wall_s", r->wall_s);
        report_json_u64(&j, "bytes_storage", r->bytes_storage);
        report_json_u64(&j, "bytes_disk", r->bytes_disk);
        report_json_close_object(&j);
    }
    report_json_close_array(&j);
    report_json_end(&j);
    return report_json_file_close(f, t->a.json) == 0 ? 0 : TRAIN_EXIT_FAIL;
}

void train_report_epoch(const train_t *t, const train_epoch_t *r)
{
    static const report_column_t cols[] = {{"loss", "", 8, 4},
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
    snprintf(who, sizeof(who), "%llu", (unsigned long long)r->epoch + 1);
    if (t->nepochs == 1) {
        report_table_head(stdout, "epoch", 5, cols, sizeof(cols) / sizeof(cols[0]));
    }
    report_table_row(stdout, who, 5, cols, sizeof(cols) / sizeof(cols[0]), v);
    fflush(stdout);
}

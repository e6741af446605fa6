/* The overlap mode's output on rank 0: header block, what was measured alone, a row per step,
 * the summary (overlap efficiency, exposed and hidden all-reduce, stall, background completions,
 * the cores of each rank's threads), and the JSON. */
#include "allreduce-bench/arb.h"

#include <string.h>

#define OUT_ARRAY_SIZE(_a) (sizeof(_a) / sizeof((_a)[0]))
#define OUT_WHO_WIDTH      6
#define OUT_WHO_MAX        24
#define OUT_FLOAT_BYTES    4
#define OUT_MB             1e6
#define OUT_PERCENT        100.0

static const report_column_t out_columns[S_COUNT] = {
    [S_STEP] = {"step", "ms", 9, 2},
    [S_WAIT] = {"wait", "ms", 9, 2},
    [S_EXPOSED] = {"exposed", "ms", 9, 2},
    [S_STALL] = {"stall", "ms", 9, 2},
    [S_BACKGROUND] = {"background", "reductions", 11, 0}};

static const char *const out_names[S_COUNT] = {[S_STEP] = "step_ms",
                                               [S_WAIT] = "wait_ms",
                                               [S_EXPOSED] = "exposed_ms",
                                               [S_STALL] = "stall_ms",
                                               [S_BACKGROUND] = "background"};

static void out_setup(FILE *out, const arb_args_t *a, const arb_overlap_t *o)
{
    char params[32];
    fprintf(out,
            "# overlap: ResNet-50 gradients, %zu tensors, %s parameters (%.1f MB float32), "
            "%llu buckets, op avg\n",
            o->model.n, arb_grouped(o->model.params, params, sizeof(params)),
            (double)o->model.params * OUT_FLOAT_BYTES / OUT_MB, (unsigned long long)o->buckets);
    fprintf(out,
            "# T_ar, the all-reduce alone (every gradient ready at once, then "
            "ingot_grads_wait; median of 5 steps of the slowest rank): %.2f ms\n",
            o->t_ar_ms);
    fprintf(out,
            "# compute %.2f ms per step%s: forward %.0f%% (slept), backward %.0f%% over "
            "the tensors last to first, each ready after its share by %s\n",
            o->compute_ms, a->compute_ms < 0 ? " (= T_ar)" : "", o->forward * 100,
            (1 - o->forward) * 100, a->ready_by_params ? "size" : "its layer's multiply-adds");
    if (a->manifest != NULL) {
        fprintf(out,
                "# loader %s, global batch %llu, host memory: ingest alone (batches back to "
                "back, slowest rank) %.2f ms per step\n",
                a->manifest, (unsigned long long)o->batch, o->ingest_ms);
    } else {
        fprintf(out, "# no loader (--manifest): ingest 0 ms per step\n");
    }
    fprintf(out,
            "# %llu steps after one untimed; per step the slowest rank's times, the ranks' "
            "background completions summed\n",
            (unsigned long long)o->nsteps);
}

static void out_steps(FILE *out, const arb_overlap_t *o)
{
    char who[OUT_WHO_MAX];
    report_table_head(out, "step", OUT_WHO_WIDTH, out_columns, S_COUNT);
    for (uint64_t i = 0; i < o->nsteps; i++) {
        snprintf(who, sizeof(who), "%llu", (unsigned long long)i);
        report_table_row(out, who, OUT_WHO_WIDTH, out_columns, S_COUNT, o->steps + i * S_COUNT);
    }
}

static void out_summary(FILE *out, const arb_setup_t *s, const arb_overlap_t *o,
                        const arb_summary_t *m)
{
    fprintf(out,
            "# median step %.2f ms; overlap efficiency = max(compute %.2f, T_ar %.2f, ingest "
            "%.2f) / median step = %.3f\n",
            m->step_ms, o->compute_ms, o->t_ar_ms, o->ingest_ms, m->efficiency);
    fprintf(out,
            "# (forward cannot hide a reduction: a step takes at least max(compute, forward "
            "+ T_ar, ingest) = %.2f ms, efficiency at most %.3f)\n",
            m->bound_ms, m->efficiency_max);
    fprintf(out,
            "# exposed all-reduce (medians): %.2f ms blocked in ingot_grads_wait, %.2f ms by "
            "exposed_ns; hidden = T_ar - exposed = %.2f ms (%.1f%% of T_ar)\n",
            m->wait_ms, m->exposed_ms, m->hidden_ms,
            o->t_ar_ms > 0 ? OUT_PERCENT * m->hidden_ms / o->t_ar_ms : 0);
    fprintf(out, "# data stall (median) %.2f ms; loader wall time per step %.2f ms\n", m->stall_ms,
            o->loader_wall_ms);
    fprintf(out,
            "# background completions %llu of %llu bucket reductions (all ranks; progress "
            "thread %s)\n",
            (unsigned long long)o->background, (unsigned long long)o->completed,
            s->setup.progress_thread ? "on" : "off");
    for (int r = 0; r < s->world; r++) {
        const arb_cpus_t *c = &o->cpus[r];
        fprintf(out, "# cores of rank %d: cpuset %s, ingest %s, trainer %s, progress thread %s\n",
                r, c->cpuset, c->ingest[0] ? c->ingest : "-", c->trainer[0] ? c->trainer : "-",
                c->progress[0] ? c->progress : "unbound");
    }
}

static void json_args(report_json_t *j, const arb_args_t *a, const arb_overlap_t *o)
{
    report_json_object(j, "args");
    report_json_u64(j, "steps", a->steps);
    report_json_num(j, "compute_ms", a->compute_ms);
    report_json_num(j, "forward", a->forward);
    report_json_str(j, "ready_by", a->ready_by_params ? "params" : "macs");
    report_json_str(j, "manifest", a->manifest ? a->manifest : "");
    report_json_u64(j, "batch", a->manifest ? o->batch : 0);
    report_json_close_object(j);
    report_json_object(j, "model");
    report_json_str(j, "name", "resnet50");
    report_json_u64(j, "tensors", o->model.n);
    report_json_u64(j, "params", o->model.params);
    report_json_u64(j, "buckets", o->buckets);
    report_json_close_object(j);
}

static void json_steps(report_json_t *j, const arb_overlap_t *o)
{
    report_json_array(j, "steps");
    for (uint64_t i = 0; i < o->nsteps; i++) {
        report_json_object(j, NULL);
        report_json_u64(j, "step", i);
        for (int k = 0; k < S_COUNT; k++) {
            report_json_num(j, out_names[k], o->steps[i * S_COUNT + k]);
        }
        report_json_close_object(j);
    }
    report_json_close_array(j);
}

static void json_summary(report_json_t *j, const arb_overlap_t *o, const arb_summary_t *m)
{
    report_json_object(j, "summary");
    report_json_num(j, "t_ar_ms", o->t_ar_ms);
    report_json_num(j, "compute_ms", o->compute_ms);
    report_json_num(j, "forward_fraction", o->forward);
    report_json_num(j, "ingest_ms", o->ingest_ms);
    report_json_num(j, "loader_wall_per_step_ms", o->loader_wall_ms);
    report_json_num(j, "median_step_ms", m->step_ms);
    report_json_num(j, "efficiency", m->efficiency);
    report_json_num(j, "bound_ms", m->bound_ms);
    report_json_num(j, "efficiency_max", m->efficiency_max);
    report_json_num(j, "exposed_wait_ms", m->wait_ms);
    report_json_num(j, "exposed_stats_ms", m->exposed_ms);
    report_json_num(j, "hidden_ms", m->hidden_ms);
    report_json_num(j, "stall_ms", m->stall_ms);
    report_json_u64(j, "background", o->background);
    report_json_u64(j, "completed", o->completed);
    report_json_close_object(j);
}

static void json_cpus(report_json_t *j, const arb_setup_t *s, const arb_overlap_t *o)
{
    report_json_array(j, "placement");
    for (int r = 0; r < s->world; r++) {
        report_json_object(j, NULL);
        report_json_int(j, "rank", r);
        report_json_str(j, "cpuset", o->cpus[r].cpuset);
        report_json_str(j, "ingest_cpuset", o->cpus[r].ingest);
        report_json_str(j, "trainer_cpuset", o->cpus[r].trainer);
        report_json_str(j, "progress_cpuset", o->cpus[r].progress);
        report_json_close_object(j);
    }
    report_json_close_array(j);
}

static int out_json(const arb_args_t *a, const arb_setup_t *s, const arb_overlap_t *o,
                    const arb_summary_t *m)
{
    FILE *f = report_json_file_open(a->json);
    if (f == NULL) {
        return -1;
    }
    report_json_t j;
    report_json_begin(&j, f);
    arb_json_setup(&j, s, "overlap");
    json_args(&j, a, o);
    json_steps(&j, o);
    json_summary(&j, o, m);
    json_cpus(&j, s, o);
    report_json_str(&j, "check", "ok");
    report_json_end(&j);
    return report_json_file_close(f, a->json);
}

int arb_overlap_report(const arb_args_t *a, const arb_setup_t *s, const arb_overlap_t *o)
{
    arb_summary_t m;
    arb_overlap_summary(o, &m);
    if (a->json == NULL || strcmp(a->json, "-") != 0) {
        arb_print_header(stdout, s);
        out_setup(stdout, a, o);
        out_steps(stdout, o);
        out_summary(stdout, s, o, &m);
    }
    return a->json != NULL ? out_json(a, s, o, &m) : 0;
}

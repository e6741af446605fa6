/* The sweep's output on rank 0, in nccl-tests' manner: header block, a table per size with its
 * out-of-place and in-place halves and a check cell, the average bus bandwidth, and the JSON. */
#include "allreduce-bench/arb.h"

#include <stdlib.h>
#include <string.h>

#define OUT_ARRAY_SIZE(_a) (sizeof(_a) / sizeof((_a)[0]))
#define OUT_WHO_MAX        64
#define OUT_MODE_COLS      5 /* time, algbw, busbw, mpi_busbw, ratio */
#define OUT_NUM_COLS       (2 * OUT_MODE_COLS)

/* The first four columns (size, count, type, redop) are the table's "who" cell. */
#define OUT_WHO_FMT "%12s %12s %7s %5s"

/* clang-format off */
static const report_column_t out_columns[] = {
    {"time", "us", 10, 1}, {"algbw", "GB/s", 7, 2}, {"busbw", "GB/s", 7, 2},
    {"mpi_busbw", "GB/s", 9, 2}, {"ratio", "ingot/mpi", 9, 2},
    {"time", "us", 10, 1}, {"algbw", "GB/s", 7, 2}, {"busbw", "GB/s", 7, 2},
    {"mpi_busbw", "GB/s", 9, 2}, {"ratio", "ingot/mpi", 9, 2},
    {"check", "", 6, 0}};
/* clang-format on */

static int out_ok(const arb_row_t *r)
{
    return r->oop.wrong == 0 && r->ip.wrong == 0;
}

static void out_head(FILE *out, int who_width)
{
    char who[OUT_WHO_MAX];
    int half = 0;
    for (int i = 0; i < OUT_MODE_COLS; i++) half += 1 + out_columns[i].width;
    fprintf(out, "%*s %-*s%s\n", who_width, "", half, "out-of-place", "in-place");
    snprintf(who, sizeof(who), OUT_WHO_FMT, "size(B)", "count", "type", "redop");
    report_table_head(out, who, who_width, out_columns, OUT_ARRAY_SIZE(out_columns));
}

/* report.h's rows hold numbers only: the row is written to a memory stream so that the check
 * cell, text, can follow it on the same line. */
static void out_row(FILE *out, const arb_row_t *r, int who_width)
{
    char who[OUT_WHO_MAX], num[2][24];
    const arb_mode_result_t *m[2] = {&r->oop, &r->ip};
    double v[OUT_NUM_COLS];
    for (int k = 0; k < 2; k++) {
        const double mode[OUT_MODE_COLS] = {m[k]->time_us, m[k]->algbw, m[k]->busbw,
                                            m[k]->mpi_busbw, m[k]->ratio};
        memcpy(v + k * OUT_MODE_COLS, mode, sizeof(mode));
    }
    snprintf(num[0], sizeof(num[0]), "%llu", (unsigned long long)r->bytes);
    snprintf(num[1], sizeof(num[1]), "%llu", (unsigned long long)r->count);
    snprintf(who, sizeof(who), OUT_WHO_FMT, num[0], num[1], "float", "sum");
    char *line = NULL;
    size_t len = 0;
    FILE *m_out = open_memstream(&line, &len);
    if (m_out == NULL) {
        return;
    }
    report_table_row(m_out, who, who_width, out_columns, OUT_NUM_COLS, v);
    fclose(m_out);
    if (len > 0 && line[len - 1] == '\n') {
        line[len - 1] = '\0';
    }
    fprintf(out, "%s %*s\n", line, out_columns[OUT_NUM_COLS].width, out_ok(r) ? "ok" : "FAIL");
    free(line);
}

/* nccl-tests' summary: the bus bandwidth averaged over every row and both modes. */
static void out_average(const arb_sweep_t *sw, double *ingot_p, double *mpi_p)
{
    double ingot = 0, mpi = 0;
    for (size_t i = 0; i < sw->nrows; i++) {
        ingot += sw->rows[i].oop.busbw + sw->rows[i].ip.busbw;
        mpi += sw->rows[i].oop.mpi_busbw + sw->rows[i].ip.mpi_busbw;
    }
    *ingot_p = sw->nrows ? ingot / (2.0 * (double)sw->nrows) : 0;
    *mpi_p = sw->nrows ? mpi / (2.0 * (double)sw->nrows) : 0;
}

static void out_print(FILE *out, const arb_args_t *a, const arb_setup_t *s, const arb_sweep_t *sw)
{
    char who[OUT_WHO_MAX];
    int who_width = snprintf(who, sizeof(who), OUT_WHO_FMT, "", "", "", "");
    size_t failed = 0;
    double avg, avg_mpi;
    arb_print_header(out, s);
    fprintf(out,
            "# sweep %llu .. %llu bytes, factor %llu, float32 sum, %llu iterations after %llu "
            "warm-up; reference %s\n",
            (unsigned long long)a->min_bytes, (unsigned long long)a->max_bytes,
            (unsigned long long)a->factor, (unsigned long long)a->iters,
            (unsigned long long)a->warmup,
            s->setup.backend == INGOT_COMM_BACKEND_MPI
                ? "MPI_Allreduce on the same buffers (MPI_IN_PLACE in place)"
                : "none (device buffers; this MPI is not CUDA-aware): mpi columns are 0");
    fprintf(out,
            "# time: max over ranks of the mean; algbw = size / time; busbw = algbw * "
            "2(n-1)/n = algbw * %.3f; ratio = busbw / mpi_busbw\n",
            arb_bus_factor(s->world));
    out_head(out, who_width);
    for (size_t i = 0; i < sw->nrows; i++) {
        out_row(out, &sw->rows[i], who_width);
        failed += !out_ok(&sw->rows[i]);
    }
    out_average(sw, &avg, &avg_mpi);
    fprintf(out, "# Avg bus bandwidth: ingot %.3f GB/s, MPI_Allreduce %.3f GB/s\n", avg, avg_mpi);
    fprintf(out, "# check: %zu of %zu sizes %s\n", sw->nrows - failed, sw->nrows,
            failed ? "ok, the others FAIL" : "ok");
}

static void json_mode(report_json_t *j, const char *key, const arb_mode_result_t *m)
{
    report_json_object(j, key);
    report_json_num(j, "time_us", m->time_us);
    report_json_num(j, "algbw_gbs", m->algbw);
    report_json_num(j, "busbw_gbs", m->busbw);
    report_json_num(j, "mpi_time_us", m->mpi_time_us);
    report_json_num(j, "mpi_busbw_gbs", m->mpi_busbw);
    report_json_num(j, "ratio", m->ratio);
    report_json_u64(j, "wrong", m->wrong);
    report_json_close_object(j);
}

static void json_args(report_json_t *j, const arb_args_t *a)
{
    report_json_object(j, "args");
    report_json_u64(j, "minbytes", a->min_bytes);
    report_json_u64(j, "maxbytes", a->max_bytes);
    report_json_u64(j, "stepfactor", a->factor);
    report_json_u64(j, "iters", a->iters);
    report_json_u64(j, "warmup_iters", a->warmup);
    report_json_close_object(j);
}

static int out_json(const arb_args_t *a, const arb_setup_t *s, const arb_sweep_t *sw)
{
    FILE *f = report_json_file_open(a->json);
    double avg, avg_mpi;
    if (f == NULL) {
        return -1;
    }
    report_json_t j;
    report_json_begin(&j, f);
    arb_json_setup(&j, s, "sweep");
    json_args(&j, a);
    report_json_num(&j, "bus_factor", arb_bus_factor(s->world));
    report_json_array(&j, "rows");
    for (size_t i = 0; i < sw->nrows; i++) {
        const arb_row_t *r = &sw->rows[i];
        report_json_object(&j, NULL);
        report_json_u64(&j, "size", r->bytes);
        report_json_u64(&j, "count", r->count);
        report_json_str(&j, "type", "float");
        report_json_str(&j, "redop", "sum");
        json_mode(&j, "out_of_place", &r->oop);
        json_mode(&j, "in_place", &r->ip);
        report_json_str(&j, "check", out_ok(r) ? "ok" : "FAIL");
        report_json_close_object(&j);
    }
    report_json_close_array(&j);
    out_average(sw, &avg, &avg_mpi);
    report_json_num(&j, "avg_busbw_gbs", avg);
    report_json_num(&j, "avg_mpi_busbw_gbs", avg_mpi);
    report_json_end(&j);
    return report_json_file_close(f, a->json);
}

int arb_sweep_report(const arb_args_t *a, const arb_setup_t *s, const arb_sweep_t *sw)
{
    if (a->json == NULL || strcmp(a->json, "-") != 0) {
        out_print(stdout, a, s, sw);
    }
    return a->json != NULL ? out_json(a, s, sw) : 0;
}

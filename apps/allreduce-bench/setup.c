/*
 * ingot-allreduce-bench's set-up (context, communicator, its backend) and what both modes share:
 * error reports, status agreement, time, the header block and the JSON members of the set-up.
 */
#include "allreduce-bench/arb.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SETUP_ARRAY_SIZE(_a) (sizeof(_a) / sizeof((_a)[0]))
#define SETUP_GROUP          1000

/* The INGOT_* variables that change what a run measures. */
static const char *const setup_vars[] = {
    "INGOT_COMM_BACKEND",       "INGOT_COMM_RING_MIN", "INGOT_COMM_SEGMENT", "INGOT_BUCKET_BYTES",
    "INGOT_FIRST_BUCKET_BYTES", "INGOT_BIND",          "INGOT_INGEST_PACING"};
static const char *const setup_env_prefixes[] = {"INGOT_", "UCX_", "MALLOC_"};

ingot_status_t arb_fail(const arb_setup_t *s, const char *what, ingot_status_t st)
{
    const char *err = ingot_last_error();
    char who[32] = ""; /* no rank before ingot_init */
    if (s != NULL && s->rank >= 0) {
        snprintf(who, sizeof(who), "rank %d: ", s->rank);
    }
    fprintf(stderr, ARB_TOOL ": %s%s: %s%s%s\n", who, what, ingot_status_string(st),
            *err ? ": " : "", err);
    return st;
}

ingot_status_t arb_agree(ingot_status_t st)
{
    int mine = (int)st, low = 0;
    /* Errors are negative: the lowest status is an error whenever any rank has one. */
    if (MPI_Allreduce(&mine, &low, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS) {
        return INGOT_ERR_MPI;
    }
    return low < 0 ? (ingot_status_t)low : st;
}

uint64_t arb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * (uint64_t)ARB_NS_PER_S + (uint64_t)ts.tv_nsec;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

double arb_median(double *v, size_t n)
{
    if (n == 0) {
        return 0;
    }
    qsort(v, n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

const char *arb_grouped(uint64_t v, char *buf, size_t len)
{
    if (v < SETUP_GROUP) {
        snprintf(buf, len, "%llu", (unsigned long long)v);
        return buf;
    }
    char head[32];
    arb_grouped(v / SETUP_GROUP, head, sizeof(head));
    snprintf(buf, len, "%s,%03llu", head, (unsigned long long)(v % SETUP_GROUP));
    return buf;
}

/* The communicator of --backend; its SETUP stats. */
static ingot_status_t setup_comm(const arb_args_t *a, arb_setup_t *s)
{
    ingot_comm_params_t p = {.field_mask = a->backend_set ? INGOT_COMM_PARAM_FIELD_BACKEND : 0,
                             .backend = a->backend};
    ingot_status_t st = ingot_comm_create(s->ctx, &p, &s->comm);
    if (st != INGOT_OK) {
        return st; /* collective and agreed: ingot said why, once */
    }
    s->setup.field_mask = INGOT_COMM_STATS_FIELD_SETUP;
    if ((st = ingot_comm_stats(s->comm, &s->setup)) != INGOT_OK) {
        arb_fail(s, "ingot_comm_stats", st);
    }
    return st;
}

static ingot_status_t setup_ctx(arb_setup_t *s)
{
    ingot_ctx_attr_t attr = {.field_mask = INGOT_CTX_ATTR_FIELD_RANK | INGOT_CTX_ATTR_FIELD_SIZE |
                                           INGOT_CTX_ATTR_FIELD_THREAD_LEVEL};
    ingot_status_t st = ingot_init(NULL, &s->ctx);
    if (st != INGOT_OK) {
        return st; /* agreed on every rank and said once (the variable or the step) */
    }
    if ((st = ingot_ctx_query(s->ctx, &attr)) != INGOT_OK) {
        return arb_fail(s, "ingot_ctx_query", st);
    }
    s->rank = attr.rank;
    s->world = attr.size;
    s->thread_level = attr.mpi_thread_level;
    return INGOT_OK;
}

int arb_setup(const arb_args_t *a, arb_setup_t *s)
{
    memset(s, 0, sizeof(*s));
    s->rank = -1;
    ingot_status_t st = setup_ctx(s);
    if (st == INGOT_OK) {
        st = arb_agree(setup_comm(a, s));
    }
    if (st == INGOT_OK &&
        (st = report_ranks_gather(s->ctx, MPI_COMM_WORLD, &s->ranks)) != INGOT_OK) {
        arb_fail(s, "gathering the rank map", st);
    }
    if (st != INGOT_OK) {
        arb_teardown(s);
        return ARB_EXIT_FAIL;
    }
    return 0;
}

void arb_teardown(arb_setup_t *s)
{
    ingot_comm_destroy(s->comm);
    ingot_finalize(s->ctx);
    free(s->ranks);
    s->comm = NULL;
    s->ctx = NULL;
    s->ranks = NULL;
}

static const char *thread_level_name(int level)
{
    switch (level) {
    case MPI_THREAD_SINGLE: return "single";
    case MPI_THREAD_FUNNELED: return "funneled";
    case MPI_THREAD_SERIALIZED: return "serialized";
    case MPI_THREAD_MULTIPLE: return "multiple";
    default: return "unknown";
    }
}

void arb_print_header(FILE *out, const arb_setup_t *s)
{
    const ingot_comm_stats_t *c = &s->setup;
    report_header_versions(out, ARB_TOOL, s->world);
    report_header_config(out, setup_vars, SETUP_ARRAY_SIZE(setup_vars));
    report_header_ranks(out, s->ranks, s->world);
    fprintf(out, "# backend %s: %s\n", ingot_comm_backend_name(c->backend), c->reason);
    fprintf(out, "# progress thread %s%s%s; MPI thread level %s\n",
            c->progress_thread ? "on" : "off", c->progress_thread ? ", cpus " : "",
            c->progress_thread ? c->progress_cpuset : "", thread_level_name(s->thread_level));
}

void arb_json_setup(report_json_t *j, const arb_setup_t *s, const char *mode)
{
    const ingot_comm_stats_t *c = &s->setup;
    report_json_str(j, "tool", ARB_TOOL);
    report_json_str(j, "version", ingot_version_string());
    report_json_str(j, "mode", mode);
    report_json_int(j, "ranks", s->world);
    report_json_str(j, "backend", ingot_comm_backend_name(c->backend));
    report_json_str(j, "backend_reason", c->reason);
    report_json_int(j, "progress_thread", c->progress_thread);
    report_json_str(j, "progress_cpuset", c->progress_cpuset);
    report_json_str(j, "mpi_thread_level", thread_level_name(s->thread_level));
    report_json_env(j, setup_env_prefixes, SETUP_ARRAY_SIZE(setup_env_prefixes));
}

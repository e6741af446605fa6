/* What every benchmark prints: header block, table, JSON, progress bar (see report.h). */
#include "common/report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPORT_NSEC_PER_SEC 1e9
#define REPORT_BAR_WIDTH    40
#define REPORT_VALUE_MAX    256
#define REPORT_CTRL_MAX     0x20 /* JSON escapes the characters below this one */

extern char **environ;

/* ---------------------------------------------------------------- header block */

static void report_rank_fill(ingot_ctx_h ctx, report_rank_t *me)
{
    ingot_placement_t pl = {.field_mask = INGOT_PLACEMENT_FIELD_NODE | INGOT_PLACEMENT_FIELD_GPU};
    memset(me, 0, sizeof(*me));
    if (ingot_placement_get(ctx, &pl) != INGOT_OK) {
        return;
    }
    snprintf(me->host, sizeof(me->host), "%.*s", REPORT_HOST_MAX - 1, pl.hostname);
    if (pl.cuda_device >= 0) {
        snprintf(me->device, sizeof(me->device), "cuda%d", pl.cuda_device);
    } else {
        snprintf(me->device, sizeof(me->device), "host");
    }
}

ingot_status_t report_ranks_gather(ingot_ctx_h ctx, MPI_Comm comm, report_rank_t **all_p)
{
    report_rank_t me, *all = NULL;
    int rank, size, ok, all_ok = 0;
    report_rank_fill(ctx, &me);
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS) {
        return INGOT_ERR_MPI;
    }
    ok = rank != 0 || (all = calloc((size_t)size, sizeof(*all))) != NULL;
    if (MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS || !all_ok) {
        free(all);
        return all_ok ? INGOT_ERR_MPI : INGOT_ERR_NO_MEMORY;
    }
    if (MPI_Gather(&me, (int)sizeof(me), MPI_BYTE, all, (int)sizeof(me), MPI_BYTE, 0, comm) !=
        MPI_SUCCESS) {
        free(all);
        return INGOT_ERR_MPI;
    }
    *all_p = all;
    return INGOT_OK;
}

void report_header_versions(FILE *out, const char *tool, int ranks)
{
    char mpi[MPI_MAX_LIBRARY_VERSION_STRING];
    int len = 0;
    ingot_runtime_info_t info = {.field_mask = INGOT_RUNTIME_INFO_FIELD_LIBS};
    MPI_Get_library_version(mpi, &len);
    mpi[strcspn(mpi, ",\n")] = '\0'; /* "Open MPI v4.1.4, package: ..." -> its first part */
    ingot_runtime_info_query(&info);
    fprintf(out, "# %s %s, %d rank(s)\n", tool, ingot_version_string(), ranks);
    fprintf(out, "# %s, hwloc %s, zstd %s, zlib %s\n", mpi, info.version_hwloc, info.version_zstd,
            info.version_zlib);
}

void report_header_config(FILE *out, const char *const *names, size_t n)
{
    char value[REPORT_VALUE_MAX];
    fprintf(out, "#");
    for (size_t i = 0; i < n; i++) {
        if (ingot_config_get(names[i], value, sizeof(value)) == INGOT_OK) {
            fprintf(out, " %s=%s", names[i], value);
        }
    }
    fprintf(out, "\n");
}

void report_header_ranks(FILE *out, const report_rank_t *ranks, int n)
{
    fprintf(out, "# rank -> host, device:");
    for (int r = 0; r < n; r++) {
        fprintf(out, " %d->%s:%s", r, ranks[r].host, ranks[r].device);
    }
    fprintf(out, "\n");
}

/* ---------------------------------------------------------------- table */

void report_table_head(FILE *out, const char *who, int who_width, const report_column_t *cols,
                       size_t n)
{
    fprintf(out, "%*s", who_width, who);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, " %*s", cols[i].width, cols[i].name);
    }
    fprintf(out, "\n%*s", who_width, "");
    for (size_t i = 0; i < n; i++) {
        fprintf(out, " %*s", cols[i].width, cols[i].unit);
    }
    fprintf(out, "\n");
}

void report_table_row(FILE *out, const char *who, int who_width, const report_column_t *cols,
                      size_t n, const double *values)
{
    fprintf(out, "%*s", who_width, who);
    for (size_t i = 0; i < n; i++) {
        fprintf(out, " %*.*f", cols[i].width, cols[i].decimals, values[i]);
    }
    fprintf(out, "\n");
}

/* ---------------------------------------------------------------- JSON */

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(out, "\\%c", *p);
        } else if (*p < REPORT_CTRL_MAX) {
            fprintf(out, "\\u%04x", *p);
        } else {
            fputc(*p, out);
        }
    }
    fputc('"', out);
}

/* The separator and the key of the next member at the current depth. */
static void json_member(report_json_t *j, const char *key)
{
    if (!j->first[j->depth]) {
        fputc(',', j->out);
    }
    j->first[j->depth] = false;
    if (key != NULL) {
        json_string(j->out, key);
        fputc(':', j->out);
    }
}

static void json_open(report_json_t *j, const char *key, char bracket)
{
    json_member(j, key);
    fputc(bracket, j->out);
    if (j->depth + 1 < REPORT_JSON_DEPTH) {
        j->first[++j->depth] = true;
    }
}

static void json_close(report_json_t *j, char bracket)
{
    fputc(bracket, j->out);
    if (j->depth > 0) {
        j->depth--;
    }
}

FILE *report_json_file_open(const char *path)
{
    FILE *f = strcmp(path, "-") == 0 ? stdout : fopen(path, "w");
    if (f == NULL) {
        fprintf(stderr, "%s: cannot write %s: %s\n", program_invocation_short_name, path,
                strerror(errno));
    }
    return f;
}

int report_json_file_close(FILE *f, const char *path)
{
    if (f == stdout ? fflush(f) == 0 : fclose(f) == 0) {
        return 0;
    }
    fprintf(stderr, "%s: writing %s failed: %s\n", program_invocation_short_name, path,
            strerror(errno));
    return -1;
}

void report_json_begin(report_json_t *j, FILE *out)
{
    j->out = out;
    j->depth = 0;
    j->first[0] = true;
    fputc('{', out);
    j->first[++j->depth] = true;
}

void report_json_end(report_json_t *j)
{
    json_close(j, '}');
    fputc('\n', j->out);
}

void report_json_object(report_json_t *j, const char *key)
{
    json_open(j, key, '{');
}
void report_json_array(report_json_t *j, const char *key)
{
    json_open(j, key, '[');
}
void report_json_close_object(report_json_t *j)
{
    json_close(j, '}');
}
void report_json_close_array(report_json_t *j)
{
    json_close(j, ']');
}

void report_json_str(report_json_t *j, const char *key, const char *value)
{
    json_member(j, key);
    json_string(j->out, value);
}

void report_json_num(report_json_t *j, const char *key, double value)
{
    json_member(j, key);
    fprintf(j->out, "%.6g", value);
}

void report_json_u64(report_json_t *j, const char *key, uint64_t value)
{
    json_member(j, key);
    fprintf(j->out, "%" PRIu64, value);
}

void report_json_int(report_json_t *j, const char *key, long long value)
{
    json_member(j, key);
    fprintf(j->out, "%lld", value);
}

static bool env_selected(const char *entry, const char *const *prefixes, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strncmp(entry, prefixes[i], strlen(prefixes[i])) == 0) {
            return true;
        }
    }
    return false;
}

void report_json_env(report_json_t *j, const char *const *prefixes, size_t n)
{
    char name[REPORT_VALUE_MAX];
    report_json_object(j, "env");
    for (char **e = environ; *e != NULL; e++) {
        const char *eq = strchr(*e, '=');
        if (eq == NULL || !env_selected(*e, prefixes, n)) {
            continue;
        }
        snprintf(name, sizeof(name), "%.*s", (int)(eq - *e), *e);
        report_json_str(j, name, eq + 1);
    }
    report_json_close_object(j);
}

/* ---------------------------------------------------------------- progress */

void report_progress(FILE *out, uint64_t done, uint64_t total, const char *unit, double elapsed_s)
{
    int fill = total ? (int)(REPORT_BAR_WIDTH * (done > total ? total : done) / total)
                     : REPORT_BAR_WIDTH;
    fprintf(out, "\r[%.*s%*s] %" PRIu64 "/%" PRIu64 " %s %.1fs", fill,
            "########################################", REPORT_BAR_WIDTH - fill, "", done, total,
            unit, elapsed_s);
}

double report_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / REPORT_NSEC_PER_SEC;
}

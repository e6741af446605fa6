/*
 * Job-wide configuration check: rank 0 broadcasts the canonical values of its job-wide
 * variables, every rank compares its own, and only if some rank differs are the per-rank
 * verdicts gathered so rank 0 can name the ranks. Cost in the common case: one broadcast of a
 * few hundred bytes and one all-reduce of an int.
 */
#include "runtime/context_impl.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/errors.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK_VALUE_MAX   256
#define CHECK_RANKS_SHOWN 16
#define CHECK_DIFFERS     1
#define CHECK_NO_MEMORY   2

#define CHECK_FIELDS_MAX 256

/* The job-wide variables of every registered table, in table order (the same on every rank). */
typedef struct job_fields {
    size_t count;
    const ingot_config_field_t *field[CHECK_FIELDS_MAX];
    const void *value[CHECK_FIELDS_MAX]; /* the parsed value of field[i] */
} job_fields_t;

static void collect_job_fields(job_fields_t *jf)
{
    jf->count = 0;
    for (size_t t = 0; t < ingot_config_table_count(); t++) {
        const ingot_config_table_t *tab = ingot_config_table_at(t);
        for (size_t i = 0; i < tab->count && jf->count < CHECK_FIELDS_MAX; i++) {
            if (tab->fields[i].scope == INGOT_CONFIG_SCOPE_JOB) {
                jf->field[jf->count] = &tab->fields[i];
                jf->value[jf->count++] = (const char *)tab->values + tab->fields[i].offset;
            }
        }
    }
}

/* Canonical values of the job-wide fields, NUL-separated, into @p buf (returns the length). */
static int pack_job_values(const job_fields_t *jf, char *buf, size_t buflen)
{
    size_t o = 0;
    for (size_t i = 0; i < jf->count; i++) {
        char v[CHECK_VALUE_MAX];
        ingot_config_format(jf->field[i], jf->value[i], v, sizeof(v));
        size_t n = strlen(v) + 1;
        if (o + n > buflen) {
            return -1;
        }
        memcpy(buf + o, v, n);
        o += n;
    }
    return (int)o;
}

static void report_ranks(const ingot_config_field_t *f, const char *root_value,
                         const unsigned char *verdicts, size_t nfields, size_t field, int size,
                         int strict)
{
    char ranks[256] = "";
    size_t o = 0;
    int count = 0;
    for (int r = 0; r < size; r++) {
        /* verdicts != NULL: rank 0 reports only when no rank flagged CHECK_NO_MEMORY (MPI_BOR).
         * NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
        if (!verdicts[(size_t)r * nfields + field]) {
            continue;
        }
        if (count++ < CHECK_RANKS_SHOWN && o < sizeof(ranks)) {
            o += (size_t)snprintf(ranks + o, sizeof(ranks) - o, "%s%d", o ? "," : "", r);
        }
    }
    if (count == 0) {
        return;
    }
    ingot_log(strict ? INGOT_LOG_LEVEL_ERROR : INGOT_LOG_LEVEL_WARN,
              "job-wide variable " INGOT_ENV_PREFIX "%s differs across ranks: rank 0 has '%s', "
              "rank(s) %s%s (%d of %d) have other values; set it identically on every rank",
              f->name, root_value, ranks, count > CHECK_RANKS_SHOWN ? ",..." : "", count, size);
}

ingot_status_t ingot_config_check_job(MPI_Comm comm, int strict)
{
    char mine[4096], root[4096];
    job_fields_t jf;
    collect_job_fields(&jf);
    int rank, size, len = pack_job_values(&jf, mine, sizeof(mine));
    ingot_status_t st;
    if (len < 0) {
        ingot_error("job-wide configuration does not fit in %zu bytes", sizeof(mine));
        return INGOT_ERR_INTERNAL; /* same table on every rank: fails everywhere alike */
    }
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int root_len = len;
    if ((st = INGOT_MPI_CALL("job config check", MPI_Bcast, &root_len, 1, MPI_INT, 0, comm)) ||
        (st = INGOT_MPI_CALL("job config check", MPI_Bcast, rank == 0 ? mine : root, root_len,
                             MPI_CHAR, 0, comm))) {
        return st;
    }
    const char *root_values = (rank == 0) ? mine : root;

    /* Compare field by field. */
    size_t nfields = jf.count;
    unsigned char verdict[CHECK_FIELDS_MAX] = {0};
    int differs = 0;
    const char *pm = mine, *pr = root_values;
    for (size_t i = 0; i < nfields; i++) {
        const ingot_config_field_t *f = jf.field[i];
        if (strcmp(pm, pr) != 0) {
            verdict[i] = 1;
            differs = 1;
            ingot_log(strict ? INGOT_LOG_LEVEL_ERROR : INGOT_LOG_LEVEL_WARN,
                      INGOT_ENV_PREFIX "%s='%s' on rank %d, but rank 0 has '%s' (job-wide "
                                       "variables must be equal on every rank)",
                      f->name, pm, rank, pr);
        }
        pm += strlen(pm) + 1;
        pr += strlen(pr) + 1;
    }
    /* Rank 0 allocates the verdict table up front, so a failure is agreed on by every rank. */
    unsigned char *all = NULL;
    int flags = differs ? CHECK_DIFFERS : 0, any = 0;
    if (rank == 0 && (all = ingot_calloc((size_t)size, nfields, "job config verdicts")) == NULL) {
        flags |= CHECK_NO_MEMORY;
    }
    if ((st = INGOT_MPI_CALL("job config check", MPI_Allreduce, &flags, &any, 1, MPI_INT, MPI_BOR,
                             comm))) {
        free(all);
        return st;
    }
    if (any != CHECK_DIFFERS) { /* 0: all equal; NO_MEMORY: cannot gather */
        free(all);
        return (any & CHECK_NO_MEMORY) ? INGOT_ERR_NO_MEMORY : INGOT_OK;
    }
    st = INGOT_MPI_CALL("job config check", MPI_Gather, verdict, (int)nfields, MPI_UNSIGNED_CHAR,
                        all, (int)nfields, MPI_UNSIGNED_CHAR, 0, comm);
    if (st == INGOT_OK && rank == 0) {
        const char *pv = root_values;
        for (size_t i = 0; i < nfields; i++) {
            report_ranks(jf.field[i], pv, all, nfields, i, size, strict);
            pv += strlen(pv) + 1;
        }
    }
    free(all);
    if (st != INGOT_OK) {
        return st;
    }
    return strict ? INGOT_ERR_CONFIG : INGOT_OK;
}

/*
 * Parser of the INGOT_* table: sizes ("64MiB"), durations ("250ms"), booleans, enums, integers
 * with ranges and validated strings. Every value is parsed strictly (no trailing garbage, no
 * silent overflow, no empty values); an error names the variable, the value and the syntax.
 */
#include "base/config.h"
#include "base/log.h"
#include "base/status.h"
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>


#define CONFIG_ERR_MAX     512
#define CONFIG_VALUE_MAX   512
#define CONFIG_FRAC_DIGITS 9

typedef struct unit {
    const char *name;
    uint64_t mult;
} unit_t;

/* Unit tables, one row per magnitude: kept as laid out by hand. */
/* clang-format off */
static const unit_t size_units[] = {
    {"", 1}, {"b", 1},
    {"k", 1ull << 10}, {"kib", 1ull << 10}, {"kb", 1000ull},
    {"m", 1ull << 20}, {"mib", 1ull << 20}, {"mb", 1000000ull},
    {"g", 1ull << 30}, {"gib", 1ull << 30}, {"gb", 1000000000ull},
    {"t", 1ull << 40}, {"tib", 1ull << 40}, {"tb", 1000000000000ull},
};
/* Canonical output units, largest first (binary only). */
static const unit_t size_out_units[] = {
    {"TiB", 1ull << 40}, {"GiB", 1ull << 30}, {"MiB", 1ull << 20}, {"KiB", 1ull << 10},
};
static const unit_t duration_units[] = {
    {"ns", 1ull}, {"us", 1000ull}, {"ms", 1000000ull}, {"s", 1000000000ull},
    {"m", 60000000000ull}, {"min", 60000000000ull}, {"h", 3600000000000ull},
};
static const unit_t duration_out_units[] = {
    {"h", 3600000000000ull}, {"m", 60000000000ull}, {"s", 1000000000ull},
    {"ms", 1000000ull}, {"us", 1000ull}, {"ns", 1ull},
};
/* clang-format on */

static const char *const bool_true[] = {"y", "yes", "on", "true", "1"};
static const char *const bool_false[] = {"n", "no", "off", "false", "0"};

const char *ingot_config_scope_name(ingot_config_scope_t scope)
{
    return (scope == INGOT_CONFIG_SCOPE_JOB) ? "job-wide" : "per-rank";
}

/* ---------------------------------------------------------------- registry */

#define CONFIG_TABLES_MAX 32

static ingot_config_table_t *config_tables[CONFIG_TABLES_MAX];
static size_t config_ntables;

void ingot_config_register(ingot_config_table_t *table)
{
    if (config_ntables == CONFIG_TABLES_MAX) {
        abort(); /* a build with more modules than the registry holds: raise the limit */
    }
    size_t i = config_ntables++;
    for (; i > 0 && config_tables[i - 1]->order > table->order; i--) {
        config_tables[i] = config_tables[i - 1];
    }
    config_tables[i] = table;
}

size_t ingot_config_table_count(void)
{
    return config_ntables;
}

const ingot_config_table_t *ingot_config_table_at(size_t i)
{
    return (i < config_ntables) ? config_tables[i] : NULL;
}

const ingot_config_field_t *ingot_config_find(const char *name,
                                              const ingot_config_table_t **table_p)
{
    if (strncmp(name, INGOT_ENV_PREFIX, strlen(INGOT_ENV_PREFIX)) == 0) {
        name += strlen(INGOT_ENV_PREFIX);
    }
    for (size_t t = 0; t < config_ntables; t++) {
        for (size_t i = 0; i < config_tables[t]->count; i++) {
            const ingot_config_field_t *f = &config_tables[t]->fields[i];
            if (strcmp(f->name, name) == 0 || (f->old_name && strcmp(f->old_name, name) == 0)) {
                if (table_p != NULL) {
                    *table_p = config_tables[t];
                }
                return &config_tables[t]->fields[i];
            }
        }
    }
    return NULL;
}

static void format_range(const ingot_config_field_t *f, char *buf, size_t buflen)
{
    char lo[64], hi[64];
    ingot_config_format(f, &f->min, lo, sizeof(lo));
    ingot_config_format(f, &f->max, hi, sizeof(hi));
    snprintf(buf, buflen, "; range %s..%s", lo, hi);
}

const char *ingot_config_syntax(const ingot_config_field_t *f, char *buf, size_t buflen)
{
    char range[160] = "";
    if (f->max > f->min) {
        format_range(f, range, sizeof(range));
    }
    switch (f->type) {
    case INGOT_CONFIG_INT: snprintf(buf, buflen, "a decimal integer%s", range); break;
    case INGOT_CONFIG_SIZE:
        snprintf(buf, buflen,
                 "a number with an optional unit B, K|KiB, M|MiB, G|GiB, "
                 "T|TiB (powers of 1024) or KB, MB, GB, TB (powers of 1000), e.g. 64MiB%s",
                 range);
        break;
    case INGOT_CONFIG_DURATION:
        snprintf(buf, buflen, "a number with a unit ns, us, ms, s, m, h, e.g. 250ms%s", range);
        break;
    case INGOT_CONFIG_BOOL:
        snprintf(buf, buflen, "a boolean: y|yes|on|true|1 or n|no|off|false|0");
        break;
    case INGOT_CONFIG_ENUM: {
        size_t o = (size_t)snprintf(buf, buflen, "one of ");
        for (size_t i = 0; f->enum_names[i] != NULL && o < buflen; i++) {
            o += (size_t)snprintf(buf + o, buflen - o, "%s%s", i ? "|" : "", f->enum_names[i]);
        }
        break;
    }
    case INGOT_CONFIG_STRING:
        buf[0] = '\0';
        if (f->check == NULL || f->check(NULL, buf, buflen) != 0 || buf[0] == '\0') {
            snprintf(buf, buflen, "a string");
        }
        break;
    case INGOT_CONFIG_TYPED: snprintf(buf, buflen, "%s", f->codec->syntax); break;
    }
    return buf;
}

/* Strict unsigned decimal with an optional fraction, scaled by @mult, no overflow. The unit
 * suffix starts at *end_p. Returns 0 or -1 (not a number / overflow via *overflow_p). */
static int parse_scaled(const char *s, const unit_t *units, size_t nunits, uint64_t *out,
                        int *overflow_p)
{
    uint64_t ipart = 0, frac = 0, frac_den = 1;
    const char *p = s;
    *overflow_p = 0;
    if (!isdigit((unsigned char)*p)) {
        return -1;
    }
    for (; isdigit((unsigned char)*p); p++) {
        if (__builtin_mul_overflow(ipart, 10, &ipart) ||
            __builtin_add_overflow(ipart, (uint64_t)(*p - '0'), &ipart)) {
            *overflow_p = 1;
            return -1;
        }
    }
    if (*p == '.') {
        p++;
        if (!isdigit((unsigned char)*p)) {
            return -1;
        }
        for (int digits = 0; isdigit((unsigned char)*p); p++, digits++) {
            if (digits < CONFIG_FRAC_DIGITS) {
                frac = frac * 10 + (uint64_t)(*p - '0');
                frac_den *= 10;
            }
        }
    }
    for (size_t i = 0; i < nunits; i++) {
        if (strcasecmp(p, units[i].name) != 0) {
            continue;
        }
        uint64_t v;
        if (__builtin_mul_overflow(ipart, units[i].mult, &v) ||
            __builtin_add_overflow(v, (uint64_t)((long double)frac * units[i].mult / frac_den),
                                   &v)) {
            *overflow_p = 1;
            return -1;
        }
        *out = v;
        return 0;
    }
    return -1;
}

static int parse_int(const char *s, int64_t *out, int *overflow_p)
{
    const char *p = s + ((*s == '-') ? 1 : 0);
    *overflow_p = 0;
    if (!isdigit((unsigned char)*p)) {
        return -1;
    }
    for (; *p != '\0'; p++) {
        if (!isdigit((unsigned char)*p)) {
            return -1;
        }
    }
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE) {
        *overflow_p = 1;
        return -1;
    }
    *out = v;
    return 0;
}

static int match_name(const char *s, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (strcasecmp(s, names[i]) == 0) {
            return (int)i;
        }
    }
    return -1;
}

static size_t enum_count(const char *const *names)
{
    size_t n = 0;
    while (names[n] != NULL) {
        n++;
    }
    return n;
}

static ingot_status_t config_error(const ingot_config_field_t *f, const char *str, char *err,
                                   size_t errlen, const char *why)
{
    char syntax[384];
    snprintf(err, errlen, INGOT_ENV_PREFIX "%s='%s': %s (accepted: %s)", f->name, str, why,
             ingot_config_syntax(f, syntax, sizeof(syntax)));
    return INGOT_ERR_CONFIG;
}

static ingot_status_t parse_number(const ingot_config_field_t *f, const char *str, void *value_p,
                                   char *err, size_t errlen)
{
    int overflow = 0, rc;
    int64_t v = 0;
    uint64_t u = 0;
    if (f->type == INGOT_CONFIG_INT) {
        rc = parse_int(str, &v, &overflow);
    } else if (f->type == INGOT_CONFIG_SIZE) {
        rc = parse_scaled(str, size_units, INGOT_ARRAY_SIZE(size_units), &u, &overflow);
        v = (int64_t)u;
    } else if (strcmp(str, "0") == 0) {
        rc = 0; /* a bare zero duration needs no unit */
    } else {
        rc = parse_scaled(str, duration_units, INGOT_ARRAY_SIZE(duration_units), &u, &overflow);
        v = (int64_t)u;
    }
    if (rc != 0) {
        return config_error(f, str, err, errlen,
                            overflow                         ? "value overflows"
                            : (f->type == INGOT_CONFIG_INT)  ? "not an integer"
                            : (f->type == INGOT_CONFIG_SIZE) ? "not a size"
                                                             : "not a duration");
    }
    if (f->type != INGOT_CONFIG_INT && u > INT64_MAX) {
        return config_error(f, str, err, errlen, "value overflows");
    }
    if (f->max > f->min && (v < f->min || v > f->max)) {
        return config_error(f, str, err, errlen, "out of range");
    }
    if (f->type == INGOT_CONFIG_INT) {
        *(int64_t *)value_p = v;
    } else {
        *(uint64_t *)value_p = (uint64_t)v;
    }
    return INGOT_OK;
}

ingot_status_t ingot_config_parse(const ingot_config_field_t *f, const char *str, void *value_p,
                                  char *err, size_t errlen)
{
    int idx;
    if (*str == '\0') {
        return config_error(f, str, err, errlen,
                            "empty value (unset the variable to get the default)");
    }
    switch (f->type) {
    case INGOT_CONFIG_INT:
    case INGOT_CONFIG_SIZE:
    case INGOT_CONFIG_DURATION: return parse_number(f, str, value_p, err, errlen);
    case INGOT_CONFIG_BOOL:
        if (match_name(str, bool_true, INGOT_ARRAY_SIZE(bool_true)) >= 0) {
            *(bool *)value_p = true;
        } else if (match_name(str, bool_false, INGOT_ARRAY_SIZE(bool_false)) >= 0) {
            *(bool *)value_p = false;
        } else {
            return config_error(f, str, err, errlen, "not a boolean");
        }
        return INGOT_OK;
    case INGOT_CONFIG_ENUM:
        idx = match_name(str, f->enum_names, enum_count(f->enum_names));
        if (idx < 0) {
            return config_error(f, str, err, errlen, "unknown value");
        }
        *(int *)value_p = idx;
        return INGOT_OK;
    case INGOT_CONFIG_STRING: {
        char why[256] = "";
        if (f->check != NULL && f->check(str, why, sizeof(why)) != 0) {
            return config_error(f, str, err, errlen, why);
        }
        char *copy = strdup(str);
        if (copy == NULL) {
            snprintf(err, errlen, INGOT_ENV_PREFIX "%s: out of memory", f->name);
            return INGOT_ERR_NO_MEMORY;
        }
        *(char **)value_p = copy;
        return INGOT_OK;
    }
    case INGOT_CONFIG_TYPED: {
        char why[256] = "";
        if (f->codec->parse(str, value_p, why, sizeof(why)) != 0) {
            return config_error(f, str, err, errlen, why[0] ? why : "not accepted");
        }
        return INGOT_OK;
    }
    }
    return INGOT_ERR_INTERNAL;
}

static void format_scaled(uint64_t v, const unit_t *units, size_t n, char *buf, size_t buflen)
{
    for (size_t i = 0; i < n; i++) {
        if (v != 0 && v % units[i].mult == 0) {
            snprintf(buf, buflen, "%" PRIu64 "%s", v / units[i].mult, units[i].name);
            return;
        }
    }
    snprintf(buf, buflen, "%" PRIu64, v);
}

void ingot_config_format(const ingot_config_field_t *f, const void *value_p, char *buf,
                         size_t buflen)
{
    switch (f->type) {
    case INGOT_CONFIG_INT: snprintf(buf, buflen, "%" PRId64, *(const int64_t *)value_p); break;
    case INGOT_CONFIG_SIZE:
        format_scaled(*(const uint64_t *)value_p, size_out_units, INGOT_ARRAY_SIZE(size_out_units),
                      buf, buflen);
        break;
    case INGOT_CONFIG_DURATION:
        format_scaled(*(const uint64_t *)value_p, duration_out_units,
                      INGOT_ARRAY_SIZE(duration_out_units), buf, buflen);
        break;
    case INGOT_CONFIG_BOOL: snprintf(buf, buflen, "%s", *(const bool *)value_p ? "y" : "n"); break;
    case INGOT_CONFIG_ENUM:
        snprintf(buf, buflen, "%s", f->enum_names[*(const int *)value_p]);
        break;
    case INGOT_CONFIG_STRING: snprintf(buf, buflen, "%s", *(char *const *)value_p); break;
    case INGOT_CONFIG_TYPED: f->codec->format(value_p, buf, buflen); break;
    }
}

int ingot_config_parse_size_per(const ingot_config_field_t *size_field, const char *per,
                                const char *str, uint64_t *bytes_p, bool *per_p)
{
    char size[64], why[256];
    size_t len = strlen(str), plen = strlen(per);
    bool given = len > plen && strcmp(str + len - plen, per) == 0;
    size_t n = given ? len - plen : len;
    uint64_t bytes;
    if (n == 0 || n >= sizeof(size) || (!given && strchr(str, per[0]) != NULL)) return -1;
    memcpy(size, str, n);
    size[n] = '\0';
    if (ingot_config_parse(size_field, size, &bytes, why, sizeof(why)) != INGOT_OK) return -1;
    *bytes_p = bytes;
    *per_p = given;
    return 0;
}

void ingot_config_format_size_per(const ingot_config_field_t *size_field, const char *per,
                                  uint64_t bytes, bool per_given, char *buf, size_t buflen)
{
    ingot_config_format(size_field, &bytes, buf, buflen);
    size_t n = strlen(buf);
    if (per_given && n < buflen) snprintf(buf + n, buflen - n, "%s", per);
}

void ingot_config_table_release(const ingot_config_table_t *table, void *values)
{
    for (size_t i = 0; i < table->count; i++) {
        const ingot_config_field_t *f = &table->fields[i];
        if (f->type == INGOT_CONFIG_STRING) {
            char **p = (char **)((char *)values + f->offset);
            free(*p);
            *p = NULL;
        }
    }
}

static const char *lookup_getenv(const char *name, void *arg)
{
    (void)arg;
    return getenv(name);
}

/* The value of @p f in the environment: under its name, else under its former one (*old_p set;
 * said once per process: the old name still works, but not for ever). */
static const char *config_lookup(const ingot_config_field_t *f, ingot_config_lookup_fn_t lookup,
                                 void *arg, int *old_p)
{
    char full[128];
    snprintf(full, sizeof(full), INGOT_ENV_PREFIX "%s", f->name);
    const char *v = lookup(full, arg);
    *old_p = 0;
    if (v != NULL || f->old_name == NULL) {
        return v;
    }
    snprintf(full, sizeof(full), INGOT_ENV_PREFIX "%s", f->old_name);
    v = lookup(full, arg);
    *old_p = v != NULL;
    if (v != NULL && lookup == lookup_getenv) {
        ingot_warn(INGOT_ENV_PREFIX "%s is deprecated: it is now " INGOT_ENV_PREFIX "%s (same "
                                    "values); the old name is read while the new one is unset",
                   f->old_name, f->name);
    }
    return v;
}

ingot_status_t ingot_config_table_read(const ingot_config_table_t *table, void *values,
                                       ingot_config_lookup_fn_t lookup, void *arg, char *err,
                                       size_t errlen)
{
    memset(values, 0, table->size);
    if (lookup == NULL) {
        lookup = lookup_getenv;
    }
    for (size_t i = 0; i < table->count; i++) {
        const ingot_config_field_t *f = &table->fields[i];
        if (f->type == INGOT_CONFIG_TYPED &&
            (f->codec->size == 0 || f->offset + f->codec->size > table->size)) {
            snprintf(err, errlen,
                     INGOT_ENV_PREFIX "%s: its codec writes %zu bytes at offset %zu "
                                      "of the %s table's %zu (a codec without its size?)",
                     f->name, f->codec->size, f->offset, table->module, table->size);
            return INGOT_ERR_INTERNAL; /* the library's mistake, found by every test */
        }
        int old = 0;
        const char *v = config_lookup(f, lookup, arg, &old);
        ingot_status_t st = ingot_config_parse(f, v ? v : f->dfl, (char *)values + f->offset, err,
                                               errlen);
        if (st != INGOT_OK && old) { /* name the variable that was set */
            char why[CONFIG_ERR_MAX];
            snprintf(why, sizeof(why), "%s", err + strlen(INGOT_ENV_PREFIX) + strlen(f->name));
            snprintf(err, errlen, INGOT_ENV_PREFIX "%s (now " INGOT_ENV_PREFIX "%s)%.*s",
                     f->old_name, f->name, (int)(sizeof(why) - 64), why); /* room for names */
        }
        if (st != INGOT_OK) {
            ingot_config_table_release(table, values);
            return st;
        }
    }
    return INGOT_OK;
}

static size_t edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    size_t row[128];
    if (lb >= INGOT_ARRAY_SIZE(row)) {
        return SIZE_MAX;
    }
    for (size_t j = 0; j <= lb; j++) {
        row[j] = j;
    }
    for (size_t i = 1; i <= la; i++) {
        size_t diag = row[0];
        row[0] = i;
        for (size_t j = 1; j <= lb; j++) {
            size_t up = row[j];
            size_t cost = (toupper((unsigned char)a[i - 1]) == toupper((unsigned char)b[j - 1]))
                              ? 0
                              : 1;
            size_t best = diag + cost;
            if (row[j] + 1 < best) best = row[j] + 1;
            if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
            row[j] = best;
            diag = up;
        }
    }
    return row[lb];
}

const char *ingot_config_suggest(const char *name)
{
    if (strncmp(name, INGOT_ENV_PREFIX, strlen(INGOT_ENV_PREFIX)) == 0) {
        name += strlen(INGOT_ENV_PREFIX);
    }
    const char *best = NULL;
    size_t best_d = SIZE_MAX, len = strlen(name);
    size_t limit = (len / 3 > 2) ? len / 3 : 2;
    for (size_t t = 0; t < config_ntables; t++) {
        for (size_t i = 0; i < config_tables[t]->count; i++) {
            size_t d = edit_distance(name, config_tables[t]->fields[i].name);
            if (d < best_d) {
                best_d = d;
                best = config_tables[t]->fields[i].name;
            }
        }
    }
    return (best_d <= limit) ? best : NULL;
}

void ingot_config_warn_unknown(char **envp)
{
    for (char **e = envp; e != NULL && *e != NULL; e++) {
        if (strncmp(*e, INGOT_ENV_PREFIX, strlen(INGOT_ENV_PREFIX)) != 0) {
            continue;
        }
        char name[128];
        size_t n = strcspn(*e, "=");
        if (n >= sizeof(name)) {
            n = sizeof(name) - 1;
        }
        memcpy(name, *e, n);
        name[n] = '\0';
        if (ingot_config_find(name, NULL) != NULL) {
            continue;
        }
        const char *hint = ingot_config_suggest(name);
        if (hint != NULL) {
            ingot_warn("unknown environment variable %s (did you mean " INGOT_ENV_PREFIX "%s?); "
                       "set INGOT_WARN_UNKNOWN=n to silence",
                       name, hint);
        } else {
            ingot_warn("unknown environment variable %s (ingot-info -c lists the known ones); "
                       "set INGOT_WARN_UNKNOWN=n to silence",
                       name);
        }
    }
}

/* ---------------------------------------------------------------- process-wide configuration */

static pthread_mutex_t global_lock = PTHREAD_MUTEX_INITIALIZER;
static int global_loaded;
static ingot_status_t global_status;
static char global_err[CONFIG_ERR_MAX]; /* the failed load's message, for every later caller */

static ingot_status_t config_load_all(void)
{
    char *err = global_err;
    const size_t errlen = sizeof(global_err);
    for (size_t t = 0; t < config_ntables; t++) {
        ingot_status_t st = ingot_config_table_read(config_tables[t], config_tables[t]->values,
                                                    NULL, NULL, err, errlen);
        if (st != INGOT_OK) {
            while (t-- > 0) {
                ingot_config_table_release(config_tables[t], config_tables[t]->values);
            }
            ingot_error("%s", err);
            return st;
        }
    }
    for (size_t t = 0; t < config_ntables; t++) {
        ingot_status_t st = config_tables[t]->apply
                                ? config_tables[t]->apply(config_tables[t]->values)
                                : INGOT_OK;
        if (st != INGOT_OK) {
            return st;
        }
    }
    return INGOT_OK;
}

ingot_status_t ingot_config_load(void)
{
    pthread_mutex_lock(&global_lock);
    int first = !global_loaded;
    if (first) {
        global_status = config_load_all();
        global_loaded = 1;
    }
    ingot_status_t st = global_status;
    if (st != INGOT_OK && !first && global_err[0] != '\0') {
        ingot_last_error_set(global_err); /* logged once, by the first caller */
    }
    pthread_mutex_unlock(&global_lock);
    return st;
}

ingot_status_t ingot_config_values(const ingot_config_table_t *table, const void **values_p)
{
    ingot_status_t st = ingot_config_load();
    if (st == INGOT_OK) {
        *values_p = table->values;
    }
    return st;
}

/*
 * The public configuration calls (include/ingot/config.h) over base's registry. They live in the
 * facade and name the list of every module's table that the build generates
 * (cmake/config_tables.cmake), so a program linked against the static library that calls only
 * these still carries (and so registers) every table.
 */
#include <ingot/config.h>
#include <ingot/version.h>
#include "base/config.h"
#include "base/log.h"
#include <stdio.h>
#include <string.h>

#define CONFIG_VALUE_MAX  512
#define CONFIG_SYNTAX_MAX 384

/* The build's list of every module's table (generated/config_tables.c). */
extern const ingot_config_table_t *const ingot_config_tables[];
extern const size_t ingot_config_ntables;

/* Every table registered (each by its constructor), and the generated list referenced, so a
 * static link keeps them all: INGOT_OK, or INGOT_ERR_INTERNAL naming a table the registry lacks. */
static ingot_status_t config_all_registered(void)
{
    for (size_t i = 0; i < ingot_config_ntables; i++) {
        int found = 0;
        for (size_t t = 0; t < ingot_config_table_count(); t++) {
            found |= ingot_config_table_at(t) == ingot_config_tables[i];
        }
        if (!found) {
            return ingot_fail(INGOT_ERR_INTERNAL, "configuration table '%s' is not registered",
                              ingot_config_tables[i]->module);
        }
    }
    return INGOT_OK;
}


static void print_doc(FILE *stream, const ingot_config_field_t *f)
{
    char syntax[CONFIG_SYNTAX_MAX];
    fprintf(stream, "#\n# %s\n#\n# syntax:  %s\n# scope:   %s\n# default: %s\n#\n", f->doc,
            ingot_config_syntax(f, syntax, sizeof(syntax)), ingot_config_scope_name(f->scope),
            f->dfl);
}

static void print_table(FILE *stream, const ingot_config_table_t *t, unsigned flags)
{
    if (flags & INGOT_CONFIG_PRINT_DOC) {
        fprintf(stream, "#\n# ---- %s\n", t->module);
    }
    for (size_t i = 0; i < t->count; i++) {
        const ingot_config_field_t *f = &t->fields[i];
        char value[CONFIG_VALUE_MAX];
        if (flags & INGOT_CONFIG_PRINT_DOC) {
            print_doc(stream, f);
        }
        if (flags & INGOT_CONFIG_PRINT_DEFAULT) {
            snprintf(value, sizeof(value), "%s", f->dfl);
        } else {
            ingot_config_format(f, (const char *)t->values + f->offset, value, sizeof(value));
        }
        fprintf(stream, INGOT_ENV_PREFIX "%s=%s\n", f->name, value);
    }
}

ingot_status_t ingot_config_print(FILE *stream, unsigned flags)
{
    ingot_status_t st = config_all_registered();
    if (st == INGOT_OK) {
        st = ingot_config_load();
    }
    if (st != INGOT_OK) {
        return st;
    }
    if (flags & INGOT_CONFIG_PRINT_HEADER) {
        size_t n = 0;
        for (size_t t = 0; t < ingot_config_table_count(); t++) {
            n += ingot_config_table_at(t)->count;
        }
        fprintf(stream, "# ingot %s: %zu configuration variables (%s values)\n",
                INGOT_VERSION_STRING, n,
                (flags & INGOT_CONFIG_PRINT_DEFAULT) ? "default" : "effective");
    }
    for (size_t t = 0; t < ingot_config_table_count(); t++) {
        print_table(stream, ingot_config_table_at(t), flags);
    }
    return INGOT_OK;
}

ingot_status_t ingot_config_get(const char *name, char *buf, size_t buflen)
{
    const ingot_config_table_t *t;
    if (name == NULL || buf == NULL || buflen == 0) {
        return INGOT_ERR_INVALID_PARAM;
    }
    const ingot_config_field_t *f = ingot_config_find(name, &t);
    if (f == NULL) {
        ingot_error("ingot_config_get: unknown variable '%s'", name);
        return INGOT_ERR_NOT_FOUND;
    }
    ingot_status_t st = ingot_config_load();
    if (st != INGOT_OK) {
        return st;
    }
    char value[CONFIG_VALUE_MAX];
    ingot_config_format(f, (const char *)t->values + f->offset, value, sizeof(value));
    if (strlen(value) >= buflen) {
        return INGOT_ERR_NO_RESOURCE;
    }
    memcpy(buf, value, strlen(value) + 1);
    return INGOT_OK;
}

ingot_status_t ingot_config_check(void)
{
    return ingot_config_load();
}

/* A field of no table, so that sizes given on command lines go through the INGOT_* parser. */
static const ingot_config_field_t config_size_field = {
    .name = "SIZE",
    .dfl = "0",
    .doc = "a size given to ingot_config_parse_size()",
    .scope = INGOT_CONFIG_SCOPE_RANK,
    .type = INGOT_CONFIG_SIZE};

ingot_status_t ingot_config_parse_size(const char *str, uint64_t *bytes_p)
{
    char err[CONFIG_VALUE_MAX], syntax[CONFIG_SYNTAX_MAX];
    uint64_t v;
    if (str == NULL || bytes_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_config_parse_size: NULL argument");
    }
    if (ingot_config_parse(&config_size_field, str, &v, err, sizeof(err)) != INGOT_OK) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "'%s' is not a size (accepted: %s)", str,
                          ingot_config_syntax(&config_size_field, syntax, sizeof(syntax)));
    }
    *bytes_p = v;
    return INGOT_OK;
}

/*
 * Fuzz target: the AWS shared files' reader (client/profile.h) over arbitrary files. Input: one
 * byte picks the style (credentials or config) and the profile asked for, the rest is the file.
 * What a read finds must be what its lines said: keys and values trimmed, on one line, a key never
 * empty nor a section or a comment, the last assignment of a key the one found; and the section
 * written back as a file of that style (its entries on lines the reader takes: 8 KiB) reads again
 * to the same entries.
 */
#include "client/profile.h"
#include "common/fuzz.h"
#include <ctype.h>
#include <stdio.h>

#define FUZZ_FILE_MAX  (256u << 10)
#define FUZZ_GETS_MAX  64   /* keys looked up per input */
#define FUZZ_LINE_ROOM 4000 /* an entry written back on one line: well within the reader's 8 KiB */

static const char *const names[] = {"default", "ci", "x y", "profile"};

static int trimmed(const char *s)
{
    size_t n = strlen(s);
    return strchr(s, '\n') == NULL &&
           (n == 0 || (!isspace((unsigned char)s[0]) && !isspace((unsigned char)s[n - 1])));
}

static void check_entries(const ingot_objstore_profile_t *p)
{
    if (!p->found && p->count > 0) abort(); /* entries of a section it never saw */
    for (size_t i = 0; i < p->count; i++) {
        const ingot_objstore_kv_t *kv = &p->kv[i];
        if (kv->key[0] == '\0' || strchr("[#;", kv->key[0]) != NULL || strchr(kv->key, '=') ||
            !trimmed(kv->key) || !trimmed(kv->value)) {
            abort();
        }
        if (i >= FUZZ_GETS_MAX) continue; /* each look-up is a walk: keep the run linear */
        const char *last = kv->value;
        for (size_t j = i + 1; j < p->count; j++) {
            if (strcmp(p->kv[j].key, kv->key) == 0) last = p->kv[j].value;
        }
        if (ingot_objstore_profile_get(p, kv->key) != last) abort();
    }
}

/* Where an indented sub-key's entry "PARENT.KEY" splits: a '.' with a trimmed parent before it
 * and after it a trimmed key that opens no section or comment; NULL when none does. */
static const char *sub_key_dot(const char *k)
{
    for (const char *dot = strchr(k + 1, '.'); dot != NULL; dot = strchr(dot + 1, '.')) {
        if (!isspace((unsigned char)dot[-1]) && dot[1] != '\0' && !isspace((unsigned char)dot[1]) &&
            strchr("[#;", dot[1]) == NULL) {
            return dot;
        }
    }
    return NULL;
}

/* The section of @p p written as a file: "key = value" lines; an empty value only comes from an
 * indented sub-key ("s3 =" then "  key ="), written so again. */
static char *write_section(const ingot_objstore_profile_t *p, int config_style, const char *name,
                           size_t *len_p)
{
    char *text = NULL;
    FILE *f = open_memstream(&text, len_p);
    if (f == NULL) return NULL;
    if (!config_style) {
        fprintf(f, "# written back\n[%s]\n", name);
    } else {
        fprintf(f, strcmp(name, "default") == 0 ? "[%s]\n" : "[profile %s]\n", name);
    }
    for (size_t i = 0; i < p->count; i++) {
        const char *k = p->kv[i].key, *v = p->kv[i].value, *dot = sub_key_dot(k);
        if (v[0] == '\0' && dot != NULL) {
            fprintf(f, "%.*s =\n  %s =\n", (int)(dot - k), k, dot + 1);
        } else {
            fprintf(f, "%s = %s\n", k, v);
        }
    }
    fclose(f);
    return text;
}

static ingot_status_t parse(const char *text, size_t len, int config_style, const char *name,
                            ingot_objstore_profile_t *p)
{
    memset(p, 0, sizeof(*p));
    p->path = strdup("fuzz");
    FILE *f = len > 0 ? fmemopen((void *)text, len, "r") : NULL;
    if (p->path == NULL || f == NULL) {
        if (f != NULL) fclose(f);
        return INGOT_ERR_NO_MEMORY;
    }
    ingot_status_t st = ingot_objstore_profile_parse(f, config_style, name, p);
    fclose(f);
    return st;
}

static void check_written_back(const ingot_objstore_profile_t *p, int config_style,
                               const char *name)
{
    size_t len = 0;
    for (size_t i = 0; i < p->count; i++) {
        if (strlen(p->kv[i].key) + strlen(p->kv[i].value) > FUZZ_LINE_ROOM) return;
    }
    char *text = write_section(p, config_style, name, &len);
    ingot_objstore_profile_t again;
    if (text == NULL) return;
    if (parse(text, len, config_style, name, &again) != INGOT_OK || !again.found ||
        again.count != p->count) {
        abort();
    }
    for (size_t i = 0; i < p->count; i++) {
        if (strcmp(again.kv[i].key, p->kv[i].key) != 0 ||
            strcmp(again.kv[i].value, p->kv[i].value) != 0) {
            abort(); /* written back, it reads otherwise */
        }
    }
    ingot_objstore_profile_release(&again);
    free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    if (size < 1 || size > FUZZ_FILE_MAX) return 0;
    int config_style = data[0] & 1;
    const char *name = names[(data[0] >> 1) % (sizeof(names) / sizeof(names[0]))];
    uint8_t *file = fuzz_copy(data + 1, size - 1);
    ingot_objstore_profile_t p;
    if (file == NULL) return 0;
    if (parse((const char *)file, size - 1, config_style, name, &p) == INGOT_OK) {
        check_entries(&p);
        if (p.found) check_written_back(&p, config_style, name);
    }
    ingot_objstore_profile_release(&p);
    free(file);
    return 0;
}

/* AWS shared credentials and config files: one profile's section (see profile.h). */
#include "client/profile.h"
#include "base/log.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LINE_MAX_BYTES 8192

char *ingot_objstore_profile_path(const char *env_var, const char *leaf)
{
    const char *set = getenv(env_var), *home = getenv("HOME");
    char *out = NULL;

    if (set != NULL && set[0] != '\0') {
        if (strncmp(set, "~/", 2) != 0) return strdup(set);
        if (home == NULL) return NULL;
        return asprintf(&out, "%s/%s", home, set + 2) < 0 ? NULL : out;
    }
    if (home == NULL || home[0] == '\0') return NULL;
    return asprintf(&out, "%s/.aws/%s", home, leaf) < 0 ? NULL : out;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s)) s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1])) s[--n] = '\0';
    return s;
}

/* Does the header line @p h (between the brackets, trimmed) open profile @p name? */
static int section_matches(const char *h, int config_style, const char *name)
{
    if (!config_style) return strcmp(h, name) == 0;
    if (strncmp(h, "profile", 7) == 0 && isspace((unsigned char)h[7])) {
        const char *p = h + 8;
        while (isspace((unsigned char)*p)) p++;
        return strcmp(p, name) == 0;
    }
    return strcmp(name, "default") == 0 && strcmp(h, "default") == 0;
}

static ingot_status_t add_kv(ingot_objstore_profile_t *p, const char *parent, const char *key,
                             const char *value)
{
    ingot_objstore_kv_t *kv = p->kv;
    if (p->count == p->room) { /* doubled: a section of n entries costs O(n), not O(n^2) */
        size_t room = p->room ? 2 * p->room : 8;
        kv = realloc(p->kv, room * sizeof(*kv));
        if (kv == NULL) return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
        p->kv = kv;
        p->room = room;
    }
    char *k = NULL, *v = NULL;
    if (parent != NULL ? asprintf(&k, "%s.%s", parent, key) < 0 : (k = strdup(key)) == NULL) {
        return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
    }
    if ((v = strdup(value)) == NULL) {
        free(k);
        return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
    }
    kv[p->count++] = (ingot_objstore_kv_t){k, v};
    return INGOT_OK;
}

typedef struct {
    int in_section;              /* inside the wanted profile's section */
    char parent[LINE_MAX_BYTES]; /* "s3" while reading its indented sub-keys, else "" (a key:
                                     it fits, as its line did) */
    unsigned line;
} parse_state_t;

/* One "key = value" line, indented (@p nested) or not. */
static ingot_status_t parse_assignment(ingot_objstore_profile_t *p, parse_state_t *st, char *s,
                                       int nested)
{
    char *eq = strchr(s, '=');
    if (eq == NULL) {
        return ingot_fail(INGOT_ERR_CONFIG,
                          "objstore: %s:%u: expected 'key = value' or "
                          "'[section]'",
                          p->path, st->line);
    }
    *eq = '\0';
    char *key = trim(s), *value = trim(eq + 1);
    if (key[0] == '\0') {
        return ingot_fail(INGOT_ERR_CONFIG, "objstore: %s:%u: empty key", p->path, st->line);
    }
    if (!nested) {
        /* "s3 =" with nothing after it opens indented sub-keys */
        snprintf(st->parent, sizeof(st->parent), "%s", value[0] == '\0' ? key : "");
        if (value[0] == '\0') return INGOT_OK;
    }
    if (!st->in_section) return INGOT_OK;
    return add_kv(p, nested && st->parent[0] ? st->parent : NULL, key, value);
}

static ingot_status_t parse_line(ingot_objstore_profile_t *p, parse_state_t *st, char *line,
                                 int config_style, const char *name)
{
    int nested = isspace((unsigned char)line[0]);
    char *s = trim(line);

    if (s[0] == '\0' || s[0] == '#' || s[0] == ';') return INGOT_OK;
    if (s[0] == '[') {
        char *close = strrchr(s, ']');
        if (close == NULL) {
            return ingot_fail(INGOT_ERR_CONFIG, "objstore: %s:%u: unclosed '['", p->path, st->line);
        }
        *close = '\0';
        st->in_section = section_matches(trim(s + 1), config_style, name);
        st->parent[0] = '\0';
        p->found |= st->in_section;
        return INGOT_OK;
    }
    return parse_assignment(p, st, s, nested && st->parent[0] != '\0');
}

/* Did fgets() stop at the end of the buffer, the line going on? (Its tail would otherwise be read
 * as a line of its own.) */
static int line_cut(FILE *f, const char *line)
{
    if (line[LINE_MAX_BYTES - 2] == '\n') return 0;
    int c = getc(f);
    if (c == EOF) return 0;
    ungetc(c, f);
    return 1;
}

ingot_status_t ingot_objstore_profile_parse(FILE *f, int config_style, const char *name,
                                            ingot_objstore_profile_t *profile)
{
    parse_state_t st = {0};
    ingot_status_t status = INGOT_OK;
    char *line = malloc(LINE_MAX_BYTES);

    if (line == NULL) status = ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
    while (status == INGOT_OK) {
        line[LINE_MAX_BYTES - 2] = '\n'; /* overwritten only by a line that fills the buffer */
        if (fgets(line, LINE_MAX_BYTES, f) == NULL) break;
        st.line++;
        if (line_cut(f, line)) {
            status = ingot_fail(INGOT_ERR_CONFIG, "objstore: %s:%u: a line longer than %d bytes",
                                profile->path, st.line, LINE_MAX_BYTES - 2);
        } else {
            status = parse_line(profile, &st, line, config_style, name);
        }
    }
    if (line != NULL) explicit_bzero(line, LINE_MAX_BYTES);
    free(line);
    return status;
}

ingot_status_t ingot_objstore_profile_load(const char *path, int config_style, const char *name,
                                           ingot_objstore_profile_t *profile)
{
    ingot_status_t status;
    FILE *f;

    memset(profile, 0, sizeof(*profile));
    profile->path = strdup(path);
    if (profile->path == NULL) return ingot_fail(INGOT_ERR_NO_MEMORY, "objstore: out of memory");
    f = fopen(path, "r");
    if (f == NULL) {
        if (errno == ENOENT || errno == ENOTDIR) return INGOT_OK;
        return ingot_fail(INGOT_ERR_IO, "objstore: cannot read %s: %s", path, strerror(errno));
    }
    profile->exists = 1;
    status = ingot_objstore_profile_parse(f, config_style, name, profile);
    fclose(f);
    return status;
}

const char *ingot_objstore_profile_get(const ingot_objstore_profile_t *profile, const char *key)
{
    /* the last assignment wins, as in the AWS CLI */
    for (size_t i = profile != NULL ? profile->count : 0; i > 0; i--) {
        if (strcmp(profile->kv[i - 1].key, key) == 0) return profile->kv[i - 1].value;
    }
    return NULL;
}

void ingot_objstore_profile_release(ingot_objstore_profile_t *profile)
{
    if (profile == NULL) return;
    for (size_t i = 0; i < profile->count; i++) {
        explicit_bzero(profile->kv[i].value, strlen(profile->kv[i].value));
        free(profile->kv[i].key);
        free(profile->kv[i].value);
    }
    free(profile->kv);
    free(profile->path);
    memset(profile, 0, sizeof(*profile));
}

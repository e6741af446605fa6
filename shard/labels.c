/* Key -> label map of the manifest builder (see labels.h). */
#include "shard/labels.h"
#include "shard/manifest.h"
#include "base/hash.h"
#include "base/log.h"
#include "shard/tar.h"
#include "base/mem.h"
#include "base/status.h"

#include <stdlib.h>
#include <string.h>

#define LABELS_SLOT_SHIFT 32
#define LABELS_LABEL_MASK 0xffffffffull
#define LABELS_BASE       10

static size_t labels_slot(const shard_labels_t *l, const char *key, size_t len, int *found_p)
{
    size_t slot = ingot_hash64(key, len) & (l->cap - 1);
    for (; l->slots[slot] != 0; slot = (slot + 1) & (l->cap - 1)) {
        const char *k = l->text + (l->slots[slot] >> LABELS_SLOT_SHIFT) - 1;
        if (strlen(k) == len && memcmp(k, key, len) == 0) {
            *found_p = 1;
            return slot;
        }
    }
    *found_p = 0;
    return slot;
}

/* Parse one line in place: "KEY LABEL". */
static ingot_status_t labels_line(shard_labels_t *l, const char *path, size_t lineno, char *line)
{
    char *key = line + strspn(line, " \t\r");
    if (*key == '\0' || *key == '#') {
        return INGOT_OK;
    }
    char *sep = key + strcspn(key, " \t");
    char *val = sep + strspn(sep, " \t"), *end;
    long v = strtol(val, &end, LABELS_BASE);
    end += strspn(end, " \t\r");
    if (*sep == '\0' || end == val || *end != '\0' || v < 0 || v > INT32_MAX) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: line %zu: expected 'KEY LABEL' with a "
                          "non-negative decimal label",
                          path, lineno);
    }
    *sep = '\0';
    int found;
    size_t slot = labels_slot(l, key, strlen(key), &found);
    if (found) {
        return ingot_fail(INGOT_ERR_FORMAT, "%s: line %zu: key '%s' listed twice", path, lineno,
                          key);
    }
    l->slots[slot] = ((uint64_t)(key - l->text) + 1) << LABELS_SLOT_SHIFT | (uint64_t)v;
    return INGOT_OK;
}

ingot_status_t ingot_shard_labels_load(const char *path, shard_labels_t *l)
{
    size_t lines = 1, len;
    *l = (shard_labels_t){0};
    INGOT_CHECK(ingot_file_read_whole(path, (uint8_t **)&l->text, &len));
    for (size_t i = 0; i < len; i++) {
        lines += l->text[i] == '\n';
    }
    for (l->cap = 1; l->cap < 2 * lines; l->cap <<= 1) {
    }
    l->slots = ingot_calloc(l->cap, sizeof(*l->slots), "label table");
    ingot_status_t st = l->slots ? INGOT_OK : INGOT_ERR_NO_MEMORY;
    char *line = st == INGOT_OK ? l->text : NULL;
    for (size_t n = 1; st == INGOT_OK && line != NULL; n++) {
        char *nl = strchr(line, '\n');
        if (nl != NULL) {
            *nl = '\0';
        }
        st = labels_line(l, path, n, line);
        line = nl ? nl + 1 : NULL;
    }
    if (st != INGOT_OK) {
        ingot_shard_labels_release(l);
    }
    return st;
}

void ingot_shard_labels_release(shard_labels_t *l)
{
    free(l->text);
    free(l->slots);
    *l = (shard_labels_t){0};
}

int32_t ingot_shard_labels_find(const shard_labels_t *l, const char *key, size_t len)
{
    int found;
    if (l->slots == NULL) {
        return -1;
    }
    size_t slot = labels_slot(l, key, len, &found);
    return found ? (int32_t)(l->slots[slot] & LABELS_LABEL_MASK) : -1;
}

/*
 * Key -> label map read from a text file given to the manifest builder: one "KEY LABEL" pair
 * per line (LABEL a non-negative decimal), blank lines and lines starting with '#' ignored.
 */
#ifndef INGOT_SHARD_LABELS_H
#define INGOT_SHARD_LABELS_H

#include <ingot/status.h>
#include <stddef.h>
#include <stdint.h>

typedef struct shard_labels {
    char *text;      /* the file, keys NUL-terminated in place */
    uint64_t *slots; /* (key offset + 1) << 32 | label, 0 = empty; power-of-two size */
    size_t cap;
} shard_labels_t;

/** Read @p path; errors name the file and line (duplicate keys, bad labels). */
ingot_status_t ingot_shard_labels_load(const char *path, shard_labels_t *l);
void ingot_shard_labels_release(shard_labels_t *l);

/** The label of @p key (length @p len), or -1 when the file has none. */
int32_t ingot_shard_labels_find(const shard_labels_t *l, const char *key, size_t len);

#endif

/*
 * Manifest builder: indexes tar shards in place (no rewriting), grouping adjacent members that
 * share a key into samples, hashing every member and learning zstd members' raw lengths.
 */
#include "shard/builder.h"
#include "shard/manifest.h"
#include "base/hash.h"
#include "base/param.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

ingot_status_t ingot_builder_str_push(shard_vec_t *buf, const char *s, size_t len, uint64_t *ref_p)
{
    size_t at;
    if (len > MANIFEST_STRLEN_MAX) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "string of %zu bytes exceeds the manifest limit %u "
                          "('%.*s...')",
                          len, MANIFEST_STRLEN_MAX, 64, s);
    }
    INGOT_CHECK(ingot_shard_vec_push(buf, s, len, &at));
    INGOT_CHECK(ingot_shard_vec_push(buf, "", 1, NULL));
    *ref_p = manifest_strref(at, (uint32_t)len);
    return INGOT_OK;
}

/* ---------------------------------------------------------------- create / destroy */

static ingot_status_t bld_dict_load(struct ingot_manifest_builder *b, const char *dict_path)
{
    uint8_t *dict;
    size_t len;
    INGOT_CHECK(ingot_file_read_whole(dict_path, &dict, &len));
    b->dict_hash = ingot_hash64(dict, len);
    ingot_status_t st = ingot_shard_zstd_init(&b->zstd, dict, len);
    free(dict);
    return st;
}

/* Path of @p path relative to the manifest's directory (malloc'd); must lie inside it. */
ingot_status_t ingot_bld_relpath_get(const struct ingot_manifest_builder *b, const char *path,
                                     char **rel_p)
{
    char *real = realpath(path, NULL);
    if (real == NULL) {
        return ingot_fail(ingot_status_from_errno(errno), "%s: %s", path, strerror(errno));
    }
    size_t dl = strlen(b->dir_real);
    int root = dl == 1; /* "/" */
    if (strncmp(real, b->dir_real, dl) != 0 || (!root && real[dl] != '/')) {
        free(real);
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: lies outside the manifest's directory %s (shard "
                          "paths must be relative to the manifest, without '..')",
                          path, b->dir_real);
    }
    char *rel = strdup(real + dl + (root ? 0 : 1));
    free(real);
    *rel_p = rel;
    return rel ? INGOT_OK : INGOT_ERR_NO_MEMORY;
}

static ingot_status_t bld_init(struct ingot_manifest_builder *b, const char *manifest_path,
                               const ingot_manifest_builder_params_t *params)
{
    char *dir = strdup(manifest_path);
    if (dir == NULL || (b->path = strdup(manifest_path)) == NULL) {
        free(dir);
        return INGOT_ERR_NO_MEMORY;
    }
    char *slash = strrchr(dir, '/');
    b->dir_real = realpath(slash ? (slash == dir ? "/" : (*slash = '\0', dir)) : ".", NULL);
    free(dir);
    if (b->dir_real == NULL) {
        return ingot_fail(INGOT_ERR_NOT_FOUND, "%s: the manifest's directory does not exist",
                          manifest_path);
    }
    b->chunk = ingot_malloc(BUILDER_CHUNK, "builder read buffer");
    b->scratch = ingot_malloc(BUILDER_CHUNK, "builder zstd buffer");
    if (b->chunk == NULL || b->scratch == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    INGOT_CHECK(ingot_file_window_init(&b->win));
    b->special = INGOT_PARAM_VALUE(params, special, INGOT_MANIFEST_BUILDER_PARAM_FIELD_SPECIAL,
                                   INGOT_TAR_SPECIAL_SKIP);
    const char *labels = INGOT_PARAM_VALUE(params, label_path,
                                           INGOT_MANIFEST_BUILDER_PARAM_FIELD_LABELS, NULL);
    const char *dict = INGOT_PARAM_VALUE(params, dict_path, INGOT_MANIFEST_BUILDER_PARAM_FIELD_DICT,
                                         NULL);
    if (labels != NULL) {
        INGOT_CHECK(ingot_shard_labels_load(labels, &b->labels));
    }
    if (dict != NULL) {
        INGOT_CHECK(ingot_bld_relpath_get(b, dict, &b->dict_rel));
        return bld_dict_load(b, dict);
    }
    return ingot_shard_zstd_init(&b->zstd, NULL, 0);
}

ingot_status_t ingot_manifest_builder_create(const char *manifest_path,
                                             const ingot_manifest_builder_params_t *params,
                                             ingot_manifest_builder_h *builder_p)
{
    if (manifest_path == NULL || builder_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_manifest_builder_create: NULL argument");
    }
    struct ingot_manifest_builder *b = ingot_calloc(1, sizeof(*b), "manifest builder");
    if (b == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    shard_vec_init(&b->shards, sizeof(manifest_shard_t));
    shard_vec_init(&b->names, sizeof(manifest_name_t));
    shard_vec_init(&b->samples, sizeof(manifest_sample_t));
    shard_vec_init(&b->fields, sizeof(manifest_field_t));
    shard_vec_init(&b->namebuf, 1);
    shard_vec_init(&b->strbuf, 1);
    ingot_status_t st = bld_init(b, manifest_path, params);
    if (st != INGOT_OK) {
        ingot_manifest_builder_destroy(b);
        return st;
    }
    *builder_p = b;
    return INGOT_OK;
}

void ingot_manifest_builder_destroy(ingot_manifest_builder_h b)
{
    if (b == NULL) {
        return;
    }
    ingot_shard_vec_free(&b->shards);
    ingot_shard_vec_free(&b->names);
    ingot_shard_vec_free(&b->samples);
    ingot_shard_vec_free(&b->fields);
    ingot_shard_vec_free(&b->namebuf);
    ingot_shard_vec_free(&b->strbuf);
    ingot_shard_zstd_release(&b->zstd);
    ingot_shard_labels_release(&b->labels);
    ingot_file_window_release(&b->win);
    free(b->chunk);
    free(b->scratch);
    free(b->dict_rel);
    free(b->dir_real);
    free(b->path);
    free(b);
}

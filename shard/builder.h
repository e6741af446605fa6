/* Internal state of the manifest builder (manifest_build.c, manifest_write.c). */
#ifndef INGOT_SHARD_BUILDER_H
#define INGOT_SHARD_BUILDER_H

#include <ingot/shard.h>
#include "shard/labels.h"
#include "shard/manifest_format.h"
#include "shard/tar.h"
#include "shard/vec.h"
#include "shard/zstd_codec.h"

/** Bytes read per pread while hashing shards and members. */
#define BUILDER_CHUNK (1u << 20)

struct ingot_manifest_builder {
    char *path;     /* manifest to write */
    char *dir_real; /* realpath of its directory */
    ingot_tar_special_policy_t special;
    char *dict_rel; /* dictionary path relative to dir, or NULL */
    uint64_t dict_hash;
    shard_vec_t shards;  /* manifest_shard_t; path refs relative to strbuf */
    shard_vec_t names;   /* manifest_name_t; offsets into namebuf */
    shard_vec_t samples; /* manifest_sample_t; key refs relative to strbuf */
    shard_vec_t fields;  /* manifest_field_t */
    shard_vec_t namebuf; /* char: field names, NUL-terminated */
    shard_vec_t strbuf;  /* char: shard paths and keys, NUL-terminated */
    shard_zstd_t zstd;
    shard_labels_t labels;   /* key -> label file, or empty */
    ingot_file_window_t win; /* one pass: parse, hash members and the whole shard */
    uint8_t *chunk;          /* BUILDER_CHUNK bytes */
    uint8_t *scratch;        /* BUILDER_CHUNK bytes of zstd output */
    size_t etags;            /* shards recorded with an ETag: written as version 3 */
};

/** Append a NUL-terminated copy of [s, s+len) to @p buf; *ref_p = strref relative to buf. */
ingot_status_t ingot_builder_str_push(shard_vec_t *buf, const char *s, size_t len, uint64_t *ref_p);


/** Path of @p path relative to the manifest's directory (malloc'd); it must lie inside it. */
ingot_status_t ingot_bld_relpath_get(const struct ingot_manifest_builder *b, const char *path,
                                     char **rel_p);

/**
 * Index the shard open as @p src (read from offset 0 to its size) under the name @p rel,
 * relative to wherever the manifest will live (a bucket prefix: no realpath check, but no
 * absolute name or '..' either), recording @p etag (the object's ETag, or NULL). A manifest with
 * an ETag is written as format version 3. Errors and the rollback as
 * ingot_manifest_builder_add_shard().
 */
ingot_status_t ingot_manifest_builder_add_source(ingot_manifest_builder_h b, ingot_file_t *src,
                                                 const char *rel, const char *etag);

#endif

/* Internal view of an open manifest, shared by the loader, reader and verifier. */
#ifndef INGOT_SHARD_MANIFEST_H
#define INGOT_SHARD_MANIFEST_H

#include <ingot/shard.h>
#include "base/hash.h"
#include "base/location.h"
#include "shard/manifest_format.h"
#include <stddef.h>

/** The largest sample of a manifest: what a loader sizes its batch slots and buffers with. */
typedef struct ingot_manifest_maxima {
    uint64_t raw_bytes;    /**< Decoded bytes (sum of the fields' raw lengths) of the largest. */
    uint64_t stored_bytes; /**< Stored byte range of the longest sample. */
    uint32_t fields;       /**< Fields of the widest sample. */
} ingot_manifest_maxima_t;

/**
 * Opens a shard that lives at a URL: *fd_p is a descriptor of a local copy (an unlinked temporary
 * file) of its @p size bytes, fetched under If-Match @p etag (NULL: any version); the identity of
 * the client that fetched it is written into @p shard; errors name the URL (logged). The object
 * store lies above this layer: the runtime hands an opener to the manifest when it opens it.
 */
typedef ingot_status_t (*ingot_shard_remote_fn)(ingot_location_t *shard, const char *etag,
                                                uint64_t size, int *fd_p);

/** Where a manifest opened from memory came from (ingot_manifest_open_named). */
typedef struct ingot_manifest_origin {
    const char *name;             /**< in messages: its path or URL */
    const ingot_location_t *dir;  /**< its folder, where its shards' names start (copied): the
                                       dataset's location */
    ingot_shard_remote_fn remote; /**< opens its shards when the folder is a URL; NULL: such
                                       shards cannot be read (named as such) */
} ingot_manifest_origin_t;

struct ingot_manifest {
    const uint8_t *base; /* the manifest's bytes */
    size_t len;
    void *map;   /* our mapping, or NULL for a buffer */
    void *owned; /* a malloc'd buffer freed at close (ingot_manifest_open_named), or NULL */
    ingot_location_t location;    /* its folder: where shard names start, resolved once */
    ingot_shard_remote_fn remote; /* the opener of its shards at URLs, or NULL */
    char *name;                   /* manifest name in messages */
    const manifest_header_t *hdr;
    const manifest_shard_t *shards;
    const manifest_name_t *names;
    const manifest_sample_t *samples;
    const manifest_field_t *fields;
    const char *strtab;
    int lazy;                    /* rows are checked at lookup, shards included */
    int has_max;                 /* max holds the largest sample: version 2 from the */
    ingot_manifest_maxima_t max; /* header, version 1 found by a full open; every row
                                          looked up is checked against it */
};

/** The string a (checked) strref names. */
static inline const char *manifest_str(const struct ingot_manifest *m, uint64_t ref)
{
    return m->strtab + manifest_strref_off(ref);
}

/**
 * Where the manifest's dataset lives: its folder (a path, or scheme, endpoint or host, bucket
 * and key prefix, with the credentials' identity when a client resolved one), resolved when the
 * manifest was opened. Valid until ingot_manifest_close(); thread-safe.
 */
const ingot_location_t *ingot_manifest_location(ingot_manifest_h manifest);

/** The opener of the manifest's shards at URLs the runtime handed it at open, or NULL. */
ingot_shard_remote_fn ingot_manifest_remote(ingot_manifest_h manifest);

/* @p name (a shard or file the manifest names) beside the manifest, into @p buf: its folder,
 * '/', the name (percent-encoded when the folder is an http(s) URL). INGOT_ERR_NO_RESOURCE when
 * @p buflen is too small. */
ingot_status_t ingot_manifest_path_of(struct ingot_manifest *m, const char *name, char *buf,
                                      size_t buflen);

/**
 * The header checksum: XXH3-64 of the header's header_size bytes (@p hdr points at them, a
 * version's whole header) with header_hash taken as zero. header_size must be a valid size
 * (manifest_header_size() of some version).
 */
uint64_t ingot_manifest_header_hash(const manifest_header_t *hdr);

/**
 * The largest sample of an open manifest. Version 2: the header's values, O(1) (checked
 * against every row at a full open, and against each row looked up in a lazy one). Version 1:
 * what the full open found, O(1); opened lazily, one pass over the sample table, checking
 * every row. Thread-safe.
 * @return INGOT_OK, or the error of a bad row (version 1, logged with the row).
 */
ingot_status_t ingot_manifest_maxima_get(ingot_manifest_h manifest, ingot_manifest_maxima_t *max_p);

/* Internal open flag (the public entry points take INGOT_MANIFEST_OPEN_LAZY alone): every row of
 * these very bytes was checked by a full open elsewhere (the node leader's, of the node's shared
 * copy, agreed over the node before any lookup): opened in O(1), rows looked up unchecked. */
#define INGOT_MANIFEST_OPEN_CHECKED (1u << 16)

/* manifest_check.c: the header (at every open); every row (a full open); one shard or sample
 * row (a lazy open's lookups; @p raw_p, the sample's raw bytes, may be NULL); whether a string
 * reference lies in the string table (0) or not (-1). */
ingot_status_t ingot_manifest_check_header(struct ingot_manifest *m);
ingot_status_t ingot_manifest_check_all(struct ingot_manifest *m);
ingot_status_t ingot_manifest_check_shard(const struct ingot_manifest *m, uint64_t row);
ingot_status_t ingot_manifest_check_sample(const struct ingot_manifest *m, uint64_t index,
                                           ingot_sample_info_t *info, uint64_t *raw_p);
int ingot_manifest_strref_ok(const struct ingot_manifest *m, uint64_t ref, int allow_empty);
/* Sample row @p index as ingot_manifest_check_sample() fills it, unchecked: for a row checked
 * already (a full open checked every row). */
void ingot_manifest_sample_fill(const struct ingot_manifest *m, uint64_t index,
                                ingot_sample_info_t *info);
/* manifest_check.c: the name table (checked at every open: every field lookup indexes it); the
 * largest sample and field over the sample table (a version-1 manifest's maxima). */
ingot_status_t ingot_manifest_check_names(const struct ingot_manifest *m);
ingot_status_t ingot_manifest_scan_samples(const struct ingot_manifest *m,
                                           ingot_manifest_maxima_t *max);

/**
 * Open a manifest file (memory-mapped); its location is the file's folder, and it has no opener
 * of shards at URLs (its shards are files). The public ingot_manifest_open() and
 * ingot_manifest_open_buffer() are the runtime's (runtime/store/manifest.c): they resolve the
 * location, open a URL through the object store and a path through this.
 * Errors as ingot_manifest_open().
 */
ingot_status_t ingot_manifest_open_file(const char *path, unsigned flags,
                                        ingot_manifest_h *manifest_p);

/**
 * Open a manifest held in memory (as ingot_manifest_open_buffer()) from @p origin (its name, its
 * folder's location, the opener of its shards at URLs) and, with @p own, the buffer's
 * ownership: a malloc'd @p buf is freed by ingot_manifest_close() (on success only; on failure
 * it stays the caller's). A folder at a URL ("s3://bucket/prefix") resolves shard paths to URLs.
 */
ingot_status_t ingot_manifest_open_named(const void *buf, size_t len,
                                         const ingot_manifest_origin_t *origin, unsigned flags,
                                         int own, ingot_manifest_h *manifest_p);

#endif

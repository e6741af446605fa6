/* Internal view of an open manifest, shared by the loader, reader and verifier. */
#ifndef INGOT_SHARD_MANIFEST_H
#define INGOT_SHARD_MANIFEST_H

#include <ingot/shard.h>
#include "base/hash.h"
#include "shard/manifest_format.h"
#include <stddef.h>

/** The largest sample of a manifest: what a loader sizes its batch slots and buffers with. */
typedef struct ingot_manifest_maxima {
    uint64_t raw_bytes;    /**< Decoded bytes (sum of the fields' raw lengths) of the largest. */
    uint64_t stored_bytes; /**< Stored byte range of the longest sample. */
    uint32_t fields;       /**< Fields of the widest sample. */
} ingot_manifest_maxima_t;

struct ingot_manifest {
    const uint8_t *base; /* the manifest's bytes */
    size_t len;
    void *map;   /* our mapping, or NULL for a buffer */
    void *owned; /* a malloc'd buffer freed at close (ingot_manifest_open_named), or NULL */
    char *dir;   /* directory shard paths are relative to */
    char *name;  /* manifest name in messages */
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

/**
 * Open a manifest file (memory-mapped). The public ingot_manifest_open() is the runtime's
 * (runtime/manifest_url.c): it opens a URL through the object store and a path through this.
 * Errors as ingot_manifest_open().
 */
ingot_status_t ingot_manifest_open_file(const char *path, unsigned flags,
                                        ingot_manifest_h *manifest_p);

/**
 * ingot_manifest_open_buffer() with a @p name for messages (a URL) and, with @p own, the
 * buffer's ownership: a malloc'd @p buf is freed by ingot_manifest_close() (on success only; on
 * failure it stays the caller's). @p base_dir may be a URL ("s3://bucket/prefix"): shard paths
 * are then resolved to URLs.
 */
ingot_status_t ingot_manifest_open_named(const void *buf, size_t len, const char *name,
                                         const char *base_dir, unsigned flags, int own,
                                         ingot_manifest_h *manifest_p);

/** The directory (or URL) shard paths are relative to. */
const char *ingot_manifest_dir(ingot_manifest_h manifest);

#endif

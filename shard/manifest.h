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

/** The folder of the manifest file @p path, where its shards' relative names start ("." for a
 *  bare file name), into @p dir (@p len bytes). Every opener of a manifest file uses it. */
void ingot_manifest_dir(const char *path, char *dir, size_t len);
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

/* manifest_check.c: the header (at every open); every row (a full open); one shard or sample
 * row (a lazy open's lookups; @p raw_p, the sample's raw bytes, may be NULL); whether a string
 * reference lies in the string table (0) or not (-1). */
ingot_status_t ingot_manifest_check_header(struct ingot_manifest *m);
ingot_status_t ingot_manifest_check_all(struct ingot_manifest *m);
ingot_status_t ingot_manifest_check_shard(const struct ingot_manifest *m, uint64_t row);
ingot_status_t ingot_manifest_check_sample(const struct ingot_manifest *m, uint64_t index,
                                           ingot_sample_info_t *info, uint64_t *raw_p);
int ingot_manifest_strref_ok(const struct ingot_manifest *m, uint64_t ref, int allow_empty);
/* manifest_check.c: the name table (checked at every open: every field lookup indexes it); the
 * largest sample and field over the sample table (a version-1 manifest's maxima). */
ingot_status_t ingot_manifest_check_names(const struct ingot_manifest *m);
ingot_status_t ingot_manifest_scan_samples(const struct ingot_manifest *m,
                                           ingot_manifest_maxima_t *max);

/**
 * Open a manifest file (memory-mapped). The public ingot_manifest_open() is the runtime's
 * (runtime/store/manifest.c): it opens a URL through the object store and a path through this.
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

#endif

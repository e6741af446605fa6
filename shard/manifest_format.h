/*
 * On-disk layout of the manifest (format versions 1 to 3). Little-endian,
 * every section 8-byte aligned, read in place through these structs (mmap or a shared buffer):
 *
 *   header      manifest_header_t (144 bytes), then in version 2 manifest_header_ext_t (24 bytes)
 *   shards      shard_count  x manifest_shard_t  (48 bytes)
 *   names       name_count   x manifest_name_t   (8 bytes; field names)
 *   samples     sample_count x manifest_sample_t (32 bytes)
 *   fields      field_count  x manifest_field_t  (24 bytes)
 *   strings     strtab_size bytes: NUL-terminated field names first, then shard paths and keys
 *
 * A string reference (manifest_strref) packs a strtab offset (high 48 bits) and a length (low 16
 * bits); the string is also NUL-terminated in the table. A sample's fields are the rows
 * [first_field, next sample's first_field) (field_count for the last sample), so a sample costs
 * 32 bytes and a field 24, keys apart. header_hash is XXH3-64 of the whole header (header_size
 * bytes, the version-2 extension included) with header_hash zeroed, and covers body_hash, the
 * XXH3-64 of everything after the header: it is the manifest's digest.
 *
 * Version 2 appends the largest sample's sizes to the header (what a loader sizes its buffers
 * with), so a reader needs no pass over the sample table for them. Version 3 has version 2's
 * layout and gives the shard row's last word a meaning: the strref of the object's ETag as the
 * object store reported it when the manifest was built (0: none), sent as If-Match by every
 * read. A manifest is written as version 3 only when a shard has an ETag (a manifest over a
 * bucket), so manifests of local files stay version 2, readable by older builds.
 * header_size must be the size of the version's header, and the shard table starts right after
 * it, so a file claiming a version it is not laid out as fails the layout check.
 */
#ifndef INGOT_SHARD_MANIFEST_FORMAT_H
#define INGOT_SHARD_MANIFEST_FORMAT_H

#include <stdint.h>

#define MANIFEST_MAGIC        "INGOTMF1"
#define MANIFEST_MAGIC_LEN    8
#define MANIFEST_VERSION_1    1u /* header without the extension: maxima found by a scan */
#define MANIFEST_VERSION      2u /* written by this build for shards without ETags */
#define MANIFEST_VERSION_ETAG 3u /* written by this build when a shard has an ETag */
#define MANIFEST_VERSION_MAX  MANIFEST_VERSION_ETAG /* the newest this build reads */
#define MANIFEST_ALIGN        8u
#define MANIFEST_STRLEN_BITS  16
#define MANIFEST_STRLEN_MAX   ((1u << MANIFEST_STRLEN_BITS) - 1)
#define MANIFEST_STROFF_MAX   ((1ull << (64 - MANIFEST_STRLEN_BITS)) - 1)
#define MANIFEST_NAMES_MAX    UINT16_MAX
#define MANIFEST_FLAG_DICT    1u

typedef struct manifest_header {
    char magic[MANIFEST_MAGIC_LEN];
    uint32_t version;
    uint32_t header_size;
    uint64_t file_size;
    uint64_t shard_count;
    uint64_t sample_count;
    uint64_t field_count;
    uint64_t name_count;
    uint64_t shard_off;
    uint64_t name_off;
    uint64_t sample_off;
    uint64_t field_off;
    uint64_t strtab_off;
    uint64_t strtab_size;
    uint64_t dict_path; /* strref, valid when flags & MANIFEST_FLAG_DICT */
    uint64_t dict_hash;
    uint32_t flags;
    uint32_t reserved;
    uint64_t body_hash;
    uint64_t header_hash;
} manifest_header_t;

/* Version 2: follows manifest_header_t. The largest sample (exact maxima over the tables). */
typedef struct manifest_header_ext {
    uint64_t sample_raw_max;    /* decoded bytes: sum of the fields' raw lengths */
    uint64_t sample_stored_max; /* stored bytes: the sample's byte range in its shard */
    uint32_t sample_fields_max; /* fields */
    uint32_t reserved;          /* zero */
} manifest_header_ext_t;

/* The whole header of the version this build writes. */
typedef struct manifest_header_v2 {
    manifest_header_t base;
    manifest_header_ext_t ext;
} manifest_header_v2_t;

typedef struct manifest_shard {
    uint64_t path; /* strref, relative to the manifest's directory */
    uint64_t size;
    uint64_t hash; /* XXH3-64 of the whole shard */
    uint64_t first_sample;
    uint64_t sample_count;
    uint64_t etag; /* version 3: strref of the object's ETag, or 0; earlier versions: unused */
} manifest_shard_t;

typedef struct manifest_name {
    uint32_t off; /* strtab offset */
    uint32_t len;
} manifest_name_t;

typedef struct manifest_sample {
    uint64_t offset; /* data offset of the first member in the shard */
    uint64_t first_field;
    uint64_t key; /* strref */
    uint32_t shard;
    int32_t label;
} manifest_sample_t;

typedef struct manifest_field {
    uint16_t name; /* row of the name table */
    uint8_t codec; /* ingot_codec_t */
    uint8_t reserved;
    uint32_t offset; /* from the sample's offset */
    uint32_t stored_len;
    uint32_t raw_len;
    uint64_t hash; /* XXH3-64 of the stored bytes */
} manifest_field_t;

_Static_assert(sizeof(manifest_header_t) == 144, "manifest header layout");
_Static_assert(sizeof(manifest_header_v2_t) == 168, "manifest version-2 header layout");
_Static_assert(sizeof(manifest_shard_t) == 48, "manifest shard layout");
_Static_assert(sizeof(manifest_sample_t) == 32, "manifest sample layout");
_Static_assert(sizeof(manifest_field_t) == 24, "manifest field layout");
_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "manifest is read in place: LE hosts");

/* Bytes of a version's header, or 0 for a version this build does not read. */
static inline uint32_t manifest_header_size(uint32_t version)
{
    return version == MANIFEST_VERSION_1 ? (uint32_t)sizeof(manifest_header_t)
           : (version == MANIFEST_VERSION || version == MANIFEST_VERSION_ETAG)
               ? (uint32_t)sizeof(manifest_header_v2_t)
               : 0;
}

static inline uint64_t manifest_strref(uint64_t off, uint32_t len)
{
    return (off << MANIFEST_STRLEN_BITS) | len;
}
static inline uint64_t manifest_strref_off(uint64_t ref)
{
    return ref >> MANIFEST_STRLEN_BITS;
}
static inline uint32_t manifest_strref_len(uint64_t ref)
{
    return (uint32_t)(ref & MANIFEST_STRLEN_MAX);
}

#endif

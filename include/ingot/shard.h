/**
 * @file shard.h
 * @brief Shards (POSIX tar in WebDataset layout, optional zstd members), the manifest that
 *        indexes them, sample reading and verification.
 *
 * A shard is a tar file whose members are named `<key>.<field>`; the adjacent members sharing a
 * key form one sample, so one sample is one contiguous byte range of its shard. A member whose
 * name ends in `.zst` is a zstd frame (field name without the suffix, codec INGOT_CODEC_ZSTD).
 *
 * The manifest is one little-endian, versioned, mmap-able file that says where every sample
 * lives, how long it is and what its stored bytes hash to (XXH3-64); its layout is in
 * docs/shard.md. Opening it needs no LIST or stat call per sample; sample lookup by global
 * index is O(1).
 *
 * Errors: every fallible call returns an ingot_status_t; outputs are written only on success.
 * The function that detects an error logs it once (ingot_error) naming the file, the byte
 * offset, the sample key or the table row.
 */
#ifndef INGOT_SHARD_H
#define INGOT_SHARD_H

#include <stddef.h>
#include <stdint.h>
#include <ingot/def.h>
#include <ingot/status.h>

INGOT_BEGIN_DECLS

/** Opaque handle to an open manifest. */
typedef struct ingot_manifest         *ingot_manifest_h;
/** Opaque handle to a manifest builder. */
typedef struct ingot_manifest_builder *ingot_manifest_builder_h;
/** Opaque handle to a sample reader (cached shard descriptors and zstd contexts). */
typedef struct ingot_shard_reader     *ingot_shard_reader_h;

/** How a field's bytes are stored in the shard. */
typedef enum ingot_codec {
    INGOT_CODEC_NONE = 0, /**< Stored as is: raw length equals stored length. */
    INGOT_CODEC_ZSTD = 1  /**< One or more zstd frames; raw length is the decoded length. */
} ingot_codec_t;

/** Label of a sample that has none. */
#define INGOT_LABEL_NONE (-1)

/* ------------------------------------------------------------------------------------------ */
/* Opening and querying a manifest                                                              */

/** Flags of ingot_manifest_open() and ingot_manifest_open_buffer(). */
enum ingot_manifest_open_flags {
    /**
     * Check only the header (magic, version, checksum, table bounds) at open, which is O(1);
     * each sample is then checked when it is looked up. Without this flag the whole file is
     * hashed and every row is checked at open (O(samples)).
     */
    INGOT_MANIFEST_OPEN_LAZY = INGOT_BIT(0)
};

/** Summary of a manifest. */
typedef struct ingot_manifest_info {
    uint32_t    version;      /**< Format version of the file. */
    uint64_t    file_size;    /**< Bytes of the manifest. */
    uint64_t    digest;       /**< Content digest of the whole manifest (recorded in cursors). */
    uint64_t    shard_count;  /**< Rows of the shard table. */
    uint64_t    sample_count; /**< Rows of the sample table. */
    uint64_t    field_count;  /**< Rows of the field table. */
    uint32_t    name_count;   /**< Distinct field names. */
    const char *dict_path;    /**< zstd dictionary path relative to the manifest, or NULL. */
    uint64_t    dict_hash;    /**< XXH3-64 of the dictionary file (0 without one). */
} ingot_manifest_info_t;

/** One row of the shard table. Strings point into the manifest (valid until it is closed). */
typedef struct ingot_shard_info {
    const char *path;         /**< Path relative to the manifest's directory (NUL-terminated). */
    uint64_t    size;         /**< Bytes of the shard when the manifest was built. */
    uint64_t    hash;         /**< XXH3-64 of the whole shard. */
    uint64_t    first_sample; /**< Global index of its first sample. */
    uint64_t    sample_count; /**< Samples in this shard. */
} ingot_shard_info_t;

/** One row of the sample table. Strings point into the manifest (valid until it is closed). */
typedef struct ingot_sample_info {
    uint64_t    index;       /**< Global sample index. */
    uint32_t    shard;       /**< Shard table row. */
    uint64_t    offset;      /**< Byte offset of the sample's first member data in the shard. */
    uint64_t    length;      /**< Bytes from offset to the end of its last member's data. */
    const char *key;         /**< Key (unique within its shard), NUL-terminated. */
    int32_t     label;       /**< Class label, or INGOT_LABEL_NONE. */
    uint64_t    first_field; /**< Field table row of its first field. */
    uint32_t    field_count; /**< Number of fields (>= 1). */
} ingot_sample_info_t;

/** One row of the field table. */
typedef struct ingot_field_info {
    const char   *name;       /**< Field name, e.g. "jpg" (".zst" removed), NUL-terminated. */
    uint32_t      offset;     /**< Offset of the stored bytes from the sample's offset. */
    uint32_t      stored_len; /**< Bytes stored in the shard. */
    uint32_t      raw_len;    /**< Bytes after decoding (bounds every decompression). */
    ingot_codec_t codec;      /**< How the bytes are stored. */
    uint64_t      hash;       /**< XXH3-64 of the stored bytes. */
} ingot_field_info_t;

/**
 * @brief Open a manifest file (memory-mapped read-only), or a manifest in an object store.
 * @param path      manifest file; shard paths are resolved relative to its directory. Or a URL,
 *                  s3://BUCKET/KEY (signed with the AWS CLI's credentials, endpoint and region:
 *                  docs/objectstore.md) or http(s)://HOST/PATH (unsigned): fetched with one GET
 *                  (no LIST, no HEAD) into memory; its shards are then the URLs beside it.
 * @param flags     ingot_manifest_open_flags.
 * @param manifest_p out: the handle, written only on success.
 * @return INGOT_OK; INGOT_ERR_NOT_FOUND / INGOT_ERR_IO (open, mmap, a missing object);
 *         INGOT_ERR_FORMAT (bad magic, version, layout, a row out of bounds, path traversal in a
 *         shard path, duplicate key); INGOT_ERR_CORRUPT (checksum mismatch);
 *         INGOT_ERR_NO_MEMORY; for a URL, the object store's errors (INGOT_ERR_INVALID_PARAM for
 *         a malformed URL, INGOT_ERR_PERMISSION, INGOT_ERR_TIMED_OUT...), each naming the
 *         endpoint, bucket and key.
 * Thread safety: the handle is immutable after open; any thread may query it concurrently.
 */
INGOT_API ingot_status_t ingot_manifest_open(const char *path, unsigned flags,
                                             ingot_manifest_h *manifest_p);

/**
 * @brief Open a manifest held in memory (e.g. a node-shared MPI window). The buffer is
 *        borrowed, not copied: it must stay valid and unchanged until ingot_manifest_close().
 * @param buf      start of the manifest, 8-byte aligned.
 * @param len      bytes of @p buf.
 * @param base_dir directory that shard paths are relative to (copied); NULL means ".".
 * @param flags    ingot_manifest_open_flags.
 * @return as ingot_manifest_open(); INGOT_ERR_INVALID_PARAM for a misaligned buffer.
 */
INGOT_API ingot_status_t ingot_manifest_open_buffer(const void *buf, size_t len,
                                                    const char *base_dir, unsigned flags,
                                                    ingot_manifest_h *manifest_p);

/** @brief Close a manifest (unmaps it when ingot opened the file). Accepts NULL. */
INGOT_API void ingot_manifest_close(ingot_manifest_h manifest);

/** @brief Summary of a manifest. @return INGOT_OK or INGOT_ERR_INVALID_PARAM. Thread-safe. */
INGOT_API ingot_status_t ingot_manifest_query(ingot_manifest_h       manifest,
                                              ingot_manifest_info_t *info_p);

/**
 * @brief One shard table row. @return INGOT_OK; INGOT_ERR_OUT_OF_RANGE for a bad row.
 * Thread-safe.
 */
INGOT_API ingot_status_t ingot_manifest_shard_get(ingot_manifest_h manifest, uint32_t shard,
                                                  ingot_shard_info_t *info_p);

/**
 * @brief One sample table row, in O(fields of the sample). The row is checked (shard, byte
 *        range within the shard, fields, key) even when the manifest was opened lazily.
 * @return INGOT_OK; INGOT_ERR_OUT_OF_RANGE for an index >= sample count; INGOT_ERR_FORMAT for
 *         a bad row (logged with the row and key). Thread-safe.
 */
INGOT_API ingot_status_t ingot_manifest_sample_get(ingot_manifest_h manifest, uint64_t index,
                                                   ingot_sample_info_t *info_p);

/**
 * @brief Field @p i (0 <= i < sample->field_count) of a sample returned by
 *        ingot_manifest_sample_get(). @return INGOT_OK or INGOT_ERR_OUT_OF_RANGE. Thread-safe.
 */
INGOT_API ingot_status_t ingot_manifest_field_get(ingot_manifest_h           manifest,
                                                  const ingot_sample_info_t *sample, uint32_t i,
                                                  ingot_field_info_t *info_p);

/**
 * @brief Find a sample by key, in O(samples) (tools; not for hot paths).
 * @param shard restrict to this shard row, or -1 for the first match in any shard (keys are
 *              unique only within a shard).
 * @return INGOT_OK; INGOT_ERR_NOT_FOUND.
 */
INGOT_API ingot_status_t ingot_manifest_find(ingot_manifest_h manifest, const char *key,
                                             int64_t shard, uint64_t *index_p);

/**
 * @brief The path of a shard resolved against the manifest's directory (for a manifest at an
 *        http(s):// URL, a URL with the shard's name percent-encoded; at s3://, the key as is).
 * @return INGOT_OK; INGOT_ERR_OUT_OF_RANGE (bad row); INGOT_ERR_NO_RESOURCE (buffer too small).
 */
INGOT_API ingot_status_t ingot_manifest_shard_path(ingot_manifest_h manifest, uint32_t shard,
                                                   char *buf, size_t buflen);

/**
 * @brief The ETag a shard's object had when the manifest was built over a bucket (sent as
 *        If-Match by every read of it), or NULL (a manifest of local files, or a format-version
 *        1 or 2 manifest). Points into the manifest. Thread-safe.
 */
INGOT_API const char *ingot_manifest_shard_etag(ingot_manifest_h manifest, uint32_t shard);

/* ------------------------------------------------------------------------------------------ */
/* Building a manifest from tar shards                                                          */

/** What to do with tar members that are not regular files or directories. */
typedef enum ingot_tar_special_policy {
    INGOT_TAR_SPECIAL_SKIP   = 0, /**< Skip links, devices and FIFOs with a warning (default). */
    INGOT_TAR_SPECIAL_REJECT = 1  /**< Fail on them (INGOT_ERR_FORMAT). */
} ingot_tar_special_policy_t;

/** Fields of ingot_manifest_builder_params_t. */
enum ingot_manifest_builder_params_field {
    INGOT_MANIFEST_BUILDER_PARAM_FIELD_SPECIAL = INGOT_BIT(0), /**< special is set. */
    INGOT_MANIFEST_BUILDER_PARAM_FIELD_DICT    = INGOT_BIT(1), /**< dict_path is set. */
    INGOT_MANIFEST_BUILDER_PARAM_FIELD_LABELS  = INGOT_BIT(2)  /**< label_path is set. */
};

/** Parameters of ingot_manifest_builder_create(). */
typedef struct ingot_manifest_builder_params {
    uint64_t                   field_mask; /**< ingot_manifest_builder_params_field bits. */
    ingot_tar_special_policy_t special;    /**< Policy for special members (default SKIP). */
    const char                *dict_path;  /**< zstd dictionary file beside the manifest. */
    /**
     * Text file of "KEY LABEL" lines (LABEL a non-negative decimal; '#' comments): the label of
     * every sample with that key that has no .cls member. Read once at create.
     */
    const char                *label_path;
} ingot_manifest_builder_params_t;

/**
 * @brief Create a builder for the manifest @p manifest_path (written by
 *        ingot_manifest_builder_write()). Shards must lie in its directory or below it.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM; INGOT_ERR_NO_MEMORY; INGOT_ERR_NOT_FOUND (the
 *         manifest's directory, the dictionary or the label file does not exist);
 *         INGOT_ERR_FORMAT (a bad label file line, named by number).
 * Thread safety: a builder is used by one thread at a time.
 */
INGOT_API ingot_status_t ingot_manifest_builder_create(
    const char *manifest_path, const ingot_manifest_builder_params_t *params,
    ingot_manifest_builder_h *builder_p);

/**
 * @brief Index one tar shard without rewriting it: validate every header, hash every member,
 *        group members into samples by key, decode zstd members to learn their raw length.
 * @return INGOT_OK; INGOT_ERR_FORMAT (bad tar, path traversal, duplicate key, shard outside
 *         the manifest's directory); INGOT_ERR_ZSTD (bad frame); INGOT_ERR_IO. On error the
 *         builder is unchanged.
 */
INGOT_API ingot_status_t ingot_manifest_builder_add_shard(ingot_manifest_builder_h builder,
                                                          const char              *shard_path);

/**
 * @brief Write the manifest atomically (temp file, fsync, rename).
 * @return INGOT_OK; INGOT_ERR_IO; INGOT_ERR_INVALID_PARAM when no sample was added.
 */
INGOT_API ingot_status_t ingot_manifest_builder_write(ingot_manifest_builder_h builder);

/** @brief Destroy a builder. Accepts NULL. */
INGOT_API void ingot_manifest_builder_destroy(ingot_manifest_builder_h builder);

/* ------------------------------------------------------------------------------------------ */
/* Reading and verifying samples                                                               */

/**
 * @brief Create a reader over an open manifest: it opens shards on first use (checking that
 *        each still has its recorded size), keeps their descriptors, and owns one reusable zstd
 *        decompression context (with the manifest's dictionary, if any).
 * @param manifest must outlive the reader.
 * @return INGOT_OK; INGOT_ERR_NO_MEMORY; INGOT_ERR_IO / INGOT_ERR_CORRUPT for the dictionary.
 * Thread safety: one thread at a time per reader; use one reader per thread.
 */
INGOT_API ingot_status_t ingot_shard_reader_create(ingot_manifest_h      manifest,
                                                   ingot_shard_reader_h *reader_p);

/** @brief Destroy a reader (closes its descriptors). Accepts NULL. */
INGOT_API void ingot_shard_reader_destroy(ingot_shard_reader_h reader);

/**
 * @brief Read one sample's byte range into @p buf (one pread) and check every field's hash.
 * @param buf    destination of at least the sample's length (ingot_manifest_sample_get()).
 * @param buflen bytes of @p buf.
 * @return INGOT_OK; INGOT_ERR_NO_RESOURCE (buffer too small); INGOT_ERR_IO;
 *         INGOT_ERR_MISMATCH (the shard's size changed since the manifest was built);
 *         INGOT_ERR_CORRUPT (a field's hash differs: logged with shard, key, field, offset).
 *         A sample that fails is never reported as good.
 */
INGOT_API ingot_status_t ingot_shard_reader_read(ingot_shard_reader_h reader, uint64_t index,
                                                 void *buf, size_t buflen);

/**
 * @brief Decode field @p i of a sample read by ingot_shard_reader_read() into @p dst.
 * @param sample_buf the buffer filled by ingot_shard_reader_read() for @p index.
 * @param dst, dst_cap destination; needs the field's raw length.
 * @param len_p out: bytes written (the raw length).
 * @return INGOT_OK; INGOT_ERR_NO_RESOURCE (dst too small); INGOT_ERR_ZSTD (corrupt or truncated
 *         frame, window beyond the limit, output that would exceed the raw length).
 */
INGOT_API ingot_status_t ingot_shard_reader_decode(ingot_shard_reader_h reader, uint64_t index,
                                                   const void *sample_buf, uint32_t i, void *dst,
                                                   size_t dst_cap, size_t *len_p);

/** One corrupt or unreadable sample found by ingot_manifest_verify(). */
typedef struct ingot_verify_fault {
    uint32_t       shard;      /**< Shard row. */
    const char    *shard_path; /**< Shard path relative to the manifest. */
    uint64_t       index;      /**< Global sample index, or UINT64_MAX for a shard-level fault. */
    const char    *key;        /**< Sample key, or NULL for a shard-level fault. */
    const char    *field;      /**< Field name, or NULL. */
    uint64_t       offset;     /**< Byte offset in the shard of the bad bytes. */
    ingot_status_t status;     /**< What was wrong (CORRUPT, ZSTD, IO, MISMATCH). */
} ingot_verify_fault_t;

/** Called by ingot_manifest_verify() for every fault found, in shard and sample order. */
typedef void (*ingot_verify_cb_t)(const ingot_verify_fault_t *fault, void *arg);

/** Totals of ingot_manifest_verify(). */
typedef struct ingot_verify_report {
    uint64_t samples_checked; /**< Samples read and hashed. */
    uint64_t samples_bad;     /**< Samples that failed. */
    uint64_t shards_bad;      /**< Shards whose size or whole-shard hash differ. */
    uint64_t bytes_hashed;    /**< Bytes read and hashed. */
} ingot_verify_report_t;

/**
 * @brief Re-hash every shard and every sample (decoding zstd fields within their raw length);
 *        report every fault through @p cb and go on.
 * @return INGOT_OK when everything matched; INGOT_ERR_CORRUPT when anything failed (the report
 *         is still written); other errors when verification itself could not run.
 */
INGOT_API ingot_status_t ingot_manifest_verify(ingot_manifest_h manifest, ingot_verify_cb_t cb,
                                               void *arg, ingot_verify_report_t *report_p);

INGOT_END_DECLS

#endif /* INGOT_SHARD_H */

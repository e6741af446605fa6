/*
 * POSIX tar reader (ustar, pax 'x' headers with path and size, GNU 'L' long names) over a file
 * descriptor or a memory buffer, and WebDataset name splitting (`<key>.<field>`).
 *
 * Every header is checked: checksum, octal or base-256 numeric fields, special-header sizes
 * (capped at TAR_SPECIAL_MAX), pax size against ustar size, member data within the archive,
 * member names free of absolute paths and `..` components. Errors are INGOT_ERR_FORMAT and name
 * the archive, the header's offset and the member.
 */
#ifndef INGOT_SHARD_TAR_H
#define INGOT_SHARD_TAR_H

#include <ingot/shard.h>
#include "base/file.h"
#include <stdint.h>
#include <stddef.h>

#define TAR_BLOCK 512u
/** Longest member name accepted (pax and GNU long names included). */
#define TAR_NAME_MAX 4096u
/** Largest pax or GNU long-name header data accepted (as libarchive's 1 MiB cap). */
#define TAR_SPECIAL_MAX (1u << 20)

typedef enum tar_kind {
    TAR_KIND_FILE,   /**< regular file: a member to index */
    TAR_KIND_DIR,    /**< directory: skipped silently */
    TAR_KIND_SPECIAL /**< link, device, FIFO: skipped or rejected by policy */
} tar_kind_t;

/** One member. */
typedef struct tar_member {
    char name[TAR_NAME_MAX + 1]; /**< full name (pax/GNU long name applied) */
    uint64_t header_off;         /**< offset of its first header (special ones included) */
    uint64_t data_off;           /**< offset of its data */
    uint64_t size;               /**< bytes of data */
    tar_kind_t kind;
    char typeflag;
} tar_member_t;

typedef struct tar_reader {
    const ingot_file_t *src;
    uint64_t off; /**< next header */
    int done;
    uint8_t *special; /**< scratch for pax / long-name data (TAR_SPECIAL_MAX) */
} tar_reader_t;

ingot_status_t ingot_tar_reader_init(tar_reader_t *r, const ingot_file_t *src);
void ingot_tar_reader_release(tar_reader_t *r);

/**
 * Next member into @p m. Sets *end_p = 1 at the end-of-archive marker (m untouched). An archive
 * that ends without the marker is truncated (INGOT_ERR_FORMAT).
 */
ingot_status_t ingot_tar_reader_next(tar_reader_t *r, tar_member_t *m, int *end_p);

/**
 * Split a member name into key and field: the key is everything up to the first '.' of the last
 * path component (a leading "./" removed), the field what follows it. Returns INGOT_ERR_FORMAT
 * (naming the member) when there is no key or no field.
 */
ingot_status_t ingot_tar_name_split(const char *archive, uint64_t off, const char *name,
                                    const char **key_p, size_t *key_len_p, const char **field_p);

/** 0 when @p path is relative and has no ".." component; -1 otherwise. */
int ingot_tar_path_is_safe(const char *path, size_t len);

/** Parse a numeric header field (octal, or base-256 when the top bit is set); -1 when invalid. */
int ingot_tar_parse_number(const uint8_t *field, size_t len, uint64_t *value_p);

#endif

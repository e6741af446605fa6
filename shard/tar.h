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
#include <stdint.h>
#include <stddef.h>

#define TAR_BLOCK 512u
/** Longest member name accepted (pax and GNU long names included). */
#define TAR_NAME_MAX 4096u
/** Largest pax or GNU long-name header data accepted (as libarchive's 1 MiB cap). */
#define TAR_SPECIAL_MAX (1u << 20)

/**
 * A sequential read window over a descriptor: reads that move forward are served from chunks of
 * SHARD_WINDOW_BYTES loaded in file order, and every chunk is hashed as it is loaded, so one
 * pass both parses and hashes the whole file (builder, verify).
 */
#define SHARD_WINDOW_BYTES (1u << 20)

typedef struct shard_window {
    uint8_t *buf; /**< SHARD_WINDOW_BYTES */
    uint64_t off; /**< file offset of buf[0] */
    size_t len;   /**< valid bytes in buf */
    void *hash;   /**< XXH3 state over [0, off + len) */
} shard_window_t;

/** Where the archive's bytes come from: a descriptor (pread) or memory. */
typedef struct shard_src {
    int fd;              /**< descriptor, or -1 for memory */
    const uint8_t *mem;  /**< memory when fd < 0 */
    uint64_t size;       /**< bytes of the archive */
    const char *name;    /**< archive name in messages */
    shard_window_t *win; /**< sequential window, or NULL for plain preads */
} shard_src_t;

/** Allocate a window; attach it with ingot_shard_window_attach(). */
ingot_status_t ingot_shard_window_init(shard_window_t *w);
void ingot_shard_window_release(shard_window_t *w);
/** Start reading @p src through @p w from offset 0 (hash reset). */
void ingot_shard_window_attach(shard_window_t *w, shard_src_t *src);
/** Read the rest of the file through the window, detach it, and give the whole-file hash. */
ingot_status_t ingot_shard_window_finish(shard_src_t *src, uint64_t *hash_p);

/** Read exactly @p len bytes at @p off (fault site "pread"); errors name the source. */
ingot_status_t ingot_shard_src_read(const shard_src_t *src, uint64_t off, void *buf, size_t len);

/** Open @p path read-only (fault site "open") and fill @p src (fd, size, name). */
ingot_status_t ingot_shard_src_open(const char *path, shard_src_t *src);
void ingot_shard_src_close(shard_src_t *src);

/** Read the whole file @p path into a malloc'd buffer (one spare byte, NUL-terminated). */
ingot_status_t ingot_shard_src_slurp(const char *path, uint8_t **buf_p, size_t *len_p);

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
    const shard_src_t *src;
    uint64_t off; /**< next header */
    int done;
    uint8_t *special; /**< scratch for pax / long-name data (TAR_SPECIAL_MAX) */
} tar_reader_t;

ingot_status_t ingot_tar_reader_init(tar_reader_t *r, const shard_src_t *src);
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

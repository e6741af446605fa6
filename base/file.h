/*
 * Reading a file: open it, read exactly a window of it (pread until done, naming the file on a
 * short read), read it whole, or read it front to back through a hashing window (one pass both
 * parses and hashes: the manifest builder, verify). The one file primitive of the tar parser,
 * the manifest, the cursor, the labels and the POSIX byte source; a file may also be memory.
 */
#ifndef INGOT_BASE_FILE_H
#define INGOT_BASE_FILE_H

#include <ingot/status.h>
#include <stddef.h>
#include <stdint.h>

/**
 * A sequential read window over a descriptor: reads that move forward are served from chunks of
 * INGOT_FILE_WINDOW_BYTES loaded in file order, and every chunk is hashed as it is loaded, so one
 * pass both parses and hashes the whole file (builder, verify).
 */
#define INGOT_FILE_WINDOW_BYTES (1u << 20)

typedef struct ingot_file_window {
    uint8_t *buf; /**< INGOT_FILE_WINDOW_BYTES */
    uint64_t off; /**< file offset of buf[0] */
    size_t len;   /**< valid bytes in buf */
    void *hash;   /**< XXH3 state over [0, off + len) */
} ingot_file_window_t;

/** Where the archive's bytes come from: a descriptor (pread) or memory. */
typedef struct ingot_file {
    int fd;                   /**< descriptor, or -1 for memory */
    const uint8_t *mem;       /**< memory when fd < 0 */
    uint64_t size;            /**< bytes of the archive */
    const char *name;         /**< archive name in messages */
    ingot_file_window_t *win; /**< sequential window, or NULL for plain preads */
    const uint8_t *map;       /**< the file mapped read-only (copied out with ingot_mapped_copy),
                                   or NULL */
} ingot_file_t;

/** Allocate a window; attach it with ingot_file_window_attach(). */
ingot_status_t ingot_file_window_init(ingot_file_window_t *w);
void ingot_file_window_release(ingot_file_window_t *w);
/** Start reading @p src through @p w from offset 0 (hash reset). */
void ingot_file_window_attach(ingot_file_window_t *w, ingot_file_t *src);
/** Read the rest of the file through the window, detach it, and give the whole-file hash. */
ingot_status_t ingot_file_window_finish(ingot_file_t *src, uint64_t *hash_p);

/** Read exactly @p len bytes at @p off (fault site "pread"); errors name the source. */
ingot_status_t ingot_file_read(const ingot_file_t *src, uint64_t off, void *buf, size_t len);

/** Open @p path read-only (fault site "open") and fill @p src (fd, size, name). */
ingot_status_t ingot_file_open(const char *path, ingot_file_t *src);
void ingot_file_close(ingot_file_t *src);

/** Read the whole file @p path into a malloc'd buffer (one spare byte, NUL-terminated). */
ingot_status_t ingot_file_read_whole(const char *path, uint8_t **buf_p, size_t *len_p);

#endif

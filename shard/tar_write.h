/*
 * Minimal POSIX tar writer (ustar headers, a pax 'x' header for names longer than 100 bytes),
 * used by the packer and by tests to make shards.
 */
#ifndef INGOT_SHARD_TAR_WRITE_H
#define INGOT_SHARD_TAR_WRITE_H

#include <ingot/status.h>
#include <stddef.h>
#include <stdint.h>

typedef struct tar_writer {
    int fd;
    uint64_t off;     /* bytes written so far */
    const char *name; /* archive name in messages */
} tar_writer_t;

/** Fill a ustar header block (checksum included) for a regular member or a pax header. */
void ingot_tar_header_fill(uint8_t *block, const char *name, uint64_t size, char type);

/** Append one regular member (pax header first when the name needs one). */
ingot_status_t ingot_tar_write_member(tar_writer_t *w, const char *name, const void *data,
                                      size_t len);

/** Append the end-of-archive marker (two zero blocks). */
ingot_status_t ingot_tar_write_end(tar_writer_t *w);

#endif

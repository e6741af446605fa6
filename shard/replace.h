/*
 * Atomic file replacement for the manifest and the cursor: write a temp file beside the target,
 * fsync it, rename it over the target, fsync the directory. Readers see the old file or the new
 * one, never a torn one; on error the temp file is removed and the target is untouched.
 */
#ifndef INGOT_SHARD_REPLACE_H
#define INGOT_SHARD_REPLACE_H

#include <ingot/status.h>
#include <stddef.h>

/** Writes the content to @p fd (named @p tmp in messages). */
typedef ingot_status_t (*shard_fill_fn_t)(int fd, const char *tmp, void *arg);

ingot_status_t ingot_shard_replace_file(const char *path, shard_fill_fn_t fill, void *arg);

/** write(2) all of [p, p+n) to @p fd, retrying on EINTR; errors name @p path. */
ingot_status_t ingot_shard_write_all(int fd, const char *path, const void *p, size_t n);

#endif

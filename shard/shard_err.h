/*
 * Error reporting for the shard module: the function that detects an error formats one message
 * (naming file, offset, key or row), logs it with ingot_error() and keeps it as the calling
 * thread's last shard error, which tools and tests read back with shard_err_last().
 */
#ifndef INGOT_SHARD_ERR_H
#define INGOT_SHARD_ERR_H

#include <ingot/status.h>
#include "runtime/base/log.h"

/** Longest kept message (longer ones are truncated). */
#define SHARD_ERR_MAX 1024

/** Format, keep and log an error; returns @p status so callers can `return shard_err(...)`. */
ingot_status_t shard_err_set(ingot_status_t status, const char *file, int line, const char *fmt,
                             ...) __attribute__((format(printf, 4, 5)));

/** The calling thread's last shard error message ("" when none). */
const char *shard_err_last(void);

/** Forget the calling thread's last error. */
void shard_err_clear(void);

#define shard_err(_status, ...) shard_err_set((_status), __FILE__, __LINE__, __VA_ARGS__)

#endif

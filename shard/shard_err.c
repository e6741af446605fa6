/* Thread-local last error of the shard module (see shard_err.h). */
#include "shard/shard_err.h"
#include <stdarg.h>
#include <stdio.h>

static _Thread_local char shard_err_buf[SHARD_ERR_MAX];

ingot_status_t shard_err_set(ingot_status_t status, const char *file, int line, const char *fmt,
                             ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(shard_err_buf, sizeof(shard_err_buf), fmt, ap);
    va_end(ap);
    if (ingot_log_enabled(INGOT_LOG_LEVEL_ERROR)) {
        ingot_log_write(INGOT_LOG_LEVEL_ERROR, file, line, "%s", shard_err_buf);
    }
    return status;
}

const char *shard_err_last(void)
{
    return shard_err_buf;
}

void shard_err_clear(void)
{
    shard_err_buf[0] = '\0';
}

/*
 * Logging by level (INGOT_LOG_LEVEL), lines prefixed with host, pid and rank, to stderr or to
 * INGOT_LOG_FILE (%h host, %p pid, %r rank substituted). A line is written with one write(2),
 * so lines of concurrent threads and ranks never interleave. No output unless a level asks.
 */
#ifndef INGOT_BASE_LOG_H
#define INGOT_BASE_LOG_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef enum ingot_log_level {
    INGOT_LOG_LEVEL_ERROR = 0,
    INGOT_LOG_LEVEL_WARN = 1,
    INGOT_LOG_LEVEL_INFO = 2,
    INGOT_LOG_LEVEL_DEBUG = 3,
    INGOT_LOG_LEVEL_TRACE = 4
} ingot_log_level_t;

extern _Atomic int ingot_log_level_current;

/** Write one log line (use the macros below). */
void ingot_log_write(ingot_log_level_t level, const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/** Log an error (if the level allows) and keep it as the thread's last error (ingot_error). */
void ingot_log_error_write(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/** Forget the calling thread's last error (ingot_last_error() then returns ""). */
void ingot_last_error_clear(void);

/** Make @p msg the calling thread's last error without logging it: for an error detected and
 *  logged on another thread that this thread reports (a loader step failed by a worker). */
void ingot_last_error_set(const char *msg);

/*
 * Errors of a collective step. Every rank of a job often finds the same fault (a missing file, a
 * bad variable): while a hold is on, the calling thread's error lines are kept (each still
 * becomes its last error) instead of written, and the step's agreement (ingot_mpi_agree) writes
 * them once: by the lowest rank holding lines when every holder's lines are the same, else by
 * each holder. Holds nest; the outermost ingot_log_hold_end() writes whatever no agreement took.
 */
void ingot_log_hold_begin(void);
void ingot_log_hold_end(void);
/** Depth of the calling thread's holds (0: errors are written at once). */
int ingot_log_hold_depth(void);
/** Digest of the calling thread's held lines (file, line and text; not host, pid or rank), and
 *  their count (0: nothing held, digest 0). */
unsigned ingot_log_held(uint64_t *digest_p);
/** Write the held lines (@p note, when not NULL, appended to the last), or drop them. */
void ingot_log_held_flush(int write, const char *note);

/** Set the rank shown in log lines (ingot_init() does this; before it, the launcher's env). */
void ingot_log_set_rank(int rank);

/** Apply INGOT_LOG_LEVEL and INGOT_LOG_FILE from the parsed config. Returns INGOT_ERR_IO naming
 *  the file when it cannot be opened (logging then stays on stderr). */
int ingot_log_configure(int level, const char *file_pattern);

/** Expand %h (host), %p (pid), %r (rank), %u (user) and %% in a path pattern (INGOT_LOG_FILE,
 *  INGOT_DISK_CACHE_DIR) into @p out (size @p outlen). */
void ingot_log_expand_path(const char *pattern, char *out, size_t outlen);

/** Name of a level ("error", "warn", ...). */
const char *ingot_log_level_name(ingot_log_level_t level);

static inline int ingot_log_enabled(ingot_log_level_t level)
{
    return (int)level <= atomic_load_explicit(&ingot_log_level_current, memory_order_relaxed);
}

#define ingot_log(_lvl, ...) \
    do { \
        if (ingot_log_enabled(_lvl)) ingot_log_write(_lvl, __FILE__, __LINE__, __VA_ARGS__); \
    } while (0)
/*
 * Errors: the function that detects one calls ingot_error() once with what was wrong (file,
 * offset, key, rank, variable); it is logged and kept as the calling thread's last error
 * (ingot_last_error(), public). ingot_fail() does the same and evaluates to the status, for
 * `return ingot_fail(INGOT_ERR_FORMAT, "%s: offset %zu: ...", ...)`.
 */
#define ingot_error(...)         ingot_log_error_write(__FILE__, __LINE__, __VA_ARGS__)
#define ingot_fail(_status, ...) (ingot_error(__VA_ARGS__), (_status))
#define ingot_warn(...)          ingot_log(INGOT_LOG_LEVEL_WARN, __VA_ARGS__)
#define ingot_info(...)          ingot_log(INGOT_LOG_LEVEL_INFO, __VA_ARGS__)
#define ingot_debug(...)         ingot_log(INGOT_LOG_LEVEL_DEBUG, __VA_ARGS__)
#define ingot_trace(...)         ingot_log(INGOT_LOG_LEVEL_TRACE, __VA_ARGS__)

#endif

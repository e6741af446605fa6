/**
 * @file config.h
 * @brief The INGOT_* configuration table: inspection and printing.
 *
 * Every tunable of ingot is one environment variable named INGOT_<NAME>, declared once in a
 * single table with its default, documentation, scope and parser. The table is parsed once per
 * process (at the first ingot_init() or ingot_config_print()); an invalid value is an error that
 * names the variable, the value and the accepted syntax, never a silent default. An unknown
 * INGOT_* variable produces a warning naming the closest known variable.
 *
 * Scope: a job-wide variable must have the same value on every rank of the communicator given
 * to ingot_init(), which checks it (a mismatch fails init on every rank and names the variable
 * and the ranks); a per-rank variable (e.g. INGOT_LOG_FILE) may differ between ranks.
 */
#ifndef INGOT_CONFIG_H
#define INGOT_CONFIG_H

#include <stdint.h>
#include <stdio.h>
#include <ingot/status.h>

INGOT_BEGIN_DECLS

/** Flags for ingot_config_print(). */
typedef enum ingot_config_print_flags {
    INGOT_CONFIG_PRINT_DOC =
        INGOT_BIT(0), /**< Print each variable's documentation, type and scope. */
    INGOT_CONFIG_PRINT_HEADER  = INGOT_BIT(1), /**< Print a header line with the version. */
    INGOT_CONFIG_PRINT_DEFAULT = INGOT_BIT(2)  /**< Print defaults instead of effective values. */
} ingot_config_print_flags_t;

/**
 * @brief Print the effective configuration (environment applied to defaults), one
 *        `INGOT_NAME=value` line per variable, in the syntax the parser accepts.
 * @param stream where to print.
 * @param flags  a bitwise OR of ingot_config_print_flags_t.
 * @return INGOT_OK, or INGOT_ERR_CONFIG when a variable in the environment is invalid (the
 *         error is logged, naming the variable; nothing is printed then).
 * Thread-safe.
 */
INGOT_API ingot_status_t ingot_config_print(FILE *stream, unsigned flags);

/**
 * @brief Look up the effective value of one variable, formatted as the parser accepts it.
 * @param name   the variable, with or without the "INGOT_" prefix.
 * @param buf    destination; always NUL-terminated on success.
 * @param buflen size of @p buf.
 * @return INGOT_OK; INGOT_ERR_NOT_FOUND for an unknown name; INGOT_ERR_CONFIG if the environment
 *         holds an invalid value; INGOT_ERR_NO_RESOURCE if @p buf is too small.
 */
INGOT_API ingot_status_t ingot_config_get(const char *name, char *buf, size_t buflen);

/**
 * @brief Parse every INGOT_* variable of the environment now, as the first ingot_init() would.
 *
 * Programs that do not call ingot_init() (tools that only pack or plan) call it first so that an
 * invalid value fails them instead of being noticed late or not at all.
 * @return INGOT_OK, or INGOT_ERR_CONFIG when a variable is invalid: the error is logged and kept
 *         in ingot_last_error(), naming the variable, the value and the accepted syntax. Every
 *         later call returns the same status (the environment is parsed once per process).
 * Thread-safe.
 */
INGOT_API ingot_status_t ingot_config_check(void);

/**
 * @brief Parse a size in the syntax of every INGOT_* size variable: a decimal number with an
 *        optional fraction and an optional unit, case-insensitive: B, K or KiB (1024), M or MiB,
 *        G or GiB, T or TiB (powers of 1024), KB, MB, GB, TB (powers of 1000). "64MiB", "4k",
 *        "1.5GiB", "1GB" (10^9), "4096".
 *
 * Command-line tools use it for their size options so that one syntax holds everywhere.
 * @param str      the text (NUL-terminated).
 * @param bytes_p  out: the size in bytes, written only on success.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM for NULL arguments or text that is not a size
 *         (empty, negative, an unknown unit, trailing characters, beyond INT64_MAX bytes); the
 *         error is logged and kept in ingot_last_error() with the accepted syntax.
 * Thread-safe; needs no context and reads no environment.
 */
INGOT_API ingot_status_t ingot_config_parse_size(const char *str, uint64_t *bytes_p);

INGOT_END_DECLS

#endif /* INGOT_CONFIG_H */

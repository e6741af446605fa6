/*
 * Values of the apps' options, parsed strictly as every INGOT_* value is: a bad one is named with
 * its option ("<app>: --batch '-3' is not a non-negative integer") and the app exits with
 * APP_EXIT_USAGE. The app's name is the program's (program_invocation_short_name).
 */
#ifndef APPS_COMMON_CLI_H
#define APPS_COMMON_CLI_H

#include <stdint.h>

#define APP_EXIT_USAGE 2

/**
 * MPI apps parse their options on every rank before MPI starts, and every rank finds the same
 * fault: between cli_quiet_begin() and cli_quiet_end(), only the launcher's rank 0
 * (app_launcher_rank) prints; the others' stdout and stderr go to /dev/null, so a usage error,
 * getopt's complaint or --help reads once per job, and every rank exits with the same code.
 */
void cli_quiet_begin(void);
void cli_quiet_end(void);

/** Print "<app>: <fmt with arg>" and a pointer to "<app> --help"; returns APP_EXIT_USAGE (the
 *  tools that return their status rather than exit). */
int cli_usage(const char *fmt, const char *arg);

/** Print "<app>: <opt> '<value>' <why>" and exit(APP_EXIT_USAGE). */
_Noreturn void cli_bad(const char *opt, const char *value, const char *why);

/** A decimal integer in [min, max]. */
uint64_t cli_u64(const char *opt, const char *s, uint64_t min, uint64_t max);

/** A finite number in [min, max]. */
double cli_real(const char *opt, const char *s, double min, double max);

/** A size in the syntax of every INGOT_* size (110KiB, 2MiB, 1.5GiB, 4k; KB = 1000). */
uint64_t cli_size(const char *opt, const char *s);

#endif

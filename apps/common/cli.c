/* Strict option values for the apps (cli.h). */
#include "common/cli.h"
#include "common/job.h"
#include <ingot/config.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static int quiet_saved[2] = {-1, -1}; /* stdout and stderr while ranks other than 0 are quiet */

/* A quiet rank leaving during the parse (a usage error every rank found) lets rank 0's line
 * reach the launcher first: the launcher's summary names the first process to exit. */
#define QUIET_EXIT_DELAY_NS (250L * 1000 * 1000)

static void quiet_exit(void)
{
    if (quiet_saved[0] >= 0) {
        struct timespec delay = {0, QUIET_EXIT_DELAY_NS};
        nanosleep(&delay, NULL);
    }
}

void cli_quiet_begin(void)
{
    if (app_launcher_rank() == 0 || quiet_saved[0] >= 0) {
        return;
    }
    atexit(quiet_exit);
    int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null < 0) {
        return; /* every rank speaks: noisy, not wrong */
    }
    fflush(NULL);
    for (int fd = 1; fd <= 2; fd++) {
        quiet_saved[fd - 1] = dup(fd);
        dup2(null, fd);
    }
    close(null);
}

void cli_quiet_end(void)
{
    if (quiet_saved[0] < 0) {
        return;
    }
    fflush(NULL);
    for (int fd = 1; fd <= 2; fd++) {
        if (quiet_saved[fd - 1] >= 0) {
            dup2(quiet_saved[fd - 1], fd);
            close(quiet_saved[fd - 1]);
            quiet_saved[fd - 1] = -1;
        }
    }
}

int cli_usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", program_invocation_short_name);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n(see %s --help)\n", program_invocation_short_name);
    return APP_EXIT_USAGE;
}

void cli_bad(const char *opt, const char *value, const char *why)
{
    fprintf(stderr, "%s: %s '%s' %s\n", program_invocation_short_name, opt, value, why);
    exit(APP_EXIT_USAGE);
}

uint64_t cli_u64(const char *opt, const char *s, uint64_t min, uint64_t max)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (*s == '-' || end == s || *end != '\0' || errno != 0) {
        cli_bad(opt, s, "is not a non-negative integer");
    }
    char why[64];
    if (v < min || v > max) {
        snprintf(why, sizeof(why), "is %s its %s %llu", v < min ? "below" : "above",
                 v < min ? "minimum" : "maximum", (unsigned long long)(v < min ? min : max));
        cli_bad(opt, s, why);
    }
    return v;
}

double cli_real(const char *opt, const char *s, double min, double max)
{
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v) || v < min || v > max) {
        char why[64];
        snprintf(why, sizeof(why), "is not a number in [%g, %g]", min, max);
        cli_bad(opt, s, why);
    }
    return v;
}

uint64_t cli_size(const char *opt, const char *s)
{
    uint64_t v;
    if (ingot_config_parse_size(s, &v) != INGOT_OK) {
        cli_bad(opt, s, "is not a size (e.g. 64K, 110KiB, 2MiB, 1.5GiB)");
    }
    return v;
}

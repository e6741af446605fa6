/*
 * Log lines: "[host:pid:rank] INGOT LEVEL file:line message\n", written with one write(2) so
 * concurrent lines never interleave. The rank is "-" until known (ingot_init, or the launcher's
 * environment: OMPI_COMM_WORLD_RANK, PMIX_RANK, SLURM_PROCID, PMI_RANK).
 */
#include "base/log.h"
#include "base/status.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define INGOT_LOG_LINE_MAX 2048

_Atomic int ingot_log_level_current = INGOT_LOG_LEVEL_WARN;

static _Atomic int log_fd = STDERR_FILENO;
static _Atomic int log_rank = -1;
static char log_host[64];
static pthread_once_t log_once = PTHREAD_ONCE_INIT;

static _Thread_local char log_last_error[INGOT_LOG_LINE_MAX];

/* Held error lines of this thread (ingot_log_hold_begin): allocated at the first held error. */
#define LOG_HELD_MAX 8
typedef struct log_held_line {
    const char *file;
    int line;
    char text[INGOT_LOG_LINE_MAX];
} log_held_line_t;
typedef struct log_held {
    unsigned count, dropped;
    log_held_line_t lines[LOG_HELD_MAX];
} log_held_t;
static _Thread_local int log_hold_depth;
static _Thread_local log_held_t *log_held;

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

static int log_open(const char *pattern, int *fd_p);
static void log_expand(const char *pattern, char *out, size_t outlen);

/*
 * Library calls made before the configuration is read (ingot_init, or a tool's own call of
 * ingot_config_load) still honour INGOT_LOG_LEVEL and INGOT_LOG_FILE: valid values are applied
 * here; invalid ones are left for the configuration to report (it names them and fails).
 */
static void log_env_early(void)
{
    const char *level = getenv("INGOT_LOG_LEVEL");
    const char *file = getenv("INGOT_LOG_FILE");
    for (size_t i = 0; level != NULL && i < sizeof(level_names) / sizeof(level_names[0]); i++) {
        if (strcasecmp(level, level_names[i]) == 0) {
            atomic_store(&ingot_log_level_current, (int)i);
        }
    }
    int fd;
    if (file != NULL && *file != '\0' && strcmp(file, "stderr") != 0 && log_open(file, &fd) == 0) {
        atomic_store(&log_fd, fd);
    }
}

static void log_init_once(void)
{
    static const char *const rank_vars[] = {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID",
                                            "PMI_RANK"};
    if (gethostname(log_host, sizeof(log_host)) != 0) {
        strcpy(log_host, "?");
    }
    log_host[sizeof(log_host) - 1] = '\0';
    char *dot = strchr(log_host, '.');
    if (dot != NULL) {
        *dot = '\0';
    }
    for (size_t i = 0; i < sizeof(rank_vars) / sizeof(rank_vars[0]); i++) {
        const char *v = getenv(rank_vars[i]);
        if (v != NULL && *v != '\0') {
            atomic_store(&log_rank, atoi(v));
            break;
        }
    }
    log_env_early();
}

const char *ingot_log_level_name(ingot_log_level_t level)
{
    return ((unsigned)level < sizeof(level_names) / sizeof(level_names[0])) ? level_names[level]
                                                                            : "?";
}

void ingot_log_set_rank(int rank)
{
    pthread_once(&log_once, log_init_once);
    atomic_store(&log_rank, rank);
}

void ingot_log_expand_path(const char *pattern, char *out, size_t outlen)
{
    pthread_once(&log_once, log_init_once);
    log_expand(pattern, out, outlen);
}

/* The user's name (for per-user paths), or its uid when it has none. */
static const char *log_user(char *buf, size_t len)
{
    struct passwd pw, *found = NULL;
    char scratch[1024];
    if (getpwuid_r(geteuid(), &pw, scratch, sizeof(scratch), &found) == 0 && found != NULL) {
        snprintf(buf, len, "%s", found->pw_name);
    } else {
        snprintf(buf, len, "%u", (unsigned)geteuid());
    }
    return buf;
}

/* The expansion itself (host and rank must be known: called after or inside log_init_once). */
static void log_expand(const char *pattern, char *out, size_t outlen)
{
    size_t o = 0;
    for (const char *p = pattern; *p != '\0' && o + 1 < outlen; p++) {
        char sub[64];
        const char *ins = NULL;
        if (p[0] == '%' && p[1] != '\0') {
            switch (p[1]) {
            case 'h': ins = log_host; break;
            case 'p':
                snprintf(sub, sizeof(sub), "%d", (int)getpid());
                ins = sub;
                break;
            case 'r':
                snprintf(sub, sizeof(sub), "%d", atomic_load(&log_rank));
                ins = sub;
                break;
            case 'u': ins = log_user(sub, sizeof(sub)); break;
            case '%': ins = "%"; break;
            default: break;
            }
        }
        if (ins == NULL) {
            out[o++] = *p;
            continue;
        }
        p++;
        for (; *ins != '\0' && o + 1 < outlen; ins++) {
            out[o++] = *ins;
        }
    }
    out[o] = '\0';
}

/* Open the expanded log path for appending: 0, or the errno. */
static int log_open(const char *pattern, int *fd_p)
{
    char path[4096];
    log_expand(pattern, path, sizeof(path));
    *fd_p = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    return (*fd_p < 0) ? errno : 0;
}

int ingot_log_configure(int level, const char *file_pattern)
{
    pthread_once(&log_once, log_init_once);
    atomic_store(&ingot_log_level_current, level);
    if (file_pattern == NULL || strcmp(file_pattern, "stderr") == 0) {
        return INGOT_OK;
    }
    int fd, err = log_open(file_pattern, &fd);
    if (err != 0) {
        char path[4096];
        ingot_log_expand_path(file_pattern, path, sizeof(path));
        ingot_error("INGOT_LOG_FILE: cannot open '%s': %s (logging stays on stderr)", path,
                    strerror(err));
        return ingot_status_from_errno(err);
    }
    int old = atomic_exchange(&log_fd, fd);
    if (old != STDERR_FILENO) {
        close(old);
    }
    return INGOT_OK;
}

void ingot_log_write(ingot_log_level_t level, const char *file, int line, const char *fmt, ...)
{
    pthread_once(&log_once, log_init_once);
    char buf[INGOT_LOG_LINE_MAX];
    const char *base = strrchr(file, '/');
    int rank = atomic_load(&log_rank);
    char rank_str[16] = "-";
    if (rank >= 0) {
        snprintf(rank_str, sizeof(rank_str), "%d", rank);
    }
    int n = snprintf(buf, sizeof(buf), "[%s:%d:%s] INGOT %-5s %s:%d ", log_host, (int)getpid(),
                     rank_str, ingot_log_level_name(level), base ? base + 1 : file, line);
    if (n < 0) {
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    if ((size_t)n < sizeof(buf)) {
        int m = vsnprintf(buf + n, sizeof(buf) - (size_t)n, fmt, ap);
        n = (m < 0) ? n : n + m;
    }
    va_end(ap);
    if ((size_t)n >= sizeof(buf) - 1) {
        n = (int)sizeof(buf) - 2; /* truncated: keep the newline */
    }
    buf[n++] = '\n';
    ssize_t w = write(atomic_load(&log_fd), buf, (size_t)n);
    (void)w; /* nowhere to report a failed log write */
}

/* Keep an error line while a hold is on: 1 when kept (or counted as dropped past the room). */
static int log_hold_keep(const char *file, int line)
{
    if (log_hold_depth == 0) {
        return 0;
    }
    if (log_held == NULL && (log_held = calloc(1, sizeof(*log_held))) == NULL) {
        return 0; /* no room to hold it: written at once */
    }
    if (log_held->count == LOG_HELD_MAX) {
        log_held->dropped++;
        return 1;
    }
    log_held_line_t *h = &log_held->lines[log_held->count++];
    h->file = file;
    h->line = line;
    memcpy(h->text, log_last_error, sizeof(h->text));
    return 1;
}

void ingot_log_error_write(const char *file, int line, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(log_last_error, sizeof(log_last_error), fmt, ap);
    va_end(ap);
    if (ingot_log_enabled(INGOT_LOG_LEVEL_ERROR) && !log_hold_keep(file, line)) {
        ingot_log_write(INGOT_LOG_LEVEL_ERROR, file, line, "%s", log_last_error);
    }
}

void ingot_log_hold_begin(void)
{
    log_hold_depth++;
}

void ingot_log_hold_end(void)
{
    if (log_hold_depth > 0 && --log_hold_depth == 0) {
        ingot_log_held_flush(1, NULL);
        free(log_held);
        log_held = NULL;
    }
}

int ingot_log_hold_depth(void)
{
    return log_hold_depth;
}

unsigned ingot_log_held(uint64_t *digest_p)
{
    uint64_t h = 0;
    unsigned n = log_held != NULL ? log_held->count : 0;
    if (n > 0) {
        h = 0xcbf29ce484222325ull; /* FNV-1a over every line's site and text */
        for (unsigned i = 0; i < n; i++) {
            const log_held_line_t *l = &log_held->lines[i];
            char site[INGOT_LOG_LINE_MAX + 64];
            const char *base = strrchr(l->file, '/');
            int m = snprintf(site, sizeof(site), "%s:%d %s", base ? base + 1 : l->file, l->line,
                             l->text);
            for (int k = 0; k < m && k < (int)sizeof(site); k++) {
                h = (h ^ (unsigned char)site[k]) * 0x100000001b3ull;
            }
        }
    }
    *digest_p = h;
    return n;
}

void ingot_log_held_flush(int write, const char *note)
{
    if (log_held == NULL) {
        return;
    }
    for (unsigned i = 0; write && i < log_held->count; i++) {
        const log_held_line_t *l = &log_held->lines[i];
        int last = i + 1 == log_held->count;
        ingot_log_write(INGOT_LOG_LEVEL_ERROR, l->file, l->line, "%s%s", l->text,
                        last && note != NULL ? note : "");
    }
    if (write && log_held->dropped > 0) {
        ingot_log_write(INGOT_LOG_LEVEL_ERROR, __FILE__, __LINE__,
                        "(%u more error lines of this step were not kept)", log_held->dropped);
    }
    log_held->count = log_held->dropped = 0;
}

const char *ingot_last_error(void)
{
    return log_last_error;
}

void ingot_last_error_clear(void)
{
    log_last_error[0] = '\0';
}

void ingot_last_error_set(const char *msg)
{
    snprintf(log_last_error, sizeof(log_last_error), "%s", msg);
}

/*
 * ingot-cache's command line and commands (apps/cache/README.md): the parsed arguments every
 * command takes, and each command's entry point.
 */
#ifndef INGOT_APPS_CACHE_CLI_H
#define INGOT_APPS_CACHE_CLI_H

#include <stddef.h>
#include <stdint.h>

#define CACHE_EXIT_FAIL     1
#define CACHE_EXIT_USAGE    2
#define CACHE_MANIFESTS_MAX 64

/** The usage text (ingot-cache --help). */
extern const char cache_usage_text[];

/* Parsed command line: the folder (or NULL: INGOT_DISK_CACHE_DIR) and the options. */
typedef struct cache_args {
    const char *dir;
    const char *manifests[CACHE_MANIFESTS_MAX];
    uint32_t nmanifests;
    const char *to; /* evict --to SIZE */
    int remove;     /* verify --remove */
} cache_args_t;

/** Parse a command's arguments; 0 or an exit code (the problem said). */
int cache_parse(int argc, char **argv, cache_args_t *a);
/** The folder the command works on: the one given, else INGOT_DISK_CACHE_DIR's; NULL when that
 *  cannot be read (said). */
const char *cache_dir(const cache_args_t *a, char *buf, size_t len);

/* The commands: each returns the exit status. */
int cache_list(const cache_args_t *a);
int cache_verify(const cache_args_t *a);
int cache_evict(const cache_args_t *a);
int cache_clean(const cache_args_t *a);

#endif

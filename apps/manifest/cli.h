/*
 * ingot-manifest's command line and commands (apps/manifest/README.md): the parsed arguments
 * every command takes, and each command's entry point.
 */
#ifndef INGOT_APPS_MANIFEST_CLI_H
#define INGOT_APPS_MANIFEST_CLI_H

#include "manifest/image_folder.h"
#include <stdint.h>

#define CLI_EXIT_FAIL  1
#define CLI_EXIT_USAGE 2

/** The usage text (ingot-manifest --help). */
extern const char cli_usage_text[];

/* Parsed command line: positional arguments and the options every command may take. */
typedef struct cli_args {
    const char **pos;
    int npos;
    const char *out, *dict_file, *field, *shard_size, *labels, *split;
    int reject_special, dict, fashion, zstd_level, jobs;
    int64_t shard;
    cli_folder_t folder; /* pack --labels-from-dirs and its options */
} cli_args_t;

/** Parse a command's arguments (@p dict_file: --dict takes a file, as build's); 0 or an exit
 *  code (the problem said). Free a->pos when done. */
int cli_parse(int argc, char **argv, int dict_file, cli_args_t *a);

/* The commands: each returns the exit status. */
int cli_pack(int argc, char **argv);
int cli_build(int argc, char **argv);
/** build over a bucket (bucket.c): a->pos[0] is an s3:// prefix. */
int cli_build_bucket(const cli_args_t *a);
int cli_inspect(int argc, char **argv);
int cli_verify(int argc, char **argv);
int cli_list(int argc, char **argv);
int cli_cat(int argc, char **argv);

#endif

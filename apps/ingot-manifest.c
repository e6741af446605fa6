/*
 * ingot-manifest: pack files into tar shards, build a manifest over existing shards, and
 * inspect, verify or read from a manifest. See `ingot-manifest --help`; the commands are in
 * apps/manifest/.
 */
#include "manifest/cli.h"
#include "common/cli.h"
#include <ingot/config.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(cli_usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? CLI_EXIT_USAGE : 0;
    }
    /* INGOT_LOG_LEVEL, INGOT_LOG_FILE, INGOT_FAULT, INGOT_TIMEOUT */
    if (ingot_config_check() != INGOT_OK) {
        return CLI_EXIT_FAIL; /* the bad variable was logged */
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "build") == 0) {
        return cli_build(argc - 2, argv + 2);
    } else if (strcmp(cmd, "verify") == 0) {
        return cli_verify(argc - 2, argv + 2);
    } else if (strcmp(cmd, "inspect") == 0) {
        return cli_inspect(argc - 2, argv + 2);
    } else if (strcmp(cmd, "cat") == 0) {
        return cli_cat(argc - 2, argv + 2);
    } else if (strcmp(cmd, "list") == 0) {
        return cli_list(argc - 2, argv + 2);
    } else if (strcmp(cmd, "pack") == 0) {
        return cli_pack(argc - 2, argv + 2);
    }
    return cli_usage("unknown command '%s'", cmd);
}

/*
 * ingot-cache: what a folder of the node-local disk tier holds per manifest, its entries checked
 * against a manifest, evicted to a size, its orphans cleaned. See `ingot-cache --help`; the
 * commands are in apps/cache/.
 */
#include "cache/cli.h"
#include "common/cli.h"
#include <ingot/config.h>
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
    if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        fputs(cache_usage_text, argc < 2 ? stderr : stdout);
        return argc < 2 ? CACHE_EXIT_USAGE : 0;
    }
    /* INGOT_DISK_CACHE_DIR, INGOT_LOG_LEVEL, INGOT_TIMEOUT (the ledger's lock) */
    if (ingot_config_check() != INGOT_OK) {
        return CACHE_EXIT_FAIL; /* the bad variable was logged */
    }
    cache_args_t a;
    int rc = cache_parse(argc - 2, argv + 2, &a);
    if (rc != 0) {
        return rc;
    }
    const char *cmd = argv[1];
    if (strcmp(cmd, "list") == 0) {
        return cache_list(&a);
    } else if (strcmp(cmd, "verify") == 0) {
        return cache_verify(&a);
    } else if (strcmp(cmd, "evict") == 0) {
        return cache_evict(&a);
    } else if (strcmp(cmd, "clean") == 0) {
        return cache_clean(&a);
    }
    return cli_usage("unknown command '%s'", cmd);
}

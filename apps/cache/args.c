/* ingot-cache's command line: the usage text, the options, the folder. */
#include "cache/cli.h"
#include "common/cli.h"
#include <ingot/disk_cache.h>
#include <stdio.h>
#include <string.h>

const char cache_usage_text[] =
    "usage: ingot-cache COMMAND [DIR] [OPTIONS]\n"
    "\n"
    "The folder of the node-local disk tier (docs/tiers.md): DIR, or INGOT_DISK_CACHE_DIR's\n"
    "(default /var/tmp/ingot-cache-$USER). Safe while jobs use the folder: changes are made\n"
    "under its ledger's lock, and a temporary a live writer holds is never touched.\n"
    "\n"
    "  list [DIR] [--manifest M]...\n"
    "        What the folder holds: per manifest given, the entries of its shards (pieces),\n"
    "        their bytes, the share of the manifest's bytes they hold and the reads served from\n"
    "        them (as counted by the jobs that ended); the entries of no manifest given; the\n"
    "        folder's totals, its ledger, orphans and fills in progress.\n"
    "  verify [DIR] --manifest M [--remove]\n"
    "        Read every entry of M's shards whole and check it (header, length, every block's\n"
    "        hash); check each shard held whole against M's shard hash. Print every bad entry\n"
    "        and why; --remove removes them. Exit 1 if any is bad.\n"
    "  evict [DIR] --to SIZE\n"
    "        Remove entries, oldest first, until the folder holds at most SIZE (64GiB, 0...).\n"
    "  clean [DIR]\n"
    "        Remove the temporaries no live writer holds (orphans of killed jobs; every job's\n"
    "        start does this too).\n"
    "\n"
    "Exit status: 0 success, 1 failure (a bad entry found by verify, an unreadable folder or\n"
    "manifest, an invalid INGOT_* variable), 2 usage error.\n";

int cache_parse(int argc, char **argv, cache_args_t *a)
{
    *a = (cache_args_t){0};
    for (int i = 0; i < argc; i++) {
        const char *o = argv[i];
        int more = i + 1 < argc;
        if (strcmp(o, "--manifest") == 0 && more) {
            if (a->nmanifests == CACHE_MANIFESTS_MAX) {
                return cli_usage("more than %s manifests", "64");
            }
            a->manifests[a->nmanifests++] = argv[++i];
        } else if (strcmp(o, "--to") == 0 && more) {
            a->to = argv[++i];
        } else if (strcmp(o, "--remove") == 0) {
            a->remove = 1;
        } else if (o[0] == '-' && o[1] != '\0') {
            return cli_usage("unknown or incomplete option '%s'", o);
        } else if (a->dir == NULL) {
            a->dir = o;
        } else {
            return cli_usage("one folder at most ('%s' is another)", o);
        }
    }
    return 0;
}

const char *cache_dir(const cache_args_t *a, char *buf, size_t len)
{
    if (a->dir != NULL) {
        return a->dir;
    }
    return ingot_disk_cache_dir(buf, len) == INGOT_OK ? buf : NULL;
}

/* ingot-cache's commands: list, verify, evict, clean (include/ingot/disk_cache.h). */
#include "cache/cli.h"
#include "common/cli.h"
#include <ingot/disk_cache.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>

/* Bytes in binary units for people ("5.3 MiB"). */
static const char *human(uint64_t b, char *buf, size_t len)
{
    const char *unit[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    double v = (double)b;
    int u = 0;
    while (v >= 1024.0 && u < 5) {
        v /= 1024.0;
        u++;
    }
    snprintf(buf, len, u ? "%.1f %s" : "%.0f %s", v, unit[u]);
    return buf;
}

static void list_row(const char *name, const ingot_disk_cache_usage_t *u)
{
    char b[32], share[16] = "-";
    if (u->shard_bytes > 0) {
        snprintf(share, sizeof(share), "%.1f%%",
                 100.0 * (double)u->piece_bytes / (double)u->shard_bytes);
    }
    printf("%-44s %10" PRIu64 " %12s %10s %12" PRIu64 "\n", name, u->entries,
           human(u->bytes, b, sizeof(b)), share, u->hits);
}

int cache_list(const cache_args_t *a)
{
    char path[PATH_MAX], b1[32], b2[32];
    const char *dir = cache_dir(a, path, sizeof(path));
    ingot_disk_cache_usage_t usage[CACHE_MANIFESTS_MAX + 1];
    ingot_disk_cache_folder_t f;
    if (dir == NULL ||
        ingot_disk_cache_list(dir, a->manifests, a->nmanifests, usage, &f) != INGOT_OK) {
        return CACHE_EXIT_FAIL; /* said */
    }
    printf("# folder %s: %" PRIu64 " entries, %s (its ledger: %s); %" PRIu64 " orphans, %" PRIu64
           " fills in progress, %" PRIu64 " other files\n",
           dir, f.entries, human(f.bytes, b1, sizeof(b1)), human(f.ledger_bytes, b2, sizeof(b2)),
           f.orphans, f.fills, f.strangers);
    printf("%-44s %10s %12s %10s %12s\n", "# manifest", "entries", "bytes", "of it", "hits");
    printf("%-44s %10s %12s %10s %12s\n", "#", "(pieces)", "(on disk)", "(bytes)", "(reads)");
    for (uint32_t i = 0; i < a->nmanifests; i++) {
        list_row(a->manifests[i], &usage[i]);
    }
    list_row(a->nmanifests ? "(other entries)" : "(all entries)", &usage[a->nmanifests]);
    return 0;
}

static void verify_bad(void *arg, const char *entry, const char *why)
{
    const char *dir = arg;
    printf("bad entry %s/%s: %s\n", dir, entry, why);
}

int cache_verify(const cache_args_t *a)
{
    char path[PATH_MAX];
    const char *dir = cache_dir(a, path, sizeof(path));
    if (a->nmanifests != 1) {
        return cli_usage("verify takes one --manifest%s", "");
    }
    ingot_disk_cache_verify_t v;
    if (dir == NULL || ingot_disk_cache_verify(dir, a->manifests[0], a->remove, verify_bad,
                                               (void *)dir, &v) != INGOT_OK) {
        return CACHE_EXIT_FAIL;
    }
    printf("%s: %" PRIu64 " entries of %s checked, %" PRIu64 " bad%s; %" PRIu64
           " shards held whole, %" PRIu64 " of them match the manifest's hash\n",
           dir, v.checked, a->manifests[0], v.bad, v.bad && a->remove ? " (removed)" : "",
           v.shards_whole, v.shards_match);
    return v.bad == 0 && v.shards_match == v.shards_whole ? 0 : CACHE_EXIT_FAIL;
}

int cache_evict(const cache_args_t *a)
{
    char path[PATH_MAX], b[32];
    const char *dir = cache_dir(a, path, sizeof(path));
    if (a->to == NULL) {
        return cli_usage("evict needs --to SIZE%s", "");
    }
    uint64_t target = cli_size("--to", a->to), gone[2];
    if (dir == NULL || ingot_disk_cache_evict(dir, target, gone) != INGOT_OK) {
        return CACHE_EXIT_FAIL;
    }
    printf("%s: %" PRIu64 " entries (%s) evicted, oldest first\n", dir, gone[0],
           human(gone[1], b, sizeof(b)));
    return 0;
}

int cache_clean(const cache_args_t *a)
{
    char path[PATH_MAX];
    const char *dir = cache_dir(a, path, sizeof(path));
    uint64_t removed, live;
    if (dir == NULL || ingot_disk_cache_clean(dir, &removed, &live) != INGOT_OK) {
        return CACHE_EXIT_FAIL;
    }
    printf("%s: %" PRIu64 " orphans removed, %" PRIu64 " fills of live writers kept\n", dir,
           removed, live);
    return 0;
}

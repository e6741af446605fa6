/*
 * Files as storage (storage.h): the POSIX source, behind the emulated remote store when
 * INGOT_STORAGE_EMULATE asks; the storage table; the readers storage wants.
 */
#include "source/storage.h"
#include "source/posix.h"
#include "base/log.h"
#include <stddef.h>
#include <string.h>

#define STORAGE_READERS_LOCAL 2 /* page cache / local NVMe: a couple of threads saturate it */
/* A remote store hides its per-request latency only behind many requests in flight (32 x 5 ms
 * requests per 10 ms step need 16+; measured: 8 readers AU 0.48, 32 readers AU 0.998). */
#define STORAGE_READERS_REMOTE 32
/* An object store under the locality order: reads are copies out of parts, a miss a whole part
 * (measured at 110 KiB from SeaweedFS: 8 readers as fast as 32; with the peer cache, AU 0.993
 * from epoch 2 on against 0.986, the idle threads no longer taking the 2 cores' time). */
#define STORAGE_READERS_PARTS 8

#define F(_field) offsetof(ingot_storage_config_t, _field)

static const char *const map_shards_names[] = {[INGOT_MAP_SHARDS_NO] = "n",
                                               [INGOT_MAP_SHARDS_YES] = "y",
                                               [INGOT_MAP_SHARDS_AUTO] = "auto",
                                               [INGOT_MAP_SHARDS_AUTO + 1] = NULL};

static const ingot_config_field_t storage_fields[] = {
    {"STORAGE_EMULATE", "none",
     "Emulate a remote store in front of the shard files: 'bw=200MiB/s,lat=5ms' caps the "
     "bandwidth (token bucket) and adds a latency to every request; either part may be left "
     "out; 'none' reads the files directly.",
     INGOT_CONFIG_SCOPE_JOB, INGOT_CONFIG_TYPED, F(emulate), 0, 0, NULL, NULL,
     &ingot_source_emulation_codec, NULL},
    {"MAP_SHARDS", "y",
     "'y': read shard files by copying out of a read-only mapping of each (no system call per "
     "request: a third less time per sample than preadv out of the page cache here); a shard "
     "that cannot be mapped is read with preadv, one that shrinks while mapped fails its reads "
     "with an error naming it. A process faults in each page it maps on its first read (up to 2 "
     "faults per 110 KiB). 'n': preadv. 'auto': 'y' while the node's ranks are no more than its "
     "allowed PUs, else 'n': faster where many ranks per core each read most pages once (the "
     "DLIO sweep: 40 accelerators against 36), slower where ranks read their pages again (8 "
     "epochs over 1-2 GiB on 4 ranks: 15-28%); docs/loader.md. Not with DIRECT_IO.",
     INGOT_CONFIG_SCOPE_RANK, INGOT_CONFIG_ENUM, F(map_shards), 0, 0, map_shards_names, NULL, NULL,
     NULL},
};

INGOT_CONFIG_MODULE(ingot_storage, "storage", INGOT_CONFIG_ORDER_RUNTIME - 3, storage_fields,
                    ingot_storage_config_t, NULL)

uint32_t ingot_storage_readers(const ingot_tier_config_t *cfg, const ingot_location_t *location,
                               ingot_order_mode_t mode)
{
    if (ingot_location_is_remote(location)) {
        return mode == INGOT_ORDER_LOCALITY ? STORAGE_READERS_PARTS : STORAGE_READERS_REMOTE;
    }
    return ingot_source_emulation_active(&cfg->storage->emulate) ? STORAGE_READERS_REMOTE
                                                                 : STORAGE_READERS_LOCAL;
}

bool ingot_storage_map_shards(const ingot_storage_config_t *cfg, int node_ranks, int node_pus)
{
    if (cfg->map_shards != INGOT_MAP_SHARDS_AUTO) {
        return cfg->map_shards == INGOT_MAP_SHARDS_YES;
    }
    return node_pus <= 0 || node_ranks <= node_pus;
}

static int storage_wanted(const ingot_tier_plan_t *plan)
{
    return !ingot_location_is_remote(plan->location);
}

/* POSIX reads, behind the emulated store when asked. */
static ingot_status_t storage_make(const ingot_tier_plan_t *plan, ingot_source_t **src_p)
{
    const ingot_source_emulation_t *emu = &plan->cfg->storage->emulate;
    int ranks = plan->node != NULL ? plan->node->local_size : 1;
    bool map = ingot_storage_map_shards(plan->cfg->storage, ranks, plan->node_pus);
    int mode = plan->direct_io ? INGOT_SOURCE_POSIX_DIRECT
               : map           ? INGOT_SOURCE_POSIX_MAP
                               : INGOT_SOURCE_POSIX_PREAD;
    if (plan->cfg->storage->map_shards == INGOT_MAP_SHARDS_AUTO && !plan->direct_io &&
        (plan->node == NULL || plan->node->local_rank == 0)) {
        ingot_info("storage: INGOT_MAP_SHARDS=auto: %d ranks on this node's %d PUs: shards are "
                   "read %s",
                   ranks, plan->node_pus, map ? "out of mappings" : "with preadv");
    }
    ingot_status_t st = ingot_source_posix_create(plan->manifest, mode, src_p);
    if (st == INGOT_OK && ingot_source_emulation_active(emu)) {
        st = ingot_source_emulate_create(emu, *src_p, plan->nreqs, src_p);
    }
    return st;
}

static ingot_status_t storage_create(const ingot_tier_plan_t *plan, ingot_source_t **below_p,
                                     ingot_tier_t **tier_p)
{
    return ingot_tier_storage_create(plan, &ingot_storage_tier_ops, storage_make, below_p, tier_p);
}

const ingot_tier_ops_t ingot_storage_tier_ops = {.name = "storage",
                                                 .kind = INGOT_TIER_STORAGE,
                                                 .wanted = storage_wanted,
                                                 .create = storage_create,
                                                 .destroy = ingot_tier_storage_destroy};

/*
 * The tiers' planning without MPI or a transport (source/tier.h): the peer cache's placement and
 * the disk tier's homes computed from facts alone, as a simulator of a cluster computes them, and
 * checked for what a job relies on. This process never initialises MPI.
 *   - placement, 16 ranks on 4 nodes: every sample at most one home, each window filled with a
 *     prefix of what its rank reads first and never past its size, the fills a rank expects
 *     exactly the samples homed there, a budget per node measured per node, a budget that holds
 *     everything homing every sample the epoch reads;
 *   - homes, 1,024 nodes of 8 ranks: every piece at a node that serves, the keepers the nodes'
 *     lowest ranks, homes spread over the nodes, and a node that stops serving moving its own
 *     pieces only (rendezvous hashing: a later job on the other nodes finds the rest in place);
 *   - INGOT_MAP_SHARDS: auto maps shards while a node's ranks are no more than its PUs.
 */
#include "common/test.h"
#include "common/loader_data.h"
#include "source/cache/cache.h"
#include "source/disk/disk.h"
#include "source/storage.h"
#include "base/config.h"
#include "base/mix.h"
#include "topology/topo.h"
#include <ingot/order.h>
#include <ingot/shard.h>
#include <stdlib.h>
#include <string.h>

#define RANKS   16
#define NODES   4
#define SAMPLES 3000
#define BATCH   64

/* Facts of @p world ranks spread evenly over @p nodes nodes named node0000, node0001, ... */
static ingot_tier_facts_t make_facts(int world, int nodes, int **node_of_p, char **names_p)
{
    int *node_of = calloc((size_t)world, sizeof(int));
    char *names = calloc((size_t)nodes, INGOT_TOPO_HOST_MAX);
    CHECK(node_of != NULL && names != NULL);
    for (int r = 0; r < world; r++) {
        node_of[r] = r / (world / nodes);
    }
    for (int n = 0; n < nodes; n++) {
        snprintf(names + (size_t)n * INGOT_TOPO_HOST_MAX, INGOT_TOPO_HOST_MAX, "node%04d", n);
    }
    *node_of_p = node_of;
    *names_p = names;
    return (ingot_tier_facts_t){
        .world = world, .rank = 0, .nnodes = nodes, .node_of = node_of, .node_names = names};
}

/* The placement of @p windows (per rank) for rank @p me. */
static ingot_cache_placement_t place(ingot_manifest_h m, ingot_order_h o, ingot_tier_facts_t f,
                                     int me, const uint64_t *windows, int per_node)
{
    f.rank = me;
    ingot_cache_place_in_t in = {.facts = &f,
                                 .windows = windows,
                                 .per_node = per_node,
                                 .manifest = m,
                                 .order = o,
                                 .fill_epoch = 0,
                                 .fill_step = 0,
                                 .steps_per_epoch = ingot_order_steps(o),
                                 .slice = BATCH / RANKS};
    ingot_cache_placement_t out;
    CHECK_OK(ingot_cache_place(&in, &out));
    return out;
}

static void test_placement(ingot_manifest_h m)
{
    ingot_order_params_t op = {.field_mask = INGOT_ORDER_PARAM_FIELD_SAMPLES |
                                             INGOT_ORDER_PARAM_FIELD_BATCH |
                                             INGOT_ORDER_PARAM_FIELD_SEED,
                               .sample_count = SAMPLES,
                               .global_batch = BATCH,
                               .seed = 7};
    ingot_order_h o;
    CHECK_OK(ingot_order_create(&op, &o));
    int *node_of;
    char *names;
    ingot_tier_facts_t f = make_facts(RANKS, NODES, &node_of, &names);
    uint64_t windows[RANKS];
    for (int r = 0; r < RANKS; r++) {
        windows[r] = 40000 + (uint64_t)r * 1000; /* windows differ: a budget per node */
    }
    ingot_cache_placement_t p0 = place(m, o, f, 0, windows, 1);
    CHECK(p0.count == SAMPLES && p0.cached_samples > 0 && p0.cached_samples < SAMPLES);
    uint64_t used[RANKS] = {0}, homed[RANKS] = {0}, cached = 0;
    for (uint64_t i = 0; i < p0.count; i++) {
        ingot_cache_entry_t e = p0.entries[i];
        if (e.home < 0) {
            continue;
        }
        CHECK(e.home < RANKS && e.length > 0);
        CHECK(e.offset + e.length <= windows[e.home]); /* never past its window */
        used[e.home] += e.length;
        homed[e.home]++;
        cached++;
    }
    CHECK(cached == p0.cached_samples);
    for (int r = 0; r < RANKS; r++) {
        CHECK(used[r] <= windows[r]);
        ingot_cache_placement_t pr = place(m, o, f, r, windows, 1);
        CHECK(pr.fill_expected == homed[r]); /* each rank fills what is homed there */
        CHECK(memcmp(pr.entries, p0.entries, SAMPLES * sizeof(*p0.entries)) == 0); /* alike */
        free(pr.entries);
    }
    /* "needed" is a budget per node here: the largest need of a node's ranks times its ranks */
    CHECK(p0.needed >= p0.dataset_bytes / NODES);
    uint64_t all[RANKS];
    for (int r = 0; r < RANKS; r++) {
        all[r] = p0.needed; /* that budget per rank holds every sample */
    }
    ingot_cache_placement_t full = place(m, o, f, 0, all, 1);
    uint64_t read = ingot_order_steps(o) * BATCH; /* the dropped tail is read by nobody */
    CHECK(read < SAMPLES && full.cached_samples == read);
    CHECK(full.cached_bytes == full.dataset_bytes);
    free(full.entries);
    free(p0.entries);
    free(node_of);
    free(names);
    ingot_order_destroy(o);
}

static void test_homes(void)
{
    const int nodes = 1024, world = 8 * nodes;
    const uint64_t npieces = 100000;
    int *node_of;
    char *names;
    ingot_tier_facts_t f = make_facts(world, nodes, &node_of, &names);
    uint64_t *usable = calloc((size_t)world, sizeof(uint64_t));
    uint64_t *keys = calloc(npieces, sizeof(uint64_t));
    CHECK(usable != NULL && keys != NULL);
    for (int r = 0; r < world; r++) {
        usable[r] = 1;
    }
    for (uint64_t p = 0; p < npieces; p++) {
        keys[p] = ingot_mix64(p * 0x9e3779b97f4a7c15ull + 1);
    }
    ingot_disk_homes_t h, g;
    CHECK_OK(ingot_disk_plan_homes(&f, usable, keys, npieces, &h));
    CHECK(h.serving_nodes == nodes);
    uint32_t *per = calloc((size_t)nodes, sizeof(uint32_t));
    for (uint64_t p = 0; p < npieces; p++) {
        CHECK(h.home[p] >= 0 && h.home[p] < nodes);
        per[h.home[p]]++;
    }
    for (int n = 0; n < nodes; n++) {
        CHECK(h.node_keeper[n] == 8 * n); /* the node's lowest rank */
        CHECK(h.node_first[n + 1] - h.node_first[n] == 8);
        CHECK(per[n] > 0 && per[n] < 3 * npieces / nodes); /* spread, none idle or swamped */
    }
    /* node 5 stops serving (one of its ranks cannot use its folder): its pieces move, no other */
    usable[5 * 8 + 3] = 0;
    CHECK_OK(ingot_disk_plan_homes(&f, usable, keys, npieces, &g));
    CHECK(g.serving_nodes == nodes - 1 && g.node_usable[5] == 0);
    uint64_t moved = 0;
    for (uint64_t p = 0; p < npieces; p++) {
        CHECK(g.home[p] != 5);
        if (h.home[p] != 5) {
            CHECK(g.home[p] == h.home[p]);
        } else {
            moved++;
        }
    }
    CHECK(moved == per[5]);
    ingot_disk_homes_free(&h);
    ingot_disk_homes_free(&g);
    free(per);
    free(usable);
    free(keys);
    free(node_of);
    free(names);
}

/* INGOT_MAP_SHARDS: y and n as said; auto mapped while a node's ranks are no more than its PUs
 * (measured: 1 and 2 ranks on 2 cores faster mapped, 4 and more with preadv). */
static void test_map_shards(void)
{
    ingot_storage_config_t cfg = {.map_shards = INGOT_MAP_SHARDS_AUTO};
    CHECK(ingot_storage_map_shards(&cfg, 1, 2));
    CHECK(ingot_storage_map_shards(&cfg, 2, 2));
    CHECK(!ingot_storage_map_shards(&cfg, 3, 2));
    CHECK(!ingot_storage_map_shards(&cfg, 40, 2));
    CHECK(ingot_storage_map_shards(&cfg, 8, 0)); /* PUs not known: mapped */
    cfg.map_shards = INGOT_MAP_SHARDS_YES;
    CHECK(ingot_storage_map_shards(&cfg, 40, 2));
    cfg.map_shards = INGOT_MAP_SHARDS_NO;
    CHECK(!ingot_storage_map_shards(&cfg, 1, 2));
    /* the table: y by default, y|n|auto taken, anything else refused naming the values */
    const ingot_config_field_t *f = ingot_config_find("INGOT_MAP_SHARDS", NULL);
    CHECK(f != NULL && strcmp(f->dfl, "y") == 0);
    const char *taken[] = {"n", "y", "auto"};
    for (int i = 0; i < 3; i++) {
        char err[256];
        int v = -1;
        CHECK_OK(ingot_config_parse(f, taken[i], &v, err, sizeof(err)));
        CHECK(v == i);
    }
    char err[256] = "";
    int v = -1;
    CHECK(ingot_config_parse(f, "maybe", &v, err, sizeof(err)) != INGOT_OK);
    CHECK(strstr(err, "maybe") != NULL && strstr(err, "auto") != NULL);
}

int main(void)
{
    char dir[1024];
    snprintf(dir, sizeof(dir), "%s/ds", test_tmpdir());
    CHECK(data_pack(dir, SAMPLES, 256 << 10, 0) == 0);
    char path[1100];
    snprintf(path, sizeof(path), "%s/manifest.ingot", dir);
    ingot_manifest_h m;
    CHECK_OK(ingot_manifest_open(path, 0, &m));
    test_placement(m);
    ingot_manifest_close(m);
    test_homes();
    test_map_shards();
    printf("tier planning without MPI: placement of %d samples over %d ranks, homes of 100000 "
           "pieces over 1024 nodes, INGOT_MAP_SHARDS=auto by ranks per PU\n",
           SAMPLES, RANKS);
    return 0;
}

/*
 * ingot-sim's internals (include/ingot/sim.h; docs/sim.md): the plan a job would make (plan.c),
 * the steps and their time (run.c), the costs (costs.c), the cluster's checks (cluster.c).
 */
#ifndef INGOT_RUNTIME_SIM_IMPL_H
#define INGOT_RUNTIME_SIM_IMPL_H

#include <ingot/sim.h>
#include <ingot/order.h>
#include "source/cache/cache.h"
#include "source/tier.h"
#include <stdint.h>

/* Node names the simulated nodes plan under (the disk tier's homes hash them). */
#define SIM_NODE_NAME "sim%06u"

/* What bounds a node's ingest of a step (run.c). */
enum {
    SIM_BOUND_CPU,
    SIM_BOUND_LINK,    /* the ranks' own links to storage (INGOT_STORAGE_EMULATE) or files */
    SIM_BOUND_LATENCY, /* requests in flight over the readers */
    SIM_BOUND_NIC,
    SIM_BOUND_DISK,
    SIM_BOUND_STORE_BW,
    SIM_BOUND_STORE_RATE,
    SIM_BOUND_PEER,
    SIM_BOUNDS
};
extern const char *const ingot_sim_bound_names[SIM_BOUNDS];

/* The plan: ranks, nodes, the order, the slices, the peer cache's homes (plan.c). */
typedef struct sim_plan {
    uint32_t world, nodes;
    int *node_of;         /* per rank */
    char *node_names;     /* per node, INGOT_TOPO_HOST_MAX bytes */
    uint32_t *node_first; /* per node: its first rank (ranks are numbered node by node) */
    uint32_t *slice_of;   /* per rank: the slice of every step it takes */
    ingot_tier_facts_t facts;
    ingot_order_h order;
    ingot_order_mode_t mode;
    uint32_t window, order_nodes;
    uint64_t steps_per_epoch, global_batch;
    uint32_t slice;
    uint32_t readers, workers;
    uint64_t samples;
    uint32_t *record;   /* per sample: its record's bytes (offset to the end of its data) */
    uint8_t zstd;       /* some field is zstd-compressed: decoding costs */
    uint32_t *raw;      /* per sample: its decoded bytes (NULL: the record's) */
    uint32_t *shard_of; /* per sample: its shard */
    uint64_t *offset;   /* per sample: its record's offset in its shard */
    /* the peer cache */
    int cache_on;
    ingot_cache_placement_t place;
    /* the object store's part cache a node's ranks share (INGOT_S3_CACHE=auto under the
     * locality order): every shard cut as the source cuts it */
    int parts_on;
    uint64_t parts_bytes;  /* the node part cache's room (INGOT_S3_CACHE=auto) */
    uint64_t coalesce_gap; /* INGOT_COALESCE_GAP: samples this close are one request */
    uint64_t *part_len;    /* per shard */
    uint64_t *part0;       /* per shard: its first part's global index; [nshards]: all parts */
    uint64_t *shard_size;  /* per shard */
    uint32_t nshards;
    /* storage */
    int map_files; /* shard files read out of mappings (INGOT_MAP_SHARDS) */
    int emulate;
    double emu_bw, emu_lat;
} sim_plan_t;

/* costs.c: every stage's value one a cost file may hold (named when not). */
ingot_status_t ingot_sim_costs_check(const ingot_sim_costs_t *c);

/* plan.c: the plan (@p remote: the store is an object store, whatever the manifest's place). */
ingot_status_t ingot_sim_plan(const ingot_sim_job_t *job, const ingot_sim_cluster_t *cluster,
                              int remote, sim_plan_t *p);
void ingot_sim_plan_free(sim_plan_t *p);
/* Ranks of node @p n. */
static inline uint32_t sim_node_ranks(const sim_plan_t *p, uint32_t n)
{
    return p->node_first[n + 1] - p->node_first[n];
}

#endif

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
#include "source/disk/disk.h"
#include "source/disk/trace.h"
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

/* The node disks (INGOT_DISK_CACHE_BYTES; disk.c): the disk tier's pieces and homes, and each
 * node keeper's policy, as a job plans them. */
typedef struct sim_fill {
    uint64_t piece;
    uint64_t need; /* a prefetch's use; SIM_DISK_DEMAND: a miss's (asked of the policy) */
} sim_fill_t;
#define SIM_DISK_DEMAND UINT64_MAX

/* An epoch's trace items of every node, computed in one pass over the order (disk.c). */
typedef struct sim_traces {
    uint64_t epoch;         /* UINT64_MAX: none */
    ingot_disk_trace_t all; /* the epoch's items in order, pieces by their global index */
    uint32_t *by_home;      /* the items' indexes grouped by their piece's home, in order */
    uint64_t *first;        /* per node: its items are by_home[first[n] .. first[n + 1]) */
} sim_traces_t;

typedef struct sim_disk sim_disk_t;
typedef struct sim_keeper_arg { /* a node keeper's policy asks its traces of the simulator */
    sim_disk_t *d;
    uint32_t node;
} sim_keeper_arg_t;

struct sim_disk {
    int on;
    uint64_t budget; /* per node */
    uint32_t piece_log2;
    uint32_t prefetch_pct;
    int lru;
    uint32_t nshards;
    uint64_t npieces;
    uint64_t *piece0;     /* per shard: its first piece; [nshards]: all */
    uint64_t *shard_size; /* per shard */
    ingot_disk_homes_t homes;
    /* each keeper numbers its node's pieces alone (its policy's state is per piece it keeps) */
    uint32_t *local;  /* per piece: its index among its home's pieces */
    uint64_t *local0; /* per node: its pieces are global[local0[n] .. local0[n + 1]) */
    uint64_t *global; /* the nodes' pieces, node by node, by local index */
    uint64_t *counts; /* per node: {0, its pieces}, its keeper's piece0 */
    struct ingot_disk_policy **pol; /* per node: its keeper's */
    uint8_t *kept;                  /* per piece: resident when the last job ended */
    uint64_t *usage, *claimed;      /* per node: bytes of entries, of fills claimed */
    sim_fill_t *fills;              /* the step's fills, written at its end */
    uint64_t nfills, fills_cap;
    uint64_t needed;        /* the budget that holds every piece homed at the busiest node */
    sim_traces_t traces[2]; /* the last two epochs' (the keepers ask for two at a time) */
    sim_keeper_arg_t *args; /* per node */
    uint64_t *ids;          /* a step's samples */
    const ingot_sim_job_t *job;
    const struct sim_plan *plan;
};

/* costs.c: every stage's value one a cost file may hold (named when not). */
ingot_status_t ingot_sim_costs_check(const ingot_sim_costs_t *c);

/* plan.c: the plan (@p remote: the store is an object store, whatever the manifest's place). */
ingot_status_t ingot_sim_plan(const ingot_sim_job_t *job, const ingot_sim_cluster_t *cluster,
                              int remote, sim_plan_t *p);
void ingot_sim_plan_free(sim_plan_t *p);

/* disk.c: the disk tier's plan over @p p (off: d->on 0); INGOT_ERR_NO_RESOURCE, said, when its
 * keepers' state would not fit in this machine's memory. */
ingot_status_t ingot_sim_disk_plan(const ingot_sim_job_t *job, const sim_plan_t *p, sim_disk_t *d);
void ingot_sim_disk_free(sim_disk_t *d);
/* Every keeper's clock to global step @p g (the planner's: the step being read). */
ingot_status_t ingot_sim_disk_advance(sim_disk_t *d, uint64_t g);
/* Piece @p p's entry is at its home. */
int ingot_sim_disk_resident(const sim_disk_t *d, uint64_t p);
/* A miss of @p part bytes of piece @p p asks its keeper: 1 when claimed for a fill (the miss reads
 * the whole piece and writes it through), 0 when the miss reads only its bytes. */
int ingot_sim_disk_claim(sim_disk_t *d, uint64_t p, uint64_t part);
/* The next piece node @p n's prefetcher reads (claimed), or 0. */
int ingot_sim_disk_prefetch(sim_disk_t *d, uint32_t n, uint64_t *p_p);
/* The step's fills written by their homes' keepers, admitted or refused by the policy (victims
 * evicted); the bytes each node writes added to @p written (per node). */
void ingot_sim_disk_settle(sim_disk_t *d, double *written, ingot_sim_epoch_t *ep);
/* The job ended: the next one finds what it left (its keepers' policies made anew). */
ingot_status_t ingot_sim_disk_next_job(sim_disk_t *d);
static inline uint32_t sim_disk_shard_of(const sim_disk_t *d, uint64_t p)
{
    uint32_t lo = 0, hi = d->nshards;
    while (hi - lo > 1) {
        uint32_t mid = lo + (hi - lo) / 2;
        lo = d->piece0[mid] <= p ? mid : lo;
        hi = d->piece0[mid] <= p ? hi : mid;
    }
    return lo;
}
static inline uint64_t sim_disk_piece_len(const sim_disk_t *d, uint64_t p)
{
    uint32_t s = sim_disk_shard_of(d, p);
    uint64_t at = (p - d->piece0[s]) << d->piece_log2, size = d->shard_size[s];
    return size - at < (UINT64_C(1) << d->piece_log2) ? size - at : UINT64_C(1) << d->piece_log2;
}
/* Ranks of node @p n. */
static inline uint32_t sim_node_ranks(const sim_plan_t *p, uint32_t n)
{
    return p->node_first[n + 1] - p->node_first[n];
}

#endif

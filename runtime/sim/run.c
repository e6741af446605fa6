/*
 * The steps of a simulated job (include/ingot/sim.h, docs/sim.md). Each step, every rank takes
 * its slice of the order (ingot_order_slice, as the loader does) and each sample is served by the
 * tier the plan says: its peer cache home from the second epoch on (this rank's own window, a
 * rank of its node, or a rank of another node over both NICs), else storage, in requests joined
 * as the planner joins them, or through the node's part cache. The bytes are counted as
 * ingot-bench counts them. Time, per rank and step, is the slowest of the rank's own path and
 * its node's shared resources for what the step asks of them (a roofline: they run at once), and
 * a rank's loader runs up to depth steps ahead of its trainer, as ingot-bench's ranks do (each on
 * its own clock: no all-reduce between them). Costs per core come from ingot_sim_costs_t.
 */
#include "runtime/sim/sim_impl.h"
#include "runtime/loader/loader_impl.h"
#include "client/objstore_config.h"
#include "base/time.h"
#include "base/log.h"
#include "base/status.h"
#include "base/mem.h"
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const ingot_sim_bound_names[SIM_BOUNDS] = {"cpu",  "link",     "latency",    "nic",
                                                       "disk", "store-bw", "store-rate", "peer"};

/* One node's step: what it asks of the resources its ranks share. */
typedef struct sim_node {
    double cpu_s; /* core-seconds of the loader's work */
    double store_bytes, store_reqs;
    double nic_in, nic_out; /* bytes over the NIC besides the store's */
    double disk_io;         /* bytes the disk tier read from or wrote to this node's disk */
    uint64_t epoch_store;   /* bytes this node read from the store this epoch */
} sim_node_t;

/* One rank: its own share of a step (its link to storage, its requests in flight over its
 * readers, its peer fetches), and its clocks, as ingot-bench's ranks each run on their own. */
typedef struct sim_rank {
    double own_s;
    int own_bound;
    double ready;            /* when its loader had its last step ready */
    double trainer;          /* when its trainer released its last step */
    double t_epoch, t_first; /* ingot-bench's clocks: the epoch's start, the first step's end */
    double last_s;           /* its last step's ingest time */
    double stall, compute;
    uint64_t steps;
} sim_rank_t;

/* A sample read from storage (its shard, its record's offset and bytes). */
typedef struct sim_read {
    uint32_t shard;
    uint32_t length;
    uint64_t offset;
} sim_read_t;

/* One rank's step. */
typedef struct sim_rank_step {
    double store_bytes, store_reqs, peer_bytes, peer_reqs;
    double disk_bytes, disk_reqs; /* this node's disk tier entries read */
    double disk_remote_reqs;      /* reads of other nodes' entries (their bytes: peer_bytes) */
    double verified;              /* bytes the disk tier hashed for this rank */
    double disk_cpu;              /* core-seconds of this rank's disk tier reads */
} sim_rank_step_t;

typedef struct sim_run {
    const ingot_sim_job_t *job;
    const ingot_sim_cluster_t *cluster;
    const ingot_sim_store_t *store;
    const ingot_sim_costs_t *costs;
    sim_plan_t plan;
    sim_disk_t disk;
    double *written; /* per node: bytes the disk tier wrote this step */
    sim_node_t *nodes;
    sim_rank_t *ranks;
    double *done;         /* per rank, a ring of depth + 1 trainer ends (the slots' release) */
    double touched;       /* of a rank's reads of files this epoch, the share its mappings hold */
    uint64_t *parts_seen; /* per node, a bit per part: fetched this epoch (the part cache) */
    size_t part_words;    /* words of a node's bits */
    double retry_lat_s;   /* a GET's added wait for the retries of the ones answered badly */
    double gets_window;   /* GETs a rank's client keeps in flight (its throttle's window) */
    uint64_t *ids;        /* a slice */
    int32_t *homes;       /* a slice's peer homes */
    sim_read_t *runs;     /* a slice's reads from storage */
    uint64_t bounds[SIM_BOUNDS];
    ingot_sim_result_t *res;
} sim_run_t;

static int cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

/* Requests a rank's peer reads make in a step: one per home it reads from (the loader groups a
 * step's runs by home). */
static uint32_t distinct_homes(int32_t *homes, uint32_t n)
{
    if (n < 2) {
        return n;
    }
    qsort(homes, n, sizeof(*homes), cmp_i32);
    uint32_t d = 1;
    for (uint32_t i = 1; i < n; i++) {
        d += homes[i] != homes[i - 1];
    }
    return d;
}

static int cmp_read(const void *a, const void *b)
{
    const sim_read_t *x = a, *y = b;
    if (x->shard != y->shard) {
        return x->shard < y->shard ? -1 : 1;
    }
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* A request of node @p n's to storage: through the node's part cache, or a read of its own. */
static void sim_below(sim_run_t *x, uint32_t n, uint32_t sh, uint64_t off, uint64_t len,
                      sim_rank_step_t *rs);

/* A request through the disk tier (disk_source.c): cut into pieces, each read from this node's
 * entries, from its home node's, or from below (the whole piece when its keeper claims it for a
 * fill, then pushed to its home). Returns the bytes the disks served. */
static uint64_t sim_disk_read(sim_run_t *x, uint32_t n, uint32_t sh, uint64_t off, uint64_t len,
                              sim_rank_step_t *rs, ingot_sim_epoch_t *ep)
{
    sim_disk_t *d = &x->disk;
    uint64_t end = off + len, served = 0;
    for (uint64_t at = off; at < end;) {
        uint64_t k = at >> d->piece_log2, q = d->piece0[sh] + k, pend = (k + 1) << d->piece_log2;
        uint64_t stop = pend < end ? pend : end, part = stop - at;
        uint32_t h = (uint32_t)d->homes.home[q];
        if (ingot_sim_disk_resident(d, q)) {
            served += part;
            x->nodes[h].disk_io += (double)part;
            /* a hit's work beyond a file read's (disk_bps): by this rank, or its home's server */
            if (h == n) { /* read here; its blocks hashed unless the loader hashes the samples */
                rs->disk_bytes += (double)part;
                rs->disk_reqs += 1;
                rs->disk_cpu += (double)part / x->costs->disk_bps;
                rs->verified += x->job->verify ? 0 : (double)part;
            } else {
                x->nodes[h].cpu_s += (double)part / x->costs->disk_bps;
                rs->peer_bytes += (double)part;
                rs->disk_remote_reqs += 1;
                x->nodes[n].nic_in += (double)part;
                x->nodes[h].nic_out += (double)part;
            }
        } else if (ingot_sim_disk_claim(d, q, part)) {
            uint64_t plen = sim_disk_piece_len(d, q);
            sim_below(x, n, sh, k << d->piece_log2, plen, rs);
            ep->disk_below += plen;
            rs->verified += (double)plen; /* every sample checked before it is written */
            if (h != n) {
                x->nodes[n].nic_out += (double)plen;
                x->nodes[h].nic_in += (double)plen;
            }
        } else {
            sim_below(x, n, sh, at, part, rs);
            ep->disk_below += part;
        }
        at = stop;
    }
    return served;
}

/* A joined request of @p len bytes holding @p records bytes of samples, of node @p n's rank: to
 * storage, or through the disk tier, its bytes counted by tier as the loader counts them (the
 * disk's share of the request's bytes, of its records). */
static void sim_request(sim_run_t *x, uint32_t n, const sim_read_t *run, uint64_t len,
                        uint64_t records, sim_rank_step_t *rs, ingot_sim_epoch_t *ep)
{
    if (!x->disk.on) {
        rs->store_bytes += (double)len;
        rs->store_reqs += 1;
        return;
    }
    uint64_t disk = sim_disk_read(x, n, run->shard, run->offset, len, rs, ep);
    uint64_t share = len > 0
                         ? (uint64_t)((unsigned __int128)records * (disk < len ? disk : len) / len)
                         : 0;
    ep->bytes[INGOT_SIM_DISK] += share;
    ep->bytes[INGOT_SIM_STORAGE] += records - share;
}

/* A rank's reads from storage in a step, as its planner makes them: sorted by location, the
 * samples close enough joined into one request (ingot_loader_run_joins), whose bytes are read
 * gaps included. */
static void sim_requests(sim_run_t *x, uint32_t node, uint32_t n, sim_rank_step_t *rs,
                         ingot_sim_epoch_t *ep)
{
    qsort(x->runs, n, sizeof(*x->runs), cmp_read);
    const sim_read_t *run = &x->runs[0];
    uint64_t run_len = run->length, records = run->length;
    uint32_t run_count = 1;
    for (uint32_t k = 1; k <= n; k++) {
        const sim_read_t *r = k < n ? &x->runs[k] : NULL;
        if (r != NULL &&
            ingot_loader_run_joins(run->shard, run->offset, run_len, run_count, r->shard, r->offset,
                                   r->length, x->plan.coalesce_gap)) {
            run_len = r->offset + r->length - run->offset;
            records += r->length;
            run_count++;
            continue;
        }
        sim_request(x, node, run, run_len, records, rs, ep);
        if (r != NULL) {
            run = r;
            run_len = records = r->length;
            run_count = 1;
        }
    }
}

/* Bytes [@p off, @p off + @p len) of shard @p sh read through node @p n's part cache: the parts
 * they span that the node does not hold are fetched now, one GET each, by this rank. The cache is
 * sized for the window, so a part fetched stays until its window is done (each leaves the store
 * once per node and epoch); at an epoch's end the parts fetched stay for the next one when they
 * all fit in its room. */
static void sim_parts(sim_run_t *x, uint32_t n, uint32_t sh, uint64_t off, uint64_t len,
                      sim_rank_step_t *rs)
{
    const sim_plan_t *p = &x->plan;
    uint64_t pl = p->part_len[sh];
    uint64_t *seen = x->parts_seen + (size_t)n * x->part_words;
    for (uint64_t k = off / pl; k <= (off + len - 1) / pl; k++) {
        uint64_t g = p->part0[sh] + k;
        if (seen[g / 64] >> (g % 64) & 1) {
            continue;
        }
        seen[g / 64] |= UINT64_C(1) << (g % 64);
        uint64_t end = (k + 1) * pl < p->shard_size[sh] ? (k + 1) * pl : p->shard_size[sh];
        rs->store_bytes += (double)(end - k * pl);
        rs->store_reqs += 1;
    }
}

static void sim_below(sim_run_t *x, uint32_t n, uint32_t sh, uint64_t off, uint64_t len,
                      sim_rank_step_t *rs)
{
    if (x->plan.parts_on) {
        sim_parts(x, n, sh, off, len, rs);
        return;
    }
    rs->store_bytes += (double)len;
    rs->store_reqs += 1;
}

/* One read of a piece below by a prefetcher, in seconds: the link's (or a GET's) time. */
static double sim_piece_read_s(const sim_run_t *x, uint64_t len)
{
    const sim_plan_t *p = &x->plan;
    if (p->emulate) {
        return (p->emu_bw > 0 ? (double)len / p->emu_bw : 0) + p->emu_lat;
    }
    if (!x->store->remote) {
        return (double)len / x->costs->read_bps + x->costs->read_s;
    }
    return x->store->latency_s + (x->store->conn_bps > 0 ? (double)len / x->store->conn_bps : 0);
}

/* Node @p n's prefetcher (keeper.c) on its keeper rank @p r's link: it reads INGOT_DISK_PREFETCH
 * percent of the time (paced), here of the rank's last step, the pieces its policy picks. */
static void sim_prefetch(sim_run_t *x, uint32_t n, uint32_t r, sim_rank_step_t *rs,
                         ingot_sim_epoch_t *ep)
{
    sim_disk_t *d = &x->disk;
    double allow = x->ranks[r].last_s * d->prefetch_pct / 100.0;
    uint64_t q;
    while (allow > 0 && ingot_sim_disk_prefetch(d, n, &q)) {
        uint64_t plen = sim_disk_piece_len(d, q);
        uint32_t sh = sim_disk_shard_of(d, q);
        sim_below(x, n, sh, (q - d->piece0[sh]) << d->piece_log2, plen, rs);
        rs->verified += (double)plen; /* checked before it is written */
        ep->disk_below += plen;
        ep->disk_prefetch += plen;
        allow -= sim_piece_read_s(x, plen);
    }
}

/* Rank @p r's slice of step @p s of epoch @p e: each sample to its tier. */
static ingot_status_t step_rank(sim_run_t *x, uint64_t e, uint64_t s, uint32_t r,
                                ingot_sim_epoch_t *ep)
{
    const sim_plan_t *p = &x->plan;
    const ingot_sim_costs_t *c = x->costs;
    uint32_t n = (uint32_t)p->node_of[r];
    sim_node_t *nd = &x->nodes[n];
    INGOT_CHECK(ingot_order_slice(p->order, e, s, p->slice_of[r], p->world, x->ids, p->slice));
    sim_rank_step_t rs = {0};
    uint32_t nhomes = 0, nruns = 0;
    double stored = 0, raw = 0;
    for (uint32_t k = 0; k < p->slice; k++) {
        uint64_t id = x->ids[k];
        uint32_t len = p->record[id];
        stored += len;
        raw += p->raw[id];
        const ingot_cache_entry_t *ce = p->cache_on ? &p->place.entries[id] : NULL;
        if (ce != NULL && e > 0 && ce->home >= 0) {
            if ((uint32_t)ce->home == r) {
                ep->bytes[INGOT_SIM_LOCAL] += len;
                continue;
            }
            ep->bytes[INGOT_SIM_PEER] += len;
            rs.peer_bytes += len;
            x->homes[nhomes++] = ce->home;
            uint32_t hn = (uint32_t)p->node_of[ce->home];
            if (hn != n) {
                ep->bytes_cross += len;
                nd->nic_in += len;
                x->nodes[hn].nic_out += len;
            }
            continue;
        }
        if (x->disk.on) { /* the disk tier below the planner's requests, the part cache below it */
            x->runs[nruns++] = (sim_read_t){
                .shard = p->shard_of[id], .offset = p->offset[id], .length = len};
            continue;
        }
        ep->bytes[INGOT_SIM_STORAGE] += len;
        if (p->parts_on) {
            sim_parts(x, n, p->shard_of[id], p->offset[id], len, &rs);
        } else {
            x->runs[nruns++] = (sim_read_t){
                .shard = p->shard_of[id], .offset = p->offset[id], .length = len};
        }
    }
    if (nruns > 0) {
        sim_requests(x, n, nruns, &rs, ep);
    }
    if (x->disk.on && x->disk.prefetch_pct > 0 && (int)r == x->disk.homes.node_keeper[n]) {
        sim_prefetch(x, n, r, &rs, ep);
    }
    ep->store_bytes += x->store->remote ? (uint64_t)rs.store_bytes : 0;
    rs.peer_reqs = distinct_homes(x->homes, nhomes) + rs.disk_remote_reqs;
    ep->samples += p->slice;
    double cpu = (x->job->verify ? stored / c->verify_bps : 0) + stored / c->copy_bps +
                 (p->zstd ? raw / c->decode_bps : 0) + p->slice * c->sample_s +
                 rs.verified / c->verify_bps + rs.disk_cpu;
    if (p->map_files) { /* the pages of files this rank maps in for the first time */
        cpu += rs.store_bytes * (1 - x->touched) / c->fault_bps;
    }
    nd->cpu_s += cpu;
    nd->store_bytes += rs.store_bytes;
    nd->store_reqs += rs.store_reqs;
    /* the rank's own path to storage: its emulated link, its reads of files, or its GETs */
    double readers = p->readers > 0 ? p->readers : 1;
    double t[SIM_BOUNDS] = {0};
    if (p->emulate) {
        t[SIM_BOUND_LINK] = p->emu_bw > 0 ? rs.store_bytes / p->emu_bw : 0;
        t[SIM_BOUND_LATENCY] = rs.store_reqs * p->emu_lat / readers;
    } else if (!x->store->remote) {
        t[SIM_BOUND_LINK] = rs.store_bytes / c->read_bps;
        t[SIM_BOUND_LATENCY] = rs.store_reqs * c->read_s / readers;
    } else {
        /* each GET: its latency (and its retries'), then its bytes at one GET's rate */
        double body = x->store->conn_bps > 0 ? rs.store_bytes / x->store->conn_bps : 0;
        t[SIM_BOUND_LATENCY] = (rs.store_reqs * (x->store->latency_s + x->retry_lat_s) + body) /
                               (readers < x->gets_window ? readers : x->gets_window);
    }
    t[SIM_BOUND_PEER] = rs.peer_bytes / c->peer_bps + rs.peer_reqs * c->peer_s / readers;
    t[SIM_BOUND_DISK] = rs.disk_bytes / c->read_bps + rs.disk_reqs * c->read_s / readers;
    /* a sample's fixed cost is the rank's own (one thread: it does not shrink with workers, as
     * calibrated); a rank bound to cores does all its work on those alone */
    t[SIM_BOUND_CPU] = p->slice * c->sample_s;
    uint32_t bound = x->cluster->bind_cores;
    if (bound > 0) {
        double mine = cpu / (p->workers < bound ? p->workers : bound);
        t[SIM_BOUND_CPU] = mine > t[SIM_BOUND_CPU] ? mine : t[SIM_BOUND_CPU];
    }
    sim_rank_t *rk = &x->ranks[r];
    rk->own_bound = SIM_BOUND_LINK;
    for (int k = 0; k < SIM_BOUNDS; k++) {
        rk->own_bound = t[k] > t[rk->own_bound] ? k : rk->own_bound;
    }
    rk->own_s = t[rk->own_bound];
    return INGOT_OK;
}

/* The store's share of a step, over the cluster: its bandwidth and its request rate (SlowDown
 * beyond it, and the SlowDown and failures injected, each a retry after retry_s). */
typedef struct sim_store_step {
    double bw_s, rate_s;
} sim_store_step_t;

static sim_store_step_t step_store(sim_run_t *x, double bytes, double reqs, double other_s,
                                   ingot_sim_epoch_t *ep)
{
    const ingot_sim_store_t *st = x->store;
    sim_store_step_t o = {0};
    double injected = 0;
    if (st->slowdown > 0 || st->fail > 0) {
        double bad = st->slowdown + st->fail;
        bad = bad < 0.95 ? bad : 0.95;
        injected = reqs * bad / (1 - bad); /* each answered badly is asked again */
        ep->slowdowns += (uint64_t)llround(reqs * st->slowdown / (1 - bad));
    }
    double all = reqs + injected;
    o.bw_s = st->bw > 0 ? bytes / st->bw : 0;
    if (st->rate > 0) {
        /* the step's requests come within the time it would take without the limit; beyond
         * the rate they are answered SlowDown and asked again (once each, as a bound below),
         * and the limit spreads them over all / cap */
        double cap = st->rate * (st->prefixes > 0 ? st->prefixes : 1);
        double allowed = cap * other_s;
        double refused = all > allowed ? all - allowed : 0;
        ep->slowdowns += (uint64_t)llround(refused);
        all += refused;
        o.rate_s = all / cap;
    }
    if (st->gets_per_s > 0) { /* the store serves so many GETs a second in all */
        double t = all / st->gets_per_s;
        o.rate_s = t > o.rate_s ? t : o.rate_s;
    }
    ep->store_requests += (uint64_t)llround(reqs);      /* as the client counts them: */
    ep->store_retries += (uint64_t)llround(all - reqs); /* the retries apart */
    return o;
}

/* What node @p n's shared resources need for this step (its cores, its NIC, its disk, the store),
 * and which of them is the slowest. */
static double node_shared(sim_run_t *x, uint32_t n, const sim_store_step_t *ss, int *bound_p)
{
    const sim_plan_t *p = &x->plan;
    const ingot_sim_cluster_t *c = x->cluster;
    sim_node_t *nd = &x->nodes[n];
    double threads = (double)sim_node_ranks(p, n) * p->workers;
    double cores = threads < c->cores ? threads : c->cores;
    double t[SIM_BOUNDS] = {0};
    t[SIM_BOUND_CPU] = nd->cpu_s / cores;
    double in = nd->nic_in;
    if (x->store->remote && nd->store_reqs > 0) {
        in += nd->store_bytes;
        t[SIM_BOUND_STORE_BW] = ss->bw_s;
        t[SIM_BOUND_STORE_RATE] = ss->rate_s;
    }
    if (c->disk_bps > 0) { /* the disk tier's entries, and shards on the node's disk */
        double files = !x->store->remote && !p->emulate ? nd->store_bytes : 0;
        t[SIM_BOUND_DISK] = (nd->disk_io + files) / c->disk_bps;
    }
    double wire = in > nd->nic_out ? in : nd->nic_out;
    t[SIM_BOUND_NIC] = c->nic_bps > 0 ? wire / c->nic_bps : 0;
    int b = SIM_BOUND_CPU;
    for (int k = 0; k < SIM_BOUNDS; k++) {
        b = t[k] > t[b] ? k : b;
    }
    *bound_p = b;
    return t[b];
}

/* Rank @p r's clocks through global step @p g: its loader may run depth steps ahead of its
 * trainer (a step's slot is free once the trainer released the step depth before it). */
static void rank_clock(sim_run_t *x, uint32_t r, uint64_t g, uint64_t epoch_step, double ingest)
{
    const ingot_sim_job_t *job = x->job;
    sim_rank_t *rk = &x->ranks[r];
    uint32_t ring = job->depth + 1;
    double *done = x->done + (size_t)r * ring;
    double slot = g >= job->depth ? done[(g - job->depth) % ring] : 0;
    double start = rk->ready > slot ? rk->ready : slot;
    rk->ready = start + ingest;
    double got = rk->ready > rk->trainer ? rk->ready : rk->trainer;
    if (epoch_step == 0 && g > 0) {
        rk->t_epoch = rk->trainer; /* ingot-bench: the epoch starts at the last release */
    }
    if (g > 0) {
        rk->stall += got - rk->trainer;
        rk->compute += job->compute_s;
        rk->steps++;
    }
    rk->trainer = got + job->compute_s;
    done[g % ring] = rk->trainer;
    if (g == 0) {
        rk->t_first = rk->trainer;
    }
}

/* The epoch's figures, averaged over ranks as ingot-bench averages them. */
static void epoch_close(sim_run_t *x, uint64_t e, ingot_sim_epoch_t *ep)
{
    const sim_plan_t *p = &x->plan;
    double wall = 0, stall = 0, compute = 0, steps = 0;
    for (uint32_t r = 0; r < p->world; r++) {
        sim_rank_t *rk = &x->ranks[r];
        wall += rk->trainer - (e == 0 ? rk->t_first : rk->t_epoch);
        stall += rk->stall;
        compute += rk->compute;
        steps += (double)rk->steps;
        rk->stall = rk->compute = 0;
        rk->steps = 0;
    }
    for (uint32_t n = 0; n < p->nodes; n++) {
        sim_node_t *nd = &x->nodes[n];
        ep->node_store_max = nd->epoch_store > ep->node_store_max ? nd->epoch_store
                                                                  : ep->node_store_max;
        if (x->parts_seen != NULL && nd->epoch_store > p->parts_bytes) {
            /* the parts fetched did not all fit: the next epoch (its shards shuffled again)
             * finds none of them (the last windows' stay, but are taken as gone: a bound) */
            memset(x->parts_seen + (size_t)n * x->part_words, 0, x->part_words * sizeof(uint64_t));
        }
        nd->epoch_store = 0;
    }
    ep->wall_s = wall / p->world;
    ep->stall_s = stall / p->world;
    ep->compute_s = compute / p->world;
    ep->steps = (uint64_t)llround(steps / p->world);
    ep->au = ep->wall_s > 0 ? ep->compute_s / ep->wall_s : 0;
    int b = 0;
    for (int k = 1; k < SIM_BOUNDS; k++) {
        b = x->bounds[k] > x->bounds[b] ? k : b;
    }
    ep->bound = ingot_sim_bound_names[b];
    memset(x->bounds, 0, sizeof(x->bounds));
}

/* One step of the whole cluster. */
static ingot_status_t sim_step(sim_run_t *x, uint64_t e, uint64_t s, ingot_sim_epoch_t *ep)
{
    const sim_plan_t *p = &x->plan;
    for (uint32_t n = 0; n < p->nodes; n++) {
        sim_node_t *nd = &x->nodes[n];
        nd->cpu_s = nd->store_bytes = nd->store_reqs = nd->nic_in = nd->nic_out = 0;
        nd->disk_io = 0;
    }
    uint64_t g = e * p->steps_per_epoch + s;
    INGOT_CHECK(ingot_sim_disk_advance(&x->disk, g));
    for (uint32_t r = 0; r < p->world; r++) {
        INGOT_CHECK(step_rank(x, e, s, r, ep));
    }
    if (x->disk.on) { /* the step's fills written at their homes: copied, sealed (hashed) */
        memset(x->written, 0, p->nodes * sizeof(*x->written));
        ingot_sim_disk_settle(&x->disk, x->written, ep);
        for (uint32_t n = 0; n < p->nodes; n++) {
            x->nodes[n].disk_io += x->written[n];
            x->nodes[n].cpu_s += x->written[n] / x->costs->copy_bps +
                                 x->written[n] / x->costs->verify_bps;
        }
    }
    double bytes = 0, reqs = 0, other = 0;
    for (uint32_t n = 0; n < p->nodes; n++) {
        bytes += x->nodes[n].store_bytes;
        reqs += x->nodes[n].store_reqs;
        x->nodes[n].epoch_store += (uint64_t)x->nodes[n].store_bytes;
    }
    sim_store_step_t none = {0};
    if (x->store->remote) { /* the step's time without the store's limits, for its rate */
        for (uint32_t n = 0; n < p->nodes; n++) {
            int b;
            double t = node_shared(x, n, &none, &b);
            other = t > other ? t : other;
        }
        for (uint32_t r = 0; r < p->world; r++) {
            other = x->ranks[r].own_s > other ? x->ranks[r].own_s : other;
        }
    }
    sim_store_step_t ss = x->store->remote ? step_store(x, bytes, reqs, other, ep) : none;
    if (!x->store->remote) {
        ep->file_reads += (uint64_t)reqs;
    }
    double slowest = -1;
    int slowest_bound = 0;
    for (uint32_t n = 0; n < p->nodes; n++) {
        int b;
        double shared = node_shared(x, n, &ss, &b);
        for (uint32_t r = p->node_first[n]; r < p->node_first[n + 1]; r++) {
            const sim_rank_t *rk = &x->ranks[r];
            double t = rk->own_s > shared ? rk->own_s : shared;
            if (t > slowest) {
                slowest = t;
                slowest_bound = rk->own_s > shared ? rk->own_bound : b;
            }
            rank_clock(x, r, g, s, t);
            x->ranks[r].last_s = t;
        }
    }
    x->bounds[slowest_bound]++;
    return INGOT_OK;
}

/* The window of GETs in flight a client's throttle settles at when a share @p f of its GETs is
 * answered SlowDown (client/retry.c): a success widens it by 1/window, a SlowDown halves it at
 * most once per window of requests, up to @p most (INGOT_S3_CONNECTIONS). Per window of W
 * requests it grows by about 1 when none is answered SlowDown, (1-f)^W, and halves otherwise:
 * it settles where (1-f)^W = (1 - (1-f)^W) W / 2 (the expectation; found by bisection). */
static double sim_throttle_window(double f, double most)
{
    if (f <= 0) {
        return most;
    }
    double lo = 1, hi = most;
    for (int i = 0; i < 60; i++) {
        double w = (lo + hi) / 2, ok = pow(1 - f, w);
        if (ok > (1 - ok) * w / 2) {
            lo = w;
        } else {
            hi = w;
        }
    }
    return lo;
}

/* Of what a rank reads from mapped files in epoch @p e, the share it mapped in an earlier epoch:
 * each epoch deals every sample to one of the W ranks that read its part of the dataset, so a
 * rank has read a given sample before with probability 1 - (1 - 1/W)^e (an expectation; pages
 * two samples share are left out). */
static double sim_touched(const sim_plan_t *p, uint64_t e)
{
    double w = p->order_nodes > 1 ? (double)p->world / p->order_nodes : (double)p->world;
    return w <= 1 ? (e > 0 ? 1 : 0) : 1 - pow(1 - 1 / w, (double)e);
}

static ingot_status_t sim_check_inputs(const ingot_sim_job_t *job, const ingot_sim_store_t *st,
                                       const ingot_sim_costs_t *c)
{
    if (job == NULL || st == NULL || c == NULL || job->manifest == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_sim_run: NULL argument");
    }
    if (job->epochs == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "--epochs is 0");
    }
    if (!(job->compute_s >= 0) || job->depth == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "--compute-ms %g or --depth %u cannot be",
                          job->compute_s * 1e3, job->depth);
    }
    INGOT_CHECK(ingot_sim_costs_check(c));
    const struct {
        const char *name;
        double v, most; /* the value must lie in [0, most) */
    } fields[] = {{"--store-bw", st->bw, HUGE_VAL},
                  {"--store-get-bw", st->conn_bps, HUGE_VAL},
                  {"--store-gets", st->gets_per_s, HUGE_VAL},
                  {"--store-latency-ms", st->latency_s * 1e3, HUGE_VAL},
                  {"--store-rate", st->rate, HUGE_VAL},
                  {"--store-retry-ms", st->retry_s * 1e3, HUGE_VAL},
                  {"--store-slowdown", st->slowdown, 1},
                  {"--store-fail", st->fail, 1}};
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++) {
        if (!(fields[i].v >= 0 && fields[i].v < fields[i].most)) {
            return ingot_fail(INGOT_ERR_INVALID_PARAM, "the store: %s %g is not in [0, %g)",
                              fields[i].name, fields[i].v, fields[i].most);
        }
    }
    return INGOT_OK;
}

/* A job after the last one on the same nodes: what lives in memory (clocks, part caches) starts
 * anew, the node disks keep what the last job left. */
static ingot_status_t sim_next_job(sim_run_t *x)
{
    const sim_plan_t *p = &x->plan;
    memset(x->nodes, 0, p->nodes * sizeof(*x->nodes));
    memset(x->ranks, 0, p->world * sizeof(*x->ranks));
    memset(x->done, 0, (size_t)p->world * (x->job->depth + 1) * sizeof(*x->done));
    if (x->parts_seen != NULL) {
        memset(x->parts_seen, 0, (size_t)p->nodes * x->part_words * sizeof(uint64_t));
    }
    memset(x->res->epochs, 0, x->job->epochs * sizeof(*x->res->epochs));
    return ingot_sim_disk_next_job(&x->disk);
}

ingot_status_t ingot_sim_run(const ingot_sim_job_t *job, const ingot_sim_cluster_t *cluster,
                             const ingot_sim_store_t *store, const ingot_sim_costs_t *costs,
                             ingot_sim_result_t *res)
{
    INGOT_CHECK(sim_check_inputs(job, store, costs));
    const ingot_objstore_config_t *oc;
    INGOT_CHECK(ingot_objstore_config(&oc));
    uint64_t t0 = ingot_time_ns();
    sim_run_t x = {.job = job, .cluster = cluster, .store = store, .costs = costs, .res = res};
    *res = (ingot_sim_result_t){0};
    INGOT_CHECK(ingot_sim_plan(job, cluster, store->remote, &x.plan));
    const sim_plan_t *p = &x.plan;
    x.nodes = ingot_calloc(p->nodes, sizeof(*x.nodes), "sim nodes");
    x.ranks = ingot_calloc(p->world, sizeof(*x.ranks), "sim ranks");
    x.done = ingot_calloc((size_t)p->world * (job->depth + 1), sizeof(double), "sim clocks");
    if (p->parts_on) {
        x.part_words = (size_t)((p->part0[p->nshards] + 63) / 64);
        x.parts_seen = ingot_calloc((size_t)p->nodes * x.part_words + 1, sizeof(uint64_t),
                                    "sim parts");
    }
    double bad = store->slowdown + store->fail;
    x.retry_lat_s = bad > 0 ? bad / (1 - bad) * store->retry_s : 0; /* per request, on average */
    x.gets_window = sim_throttle_window(store->slowdown, (double)oc->connections);
    x.ids = ingot_calloc(p->slice, sizeof(*x.ids), "sim slice");
    x.homes = ingot_calloc(p->slice, sizeof(*x.homes), "sim slice");
    x.runs = ingot_calloc(p->slice, sizeof(*x.runs), "sim slice");
    x.written = ingot_calloc(p->nodes, sizeof(*x.written), "sim nodes");
    res->epochs = ingot_calloc(job->epochs, sizeof(*res->epochs), "sim epochs");
    int have = x.nodes && x.ranks && x.done && x.ids && x.homes && x.runs && x.written &&
               res->epochs && (!p->parts_on || x.parts_seen);
    ingot_status_t st = have ? INGOT_OK : INGOT_ERR_NO_MEMORY;
    if (st == INGOT_OK) {
        st = ingot_sim_disk_plan(job, p, &x.disk);
    }
    res->nepochs = job->epochs;
    res->world = p->world;
    for (uint64_t i = 0; i < p->samples; i++) {
        res->dataset_bytes += p->record[i];
    }
    res->cache_needed = p->place.needed;
    res->cache_cached_bytes = p->cache_on ? p->place.cached_bytes : 0;
    res->disk_needed = x.disk.needed;
    /* the earlier jobs leave their disk tier's entries; the last one is the job reported */
    for (uint32_t j = 0; st == INGOT_OK && j <= job->prior_jobs; j++) {
        if (j > 0) {
            st = sim_next_job(&x);
        }
        for (uint64_t e = 0; st == INGOT_OK && e < job->epochs; e++) {
            x.touched = sim_touched(p, e);
            for (uint64_t s = 0; st == INGOT_OK && s < p->steps_per_epoch; s++) {
                st = sim_step(&x, e, s, &res->epochs[e]);
            }
            epoch_close(&x, e, &res->epochs[e]);
        }
    }
    ingot_sim_disk_free(&x.disk);
    free(x.written);
    free(x.nodes);
    free(x.ranks);
    free(x.parts_seen);
    free(x.done);
    free(x.ids);
    free(x.homes);
    free(x.runs);
    ingot_sim_plan_free(&x.plan);
    res->sim_s = (double)(ingot_time_ns() - t0) / 1e9;
    if (st != INGOT_OK) {
        ingot_sim_result_free(res);
    }
    return st;
}

void ingot_sim_result_free(ingot_sim_result_t *res)
{
    if (res != NULL) {
        free(res->epochs);
        *res = (ingot_sim_result_t){0};
    }
}

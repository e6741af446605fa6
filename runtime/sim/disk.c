/*
 * The node disks of a simulated job (INGOT_DISK_CACHE_BYTES; docs/sim.md, "The disk tier"), planned
 * by the disk tier's own code: the manifest cut into pieces as the tier cuts it, every piece's home
 * by rendezvous hashing over the simulated nodes' names (ingot_disk_plan_homes), and on each node
 * its keeper's policy (source/disk/policy.h: the traces of the known order, clairvoyant admission
 * and eviction or LRU, the claims' and fills' admission, what to prefetch), asked as the keeper
 * asks it, each keeper numbering only the pieces homed at its node (so the keepers' state is one
 * entry per piece of the job, whatever the nodes). Only time is simulated; where the tier decides
 * by timing, the simulator decides so:
 *  - a step's reads ask in rank order: the first miss of an absent piece the policy would admit
 *    claims it (it reads the piece whole), a later miss of a claimed piece reads its own bytes;
 *  - the fills of a step are written by their keepers at its end, before the next step reads
 *    (the keepers' writers keep up): admitted, victims evicted, or refused, by the policy;
 *  - each node's prefetcher reads its pieces in the policy's order within its share of its
 *    keeper rank's link (run.c);
 *  - nothing fails: no disk fills up below the budget, no claim lapses, no piece is damaged.
 */
#include "runtime/sim/sim_impl.h"
#include "source/disk/trace.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* What the keepers keep per piece of the job (policy.c, trace.c: next use, LRU key, trace item,
 * state, the heap's place and slot, two traces' first items; here its local and global index). */
#define SIM_DISK_BYTES_PER_PIECE 49
/* The most memory the nodes' keepers may take here before the simulation is refused. */
#define SIM_DISK_MEMORY_MAX (UINT64_C(16) << 30)

static uint64_t entry_bytes(const sim_disk_t *d, uint64_t p)
{
    return INGOT_DISK_HEADER_BYTES + sim_disk_piece_len(d, p);
}

/* The manifest's pieces, as disk.c cuts it; *@p hash_p: each shard's content hash. */
static ingot_status_t disk_pieces(sim_disk_t *d, ingot_manifest_h m, uint64_t **hash_p)
{
    ingot_manifest_info_t mi;
    INGOT_CHECK(ingot_manifest_query(m, &mi));
    uint32_t n = (uint32_t)mi.shard_count;
    d->nshards = n;
    d->piece0 = ingot_calloc((size_t)n + 1, sizeof(uint64_t), "sim disk pieces");
    d->shard_size = ingot_calloc((size_t)n + 1, sizeof(uint64_t), "sim disk pieces");
    uint64_t *hash = ingot_calloc((size_t)n + 1, sizeof(uint64_t), "sim disk pieces");
    ingot_status_t st = d->piece0 && d->shard_size && hash ? INGOT_OK : INGOT_ERR_NO_MEMORY;
    for (uint32_t s = 0; st == INGOT_OK && s < n; s++) {
        ingot_shard_info_t si;
        st = ingot_manifest_shard_get(m, s, &si);
        d->shard_size[s] = si.size;
        hash[s] = si.hash;
        d->piece0[s + 1] = d->piece0[s] +
                           ((si.size + (UINT64_C(1) << d->piece_log2) - 1) >> d->piece_log2);
    }
    d->npieces = st == INGOT_OK ? d->piece0[n] : 0;
    *hash_p = hash;
    return st;
}

/* Every piece's home (home.c), from its key's hash over the nodes' names. */
static ingot_status_t disk_homes(sim_disk_t *d, const uint64_t *hash, const sim_plan_t *p)
{
    uint64_t *kh = ingot_calloc(d->npieces + 1, sizeof(uint64_t), "sim disk keys");
    ingot_status_t st = kh != NULL ? INGOT_OK : INGOT_ERR_NO_MEMORY;
    for (uint64_t q = 0; st == INGOT_OK && q < d->npieces; q++) {
        uint32_t s = sim_disk_shard_of(d, q);
        ingot_disk_key_t key = {hash[s], q - d->piece0[s], d->piece_log2};
        kh[q] = ingot_disk_key_hash(&key);
    }
    uint64_t *usable = ingot_calloc(p->world, sizeof(uint64_t), "sim disk ranks");
    st = st == INGOT_OK && usable == NULL ? INGOT_ERR_NO_MEMORY : st;
    for (uint32_t r = 0; st == INGOT_OK && r < p->world; r++) {
        usable[r] = 1; /* every node's folder serves */
    }
    if (st == INGOT_OK) {
        st = ingot_disk_plan_homes(&p->facts, usable, kh, d->npieces, &d->homes);
    }
    free(kh);
    free(usable);
    return st;
}

/* Each node's pieces numbered by their home (local, global), and the budget the busiest node
 * needs to hold every piece homed there. */
static ingot_status_t disk_needed(sim_disk_t *d, const sim_plan_t *p)
{
    uint64_t *bytes = ingot_calloc(p->nodes, sizeof(uint64_t), "sim disk homes");
    d->local = ingot_calloc(d->npieces + 1, sizeof(uint32_t), "sim disk homes");
    d->global = ingot_calloc(d->npieces + 1, sizeof(uint64_t), "sim disk homes");
    d->local0 = ingot_calloc((size_t)p->nodes + 1, sizeof(uint64_t), "sim disk homes");
    d->counts = ingot_calloc(2 * (size_t)p->nodes, sizeof(uint64_t), "sim disk homes");
    if (bytes == NULL || d->local == NULL || d->global == NULL || d->local0 == NULL ||
        d->counts == NULL) {
        free(bytes);
        return INGOT_ERR_NO_MEMORY;
    }
    for (uint64_t q = 0; q < d->npieces; q++) {
        int32_t h = d->homes.home[q];
        bytes[h] += entry_bytes(d, q);
        d->local[q] = (uint32_t)d->counts[2 * (size_t)h + 1]++;
    }
    for (uint32_t n = 0; n < p->nodes; n++) {
        d->local0[n + 1] = d->local0[n] + d->counts[2 * (size_t)n + 1];
    }
    for (uint64_t q = 0; q < d->npieces; q++) {
        d->global[d->local0[d->homes.home[q]] + d->local[q]] = q;
    }
    for (uint32_t n = 0; n < p->nodes; n++) {
        d->needed = bytes[n] > d->needed ? bytes[n] : d->needed;
    }
    free(bytes);
    return INGOT_OK;
}

/* Epoch @p epoch's trace items of every node into @p tr, as trace.c makes one node's (the
 * epoch's samples in order, each piece a sample's bytes touch, with those bytes), in one pass
 * over the order, then grouped by their piece's home (a stable counting sort of their indexes). */
static ingot_status_t traces_build(sim_disk_t *d, uint64_t epoch, sim_traces_t *tr)
{
    const sim_plan_t *p = d->plan;
    uint32_t nodes = p->nodes;
    tr->epoch = UINT64_MAX;
    tr->all.n = 0;
    ingot_status_t st = INGOT_OK;
    for (uint64_t s = 0; st == INGOT_OK && s < p->steps_per_epoch; s++) {
        st = ingot_order_slice(p->order, epoch, s, 0, 1, d->ids, p->global_batch);
        for (uint64_t k = 0; st == INGOT_OK && k < p->global_batch; k++) {
            uint64_t id = d->ids[k], off = p->offset[id], len = p->record[id];
            uint64_t base = d->piece0[p->shard_of[id]];
            for (uint64_t q = base + (off >> d->piece_log2);
                 len > 0 && q <= base + ((off + len - 1) >> d->piece_log2) && st == INGOT_OK; q++) {
                uint64_t at = (q - base) << d->piece_log2,
                         end = at + (UINT64_C(1) << d->piece_log2);
                uint64_t lo = off > at ? off : at, hi = off + len < end ? off + len : end;
                st = ingot_disk_trace_add(&tr->all, q, (uint32_t)s, (uint32_t)(hi - lo));
            }
        }
    }
    if (st == INGOT_OK && tr->first == NULL) {
        tr->first = ingot_calloc((size_t)nodes + 1, sizeof(uint64_t), "sim disk traces");
        st = tr->first != NULL ? INGOT_OK : INGOT_ERR_NO_MEMORY;
    }
    uint32_t *by_home = st == INGOT_OK ? realloc(tr->by_home, (tr->all.n + 1) * sizeof(uint32_t))
                                       : NULL;
    uint64_t *at = st == INGOT_OK ? ingot_calloc(nodes, sizeof(uint64_t), "sim disk traces") : NULL;
    tr->by_home = by_home != NULL ? by_home : tr->by_home;
    st = st == INGOT_OK && (by_home == NULL || at == NULL) ? INGOT_ERR_NO_MEMORY : st;
    if (st == INGOT_OK) {
        memset(tr->first, 0, ((size_t)nodes + 1) * sizeof(uint64_t));
        for (uint64_t i = 0; i < tr->all.n; i++) {
            tr->first[d->homes.home[tr->all.piece[i]] + 1]++;
        }
        for (uint32_t n = 0; n < nodes; n++) {
            tr->first[n + 1] += tr->first[n];
            at[n] = tr->first[n];
        }
        for (uint64_t i = 0; i < tr->all.n; i++) {
            tr->by_home[at[d->homes.home[tr->all.piece[i]]]++] = (uint32_t)i;
        }
        tr->epoch = epoch;
    }
    free(at);
    return st;
}

/* A keeper's policy asks for its node's trace of @p epoch (policy.h, trace_items). */
static ingot_status_t disk_trace_items(void *arg, uint64_t epoch, ingot_disk_trace_t *t)
{
    const sim_keeper_arg_t *ka = arg;
    sim_disk_t *d = ka->d;
    sim_traces_t *tr = d->traces[0].epoch == epoch   ? &d->traces[0]
                       : d->traces[1].epoch == epoch ? &d->traces[1]
                                                     : NULL;
    if (tr == NULL) { /* made anew in place of the older epoch's */
        tr = d->traces[0].epoch == UINT64_MAX ||
                     (d->traces[1].epoch != UINT64_MAX && d->traces[0].epoch < d->traces[1].epoch)
                 ? &d->traces[0]
                 : &d->traces[1];
        INGOT_CHECK(traces_build(d, epoch, tr));
    }
    const ingot_disk_trace_t *all = &tr->all;
    for (uint64_t k = tr->first[ka->node]; k < tr->first[ka->node + 1]; k++) {
        uint32_t i = tr->by_home[k]; /* its piece as its keeper numbers it */
        INGOT_CHECK(ingot_disk_trace_add(t, d->local[all->piece[i]], all->step[i], all->bytes[i]));
    }
    return INGOT_OK;
}

/* Node @p n's keeper's policy for the job, holding what the last job left. */
static ingot_status_t disk_policy(sim_disk_t *d, uint32_t n)
{
    const sim_plan_t *p = d->plan;
    uint64_t steps = p->steps_per_epoch * d->job->epochs;
    ingot_disk_policy_params_t pp = {
        .manifest = d->job->manifest,
        .order = p->order,
        .pieces = {.nshards = 1, .piece_log2 = d->piece_log2, .piece0 = &d->counts[2 * (size_t)n]},
        .homed = NULL, /* its traces hold its node's pieces only (disk_trace_items) */
        .first_step = 0,
        .end_step = steps,
        .steps_per_epoch = p->steps_per_epoch,
        .global_batch = p->global_batch,
        .lead = d->job->depth + 2, /* keeper.c: KEEPER_LEAD_STEPS past the loader's depth */
        .lru = d->lru,
        .trace_items = disk_trace_items,
        .trace_arg = &d->args[n]};
    INGOT_CHECK(ingot_disk_policy_create(&pp, &d->pol[n]));
    for (uint64_t i = 0; i < d->local0[n + 1] - d->local0[n]; i++) { /* the keeper's scan */
        if (d->kept[d->global[d->local0[n] + i]]) {
            ingot_disk_policy_set(d->pol[n], i, INGOT_DISK_RESIDENT);
        }
    }
    return INGOT_OK;
}

ingot_status_t ingot_sim_disk_plan(const ingot_sim_job_t *job, const sim_plan_t *p, sim_disk_t *d)
{
    *d = (sim_disk_t){.job = job, .plan = p};
    const ingot_disk_config_t *dc;
    INGOT_CHECK(ingot_disk_config(&dc));
    if (dc->bytes == 0) {
        return INGOT_OK;
    }
    if (dc->fill != INGOT_DISK_FILL_WHOLE) {
        return ingot_fail(INGOT_ERR_UNSUPPORTED,
                          "INGOT_DISK_CACHE_FILL=parts: only 'whole' is simulated (docs/sim.md)");
    }
    d->on = 1;
    d->budget = dc->bytes;
    d->piece_log2 = dc->piece_log2;
    d->prefetch_pct = (uint32_t)dc->prefetch;
    d->lru = dc->policy == INGOT_DISK_POLICY_LRU;
    if (d->budget < INGOT_DISK_HEADER_BYTES + (UINT64_C(1) << d->piece_log2)) {
        return ingot_fail(INGOT_ERR_CONFIG,
                          "INGOT_DISK_CACHE_BYTES=%" PRIu64 " holds no entry of a piece "
                          "(INGOT_DISK_CACHE_PIECE) and its 4KiB header: the tier refuses it",
                          d->budget);
    }
    uint64_t *hash = NULL;
    ingot_status_t st = disk_pieces(d, job->manifest, &hash);
    double mem = (double)d->npieces * SIM_DISK_BYTES_PER_PIECE;
    if (st == INGOT_OK && mem > (double)SIM_DISK_MEMORY_MAX) {
        st = ingot_fail(INGOT_ERR_NO_RESOURCE,
                        "the disk tier over %" PRIu64 " pieces of 2^%u bytes would take %.1f GiB "
                        "here (the keepers keep state per piece of the job; at most %.0f GiB): "
                        "simulate it with larger pieces (INGOT_DISK_CACHE_PIECE)",
                        d->npieces, d->piece_log2, mem / (1u << 30),
                        (double)SIM_DISK_MEMORY_MAX / (1u << 30));
    }
    st = st == INGOT_OK ? disk_homes(d, hash, p) : st;
    free(hash);
    INGOT_CHECK(st);
    INGOT_CHECK(disk_needed(d, p));
    d->pol = ingot_calloc(p->nodes, sizeof(ingot_disk_policy_t *), "sim disk keepers");
    d->kept = ingot_calloc(d->npieces + 1, 1, "sim disk keepers");
    d->usage = ingot_calloc(p->nodes, sizeof(uint64_t), "sim disk keepers");
    d->claimed = ingot_calloc(p->nodes, sizeof(uint64_t), "sim disk keepers");
    d->args = ingot_calloc(p->nodes, sizeof(*d->args), "sim disk keepers");
    d->ids = ingot_calloc(p->global_batch, sizeof(uint64_t), "sim disk traces");
    if (d->pol == NULL || d->kept == NULL || d->usage == NULL || d->claimed == NULL ||
        d->args == NULL || d->ids == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    d->traces[0].epoch = d->traces[1].epoch = UINT64_MAX;
    for (uint32_t n = 0; n < p->nodes; n++) {
        d->args[n] = (sim_keeper_arg_t){d, n};
    }
    for (uint32_t n = 0; n < p->nodes; n++) {
        INGOT_CHECK(disk_policy(d, n));
    }
    return INGOT_OK;
}

void ingot_sim_disk_free(sim_disk_t *d)
{
    for (uint32_t n = 0; d->pol != NULL && n < d->plan->nodes; n++) {
        ingot_disk_policy_destroy(d->pol[n]);
    }
    ingot_disk_homes_free(&d->homes);
    free(d->pol);
    free(d->kept);
    free(d->usage);
    free(d->claimed);
    free(d->fills);
    free(d->args);
    free(d->ids);
    for (int k = 0; k < 2; k++) {
        free(d->traces[k].first);
        free(d->traces[k].by_home);
        ingot_disk_trace_free(&d->traces[k].all);
    }
    free(d->piece0);
    free(d->shard_size);
    free(d->local);
    free(d->local0);
    free(d->global);
    free(d->counts);
    *d = (sim_disk_t){0};
}

ingot_status_t ingot_sim_disk_advance(sim_disk_t *d, uint64_t g)
{
    for (uint32_t n = 0; d->on && n < d->plan->nodes; n++) {
        INGOT_CHECK(ingot_disk_policy_advance(d->pol[n], g));
    }
    return INGOT_OK;
}

int ingot_sim_disk_resident(const sim_disk_t *d, uint64_t p)
{
    return ingot_disk_policy_state(d->pol[d->homes.home[p]], d->local[p]) == INGOT_DISK_RESIDENT;
}

/* room.c, claim.c: the budget takes @p bytes at all; it has room for one more whole piece beside
 * what is on disk and claimed. */
static int disk_fits(const sim_disk_t *d, uint64_t bytes)
{
    return bytes <= d->budget;
}

static int disk_has_room(const sim_disk_t *d, uint32_t n)
{
    uint64_t used = d->usage[n] + d->claimed[n];
    return disk_fits(d, used + INGOT_DISK_HEADER_BYTES + (UINT64_C(1) << d->piece_log2));
}

static void disk_add_fill(sim_disk_t *d, uint64_t p, uint64_t need)
{
    if (d->nfills == d->fills_cap) {
        uint64_t cap = d->fills_cap ? 2 * d->fills_cap : 256;
        sim_fill_t *f = realloc(d->fills, cap * sizeof(*f));
        if (f == NULL) { /* the fill is dropped, as a full queue drops it: the piece stays absent */
            ingot_disk_policy_set(d->pol[d->homes.home[p]], d->local[p], INGOT_DISK_ABSENT);
            d->claimed[d->homes.home[p]] -= entry_bytes(d, p);
            return;
        }
        d->fills = f;
        d->fills_cap = cap;
    }
    d->fills[d->nfills++] = (sim_fill_t){p, need};
}

int ingot_sim_disk_claim(sim_disk_t *d, uint64_t p, uint64_t part)
{
    uint32_t h = (uint32_t)d->homes.home[p];
    ingot_disk_policy_t *pol = d->pol[h];
    uint64_t lp = d->local[p];
    if (ingot_disk_policy_state(pol, lp) != INGOT_DISK_ABSENT) {
        return 0; /* claimed by an earlier miss of the step: its own bytes only */
    }
    uint64_t plen = sim_disk_piece_len(d, p), extra = plen - (part < plen ? part : plen);
    if (!disk_fits(d, entry_bytes(d, p)) ||
        !ingot_disk_policy_pays(pol, lp, disk_has_room(d, h), ingot_disk_policy_need(pol, lp),
                                extra)) {
        return 0;
    }
    ingot_disk_policy_set(pol, lp, INGOT_DISK_FILLING);
    d->claimed[h] += entry_bytes(d, p);
    disk_add_fill(d, p, SIM_DISK_DEMAND);
    return 1;
}

int ingot_sim_disk_prefetch(sim_disk_t *d, uint32_t n, uint64_t *p_p)
{
    uint64_t need, lp;
    if (!disk_fits(d, INGOT_DISK_HEADER_BYTES + (UINT64_C(1) << d->piece_log2)) ||
        !ingot_disk_policy_prefetch(d->pol[n], disk_has_room(d, n), &lp, &need)) {
        return 0;
    }
    *p_p = d->global[d->local0[n] + lp];
    d->claimed[n] += entry_bytes(d, *p_p);
    disk_add_fill(d, *p_p, need);
    return 1;
}

/* keeper.c's keeper_room: victims evicted until @p bytes fit, or 0 (bypassed). */
static int disk_room(sim_disk_t *d, uint32_t n, uint64_t bytes, uint64_t need,
                     ingot_sim_epoch_t *ep)
{
    while (d->usage[n] + bytes > d->budget) {
        ingot_disk_victim_t v;
        if (!ingot_disk_policy_victim(d->pol[n], need, &v)) {
            return 0;
        }
        uint64_t gone = v.foreign ? v.bytes : entry_bytes(d, d->global[d->local0[n] + v.piece]);
        d->usage[n] = gone < d->usage[n] ? d->usage[n] - gone : 0;
        ep->disk_evictions++;
    }
    return 1;
}

void ingot_sim_disk_settle(sim_disk_t *d, double *written, ingot_sim_epoch_t *ep)
{
    for (uint64_t i = 0; i < d->nfills; i++) {
        uint64_t p = d->fills[i].piece, bytes = entry_bytes(d, p);
        uint32_t h = (uint32_t)d->homes.home[p];
        ingot_disk_policy_t *pol = d->pol[h];
        uint64_t need = d->fills[i].need != SIM_DISK_DEMAND
                            ? d->fills[i].need
                            : ingot_disk_policy_need(pol, d->local[p]);
        d->claimed[h] -= bytes; /* the claim settles, either way */
        int admit = disk_fits(d, bytes) && disk_room(d, h, bytes, need, ep);
        if (admit) {
            d->usage[h] += bytes;
            written[h] += (double)bytes;
            ep->disk_admitted++;
        } else {
            ep->disk_refused++;
        }
        ingot_disk_policy_set(pol, d->local[p], admit ? INGOT_DISK_RESIDENT : INGOT_DISK_ABSENT);
    }
    d->nfills = 0;
}

ingot_status_t ingot_sim_disk_next_job(sim_disk_t *d)
{
    for (uint64_t q = 0; d->on && q < d->npieces; q++) {
        d->kept[q] = ingot_sim_disk_resident(d, q);
    }
    for (uint32_t n = 0; d->on && n < d->plan->nodes; n++) {
        ingot_disk_policy_destroy(d->pol[n]);
        d->pol[n] = NULL;
        d->claimed[n] = 0;
        INGOT_CHECK(disk_policy(d, n));
    }
    return INGOT_OK;
}

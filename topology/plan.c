/*
 * The placement planner: a pure function of (topology, local size, params). Each local rank
 * gets a distinct GPU (balanced across NUMA nodes; consecutive ranks share one only in sharing
 * mode), the NIC with the smallest distance class to that GPU (ties spread over NICs), and a
 * cpuset from that GPU's locality split among the ranks that share it, part of it reserved for
 * ingest threads. Without GPUs the ranks are spread over NUMA nodes (CPU-only plan).
 */
#include "topology/topo.h"
#include "topology/topo_util.h"
#include "base/param.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"
#include <stdlib.h>
#include <string.h>

#define FNV_OFFSET 1469598103934665603ull
#define FNV_PRIME  1099511628211ull

static uint64_t plan_gpu_mask_all(const ingot_topo_t *topo)
{
    return topo->ngpus >= INGOT_TOPO_MAX_GPUS ? INGOT_TOPO_GPUS_ALL
                                              : ((uint64_t)1 << topo->ngpus) - 1;
}

static int plan_popcount(uint64_t m)
{
    return __builtin_popcountll(m);
}

/* ---------------------------------------------------------------- GPUs */

/* Add up to @p n GPUs of @p left to @p chosen, round-robin over NUMA nodes (lowest index first
 * in each), so that a plan for fewer ranks than GPUs spreads them over the sockets. */
static int plan_pick_rr(const ingot_topo_t *topo, uint64_t left, int n, uint64_t *chosen)
{
    int count = 0;
    while (count < n && left != 0) {
        for (int numa = -1; numa < topo->nnuma && count < n; numa++) {
            for (int g = 0; g < topo->ngpus; g++) {
                if ((left >> g & 1) && topo->gpus[g].numa == numa) {
                    left &= ~((uint64_t)1 << g);
                    *chosen |= (uint64_t)1 << g;
                    count++;
                    break;
                }
            }
        }
    }
    return count;
}

/* Choose @p n of the usable GPUs, those near allowed CPUs first, returned in index order. */
static void plan_pick_gpus(const ingot_topo_t *topo, uint64_t usable, int n,
                           hwloc_const_cpuset_t allowed, int *picked)
{
    uint64_t near = 0, chosen = 0;
    for (int g = 0; g < topo->ngpus; g++) {
        if ((usable >> g & 1) && hwloc_bitmap_intersects(topo->gpus[g].locality, allowed)) {
            near |= (uint64_t)1 << g;
        }
    }
    int count = plan_pick_rr(topo, near, n, &chosen);
    plan_pick_rr(topo, usable & ~chosen, n - count, &chosen);
    for (int g = 0, k = 0; g < topo->ngpus; g++) {
        if (chosen >> g & 1) {
            picked[k++] = g;
        }
    }
}

static ingot_status_t plan_gpus_check(const ingot_topo_t *topo, int local_size, uint64_t usable,
                                      const ingot_plan_params_t *p)
{
    int nusable = plan_popcount(usable);
    if (nusable == 0 && p->mode == INGOT_TOPO_MODE_GPU) {
        ingot_error("INGOT_PLACEMENT=gpu: expected at least one usable GPU on %s, found %d GPU%s "
                    "of which 0 usable after INGOT_GPUS and CUDA_VISIBLE_DEVICES (%s)",
                    topo->hostname, topo->ngpus, topo->ngpus == 1 ? "" : "s", topo->source);
        return INGOT_ERR_NO_DEVICE;
    }
    if (nusable > 0 && local_size > nusable && p->sharing == INGOT_TOPO_SHARING_ERROR) {
        ingot_error("%d local ranks but %d usable GPU%s on %s (%s; %d on the node): expected at "
                    "most one rank per GPU (INGOT_GPU_SHARING=error); INGOT_GPU_SHARING=share (the "
                    "default) lets ranks share GPUs",
                    local_size, nusable, nusable == 1 ? "" : "s", topo->hostname, topo->source,
                    topo->ngpus);
        return INGOT_ERR_NO_DEVICE;
    }
    return INGOT_OK;
}

static ingot_status_t plan_assign_gpus(const ingot_topo_t *topo, ingot_plan_t *plan,
                                       uint64_t usable, hwloc_const_cpuset_t allowed)
{
    int nuse = plan_popcount(usable) < plan->local_size ? plan_popcount(usable) : plan->local_size;
    int *picked = ingot_calloc((size_t)nuse, sizeof(int), "GPU choice");
    if (picked == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    plan_pick_gpus(topo, usable, nuse, allowed, picked);
    for (int r = 0; r < plan->local_size; r++) {
        int slot = (int)((long)r * nuse / plan->local_size);
        plan->ranks[r].gpu = picked[slot];
        plan->ranks[r].numa = topo->gpus[picked[slot]].numa;
    }
    for (int r = 0; r < plan->local_size; r++) {
        for (int q = 0; q < plan->local_size; q++) {
            plan->ranks[r].gpu_ranks += plan->ranks[q].gpu == plan->ranks[r].gpu;
        }
        if (plan->ranks[r].gpu_ranks > 1) {
            plan->ranks[r].flags |= INGOT_PLACEMENT_FLAG_GPU_SHARED;
        }
    }
    plan->gpus_used = nuse;
    plan->gpu_plan = true;
    free(picked);
    return INGOT_OK;
}

/* ---------------------------------------------------------------- CPU domains */

/* The CPUs a rank's cpuset must come from: its GPU's locality, or its NUMA node in a CPU-only
 * plan; narrowed to the allowed cpuset (the whole allowed cpuset when they do not meet). */
static void plan_domain(const ingot_topo_t *topo, const ingot_plan_t *plan, int r,
                        hwloc_const_cpuset_t allowed, hwloc_bitmap_t dom)
{
    const ingot_plan_rank_t *rk = &plan->ranks[r];
    if (rk->gpu >= 0) {
        hwloc_bitmap_and(dom, topo->gpus[rk->gpu].locality, allowed);
    } else if (rk->numa >= 0) {
        hwloc_bitmap_and(dom, topo->numa[rk->numa].cpuset, allowed);
    } else {
        hwloc_bitmap_copy(dom, allowed);
    }
    if (hwloc_bitmap_iszero(dom)) {
        char allow[INGOT_TOPOLOGY_STR_MAX];
        ingot_topo_cpuset_format(allowed, allow, sizeof(allow));
        ingot_warn("local rank %d: no CPU near its %s is in the allowed cpuset (%s): it gets "
                   "CPUs away from it",
                   r, rk->gpu >= 0 ? "GPU" : "NUMA node", allow);
        hwloc_bitmap_copy(dom, allowed);
    }
}

/* The @p k-th NUMA node (index into topo->numa) with allowed CPUs, or -1. */
static int plan_numa_nth(const ingot_topo_t *topo, hwloc_const_cpuset_t allowed, int k)
{
    for (int i = 0; i < topo->nnuma; i++) {
        if (hwloc_bitmap_intersects(topo->numa[i].cpuset, allowed) && k-- == 0) {
            return i;
        }
    }
    return -1;
}

/* CPU-only plan: ranks in blocks over the NUMA nodes that have allowed CPUs. */
static void plan_assign_numa(const ingot_topo_t *topo, ingot_plan_t *plan,
                             hwloc_const_cpuset_t allowed)
{
    int nd = 0;
    while (plan_numa_nth(topo, allowed, nd) >= 0) {
        nd++;
    }
    for (int r = 0; r < plan->local_size; r++) {
        plan->ranks[r].gpu = -1;
        plan->ranks[r].numa =
            nd > 0 ? plan_numa_nth(topo, allowed, (int)((long)r * nd / plan->local_size)) : -1;
    }
    plan->gpu_plan = false;
}

/* ---------------------------------------------------------------- splitting CPUs */

/* The cores (or, with @p pus, the PUs) of @p set, each narrowed to @p set. */
static int plan_units(const ingot_topo_t *topo, hwloc_const_cpuset_t set, bool pus,
                      hwloc_bitmap_t *units, int max)
{
    hwloc_obj_type_t type = pus ? HWLOC_OBJ_PU : HWLOC_OBJ_CORE;
    int n = 0;
    if (hwloc_get_nbobjs_by_type(topo->hw, type) <= 0) {
        type = HWLOC_OBJ_PU;
    }
    for (hwloc_obj_t o = NULL;
         (o = hwloc_get_next_obj_by_type(topo->hw, type, o)) != NULL && n < max;) {
        if (hwloc_bitmap_intersects(o->cpuset, set)) {
            hwloc_bitmap_and(units[n++], o->cpuset, set);
        }
    }
    return n;
}

/* Give each of the @p n ranks in @p members a contiguous, balanced share of @p avail's cores
 * (PUs when there are fewer cores than ranks; shared PUs when there are fewer PUs). */
static void plan_split(const ingot_topo_t *topo, ingot_plan_t *plan, const int *members, int n,
                       hwloc_const_cpuset_t avail, hwloc_bitmap_t *units)
{
    int nu = plan_units(topo, avail, false, units, topo->npus);
    if (nu < n) {
        nu = plan_units(topo, avail, true, units, topo->npus);
    }
    for (int k = 0; k < n; k++) {
        ingot_plan_rank_t *rk = &plan->ranks[members[k]];
        if (nu >= n) {
            for (int u = (int)((long)k * nu / n); u < (int)((long)(k + 1) * nu / n); u++) {
                hwloc_bitmap_or(rk->cpuset, rk->cpuset, units[u]);
            }
        } else {
            /* nu >= 1: avail is never empty (a domain falls back to the non-empty allowed cpuset).
             * NOLINTNEXTLINE(clang-analyzer-core.DivideZero) */
            hwloc_bitmap_copy(rk->cpuset, units[k % nu]);
            rk->flags |= INGOT_PLACEMENT_FLAG_CPUS_SHARED;
        }
    }
}

/* Ranks whose domains are equal form a group; smaller domains are served first, so a rank
 * whose GPU sits on one NUMA node is not starved by ranks that may use the whole socket. */
static int plan_next_group(ingot_plan_t *plan, hwloc_bitmap_t *doms, const bool *done, int *members)
{
    int best = -1, n = 0;
    for (int r = 0; r < plan->local_size; r++) {
        if (!done[r] &&
            (best < 0 || hwloc_bitmap_weight(doms[r]) < hwloc_bitmap_weight(doms[best]))) {
            best = r;
        }
    }
    for (int r = 0; best >= 0 && r < plan->local_size; r++) {
        if (!done[r] && hwloc_bitmap_isequal(doms[r], doms[best])) {
            members[n++] = r;
        }
    }
    return n;
}

static void plan_bitmaps_free(hwloc_bitmap_t *maps, int n)
{
    for (int i = 0; maps != NULL && i < n; i++) {
        hwloc_bitmap_free(maps[i]);
    }
    free(maps);
}

static hwloc_bitmap_t *plan_bitmaps_alloc(int n, const char *what)
{
    /* hwloc_bitmap_t is a pointer typedef: an array of handles, sized as such.
     * NOLINTNEXTLINE(bugprone-sizeof-expression) */
    hwloc_bitmap_t *maps = ingot_calloc((size_t)(n > 0 ? n : 1), sizeof(*maps), what);
    for (int i = 0; maps != NULL && i < n; i++) {
        if ((maps[i] = hwloc_bitmap_alloc()) == NULL) {
            ingot_error("out of memory allocating %s", what);
            plan_bitmaps_free(maps, i);
            return NULL;
        }
    }
    return maps;
}

static ingot_status_t plan_assign_cpus(const ingot_topo_t *topo, ingot_plan_t *plan,
                                       hwloc_const_cpuset_t allowed)
{
    ingot_status_t st = INGOT_ERR_NO_MEMORY;
    int n = plan->local_size;
    hwloc_bitmap_t *doms = plan_bitmaps_alloc(n, "rank CPU domains");
    hwloc_bitmap_t *units = plan_bitmaps_alloc(topo->npus, "CPU units");
    hwloc_bitmap_t taken = hwloc_bitmap_alloc(), avail = hwloc_bitmap_alloc();
    int *members = ingot_calloc((size_t)n, sizeof(int), "rank group");
    bool *done = ingot_calloc((size_t)n, sizeof(bool), "rank group");
    if (doms == NULL || units == NULL || taken == NULL || avail == NULL || members == NULL ||
        done == NULL) {
        goto out;
    }
    for (int r = 0; r < n; r++) {
        plan_domain(topo, plan, r, allowed, doms[r]);
    }
    int ng;
    while ((ng = plan_next_group(plan, doms, done, members)) > 0) {
        hwloc_bitmap_andnot(avail, doms[members[0]], taken);
        if (hwloc_bitmap_iszero(avail)) {
            hwloc_bitmap_copy(avail, doms[members[0]]); /* all taken: share */
        }
        plan_split(topo, plan, members, ng, avail, units);
        for (int k = 0; k < ng; k++) {
            done[members[k]] = true;
            hwloc_bitmap_or(taken, taken, plan->ranks[members[k]].cpuset);
        }
    }
    st = INGOT_OK;
out:
    free(done);
    free(members);
    hwloc_bitmap_free(avail);
    hwloc_bitmap_free(taken);
    plan_bitmaps_free(units, topo->npus);
    plan_bitmaps_free(doms, n);
    return st;
}

/* Reserve the last INGOT_INGEST_CORES cores (else PUs) of a rank's cpuset for ingest threads;
 * with too few, ingest and trainer share the whole cpuset. */
static void plan_split_ingest(const ingot_topo_t *topo, ingot_plan_rank_t *rk, int want,
                              hwloc_bitmap_t *units)
{
    hwloc_bitmap_copy(rk->ingest_cpuset, rk->cpuset);
    hwloc_bitmap_copy(rk->trainer_cpuset, rk->cpuset);
    if (want <= 0) {
        return;
    }
    int nu = plan_units(topo, rk->cpuset, false, units, topo->npus);
    if (nu <= want) {
        nu = plan_units(topo, rk->cpuset, true, units, topo->npus);
    }
    if (nu <= want) {
        rk->flags |= INGOT_PLACEMENT_FLAG_INGEST_SHARED;
        return;
    }
    hwloc_bitmap_zero(rk->ingest_cpuset);
    for (int u = nu - want; u < nu; u++) {
        hwloc_bitmap_or(rk->ingest_cpuset, rk->ingest_cpuset, units[u]);
    }
    hwloc_bitmap_andnot(rk->trainer_cpuset, rk->cpuset, rk->ingest_cpuset);
}

/* ---------------------------------------------------------------- NICs */

static void plan_assign_nics(const ingot_topo_t *topo, ingot_plan_t *plan, int *load)
{
    for (int r = 0; r < plan->local_size; r++) {
        ingot_plan_rank_t *rk = &plan->ranks[r];
        rk->nic = -1;
        rk->nic_distance = INGOT_TOPOLOGY_DISTANCE_UNKNOWN;
        for (int i = 0; i < topo->nnics; i++) {
            ingot_topology_distance_t d =
                rk->gpu >= 0 ? ingot_topo_dev_distance(topo, &topo->gpus[rk->gpu], &topo->nics[i])
                             : ingot_topo_numa_distance(topo, rk->numa, &topo->nics[i]);
            if (rk->nic < 0 || d < rk->nic_distance ||
                (d == rk->nic_distance && load[i] < load[rk->nic])) {
                rk->nic = i;
                rk->nic_distance = d;
            }
        }
        if (rk->nic >= 0) {
            load[rk->nic]++;
        }
    }
}

/* ---------------------------------------------------------------- create/destroy */

static void plan_params_apply(const ingot_topo_t *topo, const ingot_plan_params_t *in,
                              ingot_plan_params_t *p)
{
    p->field_mask = (in != NULL) ? in->field_mask : 0;
    p->allowed_cpuset = INGOT_PARAM_VALUE(in, allowed_cpuset, INGOT_PLAN_PARAM_FIELD_ALLOWED_CPUSET,
                                          NULL);
    p->gpu_mask = plan_gpu_mask_all(topo) & INGOT_PARAM_VALUE(in, gpu_mask,
                                                              INGOT_PLAN_PARAM_FIELD_GPU_MASK,
                                                              INGOT_TOPO_GPUS_ALL);
    p->mode = INGOT_PARAM_VALUE(in, mode, INGOT_PLAN_PARAM_FIELD_MODE, INGOT_TOPO_MODE_AUTO);
    p->sharing = INGOT_PARAM_VALUE(in, sharing, INGOT_PLAN_PARAM_FIELD_SHARING,
                                   INGOT_TOPO_SHARING_SHARE);
    p->ingest_cores = INGOT_PARAM_VALUE(in, ingest_cores, INGOT_PLAN_PARAM_FIELD_INGEST_CORES,
                                        INGOT_PLAN_DEFAULT_INGEST_CORES);
    if (p->mode == INGOT_TOPO_MODE_CPU) {
        p->gpu_mask = 0;
    }
}

static ingot_status_t plan_allowed(const ingot_topo_t *topo, const ingot_plan_params_t *p,
                                   hwloc_bitmap_t allowed)
{
    hwloc_const_cpuset_t node = hwloc_topology_get_allowed_cpuset(topo->hw);
    hwloc_bitmap_copy(allowed, node);
    if (p->allowed_cpuset != NULL) {
        hwloc_bitmap_and(allowed, allowed, p->allowed_cpuset);
    }
    if (hwloc_bitmap_iszero(allowed)) {
        char want[INGOT_TOPOLOGY_STR_MAX], have[INGOT_TOPOLOGY_STR_MAX];
        ingot_topo_cpuset_format(p->allowed_cpuset, want, sizeof(want));
        ingot_topo_cpuset_format(node, have, sizeof(have));
        ingot_error("allowed cpuset '%s' holds none of the CPUs of %s (%s): expected a subset of "
                    "%s",
                    want, topo->hostname, topo->source, have);
        return INGOT_ERR_NO_RESOURCE;
    }
    return INGOT_OK;
}

static ingot_plan_t *plan_alloc(int local_size)
{
    ingot_plan_t *plan = ingot_calloc(1, sizeof(*plan), "placement plan");
    if (plan == NULL) {
        return NULL;
    }
    plan->local_size = local_size;
    plan->ranks = ingot_calloc((size_t)local_size, sizeof(*plan->ranks), "placement plan");
    for (int r = 0; plan->ranks != NULL && r < local_size; r++) {
        ingot_plan_rank_t *rk = &plan->ranks[r];
        rk->cpuset = hwloc_bitmap_alloc();
        rk->ingest_cpuset = hwloc_bitmap_alloc();
        rk->trainer_cpuset = hwloc_bitmap_alloc();
        if (rk->cpuset == NULL || rk->ingest_cpuset == NULL || rk->trainer_cpuset == NULL) {
            ingot_error("out of memory allocating the placement plan");
            ingot_topo_plan_destroy(plan);
            return NULL;
        }
    }
    if (plan->ranks == NULL) {
        ingot_topo_plan_destroy(plan);
        return NULL;
    }
    return plan;
}

static ingot_status_t plan_fill(const ingot_topo_t *topo, ingot_plan_t *plan,
                                const ingot_plan_params_t *p, hwloc_const_cpuset_t allowed)
{
    ingot_status_t st = INGOT_ERR_NO_MEMORY;
    int *load = ingot_calloc((size_t)(topo->nnics > 0 ? topo->nnics : 1), sizeof(int), "NIC load");
    hwloc_bitmap_t *units = plan_bitmaps_alloc(topo->npus, "CPU units");
    if (load == NULL || units == NULL) {
        goto out;
    }
    if (p->gpu_mask != 0) {
        st = plan_assign_gpus(topo, plan, p->gpu_mask, allowed);
    } else {
        plan_assign_numa(topo, plan, allowed);
        st = INGOT_OK;
    }
    if (st == INGOT_OK) {
        st = plan_assign_cpus(topo, plan, allowed);
    }
    if (st == INGOT_OK) {
        plan_assign_nics(topo, plan, load);
        for (int r = 0; r < plan->local_size; r++) {
            plan_split_ingest(topo, &plan->ranks[r], p->ingest_cores, units);
        }
    }
out:
    plan_bitmaps_free(units, topo->npus);
    free(load);
    return st;
}

ingot_status_t ingot_topo_plan(const ingot_topo_t *topo, int local_size,
                               const ingot_plan_params_t *params, ingot_plan_t **plan_p)
{
    ingot_plan_params_t p;
    if (topo == NULL || plan_p == NULL || local_size < 1) {
        ingot_error("ingot_topo_plan: invalid arguments (topology %p, %d local ranks; expected "
                    "a topology and at least 1 rank)",
                    (const void *)topo, local_size);
        return INGOT_ERR_INVALID_PARAM;
    }
    plan_params_apply(topo, params, &p);
    if (p.ingest_cores < 0) {
        ingot_error("ingot_topo_plan: %d ingest cores (expected 0 or more)", p.ingest_cores);
        return INGOT_ERR_INVALID_PARAM;
    }
    INGOT_CHECK(plan_gpus_check(topo, local_size, p.gpu_mask, &p));
    hwloc_bitmap_t allowed = hwloc_bitmap_alloc();
    if (allowed == NULL) {
        ingot_error("out of memory planning placement");
        return INGOT_ERR_NO_MEMORY;
    }
    ingot_plan_t *plan = NULL;
    ingot_status_t st = plan_allowed(topo, &p, allowed);
    if (st == INGOT_OK) {
        plan = plan_alloc(local_size);
        st = plan != NULL ? plan_fill(topo, plan, &p, allowed) : INGOT_ERR_NO_MEMORY;
    }
    hwloc_bitmap_free(allowed);
    if (st != INGOT_OK) {
        ingot_topo_plan_destroy(plan);
        return st;
    }
    *plan_p = plan;
    return INGOT_OK;
}

void ingot_topo_plan_destroy(ingot_plan_t *plan)
{
    if (plan == NULL) {
        return;
    }
    for (int r = 0; plan->ranks != NULL && r < plan->local_size; r++) {
        hwloc_bitmap_free(plan->ranks[r].cpuset);
        hwloc_bitmap_free(plan->ranks[r].ingest_cpuset);
        hwloc_bitmap_free(plan->ranks[r].trainer_cpuset);
    }
    free(plan->ranks);
    free(plan);
}

static uint64_t plan_hash(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h = (h ^ p[i]) * FNV_PRIME;
    }
    return h;
}

uint64_t ingot_topo_plan_digest(const ingot_plan_t *plan)
{
    uint64_t h = plan_hash(FNV_OFFSET, &plan->local_size, sizeof(plan->local_size));
    for (int r = 0; r < plan->local_size; r++) {
        const ingot_plan_rank_t *rk = &plan->ranks[r];
        int ids[] = {rk->gpu, rk->nic, rk->numa};
        char set[INGOT_TOPOLOGY_STR_MAX];
        h = plan_hash(h, ids, sizeof(ids));
        ingot_topo_cpuset_format(rk->cpuset, set, sizeof(set));
        h = plan_hash(h, set, strlen(set));
        ingot_topo_cpuset_format(rk->ingest_cpuset, set, sizeof(set));
        h = plan_hash(h, set, strlen(set));
    }
    return h;
}

void ingot_topo_plan_params_from_config(const ingot_topo_config_t *cfg, uint64_t gpu_mask,
                                        ingot_plan_params_t *p)
{
    memset(p, 0, sizeof(*p));
    p->field_mask = INGOT_PLAN_PARAM_FIELD_GPU_MASK | INGOT_PLAN_PARAM_FIELD_MODE |
                    INGOT_PLAN_PARAM_FIELD_SHARING | INGOT_PLAN_PARAM_FIELD_INGEST_CORES;
    p->gpu_mask = gpu_mask;
    p->mode = cfg->placement;
    p->sharing = cfg->gpu_sharing;
    p->ingest_cores = (int)cfg->ingest_cores;
}

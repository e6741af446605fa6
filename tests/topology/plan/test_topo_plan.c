/*
 * Placement plans on every fixture (and on the hwloc XML exports in $INGOT_TOPO_EXTRA_XML, a
 * colon-separated list, when set), checked against invariants recomputed through hwloc by the
 * oracle: distinct GPUs, each cpuset inside its GPU's locality and socket, no CPU shared, the
 * nearest NIC chosen, NUMA balance, and plans inside a narrower allowed cpuset.
 */
#include "topology/topo.h"
#include "base/config.h"
#include "test_topo_oracle.h"
#include "common/topo_lsan.h"

#define ORACLE_MAX_NUMA 256

static const char *const fixtures[] = {"dgx-h100.xml", "gpu4-nic1.xml", "cpu-2s.xml", "odd.xml",
                                       "this-machine.xml"};

typedef struct check_ctx {
    const char *xml;
    hwloc_topology_t hw; /* the oracle's own topology */
    const ingot_topo_t *topo;
    const ingot_plan_t *plan;
    hwloc_const_cpuset_t allowed;
    bool whole; /* allowed is the whole node: NUMA balance is expected */
} check_ctx_t;

static void check_gpus_distinct(const check_ctx_t *c)
{
    for (int r = 0; r < c->plan->local_size; r++) {
        for (int q = r + 1; q < c->plan->local_size; q++) {
            if (!(c->plan->ranks[r].flags & INGOT_PLACEMENT_FLAG_GPU_SHARED)) {
                CHECK(c->plan->ranks[r].gpu < 0 || c->plan->ranks[r].gpu != c->plan->ranks[q].gpu);
            }
        }
    }
}

static void check_cpus_disjoint(const check_ctx_t *c)
{
    hwloc_bitmap_t seen = hwloc_bitmap_alloc();
    for (int r = 0; r < c->plan->local_size; r++) {
        const ingot_plan_rank_t *rk = &c->plan->ranks[r];
        CHECK(!hwloc_bitmap_iszero(rk->cpuset));
        CHECK(hwloc_bitmap_isincluded(rk->cpuset, c->allowed));
        CHECK(hwloc_bitmap_isincluded(rk->ingest_cpuset, rk->cpuset));
        CHECK(hwloc_bitmap_isincluded(rk->trainer_cpuset, rk->cpuset));
        if (!(rk->flags & INGOT_PLACEMENT_FLAG_CPUS_SHARED)) {
            CHECK(!hwloc_bitmap_intersects(seen, rk->cpuset));
        }
        hwloc_bitmap_or(seen, seen, rk->cpuset);
    }
    hwloc_bitmap_free(seen);
}

/* The cpuset lies in what hwloc calls the GPU's locality (when it meets the allowed CPUs), hence
 * on its socket; the NIC has the smallest class the oracle finds among the node's NICs. */
static void check_gpu_rank(const check_ctx_t *c, const ingot_plan_rank_t *rk)
{
    hwloc_obj_t gpu = oracle_pci(c->hw, c->topo->gpus[rk->gpu].busid);
    if (gpu == NULL) {
        return; /* a GPU without PCI device: no locality to check */
    }
    hwloc_obj_t near = oracle_cpu_parent(gpu);
    hwloc_bitmap_t dom = hwloc_bitmap_alloc();
    hwloc_bitmap_and(dom, near->cpuset, c->allowed);
    if (!hwloc_bitmap_iszero(dom)) {
        CHECK(hwloc_bitmap_isincluded(rk->cpuset, dom));
        hwloc_obj_t pkg = oracle_package(near);
        CHECK(pkg == NULL || hwloc_bitmap_isincluded(rk->cpuset, pkg->cpuset));
    }
    hwloc_bitmap_free(dom);
    int best = ORACLE_SYSTEM + 1, chosen = -1;
    for (int i = 0; i < c->topo->nnics; i++) {
        hwloc_obj_t nic = oracle_osdev_pci(c->hw, c->topo->nics[i].name);
        int cls = nic != NULL ? oracle_class(gpu, nic) : ORACLE_SYSTEM;
        best = cls < best ? cls : best;
        if (i == rk->nic) {
            chosen = cls;
        }
    }
    CHECK((c->topo->nnics == 0) == (rk->nic < 0));
    if (rk->nic >= 0 && c->topo->nics[rk->nic].busid[0] != '\0') {
        if (chosen != best) {
            fprintf(stderr, "%s: GPU %d got NIC %s (class %d), nearest class is %d\n", c->xml,
                    rk->gpu, c->topo->nics[rk->nic].name, chosen, best);
        }
        CHECK(chosen == best);
        CHECK((int)rk->nic_distance == chosen);
    }
}

/* GPUs used are spread over NUMA nodes: per node, counts differ by at most one while GPUs are
 * left there. CPU-only: ranks per NUMA node differ by at most one. */
static void check_numa_balance(const check_ctx_t *c)
{
    int used[ORACLE_MAX_NUMA] = {0}, have[ORACLE_MAX_NUMA] = {0}, n = c->topo->nnuma;
    if (n < 2 || n > ORACLE_MAX_NUMA || !c->whole) {
        return;
    }
    for (int r = 0; r < c->plan->local_size; r++) {
        int numa = c->plan->ranks[r].numa;
        if (numa >= 0 && (r == 0 || c->plan->ranks[r].gpu != c->plan->ranks[r - 1].gpu)) {
            used[numa]++;
        }
    }
    for (int g = 0; g < c->topo->ngpus; g++) {
        if (c->topo->gpus[g].numa >= 0) {
            have[c->topo->gpus[g].numa]++;
        }
    }
    for (int a = 0; a < n; a++) {
        for (int b = 0; b < n; b++) {
            bool room = !c->plan->gpu_plan || used[b] < have[b];
            CHECK(!room || used[a] <= used[b] + 1);
        }
    }
}

static void check_plan(const check_ctx_t *c)
{
    check_gpus_distinct(c);
    check_cpus_disjoint(c);
    check_numa_balance(c);
    for (int r = 0; r < c->plan->local_size; r++) {
        const ingot_plan_rank_t *rk = &c->plan->ranks[r];
        if (rk->gpu >= 0) {
            CHECK(c->plan->gpu_plan);
            check_gpu_rank(c, rk);
        } else if (rk->numa >= 0) {
            hwloc_bitmap_t dom = hwloc_bitmap_dup(c->topo->numa[rk->numa].cpuset);
            hwloc_bitmap_and(dom, dom, c->allowed);
            CHECK(hwloc_bitmap_isincluded(rk->cpuset, dom));
            hwloc_bitmap_free(dom);
        }
    }
}

/* Plan @p n ranks on @p xml (NULL: this machine) within @p narrow (NULL: all), check it. */
static ingot_plan_t *plan_checked(const char *xml, int n, hwloc_const_cpuset_t narrow,
                                  ingot_topo_sharing_t sharing, ingot_topo_t **topo_p)
{
    ingot_topo_t *topo;
    ingot_plan_t *plan = NULL;
    CHECK_OK(ingot_topo_load(xml, &topo));
    ingot_plan_params_t p = {.field_mask = INGOT_PLAN_PARAM_FIELD_SHARING, .sharing = sharing};
    if (narrow != NULL) {
        p.field_mask |= INGOT_PLAN_PARAM_FIELD_ALLOWED_CPUSET;
        p.allowed_cpuset = narrow;
    }
    ingot_status_t st = ingot_topo_plan(topo, n, &p, &plan);
    if (topo->ngpus > 0 && n > topo->ngpus && sharing == INGOT_TOPO_SHARING_ERROR) {
        CHECK_STATUS(st, INGOT_ERR_NO_DEVICE);
        ingot_topo_destroy(topo);
        return NULL;
    }
    CHECK_OK(st);
    check_ctx_t c = {.xml = xml != NULL ? xml : "live",
                     .hw = oracle_load(xml),
                     .topo = topo,
                     .plan = plan,
                     .whole = narrow == NULL};
    hwloc_bitmap_t allowed = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(c.hw));
    if (narrow != NULL) {
        hwloc_bitmap_and(allowed, allowed, narrow);
    }
    c.allowed = allowed;
    check_plan(&c);
    hwloc_bitmap_free(allowed);
    hwloc_topology_destroy(c.hw);
    if (topo_p != NULL) {
        *topo_p = topo;
    } else {
        ingot_topo_destroy(topo);
    }
    return plan;
}

/* Every rank count from 1 to the PUs (sparser beyond 16), with and without sharing, on the
 * whole node and on its first package only. */
static void check_file(const char *xml)
{
    hwloc_topology_t hw = oracle_load(xml);
    int npus = hwloc_bitmap_weight(hwloc_topology_get_allowed_cpuset(hw));
    hwloc_obj_t pkg = hwloc_get_obj_by_type(hw, HWLOC_OBJ_PACKAGE, 0);
    hwloc_bitmap_t half = hwloc_bitmap_dup(pkg != NULL ? pkg->cpuset
                                                       : hwloc_topology_get_allowed_cpuset(hw));
    for (int n = 1; n <= npus; n += n < 16 ? 1 : n / 2) {
        for (int s = INGOT_TOPO_SHARING_ERROR; s <= INGOT_TOPO_SHARING_SHARE; s++) {
            ingot_topo_plan_destroy(plan_checked(xml, n, NULL, (ingot_topo_sharing_t)s, NULL));
            if (n <= hwloc_bitmap_weight(half)) {
                ingot_topo_plan_destroy(plan_checked(xml, n, half, (ingot_topo_sharing_t)s, NULL));
            }
        }
    }
    hwloc_bitmap_free(half);
    hwloc_topology_destroy(hw);
    printf("ok %s (1..%d ranks)\n", xml != NULL ? xml : "live", npus);
}

/* The "done when": 8 ranks on the DGX-like node, each with its own GPU, a NIC behind the
 * same PCIe switch, and CPUs on that GPU's socket (the socket checks are in check_gpu_rank). */
static void check_dgx_done(void)
{
    ingot_topo_t *topo;
    ingot_plan_t *plan = plan_checked(ORACLE_FIXTURES "/dgx-h100.xml", 8, NULL,
                                      INGOT_TOPO_SHARING_ERROR, &topo);
    uint64_t gpus = 0, nics = 0;
    for (int r = 0; r < 8; r++) {
        CHECK(plan->ranks[r].nic_distance == INGOT_TOPOLOGY_DISTANCE_SWITCH);
        gpus |= 1ull << plan->ranks[r].gpu;
        nics |= 1ull << plan->ranks[r].nic;
        CHECK(strncmp(topo->nics[plan->ranks[r].nic].name, "mlx5_", 5) == 0);
        CHECK(hwloc_bitmap_weight(plan->ranks[r].ingest_cpuset) == 2); /* 1 core, 2 threads */
    }
    CHECK(gpus == 0xff && __builtin_popcountll(nics) == 8);
    ingot_topo_plan_destroy(plan);
    /* 72 ranks sharing 8 GPUs: 9 per GPU, still no CPU shared. */
    plan = plan_checked(ORACLE_FIXTURES "/dgx-h100.xml", 72, NULL, INGOT_TOPO_SHARING_SHARE, NULL);
    for (int r = 0; r < 72; r++) {
        CHECK(plan->ranks[r].gpu == r / 9 && plan->ranks[r].gpu_ranks == 9);
        CHECK(!(plan->ranks[r].flags & INGOT_PLACEMENT_FLAG_CPUS_SHARED));
    }
    ingot_topo_plan_destroy(plan);
    /* 2 ranks: one GPU per socket. */
    plan = plan_checked(ORACLE_FIXTURES "/dgx-h100.xml", 2, NULL, INGOT_TOPO_SHARING_ERROR, NULL);
    CHECK(plan->ranks[0].gpu == 0 && plan->ranks[1].gpu == 4);
    ingot_topo_plan_destroy(plan);
    ingot_topo_destroy(topo);
}

/* The defaults (INGOT_GPU_SHARING unset, as the configuration loads it): one rank per GPU on
 * the 8-GPU node gets exactly one GPU per rank, none shared; more ranks than GPUs share. */
static void check_default_sharing(void)
{
    const ingot_topo_config_t *cfg;
    ingot_topo_t *topo;
    ingot_plan_t *plan;
    ingot_plan_params_t p;
    CHECK_OK(ingot_topo_config(&cfg));
    CHECK(cfg->gpu_sharing == INGOT_TOPO_SHARING_SHARE);
    CHECK_OK(ingot_topo_load(ORACLE_FIXTURES "/dgx-h100.xml", &topo));
    ingot_topo_plan_params_from_config(cfg, INGOT_TOPO_GPUS_ALL, &p);
    CHECK_OK(ingot_topo_plan(topo, 8, &p, &plan));
    uint64_t gpus = 0;
    for (int r = 0; r < 8; r++) {
        CHECK(plan->ranks[r].gpu_ranks == 1);
        CHECK(!(plan->ranks[r].flags & INGOT_PLACEMENT_FLAG_GPU_SHARED));
        gpus |= 1ull << plan->ranks[r].gpu;
    }
    CHECK(gpus == 0xff && plan->gpus_used == 8);
    ingot_topo_plan_destroy(plan);
    CHECK_OK(ingot_topo_plan(topo, 4 * 8, NULL, &plan)); /* planner default: share too */
    for (int r = 0; r < 4 * 8; r++) {
        CHECK(plan->ranks[r].gpu == r / 4 && plan->ranks[r].gpu_ranks == 4);
        CHECK(plan->ranks[r].flags & INGOT_PLACEMENT_FLAG_GPU_SHARED);
    }
    ingot_topo_plan_destroy(plan);
    ingot_topo_destroy(topo);
}

/* CPU-only node: NUMA-balanced, nearest (same NUMA) NIC for the ranks of socket 0. */
static void check_cpu_only(void)
{
    ingot_topo_t *topo;
    ingot_plan_t *plan = plan_checked(ORACLE_FIXTURES "/cpu-2s.xml", 4, NULL,
                                      INGOT_TOPO_SHARING_ERROR, &topo);
    CHECK(!plan->gpu_plan && topo->ngpus == 0);
    CHECK(plan->ranks[0].numa == 0 && plan->ranks[1].numa == 0);
    CHECK(plan->ranks[2].numa == 1 && plan->ranks[3].numa == 1);
    CHECK(plan->ranks[0].nic_distance == INGOT_TOPOLOGY_DISTANCE_NUMA);
    CHECK(plan->ranks[3].nic_distance == INGOT_TOPOLOGY_DISTANCE_SYSTEM);
    ingot_topo_plan_destroy(plan);
    ingot_topo_destroy(topo);
    /* CPU-only on the DGX-like node: ties among a socket's 6 NICs spread the ranks over them. */
    ingot_plan_params_t cpu = {.field_mask = INGOT_PLAN_PARAM_FIELD_MODE,
                               .mode = INGOT_TOPO_MODE_CPU};
    CHECK_OK(ingot_topo_load(ORACLE_FIXTURES "/dgx-h100.xml", &topo));
    CHECK_OK(ingot_topo_plan(topo, 12, &cpu, &plan));
    uint64_t nics = 0;
    for (int r = 0; r < 12; r++) {
        CHECK(plan->ranks[r].gpu == -1 &&
              plan->ranks[r].nic_distance == INGOT_TOPOLOGY_DISTANCE_NUMA);
        CHECK(topo->nics[plan->ranks[r].nic].numa == plan->ranks[r].numa);
        nics |= 1ull << plan->ranks[r].nic;
    }
    CHECK(__builtin_popcountll(nics) == 12);
    ingot_topo_plan_destroy(plan);
    ingot_topo_destroy(topo);
}

int main(void)
{
    char log[8192];
    snprintf(log, sizeof(log), "%s/log", test_tmpdir());
    setenv("INGOT_LOG_FILE", log, 1); /* expected errors (too many ranks) stay out of the output */
    CHECK_OK(ingot_config_load());
    check_dgx_done();
    check_default_sharing();
    check_cpu_only();
    for (size_t i = 0; i < sizeof(fixtures) / sizeof(fixtures[0]); i++) {
        char path[4096];
        snprintf(path, sizeof(path), "%s/%s", ORACLE_FIXTURES, fixtures[i]);
        check_file(path);
    }
    check_file(NULL);
    const char *extra = getenv("INGOT_TOPO_EXTRA_XML");
    char *list = extra != NULL ? strdup(extra) : NULL, *save = NULL;
    for (char *f = list != NULL ? strtok_r(list, ":", &save) : NULL; f != NULL;
         f = strtok_r(NULL, ":", &save)) {
        check_file(f);
    }
    free(list);
    return 0;
}

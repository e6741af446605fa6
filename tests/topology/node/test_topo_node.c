/*
 * Node grouping and plan agreement over MPI (run on 4 ranks): ids, local ranks and host names
 * are consistent, the ranks of a node compute the same plan and get distinct GPUs and disjoint
 * cpusets, a rank that plans differently is caught on every rank, and INGOT_BIND=cpu binds.
 * With INGOT_TOPOLOGY_XML set, the same on that node (binding then refused).
 */
#include "topology/topo.h"
#include "base/config.h"
#include "common/test.h"

static char log_path[8192];

static void check_grouping(const ingot_node_info_t *node)
{
    int size, leaders = 0, is_leader = node->local_rank == 0, sum = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Allreduce(&is_leader, &leaders, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(is_leader ? &node->local_size : &(int){0}, &sum, 1, MPI_INT, MPI_SUM,
                  MPI_COMM_WORLD);
    CHECK(leaders == node->node_count && sum == size);
    CHECK(node->node_id >= 0 && node->node_id < node->node_count);
    CHECK(strcmp(ingot_topo_node_hostname(node, node->node_id), node->hostname) == 0);
    int *locals = calloc((size_t)node->local_size, sizeof(int));
    MPI_Allgather(&node->local_rank, 1, MPI_INT, locals, 1, MPI_INT, node->node_comm);
    for (int i = 0; i < node->local_size; i++) {
        CHECK(locals[i] == i);
    }
    free(locals);
    int leader = node->leader;
    MPI_Bcast(&leader, 1, MPI_INT, 0, node->node_comm);
    CHECK(leader == node->leader);
}

/* Every rank's cpuset and GPU, gathered on the node: distinct GPUs, disjoint cpusets. */
static void check_node_plan(const ingot_topo_t *topo, const ingot_plan_t *plan,
                            const ingot_node_info_t *node, const ingot_placement_t *mine)
{
    ingot_placement_t *all = calloc((size_t)node->local_size, sizeof(*all));
    MPI_Allgather(mine, sizeof(*mine), MPI_BYTE, all, sizeof(*mine), MPI_BYTE, node->node_comm);
    hwloc_bitmap_t seen = hwloc_bitmap_alloc(), set = hwloc_bitmap_alloc();
    for (int r = 0; r < node->local_size; r++) {
        CHECK(all[r].local_rank == r && all[r].local_size == node->local_size);
        CHECK(hwloc_bitmap_list_sscanf(set, all[r].cpuset) == 0 && !hwloc_bitmap_iszero(set));
        CHECK(hwloc_bitmap_isincluded(set, hwloc_topology_get_allowed_cpuset(topo->hw)));
        if (!(all[r].flags & INGOT_PLACEMENT_FLAG_CPUS_SHARED)) {
            CHECK(!hwloc_bitmap_intersects(set, seen));
        }
        hwloc_bitmap_or(seen, seen, set);
        for (int q = 0; q < r && plan->gpu_plan; q++) {
            CHECK(all[q].gpu_index != all[r].gpu_index);
        }
    }
    if (topo->npus >= node->local_size) {
        CHECK(!(mine->flags & INGOT_PLACEMENT_FLAG_CPUS_SHARED));
    }
    hwloc_bitmap_free(set);
    hwloc_bitmap_free(seen);
    free(all);
}

static void check_disagreement(const ingot_topo_t *topo, const ingot_node_info_t *node)
{
    ingot_plan_t *plan;
    hwloc_bitmap_t one = hwloc_bitmap_alloc();
    ingot_plan_params_t p = {.field_mask = INGOT_PLAN_PARAM_FIELD_ALLOWED_CPUSET};
    hwloc_bitmap_only(one,
                      (unsigned)hwloc_bitmap_first(hwloc_topology_get_allowed_cpuset(topo->hw)));
    p.allowed_cpuset = node->local_rank == 0 && topo->npus > 1
                           ? one
                           : hwloc_topology_get_allowed_cpuset(topo->hw);
    p.field_mask |= INGOT_PLAN_PARAM_FIELD_MODE | INGOT_PLAN_PARAM_FIELD_SHARING;
    p.mode = INGOT_TOPO_MODE_CPU;
    p.sharing = INGOT_TOPO_SHARING_SHARE;
    CHECK_OK(ingot_topo_plan(topo, node->local_size, &p, &plan));
    ingot_status_t st = ingot_topo_node_plan_agree(node, plan);
    CHECK(topo->npus == 1 || node->local_size == 1 || st == INGOT_ERR_MISMATCH);
    if (st == INGOT_ERR_MISMATCH) {
        char *log = test_read_file(log_path, NULL);
        CHECK_CONTAINS(log, "computed different placement plans");
        CHECK_CONTAINS(log, "expected equal on every rank");
        free(log);
    }
    ingot_topo_plan_destroy(plan);
    hwloc_bitmap_free(one);
}

static void check_binding(const ingot_topo_t *topo, const ingot_plan_t *plan, int local_rank)
{
    ingot_status_t st = ingot_topo_bind(topo, plan, local_rank, INGOT_TOPO_BIND_CPU);
    if (topo->from_xml) {
        CHECK_STATUS(st, INGOT_ERR_UNSUPPORTED);
        return;
    }
    CHECK_OK(st);
    hwloc_bitmap_t cur = hwloc_bitmap_alloc();
    CHECK(hwloc_get_cpubind(topo->hw, cur, HWLOC_CPUBIND_PROCESS) == 0);
    CHECK(hwloc_bitmap_isequal(cur, plan->ranks[local_rank].cpuset));
    CHECK_OK(ingot_topo_bind_thread(topo, plan, local_rank, true));
    hwloc_bitmap_free(cur);
}

int main(int argc, char **argv)
{
    const ingot_topo_config_t *cfg;
    ingot_node_info_t node;
    ingot_topo_t *topo;
    ingot_plan_t *plan;
    ingot_placement_t mine;
    ingot_plan_params_t p;
    uint64_t mask;
    bool conflict;

    MPI_Init(&argc, &argv);
    snprintf(log_path, sizeof(log_path), "%s/log", test_tmpdir());
    setenv("INGOT_LOG_FILE", log_path, 1); /* expected errors are checked, not printed */
    CHECK_OK(ingot_topo_config(&cfg));
    CHECK_OK(ingot_topo_node_group(MPI_COMM_WORLD, &node));
    check_grouping(&node);
    CHECK_OK(ingot_topo_load(cfg->topology_xml, &topo));
    CHECK_OK(ingot_topo_gpu_mask(topo, cfg->gpus, getenv("CUDA_VISIBLE_DEVICES"), &mask));
    CHECK_OK(ingot_topo_node_gpu_union(&node, mask, &mask));
    ingot_topo_plan_params_from_config(cfg, mask, &p);
    CHECK_OK(ingot_topo_plan(topo, node.local_size, &p, &plan));
    CHECK_OK(ingot_topo_node_plan_agree(&node, plan));
    ingot_topo_placement_fill(topo, plan, &node, node.local_rank, getenv("CUDA_VISIBLE_DEVICES"),
                              &mine);
    CHECK_OK(ingot_topo_launcher_check(topo, plan, node.local_rank, NULL, mine.conflict,
                                       sizeof(mine.conflict), &conflict));
    check_node_plan(topo, plan, &node, &mine);
    check_disagreement(topo, &node);
    check_binding(topo, plan, node.local_rank);
    if (node.local_rank == 0) {
        printf("node %d/%d %s: %d ranks, %s plan, rank 0 cpuset %s\n", node.node_id,
               node.node_count, node.hostname, node.local_size, plan->gpu_plan ? "GPU" : "CPU-only",
               mine.cpuset);
    }
    ingot_topo_plan_destroy(plan);
    ingot_topo_destroy(topo);
    ingot_topo_node_release(&node);
    MPI_Finalize();
    return 0;
}

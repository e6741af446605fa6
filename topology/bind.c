/*
 * Binding (only when INGOT_BIND asks for it) and the check of the launcher's choices against the
 * plan. ingot never changes CUDA_VISIBLE_DEVICES or the launcher's binding behind the user's
 * back: conflicts are reported, and binding replaces the launcher's only when asked.
 */
#include "topology/topo.h"
#include "topology/topo_util.h"
#include "base/log.h"
#include "base/status.h"
#include <errno.h>
#include <string.h>

static bool bind_is_this_system(const ingot_topo_t *topo)
{
    return !topo->from_xml && hwloc_topology_is_thissystem(topo->hw);
}

static size_t bind_gpu_check(const ingot_topo_t *topo, const ingot_plan_rank_t *rk,
                             const char *cuda_visible, char *msg, size_t len)
{
    if (rk->gpu < 0 || cuda_visible == NULL ||
        ingot_topo_gpu_list_position(topo, cuda_visible, rk->gpu) >= 0) {
        return 0;
    }
    return (size_t)snprintf(msg, len, "CUDA_VISIBLE_DEVICES='%s' hides the planned GPU %d (%s); ",
                            cuda_visible, rk->gpu, topo->gpus[rk->gpu].busid);
}

ingot_status_t ingot_topo_launcher_check(const ingot_topo_t *topo, const ingot_plan_t *plan,
                                         int local_rank, const char *cuda_visible, char *msg,
                                         size_t msglen, bool *conflict_p)
{
    const ingot_plan_rank_t *rk = &plan->ranks[local_rank];
    size_t off = bind_gpu_check(topo, rk, cuda_visible, msg, msglen);
    if (off >= msglen) {
        off = msglen - 1;
    }
    msg[off] = '\0';
    if (bind_is_this_system(topo)) {
        hwloc_bitmap_t cur = hwloc_bitmap_alloc();
        if (cur == NULL) {
            ingot_error("out of memory checking the launcher's binding");
            return INGOT_ERR_NO_MEMORY;
        }
        if (hwloc_get_cpubind(topo->hw, cur, HWLOC_CPUBIND_PROCESS) == 0 &&
            !hwloc_bitmap_isincluded(rk->cpuset, cur)) {
            char have[INGOT_TOPOLOGY_STR_MAX], want[INGOT_TOPOLOGY_STR_MAX];
            ingot_topo_cpuset_format(cur, have, sizeof(have));
            ingot_topo_cpuset_format(rk->cpuset, want, sizeof(want));
            snprintf(msg + off, msglen - off,
                     "the launcher bound this process to CPUs %s, the "
                     "plan gives it %s; ",
                     have, want);
        }
        hwloc_bitmap_free(cur);
    }
    size_t n = strlen(msg);
    if (n >= 2) {
        msg[n - 2] = '\0'; /* drop the last "; " */
    }
    *conflict_p = msg[0] != '\0';
    return INGOT_OK;
}

static ingot_status_t bind_refuse_xml(const ingot_topo_t *topo, const char *what)
{
    ingot_error("INGOT_BIND: cannot bind %s: the topology comes from %s, not from this machine "
                "(expected live discovery; unset INGOT_TOPOLOGY_XML or set INGOT_BIND=none)",
                what, topo->source);
    return INGOT_ERR_UNSUPPORTED;
}

static ingot_status_t bind_cpus(const ingot_topo_t *topo, hwloc_const_cpuset_t set, int flags,
                                const char *what)
{
    if (hwloc_set_cpubind(topo->hw, set, flags) != 0) {
        int err = errno;
        char s[INGOT_TOPOLOGY_STR_MAX];
        ingot_topo_cpuset_format(set, s, sizeof(s));
        ingot_error("INGOT_BIND: binding %s to CPUs %s failed: %s", what, s, strerror(err));
        return ingot_status_from_errno(err);
    }
    return INGOT_OK;
}

static ingot_status_t bind_memory(const ingot_topo_t *topo, int numa)
{
    hwloc_bitmap_t nodes = hwloc_bitmap_alloc();
    if (nodes == NULL) {
        ingot_error("out of memory binding memory");
        return INGOT_ERR_NO_MEMORY;
    }
    hwloc_bitmap_only(nodes, (unsigned)topo->numa[numa].os_index);
    int rc = hwloc_set_membind(topo->hw, nodes, HWLOC_MEMBIND_BIND,
                               HWLOC_MEMBIND_PROCESS | HWLOC_MEMBIND_BYNODESET);
    int err = errno;
    hwloc_bitmap_free(nodes);
    if (rc != 0) {
        ingot_error("INGOT_BIND=cpu+mem: binding memory to NUMA node %d failed: %s",
                    topo->numa[numa].os_index, strerror(err));
        return ingot_status_from_errno(err);
    }
    return INGOT_OK;
}

ingot_status_t ingot_topo_bind(const ingot_topo_t *topo, const ingot_plan_t *plan, int local_rank,
                               ingot_topo_bind_mode_t mode)
{
    const ingot_plan_rank_t *rk = &plan->ranks[local_rank];
    if (mode == INGOT_TOPO_BIND_NONE) {
        return INGOT_OK;
    }
    if (!bind_is_this_system(topo)) {
        return bind_refuse_xml(topo, "this process");
    }
    INGOT_CHECK(bind_cpus(topo, rk->cpuset, HWLOC_CPUBIND_PROCESS, "this process"));
    if (mode == INGOT_TOPO_BIND_CPUMEM && rk->numa >= 0) {
        INGOT_CHECK(bind_memory(topo, rk->numa));
    }
    return INGOT_OK;
}

ingot_status_t ingot_topo_bind_thread(const ingot_topo_t *topo, const ingot_plan_t *plan,
                                      int local_rank, bool ingest)
{
    const ingot_plan_rank_t *rk = &plan->ranks[local_rank];
    if (!bind_is_this_system(topo)) {
        return bind_refuse_xml(topo, "a thread");
    }
    return bind_cpus(topo, ingest ? rk->ingest_cpuset : rk->trainer_cpuset, HWLOC_CPUBIND_THREAD,
                     ingest ? "an ingest thread" : "the trainer thread");
}

int ingot_topo_plan_numa_os_index(const ingot_topo_t *topo, const ingot_plan_t *plan,
                                  int local_rank)
{
    int numa = plan->ranks[local_rank].numa;
    return numa >= 0 ? topo->numa[numa].os_index : -1;
}

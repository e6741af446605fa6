/*
 * The topology and the plan in the shapes users see: the public structures of
 * <ingot/topology.h>, the ingot-topo table, and its JSON. The strings users feed to other
 * libraries (CUDA_VISIBLE_DEVICES, UCX_NET_DEVICES, NCCL_IB_HCA) are made here, never set.
 */
#include "topology/topo.h"
#include "topology/topo_util.h"
#include <string.h>

#define STR(_dst, ...) snprintf((_dst), sizeof(_dst), __VA_ARGS__)

static const ingot_topo_dev_t *report_devs(const ingot_topo_t *topo,
                                           ingot_topology_device_kind_t kind, int *count_p)
{
    switch (kind) {
    case INGOT_TOPOLOGY_DEVICE_GPU: *count_p = topo->ngpus; return topo->gpus;
    case INGOT_TOPOLOGY_DEVICE_NIC: *count_p = topo->nnics; return topo->nics;
    case INGOT_TOPOLOGY_DEVICE_STORAGE: *count_p = topo->nstorage; return topo->storage;
    }
    *count_p = 0;
    return NULL;
}

static int report_numa_os(const ingot_topo_t *topo, int numa)
{
    return numa >= 0 ? topo->numa[numa].os_index : -1;
}

void ingot_topo_summary_fill(const ingot_topo_t *topo, ingot_topology_summary_t *s)
{
    memset(s, 0, sizeof(*s));
    STR(s->hostname, "%s", topo->hostname);
    STR(s->source, "%s", topo->source);
    s->packages = topo->npackages;
    s->numa_nodes = topo->nnuma_memory;
    s->cores = topo->ncores;
    s->pus = topo->npus;
    s->gpus = topo->ngpus;
    s->nics = topo->nnics;
    s->nics_openfabrics = topo->nnics > 0 && topo->nic_kind == INGOT_TOPO_NIC_OPENFABRICS;
    s->storage = topo->nstorage;
    ingot_topo_cpuset_format(hwloc_topology_get_allowed_cpuset(topo->hw), s->allowed_cpuset,
                             sizeof(s->allowed_cpuset));
}

ingot_status_t ingot_topo_device_fill(const ingot_topo_t *topo, ingot_topology_device_kind_t kind,
                                      int index, ingot_topology_device_t *d)
{
    int count;
    const ingot_topo_dev_t *devs = report_devs(topo, kind, &count);
    if ((unsigned)kind > INGOT_TOPOLOGY_DEVICE_STORAGE) {
        return INGOT_ERR_INVALID_PARAM;
    }
    if (index < 0 || index >= count) {
        return INGOT_ERR_OUT_OF_RANGE;
    }
    const ingot_topo_dev_t *dev = &devs[index];
    memset(d, 0, sizeof(*d));
    d->kind = kind;
    d->index = index;
    d->numa_node = report_numa_os(topo, dev->numa);
    d->package = dev->package;
    d->port = dev->port;
    STR(d->name, "%s", dev->name);
    STR(d->pci_busid, "%s", dev->busid);
    ingot_topo_cpuset_format(dev->locality, d->locality, sizeof(d->locality));
    return INGOT_OK;
}

static void report_nic_strings(const ingot_topo_t *topo, const ingot_plan_rank_t *rk,
                               ingot_placement_t *p)
{
    if (rk->nic < 0) {
        return;
    }
    const ingot_topo_dev_t *nic = &topo->nics[rk->nic];
    STR(p->nic_name, "%s", nic->name);
    p->nic_port = nic->port;
    if (topo->nic_kind == INGOT_TOPO_NIC_OPENFABRICS) {
        STR(p->ucx_net_devices, "%s:%d", nic->name, nic->port);
        STR(p->nccl_ib_hca, "=%s:%d", nic->name, nic->port);
    } else {
        STR(p->ucx_net_devices, "%s", nic->name);
    }
}

void ingot_topo_placement_fill(const ingot_topo_t *topo, const ingot_plan_t *plan,
                               const ingot_node_info_t *node, int local_rank,
                               const char *cuda_visible, ingot_placement_t *p)
{
    const ingot_plan_rank_t *rk = &plan->ranks[local_rank];
    memset(p, 0, sizeof(*p));
    p->node_id = node != NULL ? node->node_id : 0;
    p->node_count = node != NULL ? node->node_count : 1;
    p->node_leader = node != NULL ? node->leader : 0;
    p->local_rank = local_rank;
    p->local_size = plan->local_size;
    STR(p->hostname, "%s", node != NULL ? node->hostname : topo->hostname);

    p->gpu_index = rk->gpu;
    p->cuda_device = rk->gpu >= 0 ? ingot_topo_gpu_list_position(topo, cuda_visible, rk->gpu) : -1;
    p->gpu_ranks = rk->gpu >= 0 ? rk->gpu_ranks : 0;
    if (rk->gpu >= 0) {
        STR(p->gpu_pci_busid, "%s", topo->gpus[rk->gpu].busid);
        STR(p->cuda_visible_devices, "%d", rk->gpu);
    }
    p->nic_distance = rk->nic_distance;
    report_nic_strings(topo, rk, p);
    p->numa_node = report_numa_os(topo, rk->numa);
    ingot_topo_cpuset_format(rk->cpuset, p->cpuset, sizeof(p->cpuset));
    ingot_topo_cpuset_format(rk->ingest_cpuset, p->ingest_cpuset, sizeof(p->ingest_cpuset));
    ingot_topo_cpuset_format(rk->trainer_cpuset, p->trainer_cpuset, sizeof(p->trainer_cpuset));
    p->flags = rk->flags;
}

/* ---------------------------------------------------------------- table */

static const char *report_plural(int n)
{
    return n == 1 ? "" : "s";
}

static void report_table_devices(FILE *out, const ingot_topo_t *topo,
                                 ingot_topology_device_kind_t kind, const char *title)
{
    int count;
    const ingot_topo_dev_t *devs = report_devs(topo, kind, &count);
    for (int i = 0; i < count; i++) {
        char loc[INGOT_TOPOLOGY_STR_MAX];
        ingot_topo_cpuset_format(devs[i].locality, loc, sizeof(loc));
        fprintf(out, "  %-8s %3d  %-12s  %-24.24s numa %-3d cpus %s\n", i == 0 ? title : "", i,
                devs[i].busid[0] != '\0' ? devs[i].busid : "-", devs[i].name,
                report_numa_os(topo, devs[i].numa), loc);
    }
}

static void report_flags(uint64_t flags, char *buf, size_t len)
{
    snprintf(buf, len, "%s%s%s%s%s", (flags & INGOT_PLACEMENT_FLAG_GPU_SHARED) ? "gpu-shared " : "",
             (flags & INGOT_PLACEMENT_FLAG_CPUS_SHARED) ? "cpus-shared " : "",
             (flags & INGOT_PLACEMENT_FLAG_INGEST_SHARED) ? "ingest-shared " : "",
             (flags & INGOT_PLACEMENT_FLAG_LAUNCHER_CONFLICT) ? "launcher-conflict " : "",
             (flags & INGOT_PLACEMENT_FLAG_BOUND) ? "bound " : "");
}

void ingot_topo_print_table(FILE *out, const ingot_topo_t *topo, const ingot_plan_t *plan,
                            const ingot_placement_t *pl)
{
    ingot_topology_summary_t s;
    ingot_topo_summary_fill(topo, &s);
    fprintf(out,
            "node %s (%s): %d package%s, %d NUMA node%s, %d cores, %d PUs (allowed %s), "
            "%d GPU%s, %d NIC%s (%s), %d storage device%s\n",
            s.hostname, s.source, s.packages, report_plural(s.packages), s.numa_nodes,
            report_plural(s.numa_nodes), s.cores, s.pus, s.allowed_cpuset, s.gpus,
            report_plural(s.gpus), s.nics, report_plural(s.nics),
            s.nics == 0          ? "none"
            : s.nics_openfabrics ? "OpenFabrics"
                                 : "network",
            s.storage, report_plural(s.storage));
    report_table_devices(out, topo, INGOT_TOPOLOGY_DEVICE_GPU, "GPUs");
    report_table_devices(out, topo, INGOT_TOPOLOGY_DEVICE_NIC, "NICs");
    report_table_devices(out, topo, INGOT_TOPOLOGY_DEVICE_STORAGE, "storage");
    fprintf(out, "plan: %s, %d local rank%s%s\n", plan->gpu_plan ? "GPU" : "CPU-only",
            plan->local_size, report_plural(plan->local_size),
            topo->nnics == 0 ? ", no NIC on this node" : "");
    fprintf(out, "%-5s %-4s %-12s %-10s %-10s %-4s %-20s %-14s %s\n", "rank", "gpu", "pci_busid",
            "nic", "distance", "numa", "cpuset", "ingest", "flags");
    for (int r = 0; r < plan->local_size; r++) {
        char gpu[16], flags[INGOT_TOPOLOGY_STR_MAX];
        snprintf(gpu, sizeof(gpu), pl[r].gpu_index >= 0 ? "%d" : "-", pl[r].gpu_index);
        report_flags(pl[r].flags, flags, sizeof(flags));
        fprintf(out, "%-5d %-4s %-12s %-10s %-10s %-4d %-20s %-14s %s\n", r, gpu,
                pl[r].gpu_pci_busid[0] ? pl[r].gpu_pci_busid : "-",
                pl[r].nic_name[0] ? pl[r].nic_name : "-",
                pl[r].nic_name[0] ? ingot_topology_distance_name(pl[r].nic_distance) : "-",
                pl[r].numa_node, pl[r].cpuset, pl[r].ingest_cpuset, flags);
        if (pl[r].conflict[0] != '\0') {
            fprintf(out, "      conflict: %s\n", pl[r].conflict);
        }
    }
}

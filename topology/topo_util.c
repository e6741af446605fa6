/* Helpers of the topology module: naming, sorting, and the distance classes of device pairs. */
#include "topology/topo_util.h"
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

/* Deepest PCI tree a walk follows; real machines have fewer than 10 levels. */
#define PCI_TREE_DEPTH_MAX 64

void ingot_topo_busid_format(hwloc_obj_t pci, char *buf, size_t len)
{
    snprintf(buf, len, "%04x:%02x:%02x.%01x", (unsigned)pci->attr->pcidev.domain,
             (unsigned)pci->attr->pcidev.bus, (unsigned)pci->attr->pcidev.dev,
             (unsigned)pci->attr->pcidev.func);
}

void ingot_topo_name_prefix(const char *name, char *prefix, size_t len)
{
    size_t n = 0;
    while (name[n] != '\0' && isalpha((unsigned char)name[n]) && n + 1 < len) {
        prefix[n] = name[n];
        n++;
    }
    prefix[n] = '\0';
}

int ingot_topo_count_osdev_prefix(hwloc_topology_t hw, const char *prefix)
{
    size_t plen = strlen(prefix);
    int n = 0;
    hwloc_obj_t os = NULL;
    while ((os = hwloc_get_next_osdev(hw, os)) != NULL) {
        n += os->name != NULL && strncmp(os->name, prefix, plen) == 0 &&
             isdigit((unsigned char)os->name[plen]);
    }
    return n;
}

static int topo_dev_cmp(const void *pa, const void *pb)
{
    const ingot_topo_dev_t *a = pa, *b = pb;
    if ((a->busid[0] == '\0') != (b->busid[0] == '\0')) {
        return a->busid[0] == '\0' ? 1 : -1;
    }
    int c = strcmp(a->busid, b->busid);
    if (c != 0) {
        return c;
    }
    return a->index - b->index; /* stable: discovery order */
}

void ingot_topo_devs_sort(ingot_topo_dev_t *devs, int count)
{
    if (count <= 0) {
        return; /* devs may be NULL */
    }
    for (int i = 0; i < count; i++) {
        devs[i].index = i;
    }
    qsort(devs, (size_t)count, sizeof(*devs), topo_dev_cmp);
    for (int i = 0; i < count; i++) {
        devs[i].index = i;
    }
}

void ingot_topo_cpuset_format(hwloc_const_bitmap_t set, char *buf, size_t len)
{
    if (set == NULL) {
        buf[0] = '\0';
        return;
    }
    hwloc_bitmap_list_snprintf(buf, len, set);
}

/* ---------------------------------------------------------------- distances */

static hwloc_obj_t topo_io_common_ancestor(hwloc_obj_t a, hwloc_obj_t b)
{
    hwloc_obj_t chain[PCI_TREE_DEPTH_MAX];
    int n = 0;
    for (hwloc_obj_t o = a; o != NULL && n < PCI_TREE_DEPTH_MAX; o = o->parent) {
        chain[n++] = o;
    }
    for (hwloc_obj_t o = b; o != NULL; o = o->parent) {
        for (int i = 0; i < n; i++) {
            if (chain[i] == o) {
                return o;
            }
        }
    }
    return NULL;
}

static ingot_topology_distance_t topo_locality_distance(int numa_a, int pkg_a, int numa_b,
                                                        int pkg_b)
{
    if (numa_a >= 0 && numa_a == numa_b) {
        return INGOT_TOPOLOGY_DISTANCE_NUMA;
    }
    if (pkg_a >= 0 && pkg_a == pkg_b) {
        return INGOT_TOPOLOGY_DISTANCE_PACKAGE;
    }
    if (pkg_a >= 0 && pkg_b >= 0) {
        return INGOT_TOPOLOGY_DISTANCE_SYSTEM;
    }
    if (numa_a >= 0 && numa_b >= 0) {
        return INGOT_TOPOLOGY_DISTANCE_SYSTEM; /* distinct NUMA nodes, no package info */
    }
    return INGOT_TOPOLOGY_DISTANCE_UNKNOWN;
}

ingot_topology_distance_t ingot_topo_dev_distance(const ingot_topo_t *topo,
                                                  const ingot_topo_dev_t *a,
                                                  const ingot_topo_dev_t *b)
{
    (void)topo;
    if (a->pci != NULL && b->pci != NULL) {
        hwloc_obj_t anc = topo_io_common_ancestor(a->pci, b->pci);
        if (anc != NULL && anc->type == HWLOC_OBJ_BRIDGE) {
            return anc->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI
                       ? INGOT_TOPOLOGY_DISTANCE_SWITCH
                       : INGOT_TOPOLOGY_DISTANCE_HOSTBRIDGE;
        }
        if (anc != NULL && anc->type == HWLOC_OBJ_PCI_DEVICE) {
            return INGOT_TOPOLOGY_DISTANCE_SWITCH;
        }
    }
    return topo_locality_distance(a->numa, a->package, b->numa, b->package);
}

ingot_topology_distance_t ingot_topo_numa_distance(const ingot_topo_t *topo, int numa,
                                                   const ingot_topo_dev_t *dev)
{
    int pkg = numa >= 0 ? topo->numa[numa].package : -1;
    return topo_locality_distance(numa, pkg, dev->numa, dev->package);
}

const char *ingot_topology_distance_name(ingot_topology_distance_t distance)
{
    static const char *const names[] = {"switch",  "hostbridge", "numa",
                                        "package", "system",     "unknown"};
    if ((unsigned)distance >= sizeof(names) / sizeof(names[0])) {
        return "unknown";
    }
    return names[distance];
}

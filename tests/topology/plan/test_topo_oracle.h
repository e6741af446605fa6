/*
 * An oracle for the topology tests: facts about a node recomputed straight from hwloc, with no
 * code of the planner, to check its plans against (locality cpusets, sockets, GPU-NIC classes).
 */
#ifndef INGOT_TEST_TOPO_ORACLE_H
#define INGOT_TEST_TOPO_ORACLE_H

#include <hwloc.h>
#include "common/test.h"

#define ORACLE_FIXTURES INGOT_TEST_SRCDIR "/tests/fixtures/topology"

/* Distance classes, nearest first, as the issue orders them. */
enum { ORACLE_SWITCH, ORACLE_HOSTBRIDGE, ORACLE_NUMA, ORACLE_PACKAGE, ORACLE_SYSTEM };

static inline hwloc_topology_t oracle_load(const char *xml)
{
    hwloc_topology_t hw;
    CHECK(hwloc_topology_init(&hw) == 0);
    CHECK(hwloc_topology_set_io_types_filter(hw, HWLOC_TYPE_FILTER_KEEP_ALL) == 0);
    if (xml != NULL) {
        CHECK(hwloc_topology_set_xml(hw, xml) == 0);
    }
    CHECK(hwloc_topology_load(hw) == 0);
    return hw;
}

static inline hwloc_obj_t oracle_pci(hwloc_topology_t hw, const char *busid)
{
    return busid[0] != '\0' ? hwloc_get_pcidev_by_busidstring(hw, busid) : NULL;
}

/* The PCI device of the OS device named @p name (bus ids may repeat in odd exports). */
static inline hwloc_obj_t oracle_osdev_pci(hwloc_topology_t hw, const char *name)
{
    for (hwloc_obj_t os = NULL; (os = hwloc_get_next_osdev(hw, os)) != NULL;) {
        if (os->name != NULL && strcmp(os->name, name) == 0) {
            hwloc_obj_t p = os->parent;
            while (p != NULL && p->type == HWLOC_OBJ_OS_DEVICE) {
                p = p->parent;
            }
            return p != NULL && p->type == HWLOC_OBJ_PCI_DEVICE ? p : NULL;
        }
    }
    return NULL;
}

/* The CPUs hwloc says are near a PCI device (its first ancestor with a cpuset). */
static inline hwloc_obj_t oracle_cpu_parent(hwloc_obj_t obj)
{
    while (obj->cpuset == NULL) {
        obj = obj->parent;
    }
    return obj;
}

static inline hwloc_obj_t oracle_package(hwloc_obj_t obj)
{
    for (; obj != NULL; obj = obj->parent) {
        if (obj->type == HWLOC_OBJ_PACKAGE) {
            return obj;
        }
    }
    return NULL;
}

static inline int oracle_class(hwloc_obj_t a, hwloc_obj_t b)
{
    for (hwloc_obj_t x = a; x != NULL; x = x->parent) {
        for (hwloc_obj_t y = b; y != NULL; y = y->parent) {
            if (x == y && x->type == HWLOC_OBJ_BRIDGE) {
                return x->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_HOST ? ORACLE_HOSTBRIDGE
                                                                              : ORACLE_SWITCH;
            }
            if (x == y) {
                goto cpu_side;
            }
        }
    }
cpu_side:;
    hwloc_obj_t ca = oracle_cpu_parent(a), cb = oracle_cpu_parent(b);
    if (ca->nodeset != NULL && hwloc_bitmap_weight(ca->nodeset) == 1 &&
        hwloc_bitmap_isequal(ca->nodeset, cb->nodeset)) {
        return ORACLE_NUMA;
    }
    hwloc_obj_t pa = oracle_package(ca), pb = oracle_package(cb);
    return (pa != NULL && pa == pb) ? ORACLE_PACKAGE : ORACLE_SYSTEM;
}

#endif

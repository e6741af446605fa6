/* Small helpers shared by the topology module's files (not part of its API). */
#ifndef INGOT_TOPOLOGY_TOPO_UTIL_H
#define INGOT_TOPOLOGY_TOPO_UTIL_H

#include "topology/topo.h"

/** "dddd:bb:dd.f" of a PCI device. */
void ingot_topo_busid_format(hwloc_obj_t pci, char *buf, size_t len);
/** Leading letters of an OS device name ("cuda" of "cuda3", "opencl" of "opencl0d1"). */
void ingot_topo_name_prefix(const char *name, char *prefix, size_t len);
/** OS devices whose name begins with @p prefix followed by a digit. */
int ingot_topo_count_osdev_prefix(hwloc_topology_t hw, const char *prefix);
/** Sort devices by PCI bus id (devices without one last, in discovery order), then renumber. */
void ingot_topo_devs_sort(ingot_topo_dev_t *devs, int count);
/** hwloc_bitmap_list_snprintf into a buffer ("" for NULL). */
void ingot_topo_cpuset_format(hwloc_const_bitmap_t set, char *buf, size_t len);

#endif

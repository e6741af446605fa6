/*
 * LeakSanitizer and hwloc's live discovery: once hwloc unloads its PCI plugin (when its last
 * topology is destroyed), about 1 KiB that libpciaccess allocated per hwloc_topology_load() is
 * reported as leaked (a 5-line program that only loads and destroys a topology shows it too).
 * Holding one topology for the whole process keeps the plugin loaded, and that memory reachable.
 */
#ifndef INGOT_TEST_TOPO_LSAN_H
#define INGOT_TEST_TOPO_LSAN_H

#include <hwloc.h>

static hwloc_topology_t test_topo_plugins_held_;

__attribute__((constructor)) static void test_topo_hold_plugins_(void)
{
    hwloc_topology_init(&test_topo_plugins_held_);
}

#endif

/*
 * Topology discovery: hwloc (live, I/O devices included, or an XML export) -> the node's NUMA
 * nodes, GPUs, NICs and storage, each with its PCI device and CPU locality. One GPU per PCI
 * device however many OS devices name it (cuda0, nvml0, opencl0d0); GPUs are numbered in PCI
 * bus order, as nvidia-smi and CUDA_DEVICE_ORDER=PCI_BUS_ID number them.
 */
#include "topology/topo.h"
#include "topology/topo_util.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define PCI_VENDOR_NVIDIA     0x10de
#define PCI_CLASS_DISPLAY_VGA 0x0300
#define PCI_CLASS_DISPLAY_3D  0x0302
#define IB_PORT_MAX           16
#define IB_PORT_STATE_ACTIVE  "4"
#define XML_SNIFF_BYTES       4096

/* ---------------------------------------------------------------- loading */

static ingot_status_t topo_xml_check(const char *path)
{
    char head[XML_SNIFF_BYTES + 1];
    FILE *f = fopen(path, "rb");
    if (f == NULL) {
        int err = errno;
        ingot_error("INGOT_TOPOLOGY_XML='%s': cannot open: %s (expected a readable hwloc XML "
                    "export, e.g. from 'lstopo --of xml')",
                    path, strerror(err));
        return ingot_status_from_errno(err);
    }
    size_t n = fread(head, 1, XML_SNIFF_BYTES, f);
    int rerr = ferror(f) ? errno : 0;
    fclose(f);
    if (rerr != 0) {
        ingot_error("INGOT_TOPOLOGY_XML='%s': cannot read: %s (expected a readable hwloc XML "
                    "export, e.g. from 'lstopo --of xml')",
                    path, strerror(rerr));
        return INGOT_ERR_IO;
    }
    head[n] = '\0';
    if (strstr(head, "<topology") == NULL) {
        ingot_error("INGOT_TOPOLOGY_XML='%s': not an hwloc XML export (expected a <topology> "
                    "element in the first %d bytes, found %s)",
                    path, XML_SNIFF_BYTES, n == 0 ? "an empty file" : "none");
        return INGOT_ERR_FORMAT;
    }
    return INGOT_OK;
}

static void topo_xml_invalid(const char *path, const char *call, int err)
{
    ingot_error("INGOT_TOPOLOGY_XML='%s': invalid hwloc XML (expected an export of hwloc 1.x-2.x "
                "such as 'lstopo --of xml' writes; %s found what hwloc cannot parse: %s; set "
                "HWLOC_XML_VERBOSE=1 for hwloc's own diagnostics)",
                path, call, strerror(err));
}

static ingot_status_t topo_hwloc_load(const char *xml_path, hwloc_topology_t *hw_p)
{
    hwloc_topology_t hw;
    if (hwloc_topology_init(&hw) != 0) {
        ingot_error("hwloc_topology_init failed: %s", strerror(errno));
        return INGOT_ERR_NO_MEMORY;
    }
    hwloc_topology_set_io_types_filter(hw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (xml_path != NULL && hwloc_topology_set_xml(hw, xml_path) != 0) {
        topo_xml_invalid(xml_path, "hwloc_topology_set_xml", errno);
        goto err_destroy;
    }
    if (hwloc_topology_load(hw) != 0) {
        if (xml_path != NULL) {
            topo_xml_invalid(xml_path, "hwloc_topology_load", errno);
        } else {
            ingot_error("hwloc topology discovery failed: %s", strerror(errno));
        }
        goto err_destroy;
    }
    *hw_p = hw;
    return INGOT_OK;

err_destroy:
    hwloc_topology_destroy(hw);
    return xml_path != NULL ? INGOT_ERR_FORMAT : INGOT_ERR_INTERNAL;
}

/* ---------------------------------------------------------------- locality */

static int topo_package_of(hwloc_topology_t hw, hwloc_obj_t obj)
{
    if (obj->type == HWLOC_OBJ_PACKAGE) {
        return (int)obj->logical_index;
    }
    hwloc_obj_t pkg = hwloc_get_ancestor_obj_by_type(hw, HWLOC_OBJ_PACKAGE, obj);
    return pkg != NULL ? (int)pkg->logical_index : -1;
}

/* Where a device sits: the cpuset of its nearest non-I/O ancestor, that ancestor's NUMA node
 * (none when it is the whole machine of a multi-NUMA node: no locality) and package. */
static ingot_status_t topo_dev_locate(ingot_topo_t *topo, ingot_topo_dev_t *dev, hwloc_obj_t anchor)
{
    hwloc_obj_t nonio = hwloc_get_non_io_ancestor_obj(topo->hw, anchor);
    hwloc_obj_t root = hwloc_get_root_obj(topo->hw);

    dev->locality = hwloc_bitmap_dup(nonio != NULL ? nonio->cpuset : root->cpuset);
    if (dev->locality == NULL) {
        ingot_error("out of memory locating device %s", dev->name);
        return INGOT_ERR_NO_MEMORY;
    }
    hwloc_bitmap_and(dev->locality, dev->locality, hwloc_topology_get_allowed_cpuset(topo->hw));
    dev->numa = -1;
    dev->package = (nonio != NULL) ? topo_package_of(topo->hw, nonio) : -1;
    if (topo->nnuma == 1) {
        dev->numa = 0;
        return INGOT_OK;
    }
    if (nonio == NULL || nonio == root || nonio->nodeset == NULL) {
        return INGOT_OK;
    }
    for (int i = 0; i < topo->nnuma; i++) {
        if (hwloc_bitmap_isset(nonio->nodeset, (unsigned)topo->numa[i].os_index)) {
            dev->numa = i;
            break;
        }
    }
    return INGOT_OK;
}

static hwloc_obj_t topo_pci_ancestor(hwloc_obj_t obj)
{
    for (hwloc_obj_t o = obj; o != NULL; o = o->parent) {
        if (o->type == HWLOC_OBJ_PCI_DEVICE) {
            return o;
        }
        if (o->type != HWLOC_OBJ_OS_DEVICE && o->type != HWLOC_OBJ_BRIDGE) {
            break;
        }
    }
    return NULL;
}

/* ---------------------------------------------------------------- CPUs and NUMA */

static ingot_status_t topo_scan_cpus(ingot_topo_t *topo)
{
    hwloc_topology_t hw = topo->hw;
    hwloc_const_cpuset_t allowed = hwloc_topology_get_allowed_cpuset(hw);
    int nall = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_NUMANODE);

    topo->npackages = hwloc_get_nbobjs_by_type(hw, HWLOC_OBJ_PACKAGE);
    topo->npus = hwloc_bitmap_weight(allowed);
    topo->ncores = 0;
    for (hwloc_obj_t c = NULL; (c = hwloc_get_next_obj_by_type(hw, HWLOC_OBJ_CORE, c)) != NULL;) {
        topo->ncores += hwloc_bitmap_intersects(c->cpuset, allowed);
    }
    if (topo->ncores == 0) {
        topo->ncores = topo->npus; /* no core information: every PU is a core */
    }
    topo->numa = ingot_calloc(nall > 0 ? (size_t)nall : 1, sizeof(*topo->numa), "NUMA nodes");
    if (topo->numa == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (hwloc_obj_t n = NULL;
         (n = hwloc_get_next_obj_by_type(hw, HWLOC_OBJ_NUMANODE, n)) != NULL;) {
        topo->nnuma_memory += (n->attr != NULL && n->attr->numanode.local_memory > 0);
        if (n->cpuset == NULL || !hwloc_bitmap_intersects(n->cpuset, allowed)) {
            continue; /* CPU-less (HBM, GPU or CXL memory): nothing to plan on */
        }
        ingot_topo_numa_t *numa = &topo->numa[topo->nnuma++];
        numa->os_index = (int)n->os_index;
        numa->package = topo_package_of(hw, n);
        numa->memory = n->attr != NULL ? n->attr->numanode.local_memory : 0;
        numa->cpuset = n->cpuset;
    }
    return INGOT_OK;
}

/* ---------------------------------------------------------------- devices */

static ingot_status_t topo_dev_add(ingot_topo_t *topo, ingot_topo_dev_t **list, int *count,
                                   ingot_topology_device_kind_t kind, hwloc_obj_t pci,
                                   hwloc_obj_t osdev, const char *name)
{
    ingot_topo_dev_t *grown = realloc(*list, (size_t)(*count + 1) * sizeof(**list));
    if (grown == NULL) {
        ingot_error("out of memory adding device %s", name);
        return INGOT_ERR_NO_MEMORY;
    }
    *list = grown;
    ingot_topo_dev_t *dev = &grown[*count];
    memset(dev, 0, sizeof(*dev));
    dev->kind = kind;
    dev->pci = pci;
    dev->osdev = osdev;
    snprintf(dev->name, sizeof(dev->name), "%s", name);
    if (pci != NULL) {
        ingot_topo_busid_format(pci, dev->busid, sizeof(dev->busid));
    }
    INGOT_CHECK(topo_dev_locate(topo, dev, pci != NULL ? pci : osdev));
    (*count)++;
    return INGOT_OK;
}

/* An OS device that a GPU library created (CUDA, NVML, OpenCL, ROCm SMI, Level Zero). A DRM
 * device alone ("card0") is no GPU: a BMC's VGA chip has one too. */
static bool topo_osdev_is_gpu(hwloc_obj_t osdev)
{
    static const char *const prefixes[] = {"cuda", "nvml", "opencl", "rsmi", "ze", NULL};
    if (osdev->attr->osdev.type != HWLOC_OBJ_OSDEV_GPU &&
        osdev->attr->osdev.type != HWLOC_OBJ_OSDEV_COPROC) {
        return false;
    }
    for (int i = 0; prefixes[i] != NULL; i++) {
        if (osdev->name != NULL && strncmp(osdev->name, prefixes[i], strlen(prefixes[i])) == 0) {
            return true;
        }
    }
    return osdev->attr->osdev.type == HWLOC_OBJ_OSDEV_COPROC;
}

static void topo_gpu_uuid(hwloc_obj_t osdev, char *uuid, size_t len)
{
    const char *v = hwloc_obj_get_info_by_name(osdev, "NVIDIAUUID");
    if (v == NULL) {
        v = hwloc_obj_get_info_by_name(osdev, "AMDUUID");
    }
    if (v != NULL && uuid[0] == '\0') {
        snprintf(uuid, len, "%s", v);
    }
}

/* One GPU per PCI device: its library OS devices, or (no GPU library) NVIDIA display class. */
static ingot_status_t topo_scan_pci_gpu(ingot_topo_t *topo, hwloc_obj_t pci)
{
    hwloc_obj_t named = NULL;
    char uuid[INGOT_TOPO_NAME_MAX] = "";
    for (hwloc_obj_t c = pci->io_first_child; c != NULL; c = c->next_sibling) {
        if (c->type == HWLOC_OBJ_OS_DEVICE && topo_osdev_is_gpu(c)) {
            if (named == NULL || strncmp(c->name, "cuda", 4) == 0) {
                named = c;
            }
            topo_gpu_uuid(c, uuid, sizeof(uuid));
        }
    }
    unsigned cls = pci->attr->pcidev.class_id;
    bool nvidia_display = pci->attr->pcidev.vendor_id == PCI_VENDOR_NVIDIA &&
                          (cls == PCI_CLASS_DISPLAY_VGA || cls == PCI_CLASS_DISPLAY_3D);
    if (named == NULL && !nvidia_display) {
        return INGOT_OK;
    }
    char pciname[INGOT_TOPO_NAME_MAX];
    const char *model = hwloc_obj_get_info_by_name(pci, "PCIDevice");
    snprintf(pciname, sizeof(pciname), "%s", model != NULL ? model : "NVIDIA GPU");
    INGOT_CHECK(topo_dev_add(topo, &topo->gpus, &topo->ngpus, INGOT_TOPOLOGY_DEVICE_GPU, pci, named,
                             named != NULL ? named->name : pciname));
    snprintf(topo->gpus[topo->ngpus - 1].uuid, INGOT_TOPO_NAME_MAX, "%s", uuid);
    return INGOT_OK;
}

/* GPU OS devices without a PCI device (GPUs without locality): one GPU per OS device of the
 * library that names the most of them, or per UUID. */
static ingot_status_t topo_scan_orphan_gpus(ingot_topo_t *topo)
{
    char prefix[8] = "";
    int best = 0;
    for (int pass = 0; pass < 2; pass++) {
        hwloc_obj_t os = NULL;
        while ((os = hwloc_get_next_osdev(topo->hw, os)) != NULL) {
            if (!topo_osdev_is_gpu(os) || topo_pci_ancestor(os) != NULL || os->name == NULL) {
                continue;
            }
            char p[sizeof(prefix)];
            ingot_topo_name_prefix(os->name, p, sizeof(p));
            if (pass == 0) {
                int n = ingot_topo_count_osdev_prefix(topo->hw, p);
                if (n > best) {
                    best = n;
                    snprintf(prefix, sizeof(prefix), "%s", p);
                }
            } else if (strcmp(p, prefix) == 0) {
                INGOT_CHECK(topo_dev_add(topo, &topo->gpus, &topo->ngpus, INGOT_TOPOLOGY_DEVICE_GPU,
                                         NULL, os, os->name));
                topo_gpu_uuid(os, topo->gpus[topo->ngpus - 1].uuid, INGOT_TOPO_NAME_MAX);
            }
        }
    }
    return INGOT_OK;
}

static int topo_ib_port(hwloc_obj_t osdev)
{
    int first = 0;
    for (int p = 1; p <= IB_PORT_MAX; p++) {
        char key[32];
        snprintf(key, sizeof(key), "Port%dState", p);
        const char *state = hwloc_obj_get_info_by_name(osdev, key);
        if (state == NULL) {
            continue;
        }
        if (strcmp(state, IB_PORT_STATE_ACTIVE) == 0) {
            return p;
        }
        if (first == 0) {
            first = p;
        }
    }
    return first != 0 ? first : 1;
}

static ingot_status_t topo_scan_osdevs(ingot_topo_t *topo)
{
    int ib = 0;
    for (int pass = 0; pass < 2; pass++) {
        hwloc_obj_t os = NULL;
        while ((os = hwloc_get_next_osdev(topo->hw, os)) != NULL) {
            hwloc_obj_osdev_type_t t = os->attr->osdev.type;
            hwloc_obj_t pci = topo_pci_ancestor(os);
            const char *nm = os->name != NULL ? os->name : "?";
            if (pass == 0 && t == HWLOC_OBJ_OSDEV_OPENFABRICS) {
                INGOT_CHECK(topo_dev_add(topo, &topo->nics, &topo->nnics, INGOT_TOPOLOGY_DEVICE_NIC,
                                         pci, os, nm));
                topo->nics[topo->nnics - 1].port = topo_ib_port(os);
                ib++;
            } else if (pass == 0 && t == HWLOC_OBJ_OSDEV_BLOCK) {
                INGOT_CHECK(topo_dev_add(topo, &topo->storage, &topo->nstorage,
                                         INGOT_TOPOLOGY_DEVICE_STORAGE, pci, os, nm));
            } else if (pass == 1 && ib == 0 && t == HWLOC_OBJ_OSDEV_NETWORK) {
                INGOT_CHECK(topo_dev_add(topo, &topo->nics, &topo->nnics, INGOT_TOPOLOGY_DEVICE_NIC,
                                         pci, os, nm));
            }
        }
    }
    topo->nic_kind = ib > 0 ? INGOT_TOPO_NIC_OPENFABRICS : INGOT_TOPO_NIC_NETWORK;
    return INGOT_OK;
}

static ingot_status_t topo_scan_devices(ingot_topo_t *topo)
{
    for (hwloc_obj_t pci = NULL; (pci = hwloc_get_next_pcidev(topo->hw, pci)) != NULL;) {
        INGOT_CHECK(topo_scan_pci_gpu(topo, pci));
    }
    INGOT_CHECK(topo_scan_orphan_gpus(topo));
    if (topo->ngpus > INGOT_TOPO_MAX_GPUS) {
        ingot_error("%s: %d GPUs found, at most %d are supported per node", topo->source,
                    topo->ngpus, INGOT_TOPO_MAX_GPUS);
        return INGOT_ERR_UNSUPPORTED;
    }
    INGOT_CHECK(topo_scan_osdevs(topo));
    ingot_topo_devs_sort(topo->gpus, topo->ngpus);
    ingot_topo_devs_sort(topo->nics, topo->nnics);
    ingot_topo_devs_sort(topo->storage, topo->nstorage);
    return INGOT_OK;
}

/* ---------------------------------------------------------------- create/destroy */

static void topo_hostname(ingot_topo_t *topo)
{
    const char *h = hwloc_obj_get_info_by_name(hwloc_get_root_obj(topo->hw), "HostName");
    if (topo->from_xml) {
        snprintf(topo->hostname, sizeof(topo->hostname), "%s", h != NULL ? h : "unknown");
    } else if (gethostname(topo->hostname, sizeof(topo->hostname) - 1) != 0) {
        snprintf(topo->hostname, sizeof(topo->hostname), "%s", h != NULL ? h : "unknown");
    }
}

ingot_status_t ingot_topo_load(const char *xml_path, ingot_topo_t **topo_p)
{
    ingot_status_t st;
    if (xml_path != NULL && (xml_path[0] == '\0' || strcmp(xml_path, INGOT_TOPO_XML_NONE) == 0)) {
        xml_path = NULL;
    }
    if (xml_path != NULL) {
        INGOT_CHECK(topo_xml_check(xml_path));
    }
    ingot_topo_t *topo = ingot_calloc(1, sizeof(*topo), "topology");
    if (topo == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    topo->from_xml = xml_path != NULL;
    snprintf(topo->source, sizeof(topo->source), "%s", xml_path != NULL ? xml_path : "live");
    st = topo_hwloc_load(xml_path, &topo->hw);
    if (st != INGOT_OK) {
        goto err_free;
    }
    topo_hostname(topo);
    st = topo_scan_cpus(topo);
    if (st == INGOT_OK) {
        st = topo_scan_devices(topo);
    }
    if (st != INGOT_OK) {
        goto err_destroy;
    }
    *topo_p = topo;
    return INGOT_OK;

err_destroy:
    ingot_topo_destroy(topo);
    return st;
err_free:
    free(topo);
    return st;
}

static void topo_devs_free(ingot_topo_dev_t *devs, int count)
{
    for (int i = 0; i < count; i++) {
        hwloc_bitmap_free(devs[i].locality);
    }
    free(devs);
}

void ingot_topo_destroy(ingot_topo_t *topo)
{
    if (topo == NULL) {
        return;
    }
    topo_devs_free(topo->gpus, topo->ngpus);
    topo_devs_free(topo->nics, topo->nnics);
    topo_devs_free(topo->storage, topo->nstorage);
    free(topo->numa);
    if (topo->hw != NULL) {
        hwloc_topology_destroy(topo->hw);
    }
    free(topo);
}

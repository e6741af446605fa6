/* topology's INGOT_* variables: the XML to plan on, placement mode, GPU list and sharing,
 * ingest cores and binding. The enums' names are indexed by the enums of topo.h. */
#include "base/config.h"
#include "topology/topo.h"
#include <limits.h>
#include <stddef.h>

#define F(_field) offsetof(ingot_topo_config_t, _field)
#define JOB       INGOT_CONFIG_SCOPE_JOB
#define RANK      INGOT_CONFIG_SCOPE_RANK

static const char *const placement_modes[] = {[INGOT_TOPO_MODE_AUTO] = "auto",
                                              [INGOT_TOPO_MODE_GPU] = "gpu",
                                              [INGOT_TOPO_MODE_CPU] = "cpu",
                                              [INGOT_TOPO_MODE_CPU + 1] = NULL};
static const char *const sharing_modes[] = {[INGOT_TOPO_SHARING_ERROR] = "error",
                                            [INGOT_TOPO_SHARING_SHARE] = "share",
                                            [INGOT_TOPO_SHARING_SHARE + 1] = NULL};
static const char *const bind_modes[] = {[INGOT_TOPO_BIND_NONE] = "none",
                                         [INGOT_TOPO_BIND_CPU] = "cpu",
                                         [INGOT_TOPO_BIND_CPUMEM] = "cpu+mem",
                                         [INGOT_TOPO_BIND_CPUMEM + 1] = NULL};

static const ingot_config_field_t topo_fields[] = {
    {"TOPOLOGY_XML", "none",
     "hwloc XML export (lstopo --of xml) to plan on instead of discovering this machine; 'none': "
     "live discovery. Per rank, so that a job may mix node types; binding is refused with it.",
     RANK, INGOT_CONFIG_STRING, F(topology_xml), 0, 0, NULL, NULL, NULL, NULL},
    {"PLACEMENT", "auto",
     "Placement plan: 'gpu' gives each local rank a GPU (no usable GPU is an error), 'cpu' plans "
     "NUMA-balanced cpusets only, 'auto' does 'gpu' when the node has usable GPUs, else 'cpu'.",
     JOB, INGOT_CONFIG_ENUM, F(placement), 0, 0, placement_modes, NULL, NULL, NULL},
    {"GPUS", "all",
     "GPUs the plan may use: 'all', or a comma-separated list of node GPU indices (PCI bus "
     "order, as nvidia-smi), PCI bus ids or UUIDs; a name that matches no GPU is an error.",
     JOB, INGOT_CONFIG_STRING, F(gpus), 0, 0, NULL, NULL, NULL, NULL},
    {"GPU_SHARING", "share",
     "More local ranks than usable GPUs: 'share' (the default) lets consecutive local ranks "
     "share a GPU, with one warning per node saying how many share each; 'error' fails the plan "
     "(a production job with one rank per GPU may set it to catch a wrong rank count). A job "
     "with no more ranks than GPUs gets one GPU per rank either way.",
     JOB, INGOT_CONFIG_ENUM, F(gpu_sharing), 0, 0, sharing_modes, NULL, NULL, NULL},
    {"INGEST_CORES", "1",
     "Cores of each rank's cpuset reserved for ingot's ingest threads (the rest is the "
     "trainer's); 0 reserves none. With too few cores, ingest and trainer share them.",
     JOB, INGOT_CONFIG_INT, F(ingest_cores), 0, 4096, NULL, NULL, NULL, NULL},
    {"BIND", "none",
     "Bind each rank to its planned cpuset: 'none' leaves the launcher's binding alone, 'cpu' "
     "binds the process, 'cpu+mem' also binds its memory to the GPU's NUMA node.",
     JOB, INGOT_CONFIG_ENUM, F(bind), 0, 0, bind_modes, NULL, NULL, NULL},
};

INGOT_CONFIG_MODULE(ingot_topo, "topology", INGOT_CONFIG_ORDER_TOPOLOGY, topo_fields,
                    ingot_topo_config_t, NULL)

/*
 * Internal API of the topology module, used by the context (runtime/context.c), ingot-topo and
 * the tests. Three steps, each testable alone:
 *   1. ingot_topo_load():       hwloc discovery (or an XML export) -> ingot_topo_t, the node's
 *                               NUMA nodes, GPUs, NICs and storage with their PCI locality;
 *   2. ingot_topo_node_group(): ranks grouped by node over MPI (node comm, ids, host names);
 *   3. ingot_topo_plan():       a pure function of (topology, local size, params) -> one
 *                               placement per local rank; no MPI, no environment.
 * Then ingot_topo_bind() applies a rank's placement when INGOT_BIND asks for it.
 * A loaded topology and a plan are immutable: any thread may read them.
 */
#ifndef INGOT_TOPOLOGY_TOPO_H
#define INGOT_TOPOLOGY_TOPO_H

#include <hwloc.h>
#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <ingot/status.h>
#include <ingot/topology.h>
#include "base/config.h"

/** GPU sets are 64-bit masks of node-wide GPU indices. */
#define INGOT_TOPO_MAX_GPUS  64
#define INGOT_TOPO_NAME_MAX  64
#define INGOT_TOPO_BUSID_MAX 16 /* "dddd:bb:dd.f" */
#define INGOT_TOPO_HOST_MAX  65 /* HOST_NAME_MAX + 1 */
#define INGOT_TOPO_GPUS_ALL  UINT64_MAX
#define INGOT_TOPO_XML_NONE  "none" /* INGOT_TOPOLOGY_XML's "no file": live discovery */

typedef enum ingot_topo_nic_kind {
    INGOT_TOPO_NIC_OPENFABRICS = 0, /* mlx5_0 and the like, with a port */
    INGOT_TOPO_NIC_NETWORK = 1      /* eth0, ib0: used only when there is no OpenFabrics device */
} ingot_topo_nic_kind_t;

/** A GPU, NIC or block device, with where it sits. */
typedef struct ingot_topo_dev {
    ingot_topology_device_kind_t kind;
    int index;               /* in its list (GPUs: PCI bus order) */
    hwloc_obj_t pci;         /* PCI device, or NULL (no PCI locality) */
    hwloc_obj_t osdev;       /* OS device naming it, or NULL (GPU found by PCI class) */
    hwloc_bitmap_t locality; /* cpuset of the nearest non-I/O ancestor (owned) */
    int numa;                /* index into ingot_topo_t::numa, or -1 */
    int package;             /* logical index of its package, or -1 */
    int port;                /* OpenFabrics port, else 0 */
    char name[INGOT_TOPO_NAME_MAX];
    char busid[INGOT_TOPO_BUSID_MAX];
    char uuid[INGOT_TOPO_NAME_MAX]; /* GPUs: "GPU-..." when hwloc reports it, else "" */
} ingot_topo_dev_t;

/** A NUMA node that has CPUs in the allowed cpuset (memory-only nodes are counted, not planned on). */
typedef struct ingot_topo_numa {
    int os_index;
    int package;                 /* logical index, or -1 */
    uint64_t memory;             /* local memory, bytes */
    hwloc_const_cpuset_t cpuset; /* allowed CPUs of the node (hwloc's) */
} ingot_topo_numa_t;

/** A loaded node topology. */
typedef struct ingot_topo {
    hwloc_topology_t hw;
    bool from_xml;
    char source[INGOT_TOPOLOGY_STR_MAX]; /* "live" or the XML path */
    char hostname[INGOT_TOPO_HOST_MAX];
    int npackages, ncores, npus;
    int nnuma_memory; /* NUMA nodes with memory, CPU-less included */
    int nnuma;
    ingot_topo_numa_t *numa;
    int ngpus;
    ingot_topo_dev_t *gpus;
    int nnics;
    ingot_topo_dev_t *nics;
    ingot_topo_nic_kind_t nic_kind;
    int nstorage;
    ingot_topo_dev_t *storage;
} ingot_topo_t;

/**
 * Load the node topology: live discovery with I/O devices, or the hwloc XML export at
 * @p xml_path unless it is NULL, "" or "none". Errors name the file and what was expected:
 * INGOT_ERR_NOT_FOUND / INGOT_ERR_PERMISSION / INGOT_ERR_IO (unreadable), INGOT_ERR_FORMAT (not
 * an hwloc XML export), INGOT_ERR_UNSUPPORTED (more than INGOT_TOPO_MAX_GPUS GPUs).
 */
ingot_status_t ingot_topo_load(const char *xml_path, ingot_topo_t **topo_p);
/** Release a topology. Accepts NULL. */
void ingot_topo_destroy(ingot_topo_t *topo);

/** Distance class between two devices (GPU-NIC), from their PCI tree and NUMA locality. */
ingot_topology_distance_t ingot_topo_dev_distance(const ingot_topo_t *topo,
                                                  const ingot_topo_dev_t *a,
                                                  const ingot_topo_dev_t *b);
/** Distance class between a NUMA node (index into topo->numa, or -1) and a device. */
ingot_topology_distance_t ingot_topo_numa_distance(const ingot_topo_t *topo, int numa,
                                                   const ingot_topo_dev_t *dev);

/**
 * Parse a GPU list into a mask of node GPU indices. Tokens are separated by commas: a node
 * index ("3"), a PCI bus id ("0000:1b:00.0" or "1b:00.0") or a UUID prefix ("GPU-5a1c").
 * NULL, "" for INGOT_GPUS, or "all" select every GPU. As CUDA does, "-1" ends the list.
 * @p what names the list in messages ("INGOT_GPUS", "CUDA_VISIBLE_DEVICES"). A token that names
 * no GPU of the node is INGOT_ERR_NOT_FOUND, naming the token and the GPUs that exist.
 */
ingot_status_t ingot_topo_gpu_list_parse(const ingot_topo_t *topo, const char *list,
                                         const char *what, uint64_t *mask_p);
/** The GPUs a plan may use: those INGOT_GPUS (@p gpus) names that CUDA_VISIBLE_DEVICES
 *  (@p cuda_visible, NULL when unset) does not hide. Errors as ingot_topo_gpu_list_parse(). */
ingot_status_t ingot_topo_gpu_mask(const ingot_topo_t *topo, const char *gpus,
                                   const char *cuda_visible, uint64_t *mask_p);
/** Position of GPU @p gpu in the list (its CUDA ordinal when the list is CUDA_VISIBLE_DEVICES),
 *  @p gpu itself when @p list is NULL, or -1 when the list does not name it. */
int ingot_topo_gpu_list_position(const ingot_topo_t *topo, const char *list, int gpu);

/* ---------------------------------------------------------------- planning */

typedef enum ingot_topo_mode {
    INGOT_TOPO_MODE_AUTO = 0, /* GPU plan when the node has usable GPUs, else CPU-only */
    INGOT_TOPO_MODE_GPU = 1,  /* GPU plan; no usable GPU is an error */
    INGOT_TOPO_MODE_CPU = 2   /* CPU-only plan even when there are GPUs */
} ingot_topo_mode_t;

typedef enum ingot_topo_sharing {
    INGOT_TOPO_SHARING_ERROR = 0, /* more local ranks than GPUs is an error */
    INGOT_TOPO_SHARING_SHARE = 1  /* consecutive local ranks share a GPU (the default) */
} ingot_topo_sharing_t;

typedef enum ingot_topo_bind_mode {
    INGOT_TOPO_BIND_NONE = 0,
    INGOT_TOPO_BIND_CPU = 1,
    INGOT_TOPO_BIND_CPUMEM = 2
} ingot_topo_bind_mode_t;

/** topology's INGOT_* variables (topo_config.c). */
typedef struct ingot_topo_config {
    char *topology_xml; /* "none" = live hwloc discovery */
    ingot_topo_mode_t placement;
    char *gpus; /* explicit GPU list, "all" */
    ingot_topo_sharing_t gpu_sharing;
    int64_t ingest_cores; /* cores per rank reserved for ingest threads */
    ingot_topo_bind_mode_t bind;
} ingot_topo_config_t;

_Static_assert(sizeof(ingot_topo_mode_t) == sizeof(int), "enum variables are stored as int");
_Static_assert(sizeof(ingot_topo_sharing_t) == sizeof(int), "enum variables are stored as int");
_Static_assert(sizeof(ingot_topo_bind_mode_t) == sizeof(int), "enum variables are stored as int");

extern ingot_config_table_t ingot_topo_config_table;

/** topology's process-wide values (parsed at the first call of any module's accessor). */
ingot_status_t ingot_topo_config(const ingot_topo_config_t **cfg_p);

enum ingot_plan_params_field {
    INGOT_PLAN_PARAM_FIELD_ALLOWED_CPUSET = 1u << 0,
    INGOT_PLAN_PARAM_FIELD_GPU_MASK = 1u << 1,
    INGOT_PLAN_PARAM_FIELD_MODE = 1u << 2,
    INGOT_PLAN_PARAM_FIELD_SHARING = 1u << 3,
    INGOT_PLAN_PARAM_FIELD_INGEST_CORES = 1u << 4
};

#define INGOT_PLAN_DEFAULT_INGEST_CORES 1

typedef struct ingot_plan_params {
    uint64_t field_mask;
    hwloc_const_cpuset_t allowed_cpuset; /* default: the topology's allowed cpuset */
    uint64_t gpu_mask;      /* usable GPUs (INGOT_GPUS and CUDA_VISIBLE_DEVICES); default all */
    ingot_topo_mode_t mode; /* default AUTO */
    ingot_topo_sharing_t sharing; /* default SHARE */
    int ingest_cores;             /* cores per rank reserved for ingest; default 1 */
} ingot_plan_params_t;

/** Placement of one local rank. */
typedef struct ingot_plan_rank {
    int gpu;       /* node GPU index, or -1 */
    int gpu_ranks; /* local ranks on that GPU */
    int nic;       /* index into topo->nics, or -1 */
    ingot_topology_distance_t nic_distance;
    int numa; /* index into topo->numa of the cpuset's domain, or -1 */
    hwloc_bitmap_t cpuset;
    hwloc_bitmap_t ingest_cpuset;
    hwloc_bitmap_t trainer_cpuset;
    uint64_t flags; /* INGOT_PLACEMENT_FLAG_* (GPU_SHARED, CPUS_SHARED, INGEST_SHARED) */
} ingot_plan_rank_t;

typedef struct ingot_plan {
    int local_size;
    bool gpu_plan; /* false: CPU-only plan */
    int gpus_used;
    ingot_plan_rank_t *ranks; /* local_size entries */
} ingot_plan_t;

/**
 * Plan the placement of @p local_size ranks on one node. Pure: depends only on its arguments.
 * Errors (logged, naming what was expected and found): INGOT_ERR_NO_DEVICE (mode GPU without a
 * usable GPU; more ranks than GPUs without sharing), INGOT_ERR_NO_RESOURCE (empty allowed
 * cpuset), INGOT_ERR_INVALID_PARAM.
 */
ingot_status_t ingot_topo_plan(const ingot_topo_t *topo, int local_size,
                               const ingot_plan_params_t *params, ingot_plan_t **plan_p);
/** Plan parameters from the INGOT_* configuration (INGOT_PLACEMENT, INGOT_GPU_SHARING,
 *  INGOT_INGEST_CORES) and a GPU mask from ingot_topo_gpu_mask(); the allowed cpuset is unset. */
void ingot_topo_plan_params_from_config(const ingot_topo_config_t *cfg, uint64_t gpu_mask,
                                        ingot_plan_params_t *params);
/** Release a plan. Accepts NULL. */
void ingot_topo_plan_destroy(ingot_plan_t *plan);
/** A digest of a plan (equal plans give equal digests), to check that a node's ranks agree. */
uint64_t ingot_topo_plan_digest(const ingot_plan_t *plan);

/* ---------------------------------------------------------------- nodes (MPI) */

/** How the ranks of a communicator sit on nodes. */
typedef struct ingot_node_info {
    MPI_Comm node_comm; /* ranks of this node (owned) */
    MPI_Comm
        leader_comm; /* the node leaders, in node order; MPI_COMM_NULL on other ranks (owned) */
    int node_id, node_count;
    int local_rank, local_size;
    int leader; /* rank in the parent communicator of this node's leader */
    char hostname[INGOT_TOPO_HOST_MAX];
    char *node_hostnames; /* node_count names of INGOT_TOPO_HOST_MAX bytes, by node id */
} ingot_node_info_t;

/**
 * Group the ranks of @p comm by node (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)). Collective
 * over @p comm. Node ids follow the nodes' lowest ranks. INGOT_ERR_MPI on MPI failures.
 */
ingot_status_t ingot_topo_node_group(MPI_Comm comm, ingot_node_info_t *info_p);
/** Free the communicators and names (not collective). Accepts a zeroed struct. */
void ingot_topo_node_release(ingot_node_info_t *info);
/** Host name of node @p node_id, or "" when out of range. */
const char *ingot_topo_node_hostname(const ingot_node_info_t *info, int node_id);
/** Union over the node's ranks of @p mask (e.g. each rank's CUDA_VISIBLE_DEVICES). Collective. */
ingot_status_t ingot_topo_node_gpu_union(const ingot_node_info_t *info, uint64_t mask,
                                         uint64_t *union_p);
/** Check that every rank of the node computed the same plan; INGOT_ERR_MISMATCH if not. Collective. */
ingot_status_t ingot_topo_node_plan_agree(const ingot_node_info_t *info, const ingot_plan_t *plan);

/* ---------------------------------------------------------------- binding and reporting */

/**
 * Compare the calling process's current binding and CUDA_VISIBLE_DEVICES (@p cuda_visible, may
 * be NULL) with its planned placement. Writes a description of the differences into @p msg
 * (empty when none) and sets *@p conflict_p. A topology loaded from XML is not this machine:
 * only the GPU list is compared then.
 */
ingot_status_t ingot_topo_launcher_check(const ingot_topo_t *topo, const ingot_plan_t *plan,
                                         int local_rank, const char *cuda_visible, char *msg,
                                         size_t msglen, bool *conflict_p);
/**
 * Bind the calling process to its planned cpuset (CPU) and its memory to that NUMA node
 * (CPUMEM). INGOT_ERR_UNSUPPORTED when the topology is an XML export of another machine,
 * INGOT_ERR_PERMISSION / INGOT_ERR_IO when the OS refuses.
 */
ingot_status_t ingot_topo_bind(const ingot_topo_t *topo, const ingot_plan_t *plan, int local_rank,
                               ingot_topo_bind_mode_t mode);
/** Bind the calling thread to the rank's ingest (@p ingest true) or trainer cpuset. */
ingot_status_t ingot_topo_bind_thread(const ingot_topo_t *topo, const ingot_plan_t *plan,
                                      int local_rank, bool ingest);
/** OS index of the NUMA node staging memory of a rank should be bound to, or -1. */
int ingot_topo_plan_numa_os_index(const ingot_topo_t *topo, const ingot_plan_t *plan,
                                  int local_rank);

/** Fill the public summary / device structures. */
void ingot_topo_summary_fill(const ingot_topo_t *topo, ingot_topology_summary_t *summary);
ingot_status_t ingot_topo_device_fill(const ingot_topo_t *topo, ingot_topology_device_kind_t kind,
                                      int index, ingot_topology_device_t *dev);
/**
 * Fill a rank's public placement from the plan. @p node may be NULL (planning without MPI:
 * node 0 of 1). @p cuda_visible is this process's CUDA_VISIBLE_DEVICES (NULL when unset).
 */
void ingot_topo_placement_fill(const ingot_topo_t *topo, const ingot_plan_t *plan,
                               const ingot_node_info_t *node, int local_rank,
                               const char *cuda_visible, ingot_placement_t *placement);

/** Print the node summary and the plan as a table, or as one JSON object. */
void ingot_topo_print_table(FILE *out, const ingot_topo_t *topo, const ingot_plan_t *plan,
                            const ingot_placement_t *placements);
void ingot_topo_print_json(FILE *out, const ingot_topo_t *topo, const ingot_plan_t *plan,
                           const ingot_placement_t *placements);

/* ---------------------------------------------------------------- the context's one call */

enum ingot_topo_setup_params_field {
    INGOT_TOPO_SETUP_PARAM_FIELD_XML = 1u << 0,
    INGOT_TOPO_SETUP_PARAM_FIELD_ALLOWED_CPUSET = 1u << 1
};

typedef struct ingot_topo_setup_params {
    uint64_t field_mask;
    const char *xml;                     /* default: INGOT_TOPOLOGY_XML */
    hwloc_const_cpuset_t allowed_cpuset; /* default: the topology's allowed cpuset */
} ingot_topo_setup_params_t;

/** Everything the context keeps about topology. Immutable after creation. */
typedef struct ingot_topo_setup {
    ingot_node_info_t node;      /* node communicator, ids, host names */
    ingot_topo_t *topo;          /* this node */
    ingot_plan_t *plan;          /* the plan of this node's ranks */
    ingot_placement_t placement; /* this rank's (what ingot_placement_get() returns) */
} ingot_topo_setup_t;

/**
 * Node grouping, discovery, plan agreement, launcher check and binding (INGOT_BIND), in one
 * call collective over @p comm; @p params may be NULL. Every step is agreed across @p comm, so
 * all ranks return the same status (the rank that failed logged why). The setup must be
 * destroyed before MPI_Finalize (it holds communicators).
 */
ingot_status_t ingot_topo_setup_create(MPI_Comm comm, const ingot_topo_config_t *cfg,
                                       const ingot_topo_setup_params_t *params,
                                       ingot_topo_setup_t **setup_p);
/** Free a setup (not collective). Accepts NULL. */
void ingot_topo_setup_destroy(ingot_topo_setup_t *setup);

#endif

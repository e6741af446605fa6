/**
 * @file topology.h
 * @brief Where this rank runs: node, NUMA, GPU, NIC and cpuset placement, and topology queries.
 *
 * At ingot_init() every rank discovers its node's topology with hwloc (or loads the hwloc XML
 * export named by INGOT_TOPOLOGY_XML), ranks are grouped by node, and the ranks of a node agree
 * on a placement plan: each local rank gets its own GPU (balanced across NUMA nodes), the NIC
 * nearest to that GPU, and a cpuset on that GPU's NUMA node, split between the ingest threads
 * and the trainer. The plan stays within what the launcher allows (the allowed cpuset given by
 * Slurm, cgroups or mpirun, and CUDA_VISIBLE_DEVICES). ingot never sets CUDA_VISIBLE_DEVICES,
 * UCX_NET_DEVICES or NCCL_IB_HCA itself: the placement reports the values to use, and binding
 * happens only when INGOT_BIND asks for it.
 *
 * Tunables: INGOT_TOPOLOGY_XML, INGOT_PLACEMENT, INGOT_GPUS, INGOT_GPU_SHARING,
 * INGOT_INGEST_CORES, INGOT_BIND (see `ingot-info -c`). ingot_topology_report() (the `ingot-topo`
 * tool) prints the same plan without a training job.
 */
#ifndef INGOT_TOPOLOGY_H
#define INGOT_TOPOLOGY_H

#include <mpi.h>
#include <stdio.h>
#include <ingot/def.h>
#include <ingot/status.h>

INGOT_BEGIN_DECLS

/** Length of the string fields of the structures below, including the terminating NUL. Longer
 *  values (a very fragmented cpuset list) are truncated. */
#define INGOT_TOPOLOGY_STR_MAX 256

/**
 * How close two devices (a GPU and a NIC) are on the PCIe tree, nearest first. The order is
 * that of `nvidia-smi topo -m`: PIX/PXB (switch), PHB (host bridge), NODE, SYS.
 */
typedef enum ingot_topology_distance {
    INGOT_TOPOLOGY_DISTANCE_SWITCH = 0, /**< Behind the same PCIe switch (a common PCI bridge). */
    INGOT_TOPOLOGY_DISTANCE_HOSTBRIDGE = 1, /**< Behind the same PCIe host bridge (root complex). */
    INGOT_TOPOLOGY_DISTANCE_NUMA       = 2, /**< Attached to the same NUMA node. */
    INGOT_TOPOLOGY_DISTANCE_PACKAGE = 3, /**< Same socket, different NUMA nodes (SNC/NPS modes). */
    INGOT_TOPOLOGY_DISTANCE_SYSTEM  = 4, /**< Different sockets: traffic crosses the SMP link. */
    INGOT_TOPOLOGY_DISTANCE_UNKNOWN = 5  /**< Locality unknown (no PCI or NUMA information). */
} ingot_topology_distance_t;

/** Kinds of devices reported by ingot_topology_device_query(). */
typedef enum ingot_topology_device_kind {
    INGOT_TOPOLOGY_DEVICE_GPU = 0, /**< A GPU (one per PCI device, whatever names it has). */
    INGOT_TOPOLOGY_DEVICE_NIC =
        1, /**< An OpenFabrics device (mlx5_0) or, without any, a network interface. */
    INGOT_TOPOLOGY_DEVICE_STORAGE = 2 /**< A block device (NVMe, disk). */
} ingot_topology_device_kind_t;

/** Fields of ingot_topology_summary_t (each bit covers the members named). */
enum ingot_topology_summary_field {
    INGOT_TOPOLOGY_SUMMARY_FIELD_HOST   = INGOT_BIT(0), /**< hostname, source. */
    INGOT_TOPOLOGY_SUMMARY_FIELD_COUNTS = INGOT_BIT(1), /**< packages .. storage. */
    INGOT_TOPOLOGY_SUMMARY_FIELD_CPUSET = INGOT_BIT(2)  /**< allowed_cpuset. */
};

/** What a node holds (ingot_topology_query()). The caller sets field_mask (see
 *  ingot_ctx_attr_t): only the fields it names are written. */
typedef struct ingot_topology_summary {
    uint64_t field_mask; /**< In: ingot_topology_summary_field bits of the fields to write. */
    char     hostname
        [INGOT_TOPOLOGY_STR_MAX]; /**< Host name (from the XML export when one was loaded). */
    char source[INGOT_TOPOLOGY_STR_MAX]; /**< "live", or the path of the XML export loaded. */
    int  packages;                       /**< Sockets. */
    int  numa_nodes;                     /**< NUMA nodes with memory (including CPU-less ones). */
    int  cores;                          /**< Cores in the allowed cpuset. */
    int  pus;                            /**< Hardware threads in the allowed cpuset. */
    int  gpus;                           /**< GPUs on the node (all of them, visible or not). */
    int  nics; /**< NICs (OpenFabrics devices, or network interfaces when there are none). */
    int  nics_openfabrics; /**< 1 if the NICs are OpenFabrics (InfiniBand/RoCE) devices. */
    int  storage;          /**< Block devices. */
    char allowed_cpuset[INGOT_TOPOLOGY_STR_MAX]; /**< Allowed cpuset as a list ("0-55,112-167"). */
} ingot_topology_summary_t;

/** Fields of ingot_topology_device_t (each bit covers the members named). */
enum ingot_topology_device_field {
    INGOT_TOPOLOGY_DEVICE_FIELD_NAME     = INGOT_BIT(0), /**< kind, index, name, pci_busid. */
    INGOT_TOPOLOGY_DEVICE_FIELD_NUMA     = INGOT_BIT(1), /**< numa_node, package. */
    INGOT_TOPOLOGY_DEVICE_FIELD_PORT     = INGOT_BIT(2), /**< port. */
    INGOT_TOPOLOGY_DEVICE_FIELD_LOCALITY = INGOT_BIT(3)  /**< locality. */
};

/** One device (ingot_topology_device_query()). The caller sets field_mask (see
 *  ingot_ctx_attr_t): only the fields it names are written. */
typedef struct ingot_topology_device {
    uint64_t field_mask; /**< In: ingot_topology_device_field bits of the fields to write. */
    ingot_topology_device_kind_t kind; /**< Kind of device. */
    int index; /**< Index among the node's devices of that kind (GPUs: PCI bus order, as nvidia-smi). */
    char name
        [INGOT_TOPOLOGY_STR_MAX]; /**< OS name ("mlx5_0", "nvme0n1", "cuda0"), or the PCI model. */
    char pci_busid[INGOT_TOPOLOGY_STR_MAX]; /**< "0000:1b:00.0", or "" without PCI information. */
    int  numa_node; /**< OS index of the NUMA node it is attached to, or -1 when unknown. */
    int  package;   /**< Logical index of its socket, or -1 when unknown. */
    int  port;      /**< NICs: the port to use (OpenFabrics), else 0. */
    char locality[INGOT_TOPOLOGY_STR_MAX]; /**< Cpuset of the CPUs nearest to it, as a list. */
} ingot_topology_device_t;

/** Flags of ingot_placement_t::flags. */
enum ingot_placement_flag {
    INGOT_PLACEMENT_FLAG_GPU_SHARED =
        INGOT_BIT(0), /**< Other local ranks use the same GPU (INGOT_GPU_SHARING=share). */
    INGOT_PLACEMENT_FLAG_CPUS_SHARED = INGOT_BIT(1), /**< Fewer CPUs than ranks: cpusets overlap. */
    INGOT_PLACEMENT_FLAG_INGEST_SHARED =
        INGOT_BIT(2), /**< Too few cores to reserve some for ingest: ingest and trainer share. */
    INGOT_PLACEMENT_FLAG_LAUNCHER_CONFLICT = INGOT_BIT(
        3), /**< The launcher's binding or CUDA_VISIBLE_DEVICES disagrees with the plan (see conflict). */
    INGOT_PLACEMENT_FLAG_BOUND = INGOT_BIT(4) /**< ingot bound the process as INGOT_BIND asked. */
};

/** Fields of ingot_placement_t (each bit covers the members named). */
enum ingot_placement_field {
    INGOT_PLACEMENT_FIELD_NODE = INGOT_BIT(0), /**< node_id, node_count, local_rank, local_size,
                                                     node_leader, hostname. */
    INGOT_PLACEMENT_FIELD_GPU =
        INGOT_BIT(1), /**< gpu_index, cuda_device, gpu_pci_busid, gpu_ranks. */
    INGOT_PLACEMENT_FIELD_NIC = INGOT_BIT(2), /**< nic_name, nic_port, nic_distance. */
    INGOT_PLACEMENT_FIELD_CPUS =
        INGOT_BIT(3), /**< numa_node, cpuset, ingest_cpuset, trainer_cpuset. */
    INGOT_PLACEMENT_FIELD_ENV =
        INGOT_BIT(4), /**< cuda_visible_devices, ucx_net_devices, nccl_ib_hca. */
    INGOT_PLACEMENT_FIELD_FLAGS = INGOT_BIT(5) /**< flags, conflict. */
};

/** This rank's placement (ingot_placement_get()). Strings are NUL-terminated. The caller sets
 *  field_mask (see ingot_ctx_attr_t): only the fields it names are written. */
typedef struct ingot_placement {
    uint64_t field_mask; /**< In: ingot_placement_field bits of the fields to write. */
    int node_id; /**< Index of this rank's node (0..node_count-1, in order of the nodes' lowest rank). */
    int  node_count;  /**< Number of nodes in the context's communicator. */
    int  local_rank;  /**< Rank among the ranks of this node. */
    int  local_size;  /**< Number of ranks on this node. */
    int  node_leader; /**< Rank (in the context's communicator) of this node's leader. */
    char hostname[INGOT_TOPOLOGY_STR_MAX]; /**< This node's host name. */

    int gpu_index; /**< Node-wide GPU index (PCI bus order, as nvidia-smi), or -1 in a CPU-only plan. */
    int  cuda_device; /**< CUDA ordinal of that GPU in this process (its position in CUDA_VISIBLE_DEVICES), or -1. */
    char gpu_pci_busid[INGOT_TOPOLOGY_STR_MAX]; /**< The GPU's PCI bus id, or "". */
    int  gpu_ranks; /**< Local ranks sharing this GPU (1 unless sharing), 0 without GPU. */

    char nic_name
        [INGOT_TOPOLOGY_STR_MAX]; /**< Nearest NIC ("mlx5_3"), or "" when the node has none. */
    int nic_port;                 /**< Its port (OpenFabrics), else 0. */
    ingot_topology_distance_t
        nic_distance; /**< Distance class between the GPU (or the cpuset's NUMA node) and the NIC. */

    int  numa_node; /**< OS index of the NUMA node of the cpuset, or -1 when unknown. */
    char cpuset[INGOT_TOPOLOGY_STR_MAX]; /**< All CPUs of this rank, as a list ("0-13,112-125"). */
    char ingest_cpuset
        [INGOT_TOPOLOGY_STR_MAX]; /**< CPUs reserved for ingot's ingest threads (INGOT_INGEST_CORES). */
    char trainer_cpuset[INGOT_TOPOLOGY_STR_MAX]; /**< CPUs left to the trainer. */

    char cuda_visible_devices
        [INGOT_TOPOLOGY_STR_MAX]; /**< Value for CUDA_VISIBLE_DEVICES to give this rank only its GPU, or "". */
    char ucx_net_devices
        [INGOT_TOPOLOGY_STR_MAX]; /**< Value for UCX_NET_DEVICES ("mlx5_3:1"), or "". */
    char nccl_ib_hca
        [INGOT_TOPOLOGY_STR_MAX]; /**< Value for NCCL_IB_HCA ("=mlx5_3:1"), or "" without OpenFabrics NIC. */

    uint64_t flags; /**< Bits of ingot_placement_flag. */
    char     conflict
        [INGOT_TOPOLOGY_STR_MAX]; /**< What the launcher did differently, when LAUNCHER_CONFLICT is set. */
} ingot_placement_t;

/**
 * @brief This rank's placement, as planned at ingot_init().
 * @param ctx          a context from ingot_init().
 * @param placement_p  in: field_mask; out: the fields it names, written only on success.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM for NULL arguments.
 * Thread-safe (the plan is fixed at init; no MPI call).
 */
INGOT_API ingot_status_t ingot_placement_get(ingot_ctx_h ctx, ingot_placement_t *placement_p);

/**
 * @brief What this rank's node holds.
 * @param summary_p in: field_mask; out: the fields it names, written only on success.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM for NULL arguments.
 * Thread-safe; no MPI call.
 */
INGOT_API ingot_status_t ingot_topology_query(ingot_ctx_h ctx, ingot_topology_summary_t *summary_p);

/**
 * @brief One device of this rank's node.
 * @param kind   GPU, NIC or storage.
 * @param index  0 .. (count of that kind in ingot_topology_summary_t) - 1.
 * @param dev_p  in: field_mask; out: the fields it names, written only on success.
 * @return INGOT_OK; INGOT_ERR_OUT_OF_RANGE for an index beyond the node's devices;
 *         INGOT_ERR_INVALID_PARAM for NULL arguments or an unknown kind.
 * Thread-safe; no MPI call.
 */
INGOT_API ingot_status_t ingot_topology_device_query(ingot_ctx_h                  ctx,
                                                     ingot_topology_device_kind_t kind, int index,
                                                     ingot_topology_device_t *dev_p);

/**
 * @brief Name of a distance class: "switch", "hostbridge", "numa", "package", "system", "unknown".
 * @return A static string, never NULL. Thread-safe; needs no context.
 */
INGOT_API const char *ingot_topology_distance_name(ingot_topology_distance_t distance);

/* ------------------------------------------------------------------------------------------ */
/* Planning without a context (ingot-topo)                                                      */

/** Fields of ingot_topology_report_params_t. */
enum ingot_topology_report_params_field {
    INGOT_TOPOLOGY_REPORT_PARAM_FIELD_XML            = INGOT_BIT(0), /**< xml is set. */
    INGOT_TOPOLOGY_REPORT_PARAM_FIELD_RANKS_PER_NODE = INGOT_BIT(1), /**< ranks_per_node is set. */
    INGOT_TOPOLOGY_REPORT_PARAM_FIELD_CPUSET         = INGOT_BIT(2), /**< cpuset is set. */
    INGOT_TOPOLOGY_REPORT_PARAM_FIELD_FORMAT         = INGOT_BIT(3), /**< format is set. */
    INGOT_TOPOLOGY_REPORT_PARAM_FIELD_COMM           = INGOT_BIT(4)  /**< comm is set. */
};

/** How ingot_topology_report() prints. */
typedef enum ingot_topology_report_format {
    INGOT_TOPOLOGY_REPORT_TABLE = 0, /**< The node summary, its devices and one row per rank. */
    INGOT_TOPOLOGY_REPORT_JSON  = 1  /**< One JSON object per node: node, devices, plan, ranks. */
} ingot_topology_report_format_t;

/** Parameters of ingot_topology_report(). Unset fields take their defaults. */
typedef struct ingot_topology_report_params {
    uint64_t    field_mask;     /**< Bits of ingot_topology_report_params_field. */
    const char *xml;            /**< hwloc XML export of the node to plan for (default:
                                     INGOT_TOPOLOGY_XML, else this machine). */
    int         ranks_per_node; /**< Plan for this many local ranks without launching them: no
                                     MPI call (default: the ranks of comm, launched). */
    const char *cpuset;         /**< Plan within these CPUs only, a list such as "0-27,56-83", as a
                                     launcher would restrict them (default: the allowed cpuset). */
    ingot_topology_report_format_t format; /**< Default INGOT_TOPOLOGY_REPORT_TABLE. */
    MPI_Comm                       comm;   /**< Launched ranks (default MPI_COMM_WORLD); unused with
                                     ranks_per_node. */
} ingot_topology_report_params_t;

/**
 * @brief Plan the placement of a node's ranks as ingot_init() would, and print the node and the
 *        plan to @p stream.
 *
 * With ranks_per_node, one plan of that many ranks is computed for the node of xml (or this
 * machine) and printed, without MPI. Without it, the call is collective over comm (MPI must be
 * initialised): the ranks are grouped by node, every node agrees on its plan, each rank checks the
 * launcher's binding and binds when INGOT_BIND asks, and each node's leader prints its node, in
 * node order. Policy comes from INGOT_PLACEMENT, INGOT_GPUS, INGOT_GPU_SHARING,
 * INGOT_INGEST_CORES and CUDA_VISIBLE_DEVICES.
 * @return INGOT_OK; INGOT_ERR_CONFIG (an invalid INGOT_* variable); INGOT_ERR_INVALID_PARAM (a
 *         bad cpuset list, ranks_per_node < 1); INGOT_ERR_NOT_FOUND / INGOT_ERR_FORMAT (the XML);
 *         INGOT_ERR_NO_DEVICE (more ranks than GPUs without INGOT_GPU_SHARING=share); the errors
 *         of ingot_init()'s planning. Launched, every rank returns the same status.
 * Thread-safe offline; launched, as any collective call on comm.
 */
INGOT_API ingot_status_t ingot_topology_report(const ingot_topology_report_params_t *params,
                                               FILE                                 *stream);

INGOT_END_DECLS

#endif /* INGOT_TOPOLOGY_H */

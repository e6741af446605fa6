/*
 * Node grouping over MPI: which ranks share a node (MPI_COMM_TYPE_SHARED), the node's id and
 * leader, and the host names; plus the two node-wide agreements the planner needs (the union of
 * the ranks' visible GPUs, and that every rank computed the same plan).
 */
#include "topology/topo.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/errors.h"
#include "base/status.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ingot_status_t node_split(MPI_Comm comm, ingot_node_info_t *info)
{
    int rank;
    INGOT_CHECK(INGOT_MPI_CALL("node grouping", MPI_Comm_rank, comm, &rank));
    INGOT_CHECK(INGOT_MPI_CALL("node grouping", MPI_Comm_split_type, comm, MPI_COMM_TYPE_SHARED,
                               rank, MPI_INFO_NULL, &info->node_comm));
    MPI_Comm_set_errhandler(info->node_comm, MPI_ERRORS_RETURN);
    INGOT_CHECK(INGOT_MPI_CALL("node grouping", MPI_Comm_rank, info->node_comm, &info->local_rank));
    INGOT_CHECK(INGOT_MPI_CALL("node grouping", MPI_Comm_size, info->node_comm, &info->local_size));
    info->leader = rank;
    INGOT_CHECK(INGOT_MPI_CALL("node leader", MPI_Bcast, &info->leader, 1, MPI_INT, 0,
                               info->node_comm));
    INGOT_CHECK(INGOT_MPI_CALL("node leaders", MPI_Comm_split, comm,
                               info->local_rank == 0 ? 0 : MPI_UNDEFINED, rank,
                               &info->leader_comm));
    if (info->leader_comm != MPI_COMM_NULL) {
        MPI_Comm_set_errhandler(info->leader_comm, MPI_ERRORS_RETURN);
        INGOT_CHECK(INGOT_MPI_CALL("node id", MPI_Comm_rank, info->leader_comm, &info->node_id));
        INGOT_CHECK(INGOT_MPI_CALL("node id", MPI_Comm_size, info->leader_comm, &info->node_count));
    }
    int ids[2] = {info->node_id, info->node_count};
    INGOT_CHECK(INGOT_MPI_CALL("node id", MPI_Bcast, ids, 2, MPI_INT, 0, info->node_comm));
    info->node_id = ids[0];
    info->node_count = ids[1];
    return INGOT_OK;
}

static ingot_status_t node_hostnames(ingot_node_info_t *info)
{
    if (gethostname(info->hostname, sizeof(info->hostname) - 1) != 0) {
        snprintf(info->hostname, sizeof(info->hostname), "unknown");
    }
    info->node_hostnames = ingot_calloc((size_t)info->node_count, INGOT_TOPO_HOST_MAX,
                                        "node host names");
    if (info->node_hostnames == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    if (info->leader_comm != MPI_COMM_NULL) {
        INGOT_CHECK(INGOT_MPI_CALL("host names", MPI_Allgather, info->hostname, INGOT_TOPO_HOST_MAX,
                                   MPI_CHAR, info->node_hostnames, INGOT_TOPO_HOST_MAX, MPI_CHAR,
                                   info->leader_comm));
    }
    return INGOT_MPI_CALL("host names", MPI_Bcast, info->node_hostnames,
                          info->node_count * INGOT_TOPO_HOST_MAX, MPI_CHAR, 0, info->node_comm);
}

ingot_status_t ingot_topo_node_group(MPI_Comm comm, ingot_node_info_t *info_p)
{
    ingot_node_info_t info;
    memset(&info, 0, sizeof(info));
    info.node_comm = MPI_COMM_NULL;
    info.leader_comm = MPI_COMM_NULL;

    ingot_status_t st = node_split(comm, &info);
    if (st == INGOT_OK) {
        st = node_hostnames(&info);
    }
    if (st != INGOT_OK) {
        ingot_topo_node_release(&info);
        return st;
    }
    *info_p = info;
    return INGOT_OK;
}

void ingot_topo_node_release(ingot_node_info_t *info)
{
    if (info == NULL) {
        return;
    }
    if (info->node_comm != MPI_COMM_NULL && info->node_comm != 0) {
        MPI_Comm_free(&info->node_comm);
    }
    if (info->leader_comm != MPI_COMM_NULL && info->leader_comm != 0) {
        MPI_Comm_free(&info->leader_comm);
    }
    free(info->node_hostnames);
    info->node_hostnames = NULL;
}

const char *ingot_topo_node_hostname(const ingot_node_info_t *info, int node_id)
{
    if (info == NULL || info->node_hostnames == NULL || node_id < 0 ||
        node_id >= info->node_count) {
        return "";
    }
    return info->node_hostnames + (size_t)node_id * INGOT_TOPO_HOST_MAX;
}

ingot_status_t ingot_topo_node_gpu_union(const ingot_node_info_t *info, uint64_t mask,
                                         uint64_t *union_p)
{
    uint64_t all = 0;
    INGOT_CHECK(INGOT_MPI_CALL("visible GPUs of the node", MPI_Allreduce, &mask, &all, 1,
                               MPI_UINT64_T, MPI_BOR, info->node_comm));
    *union_p = all;
    return INGOT_OK;
}

ingot_status_t ingot_topo_node_plan_agree(const ingot_node_info_t *info, const ingot_plan_t *plan)
{
    uint64_t mine = ingot_topo_plan_digest(plan), lo = 0, hi = 0;
    INGOT_CHECK(INGOT_MPI_CALL("plan agreement", MPI_Allreduce, &mine, &lo, 1, MPI_UINT64_T,
                               MPI_MIN, info->node_comm));
    INGOT_CHECK(INGOT_MPI_CALL("plan agreement", MPI_Allreduce, &mine, &hi, 1, MPI_UINT64_T,
                               MPI_MAX, info->node_comm));
    if (lo != hi) {
        ingot_error("the %d ranks of node %d (%s) computed different placement plans (digest "
                    "%016llx here; expected equal on every rank): INGOT_TOPOLOGY_XML, INGOT_GPUS, "
                    "INGOT_INGEST_CORES or the allowed cpuset differ between them",
                    info->local_size, info->node_id, info->hostname, (unsigned long long)mine);
        return INGOT_ERR_MISMATCH;
    }
    return INGOT_OK;
}

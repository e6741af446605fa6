/*
 * ingot_topology_report() (include/ingot/topology.h): the plan of a node's ranks computed and
 * printed without a context, for ingot-topo. Offline (N ranks on --xml or this machine, no MPI)
 * or for the ranks launched (the context's own setup, rows gathered per node, leaders printing
 * in node order).
 */
#include "topology/topo.h"
#include "base/param.h"
#include "base/errors.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"

#include <stdlib.h>
#include <string.h>

/* One report: the caller's request and what was planned. */
typedef struct plan_report {
    const ingot_topology_report_params_t *prm;
    const ingot_topo_config_t *cfg;
    MPI_Comm comm;
    hwloc_bitmap_t allowed;        /* cpuset, or NULL */
    ingot_topo_setup_t *setup;     /* launched: this rank's node, plan and placement */
    ingot_topo_t *topo;            /* the node printed (the setup's when launched) */
    ingot_plan_t *plan;            /* its plan */
    ingot_placement_t *placements; /* one per local rank */
} plan_report_t;

static bool report_has(const plan_report_t *r, uint64_t field)
{
    return (r->prm->field_mask & field) != 0;
}

static const char *report_xml(const plan_report_t *r)
{
    return INGOT_PARAM_VALUE(r->prm, xml, INGOT_TOPOLOGY_REPORT_PARAM_FIELD_XML, NULL);
}

static ingot_status_t report_cpuset(plan_report_t *r)
{
    const char *list = r->prm->cpuset;
    if (!report_has(r, INGOT_TOPOLOGY_REPORT_PARAM_FIELD_CPUSET) || list == NULL) {
        return INGOT_OK;
    }
    r->allowed = hwloc_bitmap_alloc();
    if (r->allowed == NULL || hwloc_bitmap_list_sscanf(r->allowed, list) != 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "cpuset '%s': expected a CPU list such as '0-27,56-83'", list);
    }
    return INGOT_OK;
}

/* Offline: N ranks on the node of the XML or this machine, every row filled here. */
static ingot_status_t report_plan_offline(plan_report_t *r)
{
    const char *cuda = getenv("CUDA_VISIBLE_DEVICES");
    const char *xml = report_xml(r);
    uint64_t mask;
    ingot_plan_params_t p;
    INGOT_CHECK(ingot_topo_load(xml != NULL ? xml : r->cfg->topology_xml, &r->topo));
    INGOT_CHECK(ingot_topo_gpu_mask(r->topo, r->cfg->gpus, cuda, &mask));
    ingot_topo_plan_params_from_config(r->cfg, mask, &p);
    if (r->allowed != NULL) {
        p.field_mask |= INGOT_PLAN_PARAM_FIELD_ALLOWED_CPUSET;
        p.allowed_cpuset = r->allowed;
    }
    INGOT_CHECK(ingot_topo_plan(r->topo, r->prm->ranks_per_node, &p, &r->plan));
    r->placements = ingot_calloc((size_t)r->plan->local_size, sizeof(*r->placements), "placements");
    if (r->placements == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (int i = 0; i < r->plan->local_size; i++) {
        ingot_topo_placement_fill(r->topo, r->plan, NULL, i, cuda, &r->placements[i]);
    }
    return INGOT_OK;
}

/* Launched: the context's setup (launcher check, INGOT_BIND), rows gathered per node. */
static ingot_status_t report_plan_launched(plan_report_t *r)
{
    ingot_topo_setup_params_t p = {.field_mask = 0};
    if (report_xml(r) != NULL) {
        p.field_mask |= INGOT_TOPO_SETUP_PARAM_FIELD_XML;
        p.xml = report_xml(r);
    }
    if (r->allowed != NULL) {
        p.field_mask |= INGOT_TOPO_SETUP_PARAM_FIELD_ALLOWED_CPUSET;
        p.allowed_cpuset = r->allowed;
    }
    INGOT_CHECK(ingot_topo_setup_create(r->comm, r->cfg, &p, &r->setup));
    r->topo = r->setup->topo;
    r->plan = r->setup->plan;
    r->placements = ingot_calloc((size_t)r->plan->local_size, sizeof(*r->placements), "placements");
    int ok = r->placements != NULL, all = 0;
    INGOT_CHECK(INGOT_MPI_CALL("placements", MPI_Allreduce, &ok, &all, 1, MPI_INT, MPI_MIN,
                               r->comm));
    if (!all) {
        return INGOT_ERR_NO_MEMORY;
    }
    const ingot_placement_t *mine = &r->setup->placement;
    return INGOT_MPI_CALL("placements", MPI_Gather, mine, (int)sizeof(*mine), MPI_BYTE,
                          r->placements, (int)sizeof(*mine), MPI_BYTE, 0, r->setup->node.node_comm);
}

/* Node leaders print in node order, each after the previous one. */
static void report_print(const plan_report_t *r, FILE *stream)
{
    const ingot_node_info_t *node = r->setup != NULL ? &r->setup->node : NULL;
    int token = 0;
    if (node != NULL && node->local_rank != 0) {
        return;
    }
    if (node != NULL && node->node_id > 0) {
        MPI_Recv(&token, 1, MPI_INT, node->node_id - 1, 0, node->leader_comm, MPI_STATUS_IGNORE);
    }
    if (report_has(r, INGOT_TOPOLOGY_REPORT_PARAM_FIELD_FORMAT) &&
        r->prm->format == INGOT_TOPOLOGY_REPORT_JSON) {
        ingot_topo_print_json(stream, r->topo, r->plan, r->placements);
    } else {
        ingot_topo_print_table(stream, r->topo, r->plan, r->placements);
    }
    fflush(stream);
    if (node != NULL && node->node_id + 1 < node->node_count) {
        MPI_Send(&token, 1, MPI_INT, node->node_id + 1, 0, node->leader_comm);
    }
}

static void report_release(plan_report_t *r)
{
    free(r->placements);
    hwloc_bitmap_free(r->allowed);
    if (r->setup != NULL) {
        ingot_topo_setup_destroy(r->setup);
    } else {
        ingot_topo_plan_destroy(r->plan);
        ingot_topo_destroy(r->topo);
    }
}

ingot_status_t ingot_topology_report(const ingot_topology_report_params_t *params, FILE *stream)
{
    if (params == NULL || stream == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_topology_report: NULL argument");
    }
    plan_report_t r = {.prm = params, .comm = MPI_COMM_WORLD};
    bool offline = (params->field_mask & INGOT_TOPOLOGY_REPORT_PARAM_FIELD_RANKS_PER_NODE) != 0;
    if (offline && params->ranks_per_node < 1) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ranks per node %d: expected an integer >= 1",
                          params->ranks_per_node);
    }
    if (report_has(&r, INGOT_TOPOLOGY_REPORT_PARAM_FIELD_COMM)) {
        r.comm = params->comm;
    }
    INGOT_CHECK(ingot_topo_config(&r.cfg));
    ingot_status_t st = report_cpuset(&r);
    if (st == INGOT_OK) {
        st = offline ? report_plan_offline(&r) : report_plan_launched(&r);
    }
    if (st == INGOT_OK) {
        report_print(&r, stream);
    }
    report_release(&r);
    return st;
}

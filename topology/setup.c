/*
 * The whole topology step of ingot_init(), in one collective call: group the ranks by node,
 * load the node's topology, agree on the usable GPUs and the plan within each node, fill this
 * rank's placement, report launcher conflicts and bind when INGOT_BIND asks. Every step that can
 * fail on one rank is followed by an agreement over the communicator, so a failure returns on
 * every rank instead of leaving the others blocked in the next collective.
 */
#include "topology/topo.h"
#include "base/param.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/errors.h"
#include "base/status.h"
#include <stdlib.h>

/* Every topology step is agreed on by all ranks (a failure on one rank fails them all). */
static ingot_status_t setup_agree(MPI_Comm comm, ingot_status_t mine, const char *step)
{
    return ingot_mpi_agree(&comm, mine, step);
}

static ingot_status_t setup_plan(ingot_topo_setup_t *s, const ingot_topo_config_t *cfg,
                                 const ingot_topo_setup_params_t *params, uint64_t mask)
{
    ingot_plan_params_t p;
    ingot_topo_plan_params_from_config(cfg, mask, &p);
    if (params != NULL && (params->field_mask & INGOT_TOPO_SETUP_PARAM_FIELD_ALLOWED_CPUSET)) {
        p.field_mask |= INGOT_PLAN_PARAM_FIELD_ALLOWED_CPUSET;
        p.allowed_cpuset = params->allowed_cpuset;
    }
    return ingot_topo_plan(s->topo, s->node.local_size, &p, &s->plan);
}

/* One warning per node (its first local rank) when local ranks share GPUs. */
static void setup_sharing_note(const ingot_topo_setup_t *s)
{
    const ingot_plan_t *plan = s->plan;
    if (s->node.local_rank != 0 || plan->gpus_used == 0 || plan->local_size <= plan->gpus_used) {
        return;
    }
    int most = 0;
    for (int r = 0; r < plan->local_size; r++) {
        most = plan->ranks[r].gpu_ranks > most ? plan->ranks[r].gpu_ranks : most;
    }
    ingot_warn("%d local ranks share %d GPU%s on %s (up to %d ranks per GPU); "
               "INGOT_GPU_SHARING=error refuses more ranks than GPUs",
               plan->local_size, plan->gpus_used, plan->gpus_used == 1 ? "" : "s",
               s->topo->hostname, most);
}

/* This rank's placement: the launcher check, then binding if INGOT_BIND asks for it. */
static ingot_status_t setup_placement(ingot_topo_setup_t *s, const ingot_topo_config_t *cfg,
                                      const char *cuda)
{
    ingot_placement_t *p = &s->placement;
    bool conflict;
    int r = s->node.local_rank;
    ingot_topo_placement_fill(s->topo, s->plan, &s->node, r, cuda, p);
    setup_sharing_note(s);
    INGOT_CHECK(ingot_topo_launcher_check(s->topo, s->plan, r, cuda, p->conflict,
                                          sizeof(p->conflict), &conflict));
    if (conflict) {
        p->flags |= INGOT_PLACEMENT_FLAG_LAUNCHER_CONFLICT;
        ingot_warn("local rank %d: the launcher's choice differs from the placement plan: %s", r,
                   p->conflict);
    }
    if (cfg->bind != INGOT_TOPO_BIND_NONE) {
        INGOT_CHECK(ingot_topo_bind(s->topo, s->plan, r, cfg->bind));
        p->flags |= INGOT_PLACEMENT_FLAG_BOUND;
    }
    return INGOT_OK;
}

static ingot_status_t setup_steps(ingot_topo_setup_t *s, MPI_Comm comm,
                                  const ingot_topo_config_t *cfg,
                                  const ingot_topo_setup_params_t *params)
{
    const char *cuda = getenv("CUDA_VISIBLE_DEVICES");
    const char *xml = INGOT_PARAM_VALUE(params, xml, INGOT_TOPO_SETUP_PARAM_FIELD_XML,
                                        cfg->topology_xml);
    uint64_t mask = 0;
    INGOT_CHECK(ingot_topo_node_group(comm, &s->node));
    INGOT_CHECK(setup_agree(comm, ingot_topo_load(xml, &s->topo), "topology discovery"));
    INGOT_CHECK(setup_agree(comm, ingot_topo_gpu_mask(s->topo, cfg->gpus, cuda, &mask),
                            "GPU selection"));
    INGOT_CHECK(ingot_topo_node_gpu_union(&s->node, mask, &mask));
    INGOT_CHECK(setup_agree(comm, setup_plan(s, cfg, params, mask), "placement planning"));
    INGOT_CHECK(setup_agree(comm, ingot_topo_node_plan_agree(&s->node, s->plan), "plan agreement"));
    return setup_agree(comm, setup_placement(s, cfg, cuda), "placement");
}

ingot_status_t ingot_topo_setup_create(MPI_Comm comm, const ingot_topo_config_t *cfg,
                                       const ingot_topo_setup_params_t *params,
                                       ingot_topo_setup_t **setup_p)
{
    ingot_topo_setup_t *s = ingot_calloc(1, sizeof(*s), "topology setup");
    ingot_status_t st = setup_agree(comm, s != NULL ? INGOT_OK : INGOT_ERR_NO_MEMORY,
                                    "topology setup");
    if (st != INGOT_OK) {
        free(s);
        return st;
    }
    /* s != NULL: setup_agree() returns the worst status of all ranks, never OK when ours is not.
     * NOLINTNEXTLINE(clang-analyzer-core.NullDereference) */
    s->node.node_comm = MPI_COMM_NULL;
    s->node.leader_comm = MPI_COMM_NULL;
    st = setup_steps(s, comm, cfg, params);
    if (st != INGOT_OK) {
        ingot_topo_setup_destroy(s);
        return st;
    }
    ingot_info("placement: node %d (%s) local rank %d/%d, GPU %d, NIC %s, cpuset %s",
               s->placement.node_id, s->placement.hostname, s->placement.local_rank,
               s->placement.local_size, s->placement.gpu_index,
               s->placement.nic_name[0] != '\0' ? s->placement.nic_name : "none",
               s->placement.cpuset);
    *setup_p = s;
    return INGOT_OK;
}

void ingot_topo_setup_destroy(ingot_topo_setup_t *s)
{
    if (s == NULL) {
        return;
    }
    ingot_topo_plan_destroy(s->plan);
    ingot_topo_destroy(s->topo);
    ingot_topo_node_release(&s->node);
    free(s);
}

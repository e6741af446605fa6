/*
 * ingot-topo: the node's topology and the placement plan of its local ranks, as a table or as
 * JSON. Plans without launching ranks (--ranks-per-node N), for any machine (--xml FILE), or,
 * under mpirun/srun, for the ranks actually launched (each rank checks the launcher's binding).
 */
#include "topology/topo.h"
#include "base/config.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/errors.h"
#include "base/status.h"
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_USAGE 2

typedef struct app_opts {
    const char *xml;
    const char *cpuset;
    int         ranks_per_node; /* 0: the ranks launched */
    bool        json;
} app_opts_t;

typedef struct app {
    app_opts_t            opt;
    const ingot_topo_config_t *cfg;
    bool                  mpi;
    hwloc_bitmap_t        allowed;    /* --cpuset */
    ingot_topo_setup_t   *setup;      /* under MPI: this rank's node, plan and placement */
    ingot_topo_t         *topo;       /* the node printed (the setup's under MPI) */
    ingot_plan_t         *plan;       /* its plan */
    ingot_placement_t    *placements; /* one per local rank */
} app_t;

static void app_usage(FILE *out)
{
    fprintf(out,
            "usage: ingot-topo [--xml FILE] [--ranks-per-node N] [--cpuset LIST] [--json]\n"
            "  --xml FILE           plan for the node described by an hwloc XML export\n"
            "                       (default: INGOT_TOPOLOGY_XML, else this machine)\n"
            "  --ranks-per-node N   plan for N local ranks without launching them\n"
            "                       (default: the ranks of this node under mpirun/srun, else 1)\n"
            "  --cpuset LIST        plan within these CPUs only (\"0-27,56-83\"), as a launcher would\n"
            "  --json               print JSON instead of a table\n"
            "Policy comes from INGOT_PLACEMENT, INGOT_GPUS, INGOT_GPU_SHARING, INGOT_INGEST_CORES\n"
            "and CUDA_VISIBLE_DEVICES; INGOT_BIND binds launched ranks (see ingot-info -c).\n");
}

static int app_parse(int argc, char **argv, app_opts_t *o)
{
    static const struct option longopts[] = {
        {"xml", required_argument, NULL, 'x'},   {"ranks-per-node", required_argument, NULL, 'n'},
        {"cpuset", required_argument, NULL, 'c'}, {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0}};
    int c;
    while ((c = getopt_long(argc, argv, "x:n:c:jh", longopts, NULL)) != -1) {
        char *end;
        switch (c) {
        case 'x': o->xml = optarg; break;
        case 'c': o->cpuset = optarg; break;
        case 'j': o->json = true; break;
        case 'n':
            o->ranks_per_node = (int)strtol(optarg, &end, 10);
            if (*end != '\0' || o->ranks_per_node < 1) {
                fprintf(stderr, "ingot-topo: --ranks-per-node '%s': expected an integer >= 1\n", optarg);
                return EXIT_USAGE;
            }
            break;
        case 'h': app_usage(stdout); exit(EXIT_SUCCESS);
        default: app_usage(stderr); return EXIT_USAGE;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ingot-topo: unexpected argument '%s'\n", argv[optind]);
        return EXIT_USAGE;
    }
    return 0;
}

static ingot_status_t app_cpuset(app_t *a)
{
    if (a->opt.cpuset == NULL) {
        return INGOT_OK;
    }
    a->allowed = hwloc_bitmap_alloc();
    if (a->allowed == NULL || hwloc_bitmap_list_sscanf(a->allowed, a->opt.cpuset) != 0) {
        ingot_error("--cpuset '%s': expected a CPU list such as '0-27,56-83'", a->opt.cpuset);
        return INGOT_ERR_INVALID_PARAM;
    }
    return INGOT_OK;
}

/* Planning without MPI: N ranks on the node of --xml or this machine, every row filled here. */
static ingot_status_t app_plan_offline(app_t *a)
{
    const char         *cuda = getenv("CUDA_VISIBLE_DEVICES");
    uint64_t            mask;
    ingot_plan_params_t p;
    INGOT_CHECK(ingot_topo_load(a->opt.xml != NULL ? a->opt.xml : a->cfg->topology_xml, &a->topo));
    INGOT_CHECK(ingot_topo_gpu_mask(a->topo, a->cfg->gpus, cuda, &mask));
    ingot_topo_plan_params_from_config(a->cfg, mask, &p);
    if (a->allowed != NULL) {
        p.field_mask     |= INGOT_PLAN_PARAM_FIELD_ALLOWED_CPUSET;
        p.allowed_cpuset  = a->allowed;
    }
    INGOT_CHECK(ingot_topo_plan(a->topo, a->opt.ranks_per_node, &p, &a->plan));
    a->placements = ingot_calloc((size_t)a->plan->local_size, sizeof(*a->placements), "placements");
    if (a->placements == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    for (int r = 0; r < a->plan->local_size; r++) {
        ingot_topo_placement_fill(a->topo, a->plan, NULL, r, cuda, &a->placements[r]);
    }
    return INGOT_OK;
}

/* Under mpirun/srun: the context's setup (launcher check, INGOT_BIND), rows gathered per node. */
static ingot_status_t app_plan_launched(app_t *a)
{
    ingot_topo_setup_params_t p = {.field_mask = 0};
    if (a->opt.xml != NULL) {
        p.field_mask |= INGOT_TOPO_SETUP_PARAM_FIELD_XML;
        p.xml         = a->opt.xml;
    }
    if (a->allowed != NULL) {
        p.field_mask     |= INGOT_TOPO_SETUP_PARAM_FIELD_ALLOWED_CPUSET;
        p.allowed_cpuset  = a->allowed;
    }
    INGOT_CHECK(ingot_topo_setup_create(MPI_COMM_WORLD, a->cfg, &p, &a->setup));
    a->topo = a->setup->topo;
    a->plan = a->setup->plan;
    a->placements = ingot_calloc((size_t)a->plan->local_size, sizeof(*a->placements), "placements");
    int ok = a->placements != NULL, all = 0;
    INGOT_CHECK(INGOT_MPI_CALL("placements", MPI_Allreduce, &ok, &all, 1, MPI_INT, MPI_MIN,
                               MPI_COMM_WORLD));
    if (!all) {
        return INGOT_ERR_NO_MEMORY;
    }
    const ingot_placement_t *mine = &a->setup->placement;
    return INGOT_MPI_CALL("placements", MPI_Gather, mine, (int)sizeof(*mine), MPI_BYTE,
                          a->placements, (int)sizeof(*mine), MPI_BYTE, 0, a->setup->node.node_comm);
}

/* Node leaders print in node order, each after the previous one. */
static void app_print(app_t *a)
{
    const ingot_node_info_t *node  = a->mpi ? &a->setup->node : NULL;
    int                      token = 0;
    if (node != NULL && node->local_rank != 0) {
        return;
    }
    if (node != NULL && node->node_id > 0) {
        MPI_Recv(&token, 1, MPI_INT, node->node_id - 1, 0, node->leader_comm, MPI_STATUS_IGNORE);
    }
    if (a->opt.json) {
        ingot_topo_print_json(stdout, a->topo, a->plan, a->placements);
    } else {
        ingot_topo_print_table(stdout, a->topo, a->plan, a->placements);
    }
    fflush(stdout);
    if (node != NULL && node->node_id + 1 < node->node_count) {
        MPI_Send(&token, 1, MPI_INT, node->node_id + 1, 0, node->leader_comm);
    }
}

int main(int argc, char **argv)
{
    app_t a;
    memset(&a, 0, sizeof(a));
    int rc = app_parse(argc, argv, &a.opt);
    if (rc != 0) {
        return rc;
    }
    if (ingot_topo_config(&a.cfg) != INGOT_OK) {
        return EXIT_FAILURE; /* the parser named the variable */
    }
    a.mpi = a.opt.ranks_per_node == 0;
    if (a.mpi && MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "ingot-topo: MPI_Init failed\n");
        return EXIT_FAILURE;
    }
    ingot_status_t st = app_cpuset(&a);
    if (st == INGOT_OK) {
        st = a.mpi ? app_plan_launched(&a) : app_plan_offline(&a);
    }
    if (st == INGOT_OK) {
        app_print(&a);
    } else {
        fprintf(stderr, "ingot-topo: %s\n", ingot_status_string(st));
    }
    free(a.placements);
    hwloc_bitmap_free(a.allowed);
    if (a.mpi) {
        ingot_topo_setup_destroy(a.setup);
        MPI_Finalize();
    } else {
        ingot_topo_plan_destroy(a.plan);
        ingot_topo_destroy(a.topo);
    }
    return st == INGOT_OK ? EXIT_SUCCESS : EXIT_FAILURE;
}

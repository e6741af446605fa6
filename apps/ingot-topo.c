/*
 * ingot-topo: the node's topology and the placement plan of its local ranks, as a table or as
 * JSON. Plans without launching ranks (--ranks-per-node N), for any machine (--xml FILE), or,
 * under mpirun/srun, for the ranks actually launched (each rank checks the launcher's binding).
 */
#include "topology/topo.h"
#include "runtime/base/config.h"
#include "runtime/base/log.h"
#include "runtime/base/mpi.h"
#include "runtime/base/status.h"
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
    app_opts_t           opt;
    const ingot_config_t *cfg;
    ingot_topo_t         *topo;
    ingot_plan_t         *plan;
    ingot_node_info_t     node;
    bool                  mpi;
    hwloc_bitmap_t        allowed;
    ingot_placement_t    *placements;
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

/* Every rank of the node learns the worst status, so no rank waits in a collective for one
 * that failed. */
static ingot_status_t app_agree(app_t *a, ingot_status_t st)
{
    int mine = (int)st, worst = (int)st;
    if (!a->mpi) {
        return st;
    }
    if (MPI_Allreduce(&mine, &worst, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD) != MPI_SUCCESS) {
        return INGOT_ERR_MPI;
    }
    return (ingot_status_t)worst;
}

static ingot_status_t app_load(app_t *a)
{
    const char *xml = a->opt.xml != NULL ? a->opt.xml : a->cfg->topology_xml;
    INGOT_CHECK(ingot_topo_load(xml, &a->topo));
    if (a->opt.cpuset != NULL) {
        a->allowed = hwloc_bitmap_alloc();
        if (a->allowed == NULL || hwloc_bitmap_list_sscanf(a->allowed, a->opt.cpuset) != 0) {
            ingot_error("--cpuset '%s': expected a CPU list such as '0-27,56-83'", a->opt.cpuset);
            return INGOT_ERR_INVALID_PARAM;
        }
    }
    return INGOT_OK;
}

static ingot_status_t app_plan(app_t *a, int local_size, uint64_t gpu_mask)
{
    ingot_plan_params_t p;
    ingot_topo_plan_params_from_config(a->cfg, gpu_mask, &p);
    if (a->allowed != NULL) {
        p.field_mask     |= INGOT_PLAN_PARAM_FIELD_ALLOWED_CPUSET;
        p.allowed_cpuset  = a->allowed;
    }
    return ingot_topo_plan(a->topo, local_size, &p, &a->plan);
}

/* This rank's own row: the launcher check and, if INGOT_BIND asks, the binding. */
static ingot_status_t app_own_placement(app_t *a, const char *cuda, ingot_placement_t *p)
{
    bool conflict = false;
    int  r        = a->node.local_rank;
    ingot_topo_placement_fill(a->topo, a->plan, &a->node, r, cuda, p);
    INGOT_CHECK(ingot_topo_launcher_check(a->topo, a->plan, r, cuda, p->conflict,
                                          sizeof(p->conflict), &conflict));
    if (conflict) {
        p->flags |= INGOT_PLACEMENT_FLAG_LAUNCHER_CONFLICT;
        ingot_warn("local rank %d: launcher and plan disagree: %s", r, p->conflict);
    }
    if (a->cfg->bind != INGOT_TOPO_BIND_NONE) {
        INGOT_CHECK(ingot_topo_bind(a->topo, a->plan, r, (ingot_topo_bind_mode_t)a->cfg->bind));
        p->flags |= INGOT_PLACEMENT_FLAG_BOUND;
    }
    return INGOT_OK;
}

static ingot_status_t app_placements(app_t *a)
{
    const char *cuda = getenv("CUDA_VISIBLE_DEVICES");
    a->placements = calloc((size_t)a->plan->local_size, sizeof(*a->placements));
    if (a->placements == NULL) {
        ingot_error("out of memory for %d placements", a->plan->local_size);
        return INGOT_ERR_NO_MEMORY;
    }
    if (!a->mpi) {
        for (int r = 0; r < a->plan->local_size; r++) {
            ingot_topo_placement_fill(a->topo, a->plan, NULL, r, cuda, &a->placements[r]);
        }
        return INGOT_OK;
    }
    ingot_placement_t mine;
    INGOT_CHECK(app_own_placement(a, cuda, &mine));
    return INGOT_MPI_CALL("placements", MPI_Gather, &mine, (int)sizeof(mine), MPI_BYTE,
                          a->placements, (int)sizeof(mine), MPI_BYTE, 0, a->node.node_comm);
}

/* Node leaders print in node order, each after the previous one. */
static void app_print(app_t *a)
{
    int token = 0;
    if (a->mpi && a->node.local_rank != 0) {
        return;
    }
    if (a->mpi && a->node.node_id > 0) {
        MPI_Recv(&token, 1, MPI_INT, a->node.node_id - 1, 0, a->node.leader_comm, MPI_STATUS_IGNORE);
    }
    if (a->opt.json) {
        ingot_topo_print_json(stdout, a->topo, a->plan, a->placements);
    } else {
        ingot_topo_print_table(stdout, a->topo, a->plan, a->placements);
    }
    fflush(stdout);
    if (a->mpi && a->node.node_id + 1 < a->node.node_count) {
        MPI_Send(&token, 1, MPI_INT, a->node.node_id + 1, 0, a->node.leader_comm);
    }
}

static ingot_status_t app_run(app_t *a)
{
    int local_size = a->opt.ranks_per_node > 0 ? a->opt.ranks_per_node
                                               : a->mpi ? a->node.local_size : 1;
    uint64_t       mask = 0;
    ingot_status_t st   = app_agree(a, app_load(a));
    if (st == INGOT_OK) {
        st = app_agree(a, ingot_topo_gpu_mask(a->topo, a->cfg->gpus,
                                              getenv("CUDA_VISIBLE_DEVICES"), &mask));
    }
    if (st == INGOT_OK && a->mpi) {
        st = ingot_topo_node_gpu_union(&a->node, mask, &mask);
    }
    if (st == INGOT_OK) {
        st = app_agree(a, app_plan(a, local_size, mask));
    }
    if (st == INGOT_OK && a->mpi) {
        st = app_agree(a, ingot_topo_node_plan_agree(&a->node, a->plan));
    }
    if (st == INGOT_OK) {
        st = app_agree(a, app_placements(a));
    }
    if (st == INGOT_OK) {
        app_print(a);
    }
    return st;
}

int main(int argc, char **argv)
{
    app_t a;
    memset(&a, 0, sizeof(a));
    int rc = app_parse(argc, argv, &a.opt);
    if (rc != 0) {
        return rc;
    }
    if (ingot_config_global(&a.cfg) != INGOT_OK) {
        return EXIT_FAILURE; /* the parser named the variable */
    }
    a.mpi = a.opt.ranks_per_node == 0;
    if (a.mpi && MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "ingot-topo: MPI_Init failed\n");
        return EXIT_FAILURE;
    }
    ingot_status_t st = a.mpi ? ingot_topo_node_group(MPI_COMM_WORLD, &a.node) : INGOT_OK;
    if (st == INGOT_OK) {
        st = app_run(&a);
    }
    if (st != INGOT_OK) {
        fprintf(stderr, "ingot-topo: %s\n", ingot_status_string(st));
    }
    free(a.placements);
    ingot_topo_plan_destroy(a.plan);
    hwloc_bitmap_free(a.allowed);
    ingot_topo_destroy(a.topo);
    if (a.mpi) {
        ingot_topo_node_release(&a.node);
        MPI_Finalize();
    }
    return st == INGOT_OK ? EXIT_SUCCESS : EXIT_FAILURE;
}

/*
 * ingot-topo: the node's topology and the placement plan of its local ranks, as a table or as
 * JSON. Plans without launching ranks (--ranks-per-node N), for any machine (--xml FILE), or,
 * under mpirun/srun, for the ranks actually launched (each rank checks the launcher's binding).
 * The work is ingot_topology_report() (include/ingot/topology.h); this file is its command line.
 */
#include "common/cli.h"
#include <ingot/config.h>
#include <ingot/topology.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#define EXIT_USAGE 2

static void app_usage(FILE *out)
{
    fprintf(
        out,
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

static int app_ranks(const char *arg, ingot_topology_report_params_t *p)
{
    char *end;
    p->ranks_per_node = (int)strtol(arg, &end, 10);
    if (*end != '\0' || p->ranks_per_node < 1) {
        fprintf(stderr, "ingot-topo: --ranks-per-node '%s': expected an integer >= 1\n", arg);
        return EXIT_USAGE;
    }
    p->field_mask |= INGOT_TOPOLOGY_REPORT_PARAM_FIELD_RANKS_PER_NODE;
    return 0;
}

static int app_parse(int argc, char **argv, ingot_topology_report_params_t *p)
{
    static const struct option longopts[] = {
        {"xml", required_argument, NULL, 'x'},    {"ranks-per-node", required_argument, NULL, 'n'},
        {"cpuset", required_argument, NULL, 'c'}, {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0}};
    int c, rc = 0;
    while (rc == 0 && (c = getopt_long(argc, argv, "x:n:c:jh", longopts, NULL)) != -1) {
        switch (c) {
        case 'x':
            p->xml = optarg;
            p->field_mask |= INGOT_TOPOLOGY_REPORT_PARAM_FIELD_XML;
            break;
        case 'c':
            p->cpuset = optarg;
            p->field_mask |= INGOT_TOPOLOGY_REPORT_PARAM_FIELD_CPUSET;
            break;
        case 'j':
            p->format = INGOT_TOPOLOGY_REPORT_JSON;
            p->field_mask |= INGOT_TOPOLOGY_REPORT_PARAM_FIELD_FORMAT;
            break;
        case 'n': rc = app_ranks(optarg, p); break;
        case 'h': app_usage(stdout); exit(EXIT_SUCCESS);
        default: app_usage(stderr); return EXIT_USAGE;
        }
    }
    if (rc == 0 && optind < argc) {
        fprintf(stderr, "ingot-topo: unexpected argument '%s'\n", argv[optind]);
        return EXIT_USAGE;
    }
    return rc;
}

int main(int argc, char **argv)
{
    ingot_topology_report_params_t p = {.field_mask = 0};
    cli_quiet_begin(); /* every rank parses; a usage error is said once */
    int rc = app_parse(argc, argv, &p);
    cli_quiet_end();
    if (rc != 0) {
        return rc;
    }
    if (ingot_config_check() != INGOT_OK) {
        return EXIT_FAILURE; /* the parser named the variable */
    }
    bool launched = !(p.field_mask & INGOT_TOPOLOGY_REPORT_PARAM_FIELD_RANKS_PER_NODE);
    if (launched && MPI_Init(&argc, &argv) != MPI_SUCCESS) {
        fprintf(stderr, "ingot-topo: MPI_Init failed\n");
        return EXIT_FAILURE;
    }
    ingot_status_t st = ingot_topology_report(&p, stdout);
    if (st != INGOT_OK) {
        fprintf(stderr, "ingot-topo: %s\n", ingot_status_string(st));
    }
    if (launched) {
        MPI_Finalize();
    }
    return st == INGOT_OK ? EXIT_SUCCESS : EXIT_FAILURE;
}

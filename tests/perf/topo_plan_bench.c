/*
 * Placement plan benchmark (run by hand, not by ctest): the time to plan 8 and 72 local ranks on
 * an XML topology, against the floor of hwloc loading that same XML; and live discovery on this
 * machine against hwloc's own live load. Each figure: median, min and max over the repetitions
 * of the mean time of a batch of calls.
 *
 *   topo_plan_bench [XML [REPS [BATCH]]]   (default: the DGX-like fixture, 11, 20)
 */
#include "topology/topo.h"
#include "base/config.h"
#include "base/time.h"
#include <stdlib.h>
#include <string.h>

#define DEFAULT_XML   INGOT_TEST_SRCDIR "/tests/fixtures/topology/dgx-h100.xml"
#define DEFAULT_REPS  11
#define DEFAULT_BATCH 20
#define MAX_REPS      101

typedef void (*bench_fn_t)(void *arg);

typedef struct stats {
    double median, min, max; /* microseconds per call */
} stats_t;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static stats_t bench(bench_fn_t fn, void *arg, int reps, int batch)
{
    double t[MAX_REPS];
    fn(arg); /* warm-up */
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = ingot_time_ns();
        for (int b = 0; b < batch; b++) {
            fn(arg);
        }
        t[r] = (double)(ingot_time_ns() - t0) / batch / INGOT_NSEC_PER_USEC;
    }
    qsort(t, (size_t)reps, sizeof(double), cmp_double);
    return (stats_t){t[reps / 2], t[0], t[reps - 1]};
}

static void hwloc_load_only(void *arg)
{
    hwloc_topology_t hw;
    hwloc_topology_init(&hw);
    hwloc_topology_set_io_types_filter(hw, HWLOC_TYPE_FILTER_KEEP_IMPORTANT);
    if (arg != NULL) {
        hwloc_topology_set_xml(hw, arg);
    }
    if (hwloc_topology_load(hw) != 0) {
        fprintf(stderr, "hwloc cannot load %s\n", arg != NULL ? (const char *)arg : "this machine");
        exit(1);
    }
    hwloc_topology_destroy(hw);
}

static void ingot_load(void *arg)
{
    ingot_topo_t *topo;
    if (ingot_topo_load(arg, &topo) != INGOT_OK) {
        exit(1);
    }
    ingot_topo_destroy(topo);
}

typedef struct plan_arg {
    const ingot_topo_t *topo;
    int ranks;
} plan_arg_t;

static void plan_only(void *arg)
{
    plan_arg_t *pa = arg;
    ingot_plan_t *plan;
    ingot_plan_params_t p = {.field_mask = INGOT_PLAN_PARAM_FIELD_SHARING,
                             .sharing = INGOT_TOPO_SHARING_SHARE};
    if (ingot_topo_plan(pa->topo, pa->ranks, &p, &plan) != INGOT_OK) {
        exit(1);
    }
    ingot_topo_plan_destroy(plan);
}

static void row(const char *what, stats_t s, double floor)
{
    printf("%-34s %10.1f %10.1f %10.1f %8.3f\n", what, s.median, s.min, s.max, s.median / floor);
}

int main(int argc, char **argv)
{
    const char *xml = argc > 1 ? argv[1] : DEFAULT_XML;
    int reps = argc > 2 ? atoi(argv[2]) : DEFAULT_REPS;
    int batch = argc > 3 ? atoi(argv[3]) : DEFAULT_BATCH;
    const ingot_topo_config_t *cfg;
    ingot_topo_t *topo;
    if (reps < 3 || reps > MAX_REPS || batch < 1 || ingot_topo_config(&cfg) != INGOT_OK ||
        ingot_topo_load(xml, &topo) != INGOT_OK) {
        fprintf(stderr, "usage: topo_plan_bench [XML [REPS (3-%d) [BATCH]]]\n", MAX_REPS);
        return 2;
    }
    printf("# topo_plan_bench: %s (%d PUs, %d GPUs, %d NICs); hwloc %s; %d reps x %d calls\n", xml,
           topo->npus, topo->ngpus, topo->nnics, HWLOC_VERSION, reps, batch);
    printf("%-34s %10s %10s %10s %8s\n", "what", "median", "min", "max", "ratio");
    printf("%-34s %10s %10s %10s %8s\n", "", "us", "us", "us", "floor");
    stats_t floor = bench(hwloc_load_only, (void *)xml, reps, batch);
    row("hwloc load XML (floor)", floor, floor.median);
    row("ingot_topo_load XML", bench(ingot_load, (void *)xml, reps, batch), floor.median);
    plan_arg_t p8 = {topo, 8}, p72 = {topo, 72};
    row("ingot_topo_plan 8 ranks", bench(plan_only, &p8, reps, batch), floor.median);
    row("ingot_topo_plan 72 ranks", bench(plan_only, &p72, reps, batch), floor.median);
    stats_t live = bench(hwloc_load_only, NULL, reps, 1);
    row("hwloc live discovery (floor)", live, live.median);
    row("ingot_topo_load live", bench(ingot_load, NULL, reps, 1), live.median);
    ingot_topo_destroy(topo);
    return 0;
}

/* ingot-allreduce-bench's command line: nccl-tests' sweep options, the overlap options, each value
 * checked strictly (a bad one names the option and the value, exit 2), the usage text. */
#include "allreduce-bench/arb.h"
#include "common/cli.h"

#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#define ARGS_MIN_BYTES   8
#define ARGS_MAX_BYTES   (256ull << 20)
#define ARGS_FACTOR      2
#define ARGS_ITERS       20
#define ARGS_WARMUP      5
#define ARGS_STEPS       20
#define ARGS_FLOAT_BYTES 4
#define ARGS_MAX_COUNT   ((uint64_t)INT_MAX) /* MPI_Allreduce takes an int count */
#define ARGS_MAX_FACTOR  1024
#define ARGS_FORWARD_MAX 0.99 /* a forward pass is not the whole step */

/* Options of one mode only: an option of the other mode is an error, not silently ignored. */
#define ARGS_SWEEP_ONLY   1
#define ARGS_OVERLAP_ONLY 2

/* clang-format off */
enum {
    O_BACKEND = 256,
    O_OVERLAP,
    O_STEPS,
    O_COMPUTE,
    O_FORWARD,
    O_READY_BY,
    O_MANIFEST,
    O_BATCH,
    O_JSON
};

static const struct option arb_options[] = {
    {"minbytes", 1, 0, 'b'}, {"maxbytes", 1, 0, 'e'}, {"stepfactor", 1, 0, 'f'},
    {"iters", 1, 0, 'n'}, {"warmup_iters", 1, 0, 'w'}, {"backend", 1, 0, O_BACKEND},
    {"overlap", 0, 0, O_OVERLAP}, {"steps", 1, 0, O_STEPS}, {"compute-ms", 1, 0, O_COMPUTE},
    {"forward", 1, 0, O_FORWARD}, {"ready-by", 1, 0, O_READY_BY},
    {"manifest", 1, 0, O_MANIFEST}, {"batch", 1, 0, O_BATCH}, {"json", 1, 0, O_JSON},
    {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
/* clang-format on */

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: " ARB_TOOL " [sweep options] | --overlap [overlap options]  (under mpirun)\n"
        "All-reduce of float32 through ingot's public API, as nccl-tests' all_reduce_perf,\n"
        "against MPI_Allreduce on the same buffers; or a ResNet-50 gradient set overlapped\n"
        "with an emulated training step.\n"
        "sweep (default):\n"
        "  -b, --minbytes SIZE       smallest size (default 8)\n"
        "  -e, --maxbytes SIZE       largest size (default 256MiB)\n"
        "  -f, --stepfactor N        size multiplier between rows (default 2)\n"
        "  -n, --iters N             timed iterations per size and mode (default 20)\n"
        "  -w, --warmup_iters N      untimed iterations before them (default 5)\n"
        "--overlap:\n"
        "  --steps N                 training steps measured (default 20)\n"
        "  --forward F               fraction of the compute that is the forward pass, which\n"
        "                            no reduction can overlap, 0 to 0.99 (default 0.333:\n"
        "                            DDP's step;\n"
        "                            0: the whole compute step makes gradients ready)\n"
        "  --ready-by macs|params    backward's time per tensor: its layer's multiply-adds\n"
        "                            (default, as a real backward) or its size\n"
        "  --compute-ms MS           emulated compute per step (default: the all-reduce\n"
        "                            time T_ar, measured first)\n"
        "  --manifest FILE           a live loader over this manifest, one batch per step\n"
        "  --batch N                 its global batch (default 64 * ranks)\n"
        "both:\n"
        "  --backend auto|mpi|nccl   the communicator's backend (default INGOT_COMM_BACKEND)\n"
        "  --json FILE               the results as one JSON object (rank 0; '-' is stdout)\n"
        "  -h, --help                this text\n"
        "Sizes take the syntax of every INGOT_* size: K or KiB = 1024, KB = 1000 (64M, 1GiB).\n"
        "Buffers come from ingot_comm_buffer_alloc: device memory on nccl (no MPI_Allreduce\n"
        "reference there: this MPI is not CUDA-aware), host memory on mpi.\n"
        "Exit status: 0; 1 when an ingot call fails or a result is wrong; 2 for a bad option.\n");
}

static ingot_comm_backend_t parse_backend(const char *s)
{
    static const ingot_comm_backend_t all[] = {INGOT_COMM_BACKEND_AUTO, INGOT_COMM_BACKEND_MPI,
                                               INGOT_COMM_BACKEND_NCCL};
    for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
        if (strcmp(s, ingot_comm_backend_name(all[i])) == 0) {
            return all[i];
        }
    }
    cli_bad("--backend", s, "is not one of auto, mpi, nccl");
    return INGOT_COMM_BACKEND_AUTO;
}

/* The sweep's options; returns 0 when @p o is not one of them. */
static int parse_sweep(int o, arb_args_t *a)
{
    switch (o) {
    case 'b': a->min_bytes = cli_size("-b", optarg); break;
    case 'e': a->max_bytes = cli_size("-e", optarg); break;
    case 'f': a->factor = cli_u64("-f", optarg, 2, ARGS_MAX_FACTOR); break;
    case 'n': a->iters = cli_u64("-n", optarg, 1, UINT64_MAX); break;
    case 'w': a->warmup = cli_u64("-w", optarg, 0, UINT64_MAX); break;
    default: return 0;
    }
    return 1;
}

/* The overlap mode's options; returns 0 when @p o is not one of them. */
static int parse_overlap(int o, arb_args_t *a)
{
    switch (o) {
    case O_STEPS: a->steps = cli_u64("--steps", optarg, 1, UINT64_MAX); break;
    case O_COMPUTE: a->compute_ms = cli_real("--compute-ms", optarg, 0, DBL_MAX); break;
    case O_FORWARD: a->forward = cli_real("--forward", optarg, 0, ARGS_FORWARD_MAX); break;
    case O_READY_BY:
        if (strcmp(optarg, "macs") != 0 && strcmp(optarg, "params") != 0) {
            cli_bad("--ready-by", optarg, "is not macs or params");
        }
        a->ready_by_params = strcmp(optarg, "params") == 0;
        break;
    case O_MANIFEST: a->manifest = optarg; break;
    case O_BATCH: a->batch = cli_u64("--batch", optarg, 1, UINT64_MAX); break;
    default: return 0;
    }
    return 1;
}

/* The sizes: at least one float32 each, -b <= -e, counts MPI_Allreduce can take. */
static void check_sizes(const arb_args_t *a)
{
    char b[32], e[32];
    snprintf(b, sizeof(b), "%llu", (unsigned long long)a->min_bytes);
    snprintf(e, sizeof(e), "%llu", (unsigned long long)a->max_bytes);
    if (a->min_bytes < ARGS_FLOAT_BYTES) {
        cli_bad("-b", b, "is smaller than one float32 (4 bytes)");
    }
    if (a->max_bytes < a->min_bytes) {
        fprintf(stderr, ARB_TOOL ": -e '%s' is smaller than -b '%s'\n", e, b);
        exit(ARB_EXIT_USAGE);
    }
    if (a->max_bytes / ARGS_FLOAT_BYTES > ARGS_MAX_COUNT) {
        cli_bad("-e", e, "is more float32 elements than MPI_Allreduce counts (2^31 - 1)");
    }
}

static void check_mode(const arb_args_t *a, int given)
{
    if (!a->overlap && (given & ARGS_OVERLAP_ONLY)) {
        fprintf(stderr, ARB_TOOL ": --steps, --compute-ms, --forward, --manifest and --batch need "
                                 "--overlap\n");
        exit(ARB_EXIT_USAGE);
    }
    if (a->overlap && (given & ARGS_SWEEP_ONLY)) {
        fprintf(stderr, ARB_TOOL ": -b, -e, -f, -n and -w are the sweep's, not --overlap's\n");
        exit(ARB_EXIT_USAGE);
    }
    if (a->batch != 0 && a->manifest == NULL) {
        fprintf(stderr, ARB_TOOL ": --batch needs --manifest\n");
        exit(ARB_EXIT_USAGE);
    }
}

void arb_args_parse(int argc, char **argv, arb_args_t *a)
{
    *a = (arb_args_t){.min_bytes = ARGS_MIN_BYTES,
                      .max_bytes = ARGS_MAX_BYTES,
                      .factor = ARGS_FACTOR,
                      .iters = ARGS_ITERS,
                      .warmup = ARGS_WARMUP,
                      .steps = ARGS_STEPS,
                      .compute_ms = -1,
                      .forward = 1.0 / 3};
    int o, given = 0;
    while ((o = getopt_long(argc, argv, "b:e:f:n:w:h", arb_options, NULL)) != -1) {
        if (o == 'h') {
            usage(stdout);
            exit(0);
        }
        if (parse_sweep(o, a)) {
            given |= ARGS_SWEEP_ONLY;
        } else if (parse_overlap(o, a)) {
            given |= ARGS_OVERLAP_ONLY;
        } else if (o == O_BACKEND) {
            a->backend = parse_backend(optarg);
            a->backend_set = 1;
        } else if (o == O_OVERLAP) {
            a->overlap = 1;
        } else if (o == O_JSON) {
            a->json = optarg;
        } else {
            usage(stderr); /* getopt named the option */
            exit(ARB_EXIT_USAGE);
        }
    }
    if (optind != argc) {
        cli_bad("argument", argv[optind], "is not an option (see --help)");
    }
    check_mode(a, given);
    check_sizes(a);
}

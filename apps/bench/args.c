/* ingot-bench's command line: options, their values checked strictly, the usage text. */
#include "bench/bench.h"
#include "common/cli.h"
#include <float.h>

#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BENCH_DEFAULT_SAMPLES     4096
#define BENCH_DEFAULT_SAMPLE_SIZE (110u << 10)
#define BENCH_DEFAULT_DEPTH       4

/* The option table reads best packed, as getopt_long tables are. */
/* clang-format off */
enum { O_MANIFEST = 256, O_GENERATE, O_SAMPLES, O_SIZE, O_JITTER, O_SHARD, O_ZSTD, O_COMP,
       O_BATCH, O_EPOCHS, O_STEPS, O_SEED, O_DEPTH, O_READERS, O_WORKERS, O_VERIFY,
       O_DEVICE, O_COMPUTE, O_SPIN, O_GPU, O_MINAU, O_JSON, O_NOPROG };

static const struct option bench_options[] = {
    {"manifest", 1, 0, O_MANIFEST}, {"generate", 1, 0, O_GENERATE},
    {"samples", 1, 0, O_SAMPLES}, {"sample-size", 1, 0, O_SIZE}, {"jitter", 1, 0, O_JITTER},
    {"shard-size", 1, 0, O_SHARD}, {"zstd", 1, 0, O_ZSTD}, {"compressible", 0, 0, O_COMP},
    {"batch", 1, 0, O_BATCH}, {"epochs", 1, 0, O_EPOCHS}, {"steps", 1, 0, O_STEPS},
    {"seed", 1, 0, O_SEED}, {"depth", 1, 0, O_DEPTH}, {"readers", 1, 0, O_READERS},
    {"workers", 1, 0, O_WORKERS}, {"verify", 1, 0, O_VERIFY}, {"device", 1, 0, O_DEVICE},
    {"compute-ms", 1, 0, O_COMPUTE}, {"compute-spin", 0, 0, O_SPIN},
    {"compute-gpu", 0, 0, O_GPU},
    {"min-au", 1, 0, O_MINAU}, {"json", 2, 0, O_JSON}, {"no-progress", 0, 0, O_NOPROG},
    {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
/* clang-format on */

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: ingot-bench (--manifest FILE | --generate DIR) [options]\n"
        "  --generate DIR       make a synthetic dataset in DIR (reused when it exists)\n"
        "    --samples N          samples (default 4096)\n"
        "    --sample-size SIZE   bytes per sample, e.g. 110KiB, 2MiB, 140MiB (default 110KiB)\n"
        "    --jitter F           sizes uniform in SIZE*(1-F)..SIZE*(1+F) (default 0)\n"
        "    --shard-size SIZE    target shard size (default 256MiB)\n"
        "    --zstd LEVEL         compress members (use --compressible data)\n"
        "    --compressible       text-like data instead of random bytes\n"
        "  --batch N            global batch (default 64 * ranks)\n"
        "  --epochs N           epochs (default 1)\n"
        "  --steps N            stop after N steps (default: all)\n"
        "  --seed N             shuffle seed (default 1)\n"
        "  --depth N            prefetch depth (default 4)\n"
        "  --readers N, --workers N   loader threads (default: INGOT_READERS/INGOT_WORKERS)\n"
        "  --verify fail|skip|off     hash policy (default: INGOT_VERIFY)\n"
        "  --device host|placement|N  where batches go (default placement)\n"
        "  --compute-ms MS      emulated compute per step: sleep (DLIO's way)\n"
        "  --compute-spin       burn the CPU for the compute time instead of sleeping\n"
        "  --compute-gpu        run a GPU busy kernel for the compute time, on a stream that\n"
        "                       waits for each batch's ready event (GPU batches only)\n"
        "  --min-au F           exit 1 when the aggregate AU is below F\n"
        "  --json[=FILE]        one JSON object on stdout (rank 0) or in FILE\n"
        "  --no-progress        no progress bar\n"
        "Sizes take the syntax of every INGOT_* size: K or KiB = 1024, KB = 1000 (see\n"
        "ingot_config_parse_size()).\n");
}

static int parse_device(const char *s)
{
    return !strcmp(s, "host")        ? INGOT_DEVICE_HOST
           : !strcmp(s, "placement") ? INGOT_DEVICE_PLACEMENT
                                     : (int)cli_u64("--device", s, 0, UINT64_MAX);
}

/* Options of the dataset generator. Returns 0 when @p o is not one of them. */
static int parse_generator(int o, bench_args_t *a)
{
    switch (o) {
    case O_GENERATE: a->generate = optarg; break;
    case O_SAMPLES: a->samples = cli_u64("--samples", optarg, 0, UINT64_MAX); break;
    case O_SIZE: a->sample_size = cli_size("--sample-size", optarg); break;
    case O_JITTER: a->jitter = cli_real("--jitter", optarg, 0, DBL_MAX); break;
    case O_SHARD: a->shard_size = cli_size("--shard-size", optarg); break;
    case O_ZSTD: a->zstd = (int)cli_u64("--zstd", optarg, 0, UINT64_MAX); break;
    case O_COMP: a->compressible = 1; break;
    default: return 0;
    }
    return 1;
}

/* Options of the run. Returns 0 when @p o is not one of them. */
static int parse_run(int o, bench_args_t *a)
{
    switch (o) {
    case O_MANIFEST: a->manifest = optarg; break;
    case O_BATCH: a->batch = cli_u64("--batch", optarg, 0, UINT64_MAX); break;
    case O_EPOCHS: a->epochs = cli_u64("--epochs", optarg, 0, UINT64_MAX); break;
    case O_STEPS: a->steps = cli_u64("--steps", optarg, 0, UINT64_MAX); break;
    case O_SEED: a->seed = cli_u64("--seed", optarg, 0, UINT64_MAX); break;
    case O_DEPTH: a->depth = (int)cli_u64("--depth", optarg, 0, UINT64_MAX); break;
    case O_READERS: a->readers = (int)cli_u64("--readers", optarg, 0, UINT64_MAX); break;
    case O_WORKERS: a->workers = (int)cli_u64("--workers", optarg, 0, UINT64_MAX); break;
    case O_VERIFY: a->verify = optarg; break;
    case O_DEVICE: a->device = parse_device(optarg); break;
    case O_COMPUTE: a->compute_ms = cli_real("--compute-ms", optarg, 0, DBL_MAX); break;
    case O_SPIN: a->spin = 1; break;
    case O_GPU: a->gpu = 1; break;
    case O_MINAU: a->min_au = cli_real("--min-au", optarg, 0, DBL_MAX); break;
    case O_JSON: a->json = optarg ? optarg : "-"; break;
    case O_NOPROG: a->progress = 0; break;
    default: return 0;
    }
    return 1;
}

static int args_valid(const bench_args_t *a)
{
    return (a->manifest == NULL) != (a->generate == NULL) && a->jitter < 1 && a->samples != 0 &&
           a->sample_size != 0 && a->epochs != 0 &&
           (a->verify == NULL || !strcmp(a->verify, "fail") || !strcmp(a->verify, "skip") ||
            !strcmp(a->verify, "off"));
}

void bench_args_parse(int argc, char **argv, bench_args_t *a)
{
    *a = (bench_args_t){.samples = BENCH_DEFAULT_SAMPLES,
                        .sample_size = BENCH_DEFAULT_SAMPLE_SIZE,
                        .shard_size = INGOT_PACK_DEFAULT_SHARD_SIZE,
                        .epochs = 1,
                        .seed = 1,
                        .depth = BENCH_DEFAULT_DEPTH,
                        .device = INGOT_DEVICE_PLACEMENT,
                        .progress = 1};
    int o;
    while ((o = getopt_long(argc, argv, "h", bench_options, NULL)) != -1) {
        if (o == 'h') {
            usage(stdout);
            exit(0);
        }
        if (!parse_generator(o, a) && !parse_run(o, a)) {
            usage(stderr);
            exit(BENCH_EXIT_USAGE);
        }
    }
    if (optind != argc || !args_valid(a)) {
        fprintf(stderr, "ingot-bench: give exactly one of --manifest or --generate; --jitter "
                        "< 1; --samples, --sample-size, --epochs > 0; --verify fail|skip|off\n");
        usage(stderr);
        exit(BENCH_EXIT_USAGE);
    }
}

uint64_t bench_global_batch(const bench_args_t *a, int world)
{
    return a->batch ? a->batch : (uint64_t)BENCH_BATCH_PER_RANK * (uint64_t)world;
}

/* ingot-sim's options (sim.h). */
#include "sim/sim.h"
#include "common/cli.h"

#include <float.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    O_MANIFEST = 256,
    O_SAMPLES,
    O_SIZE,
    O_JITTER,
    O_SHARD,
    O_BATCH,
    O_EPOCHS,
    O_SEED,
    O_DEPTH,
    O_READERS,
    O_WORKERS,
    O_VERIFY,
    O_COMPUTE,
    O_NODES,
    O_RPN,
    O_NODE_RANKS,
    O_CORES,
    O_NIC,
    O_DISK,
    O_STORE,
    O_STORE_BW,
    O_STORE_LAT,
    O_STORE_RATE,
    O_PREFIXES,
    O_SLOWDOWN,
    O_FAIL,
    O_RETRY,
    O_GPUS,
    O_BIND,
    O_CONN_BW,
    O_GETS,
    O_SVG,
    O_COSTS,
    O_CALIBRATE,
    O_JSON,
    O_MAX_S,
    O_PRIOR,
    O_MEMORY,
    O_TOPOLOGY
};

/* clang-format off */
static const struct option sim_options[] = {
    {"manifest", 1, 0, O_MANIFEST}, {"samples", 1, 0, O_SAMPLES}, {"sample-size", 1, 0, O_SIZE},
    {"jitter", 1, 0, O_JITTER}, {"shard-size", 1, 0, O_SHARD}, {"batch", 1, 0, O_BATCH},
    {"epochs", 1, 0, O_EPOCHS}, {"seed", 1, 0, O_SEED}, {"depth", 1, 0, O_DEPTH},
    {"readers", 1, 0, O_READERS}, {"workers", 1, 0, O_WORKERS}, {"verify", 1, 0, O_VERIFY},
    {"compute-ms", 1, 0, O_COMPUTE}, {"nodes", 1, 0, O_NODES}, {"ranks-per-node", 1, 0, O_RPN},
    {"node-ranks", 1, 0, O_NODE_RANKS}, {"cores", 1, 0, O_CORES}, {"gpus", 1, 0, O_GPUS}, {"bind", 1, 0, O_BIND}, {"nic-bw", 1, 0, O_NIC},
    {"disk-bw", 1, 0, O_DISK}, {"store", 1, 0, O_STORE}, {"store-bw", 1, 0, O_STORE_BW}, {"store-get-bw", 1, 0, O_CONN_BW}, {"store-gets", 1, 0, O_GETS},
    {"store-latency-ms", 1, 0, O_STORE_LAT}, {"store-rate", 1, 0, O_STORE_RATE},
    {"store-prefixes", 1, 0, O_PREFIXES}, {"store-slowdown", 1, 0, O_SLOWDOWN},
    {"store-fail", 1, 0, O_FAIL}, {"store-retry-ms", 1, 0, O_RETRY}, {"costs", 1, 0, O_COSTS},
    {"calibrate", 1, 0, O_CALIBRATE}, {"json", 2, 0, O_JSON}, {"svg", 1, 0, O_SVG}, {"max-s", 1, 0, O_MAX_S},
    {"prior-jobs", 1, 0, O_PRIOR}, {"memory", 1, 0, O_MEMORY},
    {"topology", 1, 0, O_TOPOLOGY},
    {"help", 0, 0, 'h'}, {0, 0, 0, 0}};
/* clang-format on */

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: ingot-sim (--manifest FILE | --samples N [--sample-size SIZE]) [options]\n"
        "       ingot-sim --calibrate FILE [--manifest s3://...]   measure this machine's stage\n"
        "                       costs (and the bucket's GETs) into FILE, and exit\n"
        "A job of ingot-bench's options on a cluster of many nodes, simulated in one process by\n"
        "the job's own planning code (docs/sim.md). The tiers and the order come from the\n"
        "INGOT_* variables, as in a job (INGOT_ORDER, INGOT_CACHE_BYTES, INGOT_STORAGE_EMULATE).\n"
        "The dataset:\n"
        "  --manifest FILE      a manifest (its tables only are read)\n"
        "  --samples N          or described: N samples (no bytes behind them)\n"
        "  --sample-size SIZE   bytes per sample (default 110KiB); --jitter F: SIZE*(1+-F)\n"
        "  --shard-size SIZE    target shard size (default 256MiB)\n"
        "The job (as ingot-bench):\n"
        "  --batch N            global batch (default 64 * ranks)\n"
        "  --epochs N (1)  --seed N (1)  --depth N (4)  --compute-ms MS (0)\n"
        "  --readers N, --workers N   per rank (default: as the loader defaults them)\n"
        "  --verify y|n         hash every sample (default y)\n"
        "  --prior-jobs N       this job ran N times on these nodes before: the disk tier's\n"
        "                       entries they left are found (INGOT_DISK_CACHE_BYTES; default 0)\n"
        "The cluster:\n"
        "  --nodes N (1)  --ranks-per-node R (1)  or --node-ranks R0,R1,...  (uneven nodes)\n"
        "  --cores N            per node (default 32; ranks beyond them share them)\n"
        "  --gpus N             per node (default 0); INGOT_GPU_SHARING=error: a rank each\n"
        "  --bind N             cores each rank is bound to (mpirun binds 1 rank per core up\n"
        "                       to 2 ranks; default 0: unbound, a node's ranks share its cores)\n"
        "  --nic-bw RATE        bytes/s per node each way, e.g. 12.5GB (100 Gb/s; default: none)\n"
        "  --disk-bw RATE       bytes/s of a node's disk, for shards on it and the disk\n"
        "                       tier's entries (default: none)\n"
        "  --topology XML       a node's hwloc XML export: its cores and GPUs (they replace\n"
        "                       --cores, --gpus), the ranks placed on it as a job places them\n"
        "  --memory SIZE        per node: a job whose batch slots, peer cache windows and\n"
        "                       part cache take more is refused (default: not checked)\n"
        "The store:\n"
        "  --store files|remote files on each node (default), or an object store over the NIC\n"
        "  --store-bw RATE      bytes/s the whole store serves (default: measured, else none)\n"
        "  --store-get-bw RATE  bytes/s of one GET (default: measured, else no limit)\n"
        "  --store-gets N       GET/s the store serves in all (default: measured, else none)\n"
        "  --store-latency-ms MS   a GET's latency (default: measured, else 20)\n"
        "  --store-rate N       GET/s per prefix before SlowDown (default 0: none; S3: 5500)\n"
        "  --store-prefixes N (1)  --store-slowdown F, --store-fail F (fractions answered badly)\n"
        "  --store-retry-ms MS  the wait before a retry (default 100)\n"
        "Costs:\n"
        "  --costs FILE         stage costs (else measured here first, briefly; with a\n"
        "                       manifest in a bucket, the store's GETs measured too)\n"
        "Output:\n"
        "  --json[=FILE]        ingot-bench's JSON schema on stdout or in FILE\n"
        "  --svg FILE           a plot: bytes by tier (bars) and AU (line) per epoch\n"
        "  --max-s S            refuse a simulation estimated to take longer (default 600)\n"
        "RATE and SIZE take the syntax of every INGOT_* size (12.5GB = 12.5e9, 1GiB = 2^30).\n");
}

static uint32_t *parse_list(const char *s, uint32_t *n_p)
{
    uint32_t n = 1;
    for (const char *c = s; c != NULL && *c != '\0'; c++) {
        n += *c == ',';
    }
    uint32_t *v = calloc(n, sizeof(*v));
    char *copy = strdup(s);
    if (v == NULL || copy == NULL) {
        cli_bad("--node-ranks", s, "cannot be held (out of memory)");
    }
    char *save = NULL;
    uint32_t i = 0;
    for (char *tok = strtok_r(copy, ",", &save); tok != NULL && i < n;
         tok = strtok_r(NULL, ",", &save)) {
        v[i++] = (uint32_t)cli_u64("--node-ranks", tok, 0, UINT32_MAX);
    }
    free(copy);
    if (i != n) {
        cli_bad("--node-ranks", s, "is not a comma-separated list of rank counts");
    }
    *n_p = n;
    return v;
}

static int parse_job(int o, sim_args_t *a)
{
    const char *arg = optarg != NULL ? optarg : ""; /* (options here all take a value) */
    switch (o) {
    case O_MANIFEST: a->manifest = arg; break;
    case O_SAMPLES: a->samples = cli_u64("--samples", arg, 0, UINT64_MAX); break;
    case O_SIZE: a->sample_size = cli_size("--sample-size", arg); break;
    case O_JITTER: a->jitter = cli_real("--jitter", arg, 0, 0.999); break;
    case O_SHARD: a->shard_size = cli_size("--shard-size", arg); break;
    case O_BATCH: a->job.global_batch = cli_u64("--batch", arg, 1, UINT64_MAX); break;
    case O_EPOCHS: a->job.epochs = cli_u64("--epochs", arg, 0, UINT64_MAX); break;
    case O_SEED: a->job.seed = cli_u64("--seed", arg, 0, UINT64_MAX); break;
    case O_DEPTH: a->job.depth = (uint32_t)cli_u64("--depth", arg, 1, 1024); break;
    case O_READERS: a->job.readers = (uint32_t)cli_u64("--readers", arg, 1, 4096); break;
    case O_WORKERS: a->job.workers = (uint32_t)cli_u64("--workers", arg, 1, 4096); break;
    case O_COMPUTE: a->compute_ms = cli_real("--compute-ms", arg, 0, DBL_MAX); break;
    case O_PRIOR: a->job.prior_jobs = (uint32_t)cli_u64("--prior-jobs", arg, 0, 1000); break;
    case O_VERIFY:
        if (strcmp(arg, "y") && strcmp(arg, "n")) {
            cli_bad("--verify", arg, "is not y or n");
        }
        a->job.verify = arg[0] == 'y';
        break;
    default: return 0;
    }
    return 1;
}

static int parse_cluster(int o, sim_args_t *a)
{
    ingot_sim_cluster_t *c = &a->cluster;
    ingot_sim_store_t *s = &a->store;
    const char *arg = optarg != NULL ? optarg : ""; /* (options here all take a value) */
    switch (o) {
    case O_NODES: c->nodes = (uint32_t)cli_u64("--nodes", arg, 0, UINT32_MAX); break;
    case O_RPN: c->ranks_per_node = (uint32_t)cli_u64("--ranks-per-node", arg, 0, 65536); break;
    case O_NODE_RANKS:
        free(a->node_ranks);
        a->node_ranks = parse_list(arg, &c->nodes);
        c->ranks_of = a->node_ranks;
        break;
    case O_CORES: c->cores = (uint32_t)cli_u64("--cores", arg, 0, 1u << 20); break;
    case O_GPUS: c->gpus = (uint32_t)cli_u64("--gpus", arg, 0, 1024); break;
    case O_BIND: c->bind_cores = (uint32_t)cli_u64("--bind", arg, 0, 1u << 20); break;
    case O_NIC: c->nic_bps = (double)cli_size("--nic-bw", arg); break;
    case O_DISK: c->disk_bps = (double)cli_size("--disk-bw", arg); break;
    case O_MEMORY: c->memory = (double)cli_size("--memory", arg); break;
    case O_TOPOLOGY: a->topology = arg; break;
    case O_STORE:
        if (strcmp(arg, "files") && strcmp(arg, "remote")) {
            cli_bad("--store", arg, "is not files or remote");
        }
        s->remote = arg[0] == 'r';
        a->store_given = 1;
        break;
    case O_STORE_BW:
        s->bw = (double)cli_size("--store-bw", arg);
        a->bw_given = 1;
        break;
    case O_GETS:
        s->gets_per_s = cli_real("--store-gets", arg, 0, 1e12);
        a->gets_given = 1;
        break;
    case O_CONN_BW:
        s->conn_bps = (double)cli_size("--store-get-bw", arg);
        a->conn_given = 1;
        break;
    case O_STORE_LAT:
        s->latency_s = cli_real("--store-latency-ms", arg, 0, 1e7) / 1e3;
        a->lat_given = 1;
        break;
    case O_STORE_RATE: s->rate = cli_real("--store-rate", arg, 0, 1e12); break;
    case O_PREFIXES: s->prefixes = (uint32_t)cli_u64("--store-prefixes", arg, 1, 1u << 30); break;
    case O_SLOWDOWN: s->slowdown = cli_real("--store-slowdown", arg, 0, 0.9); break;
    case O_FAIL: s->fail = cli_real("--store-fail", arg, 0, 0.9); break;
    case O_RETRY: s->retry_s = cli_real("--store-retry-ms", arg, 0, 1e7) / 1e3; break;
    default: return 0;
    }
    return 1;
}

void sim_args_parse(int argc, char **argv, sim_args_t *a)
{
    *a = (sim_args_t){.sample_size = 110 * 1024,
                      .shard_size = 256u << 20,
                      .job = {.epochs = 1, .seed = 1, .depth = 4, .verify = 1},
                      .cluster = {.nodes = 1, .ranks_per_node = 1, .cores = 32},
                      .store = {.latency_s = 0.020, .prefixes = 1, .retry_s = 0.100},
                      .max_s = 600};
    int o;
    while ((o = getopt_long(argc, argv, "h", sim_options, NULL)) != -1) {
        if (parse_job(o, a) || parse_cluster(o, a)) {
            continue;
        }
        switch (o) {
        case O_COSTS: a->costs = optarg; break;
        case O_CALIBRATE: a->calibrate = optarg; break;
        case O_JSON: a->json = optarg != NULL ? optarg : "-"; break;
        case O_SVG: a->svg = optarg; break;
        case O_MAX_S: a->max_s = cli_real("--max-s", optarg, 0, DBL_MAX); break;
        case 'h': usage(stdout); exit(0);
        default: exit(cli_usage("%s", "unknown option"));
        }
    }
    if (optind < argc) {
        exit(cli_usage("unexpected argument '%s'", argv[optind]));
    }
    if (a->calibrate == NULL && (a->manifest == NULL) == (a->samples == 0)) {
        exit(cli_usage("%s", "give --manifest FILE or --samples N (one of them)"));
    }
    if (!a->store_given && a->manifest != NULL && strstr(a->manifest, "://") != NULL) {
        a->store.remote = 1; /* a manifest in a bucket: its shards are there too */
    }
    a->job.compute_s = a->compute_ms / 1e3;
}

void sim_args_free(sim_args_t *a)
{
    free(a->node_ranks);
    a->node_ranks = NULL;
}

/*
 * ingot-bench's modules: command line (args.c), synthetic dataset through the public packing
 * API (gen.c), emulated compute on the CPU or a GPU (compute.c), the measured loop (run.c), the
 * metrics and their aggregation over ranks (metrics.c), and the output (output.c, over the
 * shared apps/common/report.h).
 */
#ifndef INGOT_APPS_BENCH_H
#define INGOT_APPS_BENCH_H

#include <ingot/ingot.h>
#include <ingot/loader.h>
#include <ingot/pack.h>
#include <stddef.h>
#include <stdint.h>

#define BENCH_EXIT_FAIL  1
#define BENCH_EXIT_USAGE 2
/** Global batch per rank when --batch is not given. */
#define BENCH_BATCH_PER_RANK 64

typedef struct bench_args {
    const char *manifest, *generate, *json, *verify;
    uint64_t samples, sample_size, shard_size, batch, epochs, steps, seed;
    double jitter, compute_ms, min_au;
    int spin, gpu, zstd, compressible, depth, readers, workers, device, progress;
} bench_args_t;

/* Per epoch, per rank: what the epochs table and JSON show (doubles, gathered as is). */
enum {
    E_EPOCH,
    E_STEPS,
    E_WALL,
    E_COMPUTE,
    E_STALL,
    E_STORAGE,
    E_PEER,
    E_LOCAL,
    E_DISK,        /* bytes the nodes' disk tier served */
    E_BELOW,       /* bytes the disk tier read below it during the epoch (misses, whole pieces for
                      fills, prefetches): what left the store with the tier on */
    E_GETS,        /* object-store GETs made for the epoch's reads */
    E_GET_BYTES,   /* their bytes */
    E_RETRIES,     /* their retries, every class */
    E_READS,       /* samples of the epoch read (GETs per sample's denominator) */
    E_RSS,         /* resident memory at the epoch's last step, bytes */
    E_NODE,        /* this rank's node */
    E_NODE_FIRST,  /* 1 on the node's first rank: its node figures count once per node */
    E_NODE_GETS,   /* the node's part cache: GETs for the epoch's reads (every rank of the node) */
    E_NODE_BYTES,  /* their bytes: what left the store for the node */
    E_NODE_NEEDED, /* the bytes of the samples its ranks read: what the node needed */
    E_COUNT
};

/** Room for the cache's path report. */
#define BENCH_PATHS_MAX 4096

typedef struct bench_result {
    double wall_s, compute_s, stall_s, au;
    uint64_t steps, samples, bytes;
    uint64_t samples0, bytes0; /* of the first step, left out of the rates */
    ingot_loader_stats_t st;
    uint64_t nepochs, epochs_cap;     /* epochs delivered; rows allocated */
    uint64_t epochs_seen, epoch_last; /* epochs delivered, rows or not; the last one's number */
    int epochs_cut; /* a row could not be allocated: epochs_seen - nepochs are left out */
    double (*epochs)[E_COUNT];   /* every epoch delivered; the first step of the run left out */
    char paths[BENCH_PATHS_MAX]; /* the peer cache's data paths, or "" */
    char disk[BENCH_PATHS_MAX];  /* the disk tier's report, or "" */
    uint64_t rss_bytes;          /* resident memory at the end */
    int node, node_first;        /* this rank's node; whether it is the node's first rank */
} bench_result_t;

/** Resident memory of this process now (/proc/self/statm), bytes; 0 when unknown. */
uint64_t bench_rss(void);

/** Parse the command line; exits 0 on --help and 2 (with a message) on a bad option. */
void bench_args_parse(int argc, char **argv, bench_args_t *a);
/** The global batch: --batch, or BENCH_BATCH_PER_RANK per rank. */
uint64_t bench_global_batch(const bench_args_t *a, int world);

/** Make the synthetic dataset of --generate in a->generate (kept when the same is there). */
int bench_generate(const bench_args_t *a);

/** Set up the compute step (the GPU kernel with --compute-gpu on CUDA device @p device). */
ingot_status_t bench_compute_init(const bench_args_t *a, int device);
/** One step's emulated compute on batch @p b; returns the seconds it took. */
double bench_compute(const bench_args_t *a, const ingot_batch_t *b);

/** The measured loop over the loader of @p manifest (@p r: free it with bench_result_free,
 *  also after a failure). */
ingot_status_t bench_run(ingot_ctx_h ctx, const bench_args_t *a, const char *manifest, int rank,
                         int world, bench_result_t *r);
/** Free what bench_run() allocated in @p r. */
void bench_result_free(bench_result_t *r);

enum {
    M_WALL,
    M_COMPUTE,
    M_STALL,
    M_AU,
    M_STEPS,
    M_SAMPLES,
    M_BYTES,
    M_SPS,
    M_MIBS,
    M_STALL_P50,
    M_STALL_P99,
    M_READ_P50,
    M_READ_P99,
    M_VERIFY_P50,
    M_DECODE_P50,
    M_H2D_P50,
    M_FAULTS,
    M_BYTES_READ,
    M_REQUESTS,
    M_FIRST,
    M_DISK_HITS, /* the node's disk tier (INGOT_DISK_CACHE_BYTES): counts, summed over ranks */
    M_DISK_MISSES,
    M_DISK_BELOW,
    M_DISK_ADMITTED,
    M_DISK_REFUSED,
    M_DISK_EVICTIONS,
    M_DISK_PREFETCH,
    M_DISK_BAD,
    M_DISK_DAMAGED,     /* pieces from below that did not verify: never written */
    M_DISK_FILL_ERRORS, /* fills the disk refused (ENOSPC, EDQUOT, EROFS, I/O) */
    M_GETS,             /* object store (zero when the manifest is local): GETs completed */
    M_GET_FAILED,       /* of which failed */
    M_GET_BYTES,        /* bytes received */
    M_RETRY_THROTTLE,   /* retries after 503 SlowDown / 429 */
    M_RETRY_SERVER,     /* after 500, 502, 504 */
    M_RETRY_NETWORK,    /* after refused, reset, cut connections */
    M_RETRY_STALL,      /* after INGOT_S3_STALL_TIMEOUT */
    M_THROTTLE_EVENTS,  /* concurrency halvings */
    M_GET_P50,          /* GET latency, ms */
    M_GET_P99,
    M_GETS_PER_SAMPLE, /* GETs / samples read */
    M_PART_HITS,       /* reads served by parts already fetched */
    M_REREAD_STORAGE,  /* samples that failed their hash, read again from the source: storage */
    M_REREAD_PEER,     /* from the peer cache */
    M_REREAD_DISK,     /* from a node's disk */
    M_REREAD_AT_REST,  /* of all, damaged at rest (the same wrong bytes again) */
    M_HEDGES,          /* hedge GETs started (INGOT_S3_HEDGE) */
    M_HEDGE_WINS,      /* requests a hedge finished first */
    M_HASHED_LANDING,  /* bytes of reads hashed as their source reported them landing */
    M_RSS,             /* resident memory at the end, bytes */
    M_COUNT
};

/** Names of the metrics in the JSON output. */
extern const char *const bench_metric_names[M_COUNT];

/** One rank's metrics from its result. */
void bench_metrics(const bench_result_t *r, double *m);
/** Rates and counts summed over @p world ranks, times and AU averaged. */
void bench_aggregate(const double *all, int world, double *agg);
/** The lowest AU of any rank. */
double bench_au_min(const double *all, int world);

#endif

/*
 * ingot-sim's library (include/ingot/sim.h) without MPI: the described dataset's tables, the
 * cluster's and the cost file's bad inputs (each refused, naming what), and the exact parts of a
 * simulation: every sample of every step once, the bytes of each tier as the peer cache's
 * placement says, a SlowDown rate limit that raises the requests and the time, the dealt order
 * reading each part of the store once per epoch through the node's part cache.
 *
 * The disk tier (INGOT_DISK_CACHE_BYTES): every byte from the disks once they hold the dataset, and
 * in a job after the one that filled them; a budget smaller than a node's pieces evicting and
 * refusing while every sample is still read once; a budget below one entry and a cluster too big
 * for this machine's memory refused, and pieces assembled from the misses' bytes (not simulated).
 *
 * Cases: `test_sim tables|inputs|costs|exact|store|parts|disk|disk_small|disk_bad|disk_huge|
 * disk_fill` (one process each: the INGOT_* variables are read once per process).
 */
#include "runtime/sim/sim_impl.h"
#include "shard/synth.h"
#include "common/test.h"
#include <ingot/sim.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#define KIB 1024u

static const ingot_sim_costs_t costs = {.verify_bps = 20e9,
                                        .copy_bps = 10e9,
                                        .decode_bps = 2e9,
                                        .sample_s = 2e-6,
                                        .read_bps = 10e9,
                                        .read_s = 1e-6,
                                        .peer_bps = 5e9,
                                        .peer_s = 20e-6,
                                        .fault_bps = 4e9,
                                        .disk_bps = 5e9};

/* A case's job, cluster and store. */
typedef struct sim_case {
    ingot_manifest_h m;
    uint64_t dataset; /* every sample's record bytes (the disk cases) */
    ingot_sim_job_t job;
    ingot_sim_cluster_t c;
    ingot_sim_store_t st;
} sim_case_t;

/* The store cases' job: 8,192 samples of 64 KiB in 8 MiB shards, 2 epochs, on 4 nodes x 2 ranks
 * over an object store of 10 ms GETs. */

static void store_case(sim_case_t *k)
{
    CHECK_OK(ingot_sim_describe(8192, 64 * KIB, 0, 8u << 20, &k->m));
    k->job = (ingot_sim_job_t){.manifest = k->m,
                               .global_batch = 512,
                               .epochs = 2,
                               .seed = 3,
                               .depth = 2,
                               .compute_s = 0.001,
                               .verify = 1};
    k->c = (ingot_sim_cluster_t){.nodes = 4, .ranks_per_node = 2, .cores = 16, .nic_bps = 1e9};
    k->st = (ingot_sim_store_t){.remote = 1, .latency_s = 0.01, .prefixes = 1, .retry_s = 0.05};
}

/* The described dataset: sizes in range, tar layout, every row readable, shards filled. */
static void case_tables(void)
{
    ingot_manifest_synth_t d = {.samples = 1000,
                                .sample_min = 10 * KIB,
                                .sample_max = 30 * KIB,
                                .shard_bytes = 1u << 20,
                                .seed = 7};
    ingot_manifest_h m;
    CHECK_OK(ingot_manifest_synth(&d, &m));
    ingot_manifest_info_t mi;
    CHECK_OK(ingot_manifest_query(m, &mi));
    CHECK(mi.sample_count == 1000);
    uint64_t total = 0, next = 0;
    for (uint32_t s = 0; s < mi.shard_count; s++) {
        ingot_shard_info_t si;
        CHECK_OK(ingot_manifest_shard_get(m, s, &si));
        CHECK(si.first_sample == next && si.sample_count >= 1);
        CHECK(si.size <= (1u << 20) || si.sample_count == 1);
        uint64_t at = 0;
        for (uint64_t i = si.first_sample; i < si.first_sample + si.sample_count; i++) {
            ingot_sample_info_t x;
            CHECK_OK(ingot_manifest_sample_get(m, i, &x));
            CHECK(x.shard == s && x.offset == at + 512); /* after its tar header */
            CHECK(x.length == ingot_manifest_synth_size(&d, i));
            CHECK(x.length >= 10 * KIB && x.length <= 30 * KIB);
            at += 512 + (x.length + 511) / 512 * 512;
            total += x.length;
        }
        CHECK(si.size == at + 1024); /* the end blocks */
        next += si.sample_count;
    }
    CHECK(next == 1000 && mi.shard_count > 10);
    CHECK(total > 1000 * 10 * KIB && total < 1000 * 30 * KIB);
    ingot_manifest_close(m);
    /* bad descriptions, each named */
    d.samples = 0;
    CHECK_STATUS(ingot_manifest_synth(&d, &m), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "--samples is 0");
    d.samples = 10;
    d.sample_min = 0;
    CHECK_STATUS(ingot_manifest_synth(&d, &m), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "--sample-size");
    CHECK_STATUS(ingot_sim_describe(10, 4096, 1.5, 1u << 20, &m), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "--jitter");
    printf("tables: 1000 samples in %" PRIu64 " shards, the bad descriptions refused\n",
           mi.shard_count);
}

/* Clusters that cannot be, each refused naming the field; a simulation's estimate. */
static void case_inputs(void)
{
    ingot_sim_cluster_t c = {.nodes = 0, .ranks_per_node = 8, .cores = 32};
    CHECK_STATUS(ingot_sim_cluster_check(&c), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "--nodes is 0");
    c.nodes = 4;
    c.cores = 0;
    CHECK_STATUS(ingot_sim_cluster_check(&c), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "--cores is 0");
    c.cores = 4; /* 8 ranks on 4 cores: they share them, as a placement lets them */
    CHECK_OK(ingot_sim_cluster_check(&c));
    uint32_t uneven[3] = {8, 0, 4};
    c.nodes = 3;
    c.ranks_of = uneven;
    CHECK_STATUS(ingot_sim_cluster_check(&c), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "--node-ranks: node 1 has no ranks");
    uneven[1] = 8;
    c.gpus = 4; /* INGOT_GPU_SHARING=error (set by the test's environment): a rank per GPU */
    CHECK_STATUS(ingot_sim_cluster_check(&c), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "node 0 has 8 ranks and --gpus 4");
    c.gpus = 8;
    CHECK_OK(ingot_sim_cluster_check(&c));
    c.memory = -1; /* a size given by a library caller, not the command line */
    CHECK_STATUS(ingot_sim_cluster_check(&c), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "--memory -1 is not a size");
    c.memory = 0;
    c.nic_bps = NAN;
    CHECK_STATUS(ingot_sim_cluster_check(&c), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "--nic-bw nan is not a size");
    c.nic_bps = 0;
    /* a simulation that would take hours says so before it starts */
    ingot_manifest_h m;
    CHECK_OK(ingot_sim_describe(100000, 110 * KIB, 0, 256u << 20, &m));
    ingot_sim_job_t job = {.manifest = m, .global_batch = 1000, .epochs = 1000000, .depth = 4};
    ingot_sim_cluster_t big = {.nodes = 100, .ranks_per_node = 8, .cores = 32};
    double s = 0, s1 = 0;
    CHECK_OK(ingot_sim_estimate(&job, &big, &s));
    job.epochs = 1;
    CHECK_OK(ingot_sim_estimate(&job, &big, &s1));
    CHECK(s > 3600 && s1 < 1 && s > 1e5 * s1);
    ingot_manifest_close(m);
    printf("inputs: refused 0 nodes, 0 cores, a node without ranks, ranks beyond GPUs; estimate "
           "%.0f s for a million epochs, %.3f s for one\n",
           s, s1);
}

/* A cost file: written and read back; another version, a stage missing, one unknown or not a
 * number, refused naming the file and the stage. */
static void case_costs(void)
{
    char path[600];
    snprintf(path, sizeof(path), "%s/costs", test_tmpdir());
    CHECK_OK(ingot_sim_costs_write(path, &costs));
    ingot_sim_costs_t back;
    CHECK_OK(ingot_sim_costs_read(path, &back));
    CHECK(fabs(back.verify_bps - costs.verify_bps) < 1e-3 * costs.verify_bps);
    CHECK(fabs(back.peer_s - costs.peer_s) < 1e-9);
    const struct {
        const char *text, *says;
    } bad[] = {
        {"version 3\n", "cost file version 3, this ingot-sim reads version 2"},
        {"verify_bps 1e9\n", "no 'version' line first"},
        {"version 2\nverify_bps 1e9\n", "stage 'copy_bps'"},
        {"version 2\nverify_bps 1e9\nfrobnicate 3\n", "unknown stage 'frobnicate'"},
        {"version 2\nverify_bps fast\n", "stage 'verify_bps': not a positive number"},
        {"version 2\nverify_bps 0\n", "stage 'verify_bps': not a positive number"},
        {"version 2\nverify_bps 1e9\nverify_bps 2e9\n", "given twice"},
        {"", "(empty)"},
    };
    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
        FILE *f = fopen(path, "w");
        CHECK(f != NULL);
        fputs(bad[i].text, f);
        fclose(f);
        CHECK_STATUS(ingot_sim_costs_read(path, &back), INGOT_ERR_FORMAT);
        CHECK_CONTAINS(ingot_last_error(), bad[i].says);
        CHECK_CONTAINS(ingot_last_error(), path);
    }
    /* what a caller hands ingot_sim_run() by hand is checked the same way, each value named */
    sim_case_t k;
    store_case(&k);
    ingot_sim_result_t r;
    ingot_sim_costs_t zero = costs;
    zero.copy_bps = 0;
    CHECK_STATUS(ingot_sim_run(&k.job, &k.c, &k.st, &zero, &r), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "stage 'copy_bps'");
    k.st.slowdown = 1.5;
    CHECK_STATUS(ingot_sim_run(&k.job, &k.c, &k.st, &costs, &r), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "--store-slowdown 1.5");
    k.st.slowdown = 0;
    k.st.latency_s = -1;
    CHECK_STATUS(ingot_sim_run(&k.job, &k.c, &k.st, &costs, &r), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "--store-latency-ms");
    ingot_manifest_close(k.m);
    printf("costs: round trip, %zu bad files refused by name, a run's bad costs and store too\n",
           sizeof(bad) / sizeof(bad[0]));
}

/* The exact parts: every sample of every step once; the peer cache's bytes as its placement. */
static void case_exact(void)
{
    ingot_manifest_h m;
    CHECK_OK(ingot_sim_describe(4096, 16 * KIB, 0.5, 4u << 20, &m));
    uint64_t dataset = 0;
    for (uint64_t i = 0; i < 4096; i++) {
        ingot_sample_info_t x;
        CHECK_OK(ingot_manifest_sample_get(m, i, &x));
        dataset += x.length;
    }
    /* INGOT_CACHE_BYTES=32MiB (the environment): a budget that holds about half of it */
    ingot_sim_job_t job = {.manifest = m,
                           .global_batch = 256,
                           .epochs = 3,
                           .seed = 1,
                           .depth = 4,
                           .compute_s = 0.001,
                           .verify = 1};
    ingot_sim_cluster_t c = {.nodes = 2, .ranks_per_node = 4, .cores = 8};
    ingot_sim_store_t st = {.prefixes = 1};
    ingot_sim_result_t r;
    CHECK_OK(ingot_sim_run(&job, &c, &st, &costs, &r));
    CHECK(r.world == 8 && r.nepochs == 3 && r.dataset_bytes == dataset);
    uint64_t cached = r.cache_cached_bytes;
    CHECK(cached > 0 && cached < dataset);
    CHECK(r.cache_needed >= dataset);
    for (uint64_t e = 0; e < 3; e++) {
        const ingot_sim_epoch_t *x = &r.epochs[e];
        uint64_t all = x->bytes[INGOT_SIM_STORAGE] + x->bytes[INGOT_SIM_PEER] +
                       x->bytes[INGOT_SIM_LOCAL];
        CHECK(x->samples == 4096 && all == dataset); /* 16 steps of 256: every sample once */
        if (e == 0) {                                /* the fill epoch reads everything below */
            CHECK(x->bytes[INGOT_SIM_STORAGE] == dataset && x->steps == 15);
        } else { /* then the cache serves what it holds, about half of it from the other node */
            CHECK(x->bytes[INGOT_SIM_PEER] + x->bytes[INGOT_SIM_LOCAL] == r.cache_cached_bytes);
            CHECK(x->bytes[INGOT_SIM_STORAGE] == dataset - r.cache_cached_bytes);
            CHECK(x->bytes_cross > 0 && x->bytes_cross < x->bytes[INGOT_SIM_PEER]);
            CHECK(x->steps == 16);
        }
        CHECK(x->wall_s > 0 && x->au > 0 && x->au <= 1.0 + 1e-9);
    }
    ingot_sim_result_free(&r);
    ingot_manifest_close(m);
    printf("exact: 3 epochs x 4096 samples once each; the cache serves its %" PRIu64
           " bytes from epoch 1\n",
           cached);
}

/* The store under the full order: a GET per sample read; a request-rate limit below the job's
 * demand makes SlowDowns and time; SlowDowns injected make retries. */
static void case_store(void)
{
    sim_case_t k;
    store_case(&k);
    ingot_sim_job_t job = k.job;
    ingot_sim_cluster_t c = k.c;
    ingot_sim_store_t st = k.st;
    ingot_sim_result_t r0, r1;
    CHECK_OK(ingot_sim_run(&job, &c, &st, &costs, &r0));
    /* a GET per request: the samples of a rank's step that lie close together are one */
    uint64_t base = r0.epochs[1].store_requests;
    CHECK(base <= 8192 && base > 8000 && r0.epochs[1].slowdowns == 0);
    CHECK(r0.epochs[1].store_bytes >= r0.epochs[1].bytes[INGOT_SIM_STORAGE]);
    st.rate = 1000; /* GET/s per prefix: far below 8 ranks x 64 samples per 1 ms step */
    CHECK_OK(ingot_sim_run(&job, &c, &st, &costs, &r1));
    CHECK(r1.epochs[1].slowdowns > 0 && r1.epochs[1].store_requests == base);
    CHECK(r1.epochs[1].store_retries == r1.epochs[1].slowdowns);
    CHECK(r1.epochs[1].wall_s > 4 * r0.epochs[1].wall_s);
    CHECK(strcmp(r1.epochs[1].bound, "store-rate") == 0);
    st.rate = 0;
    st.slowdown = 0.2; /* a fifth answered SlowDown: a quarter more requests */
    ingot_sim_result_free(&r1);
    CHECK_OK(ingot_sim_run(&job, &c, &st, &costs, &r1));
    CHECK(r1.epochs[1].store_requests == base &&
          r1.epochs[1].store_retries == r1.epochs[1].slowdowns);
    CHECK(llabs((long long)r1.epochs[1].slowdowns - (long long)(base / 4)) <= 16); /* per step */
    CHECK(r1.epochs[1].wall_s > r0.epochs[1].wall_s);
    printf("store: %" PRIu64 " GETs for 8192 samples; the rate limit bounds the steps; %" PRIu64
           " SlowDowns at 20%%\n",
           base, r1.epochs[1].slowdowns);
    ingot_sim_result_free(&r0);
    ingot_sim_result_free(&r1);
    ingot_manifest_close(k.m);
}

/* The order dealt over 4 nodes (INGOT_ORDER=window:4 in the environment) over an object store:
 * each node reads its quarter through the part cache its ranks share, each part once per epoch:
 * about the shards' bytes leave the store per epoch, in a GET per part. */
static void case_parts(void)
{
    sim_case_t k;
    store_case(&k);
    ingot_manifest_info_t mi;
    CHECK_OK(ingot_manifest_query(k.m, &mi));
    uint64_t shards = 0;
    for (uint32_t i = 0; i < mi.shard_count; i++) {
        ingot_shard_info_t si;
        CHECK_OK(ingot_manifest_shard_get(k.m, i, &si));
        shards += si.size;
    }
    ingot_sim_result_t r;
    CHECK_OK(ingot_sim_run(&k.job, &k.c, &k.st, &costs, &r));
    for (int e = 0; e < 2; e++) {
        const ingot_sim_epoch_t *x = &r.epochs[e];
        /* every shard's bytes once, give or take the shards cut between two nodes' runs */
        CHECK(x->store_bytes >= x->bytes[INGOT_SIM_STORAGE]);
        CHECK(x->store_bytes <= shards + 4 * (9u << 20));
        CHECK(x->store_requests <= mi.shard_count + 8 && x->store_requests >= mi.shard_count);
        CHECK(x->node_store_max <= x->store_bytes / 4 + (9u << 20) * 2);
    }
    printf("parts: %" PRIu64 " GETs for %" PRIu64 " shards, %.3f of the shards' bytes\n",
           r.epochs[1].store_requests, mi.shard_count,
           (double)r.epochs[1].store_bytes / (double)shards);
    ingot_sim_result_free(&r);
    ingot_manifest_close(k.m);
}

/* The disk cases' job: 4,096 samples of 16 KiB +-50% in 4 MiB shards, 3 epochs, on 2 nodes x 4
 * ranks reading files. */
static void disk_case(sim_case_t *k)
{
    CHECK_OK(ingot_sim_describe(4096, 16 * KIB, 0.5, 4u << 20, &k->m));
    k->dataset = 0;
    for (uint64_t i = 0; i < 4096; i++) {
        ingot_sample_info_t x;
        CHECK_OK(ingot_manifest_sample_get(k->m, i, &x));
        k->dataset += x.length;
    }
    k->job = (ingot_sim_job_t){.manifest = k->m,
                               .global_batch = 256,
                               .epochs = 3,
                               .seed = 1,
                               .depth = 4,
                               .compute_s = 0.001,
                               .verify = 1};
    k->c = (ingot_sim_cluster_t){.nodes = 2, .ranks_per_node = 4, .cores = 8};
    k->st = (ingot_sim_store_t){.prefixes = 1};
}

static uint64_t shards_bytes(ingot_manifest_h m)
{
    ingot_manifest_info_t mi;
    CHECK_OK(ingot_manifest_query(m, &mi));
    uint64_t all = 0;
    for (uint32_t i = 0; i < mi.shard_count; i++) {
        ingot_shard_info_t si;
        CHECK_OK(ingot_manifest_shard_get(m, i, &si));
        all += si.size;
    }
    return all;
}

/* INGOT_DISK_CACHE_BYTES=1GiB (the environment): budgets that hold every piece. The first job's
 * first epoch reads every sample once, from storage or from a piece an earlier step filled; from
 * epoch 1 every byte comes from the disks, none from below; a job after it (prior_jobs) reads
 * everything from the disks from its first step, fills nothing. A 4 KiB-header entry per piece:
 * the budget needed lies between half the shards' bytes and all of them with headers. */
static void case_disk(void)
{
    sim_case_t k;
    disk_case(&k);
    uint64_t shards = shards_bytes(k.m), pieces = 0;
    ingot_sim_result_t r;
    CHECK_OK(ingot_sim_run(&k.job, &k.c, &k.st, &costs, &r));
    CHECK(r.disk_needed >= shards / 2 && r.disk_needed < shards + (shards >> 20) * 8 * KIB);
    const ingot_sim_epoch_t *x = &r.epochs[0];
    CHECK(x->bytes[INGOT_SIM_DISK] + x->bytes[INGOT_SIM_STORAGE] == k.dataset);
    CHECK(x->bytes[INGOT_SIM_DISK] > 0 && x->disk_admitted > 0 && x->disk_refused == 0);
    CHECK(x->disk_below >= x->bytes[INGOT_SIM_STORAGE] && x->disk_evictions == 0);
    pieces = x->disk_admitted;
    for (uint64_t e = 1; e < 3; e++) {
        x = &r.epochs[e];
        CHECK(x->bytes[INGOT_SIM_DISK] == k.dataset && x->bytes[INGOT_SIM_STORAGE] == 0);
        CHECK(x->disk_below == 0 && x->file_reads == 0 && x->disk_admitted == 0);
    }
    ingot_sim_result_free(&r);
    k.job.prior_jobs = 1;
    CHECK_OK(ingot_sim_run(&k.job, &k.c, &k.st, &costs, &r));
    for (uint64_t e = 0; e < 3; e++) {
        x = &r.epochs[e];
        CHECK(x->bytes[INGOT_SIM_DISK] == k.dataset && x->disk_below == 0 && x->file_reads == 0);
        CHECK(x->disk_admitted == 0 && x->wall_s > 0);
    }
    printf("disk: %" PRIu64 " pieces filled in epoch 0; every byte from the disks after; the "
           "busiest node needs %" PRIu64 " bytes\n",
           pieces, r.disk_needed);
    ingot_sim_result_free(&r);
    ingot_manifest_close(k.m);
}

/* INGOT_DISK_CACHE_BYTES=12MiB (the environment): each node is home to about 32 MiB of pieces.
 * Every epoch still reads every sample once; the pieces on a node's disk never exceed its budget;
 * what the disks hold serves part of every later epoch, and of a second job's first. With
 * INGOT_DISK_CACHE_POLICY=lru every miss is admitted, so pieces are evicted; the clairvoyant
 * policy admits a fill only when it pays for its bytes (policy.h). */
static void case_disk_small(void)
{
    sim_case_t k;
    disk_case(&k);
    ingot_sim_result_t r;
    CHECK_OK(ingot_sim_run(&k.job, &k.c, &k.st, &costs, &r));
    CHECK(r.disk_needed > 2 * (12u << 20));
    uint64_t refused = 0, evicted = 0, admitted = 0;
    for (uint64_t e = 0; e < 3; e++) {
        const ingot_sim_epoch_t *x = &r.epochs[e];
        CHECK(x->bytes[INGOT_SIM_DISK] + x->bytes[INGOT_SIM_STORAGE] == k.dataset);
        CHECK(x->bytes[INGOT_SIM_DISK] > 0 && x->bytes[INGOT_SIM_STORAGE] > 0);
        refused += x->disk_refused;
        evicted += x->disk_evictions;
        admitted += x->disk_admitted;
        /* resident at the end of the epoch: at most what the two budgets hold */
        CHECK((admitted - evicted) * (INGOT_DISK_HEADER_BYTES + (1u << 20)) <=
              2 * (12u << 20) + 2 * (1u << 20));
    }
    const char *policy = getenv("INGOT_DISK_CACHE_POLICY");
    CHECK(policy == NULL || strcmp(policy, "lru") != 0 || evicted > 0);
    uint64_t later = r.epochs[1].bytes[INGOT_SIM_DISK];
    ingot_sim_result_free(&r);
    k.job.prior_jobs = 1;
    CHECK_OK(ingot_sim_run(&k.job, &k.c, &k.st, &costs, &r));
    CHECK(r.epochs[0].bytes[INGOT_SIM_DISK] > 0);
    ingot_sim_result_free(&r);
    printf("disk_small (%s): %" PRIu64 " bytes of epoch 1 from the disks; %" PRIu64
           " fills admitted, %" PRIu64 " refused, %" PRIu64 " evictions\n",
           policy != NULL ? policy : "clairvoyant", later, admitted, refused, evicted);
    ingot_manifest_close(k.m);
}

/* Bad disk tier inputs: INGOT_DISK_CACHE_BYTES=64KiB (the environment) holds no 1 MiB piece and
 * its header: refused as the tier refuses it; a cluster whose keepers' state would not fit here:
 * refused before it starts, naming the nodes, the pieces and the memory. */
static void case_disk_bad(void)
{
    sim_case_t k;
    disk_case(&k);
    ingot_sim_result_t r;
    CHECK(ingot_sim_run(&k.job, &k.c, &k.st, &costs, &r) == INGOT_ERR_CONFIG);
    CHECK(r.epochs == NULL);
    ingot_manifest_close(k.m);
    printf("disk_bad: a budget below one entry refused\n");
}

/* INGOT_DISK_CACHE_FILL=parts (the environment): pieces assembled from the misses' own bytes are
 * not simulated: refused, naming the variable, before anything runs. */
static void case_disk_fill(void)
{
    sim_case_t k;
    disk_case(&k);
    ingot_sim_result_t r;
    CHECK(ingot_sim_run(&k.job, &k.c, &k.st, &costs, &r) == INGOT_ERR_UNSUPPORTED);
    CHECK_CONTAINS(ingot_last_error(), "INGOT_DISK_CACHE_FILL=parts");
    CHECK(r.epochs == NULL);
    ingot_manifest_close(k.m);
    printf("disk_fill: INGOT_DISK_CACHE_FILL=parts refused\n");
}

/* INGOT_DISK_CACHE_BYTES=1GiB: 500,000 samples of 1 GiB (500 TB, in as many shards) make 500
 * million 1 MiB pieces, whose keepers' state would take 23 GiB: refused before it starts, naming
 * the pieces and the memory. */
static void case_disk_huge(void)
{
    ingot_manifest_h m;
    CHECK_OK(ingot_sim_describe(500000, 1u << 30, 0, 1u << 30, &m));
    ingot_sim_job_t job = {
        .manifest = m, .global_batch = 1000, .epochs = 1, .seed = 1, .depth = 2, .verify = 1};
    ingot_sim_cluster_t c = {.nodes = 2, .ranks_per_node = 1, .cores = 8};
    ingot_sim_store_t st = {.prefixes = 1};
    ingot_sim_result_t r;
    CHECK_STATUS(ingot_sim_run(&job, &c, &st, &costs, &r), INGOT_ERR_NO_RESOURCE);
    CHECK_CONTAINS(ingot_last_error(), "pieces of 2^20 bytes would take");
    ingot_manifest_close(m);
    printf("disk_huge: refused before it starts\n");
}

int main(int argc, char **argv)
{
    const char *c = argc > 1 ? argv[1] : "";
    if (!strcmp(c, "tables")) {
        case_tables();
    } else if (!strcmp(c, "inputs")) {
        case_inputs();
    } else if (!strcmp(c, "costs")) {
        case_costs();
    } else if (!strcmp(c, "exact")) {
        case_exact();
    } else if (!strcmp(c, "store")) {
        case_store();
    } else if (!strcmp(c, "parts")) {
        case_parts();
    } else if (!strcmp(c, "disk")) {
        case_disk();
    } else if (!strcmp(c, "disk_small")) {
        case_disk_small();
    } else if (!strcmp(c, "disk_bad")) {
        case_disk_bad();
    } else if (!strcmp(c, "disk_huge")) {
        case_disk_huge();
    } else if (!strcmp(c, "disk_fill")) {
        case_disk_fill();
    } else {
        fprintf(stderr, "usage: test_sim tables|inputs|costs|exact|store|parts|disk|disk_small|"
                        "disk_bad|disk_huge|disk_fill\n");
        return 2;
    }
    return 0;
}

/*
 * The loader over MPI ranks, on a dataset the test packs (rank 0 writes, the others wait).
 *   test_loader exactly-once DIR   every sample of each of 2 epochs delivered exactly once over
 *                                  all ranks, bytes and labels correct, each rank's steps equal
 *                                  to the shard module's plan (ingot_order_slice)
 *   test_loader resume-a DIR       (any ranks) deliver 7 steps, save the cursor, record ids
 *   test_loader resume-b DIR       (any ranks) resume from that cursor to the end of the epoch;
 *                                  rank 0 checks exactly-once over both runs; the first rank of
 *                                  each node says what its node fetched from an object store
 *   test_loader pack DIR           pack the dataset only (for a copy in a bucket)
 *   test_loader two-loaders DIR    two loaders in one context, interleaved
 *   test_loader bad-batch DIR      a world size that does not divide the batch: every rank
 *                                  gets INGOT_ERR_INVALID_PARAM, none hangs
 * The environment may set TEST_LOADER_SAMPLES and TEST_LOADER_BATCH (defaults 1200 and 40), and
 * TEST_LOADER_MANIFEST: the loader reads that manifest (the packed data copied to a bucket).
 */
#include "common/test.h"
#include "common/loader_data.h"
#include "common/mpi_checks.h"
#include "base/fault.h"
#include <ingot/ingot.h>
#include <ingot/loader.h>
#include <ingot/shard.h>

#define SEED         1234
#define RESUME_STEPS 7

static int rank, world;
static char manifest[1024];
static uint64_t n_samples = 1200, global_batch = 40;

static ingot_loader_params_t params(uint64_t epochs)
{
    return (ingot_loader_params_t){
        .field_mask = INGOT_LOADER_PARAM_FIELD_MANIFEST | INGOT_LOADER_PARAM_FIELD_BATCH |
                      INGOT_LOADER_PARAM_FIELD_SEED | INGOT_LOADER_PARAM_FIELD_EPOCHS,
        .manifest_path = manifest,
        .global_batch = global_batch,
        .seed = SEED,
        .epochs = epochs};
}

/* The device a default loader of @p ctx delivers to on this node (detected at run time). */
static int default_device(ingot_ctx_h ctx)
{
    ingot_placement_t pl = {.field_mask = INGOT_PLACEMENT_FIELD_GPU};
    CHECK_OK(ingot_placement_get(ctx, &pl));
    return data_expected_device(pl.cuda_device);
}

static void run_exactly_once(ingot_ctx_h ctx)
{
    int device = default_device(ctx);
    ingot_loader_params_t p = params(2);
    ingot_loader_h l;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    /* The plan the shard module computes, independently of the loader. */
    ingot_order_h order = check_mpi_order(n_samples, global_batch, SEED);
    uint64_t steps = ingot_order_steps(order), slice = global_batch / (uint64_t)world;
    uint64_t *ids = calloc(steps * slice, sizeof(uint64_t));
    uint64_t *plan = calloc(slice, sizeof(uint64_t));
    for (uint64_t epoch = 0; epoch < 2; epoch++) {
        for (uint64_t s = 0; s < steps; s++) {
            ingot_batch_t b;
            CHECK_OK(ingot_loader_next(l, &b));
            CHECK(b.epoch == epoch && b.epoch_step == s && b.count == slice);
            CHECK(b.device == device && (b.ready_event == NULL) == (device == INGOT_DEVICE_HOST));
            check_mpi_batch(&b);
            CHECK_OK(ingot_order_slice(order, epoch, s, (uint32_t)rank, (uint32_t)world, plan,
                                       slice));
            for (uint64_t i = 0; i < slice; i++) {
                CHECK(b.indices[i] == plan[i]); /* same order as the shard module's plan */
                ids[s * slice + i] = b.indices[i];
            }
            CHECK_OK(ingot_loader_release(l, &b));
        }
        check_mpi_exactly_once(ids, (int)(steps * slice), n_samples);
    }
    ingot_batch_t b;
    CHECK_STATUS(ingot_loader_next(l, &b), INGOT_END_OF_DATA);
    ingot_loader_stats_t st = {.field_mask = INGOT_LOADER_STATS_FIELD_COUNTS};
    CHECK_OK(ingot_loader_stats(l, &st));
    CHECK(st.steps == 2 * steps && st.samples == 2 * steps * slice && st.bytes > 0);
    CHECK(st.read_requests > 0 && st.read_requests <= st.samples);
    free(ids);
    free(plan);
    ingot_order_destroy(order);
    ingot_loader_destroy(l);
}

static void write_ids(const char *dir, const char *tag, const uint64_t *ids, size_t n)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/%s.%d", dir, tag, rank);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL && fwrite(ids, sizeof(uint64_t), n, f) == n);
    fclose(f);
}

/* Over an object store, the first rank of each node says what its node fetched in epoch 0 (the
 * test that ran the job sums the nodes: each byte once per epoch over runs a and b). */
static void say_node_store(ingot_loader_h l)
{
    ingot_loader_store_stats_t st = {.field_mask = INGOT_LOADER_STORE_STATS_FIELD_NODE};
    MPI_Comm node;
    int local;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, &local);
    MPI_Comm_free(&node);
    if (local == 0 && ingot_loader_epoch_store(l, 0, &st) == INGOT_OK) {
        printf("node of rank %d: epoch 0 store bytes %llu needed %llu GETs %llu\n", rank,
               (unsigned long long)st.node_bytes, (unsigned long long)st.node_needed,
               (unsigned long long)st.node_requests);
        fflush(stdout);
    }
}

static void run_resume_a(ingot_ctx_h ctx, const char *dir)
{
    ingot_loader_params_t p = params(1);
    ingot_loader_h l;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    uint64_t *ids = calloc(RESUME_STEPS * global_batch, sizeof(uint64_t));
    size_t n = 0;
    for (int s = 0; s < RESUME_STEPS; s++) {
        ingot_batch_t b;
        CHECK_OK(ingot_loader_next(l, &b));
        check_mpi_batch(&b);
        for (uint32_t i = 0; i < b.count; i++) {
            ids[n++] = b.indices[i];
        }
        CHECK_OK(ingot_loader_release(l, &b));
    }
    ingot_cursor_t c;
    CHECK_OK(ingot_loader_save(l, &c));
    CHECK(c.epoch == 0 && c.consumed == RESUME_STEPS * global_batch);
    char path[1200];
    snprintf(path, sizeof(path), "%s/cursor", dir);
    if (rank == 0) {
        CHECK_OK(ingot_cursor_write(path, &c));
        snprintf(path, sizeof(path), "%s/a.world", dir);
        FILE *f = fopen(path, "w");
        CHECK(f != NULL && fprintf(f, "%d\n", world) > 0);
        fclose(f);
    }
    ingot_cursor_release(&c);
    write_ids(dir, "a", ids, n);
    say_node_store(l);
    free(ids);
    ingot_loader_destroy(l);
}

static void run_resume_b(ingot_ctx_h ctx, const char *dir)
{
    char path[1200];
    snprintf(path, sizeof(path), "%s/cursor", dir);
    ingot_manifest_h m;
    ingot_manifest_info_t mi;
    CHECK_OK(ingot_manifest_open(manifest, INGOT_MANIFEST_OPEN_LAZY, &m));
    CHECK_OK(ingot_manifest_query(m, &mi));
    uint64_t records = 0; /* the samples' bytes in the shards, without the framing around them */
    for (uint64_t i = 0; rank == 0 && i < mi.sample_count; i++) {
        ingot_sample_info_t si;
        CHECK_OK(ingot_manifest_sample_get(m, i, &si));
        records += si.length;
    }
    if (rank == 0) {
        printf("dataset records %llu\n", (unsigned long long)records);
    }
    ingot_manifest_close(m);
    ingot_cursor_expect_t expect = {
        .manifest_digest = mi.digest, .seed = SEED, .world_size = (uint32_t)world};
    ingot_cursor_t c;
    CHECK_OK(ingot_cursor_read(path, &expect, &c));
    ingot_loader_params_t p = params(1);
    p.field_mask |= INGOT_LOADER_PARAM_FIELD_CURSOR;
    p.cursor = &c;
    ingot_loader_h l;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    uint64_t *ids = calloc(n_samples, sizeof(uint64_t));
    size_t n = 0;
    ingot_batch_t b;
    ingot_status_t st;
    while ((st = ingot_loader_next(l, &b)) == INGOT_OK) {
        CHECK(b.epoch_step >= RESUME_STEPS);
        check_mpi_batch(&b);
        for (uint32_t i = 0; i < b.count; i++) {
            ids[n++] = b.indices[i];
        }
        CHECK_OK(ingot_loader_release(l, &b));
    }
    CHECK_STATUS(st, INGOT_END_OF_DATA);
    write_ids(dir, "b", ids, n);
    say_node_store(l);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) { /* exactly once over both runs: the ranks of run a, then those of run b */
        uint8_t *seen = calloc(n_samples, 1);
        uint64_t total = 0, id;
        int world_a = 0;
        snprintf(path, sizeof(path), "%s/a.world", dir);
        FILE *wf = fopen(path, "r");
        CHECK(wf != NULL && fscanf(wf, "%d", &world_a) == 1 && world_a > 0);
        fclose(wf);
        for (int r = 0; r < world_a + world; r++) {
            snprintf(path, sizeof(path), "%s/%s.%d", dir, r < world_a ? "a" : "b",
                     r < world_a ? r : r - world_a);
            FILE *f = fopen(path, "r");
            CHECK(f != NULL);
            while (fread(&id, sizeof(id), 1, f) == 1) {
                CHECK(id < n_samples && seen[id]++ == 0);
                total++;
            }
            fclose(f);
        }
        CHECK(total == n_samples);
        free(seen);
    }
    free(ids);
    ingot_cursor_release(&c);
    ingot_loader_destroy(l);
}

static void run_two_loaders(ingot_ctx_h ctx)
{
    ingot_loader_params_t pa = params(1), pb = params(1);
    pb.seed = SEED + 1;
    pb.global_batch = 2 * global_batch;
    ingot_loader_h a, b;
    CHECK_OK(ingot_loader_create(ctx, &pa, &a));
    CHECK_OK(ingot_loader_create(ctx, &pb, &b));
    uint64_t na = 0, nb = 0;
    ingot_batch_t ba, bb;
    for (int more = 1; more;) {
        ingot_status_t sa = ingot_loader_next(a, &ba), sb = ingot_loader_next(b, &bb);
        CHECK((sa == INGOT_OK || sa == INGOT_END_OF_DATA) &&
              (sb == INGOT_OK || sb == INGOT_END_OF_DATA));
        if (sa == INGOT_OK) {
            check_mpi_batch(&ba);
            na += ba.count;
            CHECK_OK(ingot_loader_release(a, &ba));
        }
        if (sb == INGOT_OK) {
            check_mpi_batch(&bb);
            nb += bb.count;
            CHECK_OK(ingot_loader_release(b, &bb));
        }
        more = (sa == INGOT_OK || sb == INGOT_OK);
    }
    CHECK(na * (uint64_t)world == n_samples && nb * (uint64_t)world == n_samples);
    ingot_loader_destroy(b);
    ingot_loader_destroy(a);
}

static void run_bad_batch(ingot_ctx_h ctx)
{
    ingot_loader_params_t p = params(1);
    p.global_batch = (uint64_t)world * 10 + 1; /* not divisible by the world size */
    ingot_loader_h l = NULL;
    CHECK_STATUS(ingot_loader_create(ctx, &p, &l), INGOT_ERR_INVALID_PARAM);
    CHECK(l == NULL);
    char want[96]; /* the message names both numbers */
    snprintf(want, sizeof(want), "world size %d does not divide global batch %llu", world,
             (unsigned long long)p.global_batch);
    CHECK_CONTAINS(ingot_last_error(), want);
}

/* Several ranks share a node: its first rank reads the manifest into the node's window with the
 * pread helper. An I/O error there fails ingot_loader_create() on every rank, and the reading
 * rank's message names the manifest (fault-injection builds only). */
static void run_manifest_eio(ingot_ctx_h ctx)
{
    char err[128], want[1200];
    ingot_loader_params_t p = params(1);
    ingot_loader_h l = NULL;
    CHECK_OK(ingot_fault_arm(rank == 0 ? "pread:1:EIO" : "none", err, sizeof(err)));
    CHECK_STATUS(ingot_loader_create(ctx, &p, &l), INGOT_ERR_IO);
    CHECK(l == NULL);
    CHECK_OK(ingot_fault_arm("none", err, sizeof(err)));
    if (rank == 0) {
        snprintf(want, sizeof(want), "%s: pread of ", manifest); /* the file primitive's words */
        CHECK_CONTAINS(ingot_last_error(), want);
        CHECK_CONTAINS(ingot_last_error(), "at offset 0 failed: Input/output error");
    }
}

int main(int argc, char **argv)
{
    if (argc != 3) {
        fprintf(stderr, "usage: %s MODE DIR\n", argv[0]);
        return 2;
    }
    MPI_Init(NULL, NULL);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    ingot_ctx_h ctx;
    CHECK_OK(ingot_init(NULL, &ctx));
    const char *mode = argv[1], *dir = argv[2], *v;
    n_samples = (v = getenv("TEST_LOADER_SAMPLES")) != NULL ? strtoull(v, NULL, 10) : n_samples;
    global_batch = (v = getenv("TEST_LOADER_BATCH")) != NULL ? strtoull(v, NULL, 10) : global_batch;
    CHECK(n_samples > 0 && global_batch > 0);
    check_mpi_dataset(dir, n_samples, 64 << 10, 0, manifest, sizeof(manifest));
    if ((v = getenv("TEST_LOADER_MANIFEST")) != NULL) {
        snprintf(manifest, sizeof(manifest), "%s", v);
    }
    if (strcmp(mode, "pack") == 0) {
        /* packed above */
    } else if (strcmp(mode, "exactly-once") == 0) {
        run_exactly_once(ctx);
    } else if (strcmp(mode, "resume-a") == 0) {
        run_resume_a(ctx, dir);
    } else if (strcmp(mode, "resume-b") == 0) {
        run_resume_b(ctx, dir);
    } else if (strcmp(mode, "two-loaders") == 0) {
        run_two_loaders(ctx);
    } else if (strcmp(mode, "bad-batch") == 0) {
        run_bad_batch(ctx);
    } else if (strcmp(mode, "manifest-eio") == 0) {
        run_manifest_eio(ctx);
    } else {
        fprintf(stderr, "unknown mode %s\n", mode);
        return 2;
    }
    ingot_finalize(ctx);
    MPI_Finalize();
    return 0;
}

/*
 * The peer cache over MPI ranks (INGOT_CACHE_BYTES set by the calling script), 3 epochs, on a
 * dataset the test packs (rank 0 writes, the others wait):
 *   test_cache full DIR ZSTD    the cache holds the whole dataset: epoch 0 reads every record
 *                               from storage, epochs 1 and 2 none (all from peers' windows or
 *                               this rank's own)
 *   test_cache small DIR ZSTD   a budget below the dataset: from epoch 1 on, storage serves
 *                               exactly the records the test predicts are left out (its own
 *                               oracle of the placement rule: each rank keeps the prefix of
 *                               what it reads in epoch 0, in location order per step, that fits
 *                               INGOT_CACHE_BYTES / ranks)
 *   test_cache pad DIR ZSTD     as full, with a batch that does not divide the dataset and the
 *                               tail padded: samples read twice in the fill epoch keep their first
 *                               home, and every window still becomes ready
 *   test_cache fallback DIR ZSTD  as full, but storage must serve the given bytes (the script
 *                               breaks the cache: a damaged window byte, a late peer); checks
 *                               exactly-once and byte-identical delivery, prints the counters
 * TEST_CACHE_STEP_MS=N sleeps N ms per step (fault scripts stop a rank mid-epoch); every rank
 * prints "rank R pid P epoch 1 step 3" when it gets there, and "... create" / "... destroy"
 * before those calls, so a script knows whom to stop; TEST_CACHE_PAUSE_RANK=R makes rank R sleep
 * 2 s after each of the last two lines, so a stop lands before the call; TEST_CACHE_STOP_RANK=R
 * makes rank R stop itself (SIGSTOP) right after its "epoch 1 step 3" line, so a script finds it
 * stopped mid-epoch however busy the machine (a stop sent on seeing the line may come late).
 * Every mode: every sample exactly once per epoch over all ranks, each byte and label equal to
 * what was packed; the counters printed as "epoch E storage S peer P local L" by rank 0.
 * ZSTD > 0 packs compressed members (the staging path), 0 stored ones (scatter into the slot).
 */
#include "common/test.h"
#include "common/loader_data.h"
#include "common/mpi_checks.h"
#include <ingot/ingot.h>
#include <ingot/loader.h>
#include <ingot/order.h>
#include <ingot/shard.h>
#include <signal.h>
#include <stdlib.h>
#include <time.h>

#define N_SAMPLES    1200
#define GLOBAL_BATCH 40
#define PAD_BATCH    44 /* does not divide N_SAMPLES */
#define SEED         99
#define EPOCHS       3

static int rank, world;
static char manifest[1024];

static int cmp_info(const void *a, const void *b)
{
    const ingot_sample_info_t *x = a, *y = b;
    if (x->shard != y->shard) {
        return x->shard < y->shard ? -1 : 1;
    }
    return (x->offset > y->offset) - (x->offset < y->offset);
}

/* Record bytes the placement rule caches, computed here from the public order and manifest. */
static uint64_t predicted_cached(ingot_manifest_h m, ingot_order_h order, uint64_t budget)
{
    uint64_t window = budget / (uint64_t)world, steps = ingot_order_steps(order), total = 0;
    uint64_t slice = GLOBAL_BATCH / (uint64_t)world, ids[GLOBAL_BATCH];
    ingot_sample_info_t info[GLOBAL_BATCH];
    for (int r = 0; r < world; r++) {
        uint64_t used = 0;
        int full = 0;
        for (uint64_t s = 0; s < steps && !full; s++) {
            CHECK_OK(ingot_order_slice(order, 0, s, (uint32_t)r, (uint32_t)world, ids, slice));
            for (uint64_t k = 0; k < slice; k++) {
                CHECK_OK(ingot_manifest_sample_get(m, ids[k], &info[k]));
            }
            qsort(info, slice, sizeof(info[0]), cmp_info);
            for (uint64_t k = 0; k < slice && !full; k++) {
                if (used + info[k].length > window) {
                    full = 1;
                } else {
                    used += info[k].length;
                }
            }
        }
        total += used;
    }
    return total;
}

/* "rank R pid P epoch 1 step 3" for a fault script; the stop rank then stops itself there. */
static void mark_mid_epoch(void)
{
    const char *who = getenv("TEST_CACHE_STOP_RANK");
    printf("rank %d pid %d epoch 1 step 3\n", rank, (int)getpid());
    fflush(stdout);
    if (who != NULL && atoi(who) == rank) {
        raise(SIGSTOP);
    }
}

/* "rank R pid P WHAT" for a fault script; the pause rank then waits for its stop. */
static void mark(const char *what)
{
    const char *who = getenv("TEST_CACHE_PAUSE_RANK");
    printf("rank %d pid %d %s\n", rank, (int)getpid(), what);
    fflush(stdout);
    if (who != NULL && atoi(who) == rank) {
        struct timespec pause = {2, 0};
        nanosleep(&pause, NULL);
    }
}

int main(int argc, char **argv)
{
    CHECK(argc == 4);
    const char *mode = argv[1];
    ingot_ctx_h ctx;
    CHECK_OK(ingot_init(NULL, &ctx));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    check_mpi_dataset(argv[2], N_SAMPLES, 256 << 10, atoi(argv[3]), manifest, sizeof(manifest));
    const char *budget_env = getenv("INGOT_CACHE_BYTES");
    CHECK(budget_env != NULL);
    uint64_t budget = strtoull(budget_env, NULL, 10);

    /* pad: a batch that does not divide the dataset, the tail padded by wrapping to the start
     * of the order, so some samples are read twice in the fill epoch */
    int pad = (strcmp(mode, "pad") == 0);
    uint64_t batch = pad ? PAD_BATCH : GLOBAL_BATCH;
    ingot_loader_params_t p = {
        .field_mask = INGOT_LOADER_PARAM_FIELD_MANIFEST | INGOT_LOADER_PARAM_FIELD_BATCH |
                      INGOT_LOADER_PARAM_FIELD_SEED | INGOT_LOADER_PARAM_FIELD_EPOCHS |
                      INGOT_LOADER_PARAM_FIELD_TAIL,
        .manifest_path = manifest,
        .global_batch = batch,
        .seed = SEED,
        .epochs = EPOCHS,
        .tail = pad ? INGOT_ORDER_TAIL_PAD : INGOT_ORDER_TAIL_DROP};
    ingot_loader_h l;
    mark("create");
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    ingot_manifest_h m;
    CHECK_OK(ingot_manifest_open(manifest, INGOT_MANIFEST_OPEN_LAZY, &m));
    ingot_order_h order = check_mpi_order(N_SAMPLES, GLOBAL_BATCH, SEED);
    ingot_order_h pad_order =
        pad ? check_mpi_order_tail(N_SAMPLES, batch, SEED, INGOT_ORDER_TAIL_PAD) : NULL;
    uint64_t steps = pad ? (N_SAMPLES + batch - 1) / batch : ingot_order_steps(order);
    uint64_t slice = batch / (uint64_t)world;
    CHECK(pad ? steps * batch > N_SAMPLES : steps * batch == N_SAMPLES); /* the tail */
    uint64_t *ids = calloc(steps * slice, sizeof(uint64_t)), records[EPOCHS] = {0};
    const char *step_ms = getenv("TEST_CACHE_STEP_MS");
    struct timespec pause = {0, step_ms ? atol(step_ms) * 1000000L : 0};
    for (uint64_t epoch = 0; epoch < EPOCHS; epoch++) {
        for (uint64_t s = 0; s < steps; s++) {
            /* records per epoch: a padded tail differs per epoch */
            check_mpi_step(l, m, epoch, slice, ids + s * slice, &records[epoch]);
            if (epoch == 1 && s == 3) {
                mark_mid_epoch();
            }
            if (pause.tv_nsec > 0) {
                nanosleep(&pause, NULL);
            }
        }
        if (pad) { /* the tail's samples come twice, as the order says */
            check_mpi_padded(ids, (int)(steps * slice), pad_order, epoch, N_SAMPLES, steps * batch);
        } else {
            check_mpi_exactly_once(ids, (int)(steps * slice), N_SAMPLES);
        }
    }
    /* Where each epoch's records came from, summed over ranks. */
    uint64_t mine[EPOCHS][3], sum[EPOCHS][3], all_records[EPOCHS];
    for (uint64_t e = 0; e < EPOCHS; e++) {
        ingot_loader_epoch_bytes_t eb;
        CHECK_OK(ingot_loader_epoch_bytes(l, e, &eb));
        mine[e][0] = eb.bytes_storage;
        mine[e][1] = eb.bytes_peer;
        mine[e][2] = eb.bytes_local;
    }
    CHECK_STATUS(ingot_loader_epoch_bytes(l, EPOCHS, &(ingot_loader_epoch_bytes_t){0}),
                 INGOT_ERR_OUT_OF_RANGE);
    MPI_Allreduce(mine, sum, EPOCHS * 3, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(records, all_records, EPOCHS, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    char paths[4096];
    CHECK_OK(ingot_loader_cache_paths(l, paths, sizeof(paths)));
    if (rank == 0) {
        printf("records of epoch 0 %llu; paths from rank 0:\n%s",
               (unsigned long long)all_records[0], paths);
        for (int e = 0; e < EPOCHS; e++) {
            printf("epoch %d storage %llu peer %llu local %llu\n", e, (unsigned long long)sum[e][0],
                   (unsigned long long)sum[e][1], (unsigned long long)sum[e][2]);
        }
    }
    for (int e = 0; e < EPOCHS; e++) {
        CHECK(sum[e][0] + sum[e][1] + sum[e][2] == all_records[e]); /* each record counted once */
    }
    CHECK(sum[0][0] == all_records[0]);     /* the fill epoch reads storage only */
    if (strcmp(mode, "full") == 0 || pad) { /* pad: every home marked its window ready */
        for (int e = 1; e < EPOCHS; e++) {
            CHECK(sum[e][0] == 0 && sum[e][1] > 0 && sum[e][2] > 0);
        }
    } else if (strcmp(mode, "small") == 0) {
        uint64_t cached = predicted_cached(m, order, budget);
        CHECK(cached > 0 && cached < all_records[0]);
        for (int e = 1; e < EPOCHS; e++) {
            CHECK(sum[e][0] == all_records[e] - cached);
            CHECK(sum[e][1] + sum[e][2] == cached);
        }
    } else {
        CHECK(strcmp(mode, "fallback") == 0);
        CHECK(sum[1][0] + sum[2][0] > 0); /* the script broke something: storage served it */
    }
    free(ids);
    ingot_order_destroy(order);
    ingot_order_destroy(pad_order);
    ingot_manifest_close(m);
    mark("destroy");
    ingot_loader_destroy(l);
    ingot_finalize(ctx);
    if (rank == 0) {
        printf("cache %s: ok\n", mode);
    }
    return 0;
}

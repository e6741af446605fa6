/*
 * The node's disk tier through the loader (INGOT_DISK_CACHE_BYTES and friends set by the calling
 * script), on 1 to 4 ranks, over a dataset the test packs once (rank 0) in DIR/data:
 *   test_disk DIR ZSTD [pack]     (pack: only pack the dataset, for jobs started together)
 *   test_disk relayout FOLDER     (no MPI: every assembled entry of FOLDER sealed again under
 *                                  another layout, as a manifest laying its pieces out otherwise
 *                                  would find it; prints how many)
 * Every epoch: every sample exactly once over all ranks, each byte and label as packed, each
 * record counted once by tier. Rank 0 prints, summed over ranks:
 *   disk epoch E storage S disk D peer P local L
 *   disk counters hits H remote R misses M below B admitted A refused F evictions V
 *        prefetched P bad X failed Y
 * TEST_DISK_EXPECT says what must hold besides:
 *   warm   nothing from storage: every epoch's storage 0 and the tier read nothing below
 *   cold   epoch 0 read storage, and pieces were admitted
 *   bad    entries were found bad (the script damaged them and checks which from the log), all
 *          still delivered right
 *   any    (default) nothing more
 * TEST_DISK_EPOCHS (3), TEST_DISK_SAMPLES (1200), TEST_DISK_BATCH (40), TEST_DISK_SEED (7) shape
 * the job; TEST_DISK_STEP_MS sleeps per step and every rank prints "rank R pid P" at start and
 * "rank R pid P step S" after each step (a script's cue to stop or kill it).
 * TEST_DISK_GATE=DIR and TEST_DISK_PARTIES=N make jobs started together overlap: rank 0 makes
 * DIR/<pid> before its loader, then waits (60 s at most) until DIR holds N files, N jobs having
 * come; and prints "rank 0 first step at T" and "rank 0 last step at T" (CLOCK_REALTIME, in ns)
 * before its first step and after its last, for the script to check the jobs' reads intersect.
 */
#include "common/test.h"
#include "common/loader_data.h"
#include "common/mpi_checks.h"
#include "source/disk/entry.h"
#include <ingot/ingot.h>
#include <ingot/loader.h>
#include <ingot/order.h>
#include <ingot/shard.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define EPOCHS_MAX   16
#define TIERS        4 /* storage, disk, peer, local */
#define COUNTERS     12
#define GATE_POLL_MS 10
#define GATE_WAIT_S  60 /* the other jobs' launch, on a loaded machine */

static int rank, world;

static uint64_t env_u64(const char *name, uint64_t dfl)
{
    const char *v = getenv(name);
    return v != NULL && *v != '\0' ? strtoull(v, NULL, 10) : dfl;
}

/* The files in @p dir (its dot entries aside). */
static uint64_t gate_count(const char *dir)
{
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    uint64_t n = 0;
    for (struct dirent *de; (de = readdir(d)) != NULL;) {
        n += de->d_name[0] != '.';
    }
    closedir(d);
    return n;
}

/* TEST_DISK_GATE: this job's arrival made known, then every job's awaited (rank 0), before the
 * loader reads anything; 1 when gated. */
static int gate(void)
{
    const char *dir = getenv("TEST_DISK_GATE");
    if (dir == NULL || *dir == '\0') {
        return 0;
    }
    if (rank == 0) {
        char path[1024];
        snprintf(path, sizeof(path), "%s/%d", dir, (int)getpid());
        FILE *f = fopen(path, "w");
        CHECK(f != NULL && fclose(f) == 0);
        uint64_t parties = env_u64("TEST_DISK_PARTIES", 2);
        struct timespec poll = {0, GATE_POLL_MS * 1000000L}, t0, t;
        clock_gettime(CLOCK_MONOTONIC, &t0);
        while (gate_count(dir) < parties) {
            clock_gettime(CLOCK_MONOTONIC, &t);
            CHECK(t.tv_sec - t0.tv_sec < GATE_WAIT_S); /* the other jobs never came */
            nanosleep(&poll, NULL);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return 1;
}

/* "rank 0 WHAT at T", T the wall clock in ns (comparable between processes). */
static void gate_say(const char *what)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    printf("rank 0 %s at %llu\n", what,
           (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec);
    fflush(stdout);
}

/* Run the epochs, checking every batch; the record bytes of each epoch into @p records; rank 0
 * of a gated job says when its first step starts and its last ends. */
static void run_epochs(ingot_loader_h l, ingot_manifest_h m, uint64_t epochs, uint64_t n,
                       uint64_t slice, int gated, uint64_t *records)
{
    uint64_t steps = n / (slice * (uint64_t)world);
    uint64_t *ids = calloc(steps * slice, sizeof(uint64_t));
    struct timespec pause = {0, (long)env_u64("TEST_DISK_STEP_MS", 0) * 1000000L};
    if (gated && rank == 0) {
        gate_say("first step");
    }
    for (uint64_t e = 0; e < epochs; e++) {
        for (uint64_t s = 0; s < steps; s++) {
            check_mpi_step(l, m, e, slice, ids + s * slice, &records[e]);
            if (pause.tv_nsec > 0) {
                printf("rank %d pid %d step %llu\n", rank, (int)getpid(),
                       (unsigned long long)(e * steps + s));
                fflush(stdout);
                nanosleep(&pause, NULL);
            }
        }
        check_mpi_exactly_once(ids, (int)(steps * slice), steps * slice * (uint64_t)world);
    }
    if (gated && rank == 0) {
        gate_say("last step");
    }
    free(ids);
}

/* This rank's disk counters, in the order printed. */
static void disk_counters(ingot_loader_h l, uint64_t *c)
{
    ingot_loader_stats_t s = {.field_mask = INGOT_LOADER_STATS_FIELD_DISK};
    CHECK_OK(ingot_loader_stats(l, &s));
    uint64_t v[COUNTERS] = {s.disk_hits,        s.disk_remote_hits, s.disk_misses,
                            s.disk_bytes_below, s.disk_admitted,    s.disk_refused,
                            s.disk_evictions,   s.disk_prefetched,  s.disk_bad_entries,
                            s.disk_fill_errors, s.disk_bytes,       s.disk_prefetch_bytes};
    memcpy(c, v, sizeof(v));
}

/* Seal the assembled entry at @p path (name @p name in fan-out folder @p fan) again under another
 * layout, checksum and block hashes right: 1 when it was an assembled one. */
static int relayout_one(const char *path, const char *fan, const char *name)
{
    ingot_disk_key_t key;
    if (ingot_disk_entry_parse(fan, name, &key) != 0) {
        return 0; /* a temporary, or not an entry */
    }
    int fd = open(path, O_RDWR);
    struct stat sb;
    CHECK(fd >= 0 && fstat(fd, &sb) == 0 && sb.st_size >= INGOT_DISK_HEADER_BYTES);
    uint8_t *e = malloc((size_t)sb.st_size);
    CHECK(e != NULL && pread(fd, e, (size_t)sb.st_size, 0) == sb.st_size);
    uint32_t version;
    memcpy(&version, e + 8, sizeof(version));
    int assembled = version == INGOT_DISK_ENTRY_ASSEMBLED;
    if (assembled) {
        ingot_disk_entry_seal(e, &key, (uint64_t)sb.st_size - INGOT_DISK_HEADER_BYTES, 0x1a7e);
        CHECK(pwrite(fd, e, INGOT_DISK_HEADER_BYTES, 0) == INGOT_DISK_HEADER_BYTES);
    }
    free(e);
    close(fd);
    return assembled;
}

static int relayout(const char *folder)
{
    DIR *top = opendir(folder);
    CHECK(top != NULL);
    struct dirent *f, *e;
    int n = 0;
    while ((f = readdir(top)) != NULL) {
        char fan[1024];
        snprintf(fan, sizeof(fan), "%s/%s", folder, f->d_name);
        DIR *sub = strlen(f->d_name) == 2 && f->d_name[0] != '.' ? opendir(fan) : NULL;
        while (sub != NULL && (e = readdir(sub)) != NULL) {
            char path[2048];
            snprintf(path, sizeof(path), "%s/%s", fan, e->d_name);
            n += e->d_name[0] != '.' && relayout_one(path, f->d_name, e->d_name);
        }
        if (sub != NULL) {
            closedir(sub);
        }
    }
    closedir(top);
    printf("relayout: %d assembled entries sealed under another layout\n", n);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "relayout") == 0) {
        return relayout(argv[2]);
    }
    CHECK(argc == 3 || argc == 4);
    ingot_ctx_h ctx;
    CHECK_OK(ingot_init(NULL, &ctx));
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &world);
    uint64_t n = env_u64("TEST_DISK_SAMPLES", 1200), batch = env_u64("TEST_DISK_BATCH", 40);
    uint64_t epochs = env_u64("TEST_DISK_EPOCHS", 3);
    const char *expect = getenv("TEST_DISK_EXPECT") ? getenv("TEST_DISK_EXPECT") : "any";
    CHECK(epochs <= EPOCHS_MAX && n % batch == 0 && batch % (uint64_t)world == 0);
    char manifest[1024];
    check_mpi_dataset(argv[1], n, 256 << 10, atoi(argv[2]), manifest, sizeof(manifest));
    if (argc == 4) {
        ingot_finalize(ctx);
        return 0;
    }
    if (env_u64("TEST_DISK_STEP_MS", 0) > 0) {
        printf("rank %d pid %d\n", rank, (int)getpid());
        fflush(stdout);
    }
    int gated = gate();
    ingot_loader_params_t p = data_params(manifest, batch, env_u64("TEST_DISK_SEED", 7), 4, 0, 0);
    p.field_mask |= INGOT_LOADER_PARAM_FIELD_EPOCHS;
    p.epochs = epochs;
    ingot_loader_h l;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    ingot_manifest_h m;
    CHECK_OK(ingot_manifest_open(manifest, INGOT_MANIFEST_OPEN_LAZY, &m));
    uint64_t records[EPOCHS_MAX] = {0}, all_records[EPOCHS_MAX];
    run_epochs(l, m, epochs, n, batch / (uint64_t)world, gated, records);
    uint64_t mine[EPOCHS_MAX][TIERS], sum[EPOCHS_MAX][TIERS], c[COUNTERS], cs[COUNTERS];
    for (uint64_t e = 0; e < epochs; e++) {
        ingot_loader_epoch_bytes_t eb;
        CHECK_OK(ingot_loader_epoch_bytes(l, e, &eb));
        uint64_t t[TIERS] = {eb.bytes_storage, eb.bytes_disk, eb.bytes_peer, eb.bytes_local};
        memcpy(mine[e], t, sizeof(t));
    }
    disk_counters(l, c);
    char report[4096];
    CHECK_OK(ingot_loader_disk_report(l, report, sizeof(report)));
    MPI_Allreduce(mine, sum, EPOCHS_MAX * TIERS, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(records, all_records, EPOCHS_MAX, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(c, cs, COUNTERS, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) {
        printf("%s", report);
        for (uint64_t e = 0; e < epochs; e++) {
            printf("disk epoch %llu storage %llu disk %llu peer %llu local %llu\n",
                   (unsigned long long)e, (unsigned long long)sum[e][0],
                   (unsigned long long)sum[e][1], (unsigned long long)sum[e][2],
                   (unsigned long long)sum[e][3]);
        }
        printf("disk counters hits %llu remote %llu misses %llu below %llu admitted %llu refused "
               "%llu evictions %llu prefetched %llu bad %llu failed %llu\n",
               (unsigned long long)cs[0], (unsigned long long)cs[1], (unsigned long long)cs[2],
               (unsigned long long)cs[3], (unsigned long long)cs[4], (unsigned long long)cs[5],
               (unsigned long long)cs[6], (unsigned long long)cs[7], (unsigned long long)cs[8],
               (unsigned long long)cs[9]);
        fflush(stdout);
    }
    for (uint64_t e = 0; e < epochs; e++) {
        CHECK(sum[e][0] + sum[e][1] + sum[e][2] + sum[e][3] == all_records[e]);
        if (strcmp(expect, "warm") == 0) {
            CHECK(sum[e][0] == 0);
        }
    }
    if (strcmp(expect, "warm") == 0) {
        CHECK(cs[3] == 0 && cs[8] == 0); /* nothing read below, nothing bad */
    } else if (strcmp(expect, "cold") == 0) {
        CHECK(sum[0][0] > 0 && cs[4] > 0);
    } else if (strcmp(expect, "bad") == 0) {
        /* findings summed over ranks (an entry two ranks found counts twice): at least the torn,
         * the damaged and the old-format entry; disk.sh checks from the log that these three
         * distinct entries, and no other, were found */
        CHECK(cs[8] >= 3);
    }
    ingot_manifest_close(m);
    ingot_loader_destroy(l);
    ingot_finalize(ctx);
    return 0;
}

/*
 * The disk tier's destroy takes one INGOT_TIMEOUT at most, however long its queue of fills (MPI
 * singleton). Another process holds the folder's ledger (its flock, as a job stuck in a scan
 * would): every fill waits for it. A cold epoch (of two) queues a fill per piece, then the loader
 * is destroyed: what is not written by INGOT_TIMEOUT is dropped, said once, and the destroy returns
 * within 2 x INGOT_TIMEOUT (before, each queued fill waited its own INGOT_TIMEOUT in turn).
 * The lock let go, the next loader finds no temporary and no bad entry, and the ledger counts
 * exactly the entries there.
 */
#include "disk_single.h"
#include "base/time.h"
#include <dirent.h>
#include <fcntl.h>
#include <ingot/ingot.h>
#include <ingot/loader.h>
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#define N       48 /* about 12 pieces of 16 KiB: every fill fits the keeper's queue */
#define BATCH   4
#define TIMEOUT 2.0

static char dir[1024];

/* The bytes of the folder's entries, and how many temporaries it holds. */
static uint64_t entry_bytes(uint64_t *fills_p)
{
    uint64_t bytes = 0;
    *fills_p = 0;
    DIR *top = opendir(dir);
    CHECK(top != NULL);
    struct dirent *e;
    while ((e = readdir(top)) != NULL) {
        char sub[2048];
        snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name);
        DIR *fan = strlen(e->d_name) == 2 && e->d_name[0] != '.' ? opendir(sub) : NULL;
        struct dirent *f;
        while (fan != NULL && (f = readdir(fan)) != NULL) {
            char path[4096];
            struct stat st;
            snprintf(path, sizeof(path), "%s/%s", sub, f->d_name);
            if (f->d_name[0] == '.' || stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
                continue;
            }
            if (strstr(f->d_name, ".fill") != NULL) {
                ++*fills_p;
            } else {
                bytes += (uint64_t)st.st_size;
            }
        }
        if (fan != NULL) {
            closedir(fan);
        }
    }
    closedir(top);
    return bytes;
}

static uint64_t ledger_bytes(void)
{
    char path[2048], magic[8];
    uint64_t usage = 0;
    snprintf(path, sizeof(path), "%s/ledger", dir);
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    CHECK(pread(fd, magic, 8, 0) == 8 && memcmp(magic, "INGOTDL1", 8) == 0);
    CHECK(pread(fd, &usage, 8, 8) == 8);
    close(fd);
    return usage;
}

static ingot_loader_h make_loader(ingot_ctx_h ctx, const char *m)
{
    ingot_loader_params_t p = data_params(m, BATCH, 7, 4, 2, 1);
    p.field_mask |= INGOT_LOADER_PARAM_FIELD_EPOCHS;
    p.epochs = 2; /* a next epoch: a fill pays for itself (it is read again) */
    ingot_loader_h l;
    CHECK_OK(ingot_loader_create(ctx, &p, &l));
    return l;
}

int main(void)
{
    char log_path[1024], ledger[2048];
    disk_single_env(dir, sizeof(dir));
    snprintf(log_path, sizeof(log_path), "%s/destroy.log", test_tmpdir());
    setenv("INGOT_LOG_FILE", log_path, 1);
    setenv("INGOT_DISK_PREFETCH", "0", 1);
    setenv("INGOT_TIMEOUT", "2s", 1);
    const char *m = data_set(test_tmpdir(), "data", N, 64 << 10, 0);
    CHECK(m != NULL);
    /* MPI started here, not watched: a singleton's start on a busy machine can take longer
     * than this test's INGOT_TIMEOUT */
    int level;
    CHECK(MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &level) == MPI_SUCCESS);
    ingot_ctx_h ctx;
    CHECK_OK(ingot_init(NULL, &ctx));

    ingot_loader_h l = make_loader(ctx, m); /* the keeper's scan done: the ledger is free */
    snprintf(ledger, sizeof(ledger), "%s/ledger", dir);
    int held = open(ledger, O_RDWR); /* an open file description of its own: flock conflicts */
    CHECK(held >= 0 && flock(held, LOCK_EX) == 0); /* a fill of the first batches may hold it */
    (void)disk_single_drain(l, 1);                 /* epoch 0 */
    ingot_loader_stats_t s = {.field_mask = INGOT_LOADER_STATS_FIELD_DISK};
    CHECK_OK(ingot_loader_stats(l, &s));
    char report[4096];
    CHECK_OK(ingot_loader_disk_report(l, report, sizeof(report)));
    fputs(report, stdout);
    uint64_t t0 = ingot_time_ns();
    ingot_loader_destroy(l);
    double took = (double)(ingot_time_ns() - t0) / 1e9;
    printf("destroy took %.2f s after %llu misses (INGOT_TIMEOUT %.1f s)\n", took,
           (unsigned long long)s.disk_misses, TIMEOUT);
    CHECK(s.disk_misses >= 8); /* a queue long enough that one wait per fill would show */
    CHECK(took <= 2 * TIMEOUT + 0.5);
    char *log = test_read_file(log_path, NULL);
    CHECK(log != NULL);
    fputs(log, stdout);
    /* said once at most: whether fills were still queued at the end (not only being written by
     * the 4 writers) depends on how far they got during the epoch */
    const char *said = strstr(log, "were dropped");
    CHECK(said == NULL || strstr(said + 1, "were dropped") == NULL);
    free(log);

    flock(held, LOCK_UN);
    close(held);
    l = make_loader(ctx, m); /* scans the folder: orphans removed, the ledger made exact */
    (void)disk_single_drain(l, UINT64_MAX);
    s = (ingot_loader_stats_t){.field_mask = INGOT_LOADER_STATS_FIELD_DISK};
    CHECK_OK(ingot_loader_stats(l, &s));
    CHECK(s.disk_bad_entries == 0 && s.disk_fill_errors == 0);
    ingot_loader_destroy(l);
    uint64_t fills, bytes = entry_bytes(&fills);
    printf("after: %llu entry bytes, ledger %llu, %llu temporaries\n", (unsigned long long)bytes,
           (unsigned long long)ledger_bytes(), (unsigned long long)fills);
    CHECK(fills == 0);
    CHECK(bytes > 0 && ledger_bytes() == bytes);
    ingot_finalize(ctx);
    MPI_Finalize();
    return 0;
}

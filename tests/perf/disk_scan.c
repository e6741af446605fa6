/*
 * The disk tier's start-up scan (run by hand by tests/perf/disk_perf.sh scan): a folder of N
 * entries (4 KiB pieces, sealed, written without fsync to make the folder quickly) scanned as a
 * keeper does at start (every name parsed, every entry stat'ed, temporaries lock-tested), warm
 * (the folder's metadata in the page cache) and cold (after dropping the page cache, when this
 * process may: root). Prints one line per scan: "scan warm|cold N entries S s".
 *   disk_scan DIR N [REPS]
 */
#include "common/test.h"
#include "source/disk/folder.h"
#include "base/time.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#define LOG2  12
#define PIECE (1u << LOG2)

static void make_folder(const char *dir, uint64_t n)
{
    char why[1024];
    ingot_disk_folder_t f;
    CHECK_OK(ingot_disk_folder_open(dir, 1, INGOT_NSEC_PER_SEC, &f, why, sizeof(why)));
    ingot_disk_scan_t scan;
    CHECK_OK(ingot_disk_folder_scan(&f, 0, NULL, NULL, &scan));
    uint8_t *buf = aligned_alloc(4096, INGOT_DISK_HEADER_BYTES + PIECE);
    CHECK(buf != NULL);
    memset(buf + INGOT_DISK_HEADER_BYTES, 7, PIECE);
    for (uint64_t i = scan.entries; i < n; i++) { /* a shard per 256 pieces */
        ingot_disk_key_t k = {0x9e3779b97f4a7c15ull * (i / 256 + 1), i % 256, LOG2};
        char name[INGOT_DISK_NAME_MAX], fan[3];
        ingot_disk_entry_name(&k, 0, name, sizeof(name));
        memcpy(fan, name, 2);
        fan[2] = '\0';
        (void)mkdirat(f.fd, fan, 0755);
        ingot_disk_entry_seal(buf, &k, PIECE, 0);
        int fd = openat(f.fd, name, O_WRONLY | O_CREAT | O_TRUNC, 0644);
        CHECK(fd >= 0 && write(fd, buf, INGOT_DISK_HEADER_BYTES + PIECE) ==
                             (ssize_t)(INGOT_DISK_HEADER_BYTES + PIECE));
        close(fd);
    }
    free(buf);
    ingot_disk_folder_close(&f);
}

static int drop_caches(void)
{
    sync();
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY);
    int ok = fd >= 0 && write(fd, "3\n", 2) == 2;
    if (fd >= 0) {
        close(fd);
    }
    return ok;
}

static void scan_once(const char *dir, const char *how)
{
    char why[1024];
    ingot_disk_folder_t f;
    ingot_disk_scan_t scan;
    uint64_t t0 = ingot_time_ns();
    CHECK_OK(ingot_disk_folder_open(dir, 1, INGOT_NSEC_PER_SEC, &f, why, sizeof(why)));
    CHECK_OK(ingot_disk_folder_scan(&f, 1, NULL, NULL, &scan));
    double s = (double)(ingot_time_ns() - t0) / 1e9;
    ingot_disk_folder_close(&f);
    printf("scan %s %" PRIu64 " entries %.4f s\n", how, scan.entries, s);
    fflush(stdout);
}

/* A count argument, or exit 2 naming it. */
static uint64_t count_arg(const char *what, const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno != 0 || end == s || *end != '\0' || v == 0 || s[0] == '-') {
        fprintf(stderr, "disk_scan: %s '%s' is not a positive integer\n", what, s);
        exit(2);
    }
    return v;
}

int main(int argc, char **argv)
{
    if (argc < 3 || argc > 4) {
        fprintf(stderr, "usage: disk_scan DIR N [REPS]\n");
        return 2;
    }
    uint64_t n = count_arg("N", argv[2]);
    int reps = argc > 3 ? (int)count_arg("REPS", argv[3]) : 3;
    make_folder(argv[1], n);
    scan_once(argv[1], "warm"); /* the page cache filled */
    for (int r = 0; r < reps; r++) {
        scan_once(argv[1], "warm");
    }
    for (int r = 0; r < reps; r++) {
        if (!drop_caches()) {
            printf("scan cold: not measured (dropping the page cache needs root)\n");
            break;
        }
        scan_once(argv[1], "cold");
    }
    return 0;
}

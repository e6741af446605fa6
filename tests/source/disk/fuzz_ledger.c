/*
 * Fuzz target: the disk tier's ledger (source/disk/folder.c), the one file jobs sharing a folder
 * count its usage in, as a file "ledger" in a folder of the target's own (the tier writes the
 * ledger through a descriptor it opens for each write, beside the folder's). Input: a usage (8 bytes), a change to add to it (8, signed), a
 * byte of the ledger to damage (1: which, 1: what it is XORed with), then a ledger file as found.
 * Checked: a file read as a usage is the ledger that usage writes (its first 24 bytes; anything
 * else reads as 0, "damaged: the next scan writes it anew"); a usage written reads back; a change
 * added saturates at 0 and at UINT64_MAX, never wraps; one damaged byte reads as 0.
 */
#include "source/disk/folder.h"
#include "common/fuzz.h"
#include <fcntl.h>
#include <stdlib.h>

#define FUZZ_LEDGER_MAX 4096
#define LEDGER_BYTES    24 /* "INGOTDL1", usage, checksum: folder.h */

static ingot_disk_folder_t folder = {.fd = -1, .ledger_fd = -1, .path = "fuzz"};
static char dir[] = "/tmp/ingot-fuzz-ledger.XXXXXX";

static void folder_remove(void)
{
    unlinkat(folder.fd, "ledger", 0);
    rmdir(dir);
}

/* The target's folder, made once (removed at exit), and the ledger in it holding @p file. */
static int ledger_file(const uint8_t *file, size_t n)
{
    if (folder.fd < 0) {
        if (mkdtemp(dir) == NULL || (folder.fd = open(dir, O_DIRECTORY | O_CLOEXEC)) < 0) abort();
        atexit(folder_remove);
    }
    if (folder.ledger_fd >= 0) close(folder.ledger_fd);
    int fd = openat(folder.fd, "ledger", O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || pwrite(fd, file, n, 0) != (ssize_t)n) abort();
    return fd;
}

/* The ledger file as found (the folder's ledger from now on): a usage read from it is what
 * writing that usage gives. */
static void check_found(const uint8_t *file, size_t n)
{
    uint8_t again[LEDGER_BYTES];
    folder.ledger_fd = ledger_file(file, n);
    uint64_t u = ingot_disk_ledger_usage(&folder);
    if (u == 0) return;
    ingot_disk_ledger_set(&folder, u);
    if (n < LEDGER_BYTES || pread(folder.ledger_fd, again, sizeof(again), 0) != LEDGER_BYTES ||
        memcmp(again, file, LEDGER_BYTES) != 0) {
        abort(); /* a usage read from what its own ledger is not */
    }
}

static uint64_t saturated(uint64_t u, int64_t delta)
{
    if (delta < 0) return (uint64_t) - (delta + 1) >= u ? 0 : u - (uint64_t) - (delta + 1) - 1;
    return UINT64_MAX - u < (uint64_t)delta ? UINT64_MAX : u + (uint64_t)delta;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    if (size > FUZZ_LEDGER_MAX) return 0;
    fuzz_in_t in = {data, size};
    uint64_t usage = fuzz_take(&in, 8);
    int64_t delta = (int64_t)fuzz_take(&in, 8);
    unsigned at = (unsigned)fuzz_take(&in, 1) % LEDGER_BYTES;
    uint8_t x = (uint8_t)fuzz_take(&in, 1), byte;
    uint8_t *file = fuzz_copy(in.p, in.left);
    if (file == NULL) return 0;
    check_found(file, in.left);
    free(file);
    ingot_disk_ledger_set(&folder, usage);
    if (ingot_disk_ledger_usage(&folder) != usage) abort(); /* written, read back */
    ingot_disk_ledger_add(&folder, delta);
    if (ingot_disk_ledger_usage(&folder) != saturated(usage, delta)) abort();
    if (x != 0 && pread(folder.ledger_fd, &byte, 1, at) == 1) {
        byte ^= x;
        if (pwrite(folder.ledger_fd, &byte, 1, at) != 1 || ingot_disk_ledger_usage(&folder) != 0) {
            abort(); /* a damaged ledger taken for a usage */
        }
    }
    return 0;
}

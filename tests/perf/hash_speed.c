/*
 * The content hash's speed on this machine (run by hand; the figure behind base/hash.h's choice
 * of xxHash's dispatcher): XXH3-64 of SIZE-byte buffers, Debian's XXH3_64bits() (built for the
 * x86-64 baseline: SSE2) against ingot_hash64() (xxHash's dispatcher: AVX-512/AVX2 when the CPU
 * has them), over a buffer in cache and right after a pread() of a random SIZE range of FILE
 * (what the loader's reader hashes), with the pread's own time beside, and the copy of the same
 * ranges out of the file mapped once (INGOT_MAP_SHARDS). Prints per size:
 *   "SIZE baseline|ingot cached X GB/s, after-pread Y GB/s; pread Z us",
 *   "SIZE copy out of the mapping Z us".
 *   hash_speed FILE [SIZE ...]     (sizes in bytes; default 16384 112640 262144)
 */
#include "common/test.h"
#include "base/hash.h"
#include "base/time.h"
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define REPS 20000

/* Debian's symbol itself, not the dispatcher (xxh_x86dispatch.h renames XXH3_64bits). */
#undef XXH3_64bits
XXH_PUBLIC_API XXH64_hash_t XXH3_64bits(const void *data, size_t len);

static uint64_t hash_with(int dispatched, const void *p, size_t n)
{
    return dispatched ? ingot_hash64(p, n) : XXH3_64bits(p, n);
}

static void measure(int fd, off_t fsize, size_t size)
{
    uint8_t *buf = aligned_alloc(4096, (size + 4095) & ~(size_t)4095);
    CHECK(buf != NULL && (off_t)size < fsize);
    memset(buf, 1, size);
    uint64_t sink = 0;
    for (int d = 0; d < 2; d++) {
        uint64_t t0 = ingot_time_ns();
        for (int i = 0; i < REPS; i++) {
            buf[i % size]++;
            sink += hash_with(d, buf, size);
        }
        double cached = (double)size * REPS / (double)(ingot_time_ns() - t0);
        uint64_t tread = 0, thash = 0;
        srand(1);
        for (int i = 0; i < REPS; i++) {
            off_t at = (off_t)(((uint64_t)rand() * 4096) % (uint64_t)(fsize - (off_t)size));
            uint64_t a = ingot_time_ns();
            CHECK(pread(fd, buf, size, at) == (ssize_t)size);
            uint64_t b = ingot_time_ns();
            sink += hash_with(d, buf, size);
            tread += b - a;
            thash += ingot_time_ns() - b;
        }
        printf("%zu %s cached %.1f GB/s, after-pread %.1f GB/s; pread %.2f us\n", size,
               d ? "ingot" : "baseline", cached, (double)size * REPS / (double)thash,
               (double)tread / REPS / 1e3);
    }
    /* the copy itself: preadv's against a memcpy out of the file mapped once (warmed first) */
    const uint8_t *map = mmap(NULL, (size_t)fsize, PROT_READ, MAP_SHARED, fd, 0);
    CHECK(map != MAP_FAILED);
    for (off_t at = 0; at < fsize; at += 4096) {
        sink += map[at];
    }
    uint64_t tmap = 0;
    srand(1);
    for (int i = 0; i < REPS; i++) {
        off_t at = (off_t)(((uint64_t)rand() * 4096) % (uint64_t)(fsize - (off_t)size));
        uint64_t a = ingot_time_ns();
        memcpy(buf, map + at, size);
        tmap += ingot_time_ns() - a;
        sink += buf[i % size];
    }
    printf("%zu copy out of the mapping %.2f us\n", size, (double)tmap / REPS / 1e3);
    munmap((void *)map, (size_t)fsize);
    fprintf(stderr, "(%llx)\n", (unsigned long long)(sink & 1));
    free(buf);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: hash_speed FILE [SIZE ...]\n");
        return 2;
    }
    int fd = open(argv[1], O_RDONLY);
    struct stat st;
    CHECK(fd >= 0 && fstat(fd, &st) == 0);
    static const size_t sizes[] = {16384, 112640, 262144};
    if (argc > 2) {
        for (int i = 2; i < argc; i++) {
            measure(fd, st.st_size, (size_t)strtoull(argv[i], NULL, 10));
        }
    } else {
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            measure(fd, st.st_size, sizes[i]);
        }
    }
    close(fd);
    return 0;
}

/*
 * What the loader's stages cost (include/ingot/sim.h): measured here by a brief run of the code
 * the loader runs (the content hash, a copy, zstd's decoding, reads of a file), or read from a
 * cost file written by an earlier calibration or by hand, for hardware this machine is not.
 *
 * A cost file: '#' comments, then "version 2", then one "stage value" line per stage, every stage
 * once. Anything else is refused, naming the file, the line and the stage.
 */
#include "runtime/sim/sim_impl.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"
#include "base/time.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zstd.h>

typedef struct cost_field {
    const char *name;
    size_t off;
    const char *what;
} cost_field_t;

#define COST(_f, _what) \
    { \
#        _f, offsetof(ingot_sim_costs_t, _f), _what \
    }
static const cost_field_t cost_fields[] = {
    COST(verify_bps, "bytes/s one core hashes (XXH3)"),
    COST(copy_bps, "bytes/s one core copies"),
    COST(decode_bps, "bytes/s one core decodes (zstd, bytes out)"),
    COST(sample_s, "s per sample besides its bytes"),
    COST(read_bps, "bytes/s one rank reads shard files"),
    COST(read_s, "s per read of a shard file"),
    COST(peer_bps, "bytes/s one rank fetches from a peer of its node"),
    COST(peer_s, "s per peer fetch"),
    COST(fault_bps, "bytes/s one core maps in (a first read of mapped pages)"),
    COST(disk_bps, "bytes/s of a disk tier hit's work beyond a file read's, one core"),
    COST(get_s, "s of a GET's latency (0: not measured)"),
    COST(get_bps, "bytes/s of one GET (0: not measured)"),
    COST(store_bps, "bytes/s of 16 GETs of a part at once (0: not measured)"),
    COST(get_rate, "GET/s of 16 GETs of 128 KiB at once (0: not measured)"),
};
#define NCOSTS (sizeof(cost_fields) / sizeof(cost_fields[0]))

static double *cost_at(ingot_sim_costs_t *c, size_t i)
{
    return (double *)((char *)c + cost_fields[i].off);
}

/* Whether @p v may be stage @p i's value: a rate > 0, a fixed cost >= 0; the store's figures
 * may be 0 (not measured). */
static int cost_ok(size_t i, double v)
{
    const char *key = cost_fields[i].name;
    int store = strncmp(key, "get_", 4) == 0 || strncmp(key, "store_", 6) == 0;
    int rate = !store && strstr(key, "_bps") != NULL;
    return (rate ? v > 0 : v >= 0) && v <= 1e300;
}

ingot_status_t ingot_sim_costs_check(const ingot_sim_costs_t *c)
{
    for (size_t i = 0; i < NCOSTS; i++) {
        double v = *cost_at((ingot_sim_costs_t *)c, i);
        if (!cost_ok(i, v)) {
            return ingot_fail(INGOT_ERR_INVALID_PARAM, "costs: stage '%s' (%s) is %g",
                              cost_fields[i].name, cost_fields[i].what, v);
        }
    }
    return INGOT_OK;
}

ingot_status_t ingot_sim_costs_write(const char *path, const ingot_sim_costs_t *costs)
{
    FILE *f = fopen(path, "w");
    if (f == NULL) {
        return ingot_fail(ingot_status_from_errno(errno), "%s: cannot write the costs: %s", path,
                          strerror(errno));
    }
    fprintf(f, "# ingot-sim costs (docs/sim.md): stage value, one core or one rank\nversion %d\n",
            INGOT_SIM_COSTS_VERSION);
    for (size_t i = 0; i < NCOSTS; i++) {
        fprintf(f, "%-12s %.6g  # %s\n", cost_fields[i].name,
                *cost_at((ingot_sim_costs_t *)costs, i), cost_fields[i].what);
    }
    if (fclose(f) != 0) {
        return ingot_fail(INGOT_ERR_IO, "%s: cannot write the costs: %s", path, strerror(errno));
    }
    return INGOT_OK;
}

/* One line of a cost file: "version N" (first) or "stage value". */
static ingot_status_t costs_line(const char *path, unsigned lineno, char *line, int *version,
                                 int *seen, ingot_sim_costs_t *c)
{
    char *hash = strchr(line, '#');
    if (hash != NULL) {
        *hash = '\0';
    }
    char key[64], rest[8];
    double v;
    int n = sscanf(line, "%63s %lf %7s", key, &v, rest);
    if (n <= 0) {
        return INGOT_OK; /* blank */
    }
    if (*version == 0) {
        if (n != 2 || strcmp(key, "version") != 0) {
            return ingot_fail(INGOT_ERR_FORMAT,
                              "%s:%u: not an ingot-sim cost file (no 'version' "
                              "line first)",
                              path, lineno);
        }
        if (v != INGOT_SIM_COSTS_VERSION) {
            return ingot_fail(INGOT_ERR_FORMAT,
                              "%s:%u: cost file version %g, this ingot-sim reads version %d "
                              "(calibrate again: ingot-sim --calibrate %s)",
                              path, lineno, v, INGOT_SIM_COSTS_VERSION, path);
        }
        *version = (int)v;
        return INGOT_OK;
    }
    for (size_t i = 0; i < NCOSTS; i++) {
        if (strcmp(key, cost_fields[i].name) != 0) {
            continue;
        }
        if (n != 2 || !cost_ok(i, v)) {
            return ingot_fail(INGOT_ERR_FORMAT, "%s:%u: stage '%s': not a positive number", path,
                              lineno, key);
        }
        if (seen[i]) {
            return ingot_fail(INGOT_ERR_FORMAT, "%s:%u: stage '%s' given twice", path, lineno, key);
        }
        seen[i] = 1;
        *cost_at(c, i) = v;
        return INGOT_OK;
    }
    return ingot_fail(INGOT_ERR_FORMAT, "%s:%u: unknown stage '%s'", path, lineno, key);
}

ingot_status_t ingot_sim_costs_read(const char *path, ingot_sim_costs_t *costs_p)
{
    FILE *f = fopen(path, "r");
    if (f == NULL) {
        return ingot_fail(ingot_status_from_errno(errno), "%s: cannot read the costs: %s", path,
                          strerror(errno));
    }
    ingot_sim_costs_t c = {0};
    int version = 0, seen[NCOSTS] = {0};
    char line[512];
    unsigned lineno = 0;
    ingot_status_t st = INGOT_OK;
    while (st == INGOT_OK && fgets(line, sizeof(line), f) != NULL) {
        st = costs_line(path, ++lineno, line, &version, seen, &c);
    }
    fclose(f);
    if (st == INGOT_OK && version == 0) {
        st = ingot_fail(INGOT_ERR_FORMAT, "%s: not an ingot-sim cost file (empty)", path);
    }
    for (size_t i = 0; st == INGOT_OK && i < NCOSTS; i++) {
        if (!seen[i]) {
            st = ingot_fail(INGOT_ERR_FORMAT, "%s: stage '%s' (%s) is missing", path,
                            cost_fields[i].name, cost_fields[i].what);
        }
    }
    if (st == INGOT_OK) {
        *costs_p = c;
    }
    return st;
}

/* ---------------------------------------------------------------- calibration */

#define CAL_BYTES (8u << 20) /* a buffer larger than the last-level cache of most cores */
#define CAL_MIN_S 0.2        /* each stage runs at least this long */

typedef void (*cal_fn)(void *arg, uint8_t *a, uint8_t *b, size_t n);

/* Rate of @p fn over @p n bytes per call, in bytes per second, after one warm-up call. */
static double cal_rate(cal_fn fn, void *arg, uint8_t *a, uint8_t *b, size_t n, size_t out)
{
    fn(arg, a, b, n);
    uint64_t t0 = ingot_time_ns(), t;
    uint64_t calls = 0;
    do {
        fn(arg, a, b, n);
        calls++;
        t = ingot_time_ns();
    } while ((double)(t - t0) / 1e9 < CAL_MIN_S);
    return (double)calls * (double)out / ((double)(t - t0) / 1e9);
}

static volatile uint64_t cal_sink;

static void cal_hash(void *arg, uint8_t *a, uint8_t *b, size_t n)
{
    cal_sink += ingot_hash64(a, n);
}

static void cal_copy(void *arg, uint8_t *a, uint8_t *b, size_t n)
{
    memcpy(b, a, n);
    cal_sink += b[n / 2];
}

typedef struct cal_zstd {
    const void *frame;
    size_t frame_len;
    ZSTD_DCtx *dctx;
} cal_zstd_t;

static void cal_decode(void *arg, uint8_t *a, uint8_t *b, size_t n)
{
    cal_zstd_t *z = arg;
    size_t r = ZSTD_decompressDCtx(z->dctx, b, n, z->frame, z->frame_len);
    cal_sink += ZSTD_isError(r) ? 0 : r;
}

typedef struct cal_file {
    int fd;
    size_t size, chunk;
    size_t at;
} cal_file_t;

static void cal_pread(void *arg, uint8_t *a, uint8_t *b, size_t n)
{
    cal_file_t *f = arg;
    for (size_t done = 0; done < n; done += f->chunk) {
        ssize_t r = pread(f->fd, b, f->chunk, (off_t)f->at);
        cal_sink += r > 0 ? (uint64_t)r : 0;
        f->at = (f->at + f->chunk) % (f->size - f->chunk + 1);
    }
}

/* Text-like bytes (what a zstd member holds): words from a small vocabulary. */
static void cal_text(uint8_t *a, size_t n)
{
    static const char *const words[] = {"the ",     "loader ", "reads ",  "a ",     "shard ", "of ",
                                        "samples ", "and ",    "hashes ", "every ", "byte ",  "\n"};
    uint64_t x = 0x9e3779b97f4a7c15ull;
    for (size_t i = 0; i < n;) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        const char *w = words[x % (sizeof(words) / sizeof(words[0]))];
        for (; *w != '\0' && i < n; w++) {
            a[i++] = (uint8_t)*w;
        }
    }
}

/* A first read of a mapped file's pages: a copy out of a fresh mapping each pass, less the copy. */
static double cal_mapped(int fd, size_t size, uint8_t *b, double copy_bps)
{
    uint64_t t0 = ingot_time_ns(), t;
    size_t bytes = 0;
    do {
        void *m = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED) {
            return copy_bps; /* not measured: as a copy */
        }
        for (size_t off = 0; off + CAL_BYTES <= size; off += CAL_BYTES) {
            memcpy(b, (uint8_t *)m + off, CAL_BYTES);
        }
        cal_sink += b[0];
        munmap(m, size);
        bytes += size;
        t = ingot_time_ns();
    } while ((double)(t - t0) / 1e9 < CAL_MIN_S);
    double per_byte = (double)(t - t0) / 1e9 / (double)bytes - 1 / copy_bps;
    return per_byte > 0 ? 1 / per_byte : 1e12;
}

/* Reads of a file this process writes (in the page cache: what a re-read epoch costs), in 1 MiB
 * reads for the rate and 4 KiB reads for the fixed cost. */
static ingot_status_t cal_files(uint8_t *a, uint8_t *b, ingot_sim_costs_t *c)
{
    char path[] = "/tmp/ingot-sim-calXXXXXX";
    int fd = mkstemp(path);
    if (fd < 0) {
        return ingot_fail(ingot_status_from_errno(errno), "calibrate: %s: %s", path,
                          strerror(errno));
    }
    unlink(path);
    ingot_status_t st = INGOT_OK;
    for (size_t off = 0; off < 8 * (size_t)CAL_BYTES && st == INGOT_OK; off += CAL_BYTES) {
        if (pwrite(fd, a, CAL_BYTES, (off_t)off) != (ssize_t)CAL_BYTES) {
            st = ingot_fail(INGOT_ERR_IO, "calibrate: writing %s: %s", path, strerror(errno));
        }
    }
    if (st == INGOT_OK) {
        cal_file_t big = {.fd = fd, .size = 8 * (size_t)CAL_BYTES, .chunk = 1u << 20};
        c->read_bps = cal_rate(cal_pread, &big, a, b, CAL_BYTES, CAL_BYTES);
        cal_file_t small = {.fd = fd, .size = 8 * (size_t)CAL_BYTES, .chunk = 4096};
        double small_bps = cal_rate(cal_pread, &small, a, b, 64 * 4096, 64 * 4096);
        double per_read = 4096.0 / small_bps - 4096.0 / c->read_bps;
        c->read_s = per_read > 0 ? per_read : 1e-7;
        c->fault_bps = cal_mapped(fd, 8 * (size_t)CAL_BYTES, b, c->copy_bps);
    }
    close(fd);
    return st;
}

ingot_status_t ingot_sim_calibrate(ingot_sim_costs_t *costs_p)
{
    uint8_t *a = ingot_malloc(CAL_BYTES, "calibration");
    uint8_t *b = ingot_malloc(CAL_BYTES, "calibration");
    size_t bound = ZSTD_compressBound(CAL_BYTES);
    void *frame = malloc(bound);
    ZSTD_DCtx *dctx = ZSTD_createDCtx();
    ingot_status_t st = (a && b && frame && dctx) ? INGOT_OK : INGOT_ERR_NO_MEMORY;
    ingot_sim_costs_t c = {0};
    if (st == INGOT_OK) {
        cal_text(a, CAL_BYTES);
        size_t flen = ZSTD_compress(frame, bound, a, CAL_BYTES, 3);
        if (ZSTD_isError(flen)) {
            st = ingot_fail(INGOT_ERR_INTERNAL, "calibrate: zstd: %s", ZSTD_getErrorName(flen));
        } else {
            c.verify_bps = cal_rate(cal_hash, NULL, a, b, CAL_BYTES, CAL_BYTES);
            c.copy_bps = cal_rate(cal_copy, NULL, a, b, CAL_BYTES, CAL_BYTES);
            cal_zstd_t z = {.frame = frame, .frame_len = flen, .dctx = dctx};
            c.decode_bps = cal_rate(cal_decode, &z, a, b, CAL_BYTES, CAL_BYTES);
            st = cal_files(a, b, &c);
        }
    }
    /* Not measured here (given, docs/sim.md): a sample's own handling, and the peer fetch
     * within a node, which needs a job's transport: a shared-memory copy, at the copy's rate
     * once for the transport's bounce and once into the batch. */
    c.sample_s = 2e-6;
    c.peer_bps = c.copy_bps / 2;
    c.peer_s = 30e-6;
    /* a disk tier hit, until the tier itself is run (ingot-sim --calibrate): the entry's bytes
     * read into a buffer, then copied into place */
    c.disk_bps = 1 / (1 / c.read_bps + 1 / c.copy_bps);
    ZSTD_freeDCtx(dctx);
    free(frame);
    free(a);
    free(b);
    if (st == INGOT_OK) {
        *costs_p = c;
    }
    return st;
}

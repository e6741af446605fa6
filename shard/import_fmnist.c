/*
 * Fashion-MNIST importer: the gzipped idx files of the Debian package dataset-fashion-mnist,
 * decompressed in process with zlib (no shell, no child process: the directory name is only ever
 * given to open(2)), turned into samples `<split>-NNNNN` with a `pgm` member (a P5 image) and a
 * `cls` member (the label as decimal text). Splits: train (60,000) then test (10,000).
 */
#include "shard/import.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define FMNIST_IMAGES_MAGIC       0x00000803u /* idx3: unsigned bytes, 3 dimensions */
#define FMNIST_LABELS_MAGIC       0x00000801u /* idx1: unsigned bytes, 1 dimension */
#define FMNIST_HDR_IMAGES         16          /* magic, count, rows, cols */
#define FMNIST_HDR_LABELS         8           /* magic, count */
#define FMNIST_PGM_HDR_MAX        32          /* "P5\n<cols> <rows>\n255\n" */
#define FMNIST_KEY_MAX            64
#define FMNIST_CLS_MAX            16
#define FMNIST_MEMBERS_PER_SAMPLE 2          /* pgm + cls */
#define FMNIST_READ_CHUNK         (1u << 20) /* first buffer and zlib's input buffer */
#define FMNIST_IMAGES_FMT         "%s/%s-images-idx3-ubyte.gz"
#define FMNIST_LABELS_FMT         "%s/%s-labels-idx1-ubyte.gz"

/* One split: the file prefix in the package and the key prefix of its samples. */
typedef struct fmnist_split {
    const char *file, *key;
} fmnist_split_t;

static const fmnist_split_t fmnist_splits[] = {{"train", "train"}, {"t10k", "test"}};

/* Both decompressed files of a split and their geometry. */
typedef struct fmnist_data {
    char images_path[PATH_MAX], labels_path[PATH_MAX];
    uint8_t *img, *lab;
    size_t ilen, llen;
    uint32_t n, rows, cols;
} fmnist_data_t;

static uint32_t fmnist_be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static gzFile fmnist_open(const char *path, ingot_status_t *st_p)
{
    gzFile gz = gzopen(path, "rb");
    if (gz == NULL) {
        int e = errno ? errno : ENOMEM;
        *st_p = ingot_fail(ingot_status_from_errno(e), "%s: cannot open: %s", path, strerror(e));
        return NULL;
    }
    gzbuffer(gz, FMNIST_READ_CHUNK);
    return gz;
}

/* Up to @p len bytes more; 0 at the end. A stream cut short (zlib keeps Z_BUF_ERROR and
 * returns 0 from then on) is an error too, as `gzip -d` makes it. */
static ingot_status_t fmnist_read(gzFile gz, const char *path, void *buf, size_t len, size_t *got_p)
{
    int zerr = Z_OK;
    int n = gzread(gz, buf, (unsigned)len);
    const char *msg = n <= 0 ? gzerror(gz, &zerr) : NULL;
    if (n < 0 || zerr != Z_OK) {
        return ingot_fail(zerr == Z_ERRNO ? ingot_status_from_errno(errno) : INGOT_ERR_FORMAT,
                          "%s: cannot decompress: %s", path,
                          zerr == Z_ERRNO ? strerror(errno) : msg);
    }
    *got_p = (size_t)n;
    return INGOT_OK;
}

/* The whole decompressed content of @p path (a gzip file) in a malloc'd buffer. */
static ingot_status_t fmnist_gunzip(const char *path, uint8_t **buf_p, size_t *len_p)
{
    ingot_status_t st;
    gzFile gz = fmnist_open(path, &st);
    if (gz == NULL) {
        return st;
    }
    size_t cap = FMNIST_READ_CHUNK, len = 0, got = 1;
    uint8_t *buf = ingot_malloc(cap, path);
    st = buf ? INGOT_OK : INGOT_ERR_NO_MEMORY;
    while (st == INGOT_OK && got > 0) {
        if (len == cap) {
            uint8_t *b = realloc(buf, cap * 2);
            if (b == NULL) {
                st = ingot_fail(INGOT_ERR_NO_MEMORY, "%s: out of memory decompressing", path);
                break;
            }
            buf = b;
            cap *= 2;
        }
        st = fmnist_read(gz, path, buf + len, cap - len > INT_MAX ? INT_MAX : cap - len, &got);
        len += got;
    }
    gzclose(gz);
    if (st != INGOT_OK) {
        free(buf);
        return st;
    }
    *buf_p = buf;
    *len_p = len;
    return INGOT_OK;
}

/* The headers agree with each other and with the lengths; an error names the file and what
 * is wrong with it. */
static ingot_status_t fmnist_check(fmnist_data_t *d)
{
    if (d->ilen < FMNIST_HDR_IMAGES || fmnist_be32(d->img) != FMNIST_IMAGES_MAGIC) {
        return ingot_fail(INGOT_ERR_FORMAT, "%s: not an idx3 image file (magic 0x%08x expected)",
                          d->images_path, FMNIST_IMAGES_MAGIC);
    }
    if (d->llen < FMNIST_HDR_LABELS || fmnist_be32(d->lab) != FMNIST_LABELS_MAGIC) {
        return ingot_fail(INGOT_ERR_FORMAT, "%s: not an idx1 label file (magic 0x%08x expected)",
                          d->labels_path, FMNIST_LABELS_MAGIC);
    }
    d->n = fmnist_be32(d->img + 4);
    d->rows = fmnist_be32(d->img + 8);
    d->cols = fmnist_be32(d->img + 12);
    uint32_t labels = fmnist_be32(d->lab + 4);
    if (labels != d->n) {
        return ingot_fail(INGOT_ERR_FORMAT, "%s holds %u images but %s holds %u labels",
                          d->images_path, d->n, d->labels_path, labels);
    }
    uint64_t need = (uint64_t)d->n * d->rows * d->cols;
    if ((uint64_t)d->rows * d->cols > INT_MAX || need > d->ilen - FMNIST_HDR_IMAGES) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: %u images of %u x %u pixels need %" PRIu64 " bytes, the file "
                          "has %zu after its header (truncated)",
                          d->images_path, d->n, d->rows, d->cols, need,
                          d->ilen - FMNIST_HDR_IMAGES);
    }
    if (d->n > d->llen - FMNIST_HDR_LABELS) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: %u labels need %u bytes, the file has %zu after its header "
                          "(truncated)",
                          d->labels_path, d->n, d->n, d->llen - FMNIST_HDR_LABELS);
    }
    return INGOT_OK;
}

/* Every image of a split as `<key>-NNNNN.pgm` and `.cls`. */
static ingot_status_t fmnist_emit(const fmnist_data_t *d, const char *key_prefix,
                                  const import_sink_t *sink)
{
    size_t px = (size_t)d->rows * d->cols;
    uint8_t *pgm = ingot_malloc(px + FMNIST_PGM_HDR_MAX, "Fashion-MNIST image");
    if (pgm == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    int h = snprintf((char *)pgm, FMNIST_PGM_HDR_MAX, "P5\n%u %u\n255\n", d->cols, d->rows);
    ingot_status_t st = INGOT_OK;
    for (uint32_t i = 0; st == INGOT_OK && i < d->n; i++) {
        char key[FMNIST_KEY_MAX], cls[FMNIST_CLS_MAX];
        memcpy(pgm + h, d->img + FMNIST_HDR_IMAGES + (size_t)i * px, px);
        snprintf(key, sizeof(key), "%s-%05u", key_prefix, i);
        int cl = snprintf(cls, sizeof(cls), "%u\n", d->lab[FMNIST_HDR_LABELS + i]);
        st = sink->cb(sink->arg, key, "pgm", pgm, (size_t)h + px);
        if (st == INGOT_OK) {
            st = sink->cb(sink->arg, key, "cls", cls, (size_t)cl);
        }
    }
    free(pgm);
    return st;
}

static ingot_status_t fmnist_split_import(const char *dir, const fmnist_split_t *split,
                                          const import_sink_t *sink)
{
    fmnist_data_t d = {0};
    snprintf(d.images_path, sizeof(d.images_path), FMNIST_IMAGES_FMT, dir, split->file);
    snprintf(d.labels_path, sizeof(d.labels_path), FMNIST_LABELS_FMT, dir, split->file);
    ingot_status_t st = fmnist_gunzip(d.images_path, &d.img, &d.ilen);
    if (st == INGOT_OK) {
        st = fmnist_gunzip(d.labels_path, &d.lab, &d.llen);
    }
    if (st == INGOT_OK) {
        st = fmnist_check(&d);
    }
    if (st == INGOT_OK) {
        st = fmnist_emit(&d, split->key, sink);
    }
    free(d.img);
    free(d.lab);
    return st;
}

ingot_status_t ingot_import_fmnist(const char *dir, const import_sink_t *sink)
{
    ingot_status_t st = INGOT_OK;
    for (size_t i = 0; st == INGOT_OK && i < INGOT_ARRAY_SIZE(fmnist_splits); i++) {
        st = fmnist_split_import(dir, &fmnist_splits[i], sink);
    }
    return st;
}

/* Images in a split, from its label file's header (8 decompressed bytes). */
static ingot_status_t fmnist_split_count(const char *dir, const fmnist_split_t *split,
                                         uint64_t *n_p)
{
    char path[PATH_MAX];
    uint8_t hdr[FMNIST_HDR_LABELS];
    size_t got = 0;
    ingot_status_t st;
    snprintf(path, sizeof(path), FMNIST_LABELS_FMT, dir, split->file);
    gzFile gz = fmnist_open(path, &st);
    if (gz == NULL) {
        return st;
    }
    st = fmnist_read(gz, path, hdr, sizeof(hdr), &got);
    gzclose(gz);
    if (st == INGOT_OK && (got != sizeof(hdr) || fmnist_be32(hdr) != FMNIST_LABELS_MAGIC)) {
        st = ingot_fail(INGOT_ERR_FORMAT, "%s: not an idx1 label file", path);
    }
    if (st == INGOT_OK) {
        *n_p = fmnist_be32(hdr + 4);
    }
    return st;
}

ingot_status_t ingot_import_fmnist_count(const char *dir, uint64_t *count_p)
{
    uint64_t total = 0;
    for (size_t i = 0; i < INGOT_ARRAY_SIZE(fmnist_splits); i++) {
        uint64_t n = 0;
        INGOT_CHECK(fmnist_split_count(dir, &fmnist_splits[i], &n));
        total += n * FMNIST_MEMBERS_PER_SAMPLE;
    }
    *count_p = total;
    return INGOT_OK;
}

/*
 * Resume cursor: a small little-endian file with its own checksum, written atomically (temp
 * file, fsync, rename, fsync of the directory). Reading checks magic, version, size, checksum,
 * then the fields against the resuming job, naming the field that does not fit.
 */
#include "shard/cursor.h"
#include "shard/replace.h"
#include "shard/manifest.h"
#include "base/hash.h"
#include "base/log.h"
#include "shard/tar.h"
#include "base/status.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define CURSOR_MAGIC     "INGOTCR1"
#define CURSOR_MAGIC_LEN 8
/** Largest skipped list accepted when reading (bounds the allocation of a corrupt count). */
#define CURSOR_SKIPPED_MAX (1ull << 32)

typedef struct cursor_disk {
    char magic[CURSOR_MAGIC_LEN];
    uint32_t version;
    uint32_t order_window; /* version 2; version 1: zero (the full shuffle) */
    uint64_t manifest_digest, seed, epoch, consumed, global_batch, skipped_count;
} cursor_disk_t; /* followed by (version 3) cursor_ext_t, skipped_count u64 ids, then a u64 XXH3
                    of all before it */

/* What version 3 adds after the header. */
typedef struct cursor_ext {
    uint32_t order_nodes; /* the locality order's canonical nodes */
    uint32_t reserved;    /* zero */
} cursor_ext_t;

/* Bytes of the fixed part of a cursor file of @p version. */
static size_t cursor_head_bytes(uint32_t version)
{
    return sizeof(cursor_disk_t) + (version >= 3 ? sizeof(cursor_ext_t) : 0);
}

ingot_status_t ingot_cursor_encode(const ingot_cursor_t *c, uint8_t **buf_p, size_t *len_p)
{
    cursor_disk_t d = {.version = INGOT_CURSOR_VERSION,
                       .order_window = c->order_window,
                       .manifest_digest = c->manifest_digest,
                       .seed = c->seed,
                       .epoch = c->epoch,
                       .consumed = c->consumed,
                       .global_batch = c->global_batch,
                       .skipped_count = c->skipped_count};
    cursor_ext_t x = {.order_nodes = c->order_window ? (c->order_nodes ? c->order_nodes : 1) : 0};
    memcpy(d.magic, CURSOR_MAGIC, CURSOR_MAGIC_LEN);
    size_t head = cursor_head_bytes(d.version), ids = c->skipped_count * sizeof(uint64_t);
    size_t len = head + ids + sizeof(uint64_t);
    uint8_t *buf = malloc(len);
    if (buf == NULL) {
        return ingot_fail(INGOT_ERR_NO_MEMORY, "cursor: out of memory");
    }
    memcpy(buf, &d, sizeof(d));
    memcpy(buf + sizeof(d), &x, sizeof(x));
    if (ids) {
        memcpy(buf + head, c->skipped, ids);
    }
    uint64_t sum = ingot_hash64(buf, len - sizeof(uint64_t));
    memcpy(buf + len - sizeof(uint64_t), &sum, sizeof(sum));
    *buf_p = buf;
    *len_p = len;
    return INGOT_OK;
}

typedef struct cursor_buf {
    const uint8_t *p;
    size_t len;
} cursor_buf_t;

static ingot_status_t cursor_fill(int fd, const char *tmp, void *arg)
{
    const cursor_buf_t *b = arg;
    return ingot_shard_write_all(fd, tmp, b->p, b->len);
}

ingot_status_t ingot_cursor_write(const char *path, const ingot_cursor_t *c)
{
    if (path == NULL || c == NULL || c->global_batch == 0 || c->consumed % c->global_batch != 0 ||
        (c->skipped_count && c->skipped == NULL)) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "%s: cursor: consumed must be a multiple of "
                          "global_batch (>= 1), skipped set when skipped_count is",
                          path ? path : "(null)");
    }
    uint8_t *buf = NULL;
    size_t len = 0;
    INGOT_CHECK(ingot_cursor_encode(c, &buf, &len));
    cursor_buf_t arg = {buf, len};
    ingot_status_t st = ingot_shard_replace_file(path, cursor_fill, &arg);
    free(buf);
    return st;
}

/* Magic, version, size and checksum of a cursor file's bytes. */
static ingot_status_t cursor_check_bytes(const char *path, const uint8_t *buf, uint64_t len,
                                         cursor_disk_t *d, cursor_ext_t *x)
{
    if (len < sizeof(*d) + sizeof(uint64_t)) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: cursor of %" PRIu64 " bytes is truncated (torn "
                          "write?)",
                          path, len);
    }
    memcpy(d, buf, sizeof(*d));
    if (memcmp(d->magic, CURSOR_MAGIC, CURSOR_MAGIC_LEN) != 0) {
        return ingot_fail(INGOT_ERR_FORMAT, "%s: field magic: not an ingot cursor", path);
    }
    if (d->version < 1 || d->version > INGOT_CURSOR_VERSION ||
        (d->version == 1 && d->order_window != 0)) {
        return ingot_fail(INGOT_ERR_FORMAT, "%s: field version: %u, this build reads 1 to %u", path,
                          d->version, INGOT_CURSOR_VERSION);
    }
    uint64_t sum, head = cursor_head_bytes(d->version);
    if (len < head + sizeof(sum)) {
        return ingot_fail(INGOT_ERR_FORMAT, "%s: cursor of %" PRIu64 " bytes is truncated", path,
                          len);
    }
    memcpy(&sum, buf + len - sizeof(sum), sizeof(sum));
    if (ingot_hash64(buf, len - sizeof(sum)) != sum) {
        return ingot_fail(INGOT_ERR_CORRUPT, "%s: field checksum: cursor is torn or corrupt", path);
    }
    *x = (cursor_ext_t){.order_nodes = d->order_window ? 1 : 0}; /* before version 3 */
    if (d->version >= 3) {
        memcpy(x, buf + sizeof(*d), sizeof(*x));
    }
    if (d->version >= 3 && (x->reserved != 0 || (x->order_nodes == 0) != (d->order_window == 0))) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: field order_nodes: %u with order_window %u (a locality order has "
                          "at least one canonical node, the full order none)",
                          path, x->order_nodes, d->order_window);
    }
    if (d->skipped_count > CURSOR_SKIPPED_MAX ||
        len != head + d->skipped_count * sizeof(uint64_t) + sizeof(uint64_t)) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: field skipped_count: %" PRIu64 " does not match "
                          "the file size %" PRIu64,
                          path, d->skipped_count, len);
    }
    if (d->global_batch == 0 || d->consumed % d->global_batch != 0) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: field consumed: %" PRIu64 " is not a multiple of "
                          "global_batch %" PRIu64,
                          path, d->consumed, d->global_batch);
    }
    return INGOT_OK;
}

/* The cursor against the resuming job. */
static ingot_status_t cursor_check_expect(const char *path, const cursor_disk_t *d,
                                          const ingot_cursor_expect_t *e)
{
    if (d->manifest_digest != e->manifest_digest) {
        return ingot_fail(INGOT_ERR_MISMATCH,
                          "%s: field manifest_digest: cursor is for manifest "
                          "%016" PRIx64 ", this job uses %016" PRIx64,
                          path, d->manifest_digest, e->manifest_digest);
    }
    if (d->seed != e->seed) {
        return ingot_fail(INGOT_ERR_MISMATCH,
                          "%s: field seed: cursor has %" PRIu64 ", this job "
                          "uses %" PRIu64,
                          path, d->seed, e->seed);
    }
    if (e->world_size == 0 || d->global_batch % e->world_size != 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "%s: field global_batch: %" PRIu64 " is not "
                          "divisible by the world size %u; resume with a world size that divides "
                          "it",
                          path, d->global_batch, e->world_size);
    }
    return INGOT_OK;
}

ingot_status_t ingot_cursor_decode(const char *path, const uint8_t *buf, size_t len,
                                   const ingot_cursor_expect_t *expect, ingot_cursor_t *cursor_p)
{
    cursor_disk_t d;
    cursor_ext_t x;
    ingot_status_t st = cursor_check_bytes(path, buf, len, &d, &x);
    if (st == INGOT_OK && expect != NULL) {
        st = cursor_check_expect(path, &d, expect);
    }
    uint64_t *skipped = NULL;
    if (st == INGOT_OK && d.skipped_count > 0) {
        skipped = malloc(d.skipped_count * sizeof(uint64_t));
        st = skipped ? INGOT_OK : ingot_fail(INGOT_ERR_NO_MEMORY, "%s: out of memory", path);
    }
    if (st == INGOT_OK) {
        if (skipped) {
            memcpy(skipped, buf + cursor_head_bytes(d.version), d.skipped_count * sizeof(uint64_t));
        }
        *cursor_p = (ingot_cursor_t){.version = d.version,
                                     .order_window = d.order_window,
                                     .manifest_digest = d.manifest_digest,
                                     .seed = d.seed,
                                     .epoch = d.epoch,
                                     .consumed = d.consumed,
                                     .global_batch = d.global_batch,
                                     .skipped_count = d.skipped_count,
                                     .skipped = skipped,
                                     .order_nodes = x.order_nodes};
    }
    return st;
}

ingot_status_t ingot_cursor_read(const char *path, const ingot_cursor_expect_t *expect,
                                 ingot_cursor_t *cursor_p)
{
    if (path == NULL || cursor_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_cursor_read: NULL argument");
    }
    uint8_t *buf;
    size_t len;
    INGOT_CHECK(ingot_file_read_whole(path, &buf, &len));
    ingot_status_t st = ingot_cursor_decode(path, buf, len, expect, cursor_p);
    free(buf);
    return st;
}

void ingot_cursor_release(ingot_cursor_t *c)
{
    if (c != NULL) {
        free(c->skipped);
        c->skipped = NULL;
        c->skipped_count = 0;
    }
}

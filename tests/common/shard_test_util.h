/*
 * Helpers for the shard tests: build tar archives in memory (so single header fields can be
 * broken on purpose) and write them to files.
 */
#ifndef INGOT_TEST_SHARD_UTIL_H
#define INGOT_TEST_SHARD_UTIL_H

#include "common/test.h"
#include "shard/tar.h"
#include "shard/tar_write.h"
#include "base/log.h"
#include "base/status.h"

#include <fcntl.h>
#include <stdint.h>

typedef struct tb {
    uint8_t *buf;
    size_t len, cap;
} tb_t;

static inline void tb_reserve(tb_t *t, size_t n)
{
    if (t->len + n > t->cap) {
        t->cap = (t->len + n) * 2;
        t->buf = realloc(t->buf, t->cap);
        CHECK(t->buf != NULL);
    }
}

/** Append raw bytes padded to a block. Returns the offset they start at. */
static inline size_t tb_data(tb_t *t, const void *data, size_t len)
{
    size_t padded = (len + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK, at = t->len;
    tb_reserve(t, padded);
    memset(t->buf + t->len, 0, padded);
    if (len) memcpy(t->buf + t->len, data, len);
    t->len += padded;
    return at;
}

/** Append a header (type, size) and data; returns the header's offset. */
static inline size_t tb_member(tb_t *t, const char *name, char type, const void *data, size_t len)
{
    uint8_t h[TAR_BLOCK];
    ingot_tar_header_fill(h, name, len, type);
    size_t at = tb_data(t, h, TAR_BLOCK);
    tb_data(t, data, len);
    return at;
}

static inline size_t tb_file(tb_t *t, const char *name, const char *text)
{
    return tb_member(t, name, '0', text, strlen(text));
}

static inline void tb_end(tb_t *t)
{
    static const uint8_t zero[2 * TAR_BLOCK];
    tb_reserve(t, sizeof(zero));
    memcpy(t->buf + t->len, zero, sizeof(zero));
    t->len += sizeof(zero);
}

/** Recompute the checksum of the header at @p off after editing it. */
static inline void tb_rechecksum(tb_t *t, size_t off)
{
    uint8_t *h = t->buf + off;
    memset(h + 148, ' ', 8);
    unsigned sum = 0;
    for (size_t i = 0; i < TAR_BLOCK; i++) sum += h[i];
    snprintf((char *)h + 148, 8, "%06o", sum);
}

static inline void tb_write(const tb_t *t, const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CHECK(fd >= 0);
    CHECK(write(fd, t->buf, t->len) == (ssize_t)t->len);
    close(fd);
}

static inline char *tpath(const char *name)
{
    static char bufs[8][4096 + 256];
    static int next;
    char *p = bufs[next++ % 8];
    snprintf(p, sizeof(bufs[0]), "%s/%s", test_tmpdir(), name);
    return p;
}

#endif

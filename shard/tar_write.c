/* Minimal POSIX tar writer (see tar_write.h). */
#include "shard/tar_write.h"
#include "shard/tar.h"
#include "base/log.h"
#include "base/status.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define TW_NAME_LEN    100
#define TW_MODE        "0000644"
#define TW_MTIME       "00000000000"
#define TW_CHKSUM_OFF  148
#define TW_CHKSUM_LEN  8
#define TW_SIZE_DIGITS 11
#define TW_PAX_PATH    "path="
#define TW_PAX_NAME    "././@PaxHeader"
#define TW_END_BLOCKS  2

void ingot_tar_header_fill(uint8_t *h, const char *name, uint64_t size, char type)
{
    memset(h, 0, TAR_BLOCK);
    strncpy((char *)h, name, TW_NAME_LEN);
    memcpy(h + 100, TW_MODE, sizeof(TW_MODE));
    memcpy(h + 108, "0000000", 8);
    memcpy(h + 116, "0000000", 8);
    snprintf((char *)h + 124, 12, "%0*llo", TW_SIZE_DIGITS, (unsigned long long)size);
    memcpy(h + 136, TW_MTIME, sizeof(TW_MTIME));
    h[156] = (uint8_t)type;
    memcpy(h + 257, "ustar", 6);
    /* NOLINTNEXTLINE(bugprone-not-null-terminated-result): ustar version is "00", unterminated */
    memcpy(h + 263, "00", 2);
    memset(h + TW_CHKSUM_OFF, ' ', TW_CHKSUM_LEN);
    unsigned sum = 0;
    for (size_t i = 0; i < TAR_BLOCK; i++) {
        sum += h[i];
    }
    snprintf((char *)h + TW_CHKSUM_OFF, TW_CHKSUM_LEN, "%06o", sum);
}

static ingot_status_t tw_put(tar_writer_t *w, const void *p, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t r = write(w->fd, (const char *)p + done, n - done);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            return ingot_fail(INGOT_ERR_IO, "%s: write at offset %llu failed: %s", w->name,
                              (unsigned long long)(w->off + done), strerror(errno));
        }
        done += (size_t)r;
    }
    w->off += n;
    return INGOT_OK;
}

static ingot_status_t tw_data(tar_writer_t *w, const void *data, size_t len)
{
    static const uint8_t zero[TAR_BLOCK];
    INGOT_CHECK(tw_put(w, data, len));
    size_t pad = (TAR_BLOCK - len % TAR_BLOCK) % TAR_BLOCK;
    return tw_put(w, zero, pad);
}

static ingot_status_t tw_pax(tar_writer_t *w, const char *name)
{
    char rec[TAR_NAME_MAX + 64];
    size_t body = 1 + strlen(TW_PAX_PATH) + strlen(name) + 1; /* " path=NAME\n" */
    size_t len = body + 1;
    while ((size_t)snprintf(NULL, 0, "%zu", len) + body != len) {
        len = (size_t)snprintf(NULL, 0, "%zu", len) + body;
    }
    int n = snprintf(rec, sizeof(rec), "%zu %s%s\n", len, TW_PAX_PATH, name);
    uint8_t h[TAR_BLOCK];
    ingot_tar_header_fill(h, TW_PAX_NAME, (uint64_t)n, 'x');
    INGOT_CHECK(tw_put(w, h, TAR_BLOCK));
    return tw_data(w, rec, (size_t)n);
}

ingot_status_t ingot_tar_write_member(tar_writer_t *w, const char *name, const void *data,
                                      size_t len)
{
    if (strlen(name) > TAR_NAME_MAX) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "%s: member name too long: %.64s...", w->name,
                          name);
    }
    if (strlen(name) >= TW_NAME_LEN) {
        INGOT_CHECK(tw_pax(w, name));
    }
    uint8_t h[TAR_BLOCK];
    ingot_tar_header_fill(h, name, len, '0');
    INGOT_CHECK(tw_put(w, h, TAR_BLOCK));
    return tw_data(w, data, len);
}

ingot_status_t ingot_tar_write_end(tar_writer_t *w)
{
    static const uint8_t zero[TAR_BLOCK * TW_END_BLOCKS];
    return tw_put(w, zero, sizeof(zero));
}

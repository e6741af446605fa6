/* Reading a file (file.h). */
#include "base/file.h"
#include "base/fault.h"
#include "base/io.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

static ingot_status_t file_pread(const ingot_file_t *src, uint64_t off, void *buf, size_t len)
{
    ingot_io_fail_t fail;
    ingot_status_t st = ingot_io_pread_full(src->fd, buf, len, off, &fail);
    if (st == INGOT_ERR_MISMATCH) {
        return ingot_fail(st,
                          "%s: file ended at offset %" PRIu64 " (expected %" PRIu64
                          " bytes): it shrank while being read",
                          src->name, fail.offset, src->size);
    }
    if (st != INGOT_OK) {
        return ingot_fail(st, "%s: pread of %zu bytes at offset %" PRIu64 " failed: %s", src->name,
                          len - (size_t)(fail.offset - off), fail.offset, strerror(fail.err));
    }
    return INGOT_OK;
}

/* Load the window's next chunk (the one after the current) and hash it. */
static ingot_status_t file_window_advance(const ingot_file_t *src)
{
    ingot_file_window_t *w = src->win;
    uint64_t next = w->off + w->len;
    size_t n = src->size - next < INGOT_FILE_WINDOW_BYTES ? (size_t)(src->size - next)
                                                          : INGOT_FILE_WINDOW_BYTES;
    INGOT_CHECK(file_pread(src, next, w->buf, n));
    XXH3_64bits_update(w->hash, w->buf, n);
    w->off = next;
    w->len = n;
    return INGOT_OK;
}

/* Serve a forward read from the window; a read behind it falls back to pread. */
static ingot_status_t file_window_read(const ingot_file_t *src, uint64_t off, uint8_t *buf,
                                       size_t len)
{
    ingot_file_window_t *w = src->win;
    while (len > 0) {
        if (off < w->off) {
            return file_pread(src, off, buf, len);
        }
        if (off >= w->off + w->len) {
            INGOT_CHECK(file_window_advance(src));
            continue;
        }
        size_t n = (size_t)(w->off + w->len - off) < len ? (size_t)(w->off + w->len - off) : len;
        memcpy(buf, w->buf + (off - w->off), n);
        buf += n;
        off += n;
        len -= n;
    }
    return INGOT_OK;
}

ingot_status_t ingot_file_read(const ingot_file_t *src, uint64_t off, void *buf, size_t len)
{
    if (off > src->size || len > src->size - off) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: truncated: %zu bytes at offset %" PRIu64
                          " extend past the end of the file (size %" PRIu64 ")",
                          src->name, len, off, src->size);
    }
    if (src->fd < 0) {
        memcpy(buf, src->mem + off, len);
        return INGOT_OK;
    }
    return src->win ? file_window_read(src, off, buf, len) : file_pread(src, off, buf, len);
}

ingot_status_t ingot_file_window_init(ingot_file_window_t *w)
{
    w->buf = ingot_malloc(INGOT_FILE_WINDOW_BYTES, "file read window");
    w->hash = XXH3_createState();
    if (w->buf == NULL || w->hash == NULL) {
        ingot_file_window_release(w);
        return ingot_fail(INGOT_ERR_NO_MEMORY, "out of memory for a read window");
    }
    return INGOT_OK;
}

void ingot_file_window_release(ingot_file_window_t *w)
{
    free(w->buf);
    XXH3_freeState(w->hash);
    w->buf = NULL;
    w->hash = NULL;
}

void ingot_file_window_attach(ingot_file_window_t *w, ingot_file_t *src)
{
    w->off = 0;
    w->len = 0;
    XXH3_64bits_reset(w->hash);
    src->win = w;
}

ingot_status_t ingot_file_window_finish(ingot_file_t *src, uint64_t *hash_p)
{
    ingot_status_t st = INGOT_OK;
    while (st == INGOT_OK && src->win->off + src->win->len < src->size) {
        st = file_window_advance(src);
    }
    if (st == INGOT_OK) {
        *hash_p = XXH3_64bits_digest(src->win->hash);
    }
    src->win = NULL;
    return st;
}

ingot_status_t ingot_file_open(const char *path, ingot_file_t *src)
{
    int err = ingot_fault_check(INGOT_FAULT_OPEN);
    int fd = err ? (errno = err, -1) : open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        return ingot_fail(ingot_status_from_errno(errno), "%s: open failed: %s", path,
                          strerror(errno));
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        close(fd);
        return ingot_fail(INGOT_ERR_FORMAT, "%s: not a regular file", path);
    }
    *src = (ingot_file_t){.fd = fd, .size = (uint64_t)st.st_size, .name = path};
    return INGOT_OK;
}

void ingot_file_close(ingot_file_t *src)
{
    if (src->fd >= 0) {
        close(src->fd);
        src->fd = -1;
    }
}

ingot_status_t ingot_file_read_whole(const char *path, uint8_t **buf_p, size_t *len_p)
{
    ingot_file_t src = {0}; /* filled by a successful open */
    INGOT_CHECK(ingot_file_open(path, &src));
    uint8_t *buf = ingot_malloc((size_t)src.size + 1, path);
    ingot_status_t st = buf ? ingot_file_read(&src, 0, buf, (size_t)src.size) : INGOT_ERR_NO_MEMORY;
    ingot_file_close(&src);
    if (st != INGOT_OK) {
        free(buf);
        return st;
    }
    buf[src.size] = '\0';
    *buf_p = buf;
    *len_p = (size_t)src.size;
    return INGOT_OK;
}

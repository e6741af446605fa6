/*
 * POSIX byte source (see posix.h): one preadv per request into the caller's iovecs (split beyond
 * IOV_MAX by base/io), or an aligned window for O_DIRECT. Errors name the shard and offset.
 */
#include "source/posix.h"
#include "shard/fds.h"
#include "base/fault.h"
#include "base/io.h"
#include "base/mapped.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct posix_source {
    ingot_source_t base;
    ingot_shard_fds_t *fds;
    int direct;
} posix_source_t;

static ingot_status_t posix_check(const posix_source_t *p, const ingot_source_req_t *req,
                                  const ingot_file_t *f)
{
    if (req->offset > f->size || req->length > f->size - req->offset) {
        return ingot_fail(INGOT_ERR_OUT_OF_RANGE,
                          "read of %" PRIu64 " bytes at offset %" PRIu64
                          " is beyond the end of shard '%s' (%" PRIu64 " bytes)",
                          req->length, req->offset, f->name, f->size);
    }
    if (p->direct && (req->iovcnt != 1 || req->slack < 2 * INGOT_SOURCE_DIRECT_ALIGN)) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "internal: O_DIRECT read of shard '%s' needs "
                          "one aligned window with %d bytes of slack",
                          f->name, 2 * INGOT_SOURCE_DIRECT_ALIGN);
    }
    return INGOT_OK;
}

/* The caller's iovecs read @p piece bytes at a time, each piece reported landed before the next
 * read (its bytes are hashed while they are still in this core's cache). */
static ingot_status_t posix_read_pieces(ingot_source_req_t *req, const ingot_file_t *f,
                                        ingot_io_fail_t *fail_p)
{
    struct iovec *iov = req->iov;
    int cnt = req->iovcnt;
    uint64_t done = 0;
    while (done < req->length) {
        /* the iovecs of the next piece; the last one cut to fit and restored after */
        uint64_t want = req->length - done < req->piece ? req->length - done : req->piece;
        uint64_t sum = 0;
        int n = 0;
        while (n < cnt && sum + iov[n].iov_len <= want) {
            sum += iov[n++].iov_len;
        }
        size_t cut = 0;
        struct iovec last = {0};
        if (sum < want && n < cnt) {
            last = iov[n];
            cut = (size_t)(want - sum);
            iov[n++].iov_len = cut;
            sum = want;
        }
        if (sum == 0) { /* iovecs shorter than the request's length: a caller's bug */
            *fail_p = (ingot_io_fail_t){.offset = req->offset + done, .err = EINVAL};
            return INGOT_ERR_INTERNAL;
        }
        ingot_status_t st = ingot_io_preadv_full(f->fd, iov, n, req->offset + done, sum, fail_p);
        if (st != INGOT_OK) {
            return st;
        }
        iov += cut ? n - 1 : n;
        cnt -= cut ? n - 1 : n;
        if (cut) {
            *iov = (struct iovec){.iov_base = (char *)last.iov_base + cut,
                                  .iov_len = last.iov_len - cut};
        }
        done += sum;
        ingot_source_landed(req, done);
    }
    return INGOT_OK;
}

/* The request's bytes copied out of the shard's mapping into the caller's iovecs, @p piece bytes
 * at a time when the request hashes as its bytes land (each piece reported before the next). A
 * piece is one read for the fault site "pread", as a preadv is. */
static ingot_status_t posix_copy_mapped(ingot_source_req_t *req, const ingot_file_t *f)
{
    const uint8_t *from = f->map + req->offset;
    uint64_t done = 0, piece = req->landed != NULL && req->piece > 0 ? req->piece : UINT64_MAX;
    uint64_t next = 0;
    for (int i = 0; i < req->iovcnt; i++) {
        for (size_t at = 0; at < req->iov[i].iov_len;) {
            if (done == next) { /* a piece begins */
                next = req->length - done < piece ? req->length : done + piece;
                int err = ingot_fault_check(INGOT_FAULT_PREAD);
                if (err != 0) {
                    return ingot_fail(ingot_status_from_errno(err),
                                      "read of shard '%s' at offset %" PRIu64 " failed: %s",
                                      f->name, req->offset + done, strerror(err));
                }
            }
            size_t n = req->iov[i].iov_len - at;
            n = (uint64_t)n < next - done ? n : (size_t)(next - done);
            if (ingot_mapped_copy((uint8_t *)req->iov[i].iov_base + at, from + done, n) != 0) {
                return ingot_fail(INGOT_ERR_MISMATCH,
                                  "read of shard '%s' at offset %" PRIu64 " failed: a page past "
                                  "its end (the shard shrank after it was opened)",
                                  f->name, req->offset + done);
            }
            at += n;
            done += n;
            if (done == next) {
                ingot_source_landed(req, done);
            }
        }
    }
    return INGOT_OK;
}

/* The read itself: the caller's iovecs, or the enclosing aligned window under O_DIRECT. */
static ingot_status_t posix_read(const posix_source_t *p, ingot_source_req_t *req,
                                 const ingot_file_t *f)
{
    const uint64_t align = INGOT_SOURCE_DIRECT_ALIGN;
    uint64_t start = req->offset;
    size_t need = (size_t)req->length;
    struct iovec window;
    struct iovec *iov = req->iov;
    if (p->direct) {
        start = req->offset & ~(align - 1);
        uint64_t end = (req->offset + req->length + align - 1) & ~(align - 1);
        window = (struct iovec){.iov_base = req->iov[0].iov_base, .iov_len = end - start};
        iov = &window;
        need += (size_t)(req->offset - start);
    }
    ingot_io_fail_t fail = {0};
    ingot_status_t st = (req->landed != NULL && req->piece > 0 && !p->direct)
                            ? posix_read_pieces(req, f, &fail)
                            : ingot_io_preadv_full(f->fd, iov, req->iovcnt, start, need, &fail);
    if (st != INGOT_OK) {
        return ingot_fail(st, "read of shard '%s' at offset %" PRIu64 " failed: %s", f->name,
                          fail.offset,
                          fail.err ? strerror(fail.err)
                                   : "unexpected end of file (the shard shrank)");
    }
    req->shift = (size_t)(req->offset - start);
    return INGOT_OK;
}

static ingot_status_t posix_submit(ingot_source_t *src, ingot_source_req_t *req)
{
    posix_source_t *p = (posix_source_t *)src;
    for (int i = 0; req->mem != NULL && i < req->iovcnt; i++) {
        if (req->mem[i] != INGOT_SOURCE_MEM_HOST) {
            ingot_source_retry(req, INGOT_ERR_UNSUPPORTED); /* a source with device reach may */
            return INGOT_OK;
        }
    }
    ingot_file_t *f;
    ingot_status_t st = ingot_shard_fds_get(p->fds, req->shard, &f);
    if (st == INGOT_OK) {
        st = posix_check(p, req, f);
    }
    if (st == INGOT_OK) {
        st = f->map != NULL ? posix_copy_mapped(req, f) : posix_read(p, req, f);
    }
    ingot_source_complete(req, st);
    return INGOT_OK;
}

static unsigned posix_progress(ingot_source_t *src, uint64_t until_ns)
{
    (void)src;
    (void)until_ns;
    return 0; /* every request completed inside submit */
}

static ingot_status_t posix_cancel(ingot_source_t *src, ingot_source_req_t *req)
{
    (void)src;
    (void)req;
    return INGOT_ERR_BUSY; /* being read by the submitting thread */
}

static const char *posix_describe(const ingot_source_t *src, uint32_t shard, char *buf, size_t len)
{
    const posix_source_t *p = (const posix_source_t *)src;
    ingot_file_t *f;
    const char *kind = p->direct ? "posix-direct" : "posix";
    if (shard == INGOT_SOURCE_ALL || ingot_shard_fds_get(p->fds, shard, &f) != INGOT_OK) {
        snprintf(buf, len, "%s", kind);
    } else {
        snprintf(buf, len, "%s:%s", kind, f->name);
    }
    return buf;
}

static void posix_destroy(ingot_source_t *src)
{
    posix_source_t *p = (posix_source_t *)src;
    ingot_shard_fds_destroy(p->fds);
    free(p);
}

static const ingot_source_ops_t posix_ops = {.submit = posix_submit,
                                             .progress = posix_progress,
                                             .cancel = posix_cancel,
                                             .describe = posix_describe,
                                             .destroy = posix_destroy,
                                             .local = 1};

ingot_status_t ingot_source_posix_create(ingot_manifest_h manifest, int mode,
                                         ingot_source_t **src_p)
{
    posix_source_t *p = ingot_calloc(1, sizeof(*p), "posix source");
    if (p == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    int direct = mode == INGOT_SOURCE_POSIX_DIRECT;
    ingot_status_t st = ingot_shard_fds_create(manifest,
                                               direct ? INGOT_SHARD_FDS_DIRECT
                                               : mode == INGOT_SOURCE_POSIX_MAP
                                                   ? INGOT_SHARD_FDS_MAP
                                                   : 0,
                                               &p->fds);
    if (st != INGOT_OK) {
        free(p);
        return st;
    }
    p->base.ops = &posix_ops;
    p->direct = direct;
    *src_p = &p->base;
    return INGOT_OK;
}

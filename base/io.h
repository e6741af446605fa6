/*
 * Positioned reads that finish the job: pread/preadv until every byte requested has arrived,
 * retrying EINTR and short reads and splitting beyond IOV_MAX, with the "pread" fault-injection
 * site on every system call. The one loop every file reader of ingot uses (tar sources, the
 * POSIX byte source, the node-shared manifest).
 */
#ifndef INGOT_BASE_IO_H
#define INGOT_BASE_IO_H

#include <ingot/status.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

/** Where and why a read stopped (filled only when a read fails). */
typedef struct ingot_io_fail {
    uint64_t offset; /**< file offset of the call that failed */
    int err;         /**< its errno, or 0 when the file ended early */
} ingot_io_fail_t;

/**
 * Read into @p iov (@p iovcnt entries, any count) from @p fd at @p offset until @p need bytes
 * arrived; bytes past @p need may be cut short by the end of the file (an O_DIRECT window that
 * reaches past it). @p iov is consumed: its entries are advanced as bytes arrive (no copy, no
 * allocation), so the caller rebuilds it for the next read.
 * @return INGOT_OK; the errno's status (INGOT_ERR_IO for EIO, ...) or INGOT_ERR_MISMATCH when
 *         the file ended before @p need bytes, with @p fail_p filled. Does not log: the caller
 *         names the file in its own words (a shard, the manifest). Thread-safe.
 */
ingot_status_t ingot_io_preadv_full(int fd, struct iovec *iov, int iovcnt, uint64_t offset,
                                    size_t need, ingot_io_fail_t *fail_p);

/** ingot_io_preadv_full() of one buffer: exactly @p len bytes at @p offset. */
ingot_status_t ingot_io_pread_full(int fd, void *buf, size_t len, uint64_t offset,
                                   ingot_io_fail_t *fail_p);

#endif

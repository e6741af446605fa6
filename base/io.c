/* Positioned reads until done (see io.h). */
#include "base/io.h"
#include "base/fault.h"
#include "base/status.h"
#include <errno.h>
#include <limits.h>
#include <unistd.h>

/* Drop the @p n bytes that arrived from the front of the iovec array. */
static void io_advance(struct iovec **iov_p, int *iovcnt_p, size_t n)
{
    struct iovec *iov = *iov_p;
    int cnt = *iovcnt_p;
    while (cnt > 0 && n >= iov->iov_len) {
        n -= iov->iov_len;
        iov++;
        cnt--;
    }
    if (cnt > 0) {
        iov->iov_base = (char *)iov->iov_base + n;
        iov->iov_len -= n;
    }
    *iov_p = iov;
    *iovcnt_p = cnt;
}

ingot_status_t ingot_io_preadv_full(int fd, struct iovec *iov, int iovcnt, uint64_t offset,
                                    size_t need, ingot_io_fail_t *fail_p)
{
    size_t done = 0;
    while (iovcnt > 0) {
        int err = ingot_fault_check(INGOT_FAULT_PREAD);
        int cnt = iovcnt < IOV_MAX ? iovcnt : IOV_MAX;
        ssize_t n = err ? -1 : preadv(fd, iov, cnt, (off_t)(offset + done));
        if (n < 0 && !err && errno == EINTR) {
            continue;
        }
        if (n == 0 && done >= need) {
            return INGOT_OK; /* the part past @p need may end with the file */
        }
        if (n <= 0) {
            fail_p->offset = offset + done;
            fail_p->err = (n == 0) ? 0 : (err ? err : errno);
            return (n == 0) ? INGOT_ERR_MISMATCH : ingot_status_from_errno(fail_p->err);
        }
        done += (size_t)n;
        io_advance(&iov, &iovcnt, (size_t)n);
    }
    return INGOT_OK;
}

ingot_status_t ingot_io_pread_full(int fd, void *buf, size_t len, uint64_t offset,
                                   ingot_io_fail_t *fail_p)
{
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    return len == 0 ? INGOT_OK : ingot_io_preadv_full(fd, &iov, 1, offset, len, fail_p);
}

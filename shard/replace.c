/* Atomic file replacement (see replace.h). */
#include "shard/replace.h"
#include "base/log.h"
#include "base/status.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

ingot_status_t ingot_shard_write_all(int fd, const char *path, const void *p, size_t n)
{
    for (size_t done = 0; done < n;) {
        ssize_t r = write(fd, (const char *)p + done, n - done);
        if (r < 0 && errno == EINTR) {
            continue;
        }
        if (r < 0) {
            return ingot_fail(ingot_status_from_errno(errno), "%s: write failed: %s", path,
                              strerror(errno));
        }
        done += (size_t)r;
    }
    return INGOT_OK;
}

static void atomic_sync_dir(const char *path)
{
    char copy[PATH_MAX];
    snprintf(copy, sizeof(copy), "%s", path);
    int fd = open(dirname(copy), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        fsync(fd);
        close(fd);
    }
}

ingot_status_t ingot_shard_replace_file(const char *path, shard_fill_fn_t fill, void *arg)
{
    char tmp[PATH_MAX];
    int n = snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof(tmp)) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "%s: path too long", path);
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        return ingot_fail(ingot_status_from_errno(errno), "%s: create failed: %s", tmp,
                          strerror(errno));
    }
    ingot_status_t st = fill(fd, tmp, arg);
    if (st == INGOT_OK && fsync(fd) != 0) {
        st = ingot_fail(INGOT_ERR_IO, "%s: fsync failed: %s", tmp, strerror(errno));
    }
    if (close(fd) != 0 && st == INGOT_OK) {
        st = ingot_fail(INGOT_ERR_IO, "%s: close failed: %s", tmp, strerror(errno));
    }
    if (st == INGOT_OK && rename(tmp, path) != 0) {
        st = ingot_fail(INGOT_ERR_IO, "%s: rename to %s failed: %s", tmp, path, strerror(errno));
    }
    if (st != INGOT_OK) {
        unlink(tmp);
        return st;
    }
    atomic_sync_dir(path);
    return INGOT_OK;
}

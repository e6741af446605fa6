/*
 * Manifests and shards at URLs for the tools: the public ingot_manifest_open() and
 * ingot_manifest_open_buffer() (the location resolved once: a URL fetched with one GET into
 * memory, a path through shard/), and the opener every manifest they open is handed for its
 * shards at URLs (verify, cat; the builder's listed shards): a local copy in an unlinked
 * temporary file, fetched in parts of INGOT_S3_PART_SIZE under the manifest's ETag and size. The
 * loader's reads do not use the opener: it reads shards with ranged GETs through its own source.
 */
#include "runtime/store/store.h"
#include "shard/manifest.h"
#include "base/log.h"
#include "base/status.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Parts of a shard's local copy in flight at once. */
#define STORE_COPY_INFLIGHT 4

ingot_status_t ingot_store_manifest_open(const void *buf, size_t len, const char *name,
                                         const ingot_location_t *dir, unsigned flags, int own,
                                         ingot_manifest_h *manifest_p)
{
    ingot_manifest_origin_t origin = {.name = name, .dir = dir, .remote = ingot_store_local_copy};
    return ingot_manifest_open_named(buf, len, &origin, flags, own, manifest_p);
}

/* A manifest at a URL: fetched whole (one GET), opened from memory beside its folder. */
static ingot_status_t store_open_url(ingot_location_t *loc, unsigned flags,
                                     ingot_manifest_h *manifest_p)
{
    ingot_location_t dir = {0};
    void *data = NULL;
    size_t size = 0;
    ingot_status_t st = ingot_store_fetch(loc, INGOT_STORE_MANIFEST_MAX, &data, &size, NULL);
    if (st == INGOT_OK && (st = ingot_location_dir(loc, &dir)) == INGOT_OK) {
        st = ingot_store_manifest_open(data, size, loc->text, &dir, flags, 1, manifest_p);
    }
    if (st != INGOT_OK) {
        free(data);
    }
    ingot_location_release(&dir);
    return st;
}

ingot_status_t ingot_store_open(ingot_location_t *loc, unsigned flags, ingot_manifest_h *manifest_p)
{
    return ingot_location_is_remote(loc) ? store_open_url(loc, flags, manifest_p)
                                         : ingot_manifest_open_file(loc->text, flags, manifest_p);
}

ingot_status_t ingot_manifest_open(const char *path, unsigned flags, ingot_manifest_h *manifest_p)
{
    ingot_location_t loc;
    if (path == NULL || manifest_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_manifest_open: NULL argument");
    }
    INGOT_CHECK(ingot_location_parse(path, INGOT_LOCATION_OBJECT, &loc));
    ingot_status_t st = ingot_store_open(&loc, flags & INGOT_MANIFEST_OPEN_LAZY, manifest_p);
    ingot_location_release(&loc);
    return st;
}

ingot_status_t ingot_manifest_open_buffer(const void *buf, size_t len, const char *base_dir,
                                          unsigned flags, ingot_manifest_h *manifest_p)
{
    ingot_location_t dir;
    INGOT_CHECK(ingot_location_parse(base_dir ? base_dir : ".", 0, &dir));
    ingot_status_t st = ingot_store_manifest_open(buf, len, "<manifest buffer>", &dir,
                                                  flags & INGOT_MANIFEST_OPEN_LAZY, 0, manifest_p);
    ingot_location_release(&dir);
    return st;
}

/* An unlinked temporary file of @p size bytes (TMPDIR, else /tmp). */
static int store_tmpfile(uint64_t size, const char *url)
{
    const char *dir = getenv("TMPDIR");
    int fd = open(dir && dir[0] ? dir : "/tmp", O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0) {
        int err = errno;
        if (fd >= 0) {
            close(fd);
        }
        ingot_error("cannot make a temporary file of %" PRIu64 " bytes for '%s' in %s: %s", size,
                    url, dir && dir[0] ? dir : "/tmp", strerror(err));
        return -1;
    }
    return fd;
}

/* The object's bytes into @p map: parts of INGOT_S3_PART_SIZE, a few in flight at once. */
static ingot_status_t store_copy(ingot_objstore_t *c, const ingot_objstore_object_t *o,
                                 const char *etag, uint64_t size, char *map)
{
    const ingot_objstore_config_t *cfg;
    INGOT_CHECK(ingot_objstore_config(&cfg));
    ingot_objstore_req_t reqs[STORE_COPY_INFLIGHT];
    struct iovec iov[STORE_COPY_INFLIGHT];
    uint64_t part = cfg->part_size, deadline = ingot_store_deadline();
    ingot_status_t st = INGOT_OK;
    for (uint64_t off = 0; off < size && st == INGOT_OK; off += part * STORE_COPY_INFLIGHT) {
        size_t n = 0;
        for (uint64_t at = off; n < STORE_COPY_INFLIGHT && at < size; n++, at += part) {
            uint64_t len = size - at < part ? size - at : part;
            iov[n] = (struct iovec){map + at, (size_t)len};
            reqs[n] = (ingot_objstore_req_t){.object = o,
                                             .offset = at,
                                             .length = len,
                                             .object_size = size,
                                             .etag = etag,
                                             .iov = &iov[n],
                                             .iovcnt = 1,
                                             .deadline_ns = deadline};
        }
        st = ingot_objstore_read_many(c, reqs, n);
    }
    return st;
}

ingot_status_t ingot_store_local_copy(ingot_location_t *loc, const char *etag, uint64_t size,
                                      int *fd_p)
{
    ingot_objstore_t *c;
    ingot_objstore_object_t *o = NULL;
    const char *url = loc->text;
    INGOT_CHECK(ingot_objstore_shared(loc, &c));
    INGOT_CHECK(ingot_objstore_object_at(c, loc, &o));
    int fd = store_tmpfile(size, url);
    char *map = (fd >= 0 && size > 0)
                    ? mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                    : NULL;
    ingot_status_t st = fd < 0 ? INGOT_ERR_IO : INGOT_OK;
    if (map == MAP_FAILED) {
        st = ingot_fail(INGOT_ERR_IO, "cannot map a temporary copy of '%s': %s", url,
                        strerror(errno));
    } else if (map != NULL) {
        st = store_copy(c, o, etag, size, map);
        munmap(map, (size_t)size);
    }
    ingot_objstore_object_destroy(o);
    if (st != INGOT_OK && fd >= 0) {
        close(fd);
        fd = -1;
    }
    *fd_p = fd;
    return st;
}

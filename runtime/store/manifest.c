/*
 * Manifests and shards at URLs for the tools: the public ingot_manifest_open() (a URL with one
 * GET into memory, a path through shard/), and the opener shard/ calls for a shard at a URL
 * (verify, cat, the builder): a local copy in an unlinked temporary file, fetched in parts of
 * INGOT_S3_PART_SIZE under the manifest's ETag and size. The loader does not use these: it reads
 * shards with ranged GETs through its own source.
 */
#include "runtime/store/store.h"
#include "shard/files.h"
#include "shard/manifest.h"
#include "base/log.h"
#include "base/status.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Parts of a shard's local copy in flight at once. */
#define STORE_COPY_INFLIGHT 4

ingot_status_t ingot_manifest_open(const char *path, unsigned flags, ingot_manifest_h *manifest_p)
{
    if (path == NULL || manifest_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_manifest_open: NULL argument");
    }
    if (!ingot_store_is_url(path)) {
        return ingot_manifest_open_file(path, flags, manifest_p);
    }
    char *dir = ingot_store_url_dir(path);
    void *data = NULL;
    size_t size = 0;
    ingot_status_t st = dir ? ingot_store_fetch(path, INGOT_STORE_MANIFEST_MAX, &data, &size, NULL)
                            : ingot_fail(INGOT_ERR_INVALID_PARAM,
                                         "manifest URL '%s' names no object", path);
    if (st == INGOT_OK) {
        st = ingot_manifest_open_named(data, size, path, dir, flags, 1, manifest_p);
        if (st != INGOT_OK) {
            free(data);
        }
    }
    free(dir);
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

/* Parts of a copy in flight, and who waits for them. */
typedef struct store_batch {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    int left;
    ingot_status_t status;
} store_batch_t;

static void store_part_done(ingot_objstore_req_t *req)
{
    store_batch_t *b = req->arg;
    pthread_mutex_lock(&b->lock);
    if (req->status != INGOT_OK && b->status == INGOT_OK) {
        b->status = req->status; /* logged by the client, naming the object and range */
    }
    if (--b->left == 0) {
        pthread_cond_signal(&b->cond);
    }
    pthread_mutex_unlock(&b->lock); /* last touch of b */
}

/* Submit parts [off, ...) of the object into @p map, up to STORE_COPY_INFLIGHT; wait for them.
 * The client ends every request by its deadline, so the wait ends. */
static ingot_status_t store_copy_batch(ingot_objstore_t *c, ingot_objstore_req_t *reqs,
                                       struct iovec *iov, uint64_t off, char *map)
{
    const ingot_objstore_req_t *t = &reqs[0]; /* the template: object, size, ETag, deadline */
    store_batch_t b = {.status = INGOT_OK};
    pthread_mutex_init(&b.lock, NULL);
    pthread_cond_init(&b.cond, NULL);
    pthread_mutex_lock(&b.lock);
    for (uint64_t at = off; b.left < STORE_COPY_INFLIGHT && at < t->object_size; at += t->length) {
        ingot_objstore_req_t *r = &reqs[1 + b.left];
        uint64_t len = t->object_size - at < t->length ? t->object_size - at : t->length;
        iov[b.left] = (struct iovec){map + at, (size_t)len};
        *r = (ingot_objstore_req_t){.object = t->object,
                                    .offset = at,
                                    .length = len,
                                    .object_size = t->object_size,
                                    .etag = t->etag,
                                    .iov = &iov[b.left],
                                    .iovcnt = 1,
                                    .deadline_ns = t->deadline_ns,
                                    .cb = store_part_done,
                                    .arg = &b};
        ingot_status_t st = ingot_objstore_submit(c, r);
        b.status = st != INGOT_OK && b.status == INGOT_OK ? st : b.status;
        b.left += st == INGOT_OK;
    }
    while (b.left > 0) {
        pthread_cond_wait(&b.cond, &b.lock);
    }
    pthread_mutex_unlock(&b.lock);
    pthread_cond_destroy(&b.cond);
    pthread_mutex_destroy(&b.lock);
    return b.status;
}

/* The object's bytes into @p map: parts of INGOT_S3_PART_SIZE, a few in flight at once. */
static ingot_status_t store_copy(ingot_objstore_t *c, const ingot_objstore_object_t *o,
                                 const char *etag, uint64_t size, char *map)
{
    const ingot_objstore_config_t *cfg;
    INGOT_CHECK(ingot_objstore_config(&cfg));
    ingot_objstore_req_t reqs[1 + STORE_COPY_INFLIGHT];
    struct iovec iov[STORE_COPY_INFLIGHT];
    reqs[0] = (ingot_objstore_req_t){.object = o,
                                     .length = cfg->part_size,
                                     .object_size = size,
                                     .etag = etag,
                                     .deadline_ns = ingot_store_deadline()};
    ingot_status_t st = INGOT_OK;
    for (uint64_t off = 0; off < size && st == INGOT_OK;
         off += cfg->part_size * STORE_COPY_INFLIGHT) {
        st = store_copy_batch(c, reqs, iov, off, map);
    }
    return st;
}

ingot_status_t ingot_store_local_copy(const char *url, const char *etag, uint64_t size, int *fd_p)
{
    ingot_objstore_t *c;
    ingot_objstore_object_t *o = NULL;
    INGOT_CHECK(ingot_store_client(url, &c));
    INGOT_CHECK(ingot_objstore_object_create(c, url, &o));
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

/* shard/'s opener of shards at URLs (shard/files.h) is this file's local copy. */
__attribute__((constructor)) static void store_opener_register(void)
{
    ingot_shard_remote_set(ingot_store_local_copy);
}

/* The shard descriptor cache (see fds.h). */
#include "shard/fds.h"
#include "shard/manifest.h"
#include "base/fault.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct fds_entry {
    _Atomic int open; /* src is filled (release after the fill) */
    ingot_file_t src;
    char *path;
} fds_entry_t;

struct ingot_shard_fds {
    ingot_manifest_h m;
    unsigned flags;
    uint64_t count;
    pthread_mutex_t lock; /* serialises opening */
    int said_map;         /* (lock) a failed mmap said once */
    fds_entry_t *entries;
};

/* A shard at a URL (@p name under the manifest's folder): a local copy from the opener the
 * runtime handed the manifest. */
static int fds_open_remote(ingot_manifest_h m, uint32_t shard, const char *name, uint64_t size,
                           ingot_status_t *st_p)
{
    ingot_shard_remote_fn fn = ingot_manifest_remote(m);
    ingot_location_t loc;
    int fd = -1;
    if ((*st_p = ingot_location_join(ingot_manifest_location(m), name, &loc)) != INGOT_OK) {
        return -1;
    }
    if (fn == NULL) {
        *st_p = ingot_fail(INGOT_ERR_UNSUPPORTED,
                           "shard '%s' is at a URL, and its manifest was opened without a reader "
                           "of object stores (ingot_manifest_open() gives it one)",
                           loc.text);
    } else {
        *st_p = fn(&loc, ingot_manifest_shard_etag(m, shard), size, &fd);
    }
    ingot_location_release(&loc);
    return *st_p == INGOT_OK ? fd : -1;
}

ingot_status_t ingot_shard_fds_create(ingot_manifest_h manifest, unsigned flags,
                                      ingot_shard_fds_t **fds_p)
{
    if (manifest == NULL || fds_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_shard_fds_create: NULL argument");
    }
    ingot_shard_fds_t *f = ingot_calloc(1, sizeof(*f), "shard descriptor cache");
    uint64_t n = manifest->hdr->shard_count;
    if (f == NULL ||
        (f->entries = ingot_calloc(n ? n : 1, sizeof(*f->entries), "shard descriptors")) == NULL) {
        free(f);
        return INGOT_ERR_NO_MEMORY;
    }
    f->m = manifest;
    f->flags = flags;
    f->count = n;
    pthread_mutex_init(&f->lock, NULL);
    *fds_p = f;
    return INGOT_OK;
}

/* Open shard @p shard (@p info, at @p path) and check its size against the manifest's; fills
 * @p e. Called under the lock. */
static ingot_status_t fds_open(ingot_shard_fds_t *f, fds_entry_t *e, uint32_t shard,
                               const ingot_shard_info_t *info, const char *path)
{
    int oflags = O_RDONLY | O_CLOEXEC | ((f->flags & INGOT_SHARD_FDS_DIRECT) ? O_DIRECT : 0);
    int url = ingot_location_is_remote(ingot_manifest_location(f->m));
    uint64_t expect_size = info->size;
    ingot_status_t rst = INGOT_OK;
    int err = url ? 0 : ingot_fault_check(INGOT_FAULT_OPEN);
    int fd = url ? fds_open_remote(f->m, shard, info->path, expect_size, &rst)
                 : (err ? -1 : open(path, oflags));
    if (url && fd < 0) {
        return rst;
    }
    if (fd < 0) {
        err = err ? err : errno;
        return ingot_fail(ingot_status_from_errno(err), "cannot open shard '%s': %s", path,
                          strerror(err));
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        err = errno;
        close(fd);
        return ingot_fail(ingot_status_from_errno(err), "cannot stat shard '%s': %s", path,
                          strerror(err));
    }
    if ((uint64_t)st.st_size != expect_size) {
        uint64_t size = (uint64_t)st.st_size;
        close(fd);
        return ingot_fail(INGOT_ERR_MISMATCH,
                          "shard '%s' has %" PRIu64 " bytes but the manifest "
                          "recorded %" PRIu64 ": it %s after the manifest was built",
                          path, size, expect_size, size < expect_size ? "shrank" : "changed");
    }
    if (!(f->flags & INGOT_SHARD_FDS_DIRECT) && !url) {
        posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    }
    if (e->path == NULL && (e->path = strdup(path)) == NULL) {
        close(fd);
        return INGOT_ERR_NO_MEMORY;
    }
    e->src = (ingot_file_t){.fd = fd, .size = expect_size, .name = e->path};
    if ((f->flags & INGOT_SHARD_FDS_MAP) && !(f->flags & INGOT_SHARD_FDS_DIRECT) && expect_size) {
        void *map = mmap(NULL, (size_t)expect_size, PROT_READ, MAP_SHARED, fd, 0);
        if (map != MAP_FAILED) {
            e->src.map = map;
        } else if (!f->said_map) {
            f->said_map = 1;
            ingot_info("shard '%s' cannot be mapped (%s): read with pread", path, strerror(errno));
        }
    }
    atomic_store_explicit(&e->open, 1, memory_order_release);
    return INGOT_OK;
}

ingot_status_t ingot_shard_fds_get(ingot_shard_fds_t *f, uint32_t shard, ingot_file_t **src_p)
{
    if (shard >= f->count) {
        return ingot_fail(INGOT_ERR_OUT_OF_RANGE,
                          "shard %u is beyond the manifest's %" PRIu64 " shards", shard, f->count);
    }
    fds_entry_t *e = &f->entries[shard];
    if (atomic_load_explicit(&e->open, memory_order_acquire)) {
        *src_p = &e->src;
        return INGOT_OK;
    }
    ingot_shard_info_t info;
    char path[PATH_MAX];
    ingot_status_t st = ingot_manifest_shard_get(f->m, shard, &info);
    if (st == INGOT_OK) {
        st = ingot_manifest_shard_path(f->m, shard, path, sizeof(path));
    }
    pthread_mutex_lock(&f->lock);
    if (st == INGOT_OK && !atomic_load_explicit(&e->open, memory_order_acquire)) {
        st = fds_open(f, e, shard, &info, path);
    }
    pthread_mutex_unlock(&f->lock);
    if (st == INGOT_OK) {
        *src_p = &e->src;
    }
    return st;
}

/* Close entry @p e's descriptor and its mapping. */
static void fds_close(fds_entry_t *e)
{
    if (e->src.map != NULL) {
        munmap((void *)e->src.map, (size_t)e->src.size);
        e->src.map = NULL;
    }
    close(e->src.fd);
}

void ingot_shard_fds_release(ingot_shard_fds_t *f, uint32_t shard)
{
    if (f != NULL && shard < f->count && atomic_load(&f->entries[shard].open)) {
        fds_close(&f->entries[shard]);
        atomic_store(&f->entries[shard].open, 0);
    }
}

void ingot_shard_fds_destroy(ingot_shard_fds_t *f)
{
    if (f == NULL) {
        return;
    }
    for (uint64_t i = 0; i < f->count; i++) {
        if (atomic_load(&f->entries[i].open)) {
            fds_close(&f->entries[i]);
        }
        free(f->entries[i].path);
    }
    pthread_mutex_destroy(&f->lock);
    free(f->entries);
    free(f);
}

/*
 * POSIX storage and the emulated remote store (see storage.h). The emulation models one link:
 * requests are serialised on the link at the configured bandwidth (a token bucket with no
 * burst) and each completes a fixed latency after its last byte, so concurrent requests hide
 * latency the way they would against a real remote store.
 */
#include "runtime/storage.h"
#include "runtime/loader_config.h"
#include "base/fault.h"
#include "base/io.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"
#include "base/time.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <limits.h>
#include <sys/uio.h>
#include <unistd.h>

#define STORAGE_PATH_MAX 4096

typedef struct storage_file {
    int      fd;
    uint64_t size;
    char    *path;
} storage_file_t;

struct ingot_storage {
    int                       direct;
    int                       emulated;
    ingot_storage_emulation_t emu;
    pthread_mutex_t           link_lock;
    uint64_t                  link_free_ns; /* when the emulated link finishes its last request */
    uint32_t                  file_count;
    storage_file_t           *files;
};

ingot_status_t ingot_storage_create(const ingot_storage_params_t *params, uint32_t file_count,
                                    ingot_storage_t **storage_p)
{
    ingot_storage_t *s = ingot_calloc(1, sizeof(*s), "storage");
    if (s == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    s->files = ingot_calloc(file_count ? file_count : 1, sizeof(*s->files), "storage files");
    if (s->files == NULL) {
        free(s);
        return INGOT_ERR_NO_MEMORY;
    }
    for (uint32_t i = 0; i < file_count; i++) {
        s->files[i].fd = -1;
    }
    s->file_count = file_count;
    s->direct = params->direct;
    if (params->emulate != NULL && (params->emulate->bandwidth || params->emulate->latency_ns)) {
        s->emulated = 1;
        s->emu = *params->emulate;
    }
    pthread_mutex_init(&s->link_lock, NULL);
    *storage_p = s;
    return INGOT_OK;
}

const char *ingot_storage_name(const ingot_storage_t *storage)
{
    return storage->emulated ? "emulated-remote" : (storage->direct ? "posix-direct" : "posix");
}

int ingot_storage_is_open(const ingot_storage_t *storage, uint32_t id)
{
    return id < storage->file_count && storage->files[id].fd >= 0;
}

ingot_status_t ingot_storage_open(ingot_storage_t *s, uint32_t id, const char *path,
                                  uint64_t expect_size)
{
    if (id >= s->file_count) {
        return INGOT_ERR_OUT_OF_RANGE;
    }
    storage_file_t *f = &s->files[id];
    if (f->fd >= 0) {
        return INGOT_OK;
    }
    int err = ingot_fault_check(INGOT_FAULT_OPEN);
    int fd = err ? -1 : open(path, O_RDONLY | O_CLOEXEC | (s->direct ? O_DIRECT : 0));
    if (fd < 0) {
        err = err ? err : errno;
        ingot_error("cannot open shard '%s': %s", path, strerror(err));
        return ingot_status_from_errno(err);
    }
    struct stat st;
    if (fstat(fd, &st) != 0 || (uint64_t)st.st_size != expect_size) {
        ingot_error("shard '%s' has %" PRIu64 " bytes but the manifest recorded %" PRIu64
                    ": it changed after the manifest was built", path, (uint64_t)st.st_size,
                    expect_size);
        close(fd);
        return INGOT_ERR_MISMATCH;
    }
    posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
    f->path = strdup(path);
    f->fd = fd;
    f->size = expect_size;
    return INGOT_OK;
}

static void emulate_link(ingot_storage_t *s, size_t len)
{
    uint64_t now = ingot_time_ns(), finish;
    pthread_mutex_lock(&s->link_lock);
    uint64_t start = (s->link_free_ns > now) ? s->link_free_ns : now;
    uint64_t transfer = s->emu.bandwidth
                        ? (uint64_t)((long double)len * INGOT_NSEC_PER_SEC / s->emu.bandwidth) : 0;
    finish = start + transfer;
    s->link_free_ns = finish;
    pthread_mutex_unlock(&s->link_lock);
    uint64_t done = finish + s->emu.latency_ns;
    struct timespec ts = {.tv_sec = (time_t)(done / INGOT_NSEC_PER_SEC),
                          .tv_nsec = (long)(done % INGOT_NSEC_PER_SEC)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}

static ingot_status_t storage_check_range(const storage_file_t *f, size_t len, uint64_t offset)
{
    if (offset > f->size || len > f->size - offset) {
        ingot_error("read of %zu bytes at offset %" PRIu64 " is beyond the end of shard '%s' "
                    "(%" PRIu64 " bytes)", len, offset, f->path, f->size);
        return INGOT_ERR_OUT_OF_RANGE;
    }
    return INGOT_OK;
}

/* preadv until @p need bytes arrived (@p total requested; the tail past EOF may be short). */
static ingot_status_t storage_preadv_all(storage_file_t *f, struct iovec *iov, int iovcnt,
                                         uint64_t offset, size_t need)
{
    ingot_io_fail_t fail;
    ingot_status_t st = ingot_io_preadv_full(f->fd, iov, iovcnt, offset, need, &fail);
    if (st != INGOT_OK) {
        ingot_error("read of shard '%s' at offset %" PRIu64 " failed: %s", f->path, fail.offset,
                    fail.err ? strerror(fail.err) : "unexpected end of file (the shard shrank)");
    }
    return st;
}

ingot_status_t ingot_storage_readv(ingot_storage_t *s, uint32_t id, struct iovec *iov,
                                   int iovcnt, uint64_t offset)
{
    if (!ingot_storage_is_open(s, id) || iovcnt <= 0) {
        return INGOT_ERR_INVALID_PARAM;
    }
    size_t len = 0;
    for (int i = 0; i < iovcnt; i++) {
        len += iov[i].iov_len;
    }
    ingot_status_t st = storage_check_range(&s->files[id], len, offset);
    if (st != INGOT_OK) {
        return st;
    }
    if (s->emulated) {
        emulate_link(s, len);
    }
    return storage_preadv_all(&s->files[id], iov, iovcnt, offset, len);
}

ingot_status_t ingot_storage_read(ingot_storage_t *s, uint32_t id, void *buf, size_t len,
                                  uint64_t offset)
{
    struct iovec iov = {.iov_base = buf, .iov_len = len};
    return ingot_storage_readv(s, id, &iov, 1, offset);
}

ingot_status_t ingot_storage_read_window(ingot_storage_t *s, uint32_t id, void *buf, size_t len,
                                         uint64_t offset, size_t *shift_p)
{
    if (!s->direct) {
        *shift_p = 0;
        return ingot_storage_read(s, id, buf, len, offset);
    }
    if (!ingot_storage_is_open(s, id)) {
        return INGOT_ERR_INVALID_PARAM;
    }
    const uint64_t align = INGOT_STORAGE_DIRECT_ALIGN;
    ingot_status_t st = storage_check_range(&s->files[id], len, offset);
    if (st != INGOT_OK) {
        return st;
    }
    uint64_t start = offset & ~(align - 1), end = (offset + len + align - 1) & ~(align - 1);
    struct iovec iov = {.iov_base = buf, .iov_len = (size_t)(end - start)};
    if (s->emulated) {
        emulate_link(s, len);
    }
    st = storage_preadv_all(&s->files[id], &iov, 1, start, (size_t)(offset + len - start));
    *shift_p = (size_t)(offset - start);
    return st;
}

void ingot_storage_destroy(ingot_storage_t *s)
{
    if (s == NULL) {
        return;
    }
    for (uint32_t i = 0; i < s->file_count; i++) {
        if (s->files[i].fd >= 0) {
            close(s->files[i].fd);
        }
        free(s->files[i].path);
    }
    pthread_mutex_destroy(&s->link_lock);
    free(s->files);
    free(s);
}

int ingot_storage_emulation_parse(const char *spec, ingot_storage_emulation_t *emu, char *err,
                                  size_t errlen)
{
    static const ingot_config_field_t bw_field = {"STORAGE_EMULATE bw", "0", "", 0,
                                                  INGOT_CONFIG_SIZE, 0, 0, 0, NULL, NULL};
    static const ingot_config_field_t lat_field = {"STORAGE_EMULATE lat", "0", "", 0,
                                                   INGOT_CONFIG_DURATION, 0, 0, 0, NULL, NULL};
    char buf[256];
    memset(emu, 0, sizeof(*emu));
    if (strcmp(spec, "none") == 0) {
        return 0;
    }
    if (strlen(spec) >= sizeof(buf)) {
        snprintf(err, errlen, "longer than %zu characters", sizeof(buf) - 1);
        return -1;
    }
    strcpy(buf, spec);
    char *save = NULL;
    int parts = 0;
    for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save), parts++) {
        char *eq = strchr(tok, '='), why[384];
        if (eq == NULL) {
            snprintf(err, errlen, "'%s' is not key=value (keys: bw, lat)", tok);
            return -1;
        }
        *eq = '\0';
        const char *val = eq + 1;
        if (strcmp(tok, "bw") == 0) {
            size_t n = strlen(val);
            if (n < 2 || strcmp(val + n - 2, "/s") != 0) {
                snprintf(err, errlen, "bw='%s' needs a rate such as 200MiB/s", val);
                return -1;
            }
            char num[128];
            snprintf(num, sizeof(num), "%.*s", (int)(n - 2), val);
            if (ingot_config_parse(&bw_field, num, &emu->bandwidth, why, sizeof(why)) != 0 ||
                emu->bandwidth == 0) {
                snprintf(err, errlen, "bw='%s' is not a positive size per second, e.g. 200MiB/s",
                         val);
                return -1;
            }
        } else if (strcmp(tok, "lat") == 0) {
            if (ingot_config_parse(&lat_field, val, &emu->latency_ns, why, sizeof(why)) != 0) {
                snprintf(err, errlen, "lat='%s' is not a duration such as 5ms", val);
                return -1;
            }
        } else {
            snprintf(err, errlen, "unknown key '%s' (keys: bw, lat)", tok);
            return -1;
        }
    }
    if (parts == 0) {
        snprintf(err, errlen, "empty specification");
        return -1;
    }
    return 0;
}

int ingot_config_check_storage_emulate(const char *value, char *err, size_t errlen)
{
    ingot_storage_emulation_t emu;
    return ingot_storage_emulation_parse(value, &emu, err, errlen);
}

/*
 * Manifest loading: map (or borrow) the file, check the header, then either check every row
 * (full) or check each row when it is looked up (lazy: manifest_check.c). Lookups are O(1) by
 * global index.
 */
#include "shard/manifest.h"
#include "base/log.h"
#include "shard/tar.h"
#include "base/fault.h"
#include "base/mem.h"
#include "base/status.h"
#include "base/uri.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>


ingot_status_t ingot_manifest_maxima_get(ingot_manifest_h m, ingot_manifest_maxima_t *max_p)
{
    if (m == NULL || max_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_manifest_maxima_get: NULL argument");
    }
    if (m->has_max) {
        *max_p = m->max;
        return INGOT_OK;
    }
    return ingot_manifest_scan_samples(
        m, max_p); /* version 1 opened lazily: nothing stored, one pass */
}

/* ---------------------------------------------------------------- open / close */

static ingot_status_t mf_init(struct ingot_manifest *m, const char *name, const char *dir,
                              unsigned flags)
{
    m->name = strdup(name);
    m->dir = strdup(dir);
    if (m->name == NULL || m->dir == NULL) {
        return ingot_fail(INGOT_ERR_NO_MEMORY, "%s: out of memory", name);
    }
    INGOT_CHECK(ingot_manifest_check_header(m));
    /* The name table is tiny (at most MANIFEST_NAMES_MAX rows) and every field lookup indexes
     * it: check it even when opening lazily (found by fuzz_manifest). */
    INGOT_CHECK(ingot_manifest_check_names(m));
    m->lazy = (flags & INGOT_MANIFEST_OPEN_LAZY) != 0;
    return m->lazy ? INGOT_OK : ingot_manifest_check_all(m);
}

ingot_status_t ingot_manifest_open_named(const void *buf, size_t len, const char *name,
                                         const char *base_dir, unsigned flags, int own,
                                         ingot_manifest_h *manifest_p)
{
    if (buf == NULL || manifest_p == NULL || ((uintptr_t)buf % MANIFEST_ALIGN) != 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "manifest buffer: NULL or not %u-byte aligned",
                          MANIFEST_ALIGN);
    }
    struct ingot_manifest *m = ingot_calloc(1, sizeof(*m), "manifest");
    if (m == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    m->base = buf;
    m->len = len;
    m->owned = own ? (void *)buf : NULL;
    ingot_status_t st = mf_init(m, name, base_dir ? base_dir : ".", flags);
    if (st != INGOT_OK) {
        m->owned = NULL; /* the caller keeps its buffer when the open fails */
        ingot_manifest_close(m);
        return st;
    }
    *manifest_p = m;
    return INGOT_OK;
}

ingot_status_t ingot_manifest_open_buffer(const void *buf, size_t len, const char *base_dir,
                                          unsigned flags, ingot_manifest_h *manifest_p)
{
    return ingot_manifest_open_named(buf, len, "<manifest buffer>", base_dir, flags, 0, manifest_p);
}

void ingot_manifest_dir(const char *path, char *dir, size_t len)
{
    const char *slash = strrchr(path, '/');
    if (slash == NULL) {
        snprintf(dir, len, ".");
    } else {
        size_t n = slash == path ? 1 : (size_t)(slash - path); /* "/m.ingot": "/" */
        snprintf(dir, len, "%.*s", (int)n, path);
    }
}

static ingot_status_t mf_map(struct ingot_manifest *m, const char *path)
{
    ingot_file_t src;
    INGOT_CHECK(ingot_file_open(path, &src));
    if (src.size < sizeof(manifest_header_t)) {
        ingot_file_close(&src);
        return ingot_fail(INGOT_ERR_FORMAT, "%s: %" PRIu64 " bytes is too short for a manifest",
                          path, src.size);
    }
    int err = ingot_fault_check(INGOT_FAULT_MMAP);
    void *p = err ? (errno = err, MAP_FAILED)
                  : mmap(NULL, src.size, PROT_READ, MAP_SHARED, src.fd, 0);
    ingot_file_close(&src);
    if (p == MAP_FAILED) {
        return ingot_fail(ingot_status_from_errno(errno), "%s: mmap failed: %s", path,
                          strerror(errno));
    }
    m->map = p;
    m->base = p;
    m->len = src.size;
    return INGOT_OK;
}

ingot_status_t ingot_manifest_open_file(const char *path, unsigned flags,
                                        ingot_manifest_h *manifest_p)
{
    if (path == NULL || manifest_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_manifest_open: NULL argument");
    }
    struct ingot_manifest *m = ingot_calloc(1, sizeof(*m), "manifest");
    if (m == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    char *dir = malloc(strlen(path) + 2);
    ingot_status_t st = dir ? mf_map(m, path) : INGOT_ERR_NO_MEMORY;
    if (st == INGOT_OK) {
        ingot_manifest_dir(path, dir, strlen(path) + 2);
        st = mf_init(m, path, dir, flags);
    }
    free(dir);
    if (st != INGOT_OK) {
        ingot_manifest_close(m);
        return st;
    }
    *manifest_p = m;
    return INGOT_OK;
}

void ingot_manifest_close(ingot_manifest_h m)
{
    if (m == NULL) {
        return;
    }
    if (m->map != NULL) {
        munmap(m->map, m->len);
    }
    free(m->owned);
    free(m->name);
    free(m->dir);
    free(m);
}

/* ---------------------------------------------------------------- lookups */

ingot_status_t ingot_manifest_query(ingot_manifest_h m, ingot_manifest_info_t *info_p)
{
    if (m == NULL || info_p == NULL) {
        return INGOT_ERR_INVALID_PARAM;
    }
    const manifest_header_t *h = m->hdr;
    *info_p = (ingot_manifest_info_t){
        .version = h->version,
        .file_size = h->file_size,
        .digest = h->header_hash,
        .shard_count = h->shard_count,
        .sample_count = h->sample_count,
        .field_count = h->field_count,
        .name_count = (uint32_t)h->name_count,
        .dict_path = (h->flags & MANIFEST_FLAG_DICT) ? manifest_str(m, h->dict_path) : NULL,
        .dict_hash = h->dict_hash};
    return INGOT_OK;
}

ingot_status_t ingot_manifest_shard_get(ingot_manifest_h m, uint32_t shard,
                                        ingot_shard_info_t *info_p)
{
    if (m == NULL || info_p == NULL || shard >= m->hdr->shard_count) {
        return INGOT_ERR_OUT_OF_RANGE;
    }
    INGOT_CHECK(ingot_manifest_check_shard(m, shard));
    const manifest_shard_t *s = &m->shards[shard];
    *info_p = (ingot_shard_info_t){.path = manifest_str(m, s->path),
                                   .size = s->size,
                                   .hash = s->hash,
                                   .first_sample = s->first_sample,
                                   .sample_count = s->sample_count};
    return INGOT_OK;
}

ingot_status_t ingot_manifest_sample_get(ingot_manifest_h m, uint64_t index,
                                         ingot_sample_info_t *info_p)
{
    if (m == NULL || info_p == NULL || index >= m->hdr->sample_count) {
        return INGOT_ERR_OUT_OF_RANGE;
    }
    return ingot_manifest_check_sample(m, index, info_p, NULL);
}

ingot_status_t ingot_manifest_field_get(ingot_manifest_h m, const ingot_sample_info_t *sample,
                                        uint32_t i, ingot_field_info_t *info_p)
{
    if (m == NULL || sample == NULL || info_p == NULL || i >= sample->field_count ||
        sample->first_field + i >= m->hdr->field_count) {
        return INGOT_ERR_OUT_OF_RANGE;
    }
    const manifest_field_t *f = &m->fields[sample->first_field + i];
    if (f->name >= m->hdr->name_count) {
        return INGOT_ERR_OUT_OF_RANGE;
    }
    *info_p = (ingot_field_info_t){.name = m->strtab + m->names[f->name].off,
                                   .offset = f->offset,
                                   .stored_len = f->stored_len,
                                   .raw_len = f->raw_len,
                                   .codec = (ingot_codec_t)f->codec,
                                   .hash = f->hash};
    return INGOT_OK;
}

ingot_status_t ingot_manifest_find(ingot_manifest_h m, const char *key, int64_t shard,
                                   uint64_t *index_p)
{
    if (m == NULL || key == NULL || index_p == NULL) {
        return INGOT_ERR_INVALID_PARAM;
    }
    size_t len = strlen(key);
    for (uint64_t i = 0; i < m->hdr->sample_count; i++) {
        const manifest_sample_t *s = &m->samples[i];
        if ((shard < 0 || s->shard == (uint64_t)shard) &&
            ingot_manifest_strref_ok(m, s->key, 0) == 0 && manifest_strref_len(s->key) == len &&
            memcmp(manifest_str(m, s->key), key, len) == 0) {
            *index_p = i;
            return INGOT_OK;
        }
    }
    return INGOT_ERR_NOT_FOUND;
}

const char *ingot_manifest_shard_etag(ingot_manifest_h m, uint32_t shard)
{
    if (m == NULL || shard >= m->hdr->shard_count || m->hdr->version < MANIFEST_VERSION_ETAG ||
        m->shards[shard].etag == 0 || ingot_manifest_check_shard(m, shard) != INGOT_OK) {
        return NULL;
    }
    return manifest_str(m, m->shards[shard].etag);
}

ingot_status_t ingot_manifest_path_of(struct ingot_manifest *m, const char *name, char *buf,
                                      size_t buflen)
{
    int n = snprintf(buf, buflen, "%s/", m->dir);
    if (n < 0 || (size_t)n >= buflen) {
        return INGOT_ERR_NO_RESOURCE;
    }
    /* An http(s) URL is used as written: the name's bytes (space, '+', '=', '%', UTF-8) go into
     * it encoded. An s3:// URL carries the key as stored (its requests encode it). */
    size_t need = strncasecmp(m->dir, "http", 4) == 0
                      ? ingot_uri_encode(name, strlen(name), 1, buf + n, buflen - (size_t)n)
                      : (size_t)snprintf(buf + n, buflen - (size_t)n, "%s", name);
    return need < buflen - (size_t)n ? INGOT_OK : INGOT_ERR_NO_RESOURCE;
}

ingot_status_t ingot_manifest_shard_path(ingot_manifest_h m, uint32_t shard, char *buf,
                                         size_t buflen)
{
    ingot_shard_info_t info;
    INGOT_CHECK(ingot_manifest_shard_get(m, shard, &info));
    return ingot_manifest_path_of(m, info.path, buf, buflen);
}

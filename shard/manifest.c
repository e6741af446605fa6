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

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

static ingot_status_t mf_init(struct ingot_manifest *m, const ingot_manifest_origin_t *origin,
                              unsigned flags)
{
    m->name = strdup(origin->name);
    if (m->name == NULL) {
        return ingot_fail(INGOT_ERR_NO_MEMORY, "%s: out of memory", origin->name);
    }
    INGOT_CHECK(ingot_location_copy(origin->dir, &m->location));
    m->remote = origin->remote;
    INGOT_CHECK(ingot_manifest_check_header(m));
    /* The name table is tiny (at most MANIFEST_NAMES_MAX rows) and every field lookup indexes
     * it: check it even when opening lazily (found by fuzz_manifest). */
    INGOT_CHECK(ingot_manifest_check_names(m));
    m->lazy = (flags & INGOT_MANIFEST_OPEN_LAZY) != 0 && !(flags & INGOT_MANIFEST_OPEN_CHECKED);
    return m->lazy || (flags & INGOT_MANIFEST_OPEN_CHECKED) ? INGOT_OK
                                                            : ingot_manifest_check_all(m);
}

ingot_status_t ingot_manifest_open_named(const void *buf, size_t len,
                                         const ingot_manifest_origin_t *origin, unsigned flags,
                                         int own, ingot_manifest_h *manifest_p)
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
    ingot_status_t st = mf_init(m, origin, flags);
    if (st != INGOT_OK) {
        m->owned = NULL; /* the caller keeps its buffer when the open fails */
        ingot_manifest_close(m);
        return st;
    }
    *manifest_p = m;
    return INGOT_OK;
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
    ingot_location_t file = {.scheme = INGOT_LOCATION_FILE, .text = (char *)path}, dir = {0};
    ingot_status_t st = mf_map(m, path);
    if (st == INGOT_OK && (st = ingot_location_dir(&file, &dir)) == INGOT_OK) {
        ingot_manifest_origin_t origin = {.name = path, .dir = &dir};
        st = mf_init(m, &origin, flags);
    }
    ingot_location_release(&dir);
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
    ingot_location_release(&m->location);
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
    if (!m->lazy) {
        ingot_manifest_sample_fill(m, index, info_p); /* every row was checked at open */
        return INGOT_OK;
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
    return ingot_location_join_text(&m->location, name, buf, buflen) < buflen
               ? INGOT_OK
               : INGOT_ERR_NO_RESOURCE;
}

const ingot_location_t *ingot_manifest_location(ingot_manifest_h m)
{
    return &m->location;
}

ingot_shard_remote_fn ingot_manifest_remote(ingot_manifest_h m)
{
    return m->remote;
}

ingot_status_t ingot_manifest_shard_path(ingot_manifest_h m, uint32_t shard, char *buf,
                                         size_t buflen)
{
    ingot_shard_info_t info;
    INGOT_CHECK(ingot_manifest_shard_get(m, shard, &info));
    return ingot_manifest_path_of(m, info.path, buf, buflen);
}

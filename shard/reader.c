/*
 * Sample reader: one pread per sample from a cached shard descriptor, every field's hash checked
 * before the sample is handed over, zstd fields decoded into caller memory with a reused context.
 */
#include "shard/reader.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static ingot_status_t rd_dict(struct ingot_shard_reader *r)
{
    ingot_manifest_info_t info;
    INGOT_CHECK(ingot_manifest_query(r->m, &info));
    if (info.dict_path == NULL) {
        return ingot_shard_zstd_init(&r->zstd, NULL, 0);
    }
    char path[PATH_MAX];
    snprintf(path, sizeof(path), "%s/%s", r->m->dir, info.dict_path);
    uint8_t *dict;
    size_t len;
    INGOT_CHECK(ingot_shard_src_slurp(path, &dict, &len));
    ingot_status_t st = ingot_shard_hash(dict, len) == info.dict_hash
        ? ingot_shard_zstd_init(&r->zstd, dict, len)
        : ingot_fail(INGOT_ERR_CORRUPT, "%s: dictionary hash differs from the manifest's", path);
    free(dict);
    return st;
}

ingot_status_t ingot_shard_reader_create(ingot_manifest_h m, ingot_shard_reader_h *reader_p)
{
    if (m == NULL || reader_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_shard_reader_create: NULL argument");
    }
    struct ingot_shard_reader *r = ingot_calloc(1, sizeof(*r), "shard reader");
    uint64_t n = m->hdr->shard_count;
    if (r == NULL || (r->srcs = ingot_calloc(n ? n : 1, sizeof(*r->srcs), "shard fds")) == NULL ||
        (r->names = ingot_calloc(n ? n : 1, sizeof(*r->names), "shard names")) == NULL) {
        ingot_shard_reader_destroy(r);
        return INGOT_ERR_NO_MEMORY;
    }
    r->m = m;
    for (uint64_t i = 0; i < n; i++) {
        r->srcs[i].fd = -1;
    }
    ingot_status_t st = rd_dict(r);
    if (st != INGOT_OK) {
        ingot_shard_reader_destroy(r);
        return st;
    }
    *reader_p = r;
    return INGOT_OK;
}

void ingot_shard_reader_destroy(ingot_shard_reader_h r)
{
    if (r == NULL) {
        return;
    }
    for (uint64_t i = 0; r->srcs && r->m && i < r->m->hdr->shard_count; i++) {
        ingot_shard_src_close(&r->srcs[i]);
        /* NOLINTNEXTLINE(clang-analyzer-core.NullDereference): r->m set => names set */
        free(r->names[i]);
    }
    ingot_shard_zstd_release(&r->zstd);
    free(r->srcs);
    free(r->names);
    free(r);
}

ingot_status_t ingot_reader_shard(struct ingot_shard_reader *r, uint32_t row, shard_src_t **src_p)
{
    shard_src_t *src = &r->srcs[row];
    if (src->fd >= 0) {
        *src_p = src;
        return INGOT_OK;
    }
    char path[PATH_MAX];
    ingot_shard_info_t info;
    INGOT_CHECK(ingot_manifest_shard_get(r->m, row, &info));
    INGOT_CHECK(ingot_manifest_shard_path(r->m, row, path, sizeof(path)));
    if (r->names[row] == NULL && (r->names[row] = strdup(path)) == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    shard_src_t s;
    INGOT_CHECK(ingot_shard_src_open(path, &s));
    if (s.size != info.size) {
        ingot_shard_src_close(&s);
        return ingot_fail(INGOT_ERR_MISMATCH, "%s: shard is %" PRIu64 " bytes, the manifest says %"
                         PRIu64 " (it %s after the manifest was built)", path, s.size, info.size,
                         s.size < info.size ? "shrank" : "changed");
    }
    s.name = r->names[row];
    *src = s;
    *src_p = src;
    return INGOT_OK;
}

ingot_status_t ingot_reader_check_field(struct ingot_shard_reader *r, const ingot_sample_info_t *s,
                                  const uint8_t *buf, uint32_t i, ingot_field_info_t *f_p)
{
    INGOT_CHECK(ingot_manifest_field_get(r->m, s, i, f_p));
    if (ingot_shard_hash(buf + f_p->offset, f_p->stored_len) != f_p->hash) {
        ingot_shard_info_t sh;
        INGOT_CHECK(ingot_manifest_shard_get(r->m, s->shard, &sh));
        return ingot_fail(INGOT_ERR_CORRUPT, "%s: key '%s' field '%s' at offset %" PRIu64 ": hash "
                         "mismatch (corrupt data)", sh.path, s->key, f_p->name,
                         s->offset + f_p->offset);
    }
    return INGOT_OK;
}

ingot_status_t ingot_shard_reader_read(ingot_shard_reader_h r, uint64_t index, void *buf,
                                       size_t buflen)
{
    ingot_sample_info_t s;
    ingot_field_info_t f;
    shard_src_t *src;
    if (r == NULL || buf == NULL) {
        return INGOT_ERR_INVALID_PARAM;
    }
    INGOT_CHECK(ingot_manifest_sample_get(r->m, index, &s));
    if (buflen < s.length) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE, "sample %" PRIu64 " (key '%s'): buffer of %zu "
                         "bytes is smaller than the sample (%" PRIu64 ")", index, s.key, buflen,
                         s.length);
    }
    INGOT_CHECK(ingot_reader_shard(r, s.shard, &src));
    INGOT_CHECK(ingot_shard_src_read(src, s.offset, buf, (size_t)s.length));
    for (uint32_t i = 0; i < s.field_count; i++) {
        INGOT_CHECK(ingot_reader_check_field(r, &s, buf, i, &f));
    }
    return INGOT_OK;
}

ingot_status_t ingot_shard_reader_decode(ingot_shard_reader_h r, uint64_t index,
                                         const void *sample_buf, uint32_t i, void *dst,
                                         size_t dst_cap, size_t *len_p)
{
    ingot_sample_info_t s;
    ingot_field_info_t f;
    if (r == NULL || sample_buf == NULL || dst == NULL || len_p == NULL) {
        return INGOT_ERR_INVALID_PARAM;
    }
    INGOT_CHECK(ingot_manifest_sample_get(r->m, index, &s));
    INGOT_CHECK(ingot_manifest_field_get(r->m, &s, i, &f));
    if (dst_cap < f.raw_len) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE, "key '%s' field '%s': destination of %zu bytes "
                         "is smaller than the raw length %u", s.key, f.name, dst_cap, f.raw_len);
    }
    const uint8_t *src = (const uint8_t *)sample_buf + f.offset;
    if (f.codec == INGOT_CODEC_NONE) {
        memcpy(dst, src, f.raw_len);
    } else {
        char what[512];
        ingot_shard_info_t sh;
        INGOT_CHECK(ingot_manifest_shard_get(r->m, s.shard, &sh));
        snprintf(what, sizeof(what), "%s: key '%s' field '%s' at offset %" PRIu64, sh.path,
                 s.key, f.name, s.offset + f.offset);
        INGOT_CHECK(ingot_shard_zstd_decode(&r->zstd, src, f.stored_len, dst, f.raw_len, what));
    }
    *len_p = f.raw_len;
    return INGOT_OK;
}

/* The sample codec: hash check and bounded zstd decoding from rows held by the caller. */
#include "shard/codec.h"
#include "shard/manifest.h"
#include "shard/tar.h"
#include "base/hash.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ingot_shard_dict {
    void *ddict; /* ZSTD_DDict, or NULL without a dictionary */
};

ingot_status_t ingot_shard_rows_fields(ingot_manifest_h m, const ingot_sample_info_t *sample,
                                       ingot_field_info_t *fields, uint32_t fields_cap)
{
    if (sample->field_count > fields_cap) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE,
                          "sample '%s' (index %" PRIu64 ") has %u fields, "
                          "more than the %u expected",
                          sample->key, sample->index, sample->field_count, fields_cap);
    }
    for (uint32_t f = 0; f < sample->field_count; f++) {
        INGOT_CHECK(ingot_manifest_field_get(m, sample, f, &fields[f]));
    }
    return INGOT_OK;
}

ingot_status_t ingot_shard_rows_get(ingot_manifest_h m, uint64_t index, ingot_sample_info_t *sample,
                                    ingot_field_info_t *fields, uint32_t fields_cap)
{
    INGOT_CHECK(ingot_manifest_sample_get(m, index, sample));
    return ingot_shard_rows_fields(m, sample, fields, fields_cap);
}

ingot_status_t ingot_shard_dict_load(ingot_manifest_h m, ingot_shard_dict_t **dict_p)
{
    ingot_manifest_info_t info;
    INGOT_CHECK(ingot_manifest_query(m, &info));
    ingot_shard_dict_t *d = ingot_calloc(1, sizeof(*d), "zstd dictionary");
    if (d == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    if (info.dict_path == NULL) {
        *dict_p = d;
        return INGOT_OK;
    }
    char path[PATH_MAX];
    uint8_t *bytes = NULL;
    size_t len = 0;
    snprintf(path, sizeof(path), "%s/%s", m->location.text, info.dict_path);
    ingot_status_t st = ingot_file_read_whole(path, &bytes, &len);
    if (st == INGOT_OK && ingot_hash64(bytes, len) != info.dict_hash) {
        st = ingot_fail(INGOT_ERR_CORRUPT, "%s: dictionary hash differs from the manifest's", path);
    }
    if (st == INGOT_OK) {
        st = ingot_shard_zstd_ddict_create(bytes, len, path, &d->ddict);
    }
    free(bytes);
    if (st != INGOT_OK) {
        free(d);
        return st;
    }
    *dict_p = d;
    return INGOT_OK;
}

void ingot_shard_dict_destroy(ingot_shard_dict_t *d)
{
    if (d != NULL) {
        ingot_shard_zstd_ddict_free(d->ddict);
        free(d);
    }
}

ingot_status_t ingot_shard_codec_init(ingot_shard_codec_t *c, const ingot_shard_dict_t *dict)
{
    return ingot_shard_zstd_init_shared(&c->zstd, dict ? dict->ddict : NULL);
}

void ingot_shard_codec_release(ingot_shard_codec_t *c)
{
    ingot_shard_zstd_release(&c->zstd);
}

static const char *codec_shard_path(ingot_manifest_h m, uint32_t shard)
{
    ingot_shard_info_t si;
    return ingot_manifest_shard_get(m, shard, &si) == INGOT_OK ? si.path : "?";
}

static ingot_status_t codec_mismatch(ingot_manifest_h m, const ingot_shard_rows_t *rows, uint32_t f,
                                     ingot_shard_verify_mode_t mode)
{
    const ingot_sample_info_t *s = rows->sample;
    int skip = (mode == INGOT_SHARD_VERIFY_SKIP);
    if (mode == INGOT_SHARD_VERIFY_QUIET) {
        return INGOT_ERR_CORRUPT;
    }
    const char *fmt = "sample '%s' (index %" PRIu64 ") field '%s' in shard '%s' at offset %" PRIu64
                      ": content hash differs from the manifest (corrupt)%s";
    if (skip) {
        ingot_warn(fmt, s->key, s->index, rows->fields[f].name, codec_shard_path(m, s->shard),
                   s->offset + rows->fields[f].offset, "; skipped");
        return INGOT_ERR_CORRUPT;
    }
    return ingot_fail(INGOT_ERR_CORRUPT, fmt, s->key, s->index, rows->fields[f].name,
                      codec_shard_path(m, s->shard), s->offset + rows->fields[f].offset, "");
}

ingot_status_t ingot_shard_codec_verify(ingot_manifest_h m, const ingot_shard_rows_t *rows,
                                        const uint8_t *bytes, ingot_shard_layout_t layout,
                                        ingot_shard_verify_mode_t mode, ingot_shard_damage_t *bad_p)
{
    const uint8_t *p = bytes;
    for (uint32_t f = 0; f < rows->sample->field_count; f++) {
        const ingot_field_info_t *fi = &rows->fields[f];
        const uint8_t *at = (layout == INGOT_SHARD_LAYOUT_PACKED) ? p : bytes + fi->offset;
        uint64_t h = ingot_hash64(at, fi->stored_len);
        if (h != fi->hash) {
            if (bad_p != NULL) {
                *bad_p = (ingot_shard_damage_t){.field = f, .hash = h};
            }
            return codec_mismatch(m, rows, f, mode);
        }
        p += fi->stored_len;
    }
    return INGOT_OK;
}

ingot_status_t ingot_shard_stream_init(ingot_shard_stream_t *s)
{
    s->fed = 0;
    s->xxh = XXH3_createState();
    return s->xxh != NULL ? INGOT_OK
                          : ingot_fail(INGOT_ERR_NO_MEMORY, "out of memory for a hash state");
}

void ingot_shard_stream_release(ingot_shard_stream_t *s)
{
    XXH3_freeState(s->xxh);
    s->xxh = NULL;
}

int ingot_shard_stream_feed(ingot_shard_stream_t *s, const ingot_field_info_t *fi,
                            const uint8_t *field, uint64_t upto)
{
    uint64_t h;
    if (s->fed == 0 && upto == fi->stored_len) {
        h = ingot_hash64(field, fi->stored_len); /* landed whole: one-shot */
    } else {
        if (upto <= s->fed) {
            return 0;
        }
        if (s->fed == 0) {
            XXH3_64bits_reset(s->xxh);
        }
        ingot_hash64_update(s->xxh, field + s->fed, (size_t)(upto - s->fed));
        s->fed = upto;
        if (upto < fi->stored_len) {
            return 0;
        }
        h = XXH3_64bits_digest(s->xxh);
    }
    s->fed = 0;
    return h == fi->hash ? 1 : -1;
}

ingot_status_t ingot_shard_codec_decode(ingot_shard_codec_t *c, ingot_manifest_h m,
                                        const ingot_shard_rows_t *rows, uint32_t i,
                                        const uint8_t *stored, void *dst, size_t cap, size_t *len_p)
{
    const ingot_sample_info_t *s = rows->sample;
    const ingot_field_info_t *f = &rows->fields[i];
    if (cap < f->raw_len) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE,
                          "key '%s' field '%s': destination of %zu bytes "
                          "is smaller than the raw length %u",
                          s->key, f->name, cap, f->raw_len);
    }
    if (f->codec == INGOT_CODEC_NONE) {
        memcpy(dst, stored + f->offset, f->raw_len);
    } else {
        char why[SHARD_ZSTD_WHY_MAX]; /* the member is named only when decoding fails */
        ingot_status_t st = ingot_shard_zstd_decode_why(&c->zstd, stored + f->offset, f->stored_len,
                                                        dst, f->raw_len, why, sizeof(why));
        if (st != INGOT_OK) {
            return ingot_fail(st, "%s: key '%s' field '%s' at offset %" PRIu64 ": %s",
                              codec_shard_path(m, s->shard), s->key, f->name, s->offset + f->offset,
                              why);
        }
    }
    *len_p = f->raw_len;
    return INGOT_OK;
}

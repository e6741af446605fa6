/*
 * Sample reader: one pread per sample from the shard descriptor cache, every field's hash
 * checked by the sample codec before the sample is handed over, zstd fields decoded into caller
 * memory with a reused context.
 */
#include "shard/reader.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"

#include <inttypes.h>
#include <stdlib.h>

ingot_status_t ingot_shard_reader_create(ingot_manifest_h m, ingot_shard_reader_h *reader_p)
{
    if (m == NULL || reader_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_shard_reader_create: NULL argument");
    }
    struct ingot_shard_reader *r = ingot_calloc(1, sizeof(*r), "shard reader");
    if (r == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    r->m = m;
    ingot_status_t st = ingot_shard_fds_create(m, 0, &r->fds);
    if (st == INGOT_OK) {
        st = ingot_shard_dict_load(m, &r->dict);
    }
    if (st == INGOT_OK) {
        st = ingot_shard_codec_init(&r->codec, r->dict);
    }
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
    ingot_shard_codec_release(&r->codec);
    ingot_shard_dict_destroy(r->dict);
    ingot_shard_fds_destroy(r->fds);
    free(r->fields);
    free(r);
}

ingot_status_t ingot_reader_rows(struct ingot_shard_reader *r, uint64_t index,
                                 ingot_shard_rows_t *rows_p)
{
    INGOT_CHECK(ingot_manifest_sample_get(r->m, index, &r->sample));
    if (r->sample.field_count > r->fields_cap) {
        ingot_field_info_t *n = realloc(r->fields, r->sample.field_count * sizeof(*n));
        if (n == NULL) {
            return ingot_fail(INGOT_ERR_NO_MEMORY, "shard reader: no memory for %u field rows",
                              r->sample.field_count);
        }
        r->fields = n;
        r->fields_cap = r->sample.field_count;
    }
    INGOT_CHECK(ingot_shard_rows_fields(r->m, &r->sample, r->fields, r->fields_cap));
    *rows_p = (ingot_shard_rows_t){.sample = &r->sample, .fields = r->fields};
    return INGOT_OK;
}

ingot_status_t ingot_shard_reader_read(ingot_shard_reader_h r, uint64_t index, void *buf,
                                       size_t buflen)
{
    ingot_shard_rows_t rows;
    ingot_file_t *src;
    if (r == NULL || buf == NULL) {
        return INGOT_ERR_INVALID_PARAM;
    }
    INGOT_CHECK(ingot_reader_rows(r, index, &rows));
    const ingot_sample_info_t *s = rows.sample;
    if (buflen < s->length) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE,
                          "sample %" PRIu64 " (key '%s'): buffer of %zu "
                          "bytes is smaller than the sample (%" PRIu64 ")",
                          index, s->key, buflen, s->length);
    }
    INGOT_CHECK(ingot_shard_fds_get(r->fds, s->shard, &src));
    INGOT_CHECK(ingot_file_read(src, s->offset, buf, (size_t)s->length));
    return ingot_shard_codec_verify(r->m, &rows, buf, INGOT_SHARD_LAYOUT_STORED,
                                    INGOT_SHARD_VERIFY_FAIL, NULL);
}

ingot_status_t ingot_shard_reader_decode(ingot_shard_reader_h r, uint64_t index,
                                         const void *sample_buf, uint32_t i, void *dst,
                                         size_t dst_cap, size_t *len_p)
{
    ingot_shard_rows_t rows;
    if (r == NULL || sample_buf == NULL || dst == NULL || len_p == NULL) {
        return INGOT_ERR_INVALID_PARAM;
    }
    INGOT_CHECK(ingot_reader_rows(r, index, &rows));
    if (i >= rows.sample->field_count) {
        return ingot_fail(INGOT_ERR_OUT_OF_RANGE, "key '%s': field %u of %u", rows.sample->key, i,
                          rows.sample->field_count);
    }
    return ingot_shard_codec_decode(&r->codec, r->m, &rows, i, sample_buf, dst, dst_cap, len_p);
}

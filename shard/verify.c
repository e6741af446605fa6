/*
 * Verification: re-hash every shard and every sample, decode zstd fields within their raw
 * length, and report each fault (by shard, key, field and offset) instead of stopping.
 */
#include "shard/builder.h"
#include "shard/reader.h"
#include "base/log.h"
#include "base/status.h"

#include <stdlib.h>
#include <string.h>

typedef struct vf {
    struct ingot_shard_reader *r;
    ingot_verify_cb_t cb;
    void *arg;
    ingot_verify_report_t rep;
    ingot_file_window_t win;
    uint8_t *buf, *out; /* sample bytes, decoded field */
    size_t buf_cap, out_cap;
} vf_t;

static void vf_report(vf_t *v, const ingot_verify_fault_t *fault)
{
    if (v->cb != NULL) {
        v->cb(fault, v->arg);
    }
}

static ingot_status_t vf_grow(uint8_t **p, size_t *cap, size_t need)
{
    if (need <= *cap) {
        return INGOT_OK;
    }
    uint8_t *n = realloc(*p, need);
    if (n == NULL) {
        return ingot_fail(INGOT_ERR_NO_MEMORY, "verify: cannot allocate %zu bytes", need);
    }
    *p = n;
    *cap = need;
    return INGOT_OK;
}

static void vf_shard_fault(vf_t *v, uint32_t row, const ingot_shard_info_t *sh, ingot_status_t st)
{
    ingot_verify_fault_t fault = {
        .shard = row, .shard_path = sh->path, .index = UINT64_MAX, .status = st};
    v->rep.shards_bad++;
    vf_report(v, &fault);
}

/* Open a shard (size check) and read it through the window so its samples are read and the
 * whole shard is hashed in one pass; *src_p = NULL when it cannot be read at all. */
static void vf_shard_begin(vf_t *v, uint32_t row, const ingot_shard_info_t *sh,
                           ingot_file_t **src_p)
{
    ingot_status_t st = ingot_shard_fds_get(v->r->fds, row, src_p);
    if (st != INGOT_OK) {
        *src_p = NULL;
        vf_shard_fault(v, row, sh, st);
        return;
    }
    ingot_file_window_attach(&v->win, *src_p);
}

static void vf_shard_end(vf_t *v, uint32_t row, const ingot_shard_info_t *sh, ingot_file_t *src)
{
    uint64_t hash;
    if (src == NULL) {
        return;
    }
    ingot_status_t st = ingot_file_window_finish(src, &hash);
    v->rep.bytes_hashed += sh->size;
    if (st == INGOT_OK && hash != sh->hash) {
        st = ingot_fail(INGOT_ERR_CORRUPT, "%s: whole-shard hash mismatch", sh->path);
    }
    if (st != INGOT_OK) {
        vf_shard_fault(v, row, sh, st);
    }
    if (ingot_location_is_remote(ingot_manifest_location(v->r->m))) {
        ingot_shard_fds_release(v->r->fds, row); /* its local copy: one shard at a time */
    }
}

/* Read one sample and check it with the codec: every field's hash, then zstd decoding. */
static ingot_status_t vf_check(vf_t *v, const ingot_shard_rows_t *rows, uint32_t *field_p)
{
    const ingot_sample_info_t *s = rows->sample;
    ingot_file_t *src;
    INGOT_CHECK(ingot_shard_fds_get(v->r->fds, s->shard, &src));
    INGOT_CHECK(ingot_file_read(src, s->offset, v->buf, (size_t)s->length));
    ingot_shard_damage_t bad = {0};
    ingot_status_t st = ingot_shard_codec_verify(v->r->m, rows, v->buf, INGOT_SHARD_LAYOUT_STORED,
                                                 INGOT_SHARD_VERIFY_FAIL, &bad);
    if (st != INGOT_OK) {
        *field_p = bad.field;
        return st;
    }
    for (uint32_t i = 0; i < s->field_count; i++) {
        const ingot_field_info_t *f = &rows->fields[i];
        size_t len;
        *field_p = i;
        if (f->codec != INGOT_CODEC_NONE) {
            INGOT_CHECK(vf_grow(&v->out, &v->out_cap, f->raw_len ? f->raw_len : 1));
            INGOT_CHECK(ingot_shard_codec_decode(&v->r->codec, v->r->m, rows, i, v->buf, v->out,
                                                 f->raw_len, &len));
        }
    }
    return INGOT_OK;
}

/* One sample: a fault is reported (by shard, key, field and offset), not returned. */
static ingot_status_t vf_sample(vf_t *v, uint64_t index)
{
    ingot_shard_rows_t rows;
    ingot_status_t st = ingot_reader_rows(v->r, index, &rows);
    if (st != INGOT_OK) {
        return st; /* a bad row: the manifest itself is broken */
    }
    const ingot_sample_info_t *s = rows.sample;
    ingot_shard_info_t sh;
    INGOT_CHECK(ingot_manifest_shard_get(v->r->m, s->shard, &sh));
    INGOT_CHECK(vf_grow(&v->buf, &v->buf_cap, s->length ? (size_t)s->length : 1));
    uint32_t field = UINT32_MAX;
    st = vf_check(v, &rows, &field);
    v->rep.samples_checked++;
    if (st != INGOT_OK) {
        const ingot_field_info_t *f = field < s->field_count ? &rows.fields[field] : NULL;
        ingot_verify_fault_t fault = {.shard = s->shard,
                                      .shard_path = sh.path,
                                      .index = index,
                                      .key = s->key,
                                      .field = f ? f->name : NULL,
                                      .offset = s->offset + (f ? f->offset : 0),
                                      .status = st};
        v->rep.samples_bad++;
        vf_report(v, &fault);
    }
    return INGOT_OK;
}

ingot_status_t ingot_manifest_verify(ingot_manifest_h m, ingot_verify_cb_t cb, void *arg,
                                     ingot_verify_report_t *report_p)
{
    if (m == NULL) {
        return INGOT_ERR_INVALID_PARAM;
    }
    vf_t v = {.cb = cb, .arg = arg};
    ingot_status_t st = ingot_file_window_init(&v.win);
    if (st == INGOT_OK) {
        st = ingot_shard_reader_create(m, &v.r);
    }
    for (uint32_t row = 0; st == INGOT_OK && row < m->hdr->shard_count; row++) {
        ingot_shard_info_t sh;
        ingot_file_t *src = NULL;
        st = ingot_manifest_shard_get(m, row, &sh);
        if (st == INGOT_OK) {
            vf_shard_begin(&v, row, &sh, &src);
        }
        for (uint64_t i = sh.first_sample; st == INGOT_OK && i < sh.first_sample + sh.sample_count;
             i++) {
            st = vf_sample(&v, i);
        }
        if (st == INGOT_OK) {
            vf_shard_end(&v, row, &sh, src);
        } else if (src != NULL) {
            src->win = NULL;
        }
    }
    ingot_shard_reader_destroy(v.r);
    ingot_file_window_release(&v.win);
    free(v.buf);
    free(v.out);
    if (st != INGOT_OK) {
        return st;
    }
    if (report_p != NULL) {
        *report_p = v.rep;
    }
    return (v.rep.samples_bad || v.rep.shards_bad) ? INGOT_ERR_CORRUPT : INGOT_OK;
}

/*
 * Indexing one tar shard into the builder: members -> samples (adjacent members sharing a key)
 * and fields (hash of the stored bytes, raw length, codec, label from a .cls member).
 */
#include "shard/builder.h"
#include "shard/manifest.h"
#include "base/log.h"
#include "base/status.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

#define ZST_SUFFIX     ".zst"
#define ZST_SUFFIX_LEN 4
#define CLS_FIELD      "cls"
/** Longest text of a .cls label member. */
#define CLS_TEXT_MAX 32
#define DECIMAL_BASE 10

typedef struct idx_shard {
    ingot_file_t src;
    uint32_t row;
    size_t first_sample; /* builder row of this shard's first sample */
    int have_sample;
} idx_shard_t;

typedef struct idx_member {
    const tar_member_t *m;
    const char *key;
    size_t key_len;
    char field[TAR_NAME_MAX + 1];
    size_t field_len;
    ingot_codec_t codec;
} idx_member_t;

#define B_SAMPLE(_b, _i) SHARD_VEC_AT(&(_b)->samples, manifest_sample_t, _i)
#define B_FIELD(_b, _i)  SHARD_VEC_AT(&(_b)->fields, manifest_field_t, _i)
#define B_STR(_b, _ref)  ((const char *)(_b)->strbuf.data + manifest_strref_off(_ref))

/* Row of a field name, added when new. */
static ingot_status_t idx_name(struct ingot_manifest_builder *b, const char *name, size_t len,
                               uint16_t *id_p)
{
    for (size_t i = 0; i < b->names.len; i++) {
        const manifest_name_t *n = SHARD_VEC_AT(&b->names, manifest_name_t, i);
        if (n->len == len && memcmp((char *)b->namebuf.data + n->off, name, len) == 0) {
            *id_p = (uint16_t)i;
            return INGOT_OK;
        }
    }
    if (b->names.len >= MANIFEST_NAMES_MAX) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE, "more than %u distinct field names",
                          MANIFEST_NAMES_MAX);
    }
    uint64_t ref;
    INGOT_CHECK(ingot_builder_str_push(&b->namebuf, name, len, &ref));
    manifest_name_t n = {(uint32_t)manifest_strref_off(ref), (uint32_t)len};
    *id_p = (uint16_t)b->names.len;
    return ingot_shard_vec_push(&b->names, &n, 1, NULL);
}

/* Hash a member's stored bytes and, for zstd, count its decoded length. */
static ingot_status_t idx_hash_member(struct ingot_manifest_builder *b, idx_shard_t *s,
                                      const idx_member_t *im, uint64_t *hash_p, uint64_t *raw_p)
{
    char what[TAR_NAME_MAX + 128];
    snprintf(what, sizeof(what), "%s: member '%s' at offset %" PRIu64, s->src.name, im->m->name,
             im->m->header_off);
    XXH3_state_t st;
    XXH3_INITSTATE(&st);
    XXH3_64bits_reset(&st);
    ingot_shard_zstd_count_begin(&b->zstd);
    for (uint64_t off = 0; off < im->m->size;) {
        size_t n = im->m->size - off < BUILDER_CHUNK ? (size_t)(im->m->size - off) : BUILDER_CHUNK;
        INGOT_CHECK(ingot_file_read(&s->src, im->m->data_off + off, b->chunk, n));
        XXH3_64bits_update(&st, b->chunk, n);
        if (im->codec == INGOT_CODEC_ZSTD) {
            INGOT_CHECK(ingot_shard_zstd_count_feed(&b->zstd, b->chunk, n, b->scratch,
                                                    BUILDER_CHUNK, UINT32_MAX, what));
        }
        off += n;
    }
    *hash_p = XXH3_64bits_digest(&st);
    *raw_p = im->m->size;
    return im->codec == INGOT_CODEC_ZSTD ? ingot_shard_zstd_count_end(&b->zstd, raw_p, what)
                                         : INGOT_OK;
}

/* Label from a .cls member: decimal text, optional trailing whitespace. */
static ingot_status_t idx_label(struct ingot_manifest_builder *b, idx_shard_t *s,
                                const idx_member_t *im, int32_t *label_p)
{
    char text[CLS_TEXT_MAX + 1];
    if (im->m->size == 0 || im->m->size > CLS_TEXT_MAX) {
        goto bad;
    }
    INGOT_CHECK(ingot_file_read(&s->src, im->m->data_off, text, (size_t)im->m->size));
    text[im->m->size] = '\0';
    char *end;
    long v = strtol(text, &end, DECIMAL_BASE);
    while (*end == ' ' || *end == '\n' || *end == '\r' || *end == '\t') {
        end++;
    }
    if (end == text || *end != '\0' || v < 0 || v > INT32_MAX) {
        goto bad;
    }
    *label_p = (int32_t)v;
    return INGOT_OK;
bad:
    return ingot_fail(INGOT_ERR_FORMAT,
                      "%s: offset %" PRIu64 ": key '%.*s': .cls member is not a "
                      "non-negative decimal label",
                      s->src.name, im->m->header_off, (int)im->key_len, im->key);
}

/* Name -> key, field name, codec; *skip_p for members that are not indexed. */
static ingot_status_t idx_classify(struct ingot_manifest_builder *b, idx_shard_t *s,
                                   const tar_member_t *m, idx_member_t *im, int *skip_p)
{
    *skip_p = 0;
    if (m->kind == TAR_KIND_DIR) {
        *skip_p = 1;
        return INGOT_OK;
    }
    if (m->kind == TAR_KIND_SPECIAL) {
        if (b->special == INGOT_TAR_SPECIAL_REJECT) {
            return ingot_fail(INGOT_ERR_FORMAT,
                              "%s: offset %" PRIu64 ": member '%s' is a link, "
                              "device or FIFO (type '%c'), rejected by policy",
                              s->src.name, m->header_off, m->name, m->typeflag);
        }
        ingot_warn("%s: offset %" PRIu64 ": skipping non-regular member '%s' (type '%c')",
                   s->src.name, m->header_off, m->name, m->typeflag);
        *skip_p = 1;
        return INGOT_OK;
    }
    const char *field;
    im->m = m;
    INGOT_CHECK(ingot_tar_name_split(s->src.name, m->header_off, m->name, &im->key, &im->key_len,
                                     &field));
    size_t flen = strlen(field);
    im->codec = INGOT_CODEC_NONE;
    if (flen > ZST_SUFFIX_LEN && strcmp(field + flen - ZST_SUFFIX_LEN, ZST_SUFFIX) == 0) {
        flen -= ZST_SUFFIX_LEN;
        im->codec = INGOT_CODEC_ZSTD;
    }
    memcpy(im->field, field, flen);
    im->field[flen] = '\0';
    im->field_len = flen;
    return INGOT_OK;
}

/* Start a new sample for @p im unless it continues the current one. */
static ingot_status_t idx_sample(struct ingot_manifest_builder *b, idx_shard_t *s,
                                 const idx_member_t *im, uint16_t name)
{
    if (s->have_sample) {
        manifest_sample_t *cur = B_SAMPLE(b, b->samples.len - 1);
        if (manifest_strref_len(cur->key) == im->key_len &&
            memcmp(B_STR(b, cur->key), im->key, im->key_len) == 0) {
            for (size_t f = cur->first_field; f < b->fields.len; f++) {
                if (B_FIELD(b, f)->name == name) {
                    return ingot_fail(INGOT_ERR_FORMAT,
                                      "%s: offset %" PRIu64 ": key '%.*s': "
                                      "field '%s' appears twice",
                                      s->src.name, im->m->header_off, (int)im->key_len, im->key,
                                      im->field);
                }
            }
            return INGOT_OK;
        }
    }
    manifest_sample_t row = {.offset = im->m->data_off,
                             .first_field = b->fields.len,
                             .shard = s->row,
                             .label = INGOT_LABEL_NONE};
    INGOT_CHECK(ingot_builder_str_push(&b->strbuf, im->key, im->key_len, &row.key));
    s->have_sample = 1;
    return ingot_shard_vec_push(&b->samples, &row, 1, NULL);
}

static ingot_status_t idx_member(struct ingot_manifest_builder *b, idx_shard_t *s,
                                 const tar_member_t *m)
{
    idx_member_t im;
    int skip;
    uint16_t name = 0;
    INGOT_CHECK(idx_classify(b, s, m, &im, &skip));
    if (skip) {
        return INGOT_OK;
    }
    INGOT_CHECK(idx_name(b, im.field, im.field_len, &name));
    INGOT_CHECK(idx_sample(b, s, &im, name));
    manifest_sample_t *cur = B_SAMPLE(b, b->samples.len - 1);
    uint64_t rel = m->data_off - cur->offset, hash, raw;
    if (rel > UINT32_MAX || m->size > UINT32_MAX) {
        return ingot_fail(INGOT_ERR_UNSUPPORTED,
                          "%s: offset %" PRIu64 ": key '%.*s': sample or "
                          "member larger than 4 GiB",
                          s->src.name, m->header_off, (int)im.key_len, im.key);
    }
    INGOT_CHECK(idx_hash_member(b, s, &im, &hash, &raw));
    if (im.codec == INGOT_CODEC_NONE && strcmp(im.field, CLS_FIELD) == 0) {
        INGOT_CHECK(idx_label(b, s, &im, &cur->label));
    }
    manifest_field_t f = {.name = name,
                          .codec = (uint8_t)im.codec,
                          .offset = (uint32_t)rel,
                          .stored_len = (uint32_t)m->size,
                          .raw_len = (uint32_t)raw,
                          .hash = hash};
    return ingot_shard_vec_push(&b->fields, &f, 1, NULL);
}

static int idx_key_cmp(const void *a, const void *b_, void *arg)
{
    const struct ingot_manifest_builder *b = arg;
    const manifest_sample_t *x = SHARD_VEC_AT(&b->samples, manifest_sample_t, *(const size_t *)a);
    const manifest_sample_t *y = SHARD_VEC_AT(&b->samples, manifest_sample_t, *(const size_t *)b_);
    uint32_t lx = manifest_strref_len(x->key), ly = manifest_strref_len(y->key);
    int c = memcmp(B_STR(b, x->key), B_STR(b, y->key), lx < ly ? lx : ly);
    return c ? c : (lx > ly) - (lx < ly);
}

/* Keys are unique within a shard: a key that comes back after other keys is an error. */
static ingot_status_t idx_dup_keys(struct ingot_manifest_builder *b, const idx_shard_t *s)
{
    size_t n = b->samples.len - s->first_sample;
    size_t *order = malloc((n ? n : 1) * sizeof(*order));
    if (order == NULL) {
        return ingot_fail(INGOT_ERR_NO_MEMORY, "%s: out of memory", s->src.name);
    }
    for (size_t i = 0; i < n; i++) {
        order[i] = s->first_sample + i;
    }
    qsort_r(order, n, sizeof(*order), idx_key_cmp, b);
    ingot_status_t st = INGOT_OK;
    for (size_t i = 1; i < n && st == INGOT_OK; i++) {
        if (idx_key_cmp(&order[i - 1], &order[i], b) == 0) {
            const manifest_sample_t *x = B_SAMPLE(b, order[i - 1]), *y = B_SAMPLE(b, order[i]);
            st = ingot_fail(INGOT_ERR_FORMAT,
                            "%s: duplicate key '%s': members at data offsets %" PRIu64
                            " and %" PRIu64 " are not adjacent",
                            s->src.name, B_STR(b, x->key),
                            x->offset < y->offset ? x->offset : y->offset,
                            x->offset < y->offset ? y->offset : x->offset);
        }
    }
    free(order);
    return st;
}

static ingot_status_t idx_members(struct ingot_manifest_builder *b, idx_shard_t *s)
{
    tar_reader_t r;
    tar_member_t *m = malloc(sizeof(*m));
    ingot_status_t st = m ? ingot_tar_reader_init(&r, &s->src) : INGOT_ERR_NO_MEMORY;
    if (st != INGOT_OK) {
        free(m);
        return st;
    }
    for (int end = 0; st == INGOT_OK;) {
        st = ingot_tar_reader_next(&r, m, &end);
        if (st != INGOT_OK || end) {
            break;
        }
        st = idx_member(b, s, m);
    }
    ingot_tar_reader_release(&r);
    free(m);
    return st;
}

static ingot_status_t idx_shard(struct ingot_manifest_builder *b, idx_shard_t *s, const char *rel,
                                const char *etag)
{
    manifest_shard_t row = {.first_sample = b->samples.len};
    ingot_file_window_attach(&b->win, &s->src);
    INGOT_CHECK(idx_members(b, s));
    INGOT_CHECK(idx_dup_keys(b, s));
    for (size_t i = s->first_sample; i < b->samples.len; i++) { /* label file: no .cls only */
        manifest_sample_t *sm = B_SAMPLE(b, i);
        if (sm->label == INGOT_LABEL_NONE) {
            sm->label = ingot_shard_labels_find(&b->labels, B_STR(b, sm->key),
                                                manifest_strref_len(sm->key));
        }
    }
    INGOT_CHECK(ingot_file_window_finish(&s->src, &row.hash));
    row.size = s->src.size;
    row.sample_count = b->samples.len - s->first_sample;
    if (row.sample_count == 0) {
        ingot_warn("%s: shard holds no samples", s->src.name);
    }
    INGOT_CHECK(ingot_builder_str_push(&b->strbuf, rel, strlen(rel), &row.path));
    if (etag != NULL) {
        INGOT_CHECK(ingot_builder_str_push(&b->strbuf, etag, strlen(etag), &row.etag));
        b->etags++;
    }
    return ingot_shard_vec_push(&b->shards, &row, 1, NULL);
}

/* The builder's tables back to their lengths in @p keep (a shard that failed leaves nothing). */
static void idx_rollback(struct ingot_manifest_builder *b, const size_t keep[5])
{
    b->samples.len = keep[0];
    b->fields.len = keep[1];
    b->names.len = keep[2];
    b->namebuf.len = keep[3];
    b->strbuf.len = keep[4];
}

ingot_status_t ingot_manifest_builder_add_source(ingot_manifest_builder_h b, ingot_file_t *src,
                                                 const char *rel, const char *etag)
{
    if (b == NULL || src == NULL || rel == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_manifest_builder_add_source: NULL");
    }
    if (b->shards.len >= UINT32_MAX) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE, "%s: too many shards", src->name);
    }
    if (ingot_tar_path_is_safe(rel, strlen(rel)) != 0) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: name '%s' is absolute or contains '..' (shard names are "
                          "relative to the manifest)",
                          src->name, rel);
    }
    size_t keep[] = {b->samples.len, b->fields.len, b->names.len, b->namebuf.len, b->strbuf.len};
    size_t etags = b->etags;
    idx_shard_t s = {.src = *src, .row = (uint32_t)b->shards.len, .first_sample = b->samples.len};
    ingot_status_t st = idx_shard(b, &s, rel, etag);
    if (st != INGOT_OK) {
        idx_rollback(b, keep);
        b->etags = etags;
    }
    return st;
}

ingot_status_t ingot_manifest_builder_add_shard(ingot_manifest_builder_h b, const char *path)
{
    if (b == NULL || path == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_manifest_builder_add_shard: NULL");
    }
    if (b->shards.len >= UINT32_MAX) {
        return ingot_fail(INGOT_ERR_NO_RESOURCE, "%s: too many shards", path);
    }
    size_t keep[] = {b->samples.len, b->fields.len, b->names.len, b->namebuf.len, b->strbuf.len};
    idx_shard_t s = {.row = (uint32_t)b->shards.len, .first_sample = b->samples.len};
    char *rel = NULL;
    ingot_status_t st = ingot_bld_relpath_get(b, path, &rel);
    if (st == INGOT_OK && (st = ingot_file_open(path, &s.src)) == INGOT_OK) {
        st = idx_shard(b, &s, rel, NULL);
        ingot_file_close(&s.src);
    }
    free(rel);
    if (st != INGOT_OK) { /* leave the builder as it was */
        idx_rollback(b, keep);
    }
    return st;
}

/*
 * Manifest validation: the header (magic, version, layout, checksum, maxima), and every row of
 * the shard, sample and field tables and the string table (references, ranges, contiguity,
 * duplicate keys), all at open (full) or each row when it is looked up (lazy). Every error names
 * the manifest, the table and the row.
 */
#include "shard/manifest.h"
#include "shard/tar.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/status.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static ingot_status_t mf_bad(const struct ingot_manifest *m, const char *what, uint64_t row,
                             const char *why)
{
    return ingot_fail(INGOT_ERR_FORMAT, "%s: %s row %" PRIu64 ": %s", m->name, what, row, why);
}

/* 0 when @p ref names a NUL-terminated string inside the string table. */
int ingot_manifest_strref_ok(const struct ingot_manifest *m, uint64_t ref, int allow_empty)
{
    uint64_t off = manifest_strref_off(ref), len = manifest_strref_len(ref);
    uint64_t size = m->hdr->strtab_size;
    if ((len == 0 && !allow_empty) || off >= size || len >= size - off) {
        return -1;
    }
    return m->strtab[off + len] == '\0' ? 0 : -1;
}

/* ---------------------------------------------------------------- header */

/* Check that section [off, off + count * esize) starts at *pos and advance *pos (aligned). */
static int mf_section(uint64_t off, uint64_t count, uint64_t esize, uint64_t file_size,
                      uint64_t *pos)
{
    if (off != *pos || count > (file_size - off) / esize) {
        return -1;
    }
    uint64_t end = off + count * esize;
    *pos = (end + MANIFEST_ALIGN - 1) & ~(uint64_t)(MANIFEST_ALIGN - 1);
    return *pos > file_size ? -1 : 0;
}

static ingot_status_t mf_check_layout(struct ingot_manifest *m)
{
    const manifest_header_t *h = m->hdr;
    uint64_t pos = h->header_size; /* checked against the version by mf_check_version() */
    if (h->file_size != m->len ||
        mf_section(h->shard_off, h->shard_count, sizeof(manifest_shard_t), m->len, &pos) ||
        mf_section(h->name_off, h->name_count, sizeof(manifest_name_t), m->len, &pos) ||
        mf_section(h->sample_off, h->sample_count, sizeof(manifest_sample_t), m->len, &pos) ||
        mf_section(h->field_off, h->field_count, sizeof(manifest_field_t), m->len, &pos) ||
        h->strtab_off != pos || h->strtab_size == 0 || h->strtab_off + h->strtab_size != m->len) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: version %u header: section offsets, counts or "
                          "sizes are inconsistent with the file size %zu",
                          m->name, h->version, m->len);
    }
    if (h->name_count > MANIFEST_NAMES_MAX || h->shard_count > UINT32_MAX) {
        return ingot_fail(INGOT_ERR_FORMAT, "%s: header: too many shards or field names", m->name);
    }
    m->shards = (const manifest_shard_t *)(m->base + h->shard_off);
    m->names = (const manifest_name_t *)(m->base + h->name_off);
    m->samples = (const manifest_sample_t *)(m->base + h->sample_off);
    m->fields = (const manifest_field_t *)(m->base + h->field_off);
    m->strtab = (const char *)(m->base + h->strtab_off);
    if (m->strtab[h->strtab_size - 1] != '\0') {
        return ingot_fail(INGOT_ERR_FORMAT, "%s: string table is not NUL-terminated", m->name);
    }
    if ((h->flags & MANIFEST_FLAG_DICT) && ingot_manifest_strref_ok(m, h->dict_path, 0) != 0) {
        return ingot_fail(INGOT_ERR_FORMAT, "%s: header: bad dictionary path", m->name);
    }
    return INGOT_OK;
}

uint64_t ingot_manifest_header_hash(const manifest_header_t *hdr)
{
    manifest_header_v2_t copy; /* the largest header this build reads */
    size_t size = hdr->header_size < sizeof(copy) ? hdr->header_size : sizeof(copy);
    memcpy(&copy, hdr, size);
    copy.base.header_hash = 0;
    return ingot_hash64(&copy, size);
}

/* The version is one this build reads and the header is laid out as that version's. */
static ingot_status_t mf_check_version(const struct ingot_manifest *m)
{
    const manifest_header_t *h = m->hdr;
    uint32_t want = manifest_header_size(h->version);
    if (want == 0) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: unsupported manifest version %u (this build "
                          "reads versions %u to %u)",
                          m->name, h->version, MANIFEST_VERSION_1, MANIFEST_VERSION_MAX);
    }
    if (h->header_size != want) {
        char layout[40] = "not the layout of any version";
        for (uint32_t v = MANIFEST_VERSION_1; v <= MANIFEST_VERSION_MAX; v++) {
            if (h->header_size == manifest_header_size(v)) {
                snprintf(layout, sizeof(layout), "laid out as version %u", v);
                break; /* versions 2 and 3 share a layout: the first names it */
            }
        }
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: claims manifest version %u but its header is %u "
                          "bytes, not the %u of a version-%u header (%s)",
                          m->name, h->version, h->header_size, want, h->version, layout);
    }
    if (m->len < want) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: %zu bytes is too short for a version-%u "
                          "manifest header",
                          m->name, m->len, h->version);
    }
    return INGOT_OK;
}

/* Version 2: keep the header's maxima; each sample row is checked against them. */
static ingot_status_t mf_read_maxima(struct ingot_manifest *m)
{
    if (m->hdr->version == MANIFEST_VERSION_1) {
        return INGOT_OK;
    }
    const manifest_header_ext_t *x = &((const manifest_header_v2_t *)m->hdr)->ext;
    if (x->reserved != 0 || (m->hdr->sample_count > 0 && x->sample_fields_max == 0)) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: version %u header: bad sample maxima (fields %u, "
                          "reserved %u)",
                          m->name, m->hdr->version, x->sample_fields_max, x->reserved);
    }
    m->max = (ingot_manifest_maxima_t){.raw_bytes = x->sample_raw_max,
                                       .stored_bytes = x->sample_stored_max,
                                       .fields = x->sample_fields_max};
    m->has_max = 1;
    return INGOT_OK;
}

ingot_status_t ingot_manifest_check_header(struct ingot_manifest *m)
{
    if (m->len < sizeof(manifest_header_t)) {
        return ingot_fail(INGOT_ERR_FORMAT, "%s: %zu bytes is too short for a manifest header",
                          m->name, m->len);
    }
    m->hdr = (const manifest_header_t *)m->base;
    if (memcmp(m->hdr->magic, MANIFEST_MAGIC, MANIFEST_MAGIC_LEN) != 0) {
        return ingot_fail(INGOT_ERR_FORMAT, "%s: wrong magic (not an ingot manifest)", m->name);
    }
    INGOT_CHECK(mf_check_version(m));
    if (ingot_manifest_header_hash(m->hdr) != m->hdr->header_hash) {
        return ingot_fail(INGOT_ERR_CORRUPT, "%s: header checksum mismatch", m->name);
    }
    INGOT_CHECK(mf_check_layout(m));
    return mf_read_maxima(m);
}

/* ---------------------------------------------------------------- rows */

ingot_status_t ingot_manifest_check_shard(const struct ingot_manifest *m, uint64_t row)
{
    const manifest_shard_t *s = &m->shards[row];
    if (ingot_manifest_strref_ok(m, s->path, 0) != 0) {
        return mf_bad(m, "shard", row, "bad path reference");
    }
    const char *path = manifest_str(m, s->path);
    if (ingot_tar_path_is_safe(path, manifest_strref_len(s->path)) != 0 ||
        strlen(path) != manifest_strref_len(s->path)) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: shard row %" PRIu64 ": path '%s' is absolute or "
                          "contains '..' (path traversal)",
                          m->name, row, path);
    }
    if (s->first_sample > m->hdr->sample_count || s->sample_count >= UINT32_MAX ||
        s->sample_count > m->hdr->sample_count - s->first_sample) {
        return mf_bad(m, "shard", row, "sample range beyond the sample table");
    }
    if (m->hdr->version >= MANIFEST_VERSION_ETAG && s->etag != 0 &&
        (ingot_manifest_strref_ok(m, s->etag, 0) != 0 ||
         strlen(manifest_str(m, s->etag)) != manifest_strref_len(s->etag))) {
        return mf_bad(m, "shard", row, "bad ETag reference");
    }
    return INGOT_OK;
}

static uint64_t mf_field_end(const struct ingot_manifest *m, uint64_t index)
{
    return index + 1 < m->hdr->sample_count ? m->samples[index + 1].first_field
                                            : m->hdr->field_count;
}

/* Check field @p row of a sample; advance *end_p past its stored bytes, add its raw length. */
static ingot_status_t mf_check_field(const struct ingot_manifest *m, uint64_t index,
                                     const char *key, uint64_t row, uint64_t *end_p,
                                     uint64_t *raw_p)
{
    const manifest_field_t *f = &m->fields[row];
    const char *why = NULL;
    if (f->name >= m->hdr->name_count) {
        why = "field name row out of range";
    } else if (f->codec > INGOT_CODEC_ZSTD) {
        why = "unknown codec";
    } else if (f->codec == INGOT_CODEC_NONE && f->raw_len != f->stored_len) {
        why = "raw length differs from stored length of an uncompressed field";
    } else if ((uint64_t)f->offset < *end_p) {
        why = "field overlaps the previous one";
    }
    if (why != NULL) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: sample row %" PRIu64 " (key '%s'): field row %" PRIu64 ": %s",
                          m->name, index, key, row, why);
    }
    *end_p = (uint64_t)f->offset + f->stored_len;
    *raw_p += f->raw_len;
    return INGOT_OK;
}

/* Version 2: a sample larger than the header's maxima would overrun buffers sized by them. */
static ingot_status_t mf_check_within_max(const struct ingot_manifest *m, uint64_t index,
                                          const char *key, uint64_t stored, uint64_t raw,
                                          uint64_t fields)
{
    if (!m->has_max ||
        (stored <= m->max.stored_bytes && raw <= m->max.raw_bytes && fields <= m->max.fields)) {
        return INGOT_OK;
    }
    return ingot_fail(INGOT_ERR_FORMAT,
                      "%s: sample row %" PRIu64 " (key '%s'): %" PRIu64 " stored "
                      "bytes, %" PRIu64 " raw bytes, %" PRIu64 " fields exceed the header's maxima "
                      "(%" PRIu64 ", %" PRIu64 ", %u)",
                      m->name, index, key, stored, raw, fields, m->max.stored_bytes,
                      m->max.raw_bytes, m->max.fields);
}

/* Check sample row @p index and fill @p info; *raw_p (may be NULL): its decoded bytes. */
ingot_status_t ingot_manifest_check_sample(const struct ingot_manifest *m, uint64_t index,
                                           ingot_sample_info_t *info, uint64_t *raw_p)
{
    const manifest_sample_t *s = &m->samples[index];
    if (ingot_manifest_strref_ok(m, s->key, 0) != 0) {
        return mf_bad(m, "sample", index, "bad key reference");
    }
    const char *key = manifest_str(m, s->key);
    uint64_t ff = s->first_field, fe = mf_field_end(m, index);
    const manifest_shard_t *sh = s->shard < m->hdr->shard_count ? &m->shards[s->shard] : NULL;
    if (sh == NULL || index < sh->first_sample || index - sh->first_sample >= sh->sample_count) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: sample row %" PRIu64 " (key '%s'): shard %u out "
                          "of range or not holding this row",
                          m->name, index, key, s->shard);
    }
    /* Lazily opened manifests check rows on use: the shard row this sample names, too (a
     * sample that passes must name a usable shard; found by fuzz_manifest). A full open has
     * checked every shard row already. */
    if (m->lazy) {
        INGOT_CHECK(ingot_manifest_check_shard(m, s->shard));
    }
    if (ff >= fe || fe > m->hdr->field_count || fe - ff > UINT32_MAX) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: sample row %" PRIu64 " (key '%s'): field rows [%" PRIu64 ", %" PRIu64
                          ") out of range",
                          m->name, index, key, ff, fe);
    }
    uint64_t end = 0, raw = 0;
    for (uint64_t r = ff; r < fe; r++) {
        INGOT_CHECK(mf_check_field(m, index, key, r, &end, &raw));
    }
    if (s->offset > sh->size || end > sh->size - s->offset) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: sample row %" PRIu64 " (key '%s'): bytes [%" PRIu64 ", +%" PRIu64
                          ") lie beyond shard %u's size %" PRIu64,
                          m->name, index, key, s->offset, end, s->shard, sh->size);
    }
    INGOT_CHECK(mf_check_within_max(m, index, key, end, raw, fe - ff));
    if (raw_p != NULL) {
        *raw_p = raw;
    }
    ingot_manifest_sample_fill(m, index, info);
    return INGOT_OK;
}

void ingot_manifest_sample_fill(const struct ingot_manifest *m, uint64_t index,
                                ingot_sample_info_t *info)
{
    const manifest_sample_t *s = &m->samples[index];
    uint64_t ff = s->first_field, fe = mf_field_end(m, index);
    const manifest_field_t *last = &m->fields[fe - 1]; /* fields in offset order: it ends last */
    *info = (ingot_sample_info_t){.index = index,
                                  .shard = s->shard,
                                  .offset = s->offset,
                                  .length = (uint64_t)last->offset + last->stored_len,
                                  .key = manifest_str(m, s->key),
                                  .label = s->label,
                                  .first_field = ff,
                                  .field_count = (uint32_t)(fe - ff)};
}

ingot_status_t ingot_manifest_check_names(const struct ingot_manifest *m)
{
    for (uint64_t i = 0; i < m->hdr->name_count; i++) {
        uint64_t ref = manifest_strref(m->names[i].off, m->names[i].len);
        if (m->names[i].len > MANIFEST_STRLEN_MAX || ingot_manifest_strref_ok(m, ref, 0) != 0) {
            return mf_bad(m, "field name", i, "bad string reference");
        }
    }
    return INGOT_OK;
}

/* ---------------------------------------------------------------- full validation */

/* Fail when two samples of shard @p row share a key (open addressing on key hashes). */
static ingot_status_t mf_check_dup_keys(const struct ingot_manifest *m, uint64_t row,
                                        uint32_t *table, uint64_t cap)
{
    const manifest_shard_t *sh = &m->shards[row];
    memset(table, 0, cap * sizeof(*table));
    for (uint64_t i = sh->first_sample; i < sh->first_sample + sh->sample_count; i++) {
        const char *key = manifest_str(m, m->samples[i].key);
        size_t len = manifest_strref_len(m->samples[i].key);
        uint64_t slot = ingot_hash64(key, len) & (cap - 1);
        for (; table[slot] != 0; slot = (slot + 1) & (cap - 1)) {
            uint64_t other = m->samples[sh->first_sample + table[slot] - 1].key;
            if (manifest_strref_len(other) == len &&
                memcmp(manifest_str(m, other), key, len) == 0) {
                return ingot_fail(INGOT_ERR_FORMAT,
                                  "%s: shard %" PRIu64 " ('%s'): duplicate key "
                                  "'%s' at sample rows %" PRIu64 " and %" PRIu64,
                                  m->name, row, manifest_str(m, sh->path), key,
                                  sh->first_sample + table[slot] - 1, i);
            }
        }
        table[slot] = (uint32_t)(i - sh->first_sample + 1);
    }
    return INGOT_OK;
}

static ingot_status_t mf_check_shards(const struct ingot_manifest *m)
{
    uint64_t next = 0, largest = 0;
    for (uint64_t i = 0; i < m->hdr->shard_count; i++) {
        INGOT_CHECK(ingot_manifest_check_shard(m, i));
        if (m->shards[i].first_sample != next) {
            return mf_bad(m, "shard", i, "sample ranges of shards are not contiguous");
        }
        next += m->shards[i].sample_count;
        largest = m->shards[i].sample_count > largest ? m->shards[i].sample_count : largest;
    }
    if (next != m->hdr->sample_count) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: shards hold %" PRIu64 " samples, header says %" PRIu64, m->name,
                          next, m->hdr->sample_count);
    }
    uint64_t cap = 1;
    while (cap < 2 * largest) {
        cap <<= 1;
    }
    uint32_t *table = ingot_calloc(cap, sizeof(*table), "manifest key table");
    if (table == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    ingot_status_t st = INGOT_OK;
    for (uint64_t i = 0; i < m->hdr->shard_count && st == INGOT_OK; i++) {
        st = mf_check_dup_keys(m, i, table, cap);
    }
    free(table);
    return st;
}

/* Check every sample row and find the largest sample: one pass over the sample table. */
ingot_status_t ingot_manifest_scan_samples(const struct ingot_manifest *m,
                                           ingot_manifest_maxima_t *max)
{
    ingot_sample_info_t info;
    *max = (ingot_manifest_maxima_t){0};
    for (uint64_t i = 0; i < m->hdr->sample_count; i++) {
        uint64_t raw;
        INGOT_CHECK(ingot_manifest_check_sample(m, i, &info, &raw));
        max->raw_bytes = raw > max->raw_bytes ? raw : max->raw_bytes;
        max->stored_bytes = info.length > max->stored_bytes ? info.length : max->stored_bytes;
        max->fields = info.field_count > max->fields ? info.field_count : max->fields;
    }
    return INGOT_OK;
}

ingot_status_t ingot_manifest_check_all(struct ingot_manifest *m)
{
    uint64_t hs = m->hdr->header_size;
    if (ingot_hash64(m->base + hs, m->len - hs) != m->hdr->body_hash) {
        return ingot_fail(INGOT_ERR_CORRUPT,
                          "%s: checksum of the tables mismatches the header "
                          "(file corrupt)",
                          m->name);
    }
    ingot_manifest_maxima_t max;
    INGOT_CHECK(ingot_manifest_scan_samples(m, &max));
    /* Every row is within the header's maxima already; they must also be attained. */
    if (m->has_max && (max.stored_bytes != m->max.stored_bytes ||
                       max.raw_bytes != m->max.raw_bytes || max.fields != m->max.fields)) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "%s: version %u header: sample maxima (stored %" PRIu64 ", raw %" PRIu64
                          ", fields %u) differ from the tables' (%" PRIu64 ", %" PRIu64 ", %u)",
                          m->name, m->hdr->version, m->max.stored_bytes, m->max.raw_bytes,
                          m->max.fields, max.stored_bytes, max.raw_bytes, max.fields);
    }
    m->max = max; /* version 1: kept, so nobody scans again */
    m->has_max = 1;
    return mf_check_shards(m);
}

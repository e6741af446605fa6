/*
 * Writing the manifest: tables streamed to a temp file while their hash is computed, header
 * last, then fsync and rename so readers see the old file or the new one, never a torn one.
 */
#include "shard/replace.h"
#include "shard/builder.h"
#include "shard/manifest.h"
#include "base/log.h"
#include "base/status.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#define XXH_STATIC_LINKING_ONLY /* XXH3_state_t on the stack */
#include <xxhash.h>

/** Rows rebased per write when string references move. */
#define WRITE_BATCH 4096

typedef struct mw {
    int fd;
    const char *path;
    XXH3_state_t hash;
} mw_t;

static ingot_status_t mw_put(mw_t *w, const void *p, size_t n)
{
    XXH3_64bits_update(&w->hash, p, n);
    return ingot_shard_write_all(w->fd, w->path, p, n);
}

/* Rebase a strref that points into strbuf so it points into the final string table. */
static uint64_t mw_rebase(uint64_t ref, uint64_t base)
{
    return manifest_strref(manifest_strref_off(ref) + base, manifest_strref_len(ref));
}

static ingot_status_t mw_shards(mw_t *w, const struct ingot_manifest_builder *b, uint64_t base)
{
    for (size_t i = 0; i < b->shards.len; i++) {
        manifest_shard_t s = *SHARD_VEC_AT(&b->shards, manifest_shard_t, i);
        s.path = mw_rebase(s.path, base);
        s.etag = s.etag != 0 ? mw_rebase(s.etag, base) : 0;
        INGOT_CHECK(mw_put(w, &s, sizeof(s)));
    }
    return INGOT_OK;
}

static ingot_status_t mw_samples(mw_t *w, const struct ingot_manifest_builder *b, uint64_t base)
{
    manifest_sample_t batch[WRITE_BATCH];
    for (size_t i = 0; i < b->samples.len; i += WRITE_BATCH) {
        size_t n = b->samples.len - i < WRITE_BATCH ? b->samples.len - i : WRITE_BATCH;
        memcpy(batch, SHARD_VEC_AT(&b->samples, manifest_sample_t, i), n * sizeof(*batch));
        for (size_t j = 0; j < n; j++) {
            batch[j].key = mw_rebase(batch[j].key, base);
        }
        INGOT_CHECK(mw_put(w, batch, n * sizeof(*batch)));
    }
    return INGOT_OK;
}

/* The largest sample (version-2 header): one pass over the builder's sample and field rows. */
static void mw_maxima(const struct ingot_manifest_builder *b, manifest_header_ext_t *x)
{
    memset(x, 0, sizeof(*x));
    for (size_t i = 0; i < b->samples.len; i++) {
        uint64_t ff = SHARD_VEC_AT(&b->samples, manifest_sample_t, i)->first_field;
        uint64_t fe = i + 1 < b->samples.len
                          ? SHARD_VEC_AT(&b->samples, manifest_sample_t, i + 1)->first_field
                          : b->fields.len;
        uint64_t raw = 0, end = 0;
        for (uint64_t r = ff; r < fe; r++) {
            const manifest_field_t *f = SHARD_VEC_AT(&b->fields, manifest_field_t, r);
            raw += f->raw_len;
            end = (uint64_t)f->offset + f->stored_len; /* fields are in offset order */
        }
        x->sample_raw_max = raw > x->sample_raw_max ? raw : x->sample_raw_max;
        x->sample_stored_max = end > x->sample_stored_max ? end : x->sample_stored_max;
        x->sample_fields_max = fe - ff > x->sample_fields_max ? (uint32_t)(fe - ff)
                                                              : x->sample_fields_max;
    }
}

static ingot_status_t mw_header(const struct ingot_manifest_builder *b, manifest_header_v2_t *hv,
                                uint64_t *dict_ref_p)
{
    manifest_header_t *h = &hv->base;
    memset(hv, 0, sizeof(*hv));
    mw_maxima(b, &hv->ext);
    memcpy(h->magic, MANIFEST_MAGIC, MANIFEST_MAGIC_LEN);
    h->version = b->etags > 0 ? MANIFEST_VERSION_ETAG : MANIFEST_VERSION;
    h->header_size = sizeof(*hv);
    h->shard_count = b->shards.len;
    h->name_count = b->names.len;
    h->sample_count = b->samples.len;
    h->field_count = b->fields.len;
    h->shard_off = sizeof(*hv);
    h->name_off = h->shard_off + h->shard_count * sizeof(manifest_shard_t);
    h->sample_off = h->name_off + h->name_count * sizeof(manifest_name_t);
    h->field_off = h->sample_off + h->sample_count * sizeof(manifest_sample_t);
    h->strtab_off = h->field_off + h->field_count * sizeof(manifest_field_t);
    h->strtab_size = b->namebuf.len + b->strbuf.len + (b->dict_rel ? strlen(b->dict_rel) + 1 : 0);
    h->file_size = h->strtab_off + h->strtab_size;
    h->dict_hash = b->dict_hash;
    if (b->dict_rel != NULL) {
        h->flags |= MANIFEST_FLAG_DICT;
        *dict_ref_p = manifest_strref(b->namebuf.len + b->strbuf.len,
                                      (uint32_t)strlen(b->dict_rel));
        h->dict_path = *dict_ref_p;
    }
    return h->strtab_size > MANIFEST_STROFF_MAX
               ? ingot_fail(INGOT_ERR_NO_RESOURCE, "%s: string table too large", b->path)
               : INGOT_OK;
}

static ingot_status_t mw_body(mw_t *w, const struct ingot_manifest_builder *b)
{
    uint64_t base = b->namebuf.len;
    INGOT_CHECK(mw_shards(w, b, base));
    INGOT_CHECK(mw_put(w, b->names.data, b->names.len * sizeof(manifest_name_t)));
    INGOT_CHECK(mw_samples(w, b, base));
    INGOT_CHECK(mw_put(w, b->fields.data, b->fields.len * sizeof(manifest_field_t)));
    INGOT_CHECK(mw_put(w, b->namebuf.data, b->namebuf.len));
    INGOT_CHECK(mw_put(w, b->strbuf.data, b->strbuf.len));
    return b->dict_rel ? mw_put(w, b->dict_rel, strlen(b->dict_rel) + 1) : INGOT_OK;
}

static ingot_status_t mw_file(mw_t *w, const struct ingot_manifest_builder *b)
{
    manifest_header_v2_t h;
    uint64_t dict_ref = 0;
    INGOT_CHECK(mw_header(b, &h, &dict_ref));
    if (lseek(w->fd, sizeof(h), SEEK_SET) < 0) {
        return ingot_fail(INGOT_ERR_IO, "%s: seek failed: %s", w->path, strerror(errno));
    }
    XXH3_64bits_reset(&w->hash);
    INGOT_CHECK(mw_body(w, b));
    h.base.body_hash = XXH3_64bits_digest(&w->hash);
    h.base.header_hash = ingot_manifest_header_hash(&h.base);
    if (pwrite(w->fd, &h, sizeof(h), 0) != (ssize_t)sizeof(h)) {
        return ingot_fail(INGOT_ERR_IO, "%s: header write failed: %s", w->path, strerror(errno));
    }
    return INGOT_OK;
}

typedef struct mw_arg {
    const struct ingot_manifest_builder *b;
} mw_arg_t;

static ingot_status_t mw_fill(int fd, const char *tmp, void *arg)
{
    mw_t w = {.fd = fd, .path = tmp};
    XXH3_INITSTATE(&w.hash);
    return mw_file(&w, ((mw_arg_t *)arg)->b);
}


ingot_status_t ingot_manifest_builder_write(ingot_manifest_builder_h b)
{
    if (b == NULL || b->samples.len == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "%s: no samples to write",
                          b ? b->path : "manifest");
    }
    mw_arg_t arg = {.b = b};
    return ingot_shard_replace_file(b->path, mw_fill, &arg);
}

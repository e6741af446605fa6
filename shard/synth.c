/*
 * A manifest described, not built: N samples of a size (or a size range) in tar shards of a size,
 * laid out as ingot-manifest lays out one file per sample (a 512-byte header, the data padded to
 * 512 bytes, two zero blocks at the end), held in memory with no byte behind it. The planning
 * code (the order, the peer cache's placement, the disk tier's pieces and homes) reads only the
 * tables, so a simulator runs it on a dataset it never writes (ingot-sim --samples).
 */
#include "shard/synth.h"
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

#define SYNTH_FIELD     "bin"
#define SYNTH_KEY_FMT   "%013" PRIu64 /* samples < 2^40: 13 digits */
#define SYNTH_KEY_LEN   13
#define SYNTH_SHARD_FMT "shard-%010" PRIu32 ".tar"
#define SYNTH_SHARD_LEN 20

static uint64_t synth_round(uint64_t n)
{
    return (n + TAR_BLOCK - 1) / TAR_BLOCK * TAR_BLOCK;
}

/* Sample @p i's size: the fixed size, or a size drawn from [min, max] by a hash of (seed, i). */
uint64_t ingot_manifest_synth_size(const ingot_manifest_synth_t *p, uint64_t i)
{
    if (p->sample_max <= p->sample_min) {
        return p->sample_min;
    }
    uint64_t x = XXH3_64bits_withSeed(&i, sizeof(i), p->seed);
    return p->sample_min + x % (p->sample_max - p->sample_min + 1);
}

ingot_status_t ingot_manifest_synth_check(const ingot_manifest_synth_t *p)
{
    if (p->samples == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "dataset: --samples is 0");
    }
    if (p->sample_min == 0 || p->sample_max < p->sample_min || p->sample_max > UINT32_MAX) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "dataset: --sample-size %" PRIu64 "-%" PRIu64 " is not a size range "
                          "of 1 byte to 4 GiB",
                          p->sample_min, p->sample_max);
    }
    if (p->samples > (UINT64_C(1) << 40)) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "dataset: --samples %" PRIu64 " is too many",
                          p->samples);
    }
    return INGOT_OK;
}

/* The shards: how many samples each holds (as many as fit in shard_bytes, at least one). */
static uint64_t synth_layout(const ingot_manifest_synth_t *p, uint64_t *first, uint64_t cap)
{
    uint64_t shards = 0, size = 2 * TAR_BLOCK;
    for (uint64_t i = 0; i < p->samples; i++) {
        uint64_t member = TAR_BLOCK + synth_round(ingot_manifest_synth_size(p, i));
        if (i == 0 || (size + member > p->shard_bytes && size > 2 * TAR_BLOCK)) {
            if (first != NULL && shards < cap) {
                first[shards] = i;
            }
            shards++;
            size = 2 * TAR_BLOCK;
        }
        size += member;
    }
    return shards;
}

typedef struct synth_out {
    uint8_t *buf;
    manifest_header_v2_t *h;
    manifest_shard_t *shards;
    manifest_sample_t *samples;
    manifest_field_t *fields;
    char *strtab;
} synth_out_t;

/* Fill the tables: shard rows, then each shard's samples in tar order. */
static void synth_fill(const ingot_manifest_synth_t *p, const uint64_t *first, uint64_t nshards,
                       synth_out_t *o)
{
    uint64_t str = sizeof(SYNTH_FIELD); /* the field name first */
    memcpy(o->strtab, SYNTH_FIELD, sizeof(SYNTH_FIELD));
    uint64_t stored_max = 0;
    for (uint64_t s = 0; s < nshards; s++) {
        uint64_t end = s + 1 < nshards ? first[s + 1] : p->samples, at = 0;
        manifest_shard_t *row = &o->shards[s];
        char name[32];
        snprintf(name, sizeof(name), SYNTH_SHARD_FMT, (uint32_t)s);
        memcpy(o->strtab + str, name, SYNTH_SHARD_LEN + 1);
        *row = (manifest_shard_t){.path = manifest_strref(str, SYNTH_SHARD_LEN),
                                  .hash = XXH3_64bits_withSeed(&s, sizeof(s), p->seed),
                                  .first_sample = first[s],
                                  .sample_count = end - first[s]};
        str += SYNTH_SHARD_LEN + 1;
        for (uint64_t i = first[s]; i < end; i++) {
            uint64_t len = ingot_manifest_synth_size(p, i);
            char key[32];
            snprintf(key, sizeof(key), SYNTH_KEY_FMT, i);
            memcpy(o->strtab + str, key, SYNTH_KEY_LEN + 1);
            o->samples[i] = (manifest_sample_t){.offset = at + TAR_BLOCK,
                                                .first_field = i,
                                                .key = manifest_strref(str, SYNTH_KEY_LEN),
                                                .shard = (uint32_t)s,
                                                .label = (int32_t)(i % 1000)};
            o->fields[i] = (manifest_field_t){
                .codec = INGOT_CODEC_NONE,
                .stored_len = (uint32_t)len,
                .raw_len = (uint32_t)len,
                .hash = XXH3_64bits_withSeed(&i, sizeof(i), ~p->seed)};
            str += SYNTH_KEY_LEN + 1;
            at += TAR_BLOCK + synth_round(len);
            stored_max = len > stored_max ? len : stored_max;
        }
        row->size = at + 2 * TAR_BLOCK;
    }
    o->h->ext = (manifest_header_ext_t){
        .sample_raw_max = stored_max, .sample_stored_max = stored_max, .sample_fields_max = 1};
}

ingot_status_t ingot_manifest_synth(const ingot_manifest_synth_t *p, ingot_manifest_h *manifest_p)
{
    INGOT_CHECK(ingot_manifest_synth_check(p));
    uint64_t nshards = synth_layout(p, NULL, 0);
    if (nshards >= UINT32_MAX) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "dataset: %" PRIu64 " shards of --shard-size %" PRIu64 " bytes: too many",
                          nshards, p->shard_bytes);
    }
    uint64_t *first = ingot_calloc(nshards, sizeof(*first), "synthetic manifest");
    if (first == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    synth_layout(p, first, nshards);
    uint64_t strtab = sizeof(SYNTH_FIELD) + nshards * (SYNTH_SHARD_LEN + 1) +
                      p->samples * (SYNTH_KEY_LEN + 1);
    uint64_t off_shards = sizeof(manifest_header_v2_t);
    uint64_t off_names = off_shards + nshards * sizeof(manifest_shard_t);
    uint64_t off_samples = off_names + sizeof(manifest_name_t);
    uint64_t off_fields = off_samples + p->samples * sizeof(manifest_sample_t);
    uint64_t off_str = off_fields + p->samples * sizeof(manifest_field_t);
    uint64_t len = off_str + (strtab + MANIFEST_ALIGN - 1) / MANIFEST_ALIGN * MANIFEST_ALIGN;
    synth_out_t o = {.buf = ingot_calloc(1, len, "synthetic manifest")};
    if (o.buf == NULL) {
        free(first);
        return INGOT_ERR_NO_MEMORY;
    }
    o.h = (manifest_header_v2_t *)o.buf;
    o.shards = (manifest_shard_t *)(o.buf + off_shards);
    o.samples = (manifest_sample_t *)(o.buf + off_samples);
    o.fields = (manifest_field_t *)(o.buf + off_fields);
    o.strtab = (char *)(o.buf + off_str);
    *(manifest_name_t *)(o.buf + off_names) = (manifest_name_t){.off = 0, .len = 3};
    synth_fill(p, first, nshards, &o);
    free(first);
    manifest_header_t *h = &o.h->base;
    memcpy(h->magic, MANIFEST_MAGIC, MANIFEST_MAGIC_LEN);
    h->version = MANIFEST_VERSION;
    h->header_size = sizeof(manifest_header_v2_t);
    h->file_size = len;
    h->shard_count = nshards;
    h->sample_count = p->samples;
    h->field_count = p->samples;
    h->name_count = 1;
    h->shard_off = off_shards;
    h->name_off = off_names;
    h->sample_off = off_samples;
    h->field_off = off_fields;
    h->strtab_off = off_str;
    h->strtab_size = len - off_str;
    h->body_hash = XXH3_64bits(o.buf + off_shards, len - off_shards);
    h->header_hash = ingot_manifest_header_hash(h);
    ingot_location_t dir = {0};
    ingot_status_t st = ingot_location_parse(".", 0, &dir);
    if (st == INGOT_OK) {
        /* rows made here, as a full open would have checked them: looked up unchecked */
        ingot_manifest_origin_t origin = {.name = p->name != NULL ? p->name : "(described)",
                                          .dir = &dir};
        st = ingot_manifest_open_named(o.buf, len, &origin,
                                       INGOT_MANIFEST_OPEN_LAZY | INGOT_MANIFEST_OPEN_CHECKED, 1,
                                       manifest_p);
    }
    ingot_location_release(&dir);
    if (st != INGOT_OK) {
        free(o.buf);
    }
    return st;
}

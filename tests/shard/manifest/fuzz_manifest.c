/*
 * libFuzzer target: the manifest loader over arbitrary bytes, opened lazily and fully, then
 * every row looked up. Each input is also tried "resealed" (its hashes recomputed) so the
 * fuzzer reaches the structural checks behind the checksums.
 */
#include <ingot/shard.h>
#include "shard/manifest.h"
#include "shard/manifest_format.h"
#include "common/fuzz.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/** Rows visited per input at most. */
#define FUZZ_MANIFEST_ROWS_MAX 4096

static void walk(ingot_manifest_h m)
{
    ingot_manifest_info_t info;
    ingot_manifest_query(m, &info);
    for (uint64_t i = 0; i < info.sample_count && i < FUZZ_MANIFEST_ROWS_MAX; i++) {
        ingot_sample_info_t s;
        if (ingot_manifest_sample_get(m, i, &s) != INGOT_OK) {
            continue;
        }
        for (uint32_t f = 0; f < s.field_count; f++) {
            ingot_field_info_t fi;
            if (ingot_manifest_field_get(m, &s, f, &fi) == INGOT_OK && strlen(fi.name) > 65535) {
                abort();
            }
        }
        ingot_shard_info_t sh;
        if (ingot_manifest_shard_get(m, s.shard, &sh) != INGOT_OK) {
            abort(); /* a sample that passed its checks names a valid shard */
        }
    }
    uint64_t idx;
    (void)ingot_manifest_find(m, "k", -1, &idx);
}

static void try_open(const uint64_t *buf, size_t size)
{
    const unsigned flags[] = {INGOT_MANIFEST_OPEN_LAZY, 0};
    for (size_t k = 0; k < sizeof(flags) / sizeof(flags[0]); k++) {
        ingot_manifest_h m;
        if (ingot_manifest_open_buffer(buf, size, ".", flags[k], &m) == INGOT_OK) {
            walk(m);
            ingot_manifest_close(m);
        }
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_quiet();
    uint64_t *buf = malloc(size + sizeof(uint64_t)); /* 8-byte aligned copy */
    if (buf == NULL) {
        return 0;
    }
    memcpy(buf, data, size);
    try_open(buf, size);
    manifest_header_t *h = (manifest_header_t *)buf;
    if (size >= sizeof(*h) && manifest_header_size(h->version) == h->header_size &&
        size >= h->header_size) { /* reseal a header of a version this build reads */
        h->body_hash = ingot_hash64((uint8_t *)buf + h->header_size, size - h->header_size);
        h->header_hash = ingot_manifest_header_hash(h);
        try_open(buf, size);
    }
    free(buf);
    return 0;
}

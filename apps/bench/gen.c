/*
 * ingot-bench's synthetic dataset, written through the public packing API: --samples samples
 * `NNNNNNNN.bin` of --sample-size bytes (uniformly jittered), random or text-like bytes that
 * depend only on the index. A stamp file holds the parameters, so a second run with the same
 * ones reuses the dataset.
 */
#include "bench/bench.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GEN_KEY_MAX    32
#define GEN_STAMP_MAX  512
#define GEN_STAMP_NAME "ingot-bench.params"
#define GEN_WORD_COUNT 8
/* splitmix64 (Steele, Lea, Flood 2014) and the seeds of the two streams derived from an index */
#define GEN_GOLDEN      0x9e3779b97f4a7c15ull
#define GEN_MIX1        0xbf58476d1ce4e5b9ull
#define GEN_MIX2        0x94d049bb133111ebull
#define GEN_DATA_SEED   0x2545f4914f6cdd1dull
#define GEN_SIZE_SEED   0xabcdefull
#define GEN_DOUBLE_BITS 11                 /* 64 - 53 mantissa bits */
#define GEN_DOUBLE_DIV  9007199254740992.0 /* 2^53: [0, 1) */

static uint64_t splitmix(uint64_t *s)
{
    uint64_t z = (*s += GEN_GOLDEN);
    z = (z ^ (z >> 30)) * GEN_MIX1;
    z = (z ^ (z >> 27)) * GEN_MIX2;
    return z ^ (z >> 31);
}

static void fill_sample(uint8_t *buf, size_t len, uint64_t index, int compressible)
{
    static const char *const words[GEN_WORD_COUNT] = {"ingot ",    "batch ", "shard ",  "tensor ",
                                                      "gradient ", "epoch ", "sample ", "rank "};
    uint64_t s = index * GEN_DATA_SEED + 1;
    size_t i = 0;
    if (compressible) {
        while (i < len) {
            const char *w = words[splitmix(&s) % GEN_WORD_COUNT];
            for (; *w && i < len; w++) buf[i++] = (uint8_t)*w;
        }
        return;
    }
    for (; i + sizeof(uint64_t) <= len; i += sizeof(uint64_t)) {
        uint64_t v = splitmix(&s);
        memcpy(buf + i, &v, sizeof(v));
    }
    for (uint64_t v = splitmix(&s); i < len; i++, v >>= 8) buf[i] = (uint8_t)v;
}

static size_t sample_len(const bench_args_t *a, uint64_t index)
{
    if (a->jitter == 0) {
        return (size_t)a->sample_size;
    }
    uint64_t s = index ^ GEN_SIZE_SEED;
    double u = (double)(splitmix(&s) >> GEN_DOUBLE_BITS) / GEN_DOUBLE_DIV;
    return (size_t)((double)a->sample_size * (1.0 - a->jitter + 2.0 * a->jitter * u)) + 1;
}

/* 1 when the dataset of these parameters is already in a->generate. */
static int gen_present(const bench_args_t *a, const char *stamp_path, const char *stamp)
{
    char manifest[PATH_MAX], old[GEN_STAMP_MAX] = "";
    FILE *f = fopen(stamp_path, "r");
    if (f != NULL) {
        size_t n = fread(old, 1, sizeof(old) - 1, f);
        old[n] = '\0';
        fclose(f);
    }
    snprintf(manifest, sizeof(manifest), "%s/" INGOT_PACK_MANIFEST_NAME, a->generate);
    return strcmp(old, stamp) == 0 && access(manifest, R_OK) == 0;
}

static int gen_pack(const bench_args_t *a)
{
    ingot_packer_params_t prm = {
        .field_mask = INGOT_PACKER_PARAM_FIELD_OUT_DIR | INGOT_PACKER_PARAM_FIELD_SHARD_SIZE |
                      INGOT_PACKER_PARAM_FIELD_ZSTD_LEVEL | INGOT_PACKER_PARAM_FIELD_PROGRESS,
        .out_dir = a->generate,
        .shard_size = a->shard_size,
        .zstd_level = a->zstd,
        .progress = a->progress && isatty(2)};
    ingot_packer_h p;
    uint8_t *buf = malloc((size_t)((double)a->sample_size * (1 + a->jitter)) + 2);
    if (buf == NULL || ingot_packer_create(&prm, &p) != INGOT_OK) {
        free(buf);
        return -1;
    }
    ingot_status_t st = INGOT_OK;
    for (uint64_t i = 0; i < a->samples && st == INGOT_OK; i++) {
        char key[GEN_KEY_MAX];
        size_t n = sample_len(a, i);
        snprintf(key, sizeof(key), "%08" PRIu64, i);
        fill_sample(buf, n, i, a->compressible);
        st = ingot_packer_add(p, key, "bin", buf, n);
    }
    if (st == INGOT_OK) {
        st = ingot_packer_finish(p, NULL, NULL);
    }
    ingot_packer_destroy(p);
    free(buf);
    return st == INGOT_OK ? 0 : -1;
}

int bench_generate(const bench_args_t *a)
{
    char stamp_path[PATH_MAX], stamp[GEN_STAMP_MAX];
    snprintf(stamp_path, sizeof(stamp_path), "%s/" GEN_STAMP_NAME, a->generate);
    snprintf(stamp, sizeof(stamp),
             "samples=%" PRIu64 " size=%" PRIu64 " jitter=%g shard=%" PRIu64
             " zstd=%d compressible=%d\n",
             a->samples, a->sample_size, a->jitter, a->shard_size, a->zstd, a->compressible);
    if (gen_present(a, stamp_path, stamp)) {
        return 0;
    }
    if (gen_pack(a) != 0) {
        fprintf(stderr, "ingot-bench: cannot generate into %s\n", a->generate);
        return -1;
    }
    FILE *f = fopen(stamp_path, "w");
    if (f != NULL) {
        fputs(stamp, f);
        fclose(f);
    }
    return 0;
}

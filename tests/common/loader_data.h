/*
 * Datasets for loader tests: N samples "s%06u" with a "bin" field whose bytes are a function of
 * the index (so any delivered byte can be checked) and a "cls" label (index % 10), packed by the
 * project's own packer into shards of a given size, optionally zstd-compressed.
 */
#ifndef INGOT_TEST_LOADER_DATA_H
#define INGOT_TEST_LOADER_DATA_H

#include "base/cuda.h"
#include <ingot/pack.h>
#include <ingot/loader.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Length of sample i's "bin" field: varies so coalescing and offsets are exercised. */
static inline size_t data_len(uint64_t i)
{
    return 200 + (size_t)((i * 7919) % 3000);
}

static inline uint8_t data_byte(uint64_t i, size_t j)
{
    return (uint8_t)((i * 131 + j * 7 + (j >> 8)) & 0xff);
}

/** Pack @p n samples into @p dir (manifest at dir/manifest.ingot). Returns 0 on success. */
static inline int data_pack(const char *dir, uint64_t n, uint64_t shard_size, int zstd_level)
{
    ingot_packer_params_t prm = {.field_mask = INGOT_PACKER_PARAM_FIELD_OUT_DIR |
                                               INGOT_PACKER_PARAM_FIELD_SHARD_SIZE |
                                               INGOT_PACKER_PARAM_FIELD_ZSTD_LEVEL,
                                 .out_dir = dir,
                                 .shard_size = shard_size,
                                 .zstd_level = zstd_level};
    ingot_packer_h p;
    static uint8_t buf[4096];
    if (ingot_packer_create(&prm, &p) != INGOT_OK) {
        return -1;
    }
    for (uint64_t i = 0; i < n; i++) {
        char key[32], cls[16];
        snprintf(key, sizeof(key), "s%06u", (unsigned)i);
        size_t len = data_len(i);
        for (size_t j = 0; j < len; j++) {
            buf[j] = data_byte(i, j);
        }
        int cl = snprintf(cls, sizeof(cls), "%u", (unsigned)(i % 10));
        if (ingot_packer_add(p, key, "bin", buf, len) != INGOT_OK ||
            ingot_packer_add(p, key, "cls", cls, (size_t)cl) != INGOT_OK) {
            ingot_packer_destroy(p);
            return -1;
        }
    }
    uint64_t samples, shards;
    int rc = (ingot_packer_finish(p, &samples, &shards) == INGOT_OK && samples == n) ? 0 : -1;
    ingot_packer_destroy(p);
    return rc;
}

#define DATA_SETS_MAX 8 /* data sets one test process may make */

/**
 * Pack @p n samples into shards of @p shard_size in @p root/@p name and return the path of its
 * manifest (static storage, one per set), or NULL when packing failed or DATA_SETS_MAX is used up.
 */
static inline const char *data_set(const char *root, const char *name, uint64_t n,
                                   uint64_t shard_size, int zstd_level)
{
    static char manifest[DATA_SETS_MAX][1024];
    static int sets;
    char dir[1024];
    if (sets == DATA_SETS_MAX) {
        return NULL;
    }
    snprintf(dir, sizeof(dir), "%.900s/%s", root, name);
    if (data_pack(dir, n, shard_size, zstd_level) != 0) {
        return NULL;
    }
    snprintf(manifest[sets], sizeof(manifest[sets]), "%.900s/manifest.ingot", dir);
    return manifest[sets++];
}

/** Loader parameters for tests: manifest, batch, seed, depth and thread counts set. */
static inline ingot_loader_params_t data_params(const char *manifest, uint64_t batch, uint64_t seed,
                                                uint32_t depth, uint32_t readers, uint32_t workers)
{
    return (ingot_loader_params_t){
        .field_mask = INGOT_LOADER_PARAM_FIELD_MANIFEST | INGOT_LOADER_PARAM_FIELD_BATCH |
                      INGOT_LOADER_PARAM_FIELD_SEED | INGOT_LOADER_PARAM_FIELD_DEPTH |
                      INGOT_LOADER_PARAM_FIELD_THREADS,
        .manifest_path = manifest,
        .global_batch = batch,
        .seed = seed,
        .depth = depth,
        .readers = readers,
        .workers = workers};
}

/**
 * Check one delivered sample (no transform): its bytes are "bin" then "cls" in shard order
 * (fields are delivered in shard order). Returns 0 when they match index @p i.
 */
static inline int data_check(uint64_t i, const uint8_t *bytes, uint64_t len, int32_t label)
{
    char cls[16];
    int cl = snprintf(cls, sizeof(cls), "%u", (unsigned)(i % 10));
    size_t blen = data_len(i);
    if (len != blen + (uint64_t)cl || label != (int32_t)(i % 10)) {
        return -1;
    }
    for (size_t j = 0; j < blen; j++) {
        if (bytes[j] != data_byte(i, j)) {
            return -1;
        }
    }
    return memcmp(bytes + blen, cls, (size_t)cl) == 0 ? 0 : -1;
}

/**
 * Batch @p b's bytes where the host can read them: b->data itself for a host batch (*copy_p set
 * to NULL); for a device batch, a copy made after its ready event, in a buffer *copy_p receives
 * (free() it). Exits the test when the copy fails: a device batch must be readable back.
 */
static inline const uint8_t *data_host_bytes(const ingot_batch_t *b, void **copy_p)
{
    *copy_p = NULL;
    if (b->device == INGOT_DEVICE_HOST) {
        return (const uint8_t *)b->data;
    }
    void *copy = malloc(b->bytes ? b->bytes : 1);
    if (copy == NULL || ingot_cuda_copy_to_host(copy, b->data, b->bytes, b->ready_event,
                                                "test batch copy-back") != INGOT_OK) {
        fprintf(stderr, "step %llu: cannot read back the batch of device %d (%zu bytes)\n",
                (unsigned long long)b->step, b->device, b->bytes);
        exit(1);
    }
    *copy_p = copy;
    return (const uint8_t *)copy;
}

/** The device a default (INGOT_DEVICE_PLACEMENT) loader delivers to, given the placement's CUDA
 *  device @p cuda_device (-1 for none): detected at run time, as the loader decides. */
static inline int data_expected_device(int cuda_device)
{
    return (cuda_device >= 0 && ingot_cuda_usable()) ? cuda_device : INGOT_DEVICE_HOST;
}

#endif

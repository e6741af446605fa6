/*
 * The content hash of ingot: XXH3-64 with seed 0, of bytes as stored (shards, samples, fields,
 * manifests, cache records). One definition, so every layer hashes alike.
 *
 * On x86-64 it runs through xxHash's own dispatcher (xxh_x86dispatch.h: AVX-512, AVX2 or SSE2,
 * chosen once by the CPU it runs on): Debian builds libxxhash for the x86-64 baseline, whose
 * plain XXH3_64bits() is SSE2 and hashes at 19 GB/s here even over bytes in cache, against 45 GB/s
 * through the dispatcher (tests/perf/hash_speed.c). The values are the same.
 */
#ifndef INGOT_BASE_HASH_H
#define INGOT_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <xxhash.h>
#if defined(__x86_64__)
#    include <xxh_x86dispatch.h>
#    define INGOT_XXH3_64(data, len)            XXH3_64bits_dispatch((data), (len))
#    define INGOT_XXH3_64_UPDATE(st, data, len) XXH3_64bits_update_dispatch((st), (data), (len))
#else
#    define INGOT_XXH3_64(data, len)            XXH3_64bits((data), (len))
#    define INGOT_XXH3_64_UPDATE(st, data, len) XXH3_64bits_update((st), (data), (len))
#endif

/** XXH3-64 of @p len bytes at @p data (seed 0). */
static inline uint64_t ingot_hash64(const void *data, size_t len)
{
    return INGOT_XXH3_64(data, len);
}

/** Feed @p len bytes at @p data to a streaming XXH3-64 state (XXH3_64bits_reset() first,
 *  XXH3_64bits_digest() after: the same value as ingot_hash64() of the bytes together). */
static inline void ingot_hash64_update(XXH3_state_t *st, const void *data, size_t len)
{
    INGOT_XXH3_64_UPDATE(st, data, len);
}

#endif

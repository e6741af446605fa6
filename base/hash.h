/*
 * The content hash of ingot: XXH3-64 with seed 0, of bytes as stored (shards, samples, fields,
 * manifests, cache records). One definition, so every layer hashes alike.
 */
#ifndef INGOT_BASE_HASH_H
#define INGOT_BASE_HASH_H

#include <stddef.h>
#include <stdint.h>
#include <xxhash.h>

/** XXH3-64 of @p len bytes at @p data (seed 0). */
static inline uint64_t ingot_hash64(const void *data, size_t len)
{
    return XXH3_64bits(data, len);
}

#endif

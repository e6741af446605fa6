/* Internal view of an open manifest, shared by the loader, reader and verifier. */
#ifndef INGOT_SHARD_MANIFEST_H
#define INGOT_SHARD_MANIFEST_H

#include <ingot/shard.h>
#include "shard/manifest_format.h"
#include <stddef.h>

struct ingot_manifest {
    const uint8_t           *base;     /* the manifest's bytes */
    size_t                   len;
    void                    *map;      /* our mapping, or NULL for a borrowed buffer */
    char                    *dir;      /* directory shard paths are relative to */
    char                    *name;     /* manifest name in messages */
    const manifest_header_t *hdr;
    const manifest_shard_t  *shards;
    const manifest_name_t   *names;
    const manifest_sample_t *samples;
    const manifest_field_t  *fields;
    const char              *strtab;
    int                      lazy;     /* rows are checked at lookup, shards included */
};

/** The string a (checked) strref names. */
static inline const char *manifest_str(const struct ingot_manifest *m, uint64_t ref)
{
    return m->strtab + manifest_strref_off(ref);
}

/** Hash of bytes as stored in the manifest (XXH3-64, seed 0). */
uint64_t ingot_shard_hash(const void *data, size_t len);

#endif

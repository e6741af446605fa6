/*
 * Packer: writes samples (members `<key>.<field>`) into tar shards of a target size, optionally
 * zstd-compressing members (with a dictionary trained from the first samples), then builds the
 * manifest over the shards it wrote. Used by `ingot-manifest pack`.
 *
 * Shard boundaries are decided by the caller's thread in sample order, so the output does not
 * depend on the number of jobs; with jobs > 1 each shard's members are buffered in memory and
 * compressed and written by a pool thread (memory: up to about 2 x jobs shards).
 */
#ifndef INGOT_SHARD_PACK_H
#define INGOT_SHARD_PACK_H

#include <ingot/status.h>
#include <stddef.h>
#include <stdint.h>

#define PACK_MANIFEST_NAME "manifest.ingot"
#define PACK_DICT_NAME     "dict.zdict"
/** Dictionary size trained by --dict (zstd's own default for `zstd --train`). */
#define PACK_DICT_SIZE     (112640u)

typedef struct pack_params {
    const char *out_dir;     /* created if missing */
    uint64_t    shard_size;  /* a shard is closed at the first sample boundary past this many
                                bytes of uncompressed members (headers included) */
    int         zstd_level;  /* 0: store members as they are */
    const void *dict;        /* trained dictionary (copied at create), or NULL */
    size_t      dict_len;
    int         progress;    /* draw a progress bar (or line) on stderr */
    uint64_t    total_members; /* members the caller will add, for the bar (0: unknown) */
    unsigned    jobs;        /* shards compressed and written in parallel (0 or 1: inline) */
} pack_params_t;

typedef struct packer packer_t;

ingot_status_t ingot_pack_create(const pack_params_t *params, packer_t **p_p);

/**
 * Add one member of sample @p key. Members of a sample must be added one after the other; a new
 * key starts a new sample. A field named "cls" or ending in ".zst" is stored as given.
 */
ingot_status_t ingot_pack_add(packer_t *p, const char *key, const char *field, const void *data,
                        size_t len);

/**
 * Write the last shard, wait for all of them, write the dictionary (if one was given to
 * ingot_pack_create()) beside them, then the manifest; *samples_p, *shards_p get the totals.
 */
ingot_status_t ingot_pack_finish(packer_t *p, uint64_t *samples_p, uint64_t *shards_p);

void ingot_pack_destroy(packer_t *p);

/** Train a dictionary from @p n samples (concatenated in @p buf with sizes in @p sizes). */
ingot_status_t ingot_pack_dict_train(const void *buf, const size_t *sizes, unsigned n, void **dict_p,
                               size_t *len_p);

#endif

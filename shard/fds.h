/*
 * The shard descriptor cache: one descriptor per shard of a manifest, opened on first use and
 * checked against the size the manifest recorded, kept until the cache is destroyed. The sample
 * reader and verifier (shard/) and the POSIX byte source (source/) share this one cache
 * type, so opening, the size check and their messages exist once. A manifest whose location
 * is a URL has its shards opened through the opener the runtime handed it at open
 * (ingot_manifest_remote(): a local copy in a temporary file); shard/ never names the store.
 * Thread safety: ingot_shard_fds_get() may be called from any number of threads at once (a
 * shard is opened once, under a lock; an open shard costs one atomic load); create and destroy
 * from one thread.
 */
#ifndef INGOT_SHARD_FDS_H
#define INGOT_SHARD_FDS_H

#include <ingot/shard.h>
#include "shard/tar.h"
#include <stdint.h>

typedef struct ingot_shard_fds ingot_shard_fds_t;

/** Open shards with O_DIRECT (the caller's offsets, lengths and buffers must be aligned). */
#define INGOT_SHARD_FDS_DIRECT 1u
/** Also map each shard read-only as it is opened (ingot_file_t.map; NULL where mmap fails or the
 *  shard is empty): reads that copy out of the page cache themselves (no read(2) per request). */
#define INGOT_SHARD_FDS_MAP 2u

/**
 * A cache over the shards of @p manifest (which must outlive it); nothing is opened yet.
 * @param flags 0, INGOT_SHARD_FDS_DIRECT or INGOT_SHARD_FDS_MAP.
 * @return INGOT_OK; INGOT_ERR_NO_MEMORY; INGOT_ERR_INVALID_PARAM for a NULL argument.
 */
ingot_status_t ingot_shard_fds_create(ingot_manifest_h manifest, unsigned flags,
                                      ingot_shard_fds_t **fds_p);

/**
 * The open source of shard @p shard: its descriptor, size and resolved path (for messages),
 * valid until the cache is destroyed (the caller must not close or modify it; a window may be
 * attached by one thread at a time, as ingot_manifest_verify() does).
 * @return INGOT_OK; INGOT_ERR_OUT_OF_RANGE for a bad row; the open's errno as a status
 *         ("cannot open shard '<path>': <reason>"); INGOT_ERR_MISMATCH when the shard's size
 *         differs from the manifest's ("shard '<path>' has N bytes but the manifest recorded M").
 *         Logged here, once per failing call.
 */
ingot_status_t ingot_shard_fds_get(ingot_shard_fds_t *fds, uint32_t shard, ingot_file_t **src_p);

/**
 * Close shard @p shard's descriptor (the next get opens it again): what a single-threaded
 * reader of one shard after another (ingot_manifest_verify()) calls to drop the local copy of a
 * shard that lives at a URL. No other thread may use the cache meanwhile.
 */
void ingot_shard_fds_release(ingot_shard_fds_t *fds, uint32_t shard);

/** Close every descriptor and free the cache. Accepts NULL. */
void ingot_shard_fds_destroy(ingot_shard_fds_t *fds);

#endif

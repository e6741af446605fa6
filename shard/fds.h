/*
 * The shard descriptor cache: one descriptor per shard of a manifest, opened on first use and
 * checked against the size the manifest recorded, kept until the cache is destroyed. The sample
 * reader and verifier (shard/) and the POSIX byte source (source/) share this one cache
 * type, so opening, the size check and their messages exist once.
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

/**
 * A cache over the shards of @p manifest (which must outlive it); nothing is opened yet.
 * @param flags 0 or INGOT_SHARD_FDS_DIRECT.
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

/** 1 when @p path is a URL (s3://, http://, https://) rather than a file path. */
int ingot_shard_path_is_url(const char *path);

/**
 * Opens a shard that lives at a URL: *fd_p is a descriptor of a local copy (an unlinked
 * temporary file) of its @p size bytes, fetched under If-Match @p etag (NULL: any version);
 * errors name the URL (logged). The object store lies above this layer: the runtime sets it.
 */
typedef ingot_status_t (*ingot_shard_remote_open_fn)(const char *url, const char *etag,
                                                     uint64_t size, int *fd_p);

/** Set the opener of shards at URLs (the runtime, at load time); NULL: such shards fail. */
void ingot_shard_remote_set(ingot_shard_remote_open_fn fn);

/** Close every descriptor and free the cache. Accepts NULL. */
void ingot_shard_fds_destroy(ingot_shard_fds_t *fds);

#endif

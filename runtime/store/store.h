/*
 * The runtime's side of the object store (runtime/store/): what needs no context and serves
 * the tools and the manifest, over the client layer's process-wide clients (one per endpoint,
 * region and credentials' identity: ingot_objstore_shared): the whole-object GET and PUT of a
 * manifest, the opener of shards at URLs that manifests are handed, the job-wide check. The
 * loader reads shards through a source of its own (source/objstore/objstore_source.h).
 */
#ifndef INGOT_RUNTIME_STORE_STORE_H
#define INGOT_RUNTIME_STORE_STORE_H

#include <ingot/store.h>
#include <mpi.h>
#include "client/objstore.h"
#include "shard/manifest.h"
#include "base/location.h"
#include <stddef.h>
#include <stdint.h>

/** Largest manifest fetched (a bound on what a server can make us allocate). */
#define INGOT_STORE_MANIFEST_MAX (64ull << 30)

/** The deadline of a blocking store call: INGOT_TIMEOUT from now. */
uint64_t ingot_store_deadline(void);

/**
 * GET the whole object at @p loc (one request, no HEAD) into a malloc'd buffer (8-byte
 * aligned; free() it), through the process-wide client of its endpoint (whose identity is
 * written into @p loc). @p etag (may be NULL) receives its ETag.
 * @return INGOT_OK; the client's errors, logged naming the endpoint, bucket and key.
 */
ingot_status_t ingot_store_fetch(ingot_location_t *loc, uint64_t max_size, void **data_p,
                                 size_t *size_p, char *etag);

/** PUT @p size bytes of @p data at @p loc. Errors as ingot_store_fetch(). */
ingot_status_t ingot_store_put(ingot_location_t *loc, const void *data, size_t size);

/**
 * A local copy of the object at @p loc (@p size bytes, as recorded) in an unlinked temporary file
 * (TMPDIR, else /tmp), fetched in parts of INGOT_S3_PART_SIZE, a few in flight, under If-Match
 * @p etag (may be NULL), through the process-wide client of its endpoint: *fd_p, the caller's to
 * close. The opener of shards at URLs the runtime hands every manifest it opens
 * (ingot_shard_remote_fn), and the builder's fetch of a listed shard.
 * @return INGOT_OK; INGOT_ERR_IO (no temporary file); the client's errors (INGOT_ERR_MISMATCH
 *         for an object whose size or ETag changed), logged naming the object and range.
 */
ingot_status_t ingot_store_local_copy(ingot_location_t *loc, const char *etag, uint64_t size,
                                      int *fd_p);

/**
 * Open the manifest at @p loc (resolved: ingot_location_parse), as ingot_manifest_open() opens a
 * path or a URL; its folder is its location, and its shards at URLs are opened through
 * ingot_store_local_copy. The identity of the client that fetched it is written into @p loc.
 */
ingot_status_t ingot_store_open(ingot_location_t *loc, unsigned flags,
                                ingot_manifest_h *manifest_p);

/**
 * Open the manifest of @p len bytes at @p buf (@p own: malloc'd, freed at close), named @p name,
 * whose folder is @p dir: shard/'s open, handed the opener of shards at URLs
 * (ingot_store_local_copy). Errors as ingot_manifest_open().
 */
ingot_status_t ingot_store_manifest_open(const void *buf, size_t len, const char *name,
                                         const ingot_location_t *dir, unsigned flags, int own,
                                         ingot_manifest_h *manifest_p);


#endif

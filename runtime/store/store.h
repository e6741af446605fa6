/*
 * The runtime's side of the object store (runtime/store/): what needs no context and serves
 * the tools and the manifest: a process-wide client per kind (signed s3, plain http(s)) shared
 * by the calls below, the whole-object GET and PUT of a manifest, and URL helpers. The loader
 * reads shards through a source of its own (source/objstore/objstore_source.h).
 */
#ifndef INGOT_RUNTIME_STORE_STORE_H
#define INGOT_RUNTIME_STORE_STORE_H

#include <ingot/store.h>
#include <mpi.h>
#include "client/objstore.h"
#include <stddef.h>
#include <stdint.h>

/** Largest manifest fetched (a bound on what a server can make us allocate). */
#define INGOT_STORE_MANIFEST_MAX (64ull << 30)

/** 1 when @p path is a URL (s3://, http://, https://). */
int ingot_store_is_url(const char *path);

/**
 * The process-wide client for @p url's kind, made at the first call (its endpoint, region and
 * credentials resolved then, on the calling thread) and kept until the process exits. Thread-safe.
 * @return INGOT_OK; the errors of ingot_objstore_create().
 */
ingot_status_t ingot_store_client(const char *url, ingot_objstore_t **client_p);

/** The deadline of a blocking store call: INGOT_TIMEOUT from now. */
uint64_t ingot_store_deadline(void);

/**
 * GET the whole object at @p url (one request, no HEAD) into a malloc'd buffer (8-byte
 * aligned; free() it). @p etag (may be NULL) receives its ETag.
 * @return INGOT_OK; the client's errors, logged naming the endpoint, bucket and key.
 */
ingot_status_t ingot_store_fetch(const char *url, uint64_t max_size, void **data_p, size_t *size_p,
                                 char *etag);

/** PUT @p size bytes of @p data at @p url. Errors as ingot_store_fetch(). */
ingot_status_t ingot_store_put(const char *url, const void *data, size_t size);

/**
 * A local copy of the object at @p url (@p size bytes, as recorded) in an unlinked temporary file
 * (TMPDIR, else /tmp), fetched in parts of INGOT_S3_PART_SIZE, a few in flight, under If-Match
 * @p etag (may be NULL): *fd_p, the caller's to close. Also shard/'s opener of shards at URLs.
 * @return INGOT_OK; INGOT_ERR_IO (no temporary file); the client's errors (INGOT_ERR_MISMATCH
 *         for an object whose size or ETag changed), logged naming the object and range.
 */
ingot_status_t ingot_store_local_copy(const char *url, const char *etag, uint64_t size, int *fd_p);

/**
 * The job-wide check of @p id (this rank's identity for the dataset's URL): rank 0's endpoint,
 * region, bucket and credential source must be every rank's. Collective over @p comm; every rank
 * returns the same status.
 * @return INGOT_OK; INGOT_ERR_CONFIG when a rank differs (each such rank logs what it resolved
 *         against rank 0's value; rank 0 names the ranks per field); INGOT_ERR_MPI.
 */
ingot_status_t ingot_store_check_job(MPI_Comm comm, const ingot_store_identity_t *id);

/** The "directory" of @p url: everything before its last '/' (malloc'd), or NULL. */
char *ingot_store_url_dir(const char *url);

#endif

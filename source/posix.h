/*
 * The POSIX byte source: positioned reads of shard files through the shard descriptor cache
 * (opened on first use, size-checked against the manifest), optionally O_DIRECT. A request
 * completes inside submit, in the submitting thread.
 */
#ifndef INGOT_SOURCE_POSIX_H
#define INGOT_SOURCE_POSIX_H

#include "source/source.h"
#include <ingot/shard.h>

/** How a POSIX source reads (ingot_source_posix_create()). */
enum {
    INGOT_SOURCE_POSIX_PREAD = 0,  /**< preadv into the caller's iovecs */
    INGOT_SOURCE_POSIX_DIRECT = 1, /**< O_DIRECT: requests must then be windows (one iovec, slack
                                        of at least 2 x INGOT_SOURCE_DIRECT_ALIGN, aligned) */
    INGOT_SOURCE_POSIX_MAP = 2     /**< copies out of each shard mapped read-only (no system
                                        call per request; a shard that cannot be mapped is read
                                        with preadv; one that shrinks under its mapping fails
                                        the read, base/mapped.h) */
};

/**
 * Create a POSIX source over the shards of @p manifest (which must outlive it), reading as
 * @p mode says (INGOT_SOURCE_POSIX_*).
 * Requests for device memory complete as "retry elsewhere" (INGOT_ERR_UNSUPPORTED).
 * @return INGOT_OK; INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_source_posix_create(ingot_manifest_h manifest, int mode,
                                         ingot_source_t **src_p);

#endif

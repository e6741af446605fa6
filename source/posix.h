/*
 * The POSIX byte source: positioned reads of shard files through the shard descriptor cache
 * (opened on first use, size-checked against the manifest), optionally O_DIRECT. A request
 * completes inside submit, in the submitting thread.
 */
#ifndef INGOT_SOURCE_POSIX_H
#define INGOT_SOURCE_POSIX_H

#include "source/source.h"
#include <ingot/shard.h>

/**
 * Create a POSIX source over the shards of @p manifest (which must outlive it).
 * @param direct O_DIRECT reads: requests must then be windows (one iovec, slack of at least
 *               2 x INGOT_SOURCE_DIRECT_ALIGN, buffer aligned).
 * Requests for device memory complete as "retry elsewhere" (INGOT_ERR_UNSUPPORTED).
 * @return INGOT_OK; INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_source_posix_create(ingot_manifest_h manifest, int direct,
                                         ingot_source_t **src_p);

#endif

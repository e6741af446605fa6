/* Internal state of a sample reader (reader.c, verify.c). */
#ifndef INGOT_SHARD_READER_H
#define INGOT_SHARD_READER_H

#include <ingot/shard.h>
#include "shard/manifest.h"
#include "shard/tar.h"
#include "shard/zstd_codec.h"

struct ingot_shard_reader {
    struct ingot_manifest *m;
    shard_src_t           *srcs;   /* one per shard; fd -1 until first use */
    char                 **names;  /* resolved shard paths (for messages), lazily */
    shard_zstd_t           zstd;
};

/** The open source of shard @p row (opened and size-checked on first use). */
ingot_status_t ingot_reader_shard(struct ingot_shard_reader *r, uint32_t row, shard_src_t **src_p);

/** Check field @p i of a sample read into @p buf against its hash. */
ingot_status_t ingot_reader_check_field(struct ingot_shard_reader *r, const ingot_sample_info_t *s,
                                  const uint8_t *buf, uint32_t i, ingot_field_info_t *f_p);

#endif

/* Internal state of a sample reader (reader.c, verify.c). */
#ifndef INGOT_SHARD_READER_H
#define INGOT_SHARD_READER_H

#include <ingot/shard.h>
#include "shard/codec.h"
#include "shard/fds.h"
#include "shard/manifest.h"

struct ingot_shard_reader {
    struct ingot_manifest *m;
    ingot_shard_fds_t *fds;   /* shard descriptors, opened on first use */
    ingot_shard_dict_t *dict; /* loaded once per reader */
    ingot_shard_codec_t codec;
    ingot_sample_info_t sample; /* rows of the last sample looked up */
    ingot_field_info_t *fields;
    uint32_t fields_cap;
};

/**
 * Look up sample @p index's rows once into r->sample and r->fields (grown as needed: the reader
 * is a tool's object, not a hot path). Errors as ingot_shard_rows_get(); INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_reader_rows(struct ingot_shard_reader *r, uint64_t index,
                                 ingot_shard_rows_t *rows_p);

#endif

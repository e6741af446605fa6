/*
 * The sample codec: verify and decode one sample's fields from the manifest rows the caller
 * already holds (read once per sample by ingot_shard_rows_get()). The content hash of each
 * field is checked against its stored bytes before anything is decoded; zstd fields are decoded
 * with a reusable per-thread context, bounded by the manifest's raw length, with the manifest's
 * dictionary digested once (ingot_shard_dict_t) and shared by every context. Used by the sample
 * reader and verifier of this layer and by the loader's readers and workers.
 */
#ifndef INGOT_SHARD_CODEC_H
#define INGOT_SHARD_CODEC_H

#include <ingot/shard.h>
#include "shard/zstd_codec.h"
#include <stdint.h>

/** One sample's manifest rows, as the caller holds them (borrowed by every call). */
typedef struct ingot_shard_rows {
    const ingot_sample_info_t *sample;
    const ingot_field_info_t *fields; /**< sample->field_count rows */
} ingot_shard_rows_t;

/** How a sample's stored bytes lie in the buffer given to the codec. */
typedef enum ingot_shard_layout {
    INGOT_SHARD_LAYOUT_STORED, /**< as in the shard: field f at fields[f].offset (headers between) */
    INGOT_SHARD_LAYOUT_PACKED  /**< fields back to back in field order (a scatter read) */
} ingot_shard_layout_t;

/**
 * Read sample @p index's row and its field rows from @p m, once.
 * @param fields    room for @p fields_cap rows.
 * @return INGOT_OK; as ingot_manifest_sample_get(); INGOT_ERR_NO_RESOURCE when the sample has
 *         more than @p fields_cap fields (logged with its key). Thread-safe.
 */
ingot_status_t ingot_shard_rows_get(ingot_manifest_h m, uint64_t index, ingot_sample_info_t *sample,
                                    ingot_field_info_t *fields, uint32_t fields_cap);

/** The field rows of @p sample (a row of @p m) into @p fields: the second half of rows_get. */
ingot_status_t ingot_shard_rows_fields(ingot_manifest_h m, const ingot_sample_info_t *sample,
                                       ingot_field_info_t *fields, uint32_t fields_cap);

/** The manifest's zstd dictionary, digested once; immutable, shared by any number of threads. */
typedef struct ingot_shard_dict ingot_shard_dict_t;

/**
 * Load and digest @p m's dictionary (checked against the manifest's hash); a manifest without
 * one gives an empty dictionary (decoding then uses none).
 * @return INGOT_OK; the file's errors (logged naming it); INGOT_ERR_CORRUPT when its hash differs;
 *         INGOT_ERR_ZSTD (invalid); INGOT_ERR_NO_MEMORY.
 */
ingot_status_t ingot_shard_dict_load(ingot_manifest_h m, ingot_shard_dict_t **dict_p);
/** Free a dictionary once no codec uses it. Accepts NULL. */
void ingot_shard_dict_destroy(ingot_shard_dict_t *dict);

/** One thread's decoder: a reused zstd context over a shared dictionary. */
typedef struct ingot_shard_codec {
    shard_zstd_t zstd;
} ingot_shard_codec_t;

/** Create @p c over @p dict (may be NULL: no dictionary), which must outlive it. */
ingot_status_t ingot_shard_codec_init(ingot_shard_codec_t *c, const ingot_shard_dict_t *dict);
/** Free @p c's context (not the dictionary). */
void ingot_shard_codec_release(ingot_shard_codec_t *c);

/** What a hash mismatch means to the caller: an error, or a warning (the sample is skipped). */
typedef enum ingot_shard_verify_mode {
    INGOT_SHARD_VERIFY_FAIL,
    INGOT_SHARD_VERIFY_SKIP,
    INGOT_SHARD_VERIFY_QUIET /**< no message: the caller says what it does (bytes from a peer) */
} ingot_shard_verify_mode_t;

/** What a failed check found: the first field whose bytes differ, and the hash they have (two
 *  reads with the same wrong hash returned the same wrong bytes: damage at rest). */
typedef struct ingot_shard_damage {
    uint32_t field;
    uint64_t hash;
} ingot_shard_damage_t;

/**
 * Check every field's stored bytes in @p bytes (laid out as @p layout says) against its hash.
 * @param m  for messages only (the shard's path).
 * @return INGOT_OK, or INGOT_ERR_CORRUPT logged (error, or warning under SKIP) as "sample
 *         '<key>' (index i) field '<f>' in shard '<path>' at offset o: content hash differs from
 *         the manifest (corrupt)", with *bad_p (may be NULL) set to the field and the hash its
 *         bytes have. Thread-safe.
 */
ingot_status_t ingot_shard_codec_verify(ingot_manifest_h m, const ingot_shard_rows_t *rows,
                                        const uint8_t *bytes, ingot_shard_layout_t layout,
                                        ingot_shard_verify_mode_t mode,
                                        ingot_shard_damage_t *bad_p);

/**
 * A field's content hash fed as its bytes land, in pieces of any size, in order: the streaming
 * entry of the same check as ingot_shard_codec_verify() (streaming and one-shot XXH3-64 give the
 * same value), for readers that hash each piece of a read while it is still in the core's cache.
 * One stream per request (XXH3's state is 576 bytes, made once); a field that lands whole in one
 * piece is hashed one-shot.
 */
typedef struct ingot_shard_stream {
    void *xxh;    /* XXH3_state_t, made at init */
    uint64_t fed; /* bytes of the field in progress fed so far (0: none) */
} ingot_shard_stream_t;

/** Make @p s's hash state. @return INGOT_OK; INGOT_ERR_NO_MEMORY. */
ingot_status_t ingot_shard_stream_init(ingot_shard_stream_t *s);
/** Free @p s's state. Accepts a zeroed stream. */
void ingot_shard_stream_release(ingot_shard_stream_t *s);
/** Drop the field in progress (its bytes are about to be written again). */
static inline void ingot_shard_stream_restart(ingot_shard_stream_t *s)
{
    s->fed = 0;
}

/**
 * Feed field @p fi, whose stored bytes begin at @p field and whose first @p upto bytes are in
 * place (@p upto at least what was fed before, at most fi->stored_len).
 * @return 0: the field is not complete yet; 1: complete, its hash is the manifest's; -1:
 *         complete, its hash differs (nothing is logged: the caller verifies the sample again
 *         with ingot_shard_codec_verify(), which names it).
 */
int ingot_shard_stream_feed(ingot_shard_stream_t *s, const ingot_field_info_t *fi,
                            const uint8_t *field, uint64_t upto);

/**
 * Decode (or copy) field @p i of a sample whose stored bytes lie at @p stored (STORED layout)
 * into @p dst of @p cap bytes; *len_p = the field's raw length. No allocation.
 * @return INGOT_OK; INGOT_ERR_NO_RESOURCE when @p cap < raw length; INGOT_ERR_ZSTD (corrupt,
 *         truncated, or more output than the raw length), logged naming shard, key and field.
 * Thread safety: one thread at a time per codec.
 */
ingot_status_t ingot_shard_codec_decode(ingot_shard_codec_t *c, ingot_manifest_h m,
                                        const ingot_shard_rows_t *rows, uint32_t i,
                                        const uint8_t *stored, void *dst, size_t cap,
                                        size_t *len_p);

#endif

/*
 * zstd member decoding with one reused decompression context, an optional shared dictionary,
 * a window limit, and the manifest's raw length as a hard bound on output (decompression bombs
 * fail instead of allocating or writing more). Truncated frames are detected (input consumed
 * while zstd still wants more), as the zstd CLI does.
 */
#ifndef INGOT_SHARD_ZSTD_CODEC_H
#define INGOT_SHARD_ZSTD_CODEC_H

#include <ingot/status.h>
#include <stddef.h>
#include <stdint.h>

/** Largest window a member may need: 2^27 = 128 MiB, zstd's own streaming default. */
#define SHARD_ZSTD_WINDOW_LOG_MAX 27

typedef struct shard_zstd {
    void *dctx;     /* ZSTD_DCtx */
    void *ddict;    /* ZSTD_DDict, or NULL */
    int owns_ddict; /* ddict was made by init (else borrowed, shared with other contexts) */
    size_t last;    /* last return of ZSTD_decompressStream while streaming */
    uint64_t out;   /* bytes produced while streaming */
} shard_zstd_t;

/** Create the context; @p dict (may be NULL) is copied into a digested dictionary. */
ingot_status_t ingot_shard_zstd_init(shard_zstd_t *z, const void *dict, size_t dict_len);
/**
 * Create the context over a digested dictionary made by ingot_shard_zstd_ddict_create() (or
 * NULL), which is borrowed, not copied: contexts of many threads share one dictionary, which
 * must outlive them.
 */
ingot_status_t ingot_shard_zstd_init_shared(shard_zstd_t *z, const void *ddict);
/** Free the context (and the dictionary when init made it). */
void ingot_shard_zstd_release(shard_zstd_t *z);

/**
 * Digest a dictionary once (a ZSTD_DDict: immutable, safe to share between threads).
 * @return INGOT_OK; INGOT_ERR_ZSTD (invalid dictionary, logged naming @p what).
 */
ingot_status_t ingot_shard_zstd_ddict_create(const void *dict, size_t dict_len, const char *what,
                                             void **ddict_p);
/** Free a dictionary of ingot_shard_zstd_ddict_create(). Accepts NULL. */
void ingot_shard_zstd_ddict_free(void *ddict);

/** Room for the reason ingot_shard_zstd_decode_why() gives. */
#define SHARD_ZSTD_WHY_MAX 256

/**
 * Decode the frames in @p src into @p dst, which must receive exactly @p raw_len bytes. On
 * failure (INGOT_ERR_ZSTD), @p why says what was wrong with the frame ("truncated zstd frame
 * ..."), and nothing is logged: the caller names the member, which it need only format when a
 * decode fails (the hot path decodes many fields and fails almost never).
 */
ingot_status_t ingot_shard_zstd_decode_why(shard_zstd_t *z, const void *src, size_t len, void *dst,
                                           size_t raw_len, char *why, size_t whylen);

/**
 * ingot_shard_zstd_decode_why() that logs its failure as "<what>: <why>"; @p what names the
 * member ("shard.tar: key 'k' field 'jpg' at offset N").
 */
ingot_status_t ingot_shard_zstd_decode(shard_zstd_t *z, const void *src, size_t len, void *dst,
                                       size_t raw_len, const char *what);

/** Streaming count of the decoded length (the builder learns raw lengths this way). */
void ingot_shard_zstd_count_begin(shard_zstd_t *z);
ingot_status_t ingot_shard_zstd_count_feed(shard_zstd_t *z, const void *src, size_t len,
                                           void *scratch, size_t scratch_len, uint64_t limit,
                                           const char *what);
ingot_status_t ingot_shard_zstd_count_end(shard_zstd_t *z, uint64_t *raw_len_p, const char *what);

#endif

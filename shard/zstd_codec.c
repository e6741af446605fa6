/* zstd member decoding: reused context, window limit, raw-length bound. See zstd_codec.h. */
#include "shard/zstd_codec.h"
#include "base/log.h"
#include "base/status.h"
#include <stdarg.h>
#include <stdio.h>

#define ZSTD_STATIC_LINKING_ONLY /* ZSTD_getFrameHeader, ZSTD_frameHeader */
#include <zstd.h>
#include <zstd_errors.h>

ingot_status_t ingot_shard_zstd_init_shared(shard_zstd_t *z, const void *ddict)
{
    *z = (shard_zstd_t){0};
    z->dctx = ZSTD_createDCtx();
    if (z->dctx == NULL) {
        return ingot_fail(INGOT_ERR_NO_MEMORY, "zstd: cannot create a decompression context");
    }
    size_t r = ZSTD_DCtx_setParameter(z->dctx, ZSTD_d_windowLogMax, SHARD_ZSTD_WINDOW_LOG_MAX);
    if (ZSTD_isError(r)) {
        ingot_shard_zstd_release(z);
        return ingot_fail(INGOT_ERR_ZSTD, "zstd: window limit: %s", ZSTD_getErrorName(r));
    }
    z->ddict = (void *)ddict;
    return INGOT_OK;
}

ingot_status_t ingot_shard_zstd_ddict_create(const void *dict, size_t dict_len, const char *what,
                                             void **ddict_p)
{
    ZSTD_DDict *d = ZSTD_createDDict(dict, dict_len);
    if (d == NULL) {
        return ingot_fail(INGOT_ERR_ZSTD, "%s: zstd dictionary of %zu bytes is invalid", what,
                          dict_len);
    }
    *ddict_p = d;
    return INGOT_OK;
}

void ingot_shard_zstd_ddict_free(void *ddict)
{
    ZSTD_freeDDict(ddict);
}

ingot_status_t ingot_shard_zstd_init(shard_zstd_t *z, const void *dict, size_t dict_len)
{
    void *ddict = NULL;
    if (dict != NULL) {
        INGOT_CHECK(ingot_shard_zstd_ddict_create(dict, dict_len, "zstd", &ddict));
    }
    ingot_status_t st = ingot_shard_zstd_init_shared(z, ddict);
    if (st != INGOT_OK) {
        ZSTD_freeDDict(ddict);
        return st;
    }
    z->owns_ddict = (ddict != NULL);
    return INGOT_OK;
}

void ingot_shard_zstd_release(shard_zstd_t *z)
{
    ZSTD_freeDCtx(z->dctx);
    if (z->owns_ddict) {
        ZSTD_freeDDict(z->ddict);
    }
    z->dctx = NULL;
    z->ddict = NULL;
    z->owns_ddict = 0;
}

/* Say why a decode failed into @p why (no log: the caller adds what was decoded, when it fails). */
static ingot_status_t zs_why(char *why, size_t whylen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static ingot_status_t zs_why(char *why, size_t whylen, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, whylen, fmt, ap);
    va_end(ap);
    return INGOT_ERR_ZSTD;
}

static ingot_status_t zs_reset(shard_zstd_t *z, char *why, size_t whylen)
{
    ZSTD_DCtx_reset(z->dctx, ZSTD_reset_session_only);
    size_t r = ZSTD_DCtx_refDDict(z->dctx, z->ddict);
    if (ZSTD_isError(r)) {
        return zs_why(why, whylen, "zstd: %s", ZSTD_getErrorName(r));
    }
    z->last = 0;
    z->out = 0;
    return INGOT_OK;
}

/*
 * Fast path for the common case, one whole frame that declares exactly the raw length within
 * the window limit: one-shot decoding into dst (capacity raw_len, so output can never exceed
 * it). *done_p = 0 sends every other case to the streaming path, which names the problem.
 */
static ingot_status_t zs_decode_oneshot(shard_zstd_t *z, const void *src, size_t len, void *dst,
                                        size_t raw_len, char *why, size_t whylen, int *done_p)
{
    ZSTD_frameHeader fh;
    *done_p = 0;
    if (ZSTD_getFrameHeader(&fh, src, len) != 0 || fh.frameType != ZSTD_frame ||
        fh.frameContentSize != raw_len || fh.windowSize > (1ull << SHARD_ZSTD_WINDOW_LOG_MAX) ||
        ZSTD_findFrameCompressedSize(src, len) != len) {
        return INGOT_OK;
    }
    size_t r = z->ddict ? ZSTD_decompress_usingDDict(z->dctx, dst, raw_len, src, len, z->ddict)
                        : ZSTD_decompressDCtx(z->dctx, dst, raw_len, src, len);
    if (ZSTD_isError(r) || r != raw_len) {
        return zs_why(why, whylen, "corrupt zstd frame: %s",
                      ZSTD_isError(r) ? ZSTD_getErrorName(r) : "wrong decoded length");
    }
    *done_p = 1;
    return INGOT_OK;
}

/* Output full with input left: one more byte would exceed the manifest's raw length. */
static ingot_status_t zs_probe_bomb(shard_zstd_t *z, ZSTD_inBuffer *in, size_t raw_len, size_t *r_p,
                                    char *why, size_t whylen)
{
    uint8_t probe;
    ZSTD_outBuffer more = {&probe, 1, 0};
    *r_p = ZSTD_decompressStream(z->dctx, &more, in);
    if (ZSTD_isError(*r_p) || more.pos != 0) {
        return zs_why(why, whylen,
                      "zstd output exceeds the raw length %zu (decompression bomb or wrong "
                      "manifest)",
                      raw_len);
    }
    return INGOT_OK;
}

ingot_status_t ingot_shard_zstd_decode_why(shard_zstd_t *z, const void *src, size_t len, void *dst,
                                           size_t raw_len, char *why, size_t whylen)
{
    int done;
    INGOT_CHECK(zs_decode_oneshot(z, src, len, dst, raw_len, why, whylen, &done));
    if (done) {
        return INGOT_OK;
    }
    INGOT_CHECK(zs_reset(z, why, whylen));
    ZSTD_inBuffer in = {src, len, 0};
    ZSTD_outBuffer out = {dst, raw_len, 0};
    size_t r = 1;
    while (in.pos < in.size) {
        r = ZSTD_decompressStream(z->dctx, &out, &in);
        if (ZSTD_isError(r) && ZSTD_getErrorCode(r) == ZSTD_error_frameParameter_windowTooLarge) {
            return zs_why(why, whylen, "zstd frame needs a window beyond the limit of 2^%d bytes",
                          SHARD_ZSTD_WINDOW_LOG_MAX);
        }
        if (ZSTD_isError(r)) {
            return zs_why(why, whylen, "corrupt zstd frame at input byte %zu: %s", in.pos,
                          ZSTD_getErrorName(r));
        }
        if (out.pos == out.size && r != 0) {
            INGOT_CHECK(zs_probe_bomb(z, &in, raw_len, &r, why, whylen));
            if (r != 0 && in.pos == in.size) {
                break;
            }
        }
    }
    if (r != 0) {
        return zs_why(why, whylen,
                      "truncated zstd frame (input ended after %zu bytes while the decoder "
                      "expected more)",
                      len);
    }
    if (out.pos != raw_len) {
        return zs_why(why, whylen, "zstd output is %zu bytes, manifest says %zu", out.pos, raw_len);
    }
    return INGOT_OK;
}

ingot_status_t ingot_shard_zstd_decode(shard_zstd_t *z, const void *src, size_t len, void *dst,
                                       size_t raw_len, const char *what)
{
    char why[SHARD_ZSTD_WHY_MAX];
    ingot_status_t st = ingot_shard_zstd_decode_why(z, src, len, dst, raw_len, why, sizeof(why));
    return (st == INGOT_OK) ? st : ingot_fail(st, "%s: %s", what, why);
}

void ingot_shard_zstd_count_begin(shard_zstd_t *z)
{
    char why[SHARD_ZSTD_WHY_MAX];
    if (zs_reset(z, why, sizeof(why)) != INGOT_OK) {
        ingot_error("zstd: %s", why); /* the next feed fails on the same context */
    }
}

ingot_status_t ingot_shard_zstd_count_feed(shard_zstd_t *z, const void *src, size_t len,
                                           void *scratch, size_t scratch_len, uint64_t limit,
                                           const char *what)
{
    ZSTD_inBuffer in = {src, len, 0};
    while (in.pos < in.size || z->last > 0) {
        ZSTD_outBuffer out = {scratch, scratch_len, 0};
        size_t r = ZSTD_decompressStream(z->dctx, &out, &in);
        if (ZSTD_isError(r)) {
            return ingot_fail(INGOT_ERR_ZSTD, "%s: corrupt zstd frame: %s", what,
                              ZSTD_getErrorName(r));
        }
        z->last = r;
        z->out += out.pos;
        if (z->out > limit) {
            return ingot_fail(INGOT_ERR_ZSTD,
                              "%s: zstd output exceeds %"
                              "llu bytes",
                              what, (unsigned long long)limit);
        }
        if (out.pos < out.size && in.pos == in.size) {
            break; /* needs more input */
        }
    }
    return INGOT_OK;
}

ingot_status_t ingot_shard_zstd_count_end(shard_zstd_t *z, uint64_t *raw_len_p, const char *what)
{
    if (z->last != 0) {
        return ingot_fail(INGOT_ERR_ZSTD,
                          "%s: truncated zstd frame (input ended while the "
                          "decoder expected more)",
                          what);
    }
    *raw_len_p = z->out;
    return INGOT_OK;
}

/**
 * @file transform.h
 * @brief Built-in sample transforms for ingot_loader_params_t.transform: fixed-shape outputs
 *        computed in the loader's workers, so the trainer receives tensors, not bytes.
 *
 * ingot_transform_image_norm() turns an 8-bit image (a binary PNM or raw pixels) into
 * normalised float32 in channel-planar order [C, H, W], as torchvision's ToTensor + Normalize:
 * out[c][y][x] = (pixel / 255 - mean[c]) / std[c].
 */
#ifndef INGOT_TRANSFORM_H
#define INGOT_TRANSFORM_H

#include <ingot/def.h>
#include <ingot/loader.h>
#include <ingot/status.h>
#include <stddef.h>
#include <stdint.h>

INGOT_BEGIN_DECLS

/** Most channels ingot_transform_image_norm() handles. */
#define INGOT_IMAGE_CHANNELS_MAX 4

/**
 * The image transform's parameters, passed as transform_arg (it must outlive the loader).
 * Fill it, then call ingot_image_norm_prepare() once before creating the loader.
 */
typedef struct ingot_image_norm {
    const char *field;    /**< Field holding the image ("pgm", "ppm", "rgb", ...); NULL: the
                             sample's first field. */
    uint32_t    channels; /**< 1 to INGOT_IMAGE_CHANNELS_MAX. */
    uint32_t    height;   /**< Rows expected (>= 1). */
    uint32_t    width;    /**< Columns expected (>= 1). */
    float       mean[INGOT_IMAGE_CHANNELS_MAX]; /**< Per channel, of pixel / 255. */
    float       std[INGOT_IMAGE_CHANNELS_MAX];  /**< Per channel, > 0. */
    /* Set by ingot_image_norm_prepare(); do not change. */
    float       scale[INGOT_IMAGE_CHANNELS_MAX]; /**< 1 / (255 std[c]). */
    float       bias[INGOT_IMAGE_CHANNELS_MAX];  /**< -mean[c] / std[c]. */
    size_t      out_size;                        /**< channels x height x width x 4 bytes. */
} ingot_image_norm_t;

/**
 * @brief Check @p norm and precompute what the transform needs.
 * @return INGOT_OK with norm->out_size set (the loader's sample_out_size);
 *         INGOT_ERR_INVALID_PARAM naming the member and value (channels out of 1..4, a zero
 *         height or width, a std that is not a positive finite number, a mean that is not
 *         finite, or an output of more than 2^31 bytes).
 */
INGOT_API ingot_status_t ingot_image_norm_prepare(ingot_image_norm_t *norm);

/**
 * @brief The transform (an ingot_transform_fn_t; arg: a prepared ingot_image_norm_t).
 *
 * The field's bytes are either a binary PNM with maxval 255 (P5 for 1 channel, P6 for 3; the
 * header's whitespace and '#' comments as the format allows) or exactly channels x height x
 * width raw bytes in interleaved [H, W, C] order. Thread-safe (reads @p arg only).
 * @return INGOT_OK; INGOT_ERR_FORMAT (logged with the sample's key, the field and what was
 *         found: another size, another PNM type, maxval, truncated pixels, a missing field);
 *         INGOT_ERR_INVALID_PARAM when out_size is not norm->out_size.
 */
INGOT_API ingot_status_t ingot_transform_image_norm(const ingot_sample_view_t *sample, void *out,
                                                    size_t out_size, void *arg);

INGOT_END_DECLS

#endif /* INGOT_TRANSFORM_H */

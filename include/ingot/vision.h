/**
 * @file vision.h
 * @brief Image decoding and the standard training augmentations in the loader's workers: a
 *        built-in transform (ingot_transform_image_decode) beside ingot_transform_image_norm.
 *
 * Each sample's image (JPEG through libjpeg-turbo, PNG through libpng, or binary PNM) is
 * decoded, cropped, resized to a fixed height x width, optionally flipped, and written as
 * normalised float32 (out = (pixel / 255 - mean[c]) / std[c], as torchvision's ToTensor +
 * Normalize) or as uint8 pixels, in [C, H, W] or [H, W, C] order.
 *
 * - Training (INGOT_IMAGE_CROP_RANDOM): torchvision's RandomResizedCrop (scale (0.08, 1),
 *   ratio (3/4, 4/3) by default; ten draws, then its central fallback), then a horizontal flip
 *   with probability `flip` (default 0.5).
 * - Evaluation (INGOT_IMAGE_CROP_CENTER): resize the shorter side to `resize`, then the central
 *   height x width (torchvision's Resize(256) + CenterCrop(224)), computed as one resampling of
 *   the matching box of the original image.
 * - INGOT_IMAGE_CROP_NONE: the whole image resized to height x width.
 *
 * Resampling is bilinear with antialiasing (a triangle filter widened by the downscale factor,
 * as Pillow's BILINEAR, which torchvision's PIL path uses). A JPEG is decoded at the smallest
 * DCT scale (1/8, 1/4, 1/2 by default) that keeps the crop at least the output's size, and only
 * the rows and columns (whole iMCUs) the crop needs are decoded.
 *
 * **Determinism**: a sample's draws (crop box and flip) come from a counter-based generator
 * keyed by (the loader's seed, params.seed, epoch, global sample index), which the loader passes
 * in ingot_sample_view_t: two runs, any world size, any number of workers and a resumed run
 * make the same crops, bit for bit (on the same libjpeg-turbo build and CPU).
 *
 * **Memory**: nothing is allocated per sample by ingot. Each concurrent call takes a scratch
 * state from the transform's free list (decoder object, pixel buffer, filter tables), grown on
 * first use to what the largest image so far needs and kept: at most about 3 x max_pixels
 * bytes per worker. libjpeg-turbo itself allocates its per-image working memory (a few small
 * pools; for a progressive JPEG, the whole image's coefficients) while decoding; libpng's
 * allocations come from the state's arena. An image whose header declares more than
 * max_pixels pixels is refused before anything is allocated for it.
 *
 * Errors name the shard, the sample key, its offset in the shard and the field (from the
 * sample view), and what was wrong: no image field, an empty field, an unknown format, the
 * decoder's message (a truncated JPEG, a corrupt Huffman table, a bad PNG CRC), an image over
 * the pixel limit (with its declared size).
 */
#ifndef INGOT_VISION_H
#define INGOT_VISION_H

#include <ingot/def.h>
#include <ingot/loader.h>
#include <ingot/status.h>
#include <stddef.h>
#include <stdint.h>

INGOT_BEGIN_DECLS

/** Opaque handle to a prepared image transform. */
typedef struct ingot_vision *ingot_vision_h;

/** How the output's box is chosen in the decoded image. */
typedef enum ingot_image_crop {
    INGOT_IMAGE_CROP_RANDOM = 0, /**< RandomResizedCrop then a random horizontal flip. */
    INGOT_IMAGE_CROP_CENTER = 1, /**< Shorter side to `resize`, then the central crop. */
    INGOT_IMAGE_CROP_NONE   = 2  /**< The whole image (its aspect ratio is not kept). */
} ingot_image_crop_t;

/** Element type of the output. */
typedef enum ingot_image_dtype {
    INGOT_IMAGE_FLOAT32 = 0, /**< (pixel / 255 - mean[c]) / std[c]. */
    INGOT_IMAGE_UINT8   = 1  /**< Resampled pixels, rounded (normalise on the GPU). */
} ingot_image_dtype_t;

/** Order of the output's elements. */
typedef enum ingot_image_layout {
    INGOT_IMAGE_CHW = 0, /**< Channel planes, as PyTorch's convolutions take. */
    INGOT_IMAGE_HWC = 1  /**< Interleaved pixels, as DALI's and FFCV's uint8 outputs. */
} ingot_image_layout_t;

/** Which libjpeg-turbo DCT scales a JPEG may be decoded at. */
typedef enum ingot_image_dct {
    INGOT_IMAGE_DCT_FAST = 0, /**< 1/8, 1/4, 1/2, 1 (the scales with SIMD inverse DCTs). */
    INGOT_IMAGE_DCT_ANY  = 1, /**< Every M/8, M = 1..8 (the others run in plain C). */
    INGOT_IMAGE_DCT_OFF  = 2  /**< Always full size. */
} ingot_image_dct_t;

/** Default pixel limit: Pillow's MAX_IMAGE_PIXELS (89,478,485, 1/4 GiB of 24-bit pixels). */
#define INGOT_IMAGE_MAX_PIXELS_DEFAULT 89478485ull

/** Fields of ingot_vision_params_t. */
enum ingot_vision_params_field {
    INGOT_VISION_PARAM_FIELD_SIZE       = INGOT_BIT(0),  /**< height, width (required). */
    INGOT_VISION_PARAM_FIELD_FIELD      = INGOT_BIT(1),  /**< field. */
    INGOT_VISION_PARAM_FIELD_CHANNELS   = INGOT_BIT(2),  /**< channels (default 3). */
    INGOT_VISION_PARAM_FIELD_CROP       = INGOT_BIT(3),  /**< crop (default RANDOM). */
    INGOT_VISION_PARAM_FIELD_SCALE      = INGOT_BIT(4),  /**< scale (default 0.08, 1). */
    INGOT_VISION_PARAM_FIELD_RATIO      = INGOT_BIT(5),  /**< ratio (default 3/4, 4/3). */
    INGOT_VISION_PARAM_FIELD_FLIP       = INGOT_BIT(6),  /**< flip (default 0.5 / 0). */
    INGOT_VISION_PARAM_FIELD_RESIZE     = INGOT_BIT(7),  /**< resize (default 8/7 x size). */
    INGOT_VISION_PARAM_FIELD_NORMALIZE  = INGOT_BIT(8),  /**< mean, std (default 0, 1). */
    INGOT_VISION_PARAM_FIELD_DTYPE      = INGOT_BIT(9),  /**< dtype (default FLOAT32). */
    INGOT_VISION_PARAM_FIELD_LAYOUT     = INGOT_BIT(10), /**< layout (default CHW). */
    INGOT_VISION_PARAM_FIELD_MAX_PIXELS = INGOT_BIT(11), /**< max_pixels. */
    INGOT_VISION_PARAM_FIELD_SEED       = INGOT_BIT(12), /**< seed (default 0). */
    INGOT_VISION_PARAM_FIELD_DCT        = INGOT_BIT(13)  /**< dct (default FAST). */
};

/** Parameters of ingot_vision_create() (copied; unset fields take their defaults). */
typedef struct ingot_vision_params {
    uint64_t             field_mask; /**< ingot_vision_params_field bits. */
    uint32_t             height;     /**< Output rows (1 to 16384). */
    uint32_t             width;      /**< Output columns (1 to 16384). */
    const char          *field;      /**< Field holding the image; NULL: the first field named
                                          jpg, jpeg, png, ppm, pgm or pnm (any case), else the
                                          sample's first field. */
    uint32_t             channels;   /**< 3 (RGB) or 1 (grayscale: luma of colour images). */
    ingot_image_crop_t   crop;       /**< How the box is chosen. */
    float                scale[2];   /**< RANDOM: bounds of the crop's share of the image's
                                          area, 0 < scale[0] <= scale[1] <= 1. */
    float                ratio[2];   /**< RANDOM: bounds of the crop's width / height,
                                          0 < ratio[0] <= ratio[1] (drawn log-uniformly). */
    float                flip;       /**< Probability of a horizontal flip, 0 to 1 (default 0.5
                                          with RANDOM, 0 otherwise). */
    uint32_t             resize;     /**< CENTER: the shorter side before cropping, >= height
                                          and width (default round(max(height, width) * 8/7):
                                          256 for 224). */
    float                mean[3];    /**< FLOAT32: per channel, of pixel / 255 (finite). */
    float                std[3];     /**< FLOAT32: per channel, > 0. */
    ingot_image_dtype_t  dtype;      /**< Element type. */
    ingot_image_layout_t layout;     /**< Element order. */
    uint64_t             max_pixels; /**< Largest width x height a header may declare
                                          (default INGOT_IMAGE_MAX_PIXELS_DEFAULT; >= 1). */
    uint64_t             seed;       /**< Mixed with the loader's seed into every draw. */
    ingot_image_dct_t    dct;        /**< DCT scales a JPEG may be decoded at. */
} ingot_vision_params_t;

/**
 * @brief Check @p params and make a transform (pass it as transform_arg with
 *        ingot_transform_image_decode, and ingot_vision_out_size() as sample_out_size).
 * @param vision_p out: written only on success; destroy with ingot_vision_destroy() after every
 *                 loader using it.
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM naming the member, its value and what is accepted: no
 *         size, a size out of 1..16384, channels not 1 or 3, an unknown crop, dtype, layout or
 *         dct, a scale or ratio that cannot be satisfied (not finite, <= 0, min > max, a scale
 *         above 1), flip outside [0, 1], resize smaller than the crop, a mean that is not
 *         finite or a std that is not a positive finite number, max_pixels 0;
 *         INGOT_ERR_NO_MEMORY.
 * Thread-safe (independent transforms).
 */
INGOT_API ingot_status_t ingot_vision_create(const ingot_vision_params_t *params,
                                             ingot_vision_h              *vision_p);

/** @brief Output bytes per sample (height x width x channels x element size). Thread-safe. */
INGOT_API size_t ingot_vision_out_size(ingot_vision_h vision);

/**
 * @brief Free a transform and every scratch state it made. No call may be running on it (destroy
 *        the loaders using it first). Accepts NULL.
 */
INGOT_API void ingot_vision_destroy(ingot_vision_h vision);

/**
 * @brief The transform (an ingot_transform_fn_t; arg: an ingot_vision_h): decode the sample's
 *        image field, crop, resize, flip, convert, into @p out.
 *
 * Draws come from (sample->seed, the transform's seed, sample->epoch, sample->index); a view
 * whose field_mask lacks INGOT_SAMPLE_VIEW_FIELD_EPOCH / _SEED takes 0 for them.
 * Thread-safe: any number of threads may call it at once (each takes its own scratch state).
 * @return INGOT_OK; INGOT_ERR_FORMAT (no such field, an empty field, not a JPEG, PNG or binary
 *         PNM, a decoder error or warning, a PNM with maxval other than 255 or missing pixels);
 *         INGOT_ERR_OUT_OF_RANGE (the header declares more than max_pixels pixels);
 *         INGOT_ERR_NO_MEMORY (a scratch state could not grow); INGOT_ERR_INVALID_PARAM
 *         (out_size is not ingot_vision_out_size()). Each error is logged once naming the
 *         shard, key, offset and field.
 */
INGOT_API ingot_status_t ingot_transform_image_decode(const ingot_sample_view_t *sample, void *out,
                                                      size_t out_size, void *arg);

/** Fields of ingot_vision_stats_t. */
enum ingot_vision_stats_field {
    INGOT_VISION_STATS_FIELD_COUNTS = INGOT_BIT(0), /**< images .. pnm. */
    INGOT_VISION_STATS_FIELD_PIXELS = INGOT_BIT(1), /**< pixels_declared .. dct_scaled. */
    INGOT_VISION_STATS_FIELD_MEMORY = INGOT_BIT(2)  /**< states, scratch_bytes. */
};

/** What a transform did so far (ingot_vision_stats()); the caller sets field_mask. */
typedef struct ingot_vision_stats {
    uint64_t field_mask;      /**< In: ingot_vision_stats_field bits of the fields to write. */
    uint64_t images;          /**< Images transformed. */
    uint64_t jpeg, png, pnm;  /**< Of them, by format. */
    uint64_t pixels_declared; /**< Sum of the headers' width x height. */
    uint64_t pixels_decoded;  /**< Pixels the decoders produced (after DCT scaling and
                                   region decoding). */
    uint64_t dct_scaled;      /**< JPEGs decoded below full size. */
    uint64_t states;          /**< Scratch states made (the most calls ever at once). */
    uint64_t scratch_bytes;   /**< Bytes those states hold. */
} ingot_vision_stats_t;

/**
 * @brief Counters so far (approximate while calls run: each state's counters are read without
 *        stopping it).
 * @return INGOT_OK; INGOT_ERR_INVALID_PARAM for NULL arguments. Thread-safe.
 */
INGOT_API ingot_status_t ingot_vision_stats(ingot_vision_h vision, ingot_vision_stats_t *stats_p);

INGOT_END_DECLS

#endif /* INGOT_VISION_H */

/*
 * Helpers of the image transform's tests: make a transform from a few parameters, run it on one
 * image as a loader would (a sample view naming shard, key and offset), compare outputs.
 */
#ifndef INGOT_TEST_VISION_UTIL_H
#define INGOT_TEST_VISION_UTIL_H

#include "image_util.h"
#include "base/log.h"
#include <ingot/ingot.h>

#define VT_SHARD  "shard-000007.tar"
#define VT_KEY    "n01440764/img42"
#define VT_OFFSET 1536u
#define VT_SEED   7u

/** A transform of an @p h x @p w output, @p crop, uint8 HWC (exact comparisons) unless @p f32. */
static inline ingot_vision_h vt_make(uint32_t h, uint32_t w, uint32_t channels,
                                     ingot_image_crop_t crop, int f32, ingot_image_dct_t dct)
{
    ingot_vision_params_t p = {
        .field_mask = INGOT_VISION_PARAM_FIELD_SIZE | INGOT_VISION_PARAM_FIELD_CHANNELS |
                      INGOT_VISION_PARAM_FIELD_CROP | INGOT_VISION_PARAM_FIELD_DTYPE |
                      INGOT_VISION_PARAM_FIELD_LAYOUT | INGOT_VISION_PARAM_FIELD_DCT,
        .height = h,
        .width = w,
        .channels = channels,
        .crop = crop,
        .dtype = f32 ? INGOT_IMAGE_FLOAT32 : INGOT_IMAGE_UINT8,
        .layout = f32 ? INGOT_IMAGE_CHW : INGOT_IMAGE_HWC,
        .dct = dct};
    ingot_vision_h v = NULL;
    CHECK_OK(ingot_vision_create(&p, &v));
    return v;
}

/** Run @p v on one image as sample (@p index, @p epoch) of a loader with seed VT_SEED. */
static inline ingot_status_t vt_apply(ingot_vision_h v, const void *data, size_t len,
                                      uint64_t index, uint64_t epoch, void *out)
{
    ingot_field_view_t f[2] = {{.name = "cls", .data = "3", .len = 1},
                               {.name = "JPG", .data = data, .len = len}};
    ingot_sample_view_t s = {.index = index,
                             .key = VT_KEY,
                             .label = 3,
                             .field_count = 2,
                             .fields = f,
                             .field_mask = INGOT_SAMPLE_VIEW_FIELD_EPOCH |
                                           INGOT_SAMPLE_VIEW_FIELD_SEED |
                                           INGOT_SAMPLE_VIEW_FIELD_WHERE,
                             .epoch = epoch,
                             .seed = VT_SEED,
                             .shard = VT_SHARD,
                             .offset = VT_OFFSET};
    ingot_last_error_clear();
    return ingot_transform_image_decode(&s, out, ingot_vision_out_size(v), v);
}

/** Largest absolute difference of two uint8 buffers. */
static inline int vt_maxdiff(const uint8_t *a, const uint8_t *b, size_t n)
{
    int m = 0;
    for (size_t i = 0; i < n; i++) {
        int d = abs((int)a[i] - (int)b[i]);
        m = d > m ? d : m;
    }
    return m;
}

/** Mean absolute difference of two uint8 buffers. */
static inline double vt_meandiff(const uint8_t *a, const uint8_t *b, size_t n)
{
    double s = 0;
    for (size_t i = 0; i < n; i++) {
        s += abs((int)a[i] - (int)b[i]);
    }
    return n ? s / (double)n : 0.0;
}

#endif

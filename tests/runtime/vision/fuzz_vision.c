/*
 * libFuzzer target: the image decode transform over arbitrary bytes (JPEG headers, Huffman and
 * quantisation tables, progressive scans, PNG chunks and zlib streams, PNM headers), through a
 * colour random crop and a gray center crop of a small output. Must never crash, hang, read
 * out of bounds or allocate past the pixel limit's bound; errors are expected. The seeds
 * (corpus/) are small images of every format and coding the transform reads.
 */
#include <ingot/vision.h>
#include "common/fuzz.h"

#include <stdint.h>
#include <stdlib.h>

/** Small outputs and a pixel limit of 4 megapixels keep each run short and its memory small. */
#define FUZZ_VISION_SIDE       16
#define FUZZ_VISION_MAX_PIXELS (4u << 20)

static ingot_vision_h fuzz_vision(uint32_t channels, ingot_image_crop_t crop)
{
    ingot_vision_params_t p = {
        .field_mask = INGOT_VISION_PARAM_FIELD_SIZE | INGOT_VISION_PARAM_FIELD_CHANNELS |
                      INGOT_VISION_PARAM_FIELD_CROP | INGOT_VISION_PARAM_FIELD_MAX_PIXELS,
        .height = FUZZ_VISION_SIDE,
        .width = FUZZ_VISION_SIDE,
        .channels = channels,
        .crop = crop,
        .max_pixels = FUZZ_VISION_MAX_PIXELS};
    ingot_vision_h v = NULL;
    if (ingot_vision_create(&p, &v) != INGOT_OK) {
        abort();
    }
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static ingot_vision_h colour, gray; /* kept across inputs, as a loader keeps its transform */
    static float out[3 * FUZZ_VISION_SIDE * FUZZ_VISION_SIDE];
    fuzz_quiet();
    if (colour == NULL) {
        colour = fuzz_vision(3, INGOT_IMAGE_CROP_RANDOM);
        gray = fuzz_vision(1, INGOT_IMAGE_CROP_CENTER);
    }
    ingot_field_view_t f = {.name = "jpg", .data = data, .len = size};
    ingot_sample_view_t s = {.index = size, .key = "fuzz", .field_count = 1, .fields = &f};
    (void)ingot_transform_image_decode(&s, out, ingot_vision_out_size(colour), colour);
    (void)ingot_transform_image_decode(&s, out, ingot_vision_out_size(gray), gray);
    return 0;
}

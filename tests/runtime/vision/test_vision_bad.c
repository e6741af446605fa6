/*
 * Every bad input of the image transform (issue 26), each refused with a message naming the
 * shard, key, offset and field and what was wrong, the transform still decoding good images
 * afterwards with the same output: a zero-byte field, a file that is no image, a truncated
 * JPEG, a corrupt Huffman table, a 60,000 x 60,000 JPEG / PNG / PNM header (refused by the
 * pixel limit before any allocation: the scratch stays small), a configurable limit, a PNG with
 * a bad CRC or truncated, a PNM of another maxval or missing pixels, a missing field, the wrong
 * output size; and at create every crop configuration that cannot be satisfied and every other
 * bad parameter, named.
 */
#include "vision_util.h"
#include <math.h>
#include <zlib.h>

#define W 48
#define H 32

static ingot_vision_h v;
static uint8_t good_out[16 * 16 * 3];
static uint8_t *good;
static size_t good_len;

/* @p img (@p len bytes) is refused with @p want, the message naming where and @p what; a good
 * image still gives its output afterwards. */
static void refused(const uint8_t *img, size_t len, ingot_status_t want, const char *what)
{
    uint8_t out[16 * 16 * 3];
    CHECK_STATUS(vt_apply(v, img, len, 1, 0, out), want);
    const char *msg = ingot_last_error();
    CHECK_CONTAINS(msg, "shard '" VT_SHARD "' key '" VT_KEY "' offset 1536 field 'JPG'");
    CHECK_CONTAINS(msg, what);
    fprintf(stderr, "refused as expected: %s\n", msg);
    CHECK_OK(vt_apply(v, good, good_len, 1, 0, out));
    CHECK(memcmp(out, good_out, sizeof(out)) == 0);
}

/* Offset of the first marker @p m (0xff, m) after SOI, or 0. */
static size_t marker(const uint8_t *p, size_t len, uint8_t m)
{
    for (size_t i = 2; i + 1 < len; i++) {
        if (p[i] == 0xff && p[i + 1] == m) {
            return i;
        }
    }
    return 0;
}

static void test_jpeg_bad(void)
{
    uint8_t *rgb = img_pixels(W, H, 3, 1);
    size_t len;
    uint8_t *j = img_jpeg(rgb, W, H, (img_jpeg_opts_t){90, 0, 0, JCS_RGB}, &len);
    refused(j, 0, INGOT_ERR_FORMAT, "an empty field (0 bytes)");
    refused((const uint8_t *)"<?xml version=\"1.0\"?>", 21, INGOT_ERR_FORMAT,
            "not a JPEG, PNG or binary PNM image (21 bytes starting 3c 3f 78 6d)");
    refused(j, len * 6 / 10, INGOT_ERR_FORMAT, "JPEG: no end-of-image marker (ff d9)");
    refused(j, marker(j, len, 0xda) + 20, INGOT_ERR_FORMAT, "truncated?");
    uint8_t *bad = malloc(len);
    CHECK(bad != NULL);
    memcpy(bad, j, 40); /* ends inside the header, then an end marker: libjpeg's own error */
    bad[40] = 0xff;
    bad[41] = 0xd9;
    refused(bad, 42, INGOT_ERR_FORMAT, "JPEG: ");
    size_t cut = len * 6 / 10; /* entropy data cut short, then the end marker */
    memcpy(bad, j, cut);
    bad[cut] = 0xff;
    bad[cut + 1] = 0xd9;
    ingot_vision_h whole = vt_make(16, 16, 3, INGOT_IMAGE_CROP_NONE, 0, INGOT_IMAGE_DCT_OFF);
    uint8_t out[16 * 16 * 3];
    CHECK_STATUS(vt_apply(whole, bad, cut + 2, 0, 0, out), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "Corrupt JPEG data: premature end of data segment");
    ingot_vision_destroy(whole);
    memcpy(bad, j, len);
    size_t dht = marker(bad, len, 0xc4);
    CHECK(dht > 0);
    memset(bad + dht + 5, 0xff, 16); /* the code counts: far more than 256 codes */
    refused(bad, len, INGOT_ERR_FORMAT, "Bogus Huffman table definition");
    memcpy(bad, j, len);
    size_t sof = marker(bad, len, 0xc0);
    CHECK(sof > 0);
    bad[sof + 1] = 0xc3; /* lossless: libjpeg-turbo 2.1 does not decode it */
    refused(bad, len, INGOT_ERR_FORMAT, "JPEG: Unsupported JPEG process: SOF type 0xc3");
    bad[sof + 1] = 0xc0;
    bad[sof + 4] = 12; /* 12-bit samples */
    refused(bad, len, INGOT_ERR_FORMAT, "JPEG: Unsupported JPEG data precision 12");
    bad[sof + 4] = 8;
    bad[sof + 5] = bad[sof + 7] = 60000 >> 8; /* height, width: 60000 x 60000 */
    bad[sof + 6] = bad[sof + 8] = 60000 & 0xff;
    refused(bad, len, INGOT_ERR_OUT_OF_RANGE,
            "the header declares 60000x60000 = 3600000000 pixels, over the limit of 89478485");
    free(bad);
    free(j);
    free(rgb);
}

static void test_png_pnm_bad(void)
{
    uint8_t *rgb = img_pixels(W, H, 3, 2);
    size_t len;
    uint8_t *p = img_png(rgb, W, H, 3, 8, 0, &len);
    refused(p, len - 30, INGOT_ERR_FORMAT, "PNG: no IEND chunk");
    uint8_t *bad = malloc(len);
    CHECK(bad != NULL);
    memcpy(bad, p, len);
    bad[len / 2] ^= 0x55; /* inside IDAT: the rows decode to garbage */
    refused(bad, len, INGOT_ERR_FORMAT, "PNG: ");
    memcpy(bad, p, len);
    bad[len - 13] ^= 0x55; /* IDAT's own CRC (IEND, 12 bytes, follows): read by a full decode */
    ingot_vision_h whole = vt_make(16, 16, 3, INGOT_IMAGE_CROP_NONE, 0, INGOT_IMAGE_DCT_OFF);
    uint8_t out[16 * 16 * 3];
    CHECK_STATUS(vt_apply(whole, bad, len, 0, 0, out), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "PNG: IDAT: CRC error");
    ingot_vision_destroy(whole);
    memcpy(bad, p, len);
    for (int k = 0; k < 2; k++) { /* IHDR width, height at 16 and 20: 60000; CRC redone */
        bad[16 + 4 * k] = 0;
        bad[17 + 4 * k] = 0;
        bad[18 + 4 * k] = 60000 >> 8;
        bad[19 + 4 * k] = 60000 & 0xff;
    }
    uLong crc = crc32(crc32(0, NULL, 0), bad + 12, 17);
    for (int k = 0; k < 4; k++) {
        bad[29 + k] = (uint8_t)(crc >> (24 - 8 * k));
    }
    refused(bad, len, INGOT_ERR_OUT_OF_RANGE, "60000x60000 = 3600000000 pixels");
    static const char bomb[] = "P6\n60000 60000\n255\n\x01\x02\x03";
    refused((const uint8_t *)bomb, sizeof(bomb) - 1, INGOT_ERR_OUT_OF_RANGE,
            "declares 60000x60000");
    static const char deep[] = "P5 2 2 65535\n\x01\x02\x03\x04\x05\x06\x07\x08";
    refused((const uint8_t *)deep, sizeof(deep) - 1, INGOT_ERR_FORMAT, "maxval 65535");
    uint8_t *pnm = img_pnm(rgb, W, H, 3, &len);
    refused(pnm, len - 1, INGOT_ERR_FORMAT, "PNM: 4607 pixel bytes after the 13-byte header");
    free(pnm);
    free(bad);
    free(p);
    free(rgb);
}

/* Nothing image-sized was allocated for the bombs; a lower limit refuses a smaller image. */
static void test_limit(void)
{
    ingot_vision_stats_t s = {.field_mask = INGOT_VISION_STATS_FIELD_MEMORY};
    CHECK_OK(ingot_vision_stats(v, &s));
    CHECK(s.scratch_bytes < (4u << 20));
    ingot_vision_params_t p = {.field_mask = INGOT_VISION_PARAM_FIELD_SIZE |
                                             INGOT_VISION_PARAM_FIELD_MAX_PIXELS,
                               .height = 16,
                               .width = 16,
                               .max_pixels = W * H - 1};
    ingot_vision_h small;
    CHECK_OK(ingot_vision_create(&p, &small));
    float out[16 * 16 * 3];
    CHECK_STATUS(vt_apply(small, good, good_len, 0, 0, out), INGOT_ERR_OUT_OF_RANGE);
    CHECK_CONTAINS(ingot_last_error(), "48x32 = 1536 pixels, over the limit of 1535");
    ingot_vision_destroy(small);
    p.max_pixels = W * H;
    CHECK_OK(ingot_vision_create(&p, &small));
    CHECK_OK(vt_apply(small, good, good_len, 0, 0, out));
    ingot_field_view_t f = {.name = "jpg", .data = good, .len = good_len};
    ingot_sample_view_t sv = {.key = "k", .field_count = 1, .fields = &f};
    CHECK_STATUS(ingot_transform_image_decode(&sv, out, sizeof(out) - 4, small),
                 INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "sample_out_size 3068, expected 3072");
    ingot_vision_destroy(small);
    p.field_mask |= INGOT_VISION_PARAM_FIELD_FIELD;
    p.field = "png";
    CHECK_OK(ingot_vision_create(&p, &small));
    CHECK_STATUS(ingot_transform_image_decode(&sv, out, sizeof(out), small), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "shard '?' key 'k' offset 0 field '-': no field 'png'");
    ingot_vision_destroy(small);
}

/* One bad member at a time over good defaults: refused at create, naming it. */
static void bad_param(void (*set)(ingot_vision_params_t *), const char *what)
{
    ingot_vision_params_t p = {
        .field_mask = INGOT_VISION_PARAM_FIELD_SIZE, .height = 224, .width = 224};
    set(&p);
    ingot_vision_h x = (ingot_vision_h)(uintptr_t)1;
    CHECK_STATUS(ingot_vision_create(&p, &x), INGOT_ERR_INVALID_PARAM);
    CHECK(x == (ingot_vision_h)(uintptr_t)1); /* untouched */
    CHECK_CONTAINS(ingot_last_error(), what);
}

#define SET(_name, _body) \
    static void _name(ingot_vision_params_t *p) \
    { \
        _body; \
    }
SET(no_size, p->field_mask = 0)
SET(zero_h, p->height = 0)
SET(huge_w, p->width = 20000)
SET(two_ch, (p->field_mask |= INGOT_VISION_PARAM_FIELD_CHANNELS, p->channels = 2))
SET(scale_rev,
    (p->field_mask |= INGOT_VISION_PARAM_FIELD_SCALE, p->scale[0] = 0.9f, p->scale[1] = 0.2f))
SET(scale_big,
    (p->field_mask |= INGOT_VISION_PARAM_FIELD_SCALE, p->scale[0] = 0.5f, p->scale[1] = 1.5f))
SET(scale_zero,
    (p->field_mask |= INGOT_VISION_PARAM_FIELD_SCALE, p->scale[0] = 0.0f, p->scale[1] = 1.0f))
SET(ratio_neg,
    (p->field_mask |= INGOT_VISION_PARAM_FIELD_RATIO, p->ratio[0] = -1.0f, p->ratio[1] = 2.0f))
SET(ratio_nan,
    (p->field_mask |= INGOT_VISION_PARAM_FIELD_RATIO, p->ratio[0] = 0.5f, p->ratio[1] = NAN))
SET(flip_2, (p->field_mask |= INGOT_VISION_PARAM_FIELD_FLIP, p->flip = 2.0f))
SET(resize_small, (p->field_mask |= INGOT_VISION_PARAM_FIELD_CROP | INGOT_VISION_PARAM_FIELD_RESIZE,
                   p->crop = INGOT_IMAGE_CROP_CENTER, p->resize = 200))
SET(std_zero,
    (p->field_mask |= INGOT_VISION_PARAM_FIELD_NORMALIZE, p->std[0] = 1.0f, p->std[2] = 1.0f))
SET(crop_bad, (p->field_mask |= INGOT_VISION_PARAM_FIELD_CROP, p->crop = (ingot_image_crop_t)7))
SET(limit_zero, (p->field_mask |= INGOT_VISION_PARAM_FIELD_MAX_PIXELS, p->max_pixels = 0))

static void test_params(void)
{
    bad_param(no_size, "expected height and width in 1..16384");
    bad_param(zero_h, "output 224x0");
    bad_param(huge_w, "output 20000x224");
    bad_param(two_ch, "channels 2");
    bad_param(scale_rev, "scale (0.9, 0.2) cannot be satisfied");
    bad_param(scale_big, "scale (0.5, 1.5) cannot be satisfied");
    bad_param(scale_zero, "scale (0, 1) cannot be satisfied");
    bad_param(ratio_neg, "ratio (-1, 2) cannot be satisfied");
    bad_param(ratio_nan, "ratio (0.5, nan) cannot be satisfied");
    bad_param(flip_2, "flip 2: expected a probability in [0, 1]");
    bad_param(resize_small, "resize 200 is smaller than the 224x224 center crop");
    bad_param(std_zero, "channel 1: mean 0, std 0");
    bad_param(crop_bad, "crop 7");
    bad_param(limit_zero, "max_pixels 0");
    CHECK_STATUS(ingot_vision_create(NULL, &v), INGOT_ERR_INVALID_PARAM);
    CHECK(ingot_vision_out_size(NULL) == 0);
}

int main(void)
{
    uint8_t *rgb = img_pixels(W, H, 3, 7);
    good = img_jpeg(rgb, W, H, (img_jpeg_opts_t){90, 0, 0, JCS_RGB}, &good_len);
    v = vt_make(16, 16, 3, INGOT_IMAGE_CROP_RANDOM, 0, INGOT_IMAGE_DCT_FAST);
    CHECK_OK(vt_apply(v, good, good_len, 1, 0, good_out));
    test_jpeg_bad();
    test_png_pnm_bad();
    test_limit();
    test_params();
    ingot_vision_destroy(v);
    free(good);
    free(rgb);
    printf("vision bad input: ok\n");
    return 0;
}

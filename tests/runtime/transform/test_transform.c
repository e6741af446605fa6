/*
 * The built-in image transform (include/ingot/transform.h) without a loader: P5, P6 (planar
 * output from interleaved pixels) and raw pixels against values computed here, header comments,
 * and each bad input (parameters, another size or type or maxval, truncated or extra pixels, a
 * missing field, raw bytes of the wrong length) refused with a message naming the sample, the
 * field and what was found.
 */
#include "common/test.h"
#include "base/log.h"
#include <ingot/ingot.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#define H 3
#define W 2

static ingot_image_norm_t norm(uint32_t channels)
{
    ingot_image_norm_t n = {.field = "img",
                            .channels = channels,
                            .height = H,
                            .width = W,
                            .mean = {0.5f, 0.25f, 0.125f},
                            .std = {0.5f, 0.25f, 2.0f}};
    CHECK_OK(ingot_image_norm_prepare(&n));
    CHECK(n.out_size == (size_t)channels * H * W * sizeof(float));
    return n;
}

/* A sample with fields "cls" then "img" holding @p len bytes of @p img. */
static ingot_status_t run(ingot_image_norm_t *n, const void *img, size_t len, float *out)
{
    ingot_field_view_t f[2] = {{.name = "cls", .data = "3", .len = 1},
                               {.name = "img", .data = img, .len = len}};
    ingot_sample_view_t s = {.index = 7, .key = "k007", .label = 3, .field_count = 2, .fields = f};
    ingot_last_error_clear();
    return ingot_transform_image_norm(&s, out, n->out_size, n);
}

static size_t pnm(char *buf, const char *head, const unsigned char *px, size_t npx)
{
    size_t h = strlen(head);
    memcpy(buf, head, h);
    memcpy(buf + h, px, npx);
    return h + npx;
}

static void expect(const ingot_image_norm_t *n, const unsigned char *px, const float *out)
{
    for (uint32_t c = 0; c < n->channels; c++) {
        for (uint32_t k = 0; k < H * W; k++) {
            float want = ((float)px[k * n->channels + c] / 255.0f - n->mean[c]) / n->std[c];
            CHECK(fabsf(out[c * H * W + k] - want) < 1e-5f);
        }
    }
}

static void test_good(void)
{
    unsigned char px[H * W * 3];
    for (size_t i = 0; i < sizeof(px); i++) {
        px[i] = (unsigned char)(i * 37 + 11);
    }
    char buf[256];
    float out[H * W * 3];
    ingot_image_norm_t g = norm(1), rgb = norm(3);
    CHECK_OK(run(&g, buf, pnm(buf, "P5 2 3 255\n", px, H * W), out));
    expect(&g, px, out);
    CHECK_OK(run(&g, buf, pnm(buf, "P5\n# a comment\n2\t3 # another\n255\r", px, H * W), out));
    expect(&g, px, out);
    CHECK_OK(run(&g, px, H * W, out)); /* raw */
    expect(&g, px, out);
    CHECK_OK(run(&rgb, buf, pnm(buf, "P6 2 3 255\n", px, sizeof(px)), out));
    expect(&rgb, px, out); /* interleaved in, planar out */
    CHECK_OK(run(&rgb, px, sizeof(px), out));
    expect(&rgb, px, out);
    /* field NULL: the first field, here the 1-byte "cls": not an image */
    g.field = NULL;
    CHECK_STATUS(run(&g, px, H * W, out), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "sample 'k007' field 'cls': 1 bytes are neither");
}

static void test_bad_params(void)
{
    ingot_image_norm_t n = {.channels = 0, .height = 1, .width = 1, .std = {1}};
    CHECK_STATUS(ingot_image_norm_prepare(&n), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "channels 0");
    n.channels = 5;
    CHECK_STATUS(ingot_image_norm_prepare(&n), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "channels 5");
    n = (ingot_image_norm_t){.channels = 1, .height = 0, .width = 1, .std = {1}};
    CHECK_STATUS(ingot_image_norm_prepare(&n), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "height 0");
    n = (ingot_image_norm_t){.channels = 2, .height = 1, .width = 1, .std = {1, 0}};
    CHECK_STATUS(ingot_image_norm_prepare(&n), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "channel 1: mean 0, std 0");
    n = (ingot_image_norm_t){.channels = 1, .height = 1, .width = 1, .mean = {NAN}, .std = {1}};
    CHECK_STATUS(ingot_image_norm_prepare(&n), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "mean nan");
    n = (ingot_image_norm_t){.channels = 4, .height = 65536, .width = 65536, .std = {1, 1, 1, 1}};
    CHECK_STATUS(ingot_image_norm_prepare(&n), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "more than 2 GiB");
    CHECK_STATUS(ingot_image_norm_prepare(NULL), INGOT_ERR_INVALID_PARAM);
}

static void test_bad_images(void)
{
    unsigned char px[64] = {0};
    char buf[256];
    float out[H * W * 3];
    ingot_image_norm_t g = norm(1);
    CHECK_STATUS(run(&g, buf, pnm(buf, "P5 3 2 255\n", px, H * W), out), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(),
                   "sample 'k007' field 'img': a 3x2 P5 image with maxval 255, expected 2x3");
    CHECK_STATUS(run(&g, buf, pnm(buf, "P6 2 3 255\n", px, H * W * 3), out), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "a 2x3 P6 image");
    CHECK_STATUS(run(&g, buf, pnm(buf, "P5 2 3 65535\n", px, H * W * 2), out), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "maxval 65535");
    CHECK_STATUS(run(&g, buf, pnm(buf, "P5 2 3 255\n", px, H * W - 1), out), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "5 pixel bytes after the 11-byte header, expected 6");
    CHECK_STATUS(run(&g, buf, pnm(buf, "P5 2 3 255\n", px, H * W + 1), out), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "7 pixel bytes");
    CHECK_STATUS(run(&g, px, H * W + 2, out), INGOT_ERR_FORMAT); /* raw of another length */
    CHECK_CONTAINS(ingot_last_error(), "8 bytes are neither a binary PNM (P5/P6) nor 3 x 2 x 1");
    CHECK_STATUS(run(&g, "P5 2", 4, out), INGOT_ERR_FORMAT); /* a header cut short */
    CHECK_CONTAINS(ingot_last_error(), "4 bytes are neither");
    ingot_image_norm_t other = norm(1);
    other.field = "png";
    CHECK_STATUS(run(&other, px, H * W, out), INGOT_ERR_FORMAT);
    CHECK_CONTAINS(ingot_last_error(), "sample 'k007' has no field 'png'");
    ingot_field_view_t f = {.name = "img", .data = px, .len = H * W};
    ingot_sample_view_t s = {.key = "k", .field_count = 1, .fields = &f};
    CHECK_STATUS(ingot_transform_image_norm(&s, out, g.out_size - 4, &g), INGOT_ERR_INVALID_PARAM);
    CHECK_CONTAINS(ingot_last_error(), "sample_out_size 20, expected 24");
    ingot_image_norm_t unprepared = {.channels = 1, .height = H, .width = W, .std = {1}};
    CHECK_STATUS(ingot_transform_image_norm(&s, out, 24, &unprepared), INGOT_ERR_INVALID_PARAM);
}

int main(void)
{
    test_good();
    test_bad_params();
    test_bad_images();
    printf("test_transform: ok\n");
    return 0;
}

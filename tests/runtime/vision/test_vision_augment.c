/*
 * The image transform's draws (runtime/vision/augment.c): the same (seed, transform seed,
 * epoch, index) give the same box, any other key another one; RandomResizedCrop's boxes stay in
 * the image, their area share and aspect within scale and ratio (up to rounding), spanning
 * them; torchvision's central fallback for images no draw fits; the center
 * crop's box for Resize(256) + CenterCrop(224); the flip's rate; the DCT scale chosen for a box;
 * and a flip mirrors the output exactly.
 */
#include "vision_util.h"
#include "runtime/vision/vision_impl.h"
#include <math.h>

static int box_eq(const vision_box_t *a, const vision_box_t *b)
{
    return a->x == b->x && a->y == b->y && a->w == b->w && a->h == b->h && a->flip == b->flip;
}

static void test_keys(void)
{
    ingot_vision_h v = vt_make(224, 224, 3, INGOT_IMAGE_CROP_RANDOM, 1, INGOT_IMAGE_DCT_FAST);
    vision_box_t a, b;
    ingot_vision_box_draw(v, 1, 2, 3, 500, 375, &a);
    ingot_vision_box_draw(v, 1, 2, 3, 500, 375, &b);
    CHECK(box_eq(&a, &b));
    int same = 0;
    for (uint64_t k = 0; k < 100; k++) { /* another index, epoch or seed: another box */
        ingot_vision_box_draw(v, 1, 2, 1000 + k, 500, 375, &b);
        same += box_eq(&a, &b);
        ingot_vision_box_draw(v, 1, 3 + k, 3, 500, 375, &b);
        same += box_eq(&a, &b);
        ingot_vision_box_draw(v, 2 + k, 2, 3, 500, 375, &b);
        same += box_eq(&a, &b);
    }
    CHECK(same <= 1);
    ingot_vision_params_t p = {.field_mask = INGOT_VISION_PARAM_FIELD_SIZE |
                                             INGOT_VISION_PARAM_FIELD_SEED,
                               .height = 224,
                               .width = 224,
                               .seed = 99};
    ingot_vision_h v2;
    CHECK_OK(ingot_vision_create(&p, &v2)); /* the transform's own seed changes the draws too */
    ingot_vision_box_draw(v2, 1, 2, 3, 500, 375, &b);
    CHECK(!box_eq(&a, &b));
    ingot_vision_destroy(v2);
    ingot_vision_destroy(v);
}

static void test_random_boxes(void)
{
    ingot_vision_h v = vt_make(224, 224, 3, INGOT_IMAGE_CROP_RANDOM, 1, INGOT_IMAGE_DCT_FAST);
    double share_sum = 0, share_min = 1, share_max = 0;
    int flips = 0, n = 4000;
    for (int i = 0; i < n; i++) {
        vision_box_t b;
        ingot_vision_box_draw(v, 5, 0, (uint64_t)i, 500, 375, &b);
        CHECK(b.w >= 1 && b.h >= 1 && b.x >= 0 && b.y >= 0);
        CHECK(b.x + b.w <= 500 && b.y + b.h <= 375);
        CHECK(b.x == floor(b.x) && b.w == floor(b.w)); /* whole pixels, as torchvision's */
        double share = b.w * b.h / (500.0 * 375.0), ratio = b.w / b.h;
        CHECK(share >= 0.08 * 0.95 && share <= 1.0);
        CHECK(ratio >= 0.75 * 0.97 && ratio <= 4.0 / 3.0 * 1.03);
        share_sum += share;
        share_min = share < share_min ? share : share_min;
        share_max = share > share_max ? share : share_max;
        flips += b.flip;
    }
    double mean = share_sum / n;
    fprintf(stderr, "mean area share %.3f, flip rate %.3f\n", mean, (double)flips / n);
    /* below (0.08 + 1) / 2: large shares at extreme aspects do not fit a 4:3 image and are
     * drawn again, as in torchvision */
    CHECK(mean > 0.38 && mean < 0.60 && share_min < 0.1 && share_max > 0.95);
    CHECK(flips > n * 0.46 && flips < n * 0.54);
    /* no draw fits a 1000 x 10 strip: the central fallback, width 10 * 4/3 rounded */
    vision_box_t b;
    ingot_vision_box_draw(v, 5, 0, 77, 1000, 10, &b);
    CHECK(b.w == 13 && b.h == 10 && b.x == 493 && b.y == 0);
    ingot_vision_box_draw(v, 5, 0, 77, 10, 1000, &b);
    CHECK(b.w == 10 && b.h == 13 && b.x == 0 && b.y == 493);
    ingot_vision_destroy(v);
}

static void test_center_and_flip_rates(void)
{
    ingot_vision_h v = vt_make(224, 224, 3, INGOT_IMAGE_CROP_CENTER, 1, INGOT_IMAGE_DCT_FAST);
    vision_box_t b;
    /* Resize(256): 500x375 -> 341x256; CenterCrop(224): left round(58.5) = 58, top 16 */
    ingot_vision_box_draw(v, 5, 0, 1, 500, 375, &b);
    CHECK(fabs(b.x - 58 * 500.0 / 341) < 1e-9 && fabs(b.y - 16 * 375.0 / 256) < 1e-9);
    CHECK(fabs(b.w - 224 * 500.0 / 341) < 1e-9 && fabs(b.h - 224 * 375.0 / 256) < 1e-9);
    CHECK(b.flip == 0);
    ingot_vision_destroy(v);
    for (int f = 0; f <= 1; f++) {
        ingot_vision_params_t p = {.field_mask = INGOT_VISION_PARAM_FIELD_SIZE |
                                                 INGOT_VISION_PARAM_FIELD_FLIP,
                                   .height = 8,
                                   .width = 8,
                                   .flip = (float)f};
        CHECK_OK(ingot_vision_create(&p, &v));
        for (uint64_t i = 0; i < 200; i++) {
            ingot_vision_box_draw(v, 5, 0, i, 64, 64, &b);
            CHECK(b.flip == f);
        }
        ingot_vision_destroy(v);
    }
}

static void test_dct_choice(void)
{
    ingot_vision_h fast = vt_make(224, 224, 3, INGOT_IMAGE_CROP_RANDOM, 1, INGOT_IMAGE_DCT_FAST);
    ingot_vision_h any = vt_make(224, 224, 3, INGOT_IMAGE_CROP_RANDOM, 1, INGOT_IMAGE_DCT_ANY);
    ingot_vision_h off = vt_make(224, 224, 3, INGOT_IMAGE_CROP_RANDOM, 1, INGOT_IMAGE_DCT_OFF);
    vision_box_t b = {0, 0, 448, 448, 0};
    CHECK(ingot_vision_dct_scale(fast, &b) == 4 && ingot_vision_dct_scale(any, &b) == 4);
    CHECK(ingot_vision_dct_scale(off, &b) == 8);
    b.w = 447; /* 447 * 4/8 < 224: FAST takes full size, ANY 5/8 */
    CHECK(ingot_vision_dct_scale(fast, &b) == 8 && ingot_vision_dct_scale(any, &b) == 5);
    b = (vision_box_t){0, 0, 4000, 1800, 0};
    CHECK(ingot_vision_dct_scale(fast, &b) == 1 && ingot_vision_dct_scale(any, &b) == 1);
    b.h = 1700; /* 1700 / 8 < 224 */
    CHECK(ingot_vision_dct_scale(fast, &b) == 2 && ingot_vision_dct_scale(any, &b) == 2);
    ingot_vision_destroy(fast);
    ingot_vision_destroy(any);
    ingot_vision_destroy(off);
}

/* flip 1 with no crop: each row reversed, exactly. */
static void test_flip_mirrors(void)
{
    ingot_vision_params_t p = {
        .field_mask = INGOT_VISION_PARAM_FIELD_SIZE | INGOT_VISION_PARAM_FIELD_CROP |
                      INGOT_VISION_PARAM_FIELD_FLIP | INGOT_VISION_PARAM_FIELD_DTYPE |
                      INGOT_VISION_PARAM_FIELD_LAYOUT,
        .height = 12,
        .width = 20,
        .crop = INGOT_IMAGE_CROP_NONE,
        .flip = 1.0f,
        .dtype = INGOT_IMAGE_UINT8,
        .layout = INGOT_IMAGE_CHW};
    ingot_vision_h v;
    CHECK_OK(ingot_vision_create(&p, &v));
    uint8_t *rgb = img_pixels(20, 12, 3, 3), out[12 * 20 * 3];
    size_t len;
    uint8_t *img = img_pnm(rgb, 20, 12, 3, &len);
    CHECK_OK(vt_apply(v, img, len, 0, 0, out));
    for (uint32_t c = 0; c < 3; c++) { /* CHW planes of the mirrored image */
        for (uint32_t y = 0; y < 12; y++) {
            for (uint32_t x = 0; x < 20; x++) {
                CHECK(out[(c * 12 + y) * 20 + x] == rgb[(y * 20 + (19 - x)) * 3 + c]);
            }
        }
    }
    ingot_vision_destroy(v);
    free(img);
    free(rgb);
}

int main(void)
{
    test_keys();
    test_random_boxes();
    test_center_and_flip_rates();
    test_dct_choice();
    test_flip_mirrors();
    printf("vision augment: ok\n");
    return 0;
}

/*
 * The image transform's decoding against references (include/ingot/vision.h): PNM and PNG (8-
 * and 16-bit, gray, RGBA, interlaced) resized to their own size give their pixels exactly;
 * float32 output is (pixel / 255 - mean) / std in [C, H, W]; a JPEG gives libjpeg's own full
 * decode; progressive and arithmetic-coded JPEGs of the same coefficients give the baseline's
 * pixels; grayscale JPEGs become RGB and CMYK (Adobe) JPEGs RGB; region decoding (a random crop
 * of a JPEG) equals the same crop of the fully decoded pixels; DCT-scaled decoding stays close
 * to the full-size path and is counted; the AVX2 resampling loops give the generic ones'
 * values; concurrent calls give the serial outputs, and scratch
 * stops growing once the largest image has been seen.
 */
#include "vision_util.h"
#include "runtime/vision/vision_impl.h"
#include <math.h>
#include <pthread.h>

#define W 48
#define H 32

/* Resized to its own size with no crop: exactly its pixels, for every lossless input. */
static void test_lossless_identity(void)
{
    uint8_t *rgb = img_pixels(W, H, 3, 1), *gray = img_pixels(W, H, 1, 2);
    uint8_t *rgba = img_pixels(W, H, 4, 3), *w16 = malloc((size_t)W * H * 3 * 2);
    uint8_t out[W * H * 3];
    size_t len;
    CHECK(w16 != NULL);
    for (size_t i = 0; i < (size_t)W * H * 3; i++) { /* big-endian 16-bit, high byte = rgb */
        w16[2 * i] = rgb[i];
        w16[2 * i + 1] = rgb[i];
    }
    ingot_vision_h v3 = vt_make(H, W, 3, INGOT_IMAGE_CROP_NONE, 0, INGOT_IMAGE_DCT_OFF);
    ingot_vision_h v1 = vt_make(H, W, 1, INGOT_IMAGE_CROP_NONE, 0, INGOT_IMAGE_DCT_OFF);
    uint8_t *img = img_pnm(rgb, W, H, 3, &len);
    CHECK_OK(vt_apply(v3, img, len, 0, 0, out));
    CHECK(memcmp(out, rgb, sizeof(out)) == 0);
    free(img);
    img = img_pnm(gray, W, H, 1, &len);
    CHECK_OK(vt_apply(v1, img, len, 0, 0, out));
    CHECK(memcmp(out, gray, (size_t)W * H) == 0);
    CHECK_OK(vt_apply(v3, img, len, 0, 0, out)); /* gray to RGB */
    for (size_t i = 0; i < (size_t)W * H; i++) {
        CHECK(out[3 * i] == gray[i] && out[3 * i + 1] == gray[i] && out[3 * i + 2] == gray[i]);
    }
    free(img);
    for (int interlace = 0; interlace < 2; interlace++) {
        img = img_png(rgb, W, H, 3, 8, interlace, &len);
        CHECK_OK(vt_apply(v3, img, len, 0, 0, out));
        CHECK(memcmp(out, rgb, sizeof(out)) == 0);
        free(img);
    }
    img = img_png(w16, W, H, 3, 16, 0, &len); /* 16-bit: scaled to 8 (v * 257 -> v) */
    CHECK_OK(vt_apply(v3, img, len, 0, 0, out));
    CHECK(memcmp(out, rgb, sizeof(out)) == 0);
    free(img);
    img = img_png(rgba, W, H, 4, 8, 0, &len); /* alpha dropped */
    CHECK_OK(vt_apply(v3, img, len, 0, 0, out));
    for (size_t i = 0; i < (size_t)W * H; i++) {
        CHECK(memcmp(out + 3 * i, rgba + 4 * i, 3) == 0);
    }
    free(img);
    img = img_png(gray, W, H, 1, 8, 0, &len);
    CHECK_OK(vt_apply(v1, img, len, 0, 0, out));
    CHECK(memcmp(out, gray, (size_t)W * H) == 0);
    free(img);
    ingot_vision_destroy(v1);
    ingot_vision_destroy(v3);
    free(rgb);
    free(gray);
    free(rgba);
    free(w16);
}

/* float32 [C, H, W] = (pixel / 255 - mean) / std. */
static void test_float_chw(void)
{
    ingot_vision_params_t p = {.field_mask = INGOT_VISION_PARAM_FIELD_SIZE |
                                             INGOT_VISION_PARAM_FIELD_CROP |
                                             INGOT_VISION_PARAM_FIELD_NORMALIZE,
                               .height = H,
                               .width = W,
                               .crop = INGOT_IMAGE_CROP_NONE,
                               .mean = {0.485f, 0.456f, 0.406f},
                               .std = {0.229f, 0.224f, 0.225f}};
    ingot_vision_h v;
    CHECK_OK(ingot_vision_create(&p, &v));
    CHECK(ingot_vision_out_size(v) == (size_t)3 * H * W * sizeof(float));
    uint8_t *rgb = img_pixels(W, H, 3, 5);
    size_t len;
    uint8_t *img = img_pnm(rgb, W, H, 3, &len);
    float *out = malloc(ingot_vision_out_size(v));
    CHECK(out != NULL);
    CHECK_OK(vt_apply(v, img, len, 0, 0, out));
    for (uint32_t c = 0; c < 3; c++) {
        for (size_t k = 0; k < (size_t)H * W; k++) {
            float want = ((float)rgb[k * 3 + c] / 255.0f - p.mean[c]) / p.std[c];
            CHECK(fabsf(out[c * H * W + k] - want) < 1e-4f);
        }
    }
    ingot_vision_destroy(v);
    free(out);
    free(img);
    free(rgb);
}

/* A JPEG resized to its own size: libjpeg's decode; progressive and arithmetic codings of the
 * same image: the same pixels; grayscale to RGB. */
static void test_jpeg_codings(void)
{
    uint8_t *rgb = img_pixels(W, H, 3, 9);
    uint8_t out[W * H * 3], ref_out[W * H * 3];
    size_t len;
    uint32_t w, h;
    ingot_vision_h v3 = vt_make(H, W, 3, INGOT_IMAGE_CROP_NONE, 0, INGOT_IMAGE_DCT_OFF);
    uint8_t *base = img_jpeg(rgb, W, H, (img_jpeg_opts_t){90, 0, 0, JCS_RGB}, &len);
    uint8_t *ref = img_jpeg_decode(base, len, 3, &w, &h);
    CHECK(w == W && h == H);
    CHECK_OK(vt_apply(v3, base, len, 0, 0, ref_out));
    CHECK(memcmp(ref_out, ref, sizeof(ref_out)) == 0);
    free(base);
    for (int k = 0; k < 3; k++) { /* progressive, arithmetic, both */
        img_jpeg_opts_t o = {90, k != 1, k != 0, JCS_RGB};
        uint8_t *j = img_jpeg(rgb, W, H, o, &len);
        CHECK_OK(vt_apply(v3, j, len, 0, 0, out));
        CHECK(memcmp(out, ref_out, sizeof(out)) == 0);
        free(j);
    }
    uint8_t *gray = img_pixels(W, H, 1, 4);
    uint8_t *gj = img_jpeg(gray, W, H, (img_jpeg_opts_t){95, 0, 0, JCS_GRAYSCALE}, &len);
    uint8_t *gref = img_jpeg_decode(gj, len, 1, &w, &h);
    CHECK_OK(vt_apply(v3, gj, len, 0, 0, out));
    for (size_t i = 0; i < (size_t)W * H; i++) {
        CHECK(out[3 * i] == gref[i] && out[3 * i + 1] == gref[i] && out[3 * i + 2] == gref[i]);
    }
    ingot_vision_destroy(v3);
    free(gj);
    free(gref);
    free(gray);
    free(ref);
    free(rgb);
}

/* CMYK as Photoshop writes it (Adobe marker, inverted values): pure colours come out RGB. */
static void test_jpeg_cmyk(void)
{
    static const uint8_t inks[4][4] = {
        {255, 0, 0, 255}, {0, 255, 0, 255}, {255, 255, 0, 255}, {255, 255, 255, 0}};
    static const uint8_t rgb[4][3] = {{255, 0, 0}, {0, 255, 0}, {255, 255, 0}, {0, 0, 0}};
    uint8_t px[16 * 16 * 4], out[16 * 16 * 3], luma[16 * 16];
    for (int q = 0; q < 4; q++) {
        for (int i = 0; i < 16 * 16; i++) {
            memcpy(px + 4 * i, inks[q], 4);
        }
        size_t len;
        uint8_t *j = img_jpeg(px, 16, 16, (img_jpeg_opts_t){100, 0, 0, JCS_CMYK}, &len);
        ingot_vision_h v = vt_make(16, 16, 3, INGOT_IMAGE_CROP_NONE, 0, INGOT_IMAGE_DCT_OFF);
        ingot_vision_h v1 = vt_make(16, 16, 1, INGOT_IMAGE_CROP_NONE, 0, INGOT_IMAGE_DCT_OFF);
        CHECK_OK(vt_apply(v, j, len, 0, 0, out));
        CHECK_OK(vt_apply(v1, j, len, 0, 0, luma));
        for (int c = 0; c < 3; c++) {
            CHECK(abs((int)out[8 * 16 * 3 + 8 * 3 + c] - rgb[q][c]) <= 3);
        }
        int y = (rgb[q][0] * 299 + rgb[q][1] * 587 + rgb[q][2] * 114) / 1000;
        CHECK(abs((int)luma[8 * 16 + 8] - y) <= 3);
        ingot_vision_destroy(v);
        ingot_vision_destroy(v1);
        free(j);
    }
}

/* Random crops of a JPEG decoded by region (columns by iMCU, rows skipped above and left below)
 * equal the same crops of the whole image's pixels (a PNM of libjpeg's full decode). */
static void test_jpeg_region(void)
{
    uint32_t iw = 301, ih = 203, w, h;
    uint8_t *rgb = img_pixels(iw, ih, 3, 11);
    size_t jlen, plen;
    for (int sub = 0; sub < 2; sub++) { /* 4:2:0 (the default) and 4:4:4 (quality 100) */
        uint8_t *j = img_jpeg(rgb, iw, ih, (img_jpeg_opts_t){sub ? 100 : 85, 0, 0, JCS_RGB}, &jlen);
        uint8_t *full = img_jpeg_decode(j, jlen, 3, &w, &h);
        uint8_t *pnm = img_pnm(full, w, h, 3, &plen);
        ingot_vision_h v = vt_make(40, 56, 3, INGOT_IMAGE_CROP_RANDOM, 0, INGOT_IMAGE_DCT_OFF);
        uint8_t a[40 * 56 * 3], b[40 * 56 * 3];
        for (uint64_t i = 0; i < 64; i++) {
            CHECK_OK(vt_apply(v, j, jlen, i, 1, a));
            CHECK_OK(vt_apply(v, pnm, plen, i, 1, b));
            if (vt_maxdiff(a, b, sizeof(a)) > 0) {
                fprintf(stderr, "sample %llu (4:%s): region decode differs by %d\n",
                        (unsigned long long)i, sub ? "4:4" : "2:0", vt_maxdiff(a, b, sizeof(a)));
                exit(1);
            }
        }
        ingot_vision_stats_t s = {.field_mask = INGOT_VISION_STATS_FIELD_PIXELS};
        CHECK_OK(ingot_vision_stats(v, &s));
        CHECK(s.pixels_decoded < s.pixels_declared); /* the regions are smaller */
        ingot_vision_destroy(v);
        free(j);
        free(full);
        free(pnm);
    }
    free(rgb);
}

/* Scaled decoding: a 512 x 384 JPEG to 64 x 48 decodes at 1/8 and stays close to the
 * full-size path (both are antialiased downscales of the same image). */
static void test_jpeg_dct_scaled(void)
{
    uint8_t *rgb = img_pixels(512, 384, 3, 13);
    size_t len;
    uint8_t *j = img_jpeg(rgb, 512, 384, (img_jpeg_opts_t){90, 0, 0, JCS_RGB}, &len);
    ingot_vision_h fast = vt_make(48, 64, 3, INGOT_IMAGE_CROP_NONE, 0, INGOT_IMAGE_DCT_FAST);
    ingot_vision_h any = vt_make(48, 64, 3, INGOT_IMAGE_CROP_NONE, 0, INGOT_IMAGE_DCT_ANY);
    ingot_vision_h off = vt_make(48, 64, 3, INGOT_IMAGE_CROP_NONE, 0, INGOT_IMAGE_DCT_OFF);
    uint8_t a[48 * 64 * 3], b[48 * 64 * 3], c[48 * 64 * 3];
    CHECK_OK(vt_apply(fast, j, len, 0, 0, a));
    CHECK_OK(vt_apply(any, j, len, 0, 0, b));
    CHECK_OK(vt_apply(off, j, len, 0, 0, c));
    CHECK(memcmp(a, b, sizeof(a)) == 0); /* 1/8 is in both sets */
    double d = vt_meandiff(a, c, sizeof(a));
    fprintf(stderr, "1/8 DCT decode vs full: mean |diff| %.2f, max %d\n", d,
            vt_maxdiff(a, c, sizeof(a)));
    CHECK(d < 3.0);
    ingot_vision_stats_t s = {.field_mask = INGOT_VISION_STATS_FIELD_PIXELS |
                                            INGOT_VISION_STATS_FIELD_COUNTS};
    CHECK_OK(ingot_vision_stats(fast, &s));
    CHECK(s.images == 1 && s.jpeg == 1 && s.dct_scaled == 1);
    CHECK(s.pixels_declared == 512 * 384 && s.pixels_decoded == 64 * 48);
    CHECK_OK(ingot_vision_stats(off, &s));
    CHECK(s.dct_scaled == 0 && s.pixels_decoded == 512 * 384);
    ingot_vision_destroy(fast);
    ingot_vision_destroy(any);
    ingot_vision_destroy(off);
    free(j);
    free(rgb);
}

/* The AVX2/FMA resampling loops (where the CPU has them) against the generic ones: the same
 * pixels, but for the rounding of fused multiply-adds. */
static void test_simd_generic(void)
{
    uint8_t *rgb = img_pixels(300, 200, 3, 21);
    size_t len;
    uint8_t *j = img_jpeg(rgb, 300, 200, (img_jpeg_opts_t){90, 0, 0, JCS_RGB}, &len);
    ingot_vision_h v = vt_make(64, 80, 3, INGOT_IMAGE_CROP_RANDOM, 1, INGOT_IMAGE_DCT_FAST);
    size_t n = ingot_vision_out_size(v) / sizeof(float);
    float *a = malloc(n * sizeof(float)), *b = malloc(n * sizeof(float));
    CHECK(a != NULL && b != NULL);
    for (uint64_t i = 0; i < 16; i++) {
        ingot_vision_resample_simd(1);
        CHECK_OK(vt_apply(v, j, len, i, 0, a));
        ingot_vision_resample_simd(0);
        CHECK_OK(vt_apply(v, j, len, i, 0, b));
        for (size_t k = 0; k < n; k++) {
            CHECK(fabsf(a[k] - b[k]) < 1e-4f);
        }
    }
    ingot_vision_resample_simd(1);
    ingot_vision_destroy(v);
    free(a);
    free(b);
    free(j);
    free(rgb);
}

/* Concurrent calls: the serial outputs; one state per concurrent call at most; scratch stops
 * growing after the first pass over the images. */
#define VT_THREADS 4
#define VT_CALLS   48
typedef struct vt_job {
    ingot_vision_h v;
    const uint8_t *img;
    size_t len;
    const uint8_t *want; /* VT_CALLS outputs */
    int bad;
} vt_job_t;

static void *vt_worker(void *arg)
{
    vt_job_t *j = arg;
    uint8_t out[32 * 32 * 3];
    for (uint64_t i = 0; i < VT_CALLS; i++) {
        if (vt_apply(j->v, j->img, j->len, i, 2, out) != INGOT_OK ||
            memcmp(out, j->want + i * sizeof(out), sizeof(out)) != 0) {
            j->bad++;
        }
    }
    return NULL;
}

static void test_threads(void)
{
    uint8_t *rgb = img_pixels(160, 120, 3, 17);
    size_t len, osz = 32 * 32 * 3;
    uint8_t *img = img_jpeg(rgb, 160, 120, (img_jpeg_opts_t){90, 0, 0, JCS_RGB}, &len);
    ingot_vision_h v = vt_make(32, 32, 3, INGOT_IMAGE_CROP_RANDOM, 0, INGOT_IMAGE_DCT_FAST);
    uint8_t *want = malloc(VT_CALLS * osz);
    CHECK(want != NULL);
    for (uint64_t i = 0; i < VT_CALLS; i++) {
        CHECK_OK(vt_apply(v, img, len, i, 2, want + i * osz));
    }
    ingot_vision_stats_t s = {.field_mask = INGOT_VISION_STATS_FIELD_MEMORY};
    CHECK_OK(ingot_vision_stats(v, &s));
    uint64_t bytes = s.scratch_bytes;
    CHECK(s.states == 1);
    pthread_t t[VT_THREADS];
    vt_job_t jobs[VT_THREADS];
    for (int k = 0; k < VT_THREADS; k++) {
        jobs[k] = (vt_job_t){v, img, len, want, 0};
        CHECK(pthread_create(&t[k], NULL, vt_worker, &jobs[k]) == 0);
    }
    for (int k = 0; k < VT_THREADS; k++) {
        pthread_join(t[k], NULL);
        CHECK(jobs[k].bad == 0);
    }
    CHECK_OK(ingot_vision_stats(v, &s));
    CHECK(s.states >= 1 && s.states <= VT_THREADS + 1);
    uint64_t per_state = bytes, after = s.scratch_bytes;
    for (int pass = 0; pass < 2; pass++) { /* steady state: no growth */
        for (uint64_t i = 0; i < VT_CALLS; i++) {
            CHECK_OK(vt_apply(v, img, len, i, 2, want));
        }
    }
    CHECK_OK(ingot_vision_stats(v, &s));
    CHECK(s.scratch_bytes == after && after <= per_state * s.states);
    ingot_vision_destroy(v);
    free(want);
    free(img);
    free(rgb);
}

int main(void)
{
    test_lossless_identity();
    test_float_chw();
    test_jpeg_codings();
    test_jpeg_cmyk();
    test_jpeg_region();
    test_jpeg_dct_scaled();
    test_simd_generic();
    test_threads();
    ingot_vision_destroy(NULL);
    printf("vision decode: ok\n");
    return 0;
}

/*
 * Test images made in memory with the real encoders (libjpeg-turbo's compressor, libpng's
 * writer): JPEG baseline, progressive, arithmetic-coded, grayscale and CMYK; PNG 8- and 16-bit,
 * gray, palette-free RGB, interlaced; binary PNM. Pixels are smooth gradients with some texture,
 * so crops and scales differ visibly. Each maker returns a malloc'd buffer (exits on error).
 */
#ifndef INGOT_TEST_VISION_IMAGE_UTIL_H
#define INGOT_TEST_VISION_IMAGE_UTIL_H

#include "common/test.h"
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <jpeglib.h>

/** Interleaved pixels of a w x h image with @p c channels (1, 3 or 4), malloc'd. */
static inline uint8_t *img_pixels(uint32_t w, uint32_t h, uint32_t c, uint32_t salt)
{
    uint8_t *p = malloc((size_t)w * h * c);
    CHECK(p != NULL);
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            for (uint32_t k = 0; k < c; k++) {
                uint32_t v = (x * 255 / (w > 1 ? w - 1 : 1)) * (k % 3 == 0) +
                             (y * 255 / (h > 1 ? h - 1 : 1)) * (k % 3 == 1) +
                             ((x + y) * 4 + salt) * (k % 3 == 2) + ((x * 7 + y * 13 + salt) % 17);
                p[((size_t)y * w + x) * c + k] = (uint8_t)(v > 255 ? 255 : v);
            }
        }
    }
    return p;
}

/** How a JPEG is encoded. */
typedef struct img_jpeg_opts {
    int quality;      /* 1..100 */
    int progressive;  /* jpeg_simple_progression */
    int arithmetic;   /* arith_code */
    J_COLOR_SPACE in; /* JCS_RGB, JCS_GRAYSCALE or JCS_CMYK (Adobe marker written) */
} img_jpeg_opts_t;

/** A JPEG of @p px (channels as o->in says), its length in @p len_p. */
static inline uint8_t *img_jpeg(const uint8_t *px, uint32_t w, uint32_t h, img_jpeg_opts_t o,
                                size_t *len_p)
{
    struct jpeg_compress_struct c;
    struct jpeg_error_mgr e;
    unsigned char *buf = NULL;
    unsigned long len = 0;
    c.err = jpeg_std_error(&e);
    jpeg_create_compress(&c);
    jpeg_mem_dest(&c, &buf, &len);
    c.image_width = w;
    c.image_height = h;
    c.in_color_space = o.in;
    c.input_components = o.in == JCS_GRAYSCALE ? 1 : (o.in == JCS_CMYK ? 4 : 3);
    jpeg_set_defaults(&c);
    jpeg_set_quality(&c, o.quality, TRUE);
    if (o.progressive) {
        jpeg_simple_progression(&c);
    }
    c.arith_code = o.arithmetic ? TRUE : FALSE;
    jpeg_start_compress(&c, TRUE);
    size_t stride = (size_t)w * c.input_components;
    while (c.next_scanline < h) {
        JSAMPROW row = (JSAMPROW)(px + c.next_scanline * stride);
        jpeg_write_scanlines(&c, &row, 1);
    }
    jpeg_finish_compress(&c);
    jpeg_destroy_compress(&c);
    *len_p = len;
    return buf;
}

/** libjpeg's own full-size decode of @p data to @p channels (1 or 3), for comparisons. */
static inline uint8_t *img_jpeg_decode(const uint8_t *data, size_t len, uint32_t channels,
                                       uint32_t *w_p, uint32_t *h_p)
{
    struct jpeg_decompress_struct d;
    struct jpeg_error_mgr e;
    d.err = jpeg_std_error(&e);
    jpeg_create_decompress(&d);
    jpeg_mem_src(&d, data, (unsigned long)len);
    jpeg_read_header(&d, TRUE);
    d.out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_RGB;
    jpeg_start_decompress(&d);
    uint8_t *px = malloc((size_t)d.output_width * d.output_height * channels);
    CHECK(px != NULL);
    while (d.output_scanline < d.output_height) {
        JSAMPROW row = px + (size_t)d.output_scanline * d.output_width * channels;
        jpeg_read_scanlines(&d, &row, 1);
    }
    *w_p = d.output_width;
    *h_p = d.output_height;
    jpeg_finish_decompress(&d);
    jpeg_destroy_decompress(&d);
    return px;
}

typedef struct img_buf {
    uint8_t *p;
    size_t len, cap;
} img_buf_t;

static inline void img_png_write(png_structp png, png_bytep data, size_t n)
{
    img_buf_t *b = png_get_io_ptr(png);
    if (b->len + n > b->cap) {
        b->cap = (b->len + n) * 2;
        b->p = realloc(b->p, b->cap);
        CHECK(b->p != NULL);
    }
    memcpy(b->p + b->len, data, n);
    b->len += n;
}

static inline void img_png_flush(png_structp png)
{
    (void)png;
}

/** A PNG of @p px: @p c channels (1 gray, 3 RGB, 4 RGBA) of @p depth bits (8: one byte per
 *  sample; 16: two, big-endian as PNG stores them), interlaced or not. */
static inline uint8_t *img_png(const uint8_t *px, uint32_t w, uint32_t h, uint32_t c, int depth,
                               int interlace, size_t *len_p)
{
    static const int types[] = {0, PNG_COLOR_TYPE_GRAY, 0, PNG_COLOR_TYPE_RGB,
                                PNG_COLOR_TYPE_RGB_ALPHA};
    img_buf_t b = {0};
    png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, NULL, NULL);
    png_infop info = png_create_info_struct(png);
    CHECK(png != NULL && info != NULL);
    png_set_write_fn(png, &b, img_png_write, img_png_flush);
    png_set_IHDR(png, info, w, h, depth, types[c],
                 interlace ? PNG_INTERLACE_ADAM7 : PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_DEFAULT,
                 PNG_FILTER_TYPE_DEFAULT);
    png_write_info(png, info);
    size_t stride = (size_t)w * c * (depth / 8);
    png_bytep *rows = malloc(h * sizeof(*rows));
    CHECK(rows != NULL);
    for (uint32_t y = 0; y < h; y++) {
        rows[y] = (png_bytep)(px + y * stride);
    }
    png_write_image(png, rows);
    png_write_end(png, NULL);
    png_destroy_write_struct(&png, &info);
    free(rows);
    *len_p = b.len;
    return b.p;
}

/** A binary PNM (P5 for 1 channel, P6 for 3) of @p px. */
static inline uint8_t *img_pnm(const uint8_t *px, uint32_t w, uint32_t h, uint32_t c, size_t *len_p)
{
    char head[64];
    int n = snprintf(head, sizeof(head), "P%c\n%u %u\n255\n", c == 1 ? '5' : '6', w, h);
    size_t npx = (size_t)w * h * c;
    uint8_t *buf = malloc((size_t)n + npx);
    CHECK(buf != NULL);
    memcpy(buf, head, (size_t)n);
    memcpy(buf + n, px, npx);
    *len_p = (size_t)n + npx;
    return buf;
}

#endif

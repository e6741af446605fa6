/*
 * PNG decoding for the image transform, through libpng: the header first (for the pixel limit
 * and the crop), then rows down to the bottom of the region the resampler reads (every row of
 * an interlaced image). libpng's transformations give 8-bit RGB or grayscale: 16-bit samples
 * scaled (png_set_scale_16), palettes and low bit depths expanded, alpha and tRNS dropped (as
 * Pillow's convert("RGB")), gray to RGB or RGB to luma. libpng's allocations come from the
 * state's arena (reset per image; it grows between images when an image needed more), so a
 * steady stream of images allocates nothing. Warnings (an sRGB profile libpng dislikes) are
 * ignored; errors (a bad CRC, a broken zlib stream, truncation) fail the image with libpng's
 * message.
 */
#include "runtime/vision/vision_impl.h"
#include "base/status.h"
#include <png.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Arena alignment (max_align_t's on x86-64 and aarch64). */
#define VISION_ARENA_ALIGN 16u
/** First arena: png_struct, info, zlib's inflate state and window, two rows of a small image. */
#define VISION_ARENA_MIN (96u << 10)

struct vision_png {
    png_structp png;
    png_infop info;
    const uint8_t *data;
    size_t len, at;
    int open;
};

static void png_on_error(png_structp png, png_const_charp msg)
{
    vision_state_t *st = png_get_error_ptr(png);
    snprintf(st->why, sizeof(st->why), "PNG: %s", msg);
    png_longjmp(png, 1);
}

static void png_on_warning(png_structp png, png_const_charp msg)
{
    (void)png;
    (void)msg;
}

static png_voidp png_arena_alloc(png_structp png, png_alloc_size_t size)
{
    vision_state_t *st = png_get_mem_ptr(png);
    size_t need = (size + VISION_ARENA_ALIGN - 1) & ~(size_t)(VISION_ARENA_ALIGN - 1);
    if (st->arena != NULL && st->arena_cap - st->arena_used >= need) {
        void *p = st->arena + st->arena_used;
        st->arena_used += need;
        return p;
    }
    st->arena_over += need; /* the arena grows by this before the next image */
    return malloc(size);
}

static void png_arena_free(png_structp png, png_voidp p)
{
    vision_state_t *st = png_get_mem_ptr(png);
    const uint8_t *b = p;
    if (st->arena == NULL || b < st->arena || b >= st->arena + st->arena_cap) {
        free(p);
    }
}

static void png_read_cb(png_structp png, png_bytep out, size_t n)
{
    vision_png_t *a = png_get_io_ptr(png);
    if (a->len - a->at < n) {
        png_error(png, "the data ends before the image does (truncated?)");
    }
    memcpy(out, a->data + a->at, n);
    a->at += n;
}

static void png_close(vision_state_t *st)
{
    vision_png_t *a = st->png;
    if (a != NULL && a->open) {
        png_destroy_read_struct(&a->png, &a->info, NULL);
        a->open = 0;
    }
}

static int png_try_header(vision_png_t *a)
{
    if (setjmp(png_jmpbuf(a->png))) {
        return -1;
    }
    png_set_read_fn(a->png, a, png_read_cb);
    png_read_info(a->png, a->info);
    return 0;
}

/* A new png_struct over @p data, its allocations from the arena (reset, grown first when the
 * last image overflowed it). */
static ingot_status_t png_open(vision_state_t *st, const uint8_t *data, size_t len)
{
    if (st->png == NULL && (st->png = calloc(1, sizeof(*st->png))) == NULL) {
        snprintf(st->why, sizeof(st->why), "out of memory making a PNG decoder");
        return INGOT_ERR_NO_MEMORY;
    }
    size_t want = st->arena_cap + st->arena_over;
    INGOT_CHECK(ingot_vision_grow(st, (void **)&st->arena, &st->arena_cap,
                                  want > VISION_ARENA_MIN ? want : VISION_ARENA_MIN, "PNG arena"));
    st->arena_used = 0;
    st->arena_over = 0;
    vision_png_t *a = st->png;
    *a = (vision_png_t){.data = data, .len = len};
    a->png = png_create_read_struct_2(PNG_LIBPNG_VER_STRING, st, png_on_error, png_on_warning, st,
                                      png_arena_alloc, png_arena_free);
    a->info = a->png ? png_create_info_struct(a->png) : NULL;
    if (a->info == NULL) {
        if (a->png != NULL) {
            png_destroy_read_struct(&a->png, NULL, NULL);
        }
        snprintf(st->why, sizeof(st->why), "PNG: cannot make a decoder (out of memory)");
        return INGOT_ERR_NO_MEMORY;
    }
    a->open = 1;
    return INGOT_OK;
}

ingot_status_t ingot_vision_png_header(vision_state_t *st, const uint8_t *data, size_t len,
                                       vision_dims_t *d)
{
    INGOT_CHECK(png_open(st, data, len));
    vision_png_t *a = st->png;
    if (png_try_header(a) != 0) {
        png_close(st);
        return INGOT_ERR_FORMAT;
    }
    d->width = png_get_image_width(a->png, a->info);
    d->height = png_get_image_height(a->png, a->info);
    d->channels_in = png_get_channels(a->png, a->info);
    return INGOT_OK;
}

/* libpng's transformations to 8-bit gray (@p channels 1) or RGBX (4: alpha, where there is
 * one, fills the fourth byte, which is never read); the number of interlace passes. */
static int png_setup(png_structp png, png_infop info, uint32_t channels)
{
    int type = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
    int gray = !(type & PNG_COLOR_MASK_COLOR), alpha = type & PNG_COLOR_MASK_ALPHA;
    if (depth == 16) {
        png_set_scale_16(png);
    }
    if (type == PNG_COLOR_TYPE_PALETTE) {
        png_set_palette_to_rgb(png);
    } else if (gray && depth < 8) {
        png_set_expand_gray_1_2_4_to_8(png);
    }
    if (channels == 1) {
        if (alpha) {
            png_set_strip_alpha(png);
        }
        if (!gray) {
            png_set_rgb_to_gray_fixed(png, 1, 29900, 58700); /* BT.601, as vision_luma() */
        }
    } else {
        if (gray) {
            png_set_gray_to_rgb(png);
        }
        if (!alpha) {
            png_set_filler(png, 0, PNG_FILLER_AFTER);
        }
    }
    int passes = png_set_interlace_handling(png);
    png_read_update_info(png, info);
    return passes;
}

static int png_try_rows(vision_state_t *st, vision_png_t *a, const vision_region_t *r,
                        uint32_t channels, size_t stride)
{
    if (setjmp(png_jmpbuf(a->png))) {
        return -1;
    }
    int passes = png_setup(a->png, a->info, channels);
    if (png_get_rowbytes(a->png, a->info) != stride) {
        png_error(a->png, "unexpected row size after conversion");
    }
    uint32_t y0 = passes > 1 ? 0 : r->y0,
             y1 = passes > 1 ? png_get_image_height(a->png, a->info) : r->y1;
    for (int p = 0; p < passes; p++) {
        for (uint32_t y = 0; y < y1; y++) {
            png_read_row(a->png, y < y0 ? st->row : st->px + (size_t)(y - y0) * stride, NULL);
        }
    }
    return 0;
}

ingot_status_t ingot_vision_png_region(vision_state_t *st, const vision_region_t *r,
                                       uint32_t channels, vision_pixels_t *px)
{
    vision_png_t *a = st->png;
    uint32_t w = png_get_image_width(a->png, a->info), h = png_get_image_height(a->png, a->info);
    size_t stride = (size_t)w * channels;
    int interlaced = png_get_interlace_type(a->png, a->info) != PNG_INTERLACE_NONE;
    uint32_t y0 = interlaced ? 0 : r->y0, rows = (interlaced ? h : r->y1) - y0;
    ingot_status_t s = ingot_vision_grow(st, (void **)&st->px, &st->px_cap, stride * rows,
                                         "pixel buffer");
    if (s == INGOT_OK) {
        s = ingot_vision_grow(st, (void **)&st->row, &st->row_cap, stride, "PNG row");
    }
    if (s == INGOT_OK && png_try_rows(st, a, r, channels, stride) != 0) {
        s = INGOT_ERR_FORMAT;
    }
    png_close(st);
    if (s == INGOT_OK) {
        *px = (vision_pixels_t){st->px, stride, 0, y0, channels};
        atomic_fetch_add_explicit(&st->n.pixels_decoded, (uint64_t)w * rows, memory_order_relaxed);
    }
    return s;
}

void ingot_vision_png_abort(vision_state_t *st)
{
    png_close(st);
}

void ingot_vision_png_free(vision_state_t *st)
{
    png_close(st);
    free(st->png);
    st->png = NULL;
}

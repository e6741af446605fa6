/*
 * JPEG decoding for the image transform, through libjpeg-turbo's libjpeg API (the TurboJPEG API
 * of 2.1 has no partial decoding): one decompressor per scratch state, reused from image to
 * image; DCT-scaled output (scale_num / 8); only the region the resampler reads is decoded
 * (jpeg_crop_scanline to whole iMCU columns, jpeg_skip_scanlines above it, and the decoder
 * stops below it). Colour: the decoder converts YCbCr, RGB and grayscale to what the output
 * asks; CMYK and YCCK are decoded to CMYK and converted here (Adobe files store inverted
 * values). Colour comes out as RGBX (4 bytes a pixel: the resampler's lanes) or gray. Every libjpeg error and warning fails the image with libjpeg's own message (a
 * truncated file is only a warning to libjpeg: it would pad the image with grey), except
 * stray bytes between markers, which leave the image intact.
 */
#include "runtime/vision/vision_impl.h"
#include "base/status.h"
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
/* jpeglib.h needs FILE and size_t first */
#include <jerror.h>
#include <jpeglib.h>

struct vision_jpeg {
    struct jpeg_decompress_struct d; /* first: libjpeg hands back &d as a j_common_ptr */
    struct jpeg_error_mgr err;
    jmp_buf jb;
    vision_state_t *st; /* whose why gets the message */
    int open;           /* a header was read and the image not finished */
};

/** Full size: scale_num / scale_denom = 8 / 8. */
#define VISION_JPEG_DENOM 8u
#define VISION_CMYK       4u

/* The message of libjpeg's last error or warning, with a hint where libjpeg's is terse. */
static void jpeg_why(j_common_ptr c)
{
    vision_jpeg_t *j = (vision_jpeg_t *)c;
    char msg[JMSG_LENGTH_MAX];
    c->err->format_message(c, msg);
    const char *hint = "";
    if (c->err->msg_code == JWRN_JPEG_EOF) {
        hint = " (the data ends before the image does: truncated?)";
    } else if (c->err->msg_code == JERR_BAD_HUFF_TABLE || c->err->msg_code == JWRN_HUFF_BAD_CODE) {
        hint = " (a corrupt Huffman table or entropy-coded data)";
    }
    snprintf(j->st->why, sizeof(j->st->why), "JPEG: %s%s", msg, hint);
}

static void jpeg_on_error(j_common_ptr c)
{
    jpeg_why(c);
    longjmp(((vision_jpeg_t *)c)->jb, 1);
}

/* Warnings are errors (libjpeg would go on with a damaged image), but for stray bytes between
 * markers; trace messages (level > 0) are ignored. */
static void jpeg_on_message(j_common_ptr c, int level)
{
    if (level < 0 && c->err->msg_code != JWRN_EXTRANEOUS_DATA) {
        jpeg_why(c);
        longjmp(((vision_jpeg_t *)c)->jb, 1);
    }
}

static ingot_status_t jpeg_make(vision_state_t *st)
{
    vision_jpeg_t *j = calloc(1, sizeof(*j));
    if (j == NULL) {
        snprintf(st->why, sizeof(st->why), "out of memory making a JPEG decoder");
        return INGOT_ERR_NO_MEMORY;
    }
    j->st = st;
    j->d.err = jpeg_std_error(&j->err);
    j->err.error_exit = jpeg_on_error;
    j->err.emit_message = jpeg_on_message;
    if (setjmp(j->jb)) {
        free(j);
        return INGOT_ERR_NO_MEMORY; /* why: libjpeg's message */
    }
    jpeg_create_decompress(&j->d);
    st->jpeg = j;
    return INGOT_OK;
}

static int jpeg_try_header(vision_jpeg_t *j, const uint8_t *data, size_t len)
{
    if (setjmp(j->jb)) {
        jpeg_abort_decompress(&j->d);
        return -1;
    }
    jpeg_mem_src(&j->d, data, (unsigned long)len);
    jpeg_read_header(&j->d, TRUE);
    return 0;
}

ingot_status_t ingot_vision_jpeg_header(vision_state_t *st, const uint8_t *data, size_t len,
                                        vision_dims_t *d)
{
    if (st->jpeg == NULL) {
        INGOT_CHECK(jpeg_make(st));
    }
    vision_jpeg_t *j = st->jpeg;
    if (jpeg_try_header(j, data, len) != 0) {
        return INGOT_ERR_FORMAT;
    }
    j->open = 1;
    d->width = j->d.image_width;
    d->height = j->d.image_height;
    d->channels_in = (uint32_t)j->d.num_components;
    return INGOT_OK;
}

static int jpeg_try_scale(vision_jpeg_t *j)
{
    if (setjmp(j->jb)) {
        jpeg_abort_decompress(&j->d);
        return -1;
    }
    jpeg_calc_output_dimensions(&j->d);
    return 0;
}

ingot_status_t ingot_vision_jpeg_scale(vision_state_t *st, unsigned num, uint32_t channels,
                                       uint32_t *sw, uint32_t *sh)
{
    vision_jpeg_t *j = st->jpeg;
    struct jpeg_decompress_struct *d = &j->d;
    if (d->jpeg_color_space == JCS_CMYK || d->jpeg_color_space == JCS_YCCK) {
        d->out_color_space = JCS_CMYK;
    } else {
        d->out_color_space = channels == 1 ? JCS_GRAYSCALE : JCS_EXT_RGBX;
    }
    d->scale_num = num;
    d->scale_denom = VISION_JPEG_DENOM;
    if (jpeg_try_scale(j) != 0) {
        j->open = 0;
        return INGOT_ERR_FORMAT;
    }
    *sw = d->output_width;
    *sh = d->output_height;
    return INGOT_OK;
}

/* CMYK (inverted when an Adobe marker says so, as Photoshop writes it) to RGBX or luma:
 * R = (255 - C)(255 - K) / 255, as Pillow converts. */
static void jpeg_cmyk(const uint8_t *src, uint8_t *dst, uint32_t w, uint32_t channels, int adobe)
{
    for (uint32_t x = 0; x < w; x++, src += VISION_CMYK) {
        uint32_t inv = adobe ? 0 : 255, k = src[3] ^ inv, rgb[3];
        for (int c = 0; c < 3; c++) {
            rgb[c] = ((src[c] ^ inv) * k + 127) / 255;
        }
        if (channels == 1) {
            dst[x] = vision_luma(rgb[0], rgb[1], rgb[2]);
        } else {
            dst[4 * x] = (uint8_t)rgb[0];
            dst[4 * x + 1] = (uint8_t)rgb[1];
            dst[4 * x + 2] = (uint8_t)rgb[2];
            dst[4 * x + 3] = 0;
        }
    }
}

static int jpeg_try_region(vision_jpeg_t *j, const vision_region_t *r, uint32_t channels,
                           vision_pixels_t *px)
{
    struct jpeg_decompress_struct *d = &j->d;
    vision_state_t *st = j->st;
    if (setjmp(j->jb)) {
        jpeg_abort_decompress(d);
        return -1;
    }
    jpeg_start_decompress(d);
    JDIMENSION xoff = r->x0, w = r->x1 - r->x0;
    if (w < d->output_width) {
        jpeg_crop_scanline(d, &xoff, &w); /* widened to whole iMCUs */
    }
    if (r->y0 > 0) {
        jpeg_skip_scanlines(d, r->y0);
    }
    int cmyk = d->out_color_space == JCS_CMYK;
    size_t stride = (size_t)w * channels;
    for (uint32_t y = r->y0; y < r->y1; y++) {
        uint8_t *dst = st->px + (y - r->y0) * stride;
        JSAMPROW row = cmyk ? st->row : dst;
        if (jpeg_read_scanlines(d, &row, 1) != 1) {
            ERREXIT(d, JERR_INPUT_EOF); /* a memory source never suspends */
        }
        if (cmyk) {
            jpeg_cmyk(st->row, dst, w, channels, d->saw_Adobe_marker);
        }
    }
    jpeg_abort_decompress(d); /* the rows below the region are never decoded */
    *px = (vision_pixels_t){st->px, stride, xoff, r->y0, channels};
    return 0;
}

ingot_status_t ingot_vision_jpeg_region(vision_state_t *st, const vision_region_t *want,
                                        uint32_t channels, vision_pixels_t *px)
{
    vision_jpeg_t *j = st->jpeg;
    size_t width = j->d.output_width; /* iMCU widening stays within it */
    /* One more pixel each way: the region's edge pixels are then inside the decoded area, where
     * fancy upsampling sees its neighbours, and equal a full decode's. */
    vision_region_t m = *want, *r = &m;
    m.x0 -= m.x0 > 0;
    m.y0 -= m.y0 > 0;
    m.x1 += m.x1 < j->d.output_width;
    m.y1 += m.y1 < j->d.output_height;
    j->open = 0;
    ingot_status_t s = ingot_vision_grow(st, (void **)&st->px, &st->px_cap,
                                         width * channels * (r->y1 - r->y0), "pixel buffer");
    if (s == INGOT_OK && j->d.out_color_space == JCS_CMYK) {
        s = ingot_vision_grow(st, (void **)&st->row, &st->row_cap, width * VISION_CMYK, "CMYK row");
    }
    if (s != INGOT_OK) {
        jpeg_abort_decompress(&j->d);
        return s;
    }
    if (jpeg_try_region(j, r, channels, px) != 0) {
        return INGOT_ERR_FORMAT;
    }
    atomic_fetch_add_explicit(&st->n.pixels_decoded,
                              (uint64_t)(px->stride / channels) * (r->y1 - r->y0),
                              memory_order_relaxed);
    return INGOT_OK;
}

void ingot_vision_jpeg_abort(vision_state_t *st)
{
    if (st->jpeg != NULL && st->jpeg->open) {
        jpeg_abort_decompress(&st->jpeg->d);
        st->jpeg->open = 0;
    }
}

void ingot_vision_jpeg_free(vision_state_t *st)
{
    if (st->jpeg != NULL) {
        jpeg_destroy_decompress(&st->jpeg->d);
        free(st->jpeg);
        st->jpeg = NULL;
    }
}

/*
 * Binary PNM for the image transform: the header parsed as the normalising transform parses it
 * (pnm.h), maxval 255 only, every pixel present. The resampler reads a P5's own bytes for a gray
 * output; otherwise the region's rows are converted into the state's pixel buffer (RGBX, or
 * luma).
 */
#include "runtime/vision/vision_impl.h"
#include "runtime/vision/pnm.h"
#include "base/status.h"
#include <stdio.h>

/** The only maxval the transform reads (8-bit samples). */
#define VISION_PNM_MAXVAL 255u

ingot_status_t ingot_vision_pnm_header(vision_state_t *st, const uint8_t *data, size_t len,
                                       vision_dims_t *d)
{
    pnm_header_t h;
    if (!ingot_pnm_parse(data, len, &h)) {
        snprintf(st->why, sizeof(st->why), "PNM: not a binary P5/P6 header");
        return INGOT_ERR_FORMAT;
    }
    if (h.maxval != VISION_PNM_MAXVAL) {
        snprintf(st->why, sizeof(st->why), "PNM: maxval %u; only %u (8-bit samples) is read",
                 h.maxval, VISION_PNM_MAXVAL);
        return INGOT_ERR_FORMAT;
    }
    d->width = h.width;
    d->height = h.height;
    d->channels_in = h.channels;
    return INGOT_OK;
}

/* Rows [r->y0, r->y1) of a file with @p cin channels (1, 3) as @p cout (1 gray, 4 RGBX) into
 * st->px. */
static void pnm_convert(vision_state_t *st, const uint8_t *src, size_t sstride, uint32_t width,
                        const vision_region_t *r, uint32_t cin, uint32_t cout)
{
    for (uint32_t y = r->y0; y < r->y1; y++) {
        const uint8_t *s = src + (size_t)y * sstride;
        uint8_t *d = st->px + (size_t)(y - r->y0) * width * cout;
        for (uint32_t x = 0; x < width; x++) {
            if (cout == 1) {
                d[x] = vision_luma(s[3 * x], s[3 * x + 1], s[3 * x + 2]);
            } else {
                const uint8_t *p = cin == 1 ? s + x : s + 3 * x;
                d[4 * x] = p[0];
                d[4 * x + 1] = p[cin == 1 ? 0 : 1];
                d[4 * x + 2] = p[cin == 1 ? 0 : 2];
                d[4 * x + 3] = 0;
            }
        }
    }
}

ingot_status_t ingot_vision_pnm_region(vision_state_t *st, const uint8_t *data, size_t len,
                                       const vision_region_t *r, uint32_t channels,
                                       vision_pixels_t *px)
{
    pnm_header_t h;
    ingot_pnm_parse(data, len, &h); /* checked by ingot_vision_pnm_header() */
    size_t stride = (size_t)h.width * h.channels, need = stride * h.height;
    if (len - h.pixels < need) {
        snprintf(st->why, sizeof(st->why),
                 "PNM: %zu pixel bytes after the %zu-byte header, %ux%u P%c needs %zu "
                 "(truncated?)",
                 len - h.pixels, h.pixels, h.width, h.height, h.channels == 1 ? '5' : '6', need);
        return INGOT_ERR_FORMAT;
    }
    const uint8_t *pixels = data + h.pixels;
    if (h.channels == channels) {
        *px = (vision_pixels_t){pixels, stride, 0, 0, channels};
        return INGOT_OK;
    }
    INGOT_CHECK(ingot_vision_grow(st, (void **)&st->px, &st->px_cap,
                                  (size_t)h.width * channels * (r->y1 - r->y0), "pixel buffer"));
    pnm_convert(st, pixels, stride, h.width, r, h.channels, channels);
    *px = (vision_pixels_t){st->px, (size_t)h.width * channels, 0, r->y0, channels};
    return INGOT_OK;
}

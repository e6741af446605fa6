/*
 * Built-in transforms (include/ingot/transform.h): an 8-bit image, binary PNM or raw pixels, to
 * normalised float32 [C, H, W]. Runs in the loader's workers, once per sample, with no
 * allocation: a parsed header and one multiply-add per pixel.
 */
#include <ingot/transform.h>
#include "runtime/vision/pnm.h"
#include "base/log.h"
#include <ctype.h>
#include <math.h>
#include <string.h>

ingot_status_t ingot_image_norm_prepare(ingot_image_norm_t *n)
{
    if (n == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_image_norm_prepare: NULL argument");
    }
    if (n->channels < 1 || n->channels > INGOT_IMAGE_CHANNELS_MAX || n->height == 0 ||
        n->width == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "image transform: channels %u, height %u, width %u: expected 1 to %d "
                          "channels and a non-zero height and width",
                          n->channels, n->height, n->width, INGOT_IMAGE_CHANNELS_MAX);
    }
    uint64_t out = (uint64_t)n->channels * n->height * n->width * sizeof(float);
    if (out > ((uint64_t)1 << 31)) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "image transform: %u x %u x %u floats make %llu bytes per sample, "
                          "more than 2 GiB",
                          n->channels, n->height, n->width, (unsigned long long)out);
    }
    for (uint32_t c = 0; c < n->channels; c++) {
        if (!isfinite(n->mean[c]) || !isfinite(n->std[c]) || !(n->std[c] > 0.0f)) {
            return ingot_fail(INGOT_ERR_INVALID_PARAM,
                              "image transform: channel %u: mean %g, std %g: expected finite "
                              "values and std > 0",
                              c, (double)n->mean[c], (double)n->std[c]);
        }
        n->scale[c] = 1.0f / (255.0f * n->std[c]);
        n->bias[c] = -n->mean[c] / n->std[c];
    }
    n->out_size = (size_t)out;
    return INGOT_OK;
}

/* Skip whitespace and comments from @p i; the next offset. */
static size_t pnm_skip(const unsigned char *p, size_t len, size_t i)
{
    while (i < len) {
        if (p[i] == '#') {
            while (i < len && p[i] != '\n') {
                i++;
            }
        } else if (isspace(p[i])) {
            i++;
        } else {
            break;
        }
    }
    return i;
}

/* A decimal number of at most 9 digits at @p *i (after skipping); 0 when there is none. */
static int pnm_number(const unsigned char *p, size_t len, size_t *i, unsigned *v)
{
    size_t j = pnm_skip(p, len, *i), digits = 0;
    unsigned x = 0;
    while (j < len && isdigit(p[j]) && digits < 9) {
        x = x * 10 + (unsigned)(p[j] - '0');
        j++;
        digits++;
    }
    if (digits == 0 || (j < len && isdigit(p[j]))) {
        return 0;
    }
    *i = j;
    *v = x;
    return 1;
}

int ingot_pnm_parse(const unsigned char *p, size_t len, pnm_header_t *h)
{
    if (len < 3 || p[0] != 'P' || (p[1] != '5' && p[1] != '6') || !isspace(p[2])) {
        return 0;
    }
    size_t i = 2;
    h->channels = p[1] == '5' ? 1 : 3;
    if (!pnm_number(p, len, &i, &h->width) || !pnm_number(p, len, &i, &h->height) ||
        !pnm_number(p, len, &i, &h->maxval) || i >= len || !isspace(p[i])) {
        return 0;
    }
    h->pixels = i + 1;
    return 1;
}

static const ingot_field_view_t *image_field(const ingot_sample_view_t *s, const char *name)
{
    for (uint32_t f = 0; f < s->field_count; f++) {
        if (name == NULL || strcmp(s->fields[f].name, name) == 0) {
            return &s->fields[f];
        }
    }
    return NULL;
}

/* Planar output from interleaved pixels: out[c][k] = px[k * C + c] * scale[c] + bias[c]. */
static void normalise(const ingot_image_norm_t *n, const unsigned char *px, float *out)
{
    size_t plane = (size_t)n->height * n->width;
    uint32_t nc = n->channels;
    for (uint32_t c = 0; c < nc; c++) {
        const float a = n->scale[c], b = n->bias[c];
        float *o = out + c * plane;
        const unsigned char *q = px + c;
        if (nc == 1) {
            for (size_t k = 0; k < plane; k++) {
                o[k] = (float)q[k] * a + b;
            }
        } else {
            for (size_t k = 0; k < plane; k++) {
                o[k] = (float)q[k * nc] * a + b;
            }
        }
    }
}

ingot_status_t ingot_transform_image_norm(const ingot_sample_view_t *s, void *out, size_t out_size,
                                          void *arg)
{
    const ingot_image_norm_t *n = arg;
    if (s == NULL || out == NULL || n == NULL || n->out_size == 0 || out_size != n->out_size) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "image transform: sample_out_size %zu, expected %zu (the prepared "
                          "ingot_image_norm_t's out_size)",
                          out_size, n ? n->out_size : (size_t)0);
    }
    const ingot_field_view_t *f = image_field(s, n->field);
    if (f == NULL) {
        return ingot_fail(INGOT_ERR_FORMAT, "image transform: sample '%s' has no field '%s'%s",
                          s->key, n->field ? n->field : "(any)",
                          s->field_count ? "" : " (no fields at all)");
    }
    const unsigned char *p = f->data;
    size_t raw = (size_t)n->channels * n->height * n->width;
    pnm_header_t h;
    if (ingot_pnm_parse(p, f->len, &h)) {
        if (h.channels != n->channels || h.width != n->width || h.height != n->height ||
            h.maxval != 255) {
            return ingot_fail(INGOT_ERR_FORMAT,
                              "image transform: sample '%s' field '%s': a %ux%u P%c image with "
                              "maxval %u, expected %ux%u with %u channel(s) and maxval 255",
                              s->key, f->name, h.width, h.height, h.channels == 1 ? '5' : '6',
                              h.maxval, n->width, n->height, n->channels);
        }
        if (f->len - h.pixels != raw) {
            return ingot_fail(INGOT_ERR_FORMAT,
                              "image transform: sample '%s' field '%s': %zu pixel bytes after "
                              "the %zu-byte header, expected %zu",
                              s->key, f->name, f->len - h.pixels, h.pixels, raw);
        }
        p += h.pixels;
    } else if (f->len != raw) {
        return ingot_fail(INGOT_ERR_FORMAT,
                          "image transform: sample '%s' field '%s': %zu bytes are neither a "
                          "binary PNM (P5/P6) nor %u x %u x %u = %zu raw pixels",
                          s->key, f->name, f->len, n->height, n->width, n->channels, raw);
    }
    normalise(n, p, out);
    return INGOT_OK;
}

/*
 * ingot_transform_image_decode: one sample through the image transform, in a loader worker.
 * Find the image field, recognise its format by its first bytes, read the header, refuse an
 * image over the pixel limit (before anything is allocated for it), draw the box, choose the
 * JPEG's DCT scale, plan the resampling (which gives the region to decode), decode the region,
 * resample into the output. A stage that fails writes why into the state; this file logs it
 * once, naming the shard, key, offset and field.
 */
#include "runtime/vision/vision_impl.h"
#include "base/log.h"
#include "base/status.h"
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/** Bytes of an unrecognised field shown in its message. */
#define VISION_MAGIC_SHOWN 4

static const char *const vision_image_fields[] = {"jpg", "jpeg", "png", "ppm", "pgm", "pnm"};

/* The image field: the named one, else the first with an image extension, else the first. */
static const ingot_field_view_t *vision_field(const struct ingot_vision *v,
                                              const ingot_sample_view_t *s)
{
    for (uint32_t f = 0; v->p.field != NULL && f < s->field_count; f++) {
        if (strcmp(s->fields[f].name, v->p.field) == 0) {
            return &s->fields[f];
        }
    }
    if (v->p.field != NULL) {
        return NULL;
    }
    for (uint32_t f = 0; f < s->field_count; f++) {
        for (size_t k = 0; k < sizeof(vision_image_fields) / sizeof(vision_image_fields[0]); k++) {
            if (strcasecmp(s->fields[f].name, vision_image_fields[k]) == 0) {
                return &s->fields[f];
            }
        }
    }
    return s->field_count ? &s->fields[0] : NULL;
}

static vision_format_t vision_sniff(const uint8_t *p, size_t len)
{
    static const uint8_t png[8] = {0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'};
    if (len >= 3 && p[0] == 0xff && p[1] == 0xd8 && p[2] == 0xff) {
        return VISION_FORMAT_JPEG;
    }
    if (len >= sizeof(png) && memcmp(p, png, sizeof(png)) == 0) {
        return VISION_FORMAT_PNG;
    }
    if (len >= 3 && p[0] == 'P' && (p[1] == '5' || p[1] == '6')) {
        return VISION_FORMAT_PNM;
    }
    return VISION_FORMAT_UNKNOWN;
}

/* 1 when @p tail (@p n bytes) occurs in @p p, searched from the end (a file's last marker sits
 * at its end, or before a few bytes of padding). */
static int vision_ends_with(const uint8_t *p, size_t len, const char *tail, size_t n)
{
    for (size_t i = len; i >= n; i--) {
        if (memcmp(p + i - n, tail, n) == 0) {
            return 1;
        }
    }
    return 0;
}

/* A file whose end is missing is refused whatever its crop: decoding stops below the region, so
 * the decoders alone would refuse it in one epoch and take it in another. */
static ingot_status_t vision_complete(vision_state_t *st, vision_format_t fmt, const uint8_t *p,
                                      size_t len)
{
    if (fmt == VISION_FORMAT_JPEG && !vision_ends_with(p, len, "\xff\xd9", 2)) {
        snprintf(st->why, sizeof(st->why),
                 "JPEG: no end-of-image marker (ff d9) in its %zu bytes: the data ends before "
                 "the image does (truncated?)",
                 len);
        return INGOT_ERR_FORMAT;
    }
    if (fmt == VISION_FORMAT_PNG && !vision_ends_with(p, len, "IEND", 4)) {
        snprintf(st->why, sizeof(st->why),
                 "PNG: no IEND chunk in its %zu bytes: the data ends before the image does "
                 "(truncated?)",
                 len);
        return INGOT_ERR_FORMAT;
    }
    return INGOT_OK;
}

static ingot_status_t vision_header(vision_state_t *st, vision_format_t fmt, const uint8_t *p,
                                    size_t len, vision_dims_t *d)
{
    INGOT_CHECK(vision_complete(st, fmt, p, len));
    switch (fmt) {
    case VISION_FORMAT_JPEG: return ingot_vision_jpeg_header(st, p, len, d);
    case VISION_FORMAT_PNG: return ingot_vision_png_header(st, p, len, d);
    case VISION_FORMAT_PNM: return ingot_vision_pnm_header(st, p, len, d);
    default: break;
    }
    char hex[3 * VISION_MAGIC_SHOWN + 1] = "";
    for (size_t i = 0, at = 0; i < len && i < VISION_MAGIC_SHOWN; i++, at = strlen(hex)) {
        snprintf(hex + at, sizeof(hex) - at, "%s%02x", i ? " " : "", p[i]);
    }
    snprintf(st->why, sizeof(st->why),
             "not a JPEG, PNG or binary PNM image (%zu bytes starting %s)", len, hex);
    return INGOT_ERR_FORMAT;
}

/* Close the decoder a header left open, after a failure before its region was decoded. */
static void vision_abort(vision_state_t *st, vision_format_t fmt)
{
    if (fmt == VISION_FORMAT_JPEG) {
        ingot_vision_jpeg_abort(st);
    } else if (fmt == VISION_FORMAT_PNG) {
        ingot_vision_png_abort(st);
    }
}

/* The decoded size (the JPEG's DCT scale chosen for the box), and the box in it. */
static ingot_status_t vision_scale(const struct ingot_vision *v, vision_state_t *st,
                                   vision_format_t fmt, const vision_dims_t *d,
                                   const vision_box_t *box, uint32_t *sw, uint32_t *sh,
                                   vision_boxf_t *bf)
{
    *sw = d->width;
    *sh = d->height;
    if (fmt == VISION_FORMAT_JPEG) {
        unsigned num = ingot_vision_dct_scale(v, box);
        INGOT_CHECK(ingot_vision_jpeg_scale(st, num, v->out_c, sw, sh));
        if (*sw != d->width || *sh != d->height) {
            atomic_fetch_add_explicit(&st->n.dct_scaled, 1, memory_order_relaxed);
        }
    }
    double fx = (double)*sw / d->width, fy = (double)*sh / d->height;
    *bf = (vision_boxf_t){box->x * fx, box->y * fy, (box->x + box->w) * fx, (box->y + box->h) * fy};
    return INGOT_OK;
}

static ingot_status_t vision_region(vision_state_t *st, vision_format_t fmt, const uint8_t *p,
                                    size_t len, const vision_region_t *r, uint32_t c,
                                    vision_pixels_t *px)
{
    switch (fmt) {
    case VISION_FORMAT_JPEG: return ingot_vision_jpeg_region(st, r, c, px);
    case VISION_FORMAT_PNG: return ingot_vision_png_region(st, r, c, px);
    default: return ingot_vision_pnm_region(st, p, len, r, c, px);
    }
}

/* Header to output; on failure st->why says what was wrong. */
static ingot_status_t vision_run(const struct ingot_vision *v, vision_state_t *st,
                                 const ingot_sample_view_t *s, const ingot_field_view_t *f,
                                 void *out)
{
    const uint8_t *p = f->data;
    vision_format_t fmt = vision_sniff(p, f->len);
    vision_dims_t d = {0};
    INGOT_CHECK(vision_header(st, fmt, p, f->len, &d));
    uint64_t pixels = (uint64_t)d.width * d.height;
    ingot_status_t rc = INGOT_OK;
    if (pixels > v->p.max_pixels || pixels == 0) {
        snprintf(st->why, sizeof(st->why),
                 "the header declares %ux%u = %" PRIu64 " pixels, %s the limit of %" PRIu64
                 " (max_pixels: a decompression bomb is refused before any allocation)",
                 d.width, d.height, pixels, pixels ? "over" : "not within", v->p.max_pixels);
        rc = pixels ? INGOT_ERR_OUT_OF_RANGE : INGOT_ERR_FORMAT;
    }
    uint64_t epoch = (s->field_mask & INGOT_SAMPLE_VIEW_FIELD_EPOCH) ? s->epoch : 0;
    uint64_t seed = (s->field_mask & INGOT_SAMPLE_VIEW_FIELD_SEED) ? s->seed : 0;
    vision_box_t box;
    vision_boxf_t bf;
    vision_region_t r;
    vision_pixels_t px;
    uint32_t sw, sh;
    if (rc == INGOT_OK) {
        ingot_vision_box_draw(v, seed, epoch, s->index, d.width, d.height, &box);
        rc = vision_scale(v, st, fmt, &d, &box, &sw, &sh, &bf);
    }
    if (rc == INGOT_OK) {
        rc = ingot_vision_resample_plan(st, v, &bf, sw, sh, box.flip, &r);
    }
    if (rc != INGOT_OK) {
        vision_abort(st, fmt);
        return rc;
    }
    INGOT_CHECK(vision_region(st, fmt, p, f->len, &r, VISION_LANES(v->out_c), &px));
    atomic_fetch_add_explicit(&st->n.images, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->n.by_format[fmt], 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&st->n.pixels_declared, pixels, memory_order_relaxed);
    return ingot_vision_resample_run(st, v, &r, &px, out);
}

/* The one message of a failed sample: where it is, then what was wrong. */
static ingot_status_t vision_fail(ingot_status_t rc, const ingot_sample_view_t *s,
                                  const ingot_field_view_t *f, const char *why)
{
    int where = (s->field_mask & INGOT_SAMPLE_VIEW_FIELD_WHERE) && s->shard != NULL;
    return ingot_fail(
        rc, "image decode transform: shard '%s' key '%s' offset %" PRIu64 " field '%s': %s",
        where ? s->shard : "?", s->key, where ? s->offset : 0, f ? f->name : "-", why);
}

ingot_status_t ingot_transform_image_decode(const ingot_sample_view_t *s, void *out,
                                            size_t out_size, void *arg)
{
    struct ingot_vision *v = arg;
    if (s == NULL || out == NULL || v == NULL || out_size != v->out_size) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "image decode transform: sample_out_size %zu, expected %zu "
                          "(ingot_vision_out_size of the transform passed as transform_arg)",
                          out_size, v ? v->out_size : (size_t)0);
    }
    const ingot_field_view_t *f = vision_field(v, s);
    if (f == NULL) {
        char why[VISION_WHY_MAX];
        snprintf(why, sizeof(why), "no field '%s' (the sample has %u)",
                 v->p.field ? v->p.field : "(any)", s->field_count);
        return vision_fail(INGOT_ERR_FORMAT, s, NULL, why);
    }
    if (f->len == 0) {
        return vision_fail(INGOT_ERR_FORMAT, s, f, "an empty field (0 bytes): no image");
    }
    vision_state_t *st = ingot_vision_state_take(v);
    if (st == NULL) {
        return vision_fail(INGOT_ERR_NO_MEMORY, s, f, "out of memory making a scratch state");
    }
    st->why[0] = '\0';
    ingot_status_t rc = vision_run(v, st, s, f, out);
    if (rc != INGOT_OK) {
        vision_fail(rc, s, f, st->why[0] ? st->why : ingot_status_string(rc));
    }
    ingot_vision_state_give(v, st);
    return rc;
}

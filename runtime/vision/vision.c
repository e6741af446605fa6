/*
 * The image transform object (include/ingot/vision.h): parameters checked and defaulted at
 * create, the scratch states (one per concurrent call, on a free list, grown on first use and
 * kept), counters. The per-sample work is in vision_transform.c.
 */
#include "runtime/vision/vision_impl.h"
#include "base/log.h"
#include "base/mem.h"
#include "base/param.h"
#include "base/status.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/** Scratch grows in steps of this many bytes, so that slowly growing images do not realloc
 *  each time. */
#define VISION_GROW_STEP (64u << 10)
/** torchvision's Resize(256) before CenterCrop(224): the shorter side is 8/7 of the crop. */
#define VISION_RESIZE_NUM 8
#define VISION_RESIZE_DEN 7

#define P(_name, _bit, _default) \
    INGOT_PARAM_VALUE(params, _name, INGOT_VISION_PARAM_FIELD_##_bit, _default)

static ingot_vision_params_t vision_defaults(const ingot_vision_params_t *params)
{
    ingot_vision_params_t p = {0};
    p.height = P(height, SIZE, 0);
    p.width = P(width, SIZE, 0);
    p.field = P(field, FIELD, NULL);
    p.channels = P(channels, CHANNELS, 3);
    p.crop = P(crop, CROP, INGOT_IMAGE_CROP_RANDOM);
    p.scale[0] = P(scale[0], SCALE, 0.08f);
    p.scale[1] = P(scale[1], SCALE, 1.0f);
    p.ratio[0] = P(ratio[0], RATIO, 3.0f / 4.0f);
    p.ratio[1] = P(ratio[1], RATIO, 4.0f / 3.0f);
    p.flip = P(flip, FLIP, p.crop == INGOT_IMAGE_CROP_RANDOM ? 0.5f : 0.0f);
    uint32_t side = p.height > p.width ? p.height : p.width;
    p.resize = P(resize, RESIZE,
                 (uint32_t)(((uint64_t)side * VISION_RESIZE_NUM + VISION_RESIZE_DEN / 2) /
                            VISION_RESIZE_DEN));
    for (int c = 0; c < VISION_CHANNELS_MAX; c++) {
        p.mean[c] = P(mean[c], NORMALIZE, 0.0f);
        p.std[c] = P(std[c], NORMALIZE, 1.0f);
    }
    p.dtype = P(dtype, DTYPE, INGOT_IMAGE_FLOAT32);
    p.layout = P(layout, LAYOUT, INGOT_IMAGE_CHW);
    p.max_pixels = P(max_pixels, MAX_PIXELS, INGOT_IMAGE_MAX_PIXELS_DEFAULT);
    p.seed = P(seed, SEED, 0);
    p.dct = P(dct, DCT, INGOT_IMAGE_DCT_FAST);
    return p;
}

#undef P

static int vision_range_ok(const float *r, float hi)
{
    return isfinite(r[0]) && isfinite(r[1]) && r[0] > 0.0f && r[0] <= r[1] && r[1] <= hi;
}

/* The crop's members; a message naming the member, its value and what is accepted. */
static ingot_status_t vision_check_crop(const ingot_vision_params_t *p)
{
    if ((unsigned)p->crop > INGOT_IMAGE_CROP_NONE) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "image decode transform: crop %d: expected RANDOM (0), CENTER (1) or "
                          "NONE (2)",
                          (int)p->crop);
    }
    if (!vision_range_ok(p->scale, 1.0f)) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "image decode transform: scale (%g, %g) cannot be satisfied: expected "
                          "0 < scale[0] <= scale[1] <= 1 (a share of the image's area)",
                          (double)p->scale[0], (double)p->scale[1]);
    }
    if (!vision_range_ok(p->ratio, INFINITY)) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "image decode transform: ratio (%g, %g) cannot be satisfied: expected "
                          "finite 0 < ratio[0] <= ratio[1] (width / height)",
                          (double)p->ratio[0], (double)p->ratio[1]);
    }
    if (!(p->flip >= 0.0f && p->flip <= 1.0f)) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "image decode transform: flip %g: expected a probability in [0, 1]",
                          (double)p->flip);
    }
    if (p->crop == INGOT_IMAGE_CROP_CENTER && (p->resize < p->height || p->resize < p->width)) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "image decode transform: resize %u is smaller than the %ux%u center "
                          "crop: expected resize >= height and width",
                          p->resize, p->width, p->height);
    }
    return INGOT_OK;
}

/* Sizes, channels, enums, normalisation. */
static ingot_status_t vision_check(const ingot_vision_params_t *params,
                                   const ingot_vision_params_t *p)
{
    if (params == NULL || !(params->field_mask & INGOT_VISION_PARAM_FIELD_SIZE) || p->height < 1 ||
        p->width < 1 || p->height > VISION_SIZE_MAX || p->width > VISION_SIZE_MAX) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "image decode transform: output %ux%u%s: expected height and width "
                          "in 1..%u (INGOT_VISION_PARAM_FIELD_SIZE)",
                          p->width, p->height, params ? "" : " (no parameters)", VISION_SIZE_MAX);
    }
    if ((p->channels != 1 && p->channels != 3) || (unsigned)p->dtype > INGOT_IMAGE_UINT8 ||
        (unsigned)p->layout > INGOT_IMAGE_HWC || (unsigned)p->dct > INGOT_IMAGE_DCT_OFF ||
        p->max_pixels == 0) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM,
                          "image decode transform: channels %u, dtype %d, layout %d, dct %d, "
                          "max_pixels %llu: expected channels 1 or 3, dtype FLOAT32/UINT8, "
                          "layout CHW/HWC, dct FAST/ANY/OFF and max_pixels >= 1",
                          p->channels, (int)p->dtype, (int)p->layout, (int)p->dct,
                          (unsigned long long)p->max_pixels);
    }
    for (uint32_t c = 0; c < p->channels; c++) {
        if (!isfinite(p->mean[c]) || !isfinite(p->std[c]) || !(p->std[c] > 0.0f)) {
            return ingot_fail(INGOT_ERR_INVALID_PARAM,
                              "image decode transform: channel %u: mean %g, std %g: expected "
                              "finite values and std > 0",
                              c, (double)p->mean[c], (double)p->std[c]);
        }
    }
    return vision_check_crop(p);
}

ingot_status_t ingot_vision_create(const ingot_vision_params_t *params, ingot_vision_h *vision_p)
{
    ingot_vision_params_t p = vision_defaults(params);
    if (vision_p == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_vision_create: NULL vision_p");
    }
    INGOT_CHECK(vision_check(params, &p));
    struct ingot_vision *v = ingot_calloc(1, sizeof(*v), "image decode transform");
    if (v == NULL) {
        return INGOT_ERR_NO_MEMORY;
    }
    v->p = p;
    v->p.field = NULL;
    if (p.field != NULL && (v->p.field = strdup(p.field)) == NULL) {
        free(v);
        return ingot_fail(INGOT_ERR_NO_MEMORY, "image decode transform: out of memory");
    }
    v->out_c = p.channels;
    v->out_size = (size_t)p.height * p.width * p.channels *
                  (p.dtype == INGOT_IMAGE_FLOAT32 ? sizeof(float) : 1);
    for (uint32_t c = 0; c < p.channels; c++) {
        v->scale[c] = 1.0f / (255.0f * p.std[c]);
        v->bias[c] = -p.mean[c] / p.std[c];
    }
    v->log_ratio[0] = log((double)p.ratio[0]);
    v->log_ratio[1] = log((double)p.ratio[1]);
    pthread_mutex_init(&v->lock, NULL);
    *vision_p = v;
    return INGOT_OK;
}

size_t ingot_vision_out_size(ingot_vision_h v)
{
    return v ? v->out_size : 0;
}

static void vision_state_free(vision_state_t *st)
{
    ingot_vision_jpeg_free(st);
    ingot_vision_png_free(st);
    free(st->px);
    free(st->row);
    free(st->vrow);
    free(st->orow);
    free(st->tab_i);
    free(st->tab_w);
    free(st->arena);
    free(st);
}

void ingot_vision_destroy(ingot_vision_h v)
{
    if (v == NULL) {
        return;
    }
    for (vision_state_t *st = v->all, *next; st != NULL; st = next) {
        next = st->next_all;
        vision_state_free(st);
    }
    pthread_mutex_destroy(&v->lock);
    free((void *)v->p.field);
    free(v);
}

/* A state for one call: the free list's first, or a new one. NULL when out of memory. */
vision_state_t *ingot_vision_state_take(ingot_vision_h v)
{
    pthread_mutex_lock(&v->lock);
    vision_state_t *st = v->free_list;
    if (st != NULL) {
        v->free_list = st->next_free;
    } else if ((st = calloc(1, sizeof(*st))) != NULL) {
        st->next_all = v->all;
        v->all = st;
        atomic_fetch_add(&v->nstates, 1);
    }
    pthread_mutex_unlock(&v->lock);
    return st;
}

void ingot_vision_state_give(ingot_vision_h v, vision_state_t *st)
{
    pthread_mutex_lock(&v->lock);
    st->next_free = v->free_list;
    v->free_list = st;
    pthread_mutex_unlock(&v->lock);
}

ingot_status_t ingot_vision_grow(vision_state_t *st, void **buf, size_t *cap, size_t need,
                                 const char *what)
{
    if (need <= *cap) {
        return INGOT_OK;
    }
    size_t want = (need + VISION_GROW_STEP - 1) / VISION_GROW_STEP * VISION_GROW_STEP;
    void *p = realloc(*buf, want);
    if (p == NULL) {
        snprintf(st->why, sizeof(st->why), "out of memory growing the %s to %zu bytes", what, want);
        return INGOT_ERR_NO_MEMORY;
    }
    atomic_fetch_add_explicit(&st->bytes, want - *cap, memory_order_relaxed);
    *buf = p;
    *cap = want;
    return INGOT_OK;
}

ingot_status_t ingot_vision_stats(ingot_vision_h v, ingot_vision_stats_t *s)
{
    if (v == NULL || s == NULL) {
        return ingot_fail(INGOT_ERR_INVALID_PARAM, "ingot_vision_stats: NULL argument");
    }
    ingot_vision_stats_t t = {0};
    pthread_mutex_lock(&v->lock);
    for (const vision_state_t *st = v->all; st != NULL; st = st->next_all) {
        const vision_counters_t *n = &st->n;
        t.images += atomic_load_explicit(&n->images, memory_order_relaxed);
        t.jpeg += atomic_load_explicit(&n->by_format[VISION_FORMAT_JPEG], memory_order_relaxed);
        t.png += atomic_load_explicit(&n->by_format[VISION_FORMAT_PNG], memory_order_relaxed);
        t.pnm += atomic_load_explicit(&n->by_format[VISION_FORMAT_PNM], memory_order_relaxed);
        t.pixels_declared += atomic_load_explicit(&n->pixels_declared, memory_order_relaxed);
        t.pixels_decoded += atomic_load_explicit(&n->pixels_decoded, memory_order_relaxed);
        t.dct_scaled += atomic_load_explicit(&n->dct_scaled, memory_order_relaxed);
        t.scratch_bytes += atomic_load_explicit(&st->bytes, memory_order_relaxed);
        t.states++;
    }
    pthread_mutex_unlock(&v->lock);
    if (s->field_mask & INGOT_VISION_STATS_FIELD_COUNTS) {
        s->images = t.images;
        s->jpeg = t.jpeg;
        s->png = t.png;
        s->pnm = t.pnm;
    }
    if (s->field_mask & INGOT_VISION_STATS_FIELD_PIXELS) {
        s->pixels_declared = t.pixels_declared;
        s->pixels_decoded = t.pixels_decoded;
        s->dct_scaled = t.dct_scaled;
    }
    if (s->field_mask & INGOT_VISION_STATS_FIELD_MEMORY) {
        s->states = t.states;
        s->scratch_bytes = t.scratch_bytes;
    }
    return INGOT_OK;
}

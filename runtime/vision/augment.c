/*
 * The random part of the image transform: each sample's crop box and flip, drawn from a
 * counter-based generator keyed by (loader seed, transform seed, epoch, global index), so the
 * draws do not depend on which rank, worker or run makes them. The boxes follow torchvision:
 * RandomResizedCrop (ten draws of area share and log-aspect, then its central fallback),
 * Resize(shorter side) + CenterCrop as one box of the original image, or the whole image.
 */
#include "runtime/vision/vision_impl.h"
#include "base/mix.h"
#include <math.h>

/** RandomResizedCrop's draws before its central fallback (torchvision: 10). */
#define VISION_CROP_ATTEMPTS 10
/** Keys of the two independent streams of a sample: the crop's and the flip's. */
#define VISION_STREAM_CROP 0x63726f70u /* "crop" */
#define VISION_STREAM_FLIP 0x666c6970u /* "flip" */
#define VISION_DOUBLE_BITS 53
#define VISION_DCT_DENOM   8u

typedef struct vision_rng {
    uint64_t s;
} vision_rng_t;

static vision_rng_t vision_rng(const struct ingot_vision *v, uint64_t seed, uint64_t epoch,
                               uint64_t index, uint64_t stream)
{
    uint64_t s = ingot_mix64(seed);
    s = ingot_mix64(s ^ v->p.seed);
    s = ingot_mix64(s ^ epoch);
    s = ingot_mix64(s ^ index);
    return (vision_rng_t){ingot_mix64(s ^ stream)};
}

static uint64_t vision_next(vision_rng_t *r)
{
    r->s += INGOT_MIX_GOLDEN;
    return ingot_mix64(r->s);
}

/* Uniform in [lo, hi). */
static double vision_uniform(vision_rng_t *r, double lo, double hi)
{
    double u = (double)(vision_next(r) >> (64 - VISION_DOUBLE_BITS)) *
               (1.0 / (double)(1ull << VISION_DOUBLE_BITS));
    return lo + (hi - lo) * u;
}

/* Uniform integer in [0, n), n >= 1. */
static uint32_t vision_below(vision_rng_t *r, uint32_t n)
{
    return (uint32_t)(((vision_next(r) >> 32) * (uint64_t)n) >> 32);
}

/* Python's round() (halves to even), which torchvision's int(round(...)) uses. */
static long vision_round(double x)
{
    return (long)nearbyint(x);
}

/* torchvision's RandomResizedCrop.get_params over a width x height image. */
static void vision_box_random(const struct ingot_vision *v, vision_rng_t *r, uint32_t width,
                              uint32_t height, vision_box_t *box)
{
    double area = (double)width * (double)height;
    for (int k = 0; k < VISION_CROP_ATTEMPTS; k++) {
        double target = area * vision_uniform(r, v->p.scale[0], v->p.scale[1]);
        double aspect = exp(vision_uniform(r, v->log_ratio[0], v->log_ratio[1]));
        long w = vision_round(sqrt(target * aspect));
        long h = vision_round(sqrt(target / aspect));
        if (w > 0 && h > 0 && w <= (long)width && h <= (long)height) {
            box->y = vision_below(r, height - (uint32_t)h + 1);
            box->x = vision_below(r, width - (uint32_t)w + 1);
            box->w = (double)w;
            box->h = (double)h;
            return;
        }
    }
    double in_ratio = (double)width / (double)height;
    long w = width, h = height;
    if (in_ratio < v->p.ratio[0]) {
        h = vision_round((double)w / v->p.ratio[0]);
    } else if (in_ratio > v->p.ratio[1]) {
        w = vision_round((double)h * v->p.ratio[1]);
    }
    h = h < 1 ? 1 : h;
    w = w < 1 ? 1 : w;
    uint32_t top = (height - (uint32_t)h) / 2, left = (width - (uint32_t)w) / 2; /* Python's // */
    box->y = top;
    box->x = left;
    box->w = (double)w;
    box->h = (double)h;
}

/* torchvision's Resize(resize) (shorter side; the longer truncated) then CenterCrop(height,
 * width), as the box of the original image that the crop covers. */
static void vision_box_center(const struct ingot_vision *v, uint32_t width, uint32_t height,
                              vision_box_t *box)
{
    double rw, rh; /* the resized image */
    if (width <= height) {
        rw = v->p.resize;
        rh = floor((double)v->p.resize * height / width);
    } else {
        rh = v->p.resize;
        rw = floor((double)v->p.resize * width / height);
    }
    double fx = width / rw, fy = height / rh; /* original pixels per resized pixel */
    double top = (double)vision_round((rh - v->p.height) / 2.0);
    double left = (double)vision_round((rw - v->p.width) / 2.0);
    box->x = left * fx;
    box->y = top * fy;
    box->w = v->p.width * fx;
    box->h = v->p.height * fy;
}

void ingot_vision_box_draw(const struct ingot_vision *v, uint64_t seed, uint64_t epoch,
                           uint64_t index, uint32_t width, uint32_t height, vision_box_t *box)
{
    *box = (vision_box_t){0, 0, width, height, 0};
    if (v->p.crop == INGOT_IMAGE_CROP_RANDOM) {
        vision_rng_t r = vision_rng(v, seed, epoch, index, VISION_STREAM_CROP);
        vision_box_random(v, &r, width, height, box);
    } else if (v->p.crop == INGOT_IMAGE_CROP_CENTER) {
        vision_box_center(v, width, height, box);
    }
    if (v->p.flip > 0.0f) {
        vision_rng_t r = vision_rng(v, seed, epoch, index, VISION_STREAM_FLIP);
        box->flip = vision_uniform(&r, 0.0, 1.0) < (double)v->p.flip;
    }
}

unsigned ingot_vision_dct_scale(const struct ingot_vision *v, const vision_box_t *box)
{
    static const unsigned fast[] = {1, 2, 4, 8};
    if (v->p.dct == INGOT_IMAGE_DCT_OFF) {
        return VISION_DCT_DENOM;
    }
    for (unsigned num = 1; num < VISION_DCT_DENOM; num++) {
        int allowed = v->p.dct == INGOT_IMAGE_DCT_ANY;
        for (unsigned k = 0; k < sizeof(fast) / sizeof(fast[0]); k++) {
            allowed |= fast[k] == num;
        }
        if (allowed && box->w * num >= (double)v->p.width * VISION_DCT_DENOM &&
            box->h * num >= (double)v->p.height * VISION_DCT_DENOM) {
            return num;
        }
    }
    return VISION_DCT_DENOM;
}

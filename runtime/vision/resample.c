/*
 * Resampling of the image transform: a box of the decoded image to the output size, bilinear
 * with antialiasing (Pillow's BILINEAR: a triangle filter whose support widens with the
 * downscale factor; torchvision's PIL path and DALI's linear resize do the same), mirrored by
 * reversing the column table, then converted (float32 normalised or uint8) into the output's
 * layout. Separable, one output row at a time: the vertical pass runs over the region's columns
 * (contiguous bytes, vectorised), the horizontal one over the output's, a whole RGBX pixel per
 * multiply-add; the scratch is two rows.
 */
#include "runtime/vision/vision_impl.h"
#include "base/status.h"
#include <math.h>
#include <stdatomic.h>
#include <string.h>

/** Pillow's bilinear filter: support 1 (in output pixels, widened by the downscale factor). */
#define VISION_FILTER_SUPPORT 1.0

static double vision_triangle(double x)
{
    x = fabs(x);
    return x < 1.0 ? 1.0 - x : 0.0;
}

/* Taps one output of an axis may need: the filter's width in input pixels, plus one. */
static uint32_t axis_taps(double in0, double in1, uint32_t out)
{
    double scale = (in1 - in0) / out;
    double support = VISION_FILTER_SUPPORT * (scale > 1.0 ? scale : 1.0);
    return (uint32_t)ceil(support) * 2 + 1;
}

/* One axis's table (Pillow's precompute_coeffs): per output its first input and the inputs used
 * (idx[2 o], idx[2 o + 1]), and ksize normalised weights (zero past the used ones). */
static void axis_plan(double in0, double in1, uint32_t in_size, uint32_t out, uint32_t ksize,
                      int32_t *idx, float *w)
{
    double scale = (in1 - in0) / out;
    double fscale = scale > 1.0 ? scale : 1.0;
    double support = VISION_FILTER_SUPPORT * fscale;
    for (uint32_t o = 0; o < out; o++) {
        double center = in0 + (o + 0.5) * scale;
        long lo = (long)(center - support + 0.5), hi = (long)(center + support + 0.5);
        lo = lo < 0 ? 0 : (lo < (long)in_size ? lo : (long)in_size - 1);
        hi = hi > (long)in_size ? (long)in_size : hi;
        hi = hi > lo ? hi : lo + 1; /* a box at the very edge still reads one pixel */
        hi = hi - lo > (long)ksize ? lo + (long)ksize : hi;
        float *k = w + (size_t)o * ksize;
        double sum = 0.0;
        for (long x = lo; x < hi; x++) {
            double t = vision_triangle(((double)x - center + 0.5) / fscale);
            k[x - lo] = (float)t;
            sum += t;
        }
        for (long x = lo; x < hi; x++) {
            k[x - lo] = sum > 0.0 ? (float)(k[x - lo] / sum) : 1.0f / (float)(hi - lo);
        }
        memset(k + (hi - lo), 0, (ksize - (size_t)(hi - lo)) * sizeof(float));
        idx[2 * o] = (int32_t)lo;
        idx[2 * o + 1] = (int32_t)(hi - lo);
    }
}

/* Mirror: output column o takes column (out - 1 - o)'s table. */
static void axis_flip(uint32_t out, uint32_t ksize, int32_t *idx, float *w)
{
    for (uint32_t a = 0, b = out - 1; a < b; a++, b--) {
        for (int j = 0; j < 2; j++) {
            int32_t t = idx[2 * a + j];
            idx[2 * a + j] = idx[2 * b + j];
            idx[2 * b + j] = t;
        }
        for (uint32_t j = 0; j < ksize; j++) {
            float t = w[(size_t)a * ksize + j];
            w[(size_t)a * ksize + j] = w[(size_t)b * ksize + j];
            w[(size_t)b * ksize + j] = t;
        }
    }
}

/* The span [lo, hi) the table reads; the most taps one output uses. */
static uint32_t axis_span(const int32_t *idx, uint32_t out, uint32_t *lo_p, uint32_t *hi_p)
{
    int32_t lo = idx[0], hi = idx[0] + idx[1], taps = idx[1];
    for (uint32_t o = 1; o < out; o++) {
        lo = idx[2 * o] < lo ? idx[2 * o] : lo;
        hi = idx[2 * o] + idx[2 * o + 1] > hi ? idx[2 * o] + idx[2 * o + 1] : hi;
        taps = idx[2 * o + 1] > taps ? idx[2 * o + 1] : taps;
    }
    *lo_p = (uint32_t)lo;
    *hi_p = (uint32_t)hi;
    return (uint32_t)taps;
}

ingot_status_t ingot_vision_resample_plan(vision_state_t *st, const struct ingot_vision *v,
                                          const vision_boxf_t *box, uint32_t sw, uint32_t sh,
                                          int flip, vision_region_t *r)
{
    uint32_t ow = v->p.width, oh = v->p.height;
    r->kx = axis_taps(box->x0, box->x1, ow);
    r->ky = axis_taps(box->y0, box->y1, oh);
    size_t ni = 2 * ((size_t)ow + oh), nw = (size_t)ow * r->kx + (size_t)oh * r->ky;
    INGOT_CHECK(ingot_vision_grow(st, (void **)&st->tab_i, &st->tab_i_cap, ni * sizeof(int32_t),
                                  "filter table"));
    INGOT_CHECK(ingot_vision_grow(st, (void **)&st->tab_w, &st->tab_w_cap, nw * sizeof(float),
                                  "filter table"));
    int32_t *ix = st->tab_i, *iy = st->tab_i + 2 * (size_t)ow;
    float *wx = st->tab_w, *wy = st->tab_w + (size_t)ow * r->kx;
    axis_plan(box->x0, box->x1, sw, ow, r->kx, ix, wx);
    axis_plan(box->y0, box->y1, sh, oh, r->ky, iy, wy);
    if (flip) {
        axis_flip(ow, r->kx, ix, wx);
    }
    r->tx = axis_span(ix, ow, &r->x0, &r->x1);
    axis_span(iy, oh, &r->y0, &r->y1);
    return INGOT_OK;
}

/* The row loops are inlined into one generic function and, on x86-64, one compiled for AVX2 and
 * FMA (8-wide vpass, fused multiply-adds), chosen at run time by the CPU's features. */
#define VISION_INLINE static inline __attribute__((always_inline))
#if defined(__x86_64__)
#    define VISION_X86 1
#else
#    define VISION_X86 0
#endif

/* dst[i] = sum over taps of w[k] * rows[k][i], i < n. */
VISION_INLINE void vision_vpass(float *restrict dst, const uint8_t *src, size_t stride,
                                const float *w, uint32_t taps, size_t n)
{
    const float w0 = w[0];
    for (size_t i = 0; i < n; i++) {
        dst[i] = w0 * (float)src[i];
    }
    for (uint32_t k = 1; k < taps; k++) {
        const uint8_t *restrict s = src + k * stride;
        const float wk = w[k];
        for (size_t i = 0; i < n; i++) {
            dst[i] += wk * (float)s[i];
        }
    }
}

/* Four lanes of float (GCC's and clang's vector extension; SSE2, the x86-64 baseline, or NEON):
 * an RGB pixel and a zero lane, so a tap is one multiply-add of a whole pixel. */
typedef float vision_v4f __attribute__((vector_size(16)));

/* One output row of RGBX pixels from an RGBX row whose first pixel is column x0: every output
 * takes the table's most taps @p tx (zero weights past its own, within its kx; the row is
 * padded with zeros), a constant count for the common tables (2 to 6) so the taps unroll and
 * no branch depends on the pixel. */
VISION_INLINE void vision_hpass4_k(vision_v4f *restrict dst, const vision_v4f *src,
                                   const int32_t *ix, const float *wx, uint32_t kx, uint32_t tx,
                                   uint32_t ow, uint32_t x0)
{
    for (uint32_t o = 0; o < ow; o++) {
        const vision_v4f *s = src + (ix[2 * o] - (int32_t)x0);
        const float *w = wx + (size_t)o * kx;
        vision_v4f acc = {0.0f, 0.0f, 0.0f, 0.0f};
        for (uint32_t k = 0; k < tx; k++) {
            acc += w[k] * s[k];
        }
        dst[o] = acc;
    }
}

VISION_INLINE void vision_hpass4(vision_v4f *restrict dst, const vision_v4f *src, const int32_t *ix,
                                 const float *wx, uint32_t kx, uint32_t tx, uint32_t ow,
                                 uint32_t x0)
{
    switch (tx) {
    case 2: vision_hpass4_k(dst, src, ix, wx, kx, 2, ow, x0); break;
    case 3: vision_hpass4_k(dst, src, ix, wx, kx, 3, ow, x0); break;
    case 4: vision_hpass4_k(dst, src, ix, wx, kx, 4, ow, x0); break;
    case 5: vision_hpass4_k(dst, src, ix, wx, kx, 5, ow, x0); break;
    case 6: vision_hpass4_k(dst, src, ix, wx, kx, 6, ow, x0); break;
    default: vision_hpass4_k(dst, src, ix, wx, kx, tx, ow, x0); break;
    }
}

/* One output row of one channel. */
VISION_INLINE void vision_hpass1(float *restrict dst, const float *src, const int32_t *ix,
                                 const float *wx, uint32_t kx, uint32_t ow, uint32_t x0)
{
    for (uint32_t o = 0; o < ow; o++) {
        const float *s = src + (ix[2 * o] - (int32_t)x0);
        const float *w = wx + (size_t)o * kx;
        float acc = 0.0f;
        for (int32_t k = 0; k < ix[2 * o + 1]; k++) {
            acc += w[k] * s[k];
        }
        dst[o] = acc;
    }
}

VISION_INLINE uint8_t vision_u8(float x)
{
    x = x < 0.0f ? 0.0f : (x > 255.0f ? 255.0f : x);
    return (uint8_t)(x + 0.5f);
}

/* Convert one output row @p row (pixels of @p lanes floats: 4 for RGBX, 1 for gray) into output
 * row @p oy. */
VISION_INLINE void vision_store(const struct ingot_vision *v, const float *row, uint32_t lanes,
                                uint32_t oy, void *out)
{
    uint32_t ow = v->p.width, c = v->out_c;
    size_t plane = (size_t)ow * v->p.height, step = v->p.layout == INGOT_IMAGE_CHW ? 1 : c;
    size_t first = (size_t)oy * ow * step; /* the row's first element (channel 0) */
    size_t at[VISION_CHANNELS_MAX] = {0};  /* each channel's first element */
    for (uint32_t j = 0; j < c; j++) {
        at[j] = first + (step == 1 ? j * plane : j);
    }
    if (v->p.dtype == INGOT_IMAGE_FLOAT32 && lanes == 4) { /* the common case: one pass */
        const vision_v4f a = {v->scale[0], v->scale[1], v->scale[2], 0.0f};
        const vision_v4f b = {v->bias[0], v->bias[1], v->bias[2], 0.0f};
        float *restrict d0 = (float *)out + at[0], *restrict d1 = (float *)out + at[1];
        float *restrict d2 = (float *)out + at[2];
        const vision_v4f *px = (const vision_v4f *)row;
        for (uint32_t x = 0; x < ow; x++) {
            vision_v4f y = px[x] * a + b;
            d0[x * step] = y[0];
            d1[x * step] = y[1];
            d2[x * step] = y[2];
        }
        return;
    }
    for (uint32_t j = 0; j < c; j++) {
        if (v->p.dtype == INGOT_IMAGE_FLOAT32) {
            const float a = v->scale[j], b = v->bias[j];
            float *restrict d = (float *)out + at[j];
            for (uint32_t x = 0; x < ow; x++) {
                d[x * step] = row[(size_t)x * lanes + j] * a + b;
            }
        } else {
            uint8_t *restrict d = (uint8_t *)out + at[j];
            for (uint32_t x = 0; x < ow; x++) {
                d[x * step] = vision_u8(row[(size_t)x * lanes + j]);
            }
        }
    }
}

/* The rows' buffers: the vertical pass's (pixels of @p lanes floats, padded by kx pixels of
 * zeros), an output row. */
static ingot_status_t vision_rows(vision_state_t *st, const struct ingot_vision *v,
                                  const vision_region_t *r, uint32_t lanes)
{
    size_t w = r->x1 - r->x0;
    INGOT_CHECK(ingot_vision_grow(st, (void **)&st->vrow, &st->vrow_cap,
                                  (w + r->kx) * lanes * sizeof(float), "row"));
    memset(st->vrow + w * lanes, 0, (size_t)r->kx * lanes * sizeof(float));
    return ingot_vision_grow(st, (void **)&st->orow, &st->orow_cap,
                             (size_t)v->p.width * lanes * sizeof(float), "row");
}

/* Every output row of the plan, from the region @p px. */
typedef struct vision_rows_arg {
    vision_state_t *st;
    const struct ingot_vision *v;
    const vision_region_t *r;
    const vision_pixels_t *px;
    void *out;
} vision_rows_arg_t;

VISION_INLINE void vision_rows_run(const vision_rows_arg_t *a)
{
    vision_state_t *st = a->st;
    const vision_region_t *r = a->r;
    uint32_t ow = a->v->p.width, oh = a->v->p.height, lanes = a->px->channels;
    size_t w = r->x1 - r->x0;
    const int32_t *ix = st->tab_i, *iy = st->tab_i + 2 * (size_t)ow;
    const float *wx = st->tab_w, *wy = st->tab_w + (size_t)ow * r->kx;
    const uint8_t *base = a->px->px + (size_t)(r->x0 - a->px->x0) * lanes;
    for (uint32_t oy = 0; oy < oh; oy++) {
        const uint8_t *src = base + (size_t)(iy[2 * oy] - (int32_t)a->px->y0) * a->px->stride;
        vision_vpass(st->vrow, src, a->px->stride, wy + (size_t)oy * r->ky,
                     (uint32_t)iy[2 * oy + 1], w * lanes);
        if (lanes == 4) {
            vision_hpass4((vision_v4f *)st->orow, (const vision_v4f *)st->vrow, ix, wx, r->kx,
                          r->tx, ow, r->x0);
        } else {
            vision_hpass1(st->orow, st->vrow, ix, wx, r->kx, ow, r->x0);
        }
        vision_store(a->v, st->orow, lanes, oy, a->out);
    }
}

static void vision_rows_generic(const vision_rows_arg_t *a)
{
    vision_rows_run(a);
}

#if VISION_X86
__attribute__((target("avx2,fma"))) static void vision_rows_avx2(const vision_rows_arg_t *a)
{
    vision_rows_run(a);
}
#endif

/* -1: not decided yet; 0: generic; 1: AVX2 (ingot_vision_resample_simd() may force 0 for tests). */
static _Atomic int vision_simd = -1;

void ingot_vision_resample_simd(int on)
{
    atomic_store(&vision_simd, on ? -1 : 0); /* on: the CPU decides again */
}

ingot_status_t ingot_vision_resample_run(vision_state_t *st, const struct ingot_vision *v,
                                         const vision_region_t *r, const vision_pixels_t *px,
                                         void *out)
{
    INGOT_CHECK(vision_rows(st, v, r, px->channels));
    vision_rows_arg_t a = {st, v, r, px, out};
#if VISION_X86
    int simd = atomic_load_explicit(&vision_simd, memory_order_relaxed);
    if (simd < 0) {
        simd = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
        atomic_store(&vision_simd, simd);
    }
    if (simd) {
        vision_rows_avx2(&a);
        return INGOT_OK;
    }
#endif
    vision_rows_generic(&a);
    return INGOT_OK;
}

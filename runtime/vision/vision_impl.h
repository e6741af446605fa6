/*
 * The image transform's internals (include/ingot/vision.h): the prepared parameters, the
 * per-call scratch state, and the stages one sample goes through (vision_transform.c): find the
 * field, read the header (jpeg.c, png.c, pnm.c), draw the box (augment.c), plan and resample
 * (resample.c).
 */
#ifndef INGOT_RUNTIME_VISION_IMPL_H
#define INGOT_RUNTIME_VISION_IMPL_H

#include <ingot/vision.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/** Largest output side: tables and rows stay small, offsets fit in 32 bits. */
#define VISION_SIZE_MAX 16384u
/** Longest reason a stage writes for the transform's one error message. */
#define VISION_WHY_MAX 256
/** Most channels a decoder hands to the resampler (CMYK is converted while decoding). */
#define VISION_CHANNELS_MAX 3

typedef enum vision_format {
    VISION_FORMAT_JPEG = 0,
    VISION_FORMAT_PNG = 1,
    VISION_FORMAT_PNM = 2,
    VISION_FORMAT_UNKNOWN = 3
} vision_format_t;

/** Per-state counters (atomic: ingot_vision_stats() reads them while the owner writes). */
typedef struct vision_counters {
    _Atomic uint64_t images, by_format[3], pixels_declared, pixels_decoded, dct_scaled;
} vision_counters_t;

typedef struct vision_jpeg vision_jpeg_t; /* jpeg.c: the decompressor and its error manager */
typedef struct vision_png vision_png_t;   /* png.c: the decoder of one image */

/** One call's scratch: taken from the transform's free list, kept between calls. */
typedef struct vision_state {
    struct vision_state *next_free; /* on the free list */
    struct vision_state *next_all;  /* every state of the transform */
    vision_jpeg_t *jpeg;            /* made on the first JPEG */
    uint8_t *px;                    /* the decoded region, rows of px_stride bytes */
    size_t px_cap;
    uint8_t *row; /* one source row: a PNG row above the region, a CMYK row */
    size_t row_cap;
    float *vrow; /* one output row's vertical pass over the region's columns */
    size_t vrow_cap;
    float *orow; /* one output row, interleaved, before conversion */
    size_t orow_cap;
    int32_t *tab_i; /* per output column then row: first source index, taps used */
    float *tab_w;   /* per output column then row: taps weights */
    size_t tab_i_cap, tab_w_cap;
    vision_png_t *png; /* made on the first PNG */
    uint8_t *arena;    /* libpng's allocations for one image (png.c) */
    size_t arena_cap, arena_used, arena_over;
    _Atomic uint64_t bytes; /* scratch held */
    vision_counters_t n;
    char why[VISION_WHY_MAX];
} vision_state_t;

/** The prepared transform. */
struct ingot_vision {
    ingot_vision_params_t p; /* every field set (defaults applied) */
    uint32_t out_c;
    size_t out_size;
    float scale[VISION_CHANNELS_MAX], bias[VISION_CHANNELS_MAX]; /* float32: v * scale + bias */
    double log_ratio[2];
    pthread_mutex_t lock; /* the lists */
    vision_state_t *free_list, *all;
    _Atomic uint64_t nstates;
};

/** An image's size, as its header declares it. */
typedef struct vision_dims {
    uint32_t width, height;
    uint32_t channels_in; /* what the file holds (1, 3, 4), for messages */
} vision_dims_t;

/** A box of the image in its own pixels (whole pixels for a random crop, fractions for a
 *  center crop), and whether the output is mirrored. */
typedef struct vision_box {
    double x, y, w, h;
    int flip;
} vision_box_t;

/** A box in the decoded (possibly DCT-scaled) image, in floating pixels. */
typedef struct vision_boxf {
    double x0, y0, x1, y1;
} vision_boxf_t;

/** The region of the decoded image the resampler reads: columns [x0, x1), rows [y0, y1); the
 *  taps of its column and row tables (their strides), the most taps one column uses. */
typedef struct vision_region {
    uint32_t x0, x1, y0, y1;
    uint32_t kx, ky, tx;
} vision_region_t;

/** Bytes per decoded pixel for @p c output channels: gray, or RGBX (a colour pixel is one
 *  vector of four lanes in the resampler; the fourth is never read). */
#define VISION_LANES(_c) ((_c) == 1 ? 1u : 4u)

/** Decoded pixels: the region's first row at px, origin (x0, y0) of the decoded image. */
typedef struct vision_pixels {
    const uint8_t *px;
    size_t stride;     /* bytes per row */
    uint32_t x0, y0;   /* the decoded image's column and row of px */
    uint32_t channels; /* bytes per pixel: VISION_LANES() */
} vision_pixels_t;

/* ---------------------------------------------------------------- vision.c */

/** A scratch state for one call: the free list's first, or a new one (NULL: out of memory). */
vision_state_t *ingot_vision_state_take(struct ingot_vision *v);
/** Give a state back to the free list. */
void ingot_vision_state_give(struct ingot_vision *v, vision_state_t *st);

/** Grow @p *buf to hold @p need bytes (kept, never shrunk); INGOT_ERR_NO_MEMORY with why set. */
ingot_status_t ingot_vision_grow(vision_state_t *st, void **buf, size_t *cap, size_t need,
                                 const char *what);

/* ---------------------------------------------------------------- augment.c */

/** The crop box and flip of one sample, drawn from (seed, v->p.seed, epoch, index). */
void ingot_vision_box_draw(const struct ingot_vision *v, uint64_t seed, uint64_t epoch,
                           uint64_t index, uint32_t width, uint32_t height, vision_box_t *box);
/** The DCT scale numerator (of 8) to decode a JPEG at: the smallest allowed keeping the box at
 *  least the output's size. */
unsigned ingot_vision_dct_scale(const struct ingot_vision *v, const vision_box_t *box);

/* ---------------------------------------------------------------- resample.c */

/** Filter tables from @p box (in a decoded image of @p sw x @p sh) to the output; the region
 *  they read in @p r. */
ingot_status_t ingot_vision_resample_plan(vision_state_t *st, const struct ingot_vision *v,
                                          const vision_boxf_t *box, uint32_t sw, uint32_t sh,
                                          int flip, vision_region_t *r);
/** Let the CPU choose the resampling loops (1: AVX2 and FMA where it has them, the default) or
 *  force the generic ones (0); process-wide, for tests comparing the two. */
void ingot_vision_resample_simd(int on);
/** Resample the region @p px into @p out (the transform's dtype and layout). */
ingot_status_t ingot_vision_resample_run(vision_state_t *st, const struct ingot_vision *v,
                                         const vision_region_t *r, const vision_pixels_t *px,
                                         void *out);

/* ---------------------------------------------------------------- jpeg.c */

/** Read a JPEG's header (the decompressor stays open for scale/region or abort). */
ingot_status_t ingot_vision_jpeg_header(vision_state_t *st, const uint8_t *data, size_t len,
                                        vision_dims_t *d);
/** Set the output colour (@p channels) and DCT scale @p num / 8; the decoded size in @p sw,
 *  @p sh (on error the decompressor is closed). */
ingot_status_t ingot_vision_jpeg_scale(vision_state_t *st, unsigned num, uint32_t channels,
                                       uint32_t *sw, uint32_t *sh);
/** Decode region @p r to @p channels bytes a pixel (1 gray, 4 RGBX) into st->px; closes the
 *  decompressor. */
ingot_status_t ingot_vision_jpeg_region(vision_state_t *st, const vision_region_t *r,
                                        uint32_t channels, vision_pixels_t *px);
/** Close an open decompressor after an error between header and region. */
void ingot_vision_jpeg_abort(vision_state_t *st);
/** Free the decompressor. */
void ingot_vision_jpeg_free(vision_state_t *st);

/* ---------------------------------------------------------------- png.c */

/** Read a PNG's IHDR (no decoder is kept open). */
ingot_status_t ingot_vision_png_header(vision_state_t *st, const uint8_t *data, size_t len,
                                       vision_dims_t *d);
/** Decode rows [0, r->y1) of the PNG whose header was read to @p channels, keeping rows
 *  [r->y0, r->y1) in st->px (every row when interlaced); closes the decoder. */
ingot_status_t ingot_vision_png_region(vision_state_t *st, const vision_region_t *r,
                                       uint32_t channels, vision_pixels_t *px);
/** Close the decoder after an error between header and region. */
void ingot_vision_png_abort(vision_state_t *st);
/** Free the decoder. */
void ingot_vision_png_free(vision_state_t *st);

/* ---------------------------------------------------------------- pnm.c */

/** Read a binary PNM's header (P5 or P6, maxval 255, every pixel present). */
ingot_status_t ingot_vision_pnm_header(vision_state_t *st, const uint8_t *data, size_t len,
                                       vision_dims_t *d);
/** The pixels of region @p r in @p channels: in place when the file has them, else converted
 *  into st->px. */
ingot_status_t ingot_vision_pnm_region(vision_state_t *st, const uint8_t *data, size_t len,
                                       const vision_region_t *r, uint32_t channels,
                                       vision_pixels_t *px);

/** Luma of an RGB pixel (ITU-R BT.601, as libjpeg and Pillow's convert("L")). */
static inline uint8_t vision_luma(uint32_t r, uint32_t g, uint32_t b)
{
    return (uint8_t)((r * 19595u + g * 38470u + b * 7471u + 32768u) >> 16);
}

#endif

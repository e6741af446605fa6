/*
 * The binary PNM header (P5, P6), parsed once for both image transforms: the normalising one
 * (runtime/transform.c) and the decoding one (runtime/vision/pnm.c).
 */
#ifndef INGOT_RUNTIME_VISION_PNM_H
#define INGOT_RUNTIME_VISION_PNM_H

#include <stddef.h>

/** "P5"|"P6", width, height, maxval, separated by whitespace and '#' comments (to the end of
 *  their line), then one whitespace byte. */
typedef struct pnm_header {
    unsigned channels, width, height, maxval;
    size_t pixels; /* offset of the first pixel byte */
} pnm_header_t;

/** 1 when the bytes start with a binary PNM header (filled in), 0 otherwise. */
int ingot_pnm_parse(const unsigned char *p, size_t len, pnm_header_t *h);

#endif

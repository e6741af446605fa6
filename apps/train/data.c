/*
 * The transform ingot-train gives its loaders: a Fashion-MNIST sample's P5 image (the `pgm`
 * member that ingot-manifest pack --fashion-mnist writes) to 784 floats normalised with the
 * dataset's mean and standard deviation. It runs in the loader's workers; the label comes with
 * the batch (the sample's `cls` member), not through here.
 */
#include "train/train.h"
#include <stdio.h>
#include <string.h>

#define TRAIN_MEAN 0.2860f /* Fashion-MNIST training images, pixel / 255 */
#define TRAIN_STD  0.3530f

/* Skip "P5 <w> <h> <max>" and the one whitespace after it; the pixels' offset, or 0. */
static size_t pgm_pixels(const unsigned char *p, size_t len, unsigned *w, unsigned *h)
{
    unsigned max = 0;
    int used = 0;
    char head[32];
    size_t n = len < sizeof(head) - 1 ? len : sizeof(head) - 1;
    memcpy(head, p, n);
    head[n] = '\0';
    if (sscanf(head, "P5 %u %u %u%n", w, h, &max, &used) != 3 || max != 255 || used <= 0 ||
        (size_t)used >= len) {
        return 0;
    }
    return (size_t)used + 1;
}

ingot_status_t train_pgm_to_floats(const ingot_sample_view_t *sample, void *out, size_t out_size,
                                   void *arg)
{
    (void)arg;
    for (uint32_t f = 0; f < sample->field_count; f++) {
        const ingot_field_view_t *fv = &sample->fields[f];
        if (strcmp(fv->name, "pgm") != 0) {
            continue;
        }
        unsigned w = 0, h = 0;
        size_t off = pgm_pixels(fv->data, fv->len, &w, &h);
        if (off == 0 || w * h != TRAIN_PIXELS || fv->len - off != TRAIN_PIXELS ||
            out_size != TRAIN_PIXELS * sizeof(float)) {
            fprintf(stderr, TRAIN_TOOL ": sample %s: not a 28x28 P5 image (%zu bytes)\n",
                    sample->key, fv->len);
            return INGOT_ERR_FORMAT;
        }
        const unsigned char *px = (const unsigned char *)fv->data + off;
        float *x = out;
        for (size_t i = 0; i < TRAIN_PIXELS; i++) {
            x[i] = ((float)px[i] / 255.0f - TRAIN_MEAN) / TRAIN_STD;
        }
        return INGOT_OK;
    }
    fprintf(stderr, TRAIN_TOOL ": sample %s has no pgm member (a Fashion-MNIST pack?)\n",
            sample->key);
    return INGOT_ERR_FORMAT;
}

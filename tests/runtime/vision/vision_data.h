/*
 * Datasets of the image transform's loader tests: an ImageFolder of JPEGs (made with
 * libjpeg-turbo's encoder, sizes varying per image) packed through the public API
 * (ingot_import_image_folder -> packer), and the transform the loaders run.
 */
#ifndef INGOT_TEST_VISION_DATA_H
#define INGOT_TEST_VISION_DATA_H

#include "vision_util.h"
#include <sys/stat.h>

#define VD_CLASSES 4
#define VD_SIDE    24 /* output: 3 x 24 x 24 float32 */

static inline void vd_write(const char *path, const void *p, size_t len)
{
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL && fwrite(p, 1, len, f) == len);
    fclose(f);
}

/** ROOT/c<k>/<i>.jpg for i < @p n (class i % VD_CLASSES), sizes from 40x30 to 160x120. */
static inline void vd_folder(const char *root, uint32_t n)
{
    char path[2048];
    mkdir(root, 0755);
    for (uint32_t k = 0; k < VD_CLASSES; k++) {
        snprintf(path, sizeof(path), "%s/c%u", root, k);
        mkdir(path, 0755);
    }
    for (uint32_t i = 0; i < n; i++) {
        uint32_t w = 40 + (i * 37) % 121, h = 30 + (i * 53) % 91;
        uint8_t *px = img_pixels(w, h, 3, i);
        size_t len;
        uint8_t *j = img_jpeg(px, w, h, (img_jpeg_opts_t){85, (int)(i % 5 == 0), 0, JCS_RGB}, &len);
        snprintf(path, sizeof(path), "%s/c%u/%04u.jpg", root, i % VD_CLASSES, i);
        vd_write(path, j, len);
        free(j);
        free(px);
    }
}

/** Pack the ImageFolder @p root into @p out; its manifest's path (static). */
static inline const char *vd_pack(const char *root, const char *out)
{
    static char manifest[2048];
    ingot_packer_params_t pp = {.field_mask = INGOT_PACKER_PARAM_FIELD_OUT_DIR, .out_dir = out};
    ingot_packer_h p;
    CHECK_OK(ingot_packer_create(&pp, &p));
    CHECK_OK(ingot_import_image_folder(root, NULL, ingot_pack_member_cb, p, NULL));
    CHECK_OK(ingot_packer_finish(p, NULL, NULL));
    ingot_packer_destroy(p);
    snprintf(manifest, sizeof(manifest), "%s/%s", out, INGOT_PACK_MANIFEST_NAME);
    return manifest;
}

/** The loaders' transform: RandomResizedCrop + flip to 3 x 24 x 24 float32, ImageNet's
 *  normalisation. */
static inline ingot_vision_h vd_vision(void)
{
    ingot_vision_params_t p = {.field_mask = INGOT_VISION_PARAM_FIELD_SIZE |
                                             INGOT_VISION_PARAM_FIELD_NORMALIZE,
                               .height = VD_SIDE,
                               .width = VD_SIDE,
                               .mean = {0.485f, 0.456f, 0.406f},
                               .std = {0.229f, 0.224f, 0.225f}};
    ingot_vision_h v;
    CHECK_OK(ingot_vision_create(&p, &v));
    return v;
}

/** FNV-1a of an output. */
static inline uint64_t vd_hash(const void *p, size_t n)
{
    const uint8_t *b = p;
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) {
        h = (h ^ b[i]) * 1099511628211ull;
    }
    return h;
}

#endif

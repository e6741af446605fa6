/*
 * vision.c: ingot.ImageTransform's decode and augment options (issue 26), turned into the
 * library's image decode transform (include/ingot/vision.h: JPEG, PNG, PNM decoded in the
 * loader's workers, RandomResizedCrop / center crop, flip, float32 or uint8, CHW or HWC).
 * transform.c owns the type; this file parses the options and makes the ingot_vision_h.
 */
#include "pyingot.h"

#include <string.h>

/* A str option among @p names (NULL-terminated, indexed by the enum's values). */
static int vision_choice(PyObject *o, const char *what, const char *const *names, int *v)
{
    const char *s = o && PyUnicode_Check(o) ? PyUnicode_AsUTF8AndSize(o, NULL) : NULL;
    for (int i = 0; s != NULL && names[i] != NULL; i++) {
        if (strcmp(s, names[i]) == 0) {
            *v = i;
            return 0;
        }
    }
    PyErr_Clear();
    PyObject *r = o ? PyObject_Repr(o) : NULL;
    pyingot_raisef(INGOT_ERR_INVALID_PARAM,
                   "ImageTransform(%s=%s): expected one of '%s', '%s'%s%s%s", what,
                   r ? PyUnicode_AsUTF8AndSize(r, NULL) : "?", names[0], names[1],
                   names[2] ? ", '" : "", names[2] ? names[2] : "", names[2] ? "'" : "");
    Py_XDECREF(r);
    return -1;
}

/* A pair of floats (scale, ratio). */
static int vision_pair(PyObject *o, const char *what, float *out)
{
    PyObject *seq = PySequence_Check(o) ? pyingot_tuple_of(o, what) : NULL;
    int ok = seq != NULL && PyTuple_Size(seq) == 2;
    for (int i = 0; ok && i < 2; i++) {
        out[i] = (float)PyFloat_AsDouble(PyTuple_GetItem(seq, i));
        ok = !PyErr_Occurred();
    }
    Py_XDECREF(seq);
    if (!ok) {
        PyErr_Clear();
        PyObject *r = PyObject_Repr(o);
        pyingot_raisef(INGOT_ERR_INVALID_PARAM,
                       "ImageTransform(%s=%s): expected two numbers "
                       "(low, high)",
                       what, r ? PyUnicode_AsUTF8AndSize(r, NULL) : "?");
        Py_XDECREF(r);
        return -1;
    }
    return 0;
}

/* A non-negative integer option. */
static int vision_uint(PyObject *o, const char *what, unsigned long long *out)
{
    *out = PyLong_Check(o) ? PyLong_AsUnsignedLongLong(o) : (unsigned long long)-1;
    if (!PyLong_Check(o) || PyErr_Occurred()) {
        PyErr_Clear();
        PyObject *r = PyObject_Repr(o);
        pyingot_raisef(INGOT_ERR_INVALID_PARAM,
                       "ImageTransform(%s=%s): expected a non-negative "
                       "integer",
                       what, r ? PyUnicode_AsUTF8AndSize(r, NULL) : "?");
        Py_XDECREF(r);
        return -1;
    }
    return 0;
}

int pyingot_vision_wanted(const pyingot_vision_opts_t *o)
{
    return o->decode || (o->crop != NULL && o->crop != Py_None);
}

int pyingot_vision_unused(const pyingot_vision_opts_t *o)
{
    static const char *const names[] = {"scale",  "ratio",      "flip", "resize",
                                        "layout", "max_pixels", "seed", "dct"};
    PyObject *given[] = {o->scale,  o->ratio,      o->flip, o->resize,
                         o->layout, o->max_pixels, o->seed, o->dct};
    for (size_t i = 0; i < sizeof(given) / sizeof(given[0]); i++) {
        if (given[i] != NULL && given[i] != Py_None) {
            pyingot_raisef(INGOT_ERR_INVALID_PARAM,
                           "ImageTransform(%s=...): a decode option; pass decode=True (or "
                           "crop='random'|'center'|'none') to decode JPEG/PNG/PNM images",
                           names[i]);
            return -1;
        }
    }
    return 0;
}

/* The enum and numeric options into @p p's fields. */
static int vision_options(const pyingot_vision_opts_t *o, ingot_vision_params_t *p)
{
    static const char *const crops[] = {"random", "center", "none", NULL};
    static const char *const layouts[] = {"CHW", "HWC", NULL};
    static const char *const dcts[] = {"fast", "any", "off", NULL};
    int v;
    unsigned long long u;
    if (o->crop && o->crop != Py_None) {
        if (vision_choice(o->crop, "crop", crops, &v) != 0) return -1;
        p->field_mask |= INGOT_VISION_PARAM_FIELD_CROP;
        p->crop = (ingot_image_crop_t)v;
    }
    if (o->layout && o->layout != Py_None) {
        if (vision_choice(o->layout, "layout", layouts, &v) != 0) return -1;
        p->field_mask |= INGOT_VISION_PARAM_FIELD_LAYOUT;
        p->layout = (ingot_image_layout_t)v;
    }
    if (o->dct && o->dct != Py_None) {
        if (vision_choice(o->dct, "dct", dcts, &v) != 0) return -1;
        p->field_mask |= INGOT_VISION_PARAM_FIELD_DCT;
        p->dct = (ingot_image_dct_t)v;
    }
    if (o->scale && o->scale != Py_None) {
        if (vision_pair(o->scale, "scale", p->scale) != 0) return -1;
        p->field_mask |= INGOT_VISION_PARAM_FIELD_SCALE;
    }
    if (o->ratio && o->ratio != Py_None) {
        if (vision_pair(o->ratio, "ratio", p->ratio) != 0) return -1;
        p->field_mask |= INGOT_VISION_PARAM_FIELD_RATIO;
    }
    if (o->flip && o->flip != Py_None) {
        p->flip = (float)PyFloat_AsDouble(o->flip);
        if (PyErr_Occurred()) return -1;
        p->field_mask |= INGOT_VISION_PARAM_FIELD_FLIP;
    }
    if (o->resize && o->resize != Py_None) {
        if (vision_uint(o->resize, "resize", &u) != 0) return -1;
        p->field_mask |= INGOT_VISION_PARAM_FIELD_RESIZE;
        p->resize = u > UINT32_MAX ? UINT32_MAX : (uint32_t)u;
    }
    if (o->max_pixels && o->max_pixels != Py_None) {
        if (vision_uint(o->max_pixels, "max_pixels", &u) != 0) return -1;
        p->field_mask |= INGOT_VISION_PARAM_FIELD_MAX_PIXELS;
        p->max_pixels = u;
    }
    if (o->seed && o->seed != Py_None) {
        if (vision_uint(o->seed, "seed", &u) != 0) return -1;
        p->field_mask |= INGOT_VISION_PARAM_FIELD_SEED;
        p->seed = u;
    }
    return 0;
}

int pyingot_vision_create(const pyingot_vision_opts_t *o, const ingot_image_norm_t *n,
                          ingot_vision_h *v_p, int *hwc_p)
{
    ingot_vision_params_t p = {
        .field_mask = INGOT_VISION_PARAM_FIELD_SIZE | INGOT_VISION_PARAM_FIELD_CHANNELS |
                      INGOT_VISION_PARAM_FIELD_FIELD | INGOT_VISION_PARAM_FIELD_NORMALIZE |
                      INGOT_VISION_PARAM_FIELD_DTYPE,
        .height = n->height,
        .width = n->width,
        .channels = n->channels,
        .field = n->field,
        .dtype = o->uint8 ? INGOT_IMAGE_UINT8 : INGOT_IMAGE_FLOAT32};
    for (int c = 0; c < 3; c++) {
        p.mean[c] = c < INGOT_IMAGE_CHANNELS_MAX ? n->mean[c] : 0.0f;
        p.std[c] = c < INGOT_IMAGE_CHANNELS_MAX ? n->std[c] : 1.0f;
    }
    if (n->channels != 1 && n->channels != 3) {
        pyingot_raisef(INGOT_ERR_INVALID_PARAM,
                       "ImageTransform(shape=...): %u channels with decode: expected 1 (gray) "
                       "or 3 (RGB)",
                       n->channels);
        return -1;
    }
    if (vision_options(o, &p) != 0) {
        return -1;
    }
    ingot_status_t st = ingot_vision_create(&p, v_p);
    if (st != INGOT_OK) {
        pyingot_raise(st, NULL);
        return -1;
    }
    *hwc_p = p.layout == INGOT_IMAGE_HWC;
    return 0;
}

/*
 * transform.c: what a Loader runs on each sample in its workers, so that batch.data is
 * [n, *shape] of a dtype rather than bytes.
 *   ingot.ImageTransform: the library's ingot_transform_image_norm (C, no GIL): an 8-bit image
 *     (binary PNM or raw pixels) to normalised float32 [C, H, W].
 *   ingot.Transform(fn, shape, dtype): a Python callable, the fallback. Each call takes the GIL
 *     in a loader worker, so Python transforms run one at a time, and contend with the trainer's
 *     own Python code; docs/python.md gives their cost. An exception it raises fails the step and
 *     is raised again from the loader's iterator, with a note naming the sample.
 */
#include "pyingot.h"

#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ dtypes */

static const struct {
    const char *name;
    pyingot_dl_dtype_t dtype;
} dtypes[] = {
    {"float32", {PYINGOT_DL_FLOAT, 32, 1}}, {"float64", {PYINGOT_DL_FLOAT, 64, 1}},
    {"float16", {PYINGOT_DL_FLOAT, 16, 1}}, {"uint8", {PYINGOT_DL_UINT, 8, 1}},
    {"int8", {PYINGOT_DL_INT, 8, 1}},       {"int16", {PYINGOT_DL_INT, 16, 1}},
    {"int32", {PYINGOT_DL_INT, 32, 1}},     {"int64", {PYINGOT_DL_INT, 64, 1}},
};

/* A dtype given as a str ("float32") or anything whose str() ends with one ("torch.float32"). */
static int parse_dtype(PyObject *o, pyingot_dl_dtype_t *dt)
{
    PyObject *s = PyObject_Str(o);
    const char *name = s ? PyUnicode_AsUTF8AndSize(s, NULL) : NULL;
    if (name != NULL) {
        const char *dot = strrchr(name, '.');
        const char *base = dot ? dot + 1 : name;
        for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++) {
            if (strcmp(base, dtypes[i].name) == 0) {
                *dt = dtypes[i].dtype;
                Py_DECREF(s);
                return 0;
            }
        }
        pyingot_raisef(INGOT_ERR_INVALID_PARAM,
                       "transform dtype '%s': expected float32, float64, float16, uint8, int8, "
                       "int16, int32 or int64",
                       name);
    }
    Py_XDECREF(s);
    return -1;
}

/* A shape: a tuple or list of 1 to PYINGOT_SAMPLE_NDIM_MAX positive ints. */
static int parse_shape(PyObject *o, const char *what, int32_t *ndim, int64_t *shape)
{
    PyObject *seq = PySequence_Check(o) ? pyingot_tuple_of(o, "shape") : NULL;
    Py_ssize_t n = seq ? PyTuple_Size(seq) : 0;
    int ok = seq != NULL && n >= 1 && n <= PYINGOT_SAMPLE_NDIM_MAX;
    for (Py_ssize_t i = 0; ok && i < n; i++) {
        PyObject *v = PyTuple_GetItem(seq, i);
        long long x = PyLong_Check(v) ? PyLong_AsLongLong(v) : -1;
        ok = x >= 1 && x <= INT32_MAX && !PyErr_Occurred();
        shape[i] = x;
    }
    Py_XDECREF(seq);
    PyErr_Clear();
    if (!ok) {
        PyObject *r = PyObject_Repr(o);
        pyingot_raisef(INGOT_ERR_INVALID_PARAM,
                       "%s(shape=%s): expected a tuple of 1 to %d positive integers", what,
                       r ? PyUnicode_AsUTF8AndSize(r, NULL) : "?", PYINGOT_SAMPLE_NDIM_MAX);
        Py_XDECREF(r);
        return -1;
    }
    *ndim = (int32_t)n;
    return 0;
}

static size_t shape_bytes(int32_t ndim, const int64_t *shape, pyingot_dl_dtype_t dt)
{
    size_t n = dt.bits / 8;
    for (int32_t i = 0; i < ndim; i++) {
        n *= (size_t)shape[i];
    }
    return n;
}

static const char *dtype_name(pyingot_dl_dtype_t dt)
{
    for (size_t i = 0; i < sizeof(dtypes) / sizeof(dtypes[0]); i++) {
        if (dtypes[i].dtype.code == dt.code && dtypes[i].dtype.bits == dt.bits) {
            return dtypes[i].name;
        }
    }
    return "?";
}

/* ------------------------------------------------------------------ ImageTransform */

typedef struct {
    PyObject_HEAD ingot_image_norm_t norm;
    char *field;
    ingot_vision_h vision; /* decode=True: the decode transform (vision.c); NULL: norm's */
    int hwc, uint8;        /* the decode transform's layout and dtype */
} image_tf_t;

/* A per-channel float argument: one number for every channel, or one per channel. */
static int parse_channels(PyObject *o, const char *what, uint32_t c, float *out)
{
    if (PyNumber_Check(o) && !PySequence_Check(o)) {
        double v = PyFloat_AsDouble(o);
        for (uint32_t i = 0; i < c; i++) {
            out[i] = (float)v;
        }
        return PyErr_Occurred() ? -1 : 0;
    }
    PyObject *seq = PySequence_Check(o) ? pyingot_tuple_of(o, what) : NULL;
    Py_ssize_t n = seq ? PyTuple_Size(seq) : -1;
    for (Py_ssize_t i = 0; n == (Py_ssize_t)c && i < n; i++) {
        out[i] = (float)PyFloat_AsDouble(PyTuple_GetItem(seq, i));
    }
    Py_XDECREF(seq);
    if (n != (Py_ssize_t)c || PyErr_Occurred()) {
        PyErr_Clear();
        PyObject *r = PyObject_Repr(o);
        pyingot_raisef(INGOT_ERR_INVALID_PARAM,
                       "ImageTransform(%s=%s): expected a number or %u numbers (one per channel)",
                       what, r ? PyUnicode_AsUTF8AndSize(r, NULL) : "?", c);
        Py_XDECREF(r);
        return -1;
    }
    return 0;
}

/* decode=True (or a crop): the decode transform of @p n's members and the options. */
static int image_tf_decode(image_tf_t *self, pyingot_vision_opts_t *vo, PyObject *dtype_o)
{
    pyingot_dl_dtype_t dt = {PYINGOT_DL_FLOAT, 32, 1};
    if (dtype_o && parse_dtype(dtype_o, &dt) != 0) {
        return -1;
    }
    vo->uint8 = dt.code == PYINGOT_DL_UINT && dt.bits == 8;
    int wanted = pyingot_vision_wanted(vo);
    if ((dt.code != PYINGOT_DL_FLOAT || dt.bits != 32) && (!wanted || !vo->uint8)) {
        pyingot_raisef(INGOT_ERR_INVALID_PARAM,
                       "ImageTransform(dtype=%s): expected float32, or "
                       "uint8 with decode=True",
                       dtype_name(dt));
        return -1;
    }
    ingot_vision_destroy(self->vision);
    self->vision = NULL;
    if (!wanted) {
        return pyingot_vision_unused(vo);
    }
    self->uint8 = vo->uint8;
    return pyingot_vision_create(vo, &self->norm, &self->vision, &self->hwc);
}

static int image_tf_init(image_tf_t *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"shape",      "mean",  "std",  "field",  "decode", "crop",
                             "scale",      "ratio", "flip", "resize", "dtype",  "layout",
                             "max_pixels", "seed",  "dct",  NULL};
    PyObject *shape_o, *mean = NULL, *std = NULL, *dtype_o = NULL;
    const char *field = NULL;
    pyingot_vision_opts_t vo = {0};
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOzpOOOOOOOOOO:ImageTransform", kwlist,
                                     &shape_o, &mean, &std, &field, &vo.decode, &vo.crop, &vo.scale,
                                     &vo.ratio, &vo.flip, &vo.resize, &dtype_o, &vo.layout,
                                     &vo.max_pixels, &vo.seed, &vo.dct)) {
        return -1;
    }
    int32_t ndim;
    int64_t shape[PYINGOT_SAMPLE_NDIM_MAX];
    if (parse_shape(shape_o, "ImageTransform", &ndim, shape) != 0) {
        return -1;
    }
    if (ndim != 2 && ndim != 3) {
        pyingot_raisef(INGOT_ERR_INVALID_PARAM,
                       "ImageTransform(shape=...): %d dimensions; expected (H, W) or (C, H, W)",
                       (int)ndim);
        return -1;
    }
    ingot_image_norm_t *n = &self->norm;
    memset(n, 0, sizeof(*n));
    n->channels = ndim == 3 ? (uint32_t)shape[0] : 1;
    n->height = (uint32_t)shape[ndim - 2];
    n->width = (uint32_t)shape[ndim - 1];
    for (int c = 0; c < INGOT_IMAGE_CHANNELS_MAX; c++) {
        n->std[c] = 1.0f; /* default: pixel / 255, no shift */
    }
    if (n->channels > INGOT_IMAGE_CHANNELS_MAX) {
        pyingot_raisef(INGOT_ERR_INVALID_PARAM,
                       "ImageTransform(shape=...): %u channels; at most %d", n->channels,
                       INGOT_IMAGE_CHANNELS_MAX);
        return -1;
    }
    if ((mean && parse_channels(mean, "mean", n->channels, n->mean) != 0) ||
        (std && parse_channels(std, "std", n->channels, n->std) != 0)) {
        return -1;
    }
    free(self->field);
    self->field = field ? strdup(field) : NULL;
    if (field && self->field == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    n->field = self->field;
    if (image_tf_decode(self, &vo, dtype_o) != 0) {
        return -1;
    }
    if (self->vision != NULL) {
        return 0; /* the decode transform checked the rest */
    }
    ingot_status_t st = ingot_image_norm_prepare(n);
    if (st != INGOT_OK) {
        pyingot_raise(st, NULL);
        return -1;
    }
    return 0;
}

static void image_tf_dealloc(image_tf_t *self)
{
    ingot_vision_destroy(self->vision);
    free(self->field);
    pyingot_object_free((PyObject *)self);
}

static PyObject *image_tf_shape(image_tf_t *self, void *c)
{
    const ingot_image_norm_t *n = &self->norm;
    if (self->vision != NULL && self->hwc) {
        return Py_BuildValue("(III)", n->height, n->width, n->channels);
    }
    return Py_BuildValue("(III)", n->channels, n->height, n->width);
}

static PyObject *image_tf_dtype(image_tf_t *self, void *c)
{
    return PyUnicode_FromString(self->vision != NULL && self->uint8 ? "uint8" : "float32");
}

static PyObject *image_tf_repr(image_tf_t *self)
{
    return PyUnicode_FromFormat("ingot.ImageTransform(shape=(%u, %u, %u), field=%s%s%s%s)",
                                self->norm.channels, self->norm.height, self->norm.width,
                                self->field ? self->field : "None",
                                self->vision ? ", decode=True" : "",
                                self->vision && self->uint8 ? ", dtype='uint8'" : "",
                                self->vision && self->hwc ? ", layout='HWC'" : "");
}

static PyGetSetDef image_tf_getset[] = {
    {"shape", (getter)image_tf_shape, NULL, "Output shape of a sample: (C, H, W).", NULL},
    {"dtype", (getter)image_tf_dtype, NULL, "Output dtype: 'float32'.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject *pyingot_image_transform_type; /* made from its spec at import */

static PyType_Slot image_tf_slots[] = {
    {Py_tp_dealloc, image_tf_dealloc},
    {Py_tp_repr, image_tf_repr},
    {Py_tp_doc,
     "ImageTransform(shape, *, mean=0.0, std=1.0, field=None, decode=False, crop=None, "
     "scale=(0.08, 1.0), ratio=(3/4, 4/3), flip=None, resize=None, dtype='float32', "
     "layout='CHW', max_pixels=None, seed=0, dct='fast'): in the loader's workers (C, no "
     "GIL). Without decode: an 8-bit image (binary PNM P5/P6 or raw H*W*C pixels) of "
     "exactly the shape, to float32 [C, H, W] = (pixel / 255 - mean) / std. With "
     "decode=True (or a crop): a JPEG, PNG or PNM of any size decoded, cropped "
     "(crop='random': RandomResizedCrop + flip; 'center': resize the shorter side to "
     "resize, then the center; 'none': the whole image), resized to shape and written "
     "as float32 (normalised) or uint8, CHW or HWC (docs/vision.md). shape is (C, H, W) "
     "or (H, W)."},
    {Py_tp_getset, image_tf_getset},
    {Py_tp_init, image_tf_init},
    {Py_tp_new, PyType_GenericNew},
    {0, NULL}};

PyType_Spec pyingot_image_transform_spec = {
    .name = "ingot.ImageTransform",
    .basicsize = sizeof(image_tf_t),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = image_tf_slots,
};

/* ------------------------------------------------------------------ Transform (Python) */

typedef struct {
    PyObject_HEAD PyObject *fn;
    int32_t ndim;
    int64_t shape[PYINGOT_SAMPLE_NDIM_MAX];
    pyingot_dl_dtype_t dtype;
} py_tf_t;

static int py_tf_init(py_tf_t *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"fn", "shape", "dtype", NULL};
    PyObject *fn, *shape_o, *dtype_o = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|O:Transform", kwlist, &fn, &shape_o,
                                     &dtype_o)) {
        return -1;
    }
    if (!PyCallable_Check(fn)) {
        PyErr_SetString(PyExc_TypeError, "Transform(fn, shape, dtype): fn must be callable");
        return -1;
    }
    pyingot_dl_dtype_t dt = {PYINGOT_DL_FLOAT, 32, 1};
    if (parse_shape(shape_o, "Transform", &self->ndim, self->shape) != 0 ||
        (dtype_o && parse_dtype(dtype_o, &dt) != 0)) {
        return -1;
    }
    self->dtype = dt;
    PyObject *old = self->fn;
    self->fn = Py_NewRef(fn);
    Py_XDECREF(old);
    return 0;
}

static void py_tf_dealloc(py_tf_t *self)
{
    Py_XDECREF(self->fn);
    pyingot_object_free((PyObject *)self);
}

static PyObject *py_tf_shape(py_tf_t *self, void *c)
{
    return pyingot_shape_tuple(self->ndim, self->shape);
}

static PyObject *py_tf_dtype(py_tf_t *self, void *c)
{
    return PyUnicode_FromString(dtype_name(self->dtype));
}

static PyGetSetDef py_tf_getset[] = {
    {"shape", (getter)py_tf_shape, NULL, "Output shape of a sample.", NULL},
    {"dtype", (getter)py_tf_dtype, NULL, "Output dtype.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject *pyingot_py_transform_type; /* made from its spec at import */

static PyType_Slot py_tf_slots[] = {
    {Py_tp_dealloc, py_tf_dealloc},
    {Py_tp_doc, "Transform(fn, shape, dtype='float32'): a Python callable run on each sample in "
                "the loader's workers, holding the GIL (one at a time). fn(sample) gets a dict "
                "{'__key__': str, '__index__': int, '__label__': int, <field>: bytes, ...} and "
                "returns an object with the buffer protocol (numpy array, bytes, ...) or a CPU "
                "torch tensor, holding exactly prod(shape) items of dtype."},
    {Py_tp_getset, py_tf_getset},
    {Py_tp_init, py_tf_init},
    {Py_tp_new, PyType_GenericNew},
    {0, NULL}};

PyType_Spec pyingot_py_transform_spec = {
    .name = "ingot.Transform",
    .basicsize = sizeof(py_tf_t),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = py_tf_slots,
};

/* ------------------------------------------------------------------ in the loader's workers */

/* The sample as fn sees it: WebDataset's habit, a dict of its fields plus its identity. */
static PyObject *sample_dict(const ingot_sample_view_t *s)
{
    PyObject *d = PyDict_New();
    PyObject *key = PyUnicode_DecodeFSDefault(s->key);
    PyObject *index = PyLong_FromUnsignedLongLong(s->index);
    PyObject *label = PyLong_FromLong(s->label);
    int rc = (d && key && index && label && PyDict_SetItemString(d, "__key__", key) == 0 &&
              PyDict_SetItemString(d, "__index__", index) == 0 &&
              PyDict_SetItemString(d, "__label__", label) == 0)
                 ? 0
                 : -1;
    Py_XDECREF(key);
    Py_XDECREF(index);
    Py_XDECREF(label);
    for (uint32_t f = 0; rc == 0 && f < s->field_count; f++) {
        /* bytes, a copy: the field's memory is valid during the call only */
        PyObject *v = PyBytes_FromStringAndSize(s->fields[f].data, (Py_ssize_t)s->fields[f].len);
        rc = v ? PyDict_SetItemString(d, s->fields[f].name, v) : -1;
        Py_XDECREF(v);
    }
    if (rc != 0) {
        Py_CLEAR(d);
    }
    return d;
}

/* Copy fn's result into the sample's output; -1 with an exception set when it does not fit. */
static int copy_out(pyingot_tf_t *tf, const ingot_sample_view_t *s, PyObject *r, void *out)
{
    PyObject *src = r;
    Py_INCREF(src);
    if (!PyObject_CheckBuffer(src) && PyObject_HasAttrString(src, "numpy")) {
        Py_DECREF(src);
        src = PyObject_CallMethod(r, "numpy", NULL); /* a CPU torch tensor */
        if (src == NULL) {
            return -1;
        }
    }
    Py_buffer v;
    if (PyObject_GetBuffer(src, &v, PyBUF_C_CONTIGUOUS | PyBUF_FORMAT) != 0) {
        PyErr_Clear();
        PyObject *type = pyingot_type_name(r);
        if (type != NULL) {
            PyErr_Format(PyExc_TypeError,
                         "ingot.Transform: fn returned %.100U for sample '%s': expected a "
                         "contiguous buffer (numpy array, bytes) or a CPU torch tensor",
                         type, s->key);
            Py_DECREF(type);
        }
        Py_DECREF(src);
        return -1;
    }
    size_t item = tf->dtype.bits / 8;
    int raw = (v.itemsize == 1 && v.format != NULL && strcmp(v.format, "B") == 0);
    int rc = 0;
    if ((size_t)v.len != tf->out_size || (!raw && (size_t)v.itemsize != item)) {
        PyObject *shape = pyingot_shape_tuple(tf->ndim, tf->shape);
        PyErr_Format(PyExc_ValueError,
                     "ingot.Transform: fn returned %zd bytes of %zd-byte items for sample '%s'; "
                     "expected shape %R of %s = %zu bytes",
                     v.len, v.itemsize, s->key, shape ? shape : Py_None, dtype_name(tf->dtype),
                     tf->out_size);
        Py_XDECREF(shape);
        rc = -1;
    } else {
        memcpy(out, v.buf, tf->out_size);
    }
    PyBuffer_Release(&v);
    Py_DECREF(src);
    return rc;
}

/* Keep the exception being raised for the iterator, with a note naming the sample. */
static void keep_raised(pyingot_tf_t *tf, const ingot_sample_view_t *s)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (tb != NULL) {
        PyException_SetTraceback(value, tb);
    }
    PyObject *note = PyUnicode_FromFormat("ingot: raised by the Loader's transform on sample "
                                          "'%s' (index %llu)",
                                          s->key, (unsigned long long)s->index);
    PyObject *r = note ? PyObject_CallMethod(value, "add_note", "O", note) : NULL;
    Py_XDECREF(r);
    Py_XDECREF(note);
    PyErr_Clear(); /* no add_note before Python 3.11: the message still names the sample */
    /* Bounded: a failed step stops the loader, so only the steps prepared ahead can add. */
    if (tf->raised != NULL && PyDict_Size(tf->raised) < 256) {
        PyObject *key = PyUnicode_DecodeFSDefault(s->key);
        int had = key ? PyDict_Contains(tf->raised, key) : -1; /* the first one stays */
        if (had != 0 || PyDict_SetItem(tf->raised, key, value) != 0) {
            PyErr_Clear();
        }
        Py_XDECREF(key);
    }
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
}

static ingot_status_t py_tf_call(const ingot_sample_view_t *s, void *out, size_t out_size,
                                 void *arg)
{
    pyingot_tf_t *tf = arg;
    if (out_size != tf->out_size || !Py_IsInitialized()) {
        return INGOT_ERR_CANCELED; /* interpreter gone: the process is exiting */
    }
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *d = sample_dict(s);
    PyObject *r = d ? PyObject_CallFunctionObjArgs(tf->fn, d, NULL) : NULL;
    int rc = r ? copy_out(tf, s, r, out) : -1;
    ingot_status_t st = INGOT_OK;
    if (rc != 0) {
        keep_raised(tf, s);
        st = INGOT_ERR_FORMAT; /* the sample could not be made into the declared output */
    }
    Py_XDECREF(r);
    Py_XDECREF(d);
    PyGILState_Release(g);
    return st;
}

int pyingot_tf_set(pyingot_tf_t *tf, PyObject *obj, ingot_loader_params_t *p)
{
    memset(tf, 0, sizeof(*tf));
    if (obj == NULL || obj == Py_None) {
        return 0;
    }
    if (PyObject_TypeCheck(obj, pyingot_image_transform_type) &&
        ((image_tf_t *)obj)->vision != NULL) {
        image_tf_t *it = (image_tf_t *)obj;
        const ingot_image_norm_t *n = &it->norm;
        int64_t chw[3] = {n->channels, n->height, n->width},
                hwc[3] = {n->height, n->width, n->channels};
        tf->ndim = 3;
        memcpy(tf->shape, it->hwc ? hwc : chw, sizeof(chw));
        tf->dtype = it->uint8 ? (pyingot_dl_dtype_t){PYINGOT_DL_UINT, 8, 1}
                              : (pyingot_dl_dtype_t){PYINGOT_DL_FLOAT, 32, 1};
        tf->out_size = ingot_vision_out_size(it->vision);
        p->transform = ingot_transform_image_decode;
        p->transform_arg = it->vision;
    } else if (PyObject_TypeCheck(obj, pyingot_image_transform_type)) {
        image_tf_t *it = (image_tf_t *)obj;
        if (it->norm.out_size == 0) {
            pyingot_raise(INGOT_ERR_INVALID_PARAM, "Loader(transform=...): ImageTransform not "
                                                   "initialised");
            return -1;
        }
        tf->ndim = 3;
        tf->shape[0] = it->norm.channels;
        tf->shape[1] = it->norm.height;
        tf->shape[2] = it->norm.width;
        tf->dtype = (pyingot_dl_dtype_t){PYINGOT_DL_FLOAT, 32, 1};
        tf->out_size = it->norm.out_size;
        p->transform = ingot_transform_image_norm;
        p->transform_arg = &it->norm;
    } else if (PyObject_TypeCheck(obj, pyingot_py_transform_type)) {
        py_tf_t *pt = (py_tf_t *)obj;
        if (pt->fn == NULL) {
            pyingot_raise(INGOT_ERR_INVALID_PARAM, "Loader(transform=...): Transform not "
                                                   "initialised");
            return -1;
        }
        tf->fn = pt->fn;
        tf->ndim = pt->ndim;
        memcpy(tf->shape, pt->shape, sizeof(tf->shape));
        tf->dtype = pt->dtype;
        tf->out_size = shape_bytes(pt->ndim, pt->shape, pt->dtype);
        tf->raised = PyDict_New();
        if (tf->raised == NULL) {
            return -1;
        }
        p->transform = py_tf_call;
        p->transform_arg = tf;
    } else {
        PyObject *type = pyingot_type_name(obj);
        if (type != NULL) {
            PyErr_Format(PyExc_TypeError,
                         "Loader(transform=%.100U): expected an ingot.ImageTransform, or an "
                         "ingot.Transform(fn, shape, dtype) wrapping a callable (the loader must "
                         "know each sample's output size)",
                         type);
            Py_DECREF(type);
        }
        return -1;
    }
    tf->obj = Py_NewRef(obj);
    p->field_mask |= INGOT_LOADER_PARAM_FIELD_TRANSFORM;
    p->sample_out_size = tf->out_size;
    return 0;
}

void pyingot_tf_clear(pyingot_tf_t *tf)
{
    Py_CLEAR(tf->raised);
    Py_CLEAR(tf->obj);
    tf->fn = NULL;
}

PyObject *pyingot_tf_take_raised(pyingot_tf_t *tf, const char *msg)
{
    if (tf->raised == NULL || msg == NULL) {
        return NULL;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0;
    while (PyDict_Next(tf->raised, &pos, &key, &value)) {
        const char *k = PyUnicode_AsUTF8AndSize(key, NULL);
        char quoted[512];
        snprintf(quoted, sizeof(quoted), "sample '%s'", k ? k : "");
        if (k != NULL && strstr(msg, quoted) != NULL) {
            Py_INCREF(value);
            Py_INCREF(key);
            PyDict_DelItem(tf->raised, key);
            Py_DECREF(key);
            PyErr_Clear();
            return value;
        }
    }
    PyErr_Clear();
    return NULL;
}

/*
 * array.c: ingot.Array, a 1-D view of one of a batch's host arrays (data, offsets, lengths,
 * labels, indices) and its DLPack export. Each exported tensor holds a reference to the batch
 * and counts in batch.exports, so the batch's slot is given back only when the batch and every
 * tensor made from it are gone. Capsules are versioned (DLPack 1.x) when the consumer passes
 * max_version >= (1, 0), legacy otherwise (PyTorch 1.13). Exports are read-only in spirit: the
 * versioned capsule says so; the legacy format cannot.
 */
#include "pyingot.h"

#include <stdlib.h>

/* What a capsule's manager_ctx points to: the tensor struct, its shape, and the batch it pins. */
typedef struct export_ctx {
    pyingot_batch_t *batch;
    int64_t shape[2];
    union {
        pyingot_dl_managed_t legacy;
        pyingot_dl_managed_versioned_t versioned;
    } t;
} export_ctx_t;

static void export_drop(export_ctx_t *ctx)
{
    /* Consumers may free a tensor on any thread, with or without the GIL. */
    if (!Py_IsInitialized()) {
        return; /* interpreter gone: the process is exiting */
    }
    PyGILState_STATE g = PyGILState_Ensure();
    ctx->batch->exports--;
    ctx->batch->loader->exports--;
    Py_DECREF(ctx->batch);
    PyGILState_Release(g);
    free(ctx);
}

static void legacy_deleter(pyingot_dl_managed_t *t)
{
    export_drop(t->manager_ctx);
}

static void versioned_deleter(pyingot_dl_managed_versioned_t *t)
{
    export_drop(t->manager_ctx);
}

/* Capsule destructors: a capsule never consumed still owns its tensor. */
static void legacy_capsule_free(PyObject *cap)
{
    if (PyCapsule_IsValid(cap, PYINGOT_DLPACK_CAPSULE)) {
        pyingot_dl_managed_t *t = PyCapsule_GetPointer(cap, PYINGOT_DLPACK_CAPSULE);
        t->deleter(t);
    }
}

static void versioned_capsule_free(PyObject *cap)
{
    if (PyCapsule_IsValid(cap, PYINGOT_DLPACK_CAPSULE_VER)) {
        pyingot_dl_managed_versioned_t *t = PyCapsule_GetPointer(cap, PYINGOT_DLPACK_CAPSULE_VER);
        t->deleter(t);
    }
}

static void fill_tensor(pyingot_dl_tensor_t *t, pyingot_array_t *a, export_ctx_t *ctx)
{
    ctx->shape[0] = a->shape[0];
    ctx->shape[1] = a->shape[1];
    t->data = a->data;
    t->device = (pyingot_dl_device_t){.device_type = PYINGOT_DL_CPU, .device_id = 0};
    t->ndim = a->ndim;
    t->dtype = a->dtype;
    t->shape = ctx->shape;
    t->strides = NULL;
    t->byte_offset = 0;
}

/* 1 when max_version asks for a versioned capsule, 0 for legacy, -1 on a bad argument. */
static int wants_versioned(PyObject *max_version)
{
    if (max_version == NULL || max_version == Py_None) {
        return 0;
    }
    unsigned major = 0, minor = 0;
    if (!PyArg_ParseTuple(max_version, "II:max_version", &major, &minor)) {
        return -1;
    }
    return major >= PYINGOT_DLPACK_MAJOR;
}

static PyObject *make_capsule(pyingot_array_t *a, int versioned)
{
    export_ctx_t *ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        return PyErr_NoMemory();
    }
    ctx->batch = a->batch;
    PyObject *cap;
    if (versioned) {
        pyingot_dl_managed_versioned_t *t = &ctx->t.versioned;
        t->version = (pyingot_dl_version_t){PYINGOT_DLPACK_MAJOR, PYINGOT_DLPACK_MINOR};
        t->manager_ctx = ctx;
        t->deleter = versioned_deleter;
        t->flags = PYINGOT_DL_FLAG_READ_ONLY;
        fill_tensor(&t->dl_tensor, a, ctx);
        cap = PyCapsule_New(t, PYINGOT_DLPACK_CAPSULE_VER, versioned_capsule_free);
    } else {
        pyingot_dl_managed_t *t = &ctx->t.legacy;
        t->manager_ctx = ctx;
        t->deleter = legacy_deleter;
        fill_tensor(&t->dl_tensor, a, ctx);
        cap = PyCapsule_New(t, PYINGOT_DLPACK_CAPSULE, legacy_capsule_free);
    }
    if (cap == NULL) {
        free(ctx);
        return NULL;
    }
    Py_INCREF(a->batch);
    a->batch->exports++;
    a->batch->loader->exports++;
    return cap;
}

PyObject *pyingot_array_dlpack(pyingot_array_t *a, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O$OOO:__dlpack__", kwlist, &stream,
                                     &max_version, &dl_device, &copy) ||
        pyingot_batch_check_live(a->batch) != 0) {
        return NULL;
    }
    if (copy == Py_True) {
        return pyingot_raise(INGOT_ERR_UNSUPPORTED,
                             "__dlpack__(copy=True): ingot exports its batch memory without a "
                             "copy; copy the tensor after import");
    }
    if (stream != Py_None && stream != NULL && !PyLong_Check(stream)) {
        PyErr_SetString(PyExc_TypeError, "__dlpack__: stream must be None or an int");
        return NULL;
    }
    int versioned = wants_versioned(max_version);
    return versioned < 0 ? NULL : make_capsule(a, versioned);
}

PyObject *pyingot_array_dlpack_device(pyingot_array_t *a, PyObject *noargs)
{
    return Py_BuildValue("(ii)", PYINGOT_DL_CPU, 0);
}

PyObject *pyingot_array_new(pyingot_batch_t *bt, const char *name, void *data, int64_t n,
                            pyingot_dl_dtype_t dtype)
{
    pyingot_array_t *a = PyObject_New(pyingot_array_t, &pyingot_array_type);
    if (a == NULL) {
        return NULL;
    }
    Py_INCREF(bt);
    a->batch = bt;
    a->data = data;
    a->ndim = 1;
    a->shape[0] = n;
    a->shape[1] = 0;
    a->dtype = dtype;
    a->name = name;
    return (PyObject *)a;
}

static void array_dealloc(pyingot_array_t *a)
{
    Py_XDECREF(a->batch);
    PyObject_Free(a);
}

static PyObject *array_dtype_name(pyingot_array_t *a)
{
    const char *kind = a->dtype.code == PYINGOT_DL_UINT    ? "uint"
                       : a->dtype.code == PYINGOT_DL_FLOAT ? "float"
                                                           : "int";
    return PyUnicode_FromFormat("%s%d", kind, (int)a->dtype.bits);
}

static PyObject *array_shape(pyingot_array_t *a, void *closure)
{
    return a->ndim == 1 ? Py_BuildValue("(L)", (long long)a->shape[0])
                        : Py_BuildValue("(LL)", (long long)a->shape[0], (long long)a->shape[1]);
}

static PyObject *array_dtype(pyingot_array_t *a, void *closure)
{
    return array_dtype_name(a);
}

static PyObject *array_ptr(pyingot_array_t *a, void *closure)
{
    return PyLong_FromVoidPtr(a->data);
}

static Py_ssize_t array_len(pyingot_array_t *a)
{
    return (Py_ssize_t)a->shape[0];
}

static PyObject *array_repr(pyingot_array_t *a)
{
    PyObject *dt = array_dtype_name(a);
    PyObject *r = dt ? PyUnicode_FromFormat("<ingot.Array %s: %lld x %U, step %llu>", a->name,
                                            (long long)a->shape[0], dt,
                                            (unsigned long long)a->batch->b.step)
                     : NULL;
    Py_XDECREF(dt);
    return r;
}

static PyMethodDef array_methods[] = {
    {"__dlpack__", (PyCFunction)(void (*)(void))pyingot_array_dlpack, METH_VARARGS | METH_KEYWORDS,
     "__dlpack__(stream=None, *, max_version=None, dl_device=None, copy=None): a DLPack "
     "capsule over the batch's memory (no copy)."},
    {"__dlpack_device__", (PyCFunction)pyingot_array_dlpack_device, METH_NOARGS,
     "(device_type, device_id): (1, 0), host memory."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef array_getset[] = {
    {"shape", (getter)array_shape, NULL, "Shape (a tuple).", NULL},
    {"dtype", (getter)array_dtype, NULL, "Element type: uint8, int64, ...", NULL},
    {"ptr", (getter)array_ptr, NULL, "Address of the first element.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

static PySequenceMethods array_seq = {.sq_length = (lenfunc)array_len};

PyTypeObject pyingot_array_type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "ingot.Array",
    .tp_basicsize = sizeof(pyingot_array_t),
    .tp_dealloc = (destructor)array_dealloc,
    .tp_repr = (reprfunc)array_repr,
    .tp_as_sequence = &array_seq,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A batch's host array, exported without a copy through DLPack.",
    .tp_methods = array_methods,
    .tp_getset = array_getset,
};

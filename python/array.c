/*
 * array.c: ingot.Array, a view of one of a batch's arrays (data: bytes, or [n, *shape] with a
 * transform, in host or device memory; offsets, lengths, labels, indices: host) and its DLPack
 * export. A device export makes the consumer's stream wait on the batch's ready event, and the
 * slot is refilled only after that stream's work (ingot_loader_release_after). Each exported tensor holds a reference to the batch
 * and counts in batch.exports, so the batch's slot is given back only when the batch and every
 * tensor made from it are gone. Capsules are versioned (DLPack 1.x) when the consumer passes
 * max_version >= (1, 0), legacy otherwise (PyTorch 1.13). Exports are read-only in spirit: the
 * versioned capsule says so; the legacy format cannot.
 */
#include "pyingot.h"

#include <stdlib.h>
#include <string.h>

/* What a capsule's manager_ctx points to: the tensor struct, its shape, and the batch it pins. */
typedef struct export_ctx {
    pyingot_batch_t *batch;
    int64_t shape[PYINGOT_NDIM_MAX];
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
    memcpy(ctx->shape, a->shape, sizeof(ctx->shape));
    t->data = a->data;
    t->device = a->device < 0
                    ? (pyingot_dl_device_t){.device_type = PYINGOT_DL_CPU, .device_id = 0}
                    : (pyingot_dl_device_t){.device_type = PYINGOT_DL_CUDA, .device_id = a->device};
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
    Py_INCREF((PyObject *)a->batch);
    a->batch->exports++;
    a->batch->loader->exports++;
    return cap;
}

/* DLPack's stream argument for CUDA: None or 1 the legacy default stream, 2 the per-thread
 * default stream, -1 no synchronisation (the consumer orders its work itself), anything else a
 * cudaStream_t; 0 is ambiguous and refused. The stream waits on the batch's ready event (no
 * host synchronisation), and the slot is refilled only after its work so far. */
static int consumer_stream_wait(pyingot_array_t *a, PyObject *stream)
{
    long long v = (stream == NULL || stream == Py_None) ? 1 : PyLong_AsLongLong(stream);
    if (v == -1 && PyErr_Occurred()) {
        return -1;
    }
    if (v == 0) {
        PyErr_SetString(PyExc_ValueError,
                        "__dlpack__(stream=0): ambiguous for CUDA (DLPack): pass 1 for the legacy "
                        "default stream, 2 for the per-thread default stream, or a stream handle");
        return -1;
    }
    if (v == -1) {
        return 0;
    }
    void *s = (void *)(intptr_t)v; /* 1 and 2 are cudaStreamLegacy and cudaStreamPerThread */
    ingot_status_t st = ingot_batch_stream_wait(&a->batch->b, s);
    if (st != INGOT_OK) {
        pyingot_raise(st, NULL);
        return -1;
    }
    pyingot_loader_note_stream(a->batch->loader, a->batch->seq, s);
    return 0;
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
    if (versioned < 0 || (a->device >= 0 && consumer_stream_wait(a, stream) != 0)) {
        return NULL;
    }
    return make_capsule(a, versioned);
}

PyObject *pyingot_dlpack_device_tuple(int device)
{
    return device < 0 ? Py_BuildValue("(ii)", PYINGOT_DL_CPU, 0)
                      : Py_BuildValue("(ii)", PYINGOT_DL_CUDA, device);
}

PyObject *pyingot_array_dlpack_device(pyingot_array_t *a, PyObject *noargs)
{
    return pyingot_dlpack_device_tuple(a->device);
}

PyObject *pyingot_shape_tuple(int32_t ndim, const int64_t *shape)
{
    PyObject *t = PyTuple_New(ndim);
    for (int32_t i = 0; t != NULL && i < ndim; i++) {
        PyObject *v = PyLong_FromLongLong(shape[i]);
        if (v == NULL) {
            Py_CLEAR(t);
            break;
        }
        PyTuple_SetItem(t, i, v); /* steals v; cannot fail on a new tuple in range */
    }
    return t;
}

PyObject *pyingot_array_new(pyingot_batch_t *bt, const char *name, void *data, int32_t ndim,
                            const int64_t *shape, pyingot_dl_dtype_t dtype, int device)
{
    pyingot_array_t *a = PyObject_New(pyingot_array_t, pyingot_array_type);
    if (a == NULL) {
        return NULL;
    }
    Py_INCREF((PyObject *)bt);
    a->batch = bt;
    a->data = data;
    a->ndim = ndim;
    memset(a->shape, 0, sizeof(a->shape));
    memcpy(a->shape, shape, (size_t)ndim * sizeof(*shape));
    a->dtype = dtype;
    a->device = device;
    a->name = name;
    return (PyObject *)a;
}

static void array_dealloc(pyingot_array_t *a)
{
    Py_XDECREF((PyObject *)a->batch);
    pyingot_object_free((PyObject *)a);
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
    return pyingot_shape_tuple(a->ndim, a->shape);
}

static PyObject *array_device(pyingot_array_t *a, void *closure)
{
    return a->device < 0 ? PyUnicode_FromString("cpu") : PyUnicode_FromFormat("cuda:%d", a->device);
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
     "(device_type, device_id): (1, 0) for host memory, (2, N) for CUDA device N."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef array_getset[] = {
    {"shape", (getter)array_shape, NULL, "Shape (a tuple).", NULL},
    {"dtype", (getter)array_dtype, NULL, "Element type: uint8, int64, ...", NULL},
    {"ptr", (getter)array_ptr, NULL, "Address of the first element.", NULL},
    {"device", (getter)array_device, NULL, "'cpu' or 'cuda:N': where the memory is.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject *pyingot_array_type; /* made from pyingot_array_spec at import */

static PyType_Slot array_slots[] = {
    {Py_tp_dealloc, array_dealloc},
    {Py_tp_repr, array_repr},
    {Py_sq_length, array_len},
    {Py_tp_doc, "An array of a batch, exported without a copy through DLPack."},
    {Py_tp_methods, array_methods},
    {Py_tp_getset, array_getset},
    {0, NULL}};

/* Made only by a batch's getters (no constructor), as a static type without tp_new was. */
PyType_Spec pyingot_array_spec = {
    .name = "ingot.Array",
    .basicsize = sizeof(pyingot_array_t),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = array_slots,
};

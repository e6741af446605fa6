/*
 * batch.c: ingot.Batch, one step's slice as the trainer sees it. data (uint8 bytes, or
 * [n, *shape] of a transform's dtype; in host or device memory), offsets, lengths, indices
 * (int64, views of the loader's arrays) and labels (int64, a copy of the int32 labels: PyTorch's
 * class targets are int64) are ingot.Array objects exportable through DLPack; keys are built
 * on first access. The batch's slot goes back to the loader when the
 * batch and every tensor exported from it are gone, or at release() when no export is alive.
 */
#include "pyingot.h"

#include <stdlib.h>
#include <string.h>

static const pyingot_dl_dtype_t dtype_u8 = {PYINGOT_DL_UINT, 8, 1};
static const pyingot_dl_dtype_t dtype_i64 = {PYINGOT_DL_INT, 64, 1};

PyObject *pyingot_batch_new(pyingot_loader_t *l, const ingot_batch_t *b, uint64_t seq)
{
    pyingot_batch_t *bt = PyObject_New(pyingot_batch_t, pyingot_batch_type);
    if (bt == NULL) {
        return NULL;
    }
    Py_INCREF((PyObject *)l);
    bt->loader = l;
    bt->b = *b;
    bt->seq = seq;
    bt->released = 0;
    bt->exports = 0;
    bt->keys = NULL;
    bt->labels64 = malloc((b->count ? b->count : 1) * sizeof(int64_t));
    if (bt->labels64 == NULL) {
        Py_DECREF(bt);
        return PyErr_NoMemory();
    }
    for (uint32_t i = 0; i < b->count; i++) {
        bt->labels64[i] = b->labels[i];
    }
    return (PyObject *)bt;
}

int pyingot_batch_check_live(pyingot_batch_t *bt)
{
    if (pyingot_fork_check() != 0) {
        return -1;
    }
    if (bt->released || bt->loader->h == NULL) {
        pyingot_raisef(INGOT_ERR_INVALID_PARAM, "the batch of step %llu is no longer valid: %s",
                       (unsigned long long)bt->b.step,
                       bt->released ? "it was released" : "its loader was closed");
        return -1;
    }
    return 0;
}

/* Give the slot back (in hand-over order, through the loader). */
static void batch_retire(pyingot_batch_t *bt)
{
    if (!bt->released) {
        bt->released = 1;
        if (bt->loader->h != NULL && !pyingot_in_child()) {
            pyingot_loader_retire(bt->loader, bt->seq);
        }
    }
}

static void batch_dealloc(pyingot_batch_t *bt)
{
    if (bt->loader != NULL) {
        batch_retire(bt);
    }
    Py_XDECREF(bt->keys);
    Py_XDECREF((PyObject *)bt->loader);
    free(bt->labels64);
    pyingot_object_free((PyObject *)bt);
}

static PyObject *batch_release(pyingot_batch_t *bt, PyObject *noargs)
{
    if (pyingot_fork_check() != 0) {
        return NULL;
    }
    if (bt->exports > 0) {
        return pyingot_raisef(INGOT_ERR_BUSY,
                              "batch.release(): the batch of step %llu has %zd live DLPack "
                              "export(s) (tensors made from it); delete them first",
                              (unsigned long long)bt->b.step, bt->exports);
    }
    batch_retire(bt);
    Py_RETURN_NONE;
}

/* A 1-D host array of the batch. */
static PyObject *array_of(pyingot_batch_t *bt, const char *name, const void *data, int64_t n,
                          pyingot_dl_dtype_t dtype)
{
    if (pyingot_batch_check_live(bt) != 0) {
        return NULL;
    }
    return pyingot_array_new(bt, name, (void *)data, 1, &n, dtype, -1);
}

/* The collated bytes, or [count, *shape] of the transform's dtype; where the loader put them. */
static PyObject *get_data(pyingot_batch_t *bt, void *c)
{
    if (pyingot_batch_check_live(bt) != 0) {
        return NULL;
    }
    const pyingot_tf_t *tf = &bt->loader->tf;
    int device = bt->b.device >= 0 ? bt->b.device : -1;
    if (tf->obj == NULL) {
        int64_t n = (int64_t)bt->b.bytes;
        return pyingot_array_new(bt, "data", bt->b.data, 1, &n, dtype_u8, device);
    }
    int64_t shape[PYINGOT_NDIM_MAX] = {bt->b.count};
    memcpy(shape + 1, tf->shape, (size_t)tf->ndim * sizeof(*shape));
    return pyingot_array_new(bt, "data", bt->b.data, tf->ndim + 1, shape, tf->dtype, device);
}

/* offsets, lengths and indices are uint64 in C; exported as int64 (PyTorch 1.13 has no
 * uint64), which is exact: no value reaches 2^63. */
static PyObject *get_offsets(pyingot_batch_t *bt, void *c)
{
    return array_of(bt, "offsets", bt->b.offsets, bt->b.count, dtype_i64);
}

static PyObject *get_lengths(pyingot_batch_t *bt, void *c)
{
    return array_of(bt, "lengths", bt->b.lengths, bt->b.count, dtype_i64);
}

static PyObject *get_indices(pyingot_batch_t *bt, void *c)
{
    return array_of(bt, "indices", bt->b.indices, bt->b.count, dtype_i64);
}

static PyObject *get_labels(pyingot_batch_t *bt, void *c)
{
    return array_of(bt, "labels", bt->labels64, bt->b.count, dtype_i64);
}

static PyObject *get_keys(pyingot_batch_t *bt, void *c)
{
    if (bt->keys == NULL) {
        if (pyingot_batch_check_live(bt) != 0) {
            return NULL;
        }
        PyObject *keys = PyList_New(bt->b.count);
        for (uint32_t i = 0; keys != NULL && i < bt->b.count; i++) {
            PyObject *k = PyUnicode_DecodeFSDefault(bt->b.keys[i]);
            if (k == NULL) {
                Py_CLEAR(keys);
                break;
            }
            PyList_SetItem(keys, i, k); /* steals k; cannot fail on a new list in range */
        }
        bt->keys = keys;
    }
    Py_XINCREF(bt->keys);
    return bt->keys;
}

#define BATCH_U64_GETTER(field) \
    static PyObject *get_##field(pyingot_batch_t *bt, void *c) \
    { \
        return PyLong_FromUnsignedLongLong(bt->b.field); \
    }
BATCH_U64_GETTER(step)
BATCH_U64_GETTER(epoch)
BATCH_U64_GETTER(epoch_step)
BATCH_U64_GETTER(count)

static PyObject *get_exports(pyingot_batch_t *bt, void *c)
{
    return PyLong_FromSsize_t(bt->exports);
}

static PyObject *get_released(pyingot_batch_t *bt, void *c)
{
    return PyBool_FromLong(bt->released);
}

/* The batch itself exports its data: torch.from_dlpack(batch). */
static PyObject *batch_dlpack(pyingot_batch_t *bt, PyObject *args, PyObject *kwargs)
{
    pyingot_array_t *a = (pyingot_array_t *)get_data(bt, NULL);
    if (a == NULL) {
        return NULL;
    }
    PyObject *cap = pyingot_array_dlpack(a, args, kwargs);
    Py_DECREF(a);
    return cap;
}

static PyObject *batch_dlpack_device(pyingot_batch_t *bt, PyObject *noargs)
{
    return pyingot_dlpack_device_tuple(bt->b.device >= 0 ? bt->b.device : -1);
}

static PyObject *get_device(pyingot_batch_t *bt, void *c)
{
    return bt->b.device < 0 ? PyUnicode_FromString("cpu")
                            : PyUnicode_FromFormat("cuda:%d", bt->b.device);
}

static PyMethodDef batch_methods[] = {
    {"release", (PyCFunction)batch_release, METH_NOARGS,
     "release(): give the slot back now; raises ingot.Error (INGOT_ERR_BUSY) while tensors "
     "exported from the batch are alive. Dropping the batch and its tensors does the same."},
    {"__dlpack__", (PyCFunction)(void (*)(void))batch_dlpack, METH_VARARGS | METH_KEYWORDS,
     "The data array's DLPack capsule (torch.from_dlpack(batch))."},
    {"__dlpack_device__", (PyCFunction)batch_dlpack_device, METH_NOARGS,
     "The data array's (device_type, device_id): (1, 0) host, (2, N) CUDA device N."},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef batch_getset[] = {
    {"data", (getter)get_data, NULL,
     "uint8 [bytes]: the collated sample bytes; with a transform, [n, *shape] of its dtype. In "
     "device memory for a GPU loader.",
     NULL},
    {"device", (getter)get_device, NULL, "'cpu' or 'cuda:N': where data is.", NULL},
    {"offsets", (getter)get_offsets, NULL, "int64 [n]: sample i starts at data[offsets[i]].", NULL},
    {"lengths", (getter)get_lengths, NULL, "int64 [n]: bytes of sample i.", NULL},
    {"labels", (getter)get_labels, NULL, "int64 [n]: label of sample i, or -1.", NULL},
    {"indices", (getter)get_indices, NULL, "int64 [n]: global index of sample i.", NULL},
    {"keys", (getter)get_keys, NULL, "list of str: key of sample i (built on first access).", NULL},
    {"step", (getter)get_step, NULL, "Steps delivered before this one, over all epochs.", NULL},
    {"epoch", (getter)get_epoch, NULL, "Epoch of the batch.", NULL},
    {"epoch_step", (getter)get_epoch_step, NULL, "Step within the epoch.", NULL},
    {"count", (getter)get_count, NULL, "Samples in the batch.", NULL},
    {"exports", (getter)get_exports, NULL, "Live DLPack exports of the batch.", NULL},
    {"released", (getter)get_released, NULL, "True once the slot was given back.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject *pyingot_batch_type; /* made from pyingot_batch_spec at import */

static PyType_Slot batch_slots[] = {
    {Py_tp_dealloc, batch_dealloc},
    {Py_tp_doc, "One step's batch; its arrays are exported through DLPack without a copy."},
    {Py_tp_methods, batch_methods},
    {Py_tp_getset, batch_getset},
    {0, NULL}};

/* Made only by a loader's iteration (no constructor), as a static type without tp_new was. */
PyType_Spec pyingot_batch_spec = {
    .name = "ingot.Batch",
    .basicsize = sizeof(pyingot_batch_t),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE | Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = batch_slots,
};

/*
 * ingot.Loader's state_dict and load_state_dict: the resume cursor as a dict of plain values
 * (epoch, samples consumed, seed, manifest digest, skipped ids), collective as ingot_loader_save.
 */
#include "pyingot.h"

#include <stdlib.h>
#include <string.h>

static int check_no_parked(pyingot_loader_t *l, const char *what)
{
    if (pyingot_waiter_parked(&l->waiter)) {
        pyingot_raisef(INGOT_ERR_BUSY,
                       "%s: a batch fetched during an interrupted wait has not been taken; "
                       "call next() first so that the cursor counts only batches you received",
                       what);
        return -1;
    }
    return 0;
}

static PyObject *cursor_dict(const ingot_cursor_t *c)
{
    PyObject *skipped = PyList_New((Py_ssize_t)c->skipped_count);
    for (uint64_t i = 0; skipped != NULL && i < c->skipped_count; i++) {
        PyObject *v = PyLong_FromUnsignedLongLong(c->skipped[i]);
        if (v == NULL) {
            Py_CLEAR(skipped);
            break;
        }
        PyList_SetItem(skipped, (Py_ssize_t)i, v); /* steals v; cannot fail in range */
    }
    if (skipped == NULL) {
        return NULL;
    }
    return Py_BuildValue("{s:I,s:I,s:I,s:K,s:K,s:K,s:K,s:K,s:N}", "version", c->version,
                         "order_window", c->order_window, "order_nodes", c->order_nodes,
                         "manifest_digest", (unsigned long long)c->manifest_digest, "seed",
                         (unsigned long long)c->seed, "epoch", (unsigned long long)c->epoch,
                         "consumed", (unsigned long long)c->consumed, "global_batch",
                         (unsigned long long)c->global_batch, "skipped", skipped);
}

PyObject *pyingot_loader_state_dict(pyingot_loader_t *l, PyObject *noargs)
{
    if (pyingot_loader_check(l) != 0 || check_no_parked(l, "loader.state_dict()") != 0) {
        return NULL;
    }
    ingot_cursor_t c;
    ingot_status_t st;
    Py_BEGIN_ALLOW_THREADS st = ingot_loader_save(l->h, &c);
    Py_END_ALLOW_THREADS if (st != INGOT_OK)
    {
        return pyingot_raise(st, NULL);
    }
    PyObject *d = cursor_dict(&c);
    ingot_cursor_release(&c);
    return d;
}

static int dict_u64(PyObject *d, const char *key, uint64_t *out)
{
    PyObject *v = PyDict_GetItemString(d, key);
    if (v == NULL || !PyLong_Check(v)) {
        pyingot_raisef(INGOT_ERR_FORMAT,
                       "loader.load_state_dict(): '%s' is missing or not an integer", key);
        return -1;
    }
    *out = PyLong_AsUnsignedLongLong(v);
    if (PyErr_Occurred()) {
        PyErr_Clear();
        pyingot_raisef(INGOT_ERR_FORMAT, "loader.load_state_dict(): '%s' is out of range", key);
        return -1;
    }
    return 0;
}

/* A state dict as a cursor; c->skipped is allocated (free it). */
static int cursor_from_dict(PyObject *d, ingot_cursor_t *c)
{
    uint64_t version = 0;
    memset(c, 0, sizeof(*c));
    if (!PyDict_Check(d)) {
        pyingot_raise(INGOT_ERR_FORMAT, "loader.load_state_dict(): expected a dict from "
                                        "loader.state_dict()");
        return -1;
    }
    if (dict_u64(d, "version", &version) != 0 ||
        dict_u64(d, "manifest_digest", &c->manifest_digest) != 0 ||
        dict_u64(d, "seed", &c->seed) != 0 || dict_u64(d, "epoch", &c->epoch) != 0 ||
        dict_u64(d, "consumed", &c->consumed) != 0 ||
        dict_u64(d, "global_batch", &c->global_batch) != 0) {
        return -1;
    }
    if (version < 1 || version > INGOT_CURSOR_VERSION) {
        pyingot_raisef(INGOT_ERR_FORMAT, "loader.load_state_dict(): version %llu, expected 1 to %d",
                       (unsigned long long)version, INGOT_CURSOR_VERSION);
        return -1;
    }
    c->version = (uint32_t)version;
    uint64_t window = 0; /* version 1 has none: the full shuffle */
    if (PyDict_GetItemString(d, "order_window") != NULL &&
        (dict_u64(d, "order_window", &window) != 0 || window > UINT32_MAX)) {
        if (!PyErr_Occurred()) {
            pyingot_raisef(INGOT_ERR_FORMAT, "loader.load_state_dict(): 'order_window' is out of "
                                             "range");
        }
        return -1;
    }
    c->order_window = (uint32_t)window;
    uint64_t nodes = window ? 1 : 0; /* before version 3: one canonical node */
    if (PyDict_GetItemString(d, "order_nodes") != NULL &&
        (dict_u64(d, "order_nodes", &nodes) != 0 || nodes > UINT32_MAX ||
         (nodes == 0) != (window == 0))) {
        if (!PyErr_Occurred()) {
            pyingot_raisef(INGOT_ERR_FORMAT,
                           "loader.load_state_dict(): 'order_nodes' %llu does "
                           "not fit 'order_window' %llu",
                           (unsigned long long)nodes, (unsigned long long)window);
        }
        return -1;
    }
    c->order_nodes = (uint32_t)nodes;
    PyObject *skips = PyDict_GetItemString(d, "skipped");
    PyObject *seq = skips ? pyingot_tuple_of(skips, "'skipped' must be a list") : PyTuple_New(0);
    if (seq == NULL) {
        return -1;
    }
    Py_ssize_t n = PyTuple_Size(seq);
    c->skipped = calloc(n ? (size_t)n : 1, sizeof(uint64_t));
    for (Py_ssize_t i = 0; c->skipped != NULL && i < n; i++) {
        c->skipped[i] = PyLong_AsUnsignedLongLong(PyTuple_GetItem(seq, i));
    }
    Py_DECREF(seq);
    c->skipped_count = (uint64_t)n;
    if (c->skipped == NULL) {
        PyErr_NoMemory();
    }
    return PyErr_Occurred() ? -1 : 0;
}

/* Resume at a state dict: a new C loader starts at its cursor and replaces this one (collective;
 * on error this loader is unchanged). */
PyObject *pyingot_loader_load_state_dict(pyingot_loader_t *l, PyObject *d)
{
    if (pyingot_loader_check(l) != 0 || check_no_parked(l, "loader.load_state_dict()") != 0) {
        return NULL;
    }
    pyingot_loader_drain(l, 1); /* no call in flight (checked above): give back what waits for it */
    if (l->handed != l->retired) {
        return pyingot_raisef(INGOT_ERR_BUSY,
                              "loader.load_state_dict(): %llu batch(es) are still held; drop "
                              "them first",
                              (unsigned long long)(l->handed - l->retired));
    }
    ingot_cursor_t c;
    ingot_loader_h h = NULL;
    int rc = cursor_from_dict(d, &c);
    uint64_t first_epoch = c.epoch; /* as the C loader counts it: the cursor's step's epoch */
    if (rc == 0 && c.global_batch > 0 && l->steps_per_epoch > 0) {
        first_epoch += c.consumed / c.global_batch / l->steps_per_epoch;
    }
    if (rc == 0) {
        rc = pyingot_loader_open(l, &c, &h);
    }
    free(c.skipped);
    if (rc != 0) {
        return NULL;
    }
    (void)pyingot_waiter_stop(&l->waiter, NULL); /* nothing parked: checked above */
    ingot_loader_h old = l->h;
    Py_BEGIN_ALLOW_THREADS ingot_loader_destroy(old);
    Py_END_ALLOW_THREADS pyingot_loader_adopt(l, h, first_epoch);
    Py_RETURN_NONE;
}

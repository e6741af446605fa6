/*
 * loader.c: ingot.Loader over ingot_loader_create/next/release/save/stats/destroy. Iterating
 * yields one epoch's batches (a `for` loop per epoch, as a PyTorch DataLoader); batches are
 * given back in hand-over order (loader.h asks it) whatever order Python drops them in: a
 * dropped batch is marked done and released once every earlier one is. create, state_dict,
 * load_state_dict and close are collective over ingot's communicator, as in C.
 */
#include "pyingot.h"

#include <stdlib.h>
#include <string.h>

static pyingot_loader_t *g_live_head, *g_live_tail; /* creation order */

int pyingot_loader_check(pyingot_loader_t *l)
{
    if (pyingot_fork_check() != 0) {
        return -1;
    }
    if (l->h == NULL) {
        pyingot_raisef(INGOT_ERR_INVALID_PARAM, "the loader of %s is closed",
                       l->manifest ? l->manifest : "(none)");
        return -1;
    }
    return 0;
}

/* 'cpu': host batches; 'placement' (or None): the placement's GPU when it has one and CUDA is
 * usable, else host (the C loader decides); an int: that CUDA device (the C loader refuses one
 * this process cannot use, naming it). */
static int parse_device(PyObject *dev, int *device_p)
{
    if (PyUnicode_Check(dev) && PyUnicode_CompareWithASCIIString(dev, "cpu") == 0) {
        *device_p = INGOT_DEVICE_HOST;
        return 0;
    }
    if (dev == Py_None ||
        (PyUnicode_Check(dev) && PyUnicode_CompareWithASCIIString(dev, "placement") == 0)) {
        *device_p = INGOT_DEVICE_PLACEMENT;
        return 0;
    }
    long v = PyLong_Check(dev) ? PyLong_AsLong(dev) : -1;
    if (PyLong_Check(dev) && v >= 0 && v <= INT32_MAX) {
        *device_p = (int)v;
        return 0;
    }
    PyErr_Clear();
    PyObject *r = PyObject_Repr(dev);
    pyingot_raisef(INGOT_ERR_INVALID_PARAM,
                   "Loader(device=%s): expected 'placement', 'cpu' or a CUDA device index >= 0",
                   r ? PyUnicode_AsUTF8AndSize(r, NULL) : "?");
    Py_XDECREF(r);
    return -1;
}

static int parse_verify(const char *s, ingot_verify_policy_t *v)
{
    static const char *const names[] = {"fail", "skip", "off"};
    for (int i = 0; i < 3; i++) {
        if (strcmp(s, names[i]) == 0) {
            *v = (ingot_verify_policy_t)i;
            return 0;
        }
    }
    pyingot_raisef(INGOT_ERR_INVALID_PARAM, "Loader(verify='%s'): expected 'fail', 'skip' or 'off'",
                   s);
    return -1;
}

/* A positive integer keyword argument (Python ints may be negative or huge). */
static int parse_u64(PyObject *o, const char *name, uint64_t min, uint64_t max, uint64_t *out)
{
    unsigned long long v = PyLong_Check(o) ? PyLong_AsUnsignedLongLong(o) : 0;
    if (!PyLong_Check(o) || PyErr_Occurred() || v < min || v > max) {
        PyErr_Clear();
        PyObject *r = PyObject_Repr(o);
        pyingot_raisef(INGOT_ERR_INVALID_PARAM,
                       "Loader(%s=%s): expected an integer from %llu to %llu", name,
                       r ? PyUnicode_AsUTF8AndSize(r, NULL) : "?", (unsigned long long)min,
                       (unsigned long long)max);
        Py_XDECREF(r);
        return -1;
    }
    *out = v;
    return 0;
}

/* Steps per epoch as the loader cuts them (tail policy drop: whole global batches). */
static int count_steps(pyingot_loader_t *l)
{
    ingot_manifest_h m;
    ingot_manifest_info_t mi;
    ingot_status_t st = ingot_manifest_open(l->manifest, INGOT_MANIFEST_OPEN_LAZY, &m);
    if (st == INGOT_OK) {
        st = ingot_manifest_query(m, &mi);
        ingot_manifest_close(m);
    }
    if (st != INGOT_OK) {
        pyingot_raise(st, NULL);
        return -1;
    }
    l->steps_per_epoch = mi.sample_count / l->params.global_batch;
    return 0;
}

/* Create the C loader (collective), starting at @p cursor when not NULL. */
int pyingot_loader_open(pyingot_loader_t *l, const ingot_cursor_t *cursor, ingot_loader_h *h_p)
{
    ingot_loader_params_t p = l->params;
    if (cursor != NULL) {
        p.field_mask |= INGOT_LOADER_PARAM_FIELD_CURSOR;
        p.cursor = cursor;
    }
    ingot_status_t st;
    Py_BEGIN_ALLOW_THREADS st = ingot_loader_create(pyingot_ctx(), &p, h_p);
    Py_END_ALLOW_THREADS if (st != INGOT_OK)
    {
        pyingot_raise(st, NULL);
        return -1;
    }
    return 0;
}

static void live_link(pyingot_loader_t *l)
{
    l->live_prev = g_live_tail;
    l->live_next = NULL;
    if (g_live_tail) {
        g_live_tail->live_next = l;
    } else {
        g_live_head = l;
    }
    g_live_tail = l;
}

static void live_unlink(pyingot_loader_t *l)
{
    if (l->live_prev) {
        l->live_prev->live_next = l->live_next;
    } else if (g_live_head == l) {
        g_live_head = l->live_next;
    }
    if (l->live_next) {
        l->live_next->live_prev = l->live_prev;
    } else if (g_live_tail == l) {
        g_live_tail = l->live_prev;
    }
    l->live_prev = l->live_next = NULL;
}

/* Start afresh on a new C loader: an empty ring, the epoch not begun. */
void pyingot_loader_adopt(pyingot_loader_t *l, ingot_loader_h h, uint64_t first_epoch)
{
    l->h = h;
    l->first_epoch = first_epoch;
    l->handed = 0;
    l->retired = 0;
    l->epoch_done = 0;
    l->ended = 0;
}

static int loader_init(pyingot_loader_t *l, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {
        "manifest", "global_batch_size", "seed",    "epochs",  "depth",     "device",
        "verify",   "skip_budget",       "readers", "workers", "transform", NULL};
    PyObject *path = NULL, *gb = NULL, *seed = NULL, *epochs = NULL, *depth = NULL;
    PyObject *device = NULL, *budget = NULL, *readers = NULL, *workers = NULL, *tf = NULL;
    const char *verify = "fail";
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O&O|$OOOOsOOOO:Loader", kwlist,
                                     PyUnicode_FSConverter, &path, &gb, &seed, &epochs, &depth,
                                     &device, &verify, &budget, &readers, &workers, &tf)) {
        return -1;
    }
    int rc = -1;
    if (pyingot_fork_check() != 0) {
        goto out;
    }
    if (pyingot_ctx() == NULL) {
        pyingot_raise(INGOT_ERR_INVALID_PARAM, "ingot.Loader: call ingot.init() first");
        goto out;
    }
    if (l->h != NULL || l->manifest != NULL) {
        pyingot_raise(INGOT_ERR_EXISTS, "ingot.Loader.__init__ called twice");
        goto out;
    }
    ingot_loader_params_t *p = &l->params;
    uint64_t d = 4, r = 0, w = 0;
    p->field_mask = INGOT_LOADER_PARAM_FIELD_MANIFEST | INGOT_LOADER_PARAM_FIELD_BATCH |
                    INGOT_LOADER_PARAM_FIELD_SEED | INGOT_LOADER_PARAM_FIELD_EPOCHS |
                    INGOT_LOADER_PARAM_FIELD_DEPTH | INGOT_LOADER_PARAM_FIELD_DEVICE |
                    INGOT_LOADER_PARAM_FIELD_VERIFY | INGOT_LOADER_PARAM_FIELD_THREADS;
    p->epochs = 1;
    if (parse_u64(gb, "global_batch_size", 1, UINT32_MAX, &p->global_batch) != 0 ||
        (seed && parse_u64(seed, "seed", 0, UINT64_MAX, &p->seed) != 0) ||
        (epochs && parse_u64(epochs, "epochs", 1, UINT32_MAX, &p->epochs) != 0) ||
        (depth && parse_u64(depth, "depth", 2, 1024, &d) != 0) ||
        (budget && parse_u64(budget, "skip_budget", 0, UINT64_MAX, &p->skip_budget) != 0) ||
        (readers && parse_u64(readers, "readers", 0, 1024, &r) != 0) ||
        (workers && parse_u64(workers, "workers", 0, 1024, &w) != 0) ||
        parse_verify(verify, &p->verify) != 0 ||
        parse_device(device ? device : Py_None, &p->device) != 0 ||
        pyingot_tf_set(&l->tf, tf, p) != 0) {
        goto out;
    }
    p->depth = (uint32_t)d;
    p->readers = (uint32_t)r;
    p->workers = (uint32_t)w;
    l->depth = (uint32_t)d;
    l->manifest = strdup(PyBytes_AsString(path));
    l->held = calloc(d, sizeof(*l->held));
    if (l->manifest == NULL || l->held == NULL) {
        PyErr_NoMemory();
        goto out;
    }
    p->manifest_path = l->manifest;
    ingot_loader_h h;
    if (pyingot_loader_open(l, NULL, &h) != 0) {
        goto out;
    }
    pyingot_loader_adopt(l, h, 0);
    pyingot_waiter_init(&l->waiter);
    live_link(l);
    rc = count_steps(l);
out:
    Py_XDECREF(path);
    return rc;
}

/* Give back the batches at the ring's head to @p h: the done ones, or (@p all) every batch
 * handed over. The caller holds waiter.call. */
static void give_back_locked(pyingot_loader_t *l, ingot_loader_h h, int all)
{
    while (l->retired < l->handed && (all || l->held[l->retired % l->depth].done)) {
        pyingot_held_t *e = &l->held[l->retired % l->depth];
        /* In order: cannot fail, but for a CUDA error recording the event on the consumer's
         * stream (logged), after which that stream is unusable anyway: release it plainly. */
        if (e->stream == NULL || ingot_loader_release_after(h, &e->batch, e->stream) != INGOT_OK) {
            (void)ingot_loader_release(h, &e->batch);
        }
        *e = (pyingot_held_t){0};
        l->retired++;
    }
}

static void drain_locked(pyingot_loader_t *l)
{
    give_back_locked(l, l->h, 0);
}

/* Drain unless ingot_loader_next() runs on the wait thread right now (after an interrupted
 * wait, or while another Python thread drops a batch): the next drain gives those back. */
void pyingot_loader_drain(pyingot_loader_t *l, int block)
{
    if (l->h == NULL) {
        return;
    }
    if (block) {
        pthread_mutex_lock(&l->waiter.call);
    } else if (pthread_mutex_trylock(&l->waiter.call) != 0) {
        return;
    }
    drain_locked(l);
    pthread_mutex_unlock(&l->waiter.call);
}

void pyingot_loader_retire(pyingot_loader_t *l, uint64_t seq)
{
    if (seq < l->retired || seq >= l->handed) {
        return; /* from before a load_state_dict(): that loader is gone */
    }
    l->held[seq % l->depth].done = 1;
    pyingot_loader_drain(l, 0);
}

void pyingot_loader_note_stream(pyingot_loader_t *l, uint64_t seq, void *stream)
{
    if (seq >= l->retired && seq < l->handed) {
        l->held[seq % l->depth].stream = stream;
    }
}

static PyObject *no_slot_error(pyingot_loader_t *l)
{
    return pyingot_raisef(
        INGOT_ERR_NO_RESOURCE,
        "all %u batch slots are held (Loader(depth=%u)): %llu batches handed over and not "
        "given back; drop a batch and the tensors made from it (or call batch.release()) "
        "before asking for the next, or raise depth",
        l->depth, l->depth, (unsigned long long)(l->handed - l->retired));
}

static PyObject *loader_iternext(pyingot_loader_t *l)
{
    if (pyingot_loader_check(l) != 0) {
        return NULL;
    }
    if (l->ended || l->epoch_done) {
        l->epoch_done = 0;
        return NULL; /* StopIteration: the epoch (or the run) is over */
    }
    ingot_batch_t b;
    ingot_status_t st;
    char msg[1024];
    if (!pyingot_waiter_parked(&l->waiter)) {
        pyingot_loader_drain(l, 1); /* releases deferred while a call was in flight */
    }
    if (pyingot_waiter_next(&l->waiter, l->h, &b, &st, msg, sizeof(msg)) != 0) {
        return NULL;
    }
    if (st == INGOT_END_OF_DATA) {
        l->ended = 1;
        return NULL;
    }
    if (st == INGOT_ERR_NO_RESOURCE) {
        return no_slot_error(l);
    }
    if (st != INGOT_OK && msg[0] == '\0') {
        /* Detected on one of the loader's threads: logged there (ingot_last_error() is per
         * thread), so point at the log. */
        snprintf(msg, sizeof(msg),
                 "step %llu of %s failed: %s (the loader's log names the shard, sample and "
                 "offset)",
                 (unsigned long long)l->handed, l->manifest, ingot_status_string(st));
    }
    if (st != INGOT_OK) {
        PyObject *exc = pyingot_tf_take_raised(&l->tf, msg);
        if (exc != NULL) { /* the Python transform's own exception, noted with the sample */
            PyErr_SetObject((PyObject *)Py_TYPE(exc), exc);
            Py_DECREF(exc);
            return NULL;
        }
        return pyingot_raise(st, msg);
    }
    uint64_t seq = l->handed++;
    l->held[seq % l->depth] = (pyingot_held_t){.batch = b, .done = 0};
    l->epoch_done = (b.epoch_step + 1 == l->steps_per_epoch);
    return pyingot_batch_new(l, &b, seq);
}

static PyObject *loader_iter(pyingot_loader_t *l)
{
    if (pyingot_loader_check(l) != 0) {
        return NULL;
    }
    Py_INCREF((PyObject *)l);
    return (PyObject *)l;
}

/* Destroy the C loader (collective). Refused while tensors from its batches are alive, unless
 * @p force (interpreter exit, the loader's deallocation): their memory goes with it then.
 *
 * Batches the script still holds are given back first, so ingot_loader_destroy() has none to
 * warn about: `with Loader(...) as l: for batch in l:` and a script that ends in its loop keep
 * the last batch bound, which is no mistake, and their objects stay harmless (each array raises
 * "its loader was closed": pyingot_batch_check_live). So is the batch that a call interrupted
 * by Ctrl-C delivered after the interruption, which nobody took. */
static int loader_close_impl(pyingot_loader_t *l, int force)
{
    if (l->h == NULL) {
        return 0;
    }
    if (l->exports > 0 && !force) {
        pyingot_raisef(INGOT_ERR_BUSY,
                       "loader.close(): %zd tensor(s) exported from its batches are alive; "
                       "their memory would be freed under them",
                       l->exports);
        return -1;
    }
    ingot_loader_h h = l->h;
    l->h = NULL; /* other threads see it closed while the wait thread stops without the GIL */
    live_unlink(l);
    if (pyingot_in_child()) {
        return 0; /* the parent's loader: not ours to destroy */
    }
    ingot_batch_t parked;
    int has_parked = pyingot_waiter_stop(&l->waiter, &parked);
    pthread_mutex_lock(&l->waiter.call);
    give_back_locked(l, h, 1);
    if (has_parked) {
        (void)ingot_loader_release(h, &parked); /* fetched after every batch handed over */
    }
    pthread_mutex_unlock(&l->waiter.call);
    Py_BEGIN_ALLOW_THREADS ingot_loader_destroy(h);
    Py_END_ALLOW_THREADS return 0;
}

int pyingot_loaders_close_all(int force)
{
    for (pyingot_loader_t *l = g_live_head; l != NULL && !force; l = l->live_next) {
        if (l->exports > 0) {
            pyingot_raisef(INGOT_ERR_BUSY,
                           "ingot.finalize(): %zd tensor(s) exported from the batches of the "
                           "loader of %s are alive",
                           l->exports, l->manifest);
            return -1;
        }
    }
    while (g_live_head != NULL) {
        loader_close_impl(g_live_head, force);
    }
    return 0;
}

static PyObject *loader_close(pyingot_loader_t *l, PyObject *noargs)
{
    if (pyingot_fork_check() != 0 || loader_close_impl(l, 0) != 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *loader_enter(pyingot_loader_t *l, PyObject *noargs)
{
    Py_INCREF((PyObject *)l);
    return (PyObject *)l;
}

static PyObject *loader_exit(pyingot_loader_t *l, PyObject *args)
{
    return loader_close(l, NULL);
}

static void loader_dealloc(pyingot_loader_t *l)
{
    if (l->h != NULL) {
        loader_close_impl(l, 1); /* collective, as in C: every rank drops it at the same point */
    }
    pyingot_tf_clear(&l->tf);
    free(l->held);
    free(l->manifest);
    pyingot_object_free((PyObject *)l);
}


static PyObject *get_steps_per_epoch(pyingot_loader_t *l, void *c)
{
    return PyLong_FromUnsignedLongLong(l->steps_per_epoch);
}

static PyObject *get_depth(pyingot_loader_t *l, void *c)
{
    return PyLong_FromUnsignedLong(l->depth);
}

static PyObject *get_held(pyingot_loader_t *l, void *c)
{
    return PyLong_FromUnsignedLongLong(l->handed - l->retired);
}

static PyMethodDef loader_methods[] = {
    {"state_dict", (PyCFunction)pyingot_loader_state_dict, METH_NOARGS,
     "state_dict(): the resume cursor as a dict (collective; call it after the same step on "
     "every rank). It counts the batches handed over."},
    {"load_state_dict", (PyCFunction)pyingot_loader_load_state_dict, METH_O,
     "load_state_dict(d): resume exactly where d was taken, with this or another world size "
     "dividing the global batch (collective; no batch may be held)."},
    {"stats", (PyCFunction)pyingot_loader_stats, METH_NOARGS,
     "stats(): ingot_loader_stats_t as a dict."},
    {"close", (PyCFunction)loader_close, METH_NOARGS,
     "close(): stop the pipeline and free the loader (collective)."},
    {"__enter__", (PyCFunction)loader_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)loader_exit, METH_VARARGS, NULL},
    {NULL, NULL, 0, NULL}};

static PyGetSetDef loader_getset[] = {
    {"steps_per_epoch", (getter)get_steps_per_epoch, NULL, "Batches per epoch.", NULL},
    {"depth", (getter)get_depth, NULL, "Batch slots (at most depth batches held).", NULL},
    {"held", (getter)get_held, NULL, "Batches handed over and not yet given back.", NULL},
    {NULL, NULL, NULL, NULL, NULL}};

PyTypeObject *pyingot_loader_type; /* made from pyingot_loader_spec at import */

static PyType_Slot loader_slots[] = {
    {Py_tp_dealloc, loader_dealloc},
    {Py_tp_doc,
     "Loader(manifest, global_batch_size, *, seed=0, epochs=1, depth=4, "
     "device='placement', verify='fail', skip_budget=0, readers=0, workers=0, transform=None): "
     "iterate once per epoch for that epoch's batches (collective create)."},
    {Py_tp_iter, loader_iter},
    {Py_tp_iternext, loader_iternext},
    {Py_tp_methods, loader_methods},
    {Py_tp_getset, loader_getset},
    {Py_tp_init, loader_init},
    {Py_tp_new, PyType_GenericNew},
    {0, NULL}};

PyType_Spec pyingot_loader_spec = {
    .name = "ingot.Loader",
    .basicsize = sizeof(pyingot_loader_t),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = loader_slots,
};

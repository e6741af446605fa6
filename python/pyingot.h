/*
 * pyingot.h: internal declarations shared by the files of the `ingot` CPython extension
 * (module.c: init/placement/fork guard; errors.c: ingot.Error; waiter.c: interruptible waits;
 * loader.c: ingot.Loader; batch.c: ingot.Batch; array.c: ingot.Array and DLPack export).
 * Everything here runs with the GIL held unless a comment says otherwise. The module is built
 * against CPython's stable ABI (Py_LIMITED_API, set by CMake: one .abi3.so for Python 3.11 and
 * later), so its types are heap types made from specs at import, and no macro or struct field
 * outside the limited API is used.
 */
#ifndef PYINGOT_H
#define PYINGOT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <pthread.h>
#include <stdlib.h>
#include <ingot/ingot.h>

#include "dlpack.h"

/* ---- errors.c */
extern PyObject *pyingot_error_type; /* ingot.Error */
int pyingot_errors_add(PyObject *module);
const char *pyingot_status_name(ingot_status_t status);
/* Raise ingot.Error for @p status with @p msg (NULL or "": ingot_last_error() of this thread,
 * else the status' description). Returns NULL for `return pyingot_raise(...)`. */
PyObject *pyingot_raise(ingot_status_t status, const char *msg);
PyObject *pyingot_raisef(ingot_status_t status, const char *fmt, ...);
/* The name of @p o's type for messages, as tp_name gives it (which the limited API hides):
 * "module.QualName", or "QualName" for a builtin. New reference; NULL with an error set. */
PyObject *pyingot_type_name(PyObject *o);
/* PySequence_Fast as a tuple (whose items the limited API can borrow): @p o itself when a tuple,
 * else a tuple of its items; NULL with TypeError(@p msg) when @p o is not iterable. New
 * reference. */
PyObject *pyingot_tuple_of(PyObject *o, const char *msg);

/* ---- sim.c: ingot.simulate() */
PyObject *pyingot_simulate(PyObject *self, PyObject *args, PyObject *kwargs);

/* ---- module.c */
ingot_ctx_h pyingot_ctx(void); /* NULL before ingot.init() */
/* 0 in the process that called ingot.init() (or before init); -1 with ingot.Error set in a
 * forked child, naming the parent's pid. */
int pyingot_fork_check(void);
int pyingot_in_child(void);

/* The module's types: heap types made at import from these specs (module.c) and kept for the
 * life of the process (the module has no per-interpreter state: m_size -1, one context). */
extern PyTypeObject *pyingot_loader_type, *pyingot_batch_type, *pyingot_array_type;
extern PyTypeObject *pyingot_image_transform_type, *pyingot_py_transform_type;
extern PyType_Spec pyingot_loader_spec, pyingot_batch_spec, pyingot_array_spec;
extern PyType_Spec pyingot_image_transform_spec, pyingot_py_transform_spec;
/* Free @p self, an instance of one of those types (not GC-tracked), and drop the reference to
 * its type that every instance of a heap type holds: the end of each type's tp_dealloc. */
void pyingot_object_free(PyObject *self);

/* ---- waiter.c: ingot_loader_next() on a helper thread, so the GIL is free and Ctrl-C can
 * interrupt the wait; a result that arrives after an interruption is kept for the next call. */
typedef struct pyingot_waiter {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    pthread_mutex_t call; /* held around every ingot_loader_next/_release: one at a time */
    int started, stop, requested, done;
    ingot_loader_h loader;
    ingot_batch_t batch;
    ingot_status_t status;
    char msg[1024]; /* ingot_last_error() is per thread: copied here */
} pyingot_waiter_t;

void pyingot_waiter_init(pyingot_waiter_t *w);
/* The next batch: 0 with *st (and *b when INGOT_OK) set, msg filled on error; -1 with a Python
 * exception (a signal handler raised, e.g. KeyboardInterrupt) when the wait was interrupted. */
int pyingot_waiter_next(pyingot_waiter_t *w, ingot_loader_h loader, ingot_batch_t *b,
                        ingot_status_t *st, char *msg, size_t len);
int pyingot_waiter_parked(pyingot_waiter_t *w); /* a request in flight or a result not taken */
/* Wait for an in-flight call, join the thread; 1 with *parked_p (when not NULL) when that call
 * (or an earlier one, interrupted) delivered a batch nobody took, which the caller must give
 * back; else 0. */
int pyingot_waiter_stop(pyingot_waiter_t *w, ingot_batch_t *parked_p);

/* ---- transform.c */
#define PYINGOT_SAMPLE_NDIM_MAX 6                             /* dimensions of a sample's output */
#define PYINGOT_NDIM_MAX        (PYINGOT_SAMPLE_NDIM_MAX + 1) /* of an array: [n, *sample] */

/* What a loader runs on each sample (Loader(transform=...)). */
typedef struct pyingot_tf {
    PyObject *obj; /* the ImageTransform or Transform (strong reference); NULL: none */
    PyObject *fn;  /* a Transform's callable (borrowed from obj) */
    int32_t ndim;  /* a sample's output: shape and dtype */
    int64_t shape[PYINGOT_SAMPLE_NDIM_MAX];
    pyingot_dl_dtype_t dtype;
    size_t out_size;
    PyObject *raised; /* dict: sample key -> the exception fn raised on it (under the GIL) */
} pyingot_tf_t;

/* Resolve Loader(transform=@p obj) into @p tf and the loader's params (field_mask, transform,
 * transform_arg, sample_out_size); -1 with an error set. @p tf must not move afterwards. */
int pyingot_tf_set(pyingot_tf_t *tf, PyObject *obj, ingot_loader_params_t *p);
void pyingot_tf_clear(pyingot_tf_t *tf);
/* After a failed step whose message is @p msg: the exception fn raised on the sample the
 * message names, removed from tf->raised; NULL when the step failed otherwise (an I/O error
 * while fn raised on a sample of a step prepared ahead: that step's error is the one raised).
 * New reference. */
PyObject *pyingot_tf_take_raised(pyingot_tf_t *tf, const char *msg);

/* ---- vision.c: ImageTransform's decode and augment options */
typedef struct pyingot_vision_opts {
    int decode, uint8; /* decode=True; dtype='uint8' */
    PyObject *crop, *scale, *ratio, *flip, *resize, *layout, *max_pixels, *seed, *dct; /* borrowed;
                                                                         NULL/None: default */
} pyingot_vision_opts_t;
/* 1 when the options ask for the decode transform (decode=True or a crop). */
int pyingot_vision_wanted(const pyingot_vision_opts_t *o);
/* -1 with ingot.Error naming the first decode option given without decoding; else 0. */
int pyingot_vision_unused(const pyingot_vision_opts_t *o);
/* The decode transform of @p n's size, channels, field, mean and std and the options; -1 with
 * ingot.Error naming what was wrong. *hwc_p: 1 for layout='HWC'. */
int pyingot_vision_create(const pyingot_vision_opts_t *o, const ingot_image_norm_t *n,
                          ingot_vision_h *v_p, int *hwc_p);

/* ---- loader.c */
typedef struct pyingot_held {
    ingot_batch_t batch;
    int done;     /* its Python object (and every export) is gone, or release() called */
    void *stream; /* the consumer stream a device export synchronised (the last, when several;
                     never NULL: DLPack's legacy default is 1): release after it; NULL: none */
} pyingot_held_t;

typedef struct pyingot_loader {
    PyObject_HEAD ingot_loader_h h; /* NULL once closed */
    ingot_loader_params_t params;
    char *manifest;
    uint64_t steps_per_epoch;
    uint32_t depth;
    pyingot_held_t *held; /* ring of depth entries, hand-over order */
    uint64_t handed, retired;
    uint64_t first_epoch; /* the C loader's first epoch (its cursor's when resumed) */
    int epoch_done, ended;
    Py_ssize_t exports; /* live DLPack tensors of all its batches */
    pyingot_waiter_t waiter;
    pyingot_tf_t tf;
    struct pyingot_loader *live_prev, *live_next; /* module's list, for ingot.finalize() */
} pyingot_loader_t;

/* Mark hand-over @p seq done and give back, in order, every done batch at the ring's head (at
 * once, or after the ingot_loader_next() in flight on the wait thread returns). */
void pyingot_loader_retire(pyingot_loader_t *l, uint64_t seq);
/* Hand-over @p seq was exported to CUDA stream @p stream: give it back after that stream. */
void pyingot_loader_note_stream(pyingot_loader_t *l, uint64_t seq, void *stream);
/* Close every live loader (collective), for ingot.finalize(); -1 with an error set if one
 * still has exports and !force. */
int pyingot_loaders_close_all(int force);

/* ---- batch.c */
typedef struct pyingot_batch {
    PyObject_HEAD pyingot_loader_t *loader; /* strong reference */
    ingot_batch_t b;
    uint64_t seq;       /* hand-over number in the loader's ring */
    int released;       /* memory no longer ours: release() called or loader closed */
    Py_ssize_t exports; /* live DLPack tensors */
    int64_t *labels64;
    PyObject *keys; /* list of str, built on first access */
} pyingot_batch_t;

PyObject *pyingot_batch_new(pyingot_loader_t *l, const ingot_batch_t *b, uint64_t seq);
/* 0 when the batch's memory may be read, else -1 with ingot.Error set. */
int pyingot_batch_check_live(pyingot_batch_t *bt);

/* ---- array.c */
typedef struct pyingot_array {
    PyObject_HEAD pyingot_batch_t *batch; /* strong reference */
    void *data;
    int32_t ndim;
    int64_t shape[PYINGOT_NDIM_MAX];
    pyingot_dl_dtype_t dtype;
    int device;       /* -1: host memory; else the CUDA device of data */
    const char *name; /* "data", "offsets", ... */
} pyingot_array_t;

PyObject *pyingot_array_new(pyingot_batch_t *bt, const char *name, void *data, int32_t ndim,
                            const int64_t *shape, pyingot_dl_dtype_t dtype, int device);
PyObject *pyingot_shape_tuple(int32_t ndim, const int64_t *shape);
/* (device_type, device_id) of DLPack for @p device (-1: host). */
PyObject *pyingot_dlpack_device_tuple(int device);
/* The DLPack protocol, shared by Array and Batch (whose export is its data). */
PyObject *pyingot_array_dlpack(pyingot_array_t *a, PyObject *args, PyObject *kwargs);
PyObject *pyingot_array_dlpack_device(pyingot_array_t *a, PyObject *noargs);

/* loader.c: raise (and return -1) when the loader is closed or the process forked; create the C
 * loader of @p l (from @p cursor, or NULL: the start), and take it as l's; give back the batches
 * Python dropped (@p block: wait for a call in flight). */
int pyingot_loader_check(pyingot_loader_t *l);
int pyingot_loader_open(pyingot_loader_t *l, const ingot_cursor_t *cursor, ingot_loader_h *h_p);
void pyingot_loader_adopt(pyingot_loader_t *l, ingot_loader_h h, uint64_t first_epoch);
void pyingot_loader_drain(pyingot_loader_t *l, int block);
/* loader_state.c, loader_stats.c: the methods state_dict, load_state_dict and stats. */
PyObject *pyingot_loader_state_dict(pyingot_loader_t *l, PyObject *noargs);
PyObject *pyingot_loader_load_state_dict(pyingot_loader_t *l, PyObject *d);
PyObject *pyingot_loader_stats(pyingot_loader_t *l, PyObject *noargs);

#endif /* PYINGOT_H */

/*
 * errors.c: ingot.Error, the one exception type of the binding. Each carries `status` (the
 * ingot_status_t name, e.g. "INGOT_ERR_NOT_FOUND"), `code` (its value) and `message` (what the
 * library logged: file, variable, value, rank), and reads "INGOT_ERR_NOT_FOUND: <message>".
 * Also the small helpers messages and argument parsing need where the limited API hides
 * CPython's own (tp_name, PySequence_Fast's items).
 */
#include "pyingot.h"

#include <stdarg.h>
#include <stdio.h>

PyObject *pyingot_error_type;

/* Names of the codes of ingot/status.h, indexed by -code for errors. */
static const char *const error_names[] = {
    "INGOT_OK",           "INGOT_ERR_INVALID_PARAM", "INGOT_ERR_NO_MEMORY",
    "INGOT_ERR_IO",       "INGOT_ERR_NOT_FOUND",     "INGOT_ERR_TIMED_OUT",
    "INGOT_ERR_CANCELED", "INGOT_ERR_UNSUPPORTED",   "INGOT_ERR_NO_DEVICE",
    "INGOT_ERR_CONFIG",   "INGOT_ERR_MPI",           "INGOT_ERR_UCX",
    "INGOT_ERR_CUDA",     "INGOT_ERR_NCCL",          "INGOT_ERR_CORRUPT",
    "INGOT_ERR_FORMAT",   "INGOT_ERR_BUSY",          "INGOT_ERR_NO_RESOURCE",
    "INGOT_ERR_EXISTS",   "INGOT_ERR_PERMISSION",    "INGOT_ERR_OUT_OF_RANGE",
    "INGOT_ERR_MISMATCH", "INGOT_ERR_ZSTD",          "INGOT_ERR_INTERNAL",
};

const char *pyingot_status_name(ingot_status_t status)
{
    if (status == INGOT_INPROGRESS) {
        return "INGOT_INPROGRESS";
    }
    if (status == INGOT_END_OF_DATA) {
        return "INGOT_END_OF_DATA";
    }
    if (status <= 0 && status > INGOT_ERR_LAST) {
        return error_names[-(int)status];
    }
    return "INGOT_ERR_UNKNOWN";
}

int pyingot_errors_add(PyObject *module)
{
    pyingot_error_type = PyErr_NewExceptionWithDoc(
        "ingot.Error",
        "An ingot call failed. Attributes: status (the ingot_status_t name), code (its value), "
        "message (what the library reported).",
        PyExc_RuntimeError, NULL);
    if (pyingot_error_type == NULL) {
        return -1;
    }
    Py_INCREF(pyingot_error_type);
    return PyModule_AddObject(module, "Error", pyingot_error_type);
}

static int set_attrs(PyObject *exc, ingot_status_t status, const char *msg)
{
    PyObject *name = PyUnicode_FromString(pyingot_status_name(status));
    PyObject *code = PyLong_FromLong((long)status);
    PyObject *text = PyUnicode_FromString(msg);
    int rc = (name && code && text && PyObject_SetAttrString(exc, "status", name) == 0 &&
              PyObject_SetAttrString(exc, "code", code) == 0 &&
              PyObject_SetAttrString(exc, "message", text) == 0)
                 ? 0
                 : -1;
    Py_XDECREF(name);
    Py_XDECREF(code);
    Py_XDECREF(text);
    return rc;
}

PyObject *pyingot_raise(ingot_status_t status, const char *msg)
{
    if (msg == NULL || msg[0] == '\0') {
        msg = ingot_last_error();
    }
    if (msg == NULL || msg[0] == '\0') {
        msg = ingot_status_string(status);
    }
    PyObject *full = PyUnicode_FromFormat("%s: %s", pyingot_status_name(status), msg);
    PyObject *exc = full ? PyObject_CallFunctionObjArgs(pyingot_error_type, full, NULL) : NULL;
    Py_XDECREF(full);
    if (exc == NULL || set_attrs(exc, status, msg) != 0) {
        Py_XDECREF(exc);
        return NULL;
    }
    PyErr_SetObject(pyingot_error_type, exc);
    Py_DECREF(exc);
    return NULL;
}

PyObject *pyingot_raisef(ingot_status_t status, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return pyingot_raise(status, buf);
}

PyObject *pyingot_type_name(PyObject *o)
{
    PyTypeObject *type = Py_TYPE(o);
    PyObject *qual = PyType_GetQualName(type);
    PyObject *mod = qual ? PyObject_GetAttrString((PyObject *)type, "__module__") : NULL;
    PyObject *name = NULL;
    if (mod != NULL && PyUnicode_Check(mod) &&
        PyUnicode_CompareWithASCIIString(mod, "builtins") != 0) {
        name = PyUnicode_FromFormat("%U.%U", mod, qual);
    } else if (qual != NULL) {
        PyErr_Clear(); /* no __module__: the bare name */
        name = Py_NewRef(qual);
    }
    Py_XDECREF(mod);
    Py_XDECREF(qual);
    return name;
}

PyObject *pyingot_tuple_of(PyObject *o, const char *msg)
{
    if (PyTuple_Check(o)) {
        return Py_NewRef(o);
    }
    PyObject *it = PyObject_GetIter(o);
    if (it == NULL) {
        if (PyErr_ExceptionMatches(PyExc_TypeError)) {
            PyErr_SetString(PyExc_TypeError, msg);
        }
        return NULL;
    }
    PyObject *t = PySequence_Tuple(it);
    Py_DECREF(it);
    return t;
}

/*
 * module.c: the `ingot` module: ingot.init() / finalize() over one process-wide context,
 * ingot.placement(), rank() and world_size(), and the fork guard (ingot is not fork-safe after
 * init: every call in a forked child raises, naming the parent's pid).
 */
#include "pyingot.h"

#include <unistd.h>

static ingot_ctx_h g_ctx;
static pid_t g_init_pid; /* process that called ingot.init() */
static int g_forked;     /* set in a child forked after init */

ingot_ctx_h pyingot_ctx(void)
{
    return g_ctx;
}

static void on_fork_child(void)
{
    if (g_ctx != NULL) {
        g_forked = 1;
    }
}

int pyingot_in_child(void)
{
    return g_forked;
}

int pyingot_fork_check(void)
{
    if (!g_forked) {
        return 0;
    }
    pyingot_raisef(INGOT_ERR_UNSUPPORTED,
                   "ingot was initialised in process %d and this is a child it forked (pid %d): "
                   "ingot is not fork-safe; use it in the parent only (a DataLoader worker must "
                   "not call ingot)",
                   (int)g_init_pid, (int)getpid());
    return -1;
}

static int require_ctx(void)
{
    if (pyingot_fork_check() != 0) {
        return -1;
    }
    if (g_ctx == NULL) {
        pyingot_raise(INGOT_ERR_INVALID_PARAM, "ingot.init() has not been called");
        return -1;
    }
    return 0;
}

/* An mpi4py communicator (or any object with py2f(), the Fortran handle) as an MPI_Comm. */
static int comm_from_object(PyObject *obj, MPI_Comm *comm_p)
{
    int inited = 0;
    MPI_Initialized(&inited);
    if (!inited) {
        pyingot_raise(INGOT_ERR_INVALID_PARAM,
                      "ingot.init(comm=...): MPI is not initialised; pass comm=None and ingot "
                      "initialises it");
        return -1;
    }
    PyObject *f = PyObject_CallMethod(obj, "py2f", NULL);
    if (f == NULL) {
        PyErr_Clear();
        PyObject *type = pyingot_type_name(obj);
        pyingot_raisef(INGOT_ERR_INVALID_PARAM,
                       "ingot.init(comm=...): expected an mpi4py communicator (an object with "
                       "py2f()), got %s",
                       type ? PyUnicode_AsUTF8AndSize(type, NULL) : "?");
        Py_XDECREF(type);
        return -1;
    }
    long handle = PyLong_AsLong(f);
    Py_DECREF(f);
    if (handle == -1 && PyErr_Occurred()) {
        return -1;
    }
    *comm_p = MPI_Comm_f2c((MPI_Fint)handle);
    return 0;
}

/* ingot_finalize() at interpreter exit (before mpi4py's MPI_Finalize, registered earlier). */
static int register_atexit(PyObject *module)
{
    PyObject *atexit = PyImport_ImportModule("atexit");
    PyObject *fn = atexit ? PyObject_GetAttrString(module, "_atexit") : NULL;
    PyObject *r = fn ? PyObject_CallMethod(atexit, "register", "O", fn) : NULL;
    Py_XDECREF(atexit);
    Py_XDECREF(fn);
    Py_XDECREF(r);
    return r ? 0 : -1;
}

static PyObject *py_init(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"comm", NULL};
    PyObject *comm_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|O:init", kwlist, &comm_obj) ||
        pyingot_fork_check() != 0) {
        return NULL;
    }
    if (g_ctx != NULL) {
        return pyingot_raise(INGOT_ERR_EXISTS, "ingot.init() was already called in this process");
    }
    ingot_init_params_t p = {0};
    if (comm_obj != Py_None) {
        if (comm_from_object(comm_obj, &p.comm) != 0) {
            return NULL;
        }
        p.field_mask |= INGOT_INIT_PARAM_FIELD_COMM;
    }
    ingot_ctx_h ctx;
    ingot_status_t st;
    Py_BEGIN_ALLOW_THREADS st = ingot_init(&p, &ctx);
    Py_END_ALLOW_THREADS if (st != INGOT_OK)
    {
        return pyingot_raise(st, NULL);
    }
    g_ctx = ctx;
    g_init_pid = getpid();
    if (register_atexit(module) != 0) {
        return NULL;
    }
    Py_RETURN_NONE;
}

static PyObject *finalize(int force)
{
    if (g_ctx == NULL || g_forked) {
        Py_RETURN_NONE;
    }
    if (pyingot_loaders_close_all(force) != 0) {
        return NULL;
    }
    ingot_ctx_h ctx = g_ctx;
    g_ctx = NULL;
    Py_BEGIN_ALLOW_THREADS ingot_finalize(ctx);
    Py_END_ALLOW_THREADS Py_RETURN_NONE;
}

static PyObject *py_finalize(PyObject *module, PyObject *noargs)
{
    if (pyingot_fork_check() != 0) {
        return NULL;
    }
    return finalize(0);
}

static PyObject *py_atexit(PyObject *module, PyObject *noargs)
{
    return finalize(1);
}

static PyObject *ctx_attr(int field)
{
    if (require_ctx() != 0) {
        return NULL;
    }
    ingot_ctx_attr_t a = {.field_mask = INGOT_CTX_ATTR_FIELD_RANK | INGOT_CTX_ATTR_FIELD_SIZE};
    ingot_status_t st = ingot_ctx_query(g_ctx, &a);
    if (st != INGOT_OK) {
        return pyingot_raise(st, NULL);
    }
    return PyLong_FromLong(field == INGOT_CTX_ATTR_FIELD_RANK ? a.rank : a.size);
}

static PyObject *py_rank(PyObject *module, PyObject *noargs)
{
    return ctx_attr(INGOT_CTX_ATTR_FIELD_RANK);
}

static PyObject *py_world_size(PyObject *module, PyObject *noargs)
{
    return ctx_attr(INGOT_CTX_ATTR_FIELD_SIZE);
}

static PyObject *placement_dict(const ingot_placement_t *p)
{
    char device[32];
    if (p->cuda_device >= 0) {
        snprintf(device, sizeof(device), "cuda:%d", p->cuda_device);
    } else {
        snprintf(device, sizeof(device), "cpu");
    }
    return Py_BuildValue(
        "{s:s,s:i,s:i,s:i,s:i,s:i,s:s,s:i,s:i,s:s,s:i,s:s,s:s,s:s,s:s,s:i,s:s,s:i,s:s,s:s}",
        "device", device, "cuda_device", p->cuda_device, "gpu_index", p->gpu_index, "node_id",
        p->node_id, "local_rank", p->local_rank, "local_size", p->local_size, "hostname",
        p->hostname, "numa_node", p->numa_node, "gpu_ranks", p->gpu_ranks, "cpuset", p->cpuset,
        "nic_port", p->nic_port, "ingest_cpuset", p->ingest_cpuset, "trainer_cpuset",
        p->trainer_cpuset, "nic", p->nic_name, "nic_distance",
        ingot_topology_distance_name(p->nic_distance), "node_count", p->node_count,
        "cuda_visible_devices", p->cuda_visible_devices, "node_leader", p->node_leader,
        "ucx_net_devices", p->ucx_net_devices, "nccl_ib_hca", p->nccl_ib_hca);
}

static PyObject *py_placement(PyObject *module, PyObject *noargs)
{
    if (require_ctx() != 0) {
        return NULL;
    }
    ingot_placement_t p = {.field_mask = INGOT_PLACEMENT_FIELD_NODE | INGOT_PLACEMENT_FIELD_GPU |
                                         INGOT_PLACEMENT_FIELD_NIC | INGOT_PLACEMENT_FIELD_CPUS |
                                         INGOT_PLACEMENT_FIELD_ENV};
    ingot_status_t st = ingot_placement_get(g_ctx, &p);
    if (st != INGOT_OK) {
        return pyingot_raise(st, NULL);
    }
    return placement_dict(&p);
}

static PyMethodDef module_methods[] = {
    {"init", (PyCFunction)(void (*)(void))py_init, METH_VARARGS | METH_KEYWORDS,
     "init(comm=None): create ingot's context (collective). comm: an mpi4py communicator, or "
     "None for the launcher's MPI_COMM_WORLD (MPI is initialised when it is not)."},
    {"finalize", py_finalize, METH_NOARGS,
     "finalize(): close every loader and destroy the context (collective); also run at exit."},
    {"_atexit", py_atexit, METH_NOARGS, "finalize() at interpreter exit (internal)."},
    {"rank", py_rank, METH_NOARGS, "rank(): this rank in ingot's communicator."},
    {"world_size", py_world_size, METH_NOARGS, "world_size(): ranks in ingot's communicator."},
    {"placement", py_placement, METH_NOARGS,
     "placement(): this rank's device, cores and NIC, as planned at init, as a dict."},
    {"simulate", (PyCFunction)(void (*)(void))pyingot_simulate, METH_VARARGS | METH_KEYWORDS,
     "simulate(*, manifest=None, samples=0, sample_size=112640, shard_size=256MiB, nodes=1, "
     "ranks_per_node=1, cores=32, epochs=1, batch=0, compute_ms=0, depth=4, costs=None, "
     "store='files', store_latency_ms=20, store_rate=0, store_prefixes=1, nic_bw=0): ingot-sim "
     "(docs/sim.md): the job simulated on a cluster in this process, no MPI, the tiers and order "
     "from the INGOT_* variables; a dict of its epochs in ingot-bench's JSON names. costs: a "
     "cost file (ingot-sim --calibrate), else measured here briefly."},
    {NULL, NULL, 0, NULL}};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "ingot",
    .m_doc = "ingot: the distributed ingest runtime as a PyTorch data loader (zero-copy "
             "through DLPack).",
    .m_size = -1,
    .m_methods = module_methods,
};

void pyingot_object_free(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    freefunc free_fn = (freefunc)PyType_GetSlot(type, Py_tp_free);
    free_fn(self);
    Py_DECREF(type);
}

/* The module's types, by attribute name: made from their specs at import. */
static const struct {
    const char *name;
    PyType_Spec *spec;
    PyTypeObject **type_p;
} module_types[] = {
    {"Loader", &pyingot_loader_spec, &pyingot_loader_type},
    {"Batch", &pyingot_batch_spec, &pyingot_batch_type},
    {"Array", &pyingot_array_spec, &pyingot_array_type},
    {"ImageTransform", &pyingot_image_transform_spec, &pyingot_image_transform_type},
    {"Transform", &pyingot_py_transform_spec, &pyingot_py_transform_type},
};

static int add_types(PyObject *m)
{
    for (size_t i = 0; i < sizeof(module_types) / sizeof(module_types[0]); i++) {
        PyObject *type = PyType_FromModuleAndSpec(m, module_types[i].spec, NULL);
        if (type == NULL || PyModule_AddObjectRef(m, module_types[i].name, type) != 0) {
            Py_XDECREF(type);
            return -1;
        }
        *module_types[i].type_p = (PyTypeObject *)type; /* kept for the process */
    }
    return 0;
}

PyMODINIT_FUNC PyInit_ingot(void)
{
    PyObject *m = PyModule_Create(&module_def);
    if (m == NULL) {
        return NULL;
    }
    if (pyingot_errors_add(m) != 0 || add_types(m) != 0 ||
        PyModule_AddStringConstant(m, "__version__", ingot_version_string()) != 0 ||
        pthread_atfork(NULL, NULL, on_fork_child) != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

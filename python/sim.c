/*
 * ingot.simulate(): ingot-sim's library (include/ingot/sim.h, docs/sim.md) from Python, with no
 * MPI and no context: a job of a dataset (a manifest, or samples described by their sizes) on a
 * cluster, over a store, with the stage costs of a cost file (or measured here, briefly, by the
 * micro-benchmarks alone). Returns a dict in ingot-bench's JSON names.
 */
#include "pyingot.h"
#include <string.h>

static PyObject *sim_set(PyObject *d, const char *key, PyObject *v)
{
    if (v == NULL || PyDict_SetItemString(d, key, v) != 0) {
        Py_XDECREF(v);
        return NULL;
    }
    Py_DECREF(v);
    return d;
}

static PyObject *sim_epoch(const ingot_sim_epoch_t *x, uint64_t e)
{
    PyObject *d = PyDict_New();
    if (d == NULL || !sim_set(d, "epoch", PyLong_FromUnsignedLongLong(e)) ||
        !sim_set(d, "steps", PyLong_FromUnsignedLongLong(x->steps)) ||
        !sim_set(d, "wall_s", PyFloat_FromDouble(x->wall_s)) ||
        !sim_set(d, "stall_s", PyFloat_FromDouble(x->stall_s)) ||
        !sim_set(d, "au", PyFloat_FromDouble(x->au)) ||
        !sim_set(d, "bytes_storage", PyLong_FromUnsignedLongLong(x->bytes[INGOT_SIM_STORAGE])) ||
        !sim_set(d, "bytes_peer", PyLong_FromUnsignedLongLong(x->bytes[INGOT_SIM_PEER])) ||
        !sim_set(d, "bytes_local", PyLong_FromUnsignedLongLong(x->bytes[INGOT_SIM_LOCAL])) ||
        !sim_set(d, "bytes_disk", PyLong_FromUnsignedLongLong(x->bytes[INGOT_SIM_DISK])) ||
        !sim_set(d, "disk_bytes_below", PyLong_FromUnsignedLongLong(x->disk_below)) ||
        !sim_set(d, "bytes_cross_node", PyLong_FromUnsignedLongLong(x->bytes_cross)) ||
        !sim_set(d, "store_requests", PyLong_FromUnsignedLongLong(x->store_requests)) ||
        !sim_set(d, "store_retries", PyLong_FromUnsignedLongLong(x->store_retries)) ||
        !sim_set(d, "store_bytes", PyLong_FromUnsignedLongLong(x->store_bytes)) ||
        !sim_set(d, "store_node_bytes_max", PyLong_FromUnsignedLongLong(x->node_store_max)) ||
        !sim_set(d, "samples_read", PyLong_FromUnsignedLongLong(x->samples)) ||
        !sim_set(d, "bound", PyUnicode_FromString(x->bound != NULL ? x->bound : ""))) {
        Py_XDECREF(d);
        return NULL;
    }
    return d;
}

static PyObject *sim_result(const ingot_sim_result_t *r)
{
    PyObject *d = PyDict_New(), *epochs = PyList_New(0);
    if (d == NULL || epochs == NULL) {
        Py_XDECREF(d);
        Py_XDECREF(epochs);
        return NULL;
    }
    for (uint64_t e = 0; e < r->nepochs; e++) {
        PyObject *x = sim_epoch(&r->epochs[e], e);
        if (x == NULL || PyList_Append(epochs, x) != 0) {
            Py_XDECREF(x);
            Py_DECREF(epochs);
            Py_DECREF(d);
            return NULL;
        }
        Py_DECREF(x);
    }
    if (!sim_set(d, "epochs", epochs) ||
        !sim_set(d, "ranks", PyLong_FromUnsignedLongLong(r->world)) ||
        !sim_set(d, "dataset_bytes", PyLong_FromUnsignedLongLong(r->dataset_bytes)) ||
        !sim_set(d, "cache_bytes_needed", PyLong_FromUnsignedLongLong(r->cache_needed)) ||
        !sim_set(d, "disk_bytes_needed", PyLong_FromUnsignedLongLong(r->disk_needed)) ||
        !sim_set(d, "sim_s", PyFloat_FromDouble(r->sim_s))) {
        Py_DECREF(d);
        return NULL;
    }
    return d;
}

PyObject *pyingot_simulate(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kw[] = {"manifest", "samples",          "sample_size", "shard_size",
                         "nodes",    "ranks_per_node",   "cores",       "epochs",
                         "batch",    "compute_ms",       "depth",       "costs",
                         "store",    "store_latency_ms", "store_rate",  "store_prefixes",
                         "nic_bw",   "prior_jobs",       "topology",    NULL};
    const char *manifest = NULL, *costs_path = NULL, *store = "files", *topology = NULL;
    unsigned long long samples = 0, sample_size = 110 * 1024, shard_size = 256ull << 20;
    unsigned long long epochs = 1, batch = 0;
    unsigned int nodes = 1, rpn = 1, cores = 32, depth = 4, prefixes = 1, prior = 0;
    double compute_ms = 0, latency_ms = 20, rate = 0, nic = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$zKKKIIIKKdIzsddIdIz", kw, &manifest, &samples,
                                     &sample_size, &shard_size, &nodes, &rpn, &cores, &epochs,
                                     &batch, &compute_ms, &depth, &costs_path, &store, &latency_ms,
                                     &rate, &prefixes, &nic, &prior, &topology)) {
        return NULL;
    }
    if ((manifest == NULL) == (samples == 0)) {
        PyErr_SetString(PyExc_ValueError, "simulate(): give manifest= or samples= (one of them)");
        return NULL;
    }
    if (strcmp(store, "files") != 0 && strcmp(store, "remote") != 0) {
        PyErr_Format(PyExc_ValueError, "simulate(): store='%s' is not 'files' or 'remote'", store);
        return NULL;
    }
    ingot_sim_costs_t costs;
    ingot_status_t st = costs_path != NULL ? ingot_sim_costs_read(costs_path, &costs)
                                           : ingot_sim_calibrate(&costs);
    ingot_manifest_h m = NULL;
    if (st == INGOT_OK) {
        st = manifest != NULL ? ingot_manifest_open(manifest, INGOT_MANIFEST_OPEN_LAZY, &m)
                              : ingot_sim_describe(samples, sample_size, 0, shard_size, &m);
    }
    ingot_sim_job_t job = {.manifest = m,
                           .global_batch = batch,
                           .epochs = epochs,
                           .seed = 1,
                           .compute_s = compute_ms / 1e3,
                           .depth = depth,
                           .verify = 1,
                           .prior_jobs = prior};
    ingot_sim_cluster_t cluster = {
        .nodes = nodes, .ranks_per_node = rpn, .cores = cores, .nic_bps = nic};
    ingot_sim_store_t sst = {.remote = store[0] == 'r',
                             .latency_s = latency_ms / 1e3,
                             .rate = rate,
                             .prefixes = prefixes,
                             .retry_s = 0.1};
    ingot_sim_result_t r = {0};
    if (st == INGOT_OK && topology != NULL) {
        st = ingot_sim_cluster_topology(&cluster, topology);
    }
    if (st == INGOT_OK) {
        Py_BEGIN_ALLOW_THREADS st = ingot_sim_run(&job, &cluster, &sst, &costs, &r);
        Py_END_ALLOW_THREADS
    }
    ingot_manifest_close(m);
    if (st != INGOT_OK) {
        return pyingot_raise(st, NULL);
    }
    PyObject *out = sim_result(&r);
    ingot_sim_result_free(&r);
    return out;
}

/* Kumar's mappers (map_grasp.c, map_mahd.c, map_maxcontention.c,
   map_kumar_hybrid.c) and the Hilbert curve (hilbert.c) for Python. */
#include "glue.h"

PyObject *pytopomap_map_kumar(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"method", "machine", "indptr", "indices", "bytes", "alloc", "capacity", "seed", "progress",
                             "iterations", "alpha", "beta", "rule", "objective", "passes", "part_size", NULL};
    const char *method;
    PyObject *mo, *ip, *ix, *by, *ao, *po = Py_None;
    long capacity, iterations = 32, passes = 100, part_size = 125;
    unsigned long long seed = 0;
    double alpha = 0.25, beta = 0.5;
    int rule = TOPOMAP_MAHD_AVERAGE, objective = TOPOMAP_OBJECTIVE_HOP_BYTES;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "sOOOOOl|KOlddiill", kwlist, &method, &mo, &ip, &ix, &by, &ao, &capacity,
                                     &seed, &po, &iterations, &alpha, &beta, &rule, &objective, &passes, &part_size))
        return NULL;
    int kind = !strcmp(method, "grasp") ? 0 : !strcmp(method, "mahd") ? 1 : !strcmp(method, "emahd") ? 2
             : !strcmp(method, "max-contention") ? 3 : !strcmp(method, "kumar-hybrid") ? 4 : -1;
    if (kind < 0) {
        PyErr_Format(PyExc_ValueError, "unknown Kumar method '%s'", method);
        return NULL;
    }
    if (iterations < 1 || iterations > INT32_MAX || passes < 1 || passes > INT32_MAX || part_size < 1 ||
        part_size > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "iterations, passes and part_size must be positive 32-bit integers");
        return NULL;
    }
    if (pytopomap_progress_check(po)) return NULL;
    pytopomap_map_call c;
    int rc = 0;
    if (!pytopomap_map_call_init(&c, mo, ip, ix, by, ao, capacity)) {
        /* gge is mahd with its own rule: the message names what the user ran */
        pytopomap_progress pc = {po, NULL, kind == 1 && rule == TOPOMAP_MAHD_GGE ? "gge" : method};
        topomap_run_options run = {(uint64_t)seed, pytopomap_progress_cb, &pc};
        topomap_grasp_options go = {(int32_t)iterations, alpha, beta};
        pc.ts = PyEval_SaveThread();
        switch (kind) {
        case 0: rc = topomap_map_grasp(c.m, &c.p, c.alloc, c.nalloc, c.capacity, &go, &run, c.pe_of); break;
        case 1: rc = topomap_map_mahd(c.m, &c.p, c.alloc, c.nalloc, c.capacity, rule, &run, c.pe_of); break;
        case 2: rc = topomap_map_emahd(c.m, &c.p, c.alloc, c.nalloc, c.capacity, rule, objective, &run, c.pe_of); break;
        case 3:
            rc = topomap_map_max_contention(c.m, &c.p, c.alloc, c.nalloc, c.capacity, (int32_t)passes, &run, c.pe_of);
            break;
        default:
            rc = topomap_map_kumar_hybrid(c.m, &c.p, c.alloc, c.nalloc, c.capacity, (int32_t)part_size, &go, &run,
                                          c.pe_of);
        }
        PyEval_RestoreThread(pc.ts);
    }
    return pytopomap_map_call_finish(&c, PyErr_Occurred() ? -1 : rc);
}

PyObject *pytopomap_hilbert_index(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *co;
    int bits;
    if (!PyArg_ParseTuple(args, "Oi", &co, &bits)) return NULL;
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(co, NPY_UINT32, 2, 2, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    if (!a) return NULL;
    npy_intp count = PyArray_DIM(a, 0), nd = PyArray_DIM(a, 1);
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(1, &count, NPY_UINT64);
    int rc = 0;
    if (out) {
        const uint32_t *c = PyArray_DATA(a);
        uint64_t *h = PyArray_DATA(out);
        if (nd < 1 || nd > INT32_MAX) rc = topomap_i_fail(TOPOMAP_EINVAL, "coordinates need 1 or more columns");
        Py_BEGIN_ALLOW_THREADS
        for (npy_intp i = 0; i < count && !rc; i++) rc = topomap_hilbert_index((int32_t)nd, bits, c + i * nd, &h[i]);
        Py_END_ALLOW_THREADS
    }
    Py_DECREF(a);
    if (rc) {
        Py_XDECREF(out);
        return rc ? pytopomap_raise(rc) : NULL;
    }
    return (PyObject *)out;
}

PyObject *pytopomap_hilbert_order(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *dobj, *nobj;
    if (!PyArg_ParseTuple(args, "OO", &dobj, &nobj)) return NULL;
    PyArrayObject *dims = pytopomap_array(dobj, NPY_INT32, -1, "dims"), *nodes = NULL, *out = NULL;
    if (dims) nodes = pytopomap_array(nobj, NPY_INT32, -1, "nodes");
    int rc = 0;
    if (nodes && PyArray_DIM(nodes, 0) > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "more than 2^31 - 1 nodes");
    } else if (nodes) {
        npy_intp count = PyArray_DIM(nodes, 0);
        out = (PyArrayObject *)PyArray_SimpleNew(1, &count, NPY_INT32);
        if (out) {
            int32_t nd = (int32_t)PyArray_DIM(dims, 0);
            const int32_t *d = PyArray_DATA(dims), *nv = PyArray_DATA(nodes);
            int32_t *o = PyArray_DATA(out);
            Py_BEGIN_ALLOW_THREADS
            rc = topomap_hilbert_order(nd, d, (int32_t)count, nv, o);
            Py_END_ALLOW_THREADS
        }
    }
    Py_XDECREF(dims);
    Py_XDECREF(nodes);
    if (rc || PyErr_Occurred()) {
        Py_XDECREF(out);
        return rc ? pytopomap_raise(rc) : NULL;
    }
    return (PyObject *)out;
}

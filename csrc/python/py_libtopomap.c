/* LibTopoMap's heuristics (map_greedy.c, map_recursive.c, map_rcm.c) and
   the reverse Cuthill-McKee order for Python. */
#include "glue.h"

enum { GREEDY, RECURSIVE, RCM };

/* Run one mapper with the GIL released; `opt` is its options struct, whose
   first member is the topomap_run_options filled here; `grid` as
   pytopomap_map_call_grid takes it. */
static PyObject *call(PyObject *mo, PyObject *ip, PyObject *ix, PyObject *by, PyObject *ao, long capacity,
                      unsigned long long seed, PyObject *po, PyObject *grid, int which, void *opt)
{
    if (pytopomap_progress_check(po)) return NULL;
    pytopomap_map_call c;
    if (pytopomap_map_call_init(&c, mo, ip, ix, by, ao, capacity) || pytopomap_map_call_grid(&c, grid))
        return pytopomap_map_call_finish(&c, -1);
    static const char *const names[] = {"greedy", "recursive", "rcm"};
    pytopomap_progress pc = {po, NULL, names[which]};
    *(topomap_run_options *)opt = (topomap_run_options){(uint64_t)seed, pytopomap_progress_cb, &pc};
    int rc = 0;
    pc.ts = PyEval_SaveThread();
    switch (which) {
    case GREEDY: rc = topomap_map_greedy(c.m, &c.p, c.alloc, c.nalloc, c.capacity, opt, c.pe_of); break;
    case RECURSIVE: rc = topomap_map_recursive(c.m, &c.p, c.alloc, c.nalloc, c.capacity, opt, c.pe_of); break;
    default: rc = topomap_map_rcm(c.m, &c.p, c.alloc, c.nalloc, c.capacity, opt, c.pe_of); break;
    }
    PyEval_RestoreThread(pc.ts);
    return pytopomap_map_call_finish(&c, PyErr_Occurred() ? -1 : rc);
}

#define COMMON_KW "machine", "indptr", "indices", "bytes", "alloc", "capacity", "seed", "progress"

PyObject *pytopomap_map_greedy(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {COMMON_KW, "start", "congestion", "tries", "candidates", "grid", NULL};
    PyObject *mo, *ip, *ix, *by, *ao, *po = Py_None, *go = Py_None;
    long capacity;
    unsigned long long seed = 0;
    topomap_greedy_options opt;
    topomap_greedy_options_init(&opt);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOl|KOiiiiO", kwlist, &mo, &ip, &ix, &by, &ao, &capacity, &seed, &po,
                                     &opt.start, &opt.congestion, &opt.tries, &opt.candidates, &go))
        return NULL;
    return call(mo, ip, ix, by, ao, capacity, seed, po, go, GREEDY, &opt);
}

PyObject *pytopomap_map_recursive(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {COMMON_KW, "context", "coords", "ring", "grid", NULL};
    PyObject *mo, *ip, *ix, *by, *ao, *po = Py_None, *co = Py_None, *ro = Py_None, *go = Py_None, *res = NULL;
    PyArrayObject *coords = NULL, *ring = NULL;
    long capacity;
    unsigned long long seed = 0;
    topomap_recursive_options opt;
    topomap_recursive_options_init(&opt);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOl|KOiOOO", kwlist, &mo, &ip, &ix, &by, &ao, &capacity, &seed, &po,
                                     &opt.context, &co, &ro, &go))
        return NULL;
    if ((co == Py_None) != (ro == Py_None)) {
        PyErr_SetString(PyExc_TypeError, "coords and ring go together");
        return NULL;
    }
    if (co != Py_None) {
        if (!PyObject_TypeCheck(mo, &PyTopomapMachine_Type)) {
            PyErr_SetString(PyExc_TypeError, "machine must be a topomap._core.Machine");
            return NULL;
        }
        if (!(ring = pytopomap_array(ro, NPY_INT32, -1, "ring"))) return NULL;
        opt.ndims = (int32_t)PyArray_DIM(ring, 0);
        npy_intp nn = topomap_machine_nnodes(((PyTopomapMachine *)mo)->m);
        if (!(coords = pytopomap_array(co, NPY_INT32, nn * opt.ndims, "coords"))) goto cleanup;
        opt.coords = PyArray_DATA(coords);
        opt.ring = PyArray_DATA(ring);
    }
    res = call(mo, ip, ix, by, ao, capacity, seed, po, go, RECURSIVE, &opt);
cleanup:
    Py_XDECREF(coords);
    Py_XDECREF(ring);
    return res;
}

PyObject *pytopomap_map_rcm(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {COMMON_KW, "start", "grid", NULL};
    PyObject *mo, *ip, *ix, *by, *ao, *po = Py_None, *go = Py_None;
    long capacity;
    unsigned long long seed = 0;
    topomap_rcm_options opt;
    topomap_rcm_options_init(&opt);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOl|KOiO", kwlist, &mo, &ip, &ix, &by, &ao, &capacity, &seed, &po,
                                     &opt.start, &go))
        return NULL;
    return call(mo, ip, ix, by, ao, capacity, seed, po, go, RCM, &opt);
}

PyObject *pytopomap_rcm_order(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *xo, *ao;
    int start;
    if (!PyArg_ParseTuple(args, "OOi", &xo, &ao, &start)) return NULL;
    PyArrayObject *xadj = pytopomap_array(xo, NPY_INT64, -1, "xadj"), *adj = NULL, *out = NULL;
    if (!xadj) return NULL;
    npy_intp n = PyArray_DIM(xadj, 0) - 1;
    const int64_t *x = PyArray_DATA(xadj);
    if (n < 0 || n > INT32_MAX || x[0] != 0 || x[n] < 0) {
        PyErr_SetString(PyExc_ValueError, "xadj must have n + 1 entries, start at 0 and end at the edge count");
        goto cleanup;
    }
    if (!(adj = pytopomap_array(ao, NPY_INT32, (npy_intp)x[n], "adjncy"))) goto cleanup;
    if (!(out = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INT32))) goto cleanup;
    topomap_ugraph g = {(int32_t)n, x, PyArray_DATA(adj), NULL, NULL};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = topomap_rcm_order(&g, start, PyArray_DATA(out));
    Py_END_ALLOW_THREADS
    if (rc) {
        Py_CLEAR(out);
        pytopomap_raise(rc);
    }
cleanup:
    Py_DECREF(xadj);
    Py_XDECREF(adj);
    return (PyObject *)out;
}

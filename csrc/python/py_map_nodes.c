/* The node-level grouping of map_nodes.c for Python (tests, and mappers
   written in Python on top of it). */
#include "glue.h"

PyObject *pytopomap_group_by_node(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"machine", "indptr", "indices", "bytes", "alloc", "capacity", "seed", "progress", "grid", NULL};
    PyObject *mo, *ip, *ix, *by, *ao, *po = Py_None, *go = Py_None, *res = NULL;
    long capacity;
    unsigned long long seed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOl|KOO", kwlist, &mo, &ip, &ix, &by, &ao, &capacity, &seed, &po, &go))
        return NULL;
    if (pytopomap_progress_check(po)) return NULL;
    pytopomap_map_call c;
    topomap_alloc_nodes *an = NULL;
    PyArrayObject *gs = NULL;
    int rc = 0;
    if (pytopomap_map_call_init(&c, mo, ip, ix, by, ao, capacity) || pytopomap_map_call_grid(&c, go)) goto cleanup;
    pytopomap_progress pc = {po, NULL, "group_by_node"};
    topomap_run_options run = {(uint64_t)seed, pytopomap_progress_cb, &pc};
    int32_t k = 0;
    pc.ts = PyEval_SaveThread();
    rc = topomap_alloc_nodes_create(c.m, c.alloc, c.nalloc, c.capacity, &an);
    int64_t *slots = an ? malloc((size_t)an->nnodes * sizeof *slots) : NULL;
    if (!rc && !slots) rc = TOPOMAP_ENOMEM;
    if (!rc) rc = topomap_group_by_node(&c.p, an, &run, c.pe_of, slots, &k);
    PyEval_RestoreThread(pc.ts);
    if (!rc) {
        npy_intp kk = k;
        gs = (PyArrayObject *)PyArray_SimpleNew(1, &kk, NPY_INT64);
        if (gs) memcpy(PyArray_DATA(gs), slots, (size_t)k * sizeof *slots);
    }
    free(slots);
    topomap_alloc_nodes_destroy(an);
    if (!rc && !gs) rc = TOPOMAP_ENOMEM;
cleanup:;
    PyObject *group = pytopomap_map_call_finish(&c, PyErr_Occurred() ? -1 : rc);
    if (group && gs) res = Py_BuildValue("(NN)", group, gs);
    else {
        Py_XDECREF(group);
        Py_XDECREF(gs);
    }
    return res;
}

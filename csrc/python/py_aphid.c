/* APHiD (map_aphid.c) and the allocation tree it follows, for Python. */
#include "glue.h"

PyObject *pytopomap_map_aphid(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"machine", "indptr", "indices", "bytes", "alloc", "capacity", "seed",
                             "recursive", "proportional", "ntries", "progress", NULL};
    PyObject *mo, *ip, *ix, *by, *ao, *po = Py_None;
    long capacity, ntries = 4;
    unsigned long long seed = 0;
    int recursive = 1, proportional = 1;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOl|KpplO", kwlist, &mo, &ip, &ix, &by, &ao, &capacity, &seed,
                                     &recursive, &proportional, &ntries, &po))
        return NULL;
    if (pytopomap_progress_check(po)) return NULL;
    if (ntries < 1 || ntries > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "ntries = %ld must be a positive 32-bit integer", ntries);
        return NULL;
    }
    pytopomap_map_call c;
    int rc = 0;
    if (!pytopomap_map_call_init(&c, mo, ip, ix, by, ao, capacity)) {
        pytopomap_progress pc = {po, NULL, "aphid"};
        topomap_run_options run = {(uint64_t)seed, pytopomap_progress_cb, &pc};
        topomap_aphid_options opt = {recursive, proportional, (int32_t)ntries};
        pc.ts = PyEval_SaveThread();
        rc = topomap_map_aphid(c.m, &c.p, c.alloc, c.nalloc, c.capacity, &opt, &run, c.pe_of);
        PyEval_RestoreThread(pc.ts);
    }
    return pytopomap_map_call_finish(&c, PyErr_Occurred() ? -1 : rc);
}

PyObject *pytopomap_alloc_tree(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *mo, *ao, *res = NULL;
    if (!PyArg_ParseTuple(args, "OO", &mo, &ao)) return NULL;
    const topomap_machine *m;
    PyArrayObject *a = pytopomap_machine_alloc(mo, ao, &m);
    if (!a) return NULL;
    topomap_alloc_tree *t = NULL;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = topomap_alloc_tree_create(m, PyArray_DATA(a), (int32_t)PyArray_DIM(a, 0), &t);
    Py_END_ALLOW_THREADS
    Py_DECREF(a);
    if (rc) return pytopomap_raise(rc);
    npy_intp ng = t->ngroups, np_ = t->npes;
    const int32_t *src[6] = {t->pes, t->start, t->size, t->level, t->first_child, t->nchildren};
    PyObject *arr[6] = {NULL};
    int ok = 1;
    for (int i = 0; i < 6 && ok; i++) {
        arr[i] = PyArray_SimpleNew(1, i == 0 ? &np_ : &ng, NPY_INT32);
        if (arr[i])
            memcpy(PyArray_DATA((PyArrayObject *)arr[i]), src[i], (size_t)(i == 0 ? np_ : ng) * sizeof(int32_t));
        else
            ok = 0;
    }
    topomap_alloc_tree_destroy(t);
    if (ok)
        res = Py_BuildValue("{sNsNsNsNsNsN}", "pes", arr[0], "start", arr[1], "size", arr[2], "level", arr[3],
                            "first_child", arr[4], "nchildren", arr[5]);
    else
        for (int i = 0; i < 6; i++) Py_XDECREF(arr[i]);
    return res;
}

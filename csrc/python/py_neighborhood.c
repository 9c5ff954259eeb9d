/* Phase 1 of message combining (nbr_phase1.c) for Python: the out-lists in, the pattern T of
   every rank and the per-iteration statistics out as NumPy arrays. */
#include "glue.h"
#include "topomap/neighborhood.h"

static PyObject *take(void *data, npy_intp len, int type, size_t item)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(1, &len, type);
    if (a && len) memcpy(PyArray_DATA(a), data, (size_t)len * item);
    return (PyObject *)a;
}

PyObject *pytopomap_nbr_phase1(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"out_ptr",  "out_idx", "theta",      "max_iterations", "node",
                             "progress", "distance", "nnodes", "cumulative",     NULL};
    PyObject *po, *io, *no = Py_None, *cb = Py_None, *dobj = Py_None;
    int theta, max_iterations = 0, nnodes = 0, cumulative = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOi|iOOOip", kwlist, &po, &io, &theta, &max_iterations, &no, &cb,
                                     &dobj, &nnodes, &cumulative))
        return NULL;
    if (pytopomap_progress_check(cb)) return NULL;
    PyArrayObject *ptr = pytopomap_array(po, NPY_INT64, -1, "out_ptr"), *idx = NULL, *node = NULL, *dist = NULL;
    PyObject *res = NULL;
    if (!ptr) return NULL;
    npy_intp n = PyArray_DIM(ptr, 0) - 1;
    if (n < 1 || n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "out_ptr must have n + 1 entries with 1 <= n < 2^31");
        goto cleanup;
    }
    const int64_t *pp = PyArray_DATA(ptr);
    if (pp[0] != 0 || pp[n] < 0) {
        PyErr_SetString(PyExc_ValueError, "out_ptr must start at 0 and end at len(out_idx)");
        goto cleanup;
    }
    if (!(idx = pytopomap_array(io, NPY_INT32, (npy_intp)pp[n], "out_idx"))) goto cleanup;
    if (no != Py_None && !(node = pytopomap_array(no, NPY_INT32, n, "node"))) goto cleanup;
    if (dobj != Py_None) {
        if (nnodes < 1) {
            PyErr_SetString(PyExc_ValueError, "a node distance needs nnodes >= 1");
            goto cleanup;
        }
        if (!(dist = pytopomap_array(dobj, NPY_INT32, (npy_intp)nnodes * nnodes, "distance"))) goto cleanup;
    }
    pytopomap_progress pg = {cb, NULL, "neighbourhood phase 1"};
    topomap_nbr_input in = {(int32_t)n, pp, PyArray_DATA(idx), theta, max_iterations,
                            node ? PyArray_DATA(node) : NULL, pytopomap_progress_cb, &pg,
                            dist ? PyArray_DATA(dist) : NULL, nnodes, cumulative};
    topomap_nbr_result r;
    pg.ts = PyEval_SaveThread();
    int rc = topomap_nbr_phase1(&in, &r);
    PyEval_RestoreThread(pg.ts);
    if (rc) {
        pytopomap_raise(rc);
    } else {
        npy_intp N = n, S = r.nsteps, it = r.iterations;
        res = Py_BuildValue(
            "{s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:d}", "step_ptr",
            take(r.step_ptr, N + 1, NPY_INT64, 8), "step_iter", take(r.step_iter, S, NPY_INT32, 4), "step_friend",
            take(r.step_friend, S, NPY_INT32, 4), "on_ptr", take(r.on_ptr, S + 1, NPY_INT64, 8), "on_idx",
            take(r.on_idx, (npy_intp)r.on_ptr[S], NPY_INT32, 4), "final_ptr", take(r.final_ptr, N + 1, NPY_INT64, 8),
            "final_idx", take(r.final_idx, (npy_intp)r.final_ptr[N], NPY_INT32, 4), "done_iter",
            take(r.done_iter, N, NPY_INT32, 4), "friends0", take(r.friends0, N, NPY_INT32, 4), "alg2_rounds",
            take(r.alg2_rounds, N, NPY_INT32, 4), "it_active", take(r.it_active, it, NPY_INT32, 4), "it_pairs",
            take(r.it_pairs, it, NPY_INT32, 4), "it_rounds", take(r.it_rounds, it, NPY_INT32, 4), "it_recomputed",
            take(r.it_recomputed, it, NPY_INT32, 4), "it_messages", take(r.it_messages, it, NPY_INT64, 8), "seconds",
            r.seconds);
    }
    topomap_nbr_free(&r);
cleanup:
    Py_XDECREF(ptr);
    Py_XDECREF(idx);
    Py_XDECREF(node);
    Py_XDECREF(dist);
    return res;
}

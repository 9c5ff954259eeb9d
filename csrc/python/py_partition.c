/* Graph partitioning for Python: argument conversion, GIL release and
   progress (progress.c). */
#include "glue.h"

/* The graph arrays (new references in arrs[4]); adjwgt and vwgt may be None. */
static int graph_args(PyObject *xo, PyObject *ao, PyObject *wo, PyObject *vo, topomap_ugraph *g,
                      PyArrayObject *arrs[4])
{
    arrs[0] = arrs[1] = arrs[2] = arrs[3] = NULL;
    arrs[0] = pytopomap_array(xo, NPY_INT64, -1, "xadj");
    if (!arrs[0]) return -1;
    npy_intp n = PyArray_DIM(arrs[0], 0) - 1;
    if (n < 1 || n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "xadj must have n+1 entries with 1 <= n < 2^31");
        return -1;
    }
    const int64_t *x = PyArray_DATA(arrs[0]);
    if (x[n] < 0) {
        PyErr_Format(PyExc_ValueError, "xadj[n] = %lld is negative", (long long)x[n]);
        return -1;
    }
    arrs[1] = pytopomap_array(ao, NPY_INT32, (npy_intp)x[n], "adjncy");
    if (!arrs[1]) return -1;
    if (wo != Py_None && !(arrs[2] = pytopomap_array(wo, NPY_FLOAT64, (npy_intp)x[n], "adjwgt"))) return -1;
    if (vo != Py_None && !(arrs[3] = pytopomap_array(vo, NPY_FLOAT64, n, "vertex weights"))) return -1;
    g->n = (int32_t)n;
    g->xadj = x;
    g->adjncy = PyArray_DATA(arrs[1]);
    g->adjwgt = arrs[2] ? PyArray_DATA(arrs[2]) : NULL;
    g->vwgt = arrs[3] ? PyArray_DATA(arrs[3]) : NULL;
    return 0;
}

static void release(PyArrayObject **arrs, int count)
{
    for (int i = 0; i < count; i++) Py_XDECREF(arrs[i]);
}

PyObject *pytopomap_ugraph_from_pattern(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *io, *jo, *bo, *res = NULL;
    PyArrayObject *arrs[3], *out[3] = {NULL, NULL, NULL};
    topomap_pattern p;
    if (!PyArg_ParseTuple(args, "OOO", &io, &jo, &bo)) return NULL;
    if (pytopomap_pattern(io, jo, bo, &p, arrs) < 0) goto cleanup;
    npy_intp n1 = (npy_intp)p.n + 1, cap = 2 * (npy_intp)p.indptr[p.n];
    out[0] = (PyArrayObject *)PyArray_SimpleNew(1, &n1, NPY_INT64);
    out[1] = (PyArrayObject *)PyArray_SimpleNew(1, &cap, NPY_INT32);
    out[2] = (PyArrayObject *)PyArray_SimpleNew(1, &cap, NPY_FLOAT64);
    if (!out[0] || !out[1] || !out[2]) goto cleanup;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = topomap_ugraph_from_pattern(&p, PyArray_DATA(out[0]), PyArray_DATA(out[1]), PyArray_DATA(out[2]));
    Py_END_ALLOW_THREADS
    if (rc) {
        pytopomap_raise(rc);
        goto cleanup;
    }
    PyArray_Dims len = {&cap, 1};
    cap = (npy_intp)((const int64_t *)PyArray_DATA(out[0]))[p.n];
    for (int i = 1; i < 3; i++) {
        PyObject *r = PyArray_Resize(out[i], &len, 0, NPY_CORDER);
        if (!r) goto cleanup;
        Py_DECREF(r);
    }
    res = Py_BuildValue("OOO", out[0], out[1], out[2]);
cleanup:
    release(arrs, 3);
    release(out, 3);
    return res;
}

PyObject *pytopomap_partition(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"xadj", "adjncy", "adjwgt", "vwgt", "k", "targets", "hard", "imbalance", "seed",
                             "recursive", "ntries", "flows", "progress", "part", NULL};
    PyObject *xo, *ao, *wo = Py_None, *vo = Py_None, *to = Py_None, *po = Py_None, *init = Py_None, *res = NULL;
    long k;
    int hard = 0, recursive = 0, ntries = 4, flows = 0;
    double imbalance = 0.03;
    unsigned long long seed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOl|OpdKpipOO", kwlist, &xo, &ao, &wo, &vo, &k, &to, &hard,
                                     &imbalance, &seed, &recursive, &ntries, &flows, &po, &init))
        return NULL;
    if (k < 1 || k > INT32_MAX) return PyErr_Format(PyExc_ValueError, "k = %ld must be in [1, 2^31)", k);
    if (pytopomap_progress_check(po)) return NULL;
    PyArrayObject *arrs[6] = {NULL, NULL, NULL, NULL, NULL, NULL}, *part = NULL, *pw = NULL;
    topomap_ugraph g;
    if (graph_args(xo, ao, wo, vo, &g, arrs) < 0) goto cleanup;
    if (to != Py_None && !(arrs[4] = pytopomap_array(to, NPY_FLOAT64, k, "targets"))) goto cleanup;
    npy_intp kk = k, n = g.n;
    if (init != Py_None) {
        /* a fresh copy: the refinement writes into it */
        if (!(arrs[5] = pytopomap_array(init, NPY_INT32, n, "part"))) goto cleanup;
        part = (PyArrayObject *)PyArray_NewCopy(arrs[5], NPY_CORDER);
    } else {
        part = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INT32);
    }
    pw = (PyArrayObject *)PyArray_SimpleNew(1, &kk, NPY_FLOAT64);
    if (!part || !pw) goto cleanup;
    topomap_partition_options opt;
    topomap_partition_options_init(&opt);
    opt.imbalance = imbalance;
    opt.seed = (uint64_t)seed;
    opt.hard = hard;
    opt.recursive = recursive;
    opt.ntries = ntries;
    opt.flows = flows;
    pytopomap_progress pc = {po, NULL, "partition"};
    opt.progress = pytopomap_progress_cb;
    opt.progress_ctx = &pc;
    const double *targets = arrs[4] ? PyArray_DATA(arrs[4]) : NULL;
    double cut = 0;
    int rc;
    pc.ts = PyEval_SaveThread();
    rc = init != Py_None ? topomap_partition_refine(&g, (int32_t)k, targets, &opt, PyArray_DATA(part),
                                                    PyArray_DATA(pw), &cut)
                         : topomap_partition(&g, (int32_t)k, targets, &opt, PyArray_DATA(part), PyArray_DATA(pw), &cut);
    PyEval_RestoreThread(pc.ts);
    if (rc) {
        pytopomap_raise(rc);
        goto cleanup;
    }
    res = Py_BuildValue("OOd", part, pw, cut);
cleanup:
    release(arrs, 6);
    Py_XDECREF(part);
    Py_XDECREF(pw);
    return res;
}

PyObject *pytopomap_partition_stats(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *xo, *ao, *wo, *vo, *po, *res = NULL;
    long k;
    if (!PyArg_ParseTuple(args, "OOOOlO", &xo, &ao, &wo, &vo, &k, &po)) return NULL;
    if (k < 1 || k > INT32_MAX) return PyErr_Format(PyExc_ValueError, "k = %ld must be in [1, 2^31)", k);
    PyArrayObject *arrs[5] = {NULL, NULL, NULL, NULL, NULL}, *pw = NULL;
    topomap_ugraph g;
    if (graph_args(xo, ao, wo, vo, &g, arrs) < 0) goto cleanup;
    if (!(arrs[4] = pytopomap_array(po, NPY_INT32, g.n, "part"))) goto cleanup;
    npy_intp kk = k;
    if (!(pw = (PyArrayObject *)PyArray_SimpleNew(1, &kk, NPY_FLOAT64))) goto cleanup;
    double cut = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = topomap_partition_stats(&g, (int32_t)k, PyArray_DATA(arrs[4]), PyArray_DATA(pw), &cut);
    Py_END_ALLOW_THREADS
    if (rc) {
        pytopomap_raise(rc);
        goto cleanup;
    }
    res = Py_BuildValue("Od", pw, cut);
cleanup:
    release(arrs, 5);
    Py_XDECREF(pw);
    return res;
}

PyObject *pytopomap_ugraph_validate(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *xo, *ao, *wo, *vo;
    if (!PyArg_ParseTuple(args, "OOOO", &xo, &ao, &wo, &vo)) return NULL;
    PyArrayObject *arrs[4];
    topomap_ugraph g;
    if (graph_args(xo, ao, wo, vo, &g, arrs) < 0) {
        release(arrs, 4);
        return NULL;
    }
    int rc = topomap_ugraph_validate(&g);
    release(arrs, 4);
    if (rc) return pytopomap_raise(rc);
    Py_RETURN_NONE;
}

PyObject *pytopomap_ugraph_bfs(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *xo, *ao, *so;
    if (!PyArg_ParseTuple(args, "OOO", &xo, &ao, &so)) return NULL;
    PyArrayObject *arrs[4], *src = NULL, *out = NULL;
    topomap_ugraph g;
    if (graph_args(xo, ao, Py_None, Py_None, &g, arrs) < 0) goto cleanup;
    if (!(src = pytopomap_array(so, NPY_INT32, -1, "sources"))) goto cleanup;
    npy_intp n = g.n, ns = PyArray_DIM(src, 0);
    if (ns > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "more than 2^31 - 1 sources");
        goto cleanup;
    }
    if (!(out = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INT32))) goto cleanup;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = topomap_ugraph_bfs(&g, PyArray_DATA(src), (int32_t)ns, PyArray_DATA(out));
    Py_END_ALLOW_THREADS
    if (rc) {
        Py_CLEAR(out);
        pytopomap_raise(rc);
    }
cleanup:
    release(arrs, 4);
    Py_XDECREF(src);
    return (PyObject *)out;
}

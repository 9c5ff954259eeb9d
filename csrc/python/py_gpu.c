/* GPU node channel loads and MAGC's Alg. 5.1 (gpu_loads.c, magc_greedy.c)
   for Python; topomap/node/gpu.py builds the route table. */
#include "glue.h"
#include "topomap/gpu.h"

/* The node description from (bandwidth, route_ptr, route_chan); new references in arrs[3]. */
static int read_node(PyObject *bw, PyObject *rp, PyObject *rc, topomap_gpu_node *g, PyArrayObject *arrs[3])
{
    arrs[0] = arrs[1] = arrs[2] = NULL;
    if (!(arrs[0] = pytopomap_array(bw, NPY_FLOAT64, -1, "bandwidth"))) return -1;
    if (!(arrs[1] = pytopomap_array(rp, NPY_INT64, -1, "route_ptr"))) return -1;
    if (!(arrs[2] = pytopomap_array(rc, NPY_INT32, -1, "route_chan"))) return -1;
    npy_intp pairs = PyArray_DIM(arrs[1], 0) - 1;
    npy_intp nend = 1;
    while (nend * nend < pairs) nend++;
    if (pairs < 1 || nend * nend != pairs || nend > INT32_MAX || PyArray_DIM(arrs[0], 0) > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "route_ptr must have nend * nend + 1 entries");
        return -1;
    }
    const int64_t *ptr = PyArray_DATA(arrs[1]);
    if (ptr[pairs] != PyArray_DIM(arrs[2], 0)) {
        PyErr_SetString(PyExc_ValueError, "route_ptr[-1] must equal len(route_chan)");
        return -1;
    }
    g->nend = (int32_t)nend;
    g->nchan = (int32_t)PyArray_DIM(arrs[0], 0);
    g->bandwidth = PyArray_DATA(arrs[0]);
    g->route_ptr = ptr;
    g->route_chan = PyArray_DATA(arrs[2]);
    return 0;
}

static void release(PyArrayObject **arrs, int count)
{
    for (int i = 0; i < count; i++) Py_XDECREF(arrs[i]);
}

PyObject *pytopomap_gpu_loads(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *bw, *rp, *rc, *ip, *ix, *by, *no, *eo;
    int nic, nnodes;
    if (!PyArg_ParseTuple(args, "OOOiOOOOOi", &bw, &rp, &rc, &nic, &ip, &ix, &by, &no, &eo, &nnodes)) return NULL;
    PyArrayObject *arrs[9] = {NULL};
    PyObject *res = NULL;
    topomap_gpu_node g;
    topomap_pattern p;
    if (read_node(bw, rp, rc, &g, arrs) || pytopomap_pattern(ip, ix, by, &p, arrs + 3)) goto out;
    if (!(arrs[6] = pytopomap_array(no, NPY_INT32, p.n, "node_of"))) goto out;
    if (!(arrs[7] = pytopomap_array(eo, NPY_INT32, p.n, "ep_of"))) goto out;
    if (nnodes < 1) {
        PyErr_SetString(PyExc_ValueError, "nnodes must be >= 1");
        goto out;
    }
    npy_intp dims[2] = {nnodes, g.nchan};
    if (!(arrs[8] = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_FLOAT64))) goto out;
    int err;
    Py_BEGIN_ALLOW_THREADS
    err = topomap_gpu_loads(&g, nic, &p, PyArray_DATA(arrs[6]), PyArray_DATA(arrs[7]), nnodes, PyArray_DATA(arrs[8]));
    Py_END_ALLOW_THREADS
    if (err) {
        pytopomap_raise(err);
        goto out;
    }
    res = (PyObject *)arrs[8];
    arrs[8] = NULL;
out:
    release(arrs, 9);
    return res;
}

PyObject *pytopomap_magc_greedy(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *bw, *rp, *rc, *co, *ko, *lo = Py_None;
    if (!PyArg_ParseTuple(args, "OOOOO|O", &bw, &rp, &rc, &co, &ko, &lo)) return NULL;
    PyArrayObject *arrs[8] = {NULL};
    PyObject *res = NULL;
    topomap_gpu_node g;
    if (read_node(bw, rp, rc, &g, arrs)) goto out;
    arrs[3] = (PyArrayObject *)PyArray_FROMANY(co, NPY_FLOAT64, 2, 2, NPY_ARRAY_CARRAY_RO);
    if (!arrs[3]) goto out;
    npy_intp n = PyArray_DIM(arrs[3], 0);
    if (PyArray_DIM(arrs[3], 1) != n || n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "the traffic matrix must be square");
        goto out;
    }
    if (!(arrs[4] = pytopomap_array(ko, NPY_INT32, -1, "candidates"))) goto out;
    if (lo != Py_None && !(arrs[5] = pytopomap_array(lo, NPY_FLOAT64, g.nchan, "load"))) goto out;
    if (!(arrs[6] = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INT32))) goto out;
    if (!(arrs[7] = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INT32))) goto out;
    int err;
    Py_BEGIN_ALLOW_THREADS
    err = topomap_magc_greedy(&g, (int32_t)n, PyArray_DATA(arrs[3]), PyArray_DATA(arrs[4]),
                              (int32_t)PyArray_DIM(arrs[4], 0), arrs[5] ? PyArray_DATA(arrs[5]) : NULL,
                              PyArray_DATA(arrs[6]), PyArray_DATA(arrs[7]));
    Py_END_ALLOW_THREADS
    if (err) {
        pytopomap_raise(err);
        goto out;
    }
    res = Py_BuildValue("(OO)", arrs[6], arrs[7]);
out:
    release(arrs, 8);
    return res;
}

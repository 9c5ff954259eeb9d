/* The load balancers (lb_alias.c, lb_unit.c) for Python: topomap.loadbalance. */
#include "glue.h"
#include "topomap/loadbalance.h"

/* counts (int64) and order (None or int32 of the same length), new references */
static int lb_inputs(PyObject *co, PyObject *oo, PyArrayObject **counts, PyArrayObject **order)
{
    *order = NULL;
    *counts = pytopomap_array(co, NPY_INT64, -1, "counts");
    if (!*counts) return -1;
    npy_intp n = PyArray_DIM(*counts, 0);
    if (n < 1 || n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "counts needs 1 to 2^31 - 1 processes");
        return -1;
    }
    if (oo != Py_None && !(*order = pytopomap_array(oo, NPY_INT32, n, "order"))) return -1;
    return 0;
}

PyObject *pytopomap_lb_alias(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *co, *oo = Py_None, *result = NULL;
    int refill_next = 0;
    if (!PyArg_ParseTuple(args, "O|Op", &co, &oo, &refill_next)) return NULL;
    PyArrayObject *counts, *order, *src = NULL, *tasks = NULL;
    if (!lb_inputs(co, oo, &counts, &order)) {
        npy_intp n = PyArray_DIM(counts, 0);
        src = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INT32);
        tasks = src ? (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INT64) : NULL;
        if (tasks) {
            int rc;
            const int32_t *ord = order ? PyArray_DATA(order) : NULL;
            Py_BEGIN_ALLOW_THREADS
            rc = topomap_lb_alias((int32_t)n, PyArray_DATA(counts), ord, refill_next, PyArray_DATA(src),
                                  PyArray_DATA(tasks));
            Py_END_ALLOW_THREADS
            result = rc ? pytopomap_raise(rc) : Py_BuildValue("OO", src, tasks);
        }
    }
    Py_XDECREF(counts);
    Py_XDECREF(order);
    Py_XDECREF(src);
    Py_XDECREF(tasks);
    return result;
}

PyObject *pytopomap_lb_unit(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *co, *oo = Py_None, *result = NULL;
    if (!PyArg_ParseTuple(args, "O|O", &co, &oo)) return NULL;
    PyArrayObject *counts, *order, *out[3] = {NULL, NULL, NULL};
    if (!lb_inputs(co, oo, &counts, &order)) {
        npy_intp n = PyArray_DIM(counts, 0), room = n > 1 ? n - 1 : 1;
        out[0] = (PyArrayObject *)PyArray_SimpleNew(1, &room, NPY_INT32);
        out[1] = out[0] ? (PyArrayObject *)PyArray_SimpleNew(1, &room, NPY_INT32) : NULL;
        out[2] = out[1] ? (PyArrayObject *)PyArray_SimpleNew(1, &room, NPY_INT64) : NULL;
        if (out[2]) {
            int rc;
            int32_t nmsg = 0;
            const int32_t *ord = order ? PyArray_DATA(order) : NULL;
            Py_BEGIN_ALLOW_THREADS
            rc = topomap_lb_unit((int32_t)n, PyArray_DATA(counts), ord, PyArray_DATA(out[0]), PyArray_DATA(out[1]),
                                 PyArray_DATA(out[2]), &nmsg);
            Py_END_ALLOW_THREADS
            if (rc) pytopomap_raise(rc);
            else if (!pytopomap_shrink(out, 3, nmsg)) result = Py_BuildValue("OOO", out[0], out[1], out[2]);
        }
    }
    Py_XDECREF(counts);
    Py_XDECREF(order);
    for (int i = 0; i < 3; i++) Py_XDECREF(out[i]);
    return result;
}

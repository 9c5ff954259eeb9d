/* topomap._core.coll_build: collective schedules (coll_build.c, coll_algorithms.c) for Python. */
#include "glue.h"
#include "topomap/collectives.h"

static PyObject *take(const void *src, npy_intp len, int type)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(1, &len, type);
    if (a && len) memcpy(PyArray_DATA(a), src, (size_t)len * PyArray_ITEMSIZE(a));
    return (PyObject *)a;
}

PyObject *pytopomap_coll_build(PyObject *self, PyObject *args)
{
    (void)self;
    topomap_coll_spec sp;
    if (!PyArg_ParseTuple(args, "iiiiiiii", &sp.op, &sp.algorithm, &sp.n, &sp.root, &sp.ppn, &sp.intra_binomial,
                          &sp.leaders_ring, &sp.want_items))
        return NULL;
    topomap_coll_schedule s;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = topomap_coll_build(&sp, &s);
    Py_END_ALLOW_THREADS
    if (rc) return pytopomap_raise(rc);
    PyObject *items = Py_None, *item_ptr = Py_None;
    Py_INCREF(Py_None);
    Py_INCREF(Py_None);
    if (sp.want_items) {
        Py_DECREF(items);
        Py_DECREF(item_ptr);
        items = take(s.items, s.nitems, NPY_INT64);
        item_ptr = take(s.item_ptr, s.nmsgs + 1, NPY_INT64);
    }
    PyObject *res = NULL;
    if (items && item_ptr)
        res = Py_BuildValue("{s:N,s:N,s:N,s:N,s:O,s:O,s:d}", "stage_ptr", take(s.stage_ptr, s.nstages + 1, NPY_INT64),
                            "src", take(s.src, s.nmsgs, NPY_INT32), "dst", take(s.dst, s.nmsgs, NPY_INT32), "count",
                            take(s.count, s.nmsgs, NPY_INT64), "item_ptr", item_ptr, "items", items, "item_unit",
                            s.item_unit);
    Py_XDECREF(items);
    Py_XDECREF(item_ptr);
    topomap_coll_free(&s);
    return res;
}

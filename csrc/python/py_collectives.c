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

static int heuristic_of(const char *name)
{
    static const char *const names[] = {"rdmh", "rmh", "bbmh", "bgmh", "bkmh", "armh", "pwmh"};
    for (int i = 0; i < 7; i++)
        if (!strcmp(name, names[i])) return i;
    PyErr_Format(PyExc_ValueError, "unknown reordering heuristic '%s' (rdmh, rmh, bbmh, bgmh, bkmh, armh or pwmh)",
                 name);
    return -1;
}

PyObject *pytopomap_coll_order(PyObject *self, PyObject *args)
{
    (void)self;
    const char *name;
    int p;
    if (!PyArg_ParseTuple(args, "si", &name, &p)) return NULL;
    int h = heuristic_of(name);
    if (h < 0) return NULL;
    npy_intp len = p > 0 ? p : 0;
    PyArrayObject *order = (PyArrayObject *)PyArray_SimpleNew(1, &len, NPY_INT32);
    PyArrayObject *ref = (PyArrayObject *)PyArray_SimpleNew(1, &len, NPY_INT32);
    int rc = order && ref ? topomap_coll_order(h, p, PyArray_DATA(order), PyArray_DATA(ref)) : 0;
    if (!order || !ref || rc) {
        Py_XDECREF(order);
        Py_XDECREF(ref);
        return rc ? pytopomap_raise(rc) : NULL;
    }
    return Py_BuildValue("(NN)", order, ref);
}

PyObject *pytopomap_coll_reorder(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *mo, *po;
    const char *name;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "O!OsK", &PyTopomapMachine_Type, &mo, &po, &name, &seed)) return NULL;
    int h = heuristic_of(name);
    if (h < 0) return NULL;
    PyArrayObject *pes = pytopomap_array(po, NPY_INT32, -1, "pes");
    if (!pes) return NULL;
    npy_intp p = PyArray_SIZE(pes);
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(1, &p, NPY_INT32);
    if (!out) {
        Py_DECREF(pes);
        return NULL;
    }
    int rc;
    const topomap_machine *m = ((PyTopomapMachine *)mo)->m;
    Py_BEGIN_ALLOW_THREADS
    rc = p > INT32_MAX ? topomap_i_fail(TOPOMAP_EINVAL, "too many ranks")
                       : topomap_coll_reorder(m, PyArray_DATA(pes), (int32_t)p, h, seed, PyArray_DATA(out));
    Py_END_ALLOW_THREADS
    Py_DECREF(pes);
    if (rc) {
        Py_DECREF(out);
        return pytopomap_raise(rc);
    }
    return (PyObject *)out;
}

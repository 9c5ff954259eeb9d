/* The top-down mapper (map_dualrb.c) for Python. */
#include "glue.h"
#include "topomap/map_dualrb.h"

PyObject *pytopomap_map_topdown(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"machine", "indptr", "indices", "bytes", "alloc", "capacity", "seed", "progress", "order",
                             "gap", "context", "sweeps", "depth", "max_partners", "coords", "ring", "ntries", "tries",
                             "congestion_sweeps", "pcoords", "pdims", "flow_min", NULL};
    PyObject *mo, *ip, *ix, *by, *ao, *oo = Py_None, *go = Py_None, *po = Py_None, *co = Py_None, *ro = Py_None, *pco = Py_None;
    long capacity;
    unsigned long long seed = 0;
    topomap_topdown_options opt;
    topomap_topdown_options_init(&opt);
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOl|KOOOiiiiOOiiiOii", kwlist, &mo, &ip, &ix, &by, &ao, &capacity, &seed,
                                     &po, &oo, &go, &opt.context, &opt.sweeps, &opt.depth, &opt.max_partners, &co,
                                     &ro, &opt.ntries, &opt.tries, &opt.congestion_sweeps, &pco,
                                     &opt.pdims, &opt.flow_min))
        return NULL;
    if ((co == Py_None) != (ro == Py_None) || !PyObject_TypeCheck(mo, &PyTopomapMachine_Type)) {
        PyErr_SetString(PyExc_TypeError, "coords and ring go together, with a topomap._core.Machine");
        return NULL;
    }
    if (pytopomap_progress_check(po)) return NULL;
    PyArrayObject *order = pytopomap_array(oo, NPY_INT32, -1, "order"), *gap = NULL, *coords = NULL, *ring = NULL,
                  *pcoords = NULL;
    PyObject *res = NULL;
    if (!order) return NULL;
    npy_intp count = PyArray_DIM(order, 0);
    if (!(gap = pytopomap_array(go, NPY_INT32, count > 0 ? count - 1 : 0, "gap"))) goto cleanup;
    if (co != Py_None) {
        if (!(ring = pytopomap_array(ro, NPY_INT32, -1, "ring"))) goto cleanup;
        opt.ndims = (int32_t)PyArray_DIM(ring, 0);
        npy_intp nn = topomap_machine_nnodes(((PyTopomapMachine *)mo)->m);
        if (!(coords = pytopomap_array(co, NPY_INT32, nn * opt.ndims, "coords"))) goto cleanup;
        opt.coords = PyArray_DATA(coords);
        opt.ring = PyArray_DATA(ring);
    }
    if (pco != Py_None) {
        /* flattened n x pdims; the core checks the values, the length is checked here */
        npy_intp want = (npy_intp)(PyArray_Check(ip) ? PyArray_SIZE((PyArrayObject *)ip) - 1 : 0) * opt.pdims;
        if (!(pcoords = pytopomap_array(pco, NPY_INT32, want, "pcoords"))) goto cleanup;
        opt.pcoords = PyArray_DATA(pcoords);
    }
    opt.order = PyArray_DATA(order);
    opt.gap = PyArray_DATA(gap);
    opt.count = (int32_t)count;
    pytopomap_map_call c;
    if (pytopomap_map_call_init(&c, mo, ip, ix, by, ao, capacity)) {
        res = pytopomap_map_call_finish(&c, -1);
    } else {
        pytopomap_progress pc = {po, NULL, "topdown"};
        opt.run = (topomap_run_options){(uint64_t)seed, pytopomap_progress_cb, &pc};
        pc.ts = PyEval_SaveThread();
        int rc = topomap_map_topdown(c.m, &c.p, c.alloc, c.nalloc, c.capacity, &opt, c.pe_of);
        PyEval_RestoreThread(pc.ts);
        res = pytopomap_map_call_finish(&c, PyErr_Occurred() ? -1 : rc);
    }
cleanup:
    Py_DECREF(order);
    Py_XDECREF(gap);
    Py_XDECREF(coords);
    Py_XDECREF(ring);
    Py_XDECREF(pcoords);
    return res;
}

/* Baseline mappers, allocations and hwloc discovery for Python. */
#include "glue.h"
#include "topomap_config.h"
#if TOPOMAP_HAVE_HWLOC
#include <hwloc.h>
#endif

static PyObject *new_i32(npy_intp n) { return PyArray_SimpleNew(1, &n, NPY_INT32); }

/* kind: 0 block, 1 cyclic, 2 random */
static PyObject *run_baseline(PyObject *args, int kind)
{
    PyObject *mo = NULL, *ao;
    long n, capacity;
    unsigned long long seed = 0;
    int ok = kind == 1 ? PyArg_ParseTuple(args, "O!lOl", &PyTopomapMachine_Type, &mo, &n, &ao, &capacity)
           : kind == 2 ? PyArg_ParseTuple(args, "lOlK", &n, &ao, &capacity, &seed)
                       : PyArg_ParseTuple(args, "lOl", &n, &ao, &capacity);
    if (!ok) return NULL;
    if (n < 1 || n > INT32_MAX || capacity < 1 || capacity > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "n and capacity must be positive 32-bit integers");
        return NULL;
    }
    PyArrayObject *alloc = pytopomap_array(ao, NPY_INT32, -1, "allocation");
    if (!alloc) return NULL;
    PyArrayObject *out = (PyArrayObject *)new_i32(n);
    if (!out) {
        Py_DECREF(alloc);
        return NULL;
    }
    int32_t na = (int32_t)PyArray_DIM(alloc, 0);
    const int32_t *a = PyArray_DATA(alloc);
    int32_t *pe = PyArray_DATA(out);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = kind == 0 ? topomap_map_block((int32_t)n, a, na, (int32_t)capacity, pe)
       : kind == 1 ? topomap_map_cyclic(((PyTopomapMachine *)mo)->m, (int32_t)n, a, na, (int32_t)capacity, pe)
                   : topomap_map_random((int32_t)n, a, na, (int32_t)capacity, (uint64_t)seed, pe);
    Py_END_ALLOW_THREADS
    Py_DECREF(alloc);
    if (rc) {
        Py_DECREF(out);
        return pytopomap_raise(rc);
    }
    return (PyObject *)out;
}

PyObject *pytopomap_map_block(PyObject *self, PyObject *args) { (void)self; return run_baseline(args, 0); }
PyObject *pytopomap_map_cyclic(PyObject *self, PyObject *args) { (void)self; return run_baseline(args, 1); }
PyObject *pytopomap_map_random(PyObject *self, PyObject *args) { (void)self; return run_baseline(args, 2); }

PyObject *pytopomap_allocate_nodes(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *mo;
    long k, runs;
    int policy;
    unsigned long long seed;
    if (!PyArg_ParseTuple(args, "O!lilK", &PyTopomapMachine_Type, &mo, &k, &policy, &runs, &seed)) return NULL;
    const topomap_machine *m = ((PyTopomapMachine *)mo)->m;
    if (k < 1 || k > topomap_machine_nnodes(m)) {
        PyErr_Format(PyExc_ValueError, "cannot allocate %ld nodes of a machine with %d", k, (int)topomap_machine_nnodes(m));
        return NULL;
    }
    PyArrayObject *out = (PyArrayObject *)new_i32(k);
    if (!out) return NULL;
    int rc = topomap_allocate_nodes(m, (int32_t)k, policy, (int32_t)(runs > INT32_MAX ? INT32_MAX : runs), (uint64_t)seed,
                                    PyArray_DATA(out));
    if (rc) {
        Py_DECREF(out);
        return pytopomap_raise(rc);
    }
    return (PyObject *)out;
}

#if TOPOMAP_HAVE_HWLOC
PyObject *pytopomap_hwloc_topology_xml(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    hwloc_topology_t topo;
    char *buf = NULL;
    int len = 0;
    PyObject *res = NULL;
    if (hwloc_topology_init(&topo) < 0) return PyErr_Format(PyExc_OSError, "hwloc_topology_init failed");
    if (hwloc_topology_load(topo) < 0) {
        PyErr_Format(PyExc_OSError, "hwloc_topology_load failed");
    } else if (hwloc_topology_export_xmlbuffer(topo, &buf, &len, 0) < 0) {
        PyErr_Format(PyExc_OSError, "hwloc could not export the topology as XML");
    } else {
        res = PyUnicode_DecodeUTF8(buf, len > 0 ? len - 1 : 0, "replace");
        hwloc_free_xmlbuffer(topo, buf);
    }
    hwloc_topology_destroy(topo);
    return res;
}
#endif

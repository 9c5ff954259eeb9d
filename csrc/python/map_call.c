/* Argument conversion shared by the glue of every mapper: machine, pattern
   CSR, allocation, capacity and the int32 output array. */
#include "glue.h"

PyArrayObject *pytopomap_machine_alloc(PyObject *machine, PyObject *alloc, const topomap_machine **m)
{
    if (!PyObject_TypeCheck(machine, &PyTopomapMachine_Type)) {
        PyErr_SetString(PyExc_TypeError, "machine must be a topomap._core.Machine");
        return NULL;
    }
    *m = ((PyTopomapMachine *)machine)->m;
    PyArrayObject *a = pytopomap_array(alloc, NPY_INT32, -1, "allocation");
    if (a && (PyArray_DIM(a, 0) < 1 || PyArray_DIM(a, 0) > INT32_MAX)) {
        PyErr_SetString(PyExc_ValueError, "the allocation must have between 1 and 2^31 - 1 PEs");
        Py_CLEAR(a);
    }
    return a;
}

int pytopomap_map_call_init(pytopomap_map_call *c, PyObject *machine, PyObject *indptr, PyObject *indices,
                            PyObject *bytes, PyObject *alloc, long capacity)
{
    memset(c, 0, sizeof *c);
    if (!(c->arrs[3] = pytopomap_machine_alloc(machine, alloc, &c->m))) return -1;
    c->alloc = PyArray_DATA(c->arrs[3]);
    c->nalloc = (int32_t)PyArray_DIM(c->arrs[3], 0);
    if (capacity < 1 || capacity > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "capacity = %ld must be a positive 32-bit integer", capacity);
        return -1;
    }
    c->capacity = (int32_t)capacity;
    if (pytopomap_pattern(indptr, indices, bytes, &c->p, c->arrs)) return -1;
    npy_intp n = c->p.n;
    if (!(c->out = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INT32))) return -1;
    c->pe_of = PyArray_DATA(c->out);
    return 0;
}

int pytopomap_map_call_grid(pytopomap_map_call *c, PyObject *grid)
{
    if (grid == Py_None) return 0;
    c->arrs[4] = (PyArrayObject *)PyArray_FROMANY(grid, NPY_INT32, 2, 2, NPY_ARRAY_IN_ARRAY);
    if (!c->arrs[4]) return -1;
    npy_intp rows = PyArray_DIM(c->arrs[4], 0), d = PyArray_DIM(c->arrs[4], 1);
    if (rows != c->p.n || d < 1 || d > 3) {
        PyErr_Format(PyExc_ValueError, "grid must have shape (n, d) = (%d, 1..3), got (%ld, %ld)", (int)c->p.n,
                     (long)rows, (long)d);
        return -1;
    }
    c->p.coords = PyArray_DATA(c->arrs[4]);
    c->p.ndims = (int32_t)d;
    return 0;
}

PyObject *pytopomap_map_call_finish(pytopomap_map_call *c, int rc)
{
    PyObject *res = NULL;
    if (rc) {
        if (!PyErr_Occurred()) pytopomap_raise(rc);
    } else {
        res = (PyObject *)c->out;
        c->out = NULL;
    }
    for (int i = 0; i < 5; i++) Py_CLEAR(c->arrs[i]);
    Py_CLEAR(c->out);
    return res;
}

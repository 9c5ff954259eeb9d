/* One constructor per network kind: read the kind's parameters from a dict
   and call its C constructor.  Adding a kind = one function + one table row. */
#include "glue.h"

PyArrayObject *pytopomap_param(PyObject *params, const char *name, int type, npy_intp len)
{
    PyObject *obj = PyDict_GetItemString(params, name);
    if (!obj) {
        PyErr_Format(PyExc_KeyError, "machine parameter %s is missing", name);
        return NULL;
    }
    return pytopomap_array(obj, type, len, name);
}

typedef int (*kind_ctor)(const topomap_node_tree *t, PyObject *params, topomap_machine **out);

static int single_ctor(const topomap_node_tree *t, PyObject *params, topomap_machine **out)
{
    (void)params;
    return topomap_machine_create_single(t, out);
}

static int torus_ctor(const topomap_node_tree *t, PyObject *params, topomap_machine **out)
{
    PyArrayObject *dims = pytopomap_param(params, "dims", NPY_INT32, -1), *wrap = NULL;
    int rc = 1;
    if (dims) wrap = pytopomap_param(params, "wrap", NPY_UINT8, PyArray_DIM(dims, 0));
    if (dims && wrap)
        rc = topomap_machine_create_torus(t, (int32_t)PyArray_DIM(dims, 0), PyArray_DATA(dims), PyArray_DATA(wrap), out);
    Py_XDECREF(dims);
    Py_XDECREF(wrap);
    return rc;
}

static int tree_ctor(const topomap_node_tree *t, PyObject *params, topomap_machine **out)
{
    PyArrayObject *ar = pytopomap_param(params, "arities", NPY_INT32, -1), *co = NULL;
    int rc = 1;
    if (ar) co = pytopomap_param(params, "costs", NPY_FLOAT64, PyArray_DIM(ar, 0));
    if (ar && co) rc = topomap_machine_create_tree(t, (int32_t)PyArray_DIM(ar, 0), PyArray_DATA(ar), PyArray_DATA(co), out);
    Py_XDECREF(ar);
    Py_XDECREF(co);
    return rc;
}

static const struct {
    const char *kind;
    kind_ctor ctor;
} kinds[] = {
    {"single", single_ctor},
    {"torus", torus_ctor},
    {"tree", tree_ctor},
};

int pytopomap_create_kind(const char *kind, const topomap_node_tree *tree, PyObject *params,
                          topomap_machine **out)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].kind, kind) == 0) return kinds[i].ctor(tree, params, out);
    PyErr_Format(PyExc_ValueError, "unknown machine kind %s", kind);
    return 1;
}

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

static int dragonfly_ctor(const topomap_node_tree *t, PyObject *params, topomap_machine **out)
{
    PyArrayObject *sh = pytopomap_param(params, "shape", NPY_INT32, 4), *ar = NULL;
    int rc = 1;
    if (sh) ar = pytopomap_param(params, "arrangement", NPY_INT32, 1);
    if (sh && ar) {
        const int32_t *s = PyArray_DATA(sh);
        rc = topomap_machine_create_dragonfly(t, s[0], s[1], s[2], s[3], *(const int32_t *)PyArray_DATA(ar), out);
    }
    Py_XDECREF(sh);
    Py_XDECREF(ar);
    return rc;
}

static int hypercube_ctor(const topomap_node_tree *t, PyObject *params, topomap_machine **out)
{
    PyArrayObject *dim = pytopomap_param(params, "dim", NPY_INT32, 1);
    int rc = 1;
    if (dim) rc = topomap_machine_create_hypercube(t, *(const int32_t *)PyArray_DATA(dim), out);
    Py_XDECREF(dim);
    return rc;
}

static int fattree_ctor(const topomap_node_tree *t, PyObject *params, topomap_machine **out)
{
    PyArrayObject *m = pytopomap_param(params, "m", NPY_INT32, -1), *w = NULL, *p = NULL, *cap = NULL, *rt = NULL;
    int rc = 1;
    if (m) w = pytopomap_param(params, "w", NPY_INT32, PyArray_DIM(m, 0));
    if (w) p = pytopomap_param(params, "p", NPY_INT32, PyArray_DIM(m, 0));
    if (p) cap = pytopomap_param(params, "capacity", NPY_FLOAT64, PyArray_DIM(m, 0));
    if (cap) rt = pytopomap_param(params, "routing", NPY_INT32, 1);
    if (rt)
        rc = topomap_machine_create_fattree(t, (int32_t)PyArray_DIM(m, 0), PyArray_DATA(m), PyArray_DATA(w),
                                            PyArray_DATA(p), PyArray_DATA(cap), *(const int32_t *)PyArray_DATA(rt), out);
    Py_XDECREF(m);
    Py_XDECREF(w);
    Py_XDECREF(p);
    Py_XDECREF(cap);
    Py_XDECREF(rt);
    return rc;
}

/* sizes = (nnodes, nswitches, routing); explicit routes as CSR rows
   route_links[route_ptr[k]:route_ptr[k+1]] for the pairs (pair_src, pair_dst). */
static int graph_ctor(const topomap_node_tree *t, PyObject *params, topomap_machine **out)
{
    PyArrayObject *a[8] = {NULL};
    int rc = 1;
    if (!(a[0] = pytopomap_param(params, "sizes", NPY_INT32, 3)) || !(a[1] = pytopomap_param(params, "src", NPY_INT32, -1)))
        goto cleanup;
    npy_intp E = PyArray_DIM(a[1], 0);
    if (!(a[2] = pytopomap_param(params, "dst", NPY_INT32, E)) || !(a[3] = pytopomap_param(params, "capacity", NPY_FLOAT64, E)) ||
        !(a[4] = pytopomap_param(params, "pair_src", NPY_INT32, -1)))
        goto cleanup;
    npy_intp P = PyArray_DIM(a[4], 0);
    if (!(a[5] = pytopomap_param(params, "pair_dst", NPY_INT32, P)) ||
        !(a[6] = pytopomap_param(params, "route_ptr", NPY_INT64, P + 1)) ||
        !(a[7] = pytopomap_param(params, "route_links", NPY_INT32, -1)))
        goto cleanup;
    const int32_t *sz = PyArray_DATA(a[0]);
    const int64_t *ptr = PyArray_DATA(a[6]);
    if (E > INT32_MAX || ptr[P] != PyArray_DIM(a[7], 0)) {
        PyErr_Format(PyExc_ValueError, "graph with %zd links and route offsets ending at %lld for %zd route links", (Py_ssize_t)E,
                     (long long)ptr[P], (Py_ssize_t)PyArray_DIM(a[7], 0));
        goto cleanup;
    }
    topomap_graph_desc g = {sz[0], sz[1], (int32_t)E, PyArray_DATA(a[1]), PyArray_DATA(a[2]), PyArray_DATA(a[3]), sz[2],
                            (int64_t)P, PyArray_DATA(a[4]), PyArray_DATA(a[5]), ptr, PyArray_DATA(a[7])};
    Py_BEGIN_ALLOW_THREADS /* one BFS per node: seconds on large fabrics */
    rc = topomap_machine_create_graph(t, &g, out);
    Py_END_ALLOW_THREADS
cleanup:
    for (int i = 0; i < 8; i++) Py_XDECREF(a[i]);
    return rc;
}

static const struct {
    const char *kind;
    kind_ctor ctor;
} kinds[] = {
    {"single", single_ctor},
    {"torus", torus_ctor},
    {"tree", tree_ctor},
    {"fattree", fattree_ctor},
    {"dragonfly", dragonfly_ctor},
    {"hypercube", hypercube_ctor},
    {"graph", graph_ctor},
};

int pytopomap_create_kind(const char *kind, const topomap_node_tree *tree, PyObject *params,
                          topomap_machine **out)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (strcmp(kinds[i].kind, kind) == 0) return kinds[i].ctor(tree, params, out);
    PyErr_Format(PyExc_ValueError, "unknown machine kind %s", kind);
    return 1;
}

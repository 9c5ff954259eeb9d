/* topomap._core.Machine: a handle on a C machine and its routing oracle. */
#include "glue.h"

static void machine_dealloc(PyTopomapMachine *self)
{
    topomap_machine_destroy(self->m);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* Node tree from a (levels x P) int32 group table and per-level costs. */
static int read_tree(PyObject *groups, PyObject *costs, topomap_node_tree *t, PyArrayObject **g,
                     PyArrayObject **c)
{
    *g = (PyArrayObject *)PyArray_FROMANY(groups, NPY_INT32, 2, 2, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    if (!*g) return -1;
    npy_intp L = PyArray_DIM(*g, 0), P = PyArray_DIM(*g, 1);
    if (L < 1 || P < 1 || L > INT32_MAX || P > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "node tree groups must be a non-empty (levels x PEs) table");
        return -1;
    }
    *c = pytopomap_array(costs, NPY_FLOAT64, L, "node tree costs");
    if (!*c) return -1;
    t->pes_per_node = (int32_t)P;
    t->nlevels = (int32_t)L;
    t->groups = PyArray_DATA(*g);
    t->costs = PyArray_DATA(*c);
    return 0;
}

static PyObject *wrap_machine(PyObject *type, topomap_machine *m)
{
    PyTopomapMachine *self = (PyTopomapMachine *)((PyTypeObject *)type)->tp_alloc((PyTypeObject *)type, 0);
    if (!self) {
        topomap_machine_destroy(m);
        return NULL;
    }
    self->m = m;
    return (PyObject *)self;
}

/* Machine.create(kind, groups, costs, params): `params` is a dict of the
   kind's parameters (see csrc/python/py_kinds.c). */
static PyObject *machine_create(PyObject *type, PyObject *args)
{
    const char *kind;
    PyObject *groups, *costs, *params;
    if (!PyArg_ParseTuple(args, "sOOO!", &kind, &groups, &costs, &PyDict_Type, &params)) return NULL;
    PyArrayObject *g = NULL, *c = NULL;
    topomap_node_tree t;
    topomap_machine *m = NULL;
    PyObject *res = NULL;
    if (read_tree(groups, costs, &t, &g, &c) == 0) {
        int rc = pytopomap_create_kind(kind, &t, params, &m);
        if (rc > 0) { /* a Python exception is set */
        } else if (rc < 0) {
            pytopomap_raise(rc);
        } else {
            res = wrap_machine(type, m);
        }
    }
    Py_XDECREF(g);
    Py_XDECREF(c);
    return res;
}

static int check_node(const topomap_machine *m, long v)
{
    if (v < 0 || v >= topomap_machine_nnodes(m)) {
        PyErr_Format(PyExc_IndexError, "node %ld is out of range [0, %d)", v, (int)topomap_machine_nnodes(m));
        return -1;
    }
    return 0;
}

static int check_pe(const topomap_machine *m, long v)
{
    if (v < 0 || v >= topomap_machine_npes(m)) {
        PyErr_Format(PyExc_IndexError, "PE %ld is out of range [0, %d)", v, (int)topomap_machine_npes(m));
        return -1;
    }
    return 0;
}

static PyObject *machine_route(PyTopomapMachine *self, PyObject *args)
{
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b) || check_node(self->m, a) || check_node(self->m, b)) return NULL;
    npy_intp len = topomap_machine_max_route(self->m);
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(1, &len, NPY_INT32);
    if (!out) return NULL;
    int32_t n = topomap_machine_route(self->m, (int32_t)a, (int32_t)b, PyArray_DATA(out));
    if (n < 0) {
        Py_DECREF(out);
        return PyErr_Format(PyExc_ValueError, "the machine has no route from node %ld to node %ld", a, b);
    }
    PyObject *res = PySequence_GetSlice((PyObject *)out, 0, n);
    Py_DECREF(out);
    return res;
}

/* Vectorised oracle over pairs: which = 0 route_count (nodes), 1 distance (PEs), 2 level (PEs). */
static PyObject *pairs(PyTopomapMachine *self, PyObject *args, int which)
{
    PyObject *oa, *ob;
    if (!PyArg_ParseTuple(args, "OO", &oa, &ob)) return NULL;
    PyArrayObject *a = pytopomap_array(oa, NPY_INT32, -1, "a"), *b = NULL, *out = NULL;
    if (!a) return NULL;
    npy_intp n = PyArray_DIM(a, 0);
    b = pytopomap_array(ob, NPY_INT32, n, "b");
    if (!b) goto cleanup;
    const int32_t *pa = PyArray_DATA(a), *pb = PyArray_DATA(b);
    for (npy_intp i = 0; i < n; i++)
        if ((which == 0 ? check_node : check_pe)(self->m, pa[i]) || (which == 0 ? check_node : check_pe)(self->m, pb[i]))
            goto cleanup;
    out = (PyArrayObject *)PyArray_SimpleNew(1, &n, which == 1 ? NPY_FLOAT64 : NPY_INT32);
    if (!out) goto cleanup;
    Py_BEGIN_ALLOW_THREADS
    for (npy_intp i = 0; i < n; i++) {
        if (which == 0) ((int32_t *)PyArray_DATA(out))[i] = topomap_machine_route_count(self->m, pa[i], pb[i]);
        else if (which == 1) ((double *)PyArray_DATA(out))[i] = topomap_machine_distance(self->m, pa[i], pb[i]);
        else ((int32_t *)PyArray_DATA(out))[i] = topomap_machine_level_of(self->m, pa[i], pb[i]);
    }
    Py_END_ALLOW_THREADS
cleanup:
    Py_XDECREF(a);
    Py_XDECREF(b);
    return (PyObject *)out;
}

static PyObject *machine_route_counts(PyTopomapMachine *self, PyObject *args) { return pairs(self, args, 0); }
static PyObject *machine_distances(PyTopomapMachine *self, PyObject *args) { return pairs(self, args, 1); }
static PyObject *machine_levels(PyTopomapMachine *self, PyObject *args) { return pairs(self, args, 2); }

static PyObject *machine_set_capacities(PyTopomapMachine *self, PyObject *arg)
{
    PyArrayObject *a = pytopomap_array(arg, NPY_FLOAT64, topomap_machine_nlinks(self->m), "capacities");
    if (!a) return NULL;
    int rc = topomap_machine_set_capacities(self->m, PyArray_DATA(a));
    Py_DECREF(a);
    if (rc) return pytopomap_raise(rc);
    Py_RETURN_NONE;
}

static PyObject *machine_capacities(PyTopomapMachine *self, PyObject *unused)
{
    (void)unused;
    npy_intp n = topomap_machine_nlinks(self->m);
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_FLOAT64);
    if (!out) return NULL;
    for (npy_intp l = 0; l < n; l++) ((double *)PyArray_DATA(out))[l] = topomap_machine_link_capacity(self->m, (int32_t)l);
    return (PyObject *)out;
}

static PyObject *machine_links_exist(PyTopomapMachine *self, PyObject *unused)
{
    (void)unused;
    npy_intp n = topomap_machine_nlinks(self->m);
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_BOOL);
    if (!out) return NULL;
    for (npy_intp l = 0; l < n; l++) ((npy_bool *)PyArray_DATA(out))[l] = (npy_bool)topomap_machine_link_exists(self->m, (int32_t)l);
    return (PyObject *)out;
}

/* (from, to) vertex arrays over all link ids; -1 for ids that are not links. */
static PyObject *machine_link_ends(PyTopomapMachine *self, PyObject *unused)
{
    (void)unused;
    npy_intp n = topomap_machine_nlinks(self->m);
    PyArrayObject *from = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INT32);
    PyArrayObject *to = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INT32);
    if (!from || !to) {
        Py_XDECREF(from);
        Py_XDECREF(to);
        return NULL;
    }
    int32_t *f = PyArray_DATA(from), *t = PyArray_DATA(to);
    for (npy_intp l = 0; l < n; l++)
        if (topomap_machine_link_ends(self->m, (int32_t)l, &f[l], &t[l])) f[l] = t[l] = -1;
    return Py_BuildValue("(NN)", from, to);
}

#define GETTER(name, fn) \
    static PyObject *get_##name(PyTopomapMachine *self, void *c) { (void)c; return PyLong_FromLong(fn(self->m)); }
GETTER(nnodes, topomap_machine_nnodes)
GETTER(npes, topomap_machine_npes)
GETTER(pes_per_node, topomap_machine_pes_per_node)
GETTER(nlinks, topomap_machine_nlinks)
GETTER(max_route, topomap_machine_max_route)
GETTER(nlevels, topomap_machine_nlevels)
GETTER(nvertices, topomap_machine_nvertices)

static PyGetSetDef machine_getset[] = {
    {"nnodes", (getter)get_nnodes, NULL, "number of compute nodes", NULL},
    {"npes", (getter)get_npes, NULL, "number of PEs", NULL},
    {"pes_per_node", (getter)get_pes_per_node, NULL, "PEs per node", NULL},
    {"nlinks", (getter)get_nlinks, NULL, "number of directed link ids", NULL},
    {"max_route", (getter)get_max_route, NULL, "longest possible route", NULL},
    {"nlevels", (getter)get_nlevels, NULL, "number of LCA levels (incl. 0 = same PE)", NULL},
    {"nvertices", (getter)get_nvertices, NULL, "network graph vertices: nodes, then switches", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef machine_methods[] = {
    {"create", machine_create, METH_VARARGS | METH_CLASS, "create(kind, groups, costs, params: dict)"},
    {"route", (PyCFunction)machine_route, METH_VARARGS, "route(node_a, node_b) -> link ids"},
    {"route_counts", (PyCFunction)machine_route_counts, METH_VARARGS, "hops between node pairs"},
    {"distances", (PyCFunction)machine_distances, METH_VARARGS, "QAP distances between PE pairs"},
    {"levels", (PyCFunction)machine_levels, METH_VARARGS, "LCA levels of PE pairs"},
    {"set_capacities", (PyCFunction)machine_set_capacities, METH_O, "set link capacities"},
    {"capacities", (PyCFunction)machine_capacities, METH_NOARGS, "link capacities"},
    {"links_exist", (PyCFunction)machine_links_exist, METH_NOARGS, "which link ids are real links"},
    {"link_ends", (PyCFunction)machine_link_ends, METH_NOARGS, "(from, to) vertex of every link id"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject PyTopomapMachine_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "topomap._core.Machine",
    .tp_basicsize = sizeof(PyTopomapMachine),
    .tp_dealloc = (destructor)machine_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "A machine of the C core (build it with Machine.create).",
    .tp_methods = machine_methods,
    .tp_getset = machine_getset,
};

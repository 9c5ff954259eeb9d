/* Module `topomap._core`: conversion helpers, error mapping, features. */
#define TOPOMAP_GLUE_MAIN
#include "glue.h"
#include "topomap_config.h"

PyObject *pytopomap_raise(int rc)
{
    const char *msg = topomap_last_error();
    if (rc == TOPOMAP_ENOMEM) return PyErr_NoMemory();
    if (rc == TOPOMAP_ECANCELED) {
        if (!PyErr_Occurred()) PyErr_SetString(PyExc_KeyboardInterrupt, msg);
        return NULL;
    }
    PyObject *mod = PyImport_ImportModule("topomap.errors");
    if (!mod) return NULL;
    PyObject *cls = PyObject_GetAttrString(mod, rc == TOPOMAP_EINVAL ? "CoreInputError" : "CoreError");
    Py_DECREF(mod);
    if (!cls) return NULL;
    PyErr_SetString(cls, msg);
    Py_DECREF(cls);
    return NULL;
}

PyArrayObject *pytopomap_array(PyObject *obj, int type, npy_intp len, const char *what)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, type, 1, 1, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    if (!a) return NULL;
    if (len >= 0 && PyArray_DIM(a, 0) != len) {
        PyErr_Format(PyExc_ValueError, "%s has length %zd, expected %zd", what, (Py_ssize_t)PyArray_DIM(a, 0),
                     (Py_ssize_t)len);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

int pytopomap_pattern(PyObject *indptr, PyObject *indices, PyObject *bytes, topomap_pattern *p,
                      PyArrayObject *arrs[3])
{
    arrs[0] = arrs[1] = arrs[2] = NULL;
    arrs[0] = pytopomap_array(indptr, NPY_INT64, -1, "indptr");
    if (!arrs[0]) return -1;
    npy_intp n = PyArray_DIM(arrs[0], 0) - 1;
    if (n < 1 || n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "indptr must have n+1 entries with 1 <= n < 2^31");
        return -1;
    }
    const int64_t *ip = PyArray_DATA(arrs[0]);
    arrs[1] = pytopomap_array(indices, NPY_INT32, ip[n], "indices");
    if (!arrs[1]) return -1;
    arrs[2] = pytopomap_array(bytes, NPY_FLOAT64, ip[n], "bytes");
    if (!arrs[2]) return -1;
    p->n = (int32_t)n;
    p->indptr = ip;
    p->indices = PyArray_DATA(arrs[1]);
    p->bytes = PyArray_DATA(arrs[2]);
    int rc = topomap_pattern_validate(p);
    if (rc) {
        pytopomap_raise(rc);
        return -1;
    }
    return 0;
}

int pytopomap_weights(PyObject *obj, double w[4], const double **out)
{
    *out = NULL;
    if (obj == NULL || obj == Py_None) return 0;
    PyArrayObject *a = pytopomap_array(obj, NPY_FLOAT64, 4, "weights");
    if (!a) return -1;
    for (int i = 0; i < 4; i++) w[i] = ((const double *)PyArray_DATA(a))[i];
    Py_DECREF(a);
    *out = w;
    return 0;
}

PyObject *pytopomap_metrics_dict(const topomap_metrics *mt)
{
    return Py_BuildValue(
        "{s:d,s:d,s:i,s:L,s:d,s:d,s:d,s:L,s:d,s:d,s:d,s:d,s:L}", "hop_bytes", mt->hop_bytes, "dilation",
        mt->dilation, "max_dilation", (int)mt->max_dilation, "messages", (long long)mt->messages, "total_bytes",
        mt->total_bytes, "qap", mt->qap, "max_congestion", mt->max_congestion, "nz_links",
        (long long)mt->nz_links, "nz_congestion_avg", mt->nz_congestion_avg, "nz_congestion_var",
        mt->nz_congestion_var, "hybrid", mt->hybrid, "edge_cut", mt->edge_cut, "edge_cut_messages",
        (long long)mt->edge_cut_messages);
}

static PyObject *features(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    return Py_BuildValue("{s:O,s:s,s:s,s:s}", "hwloc", TOPOMAP_HAVE_HWLOC ? Py_True : Py_False, "hwloc_version",
                         TOPOMAP_HWLOC_VERSION, "hwloc_request", TOPOMAP_HWLOC_REQUEST, "compiler",
                         TOPOMAP_COMPILER);
}

static PyMethodDef methods[] = {
    {"features", features, METH_NOARGS, "What was compiled in."},
    {"evaluate", (PyCFunction)(void (*)(void))pytopomap_evaluate, METH_VARARGS | METH_KEYWORDS,
     "evaluate(machine, indptr, indices, bytes, pe_of, weights=None) -> (dict, link_load, level_bytes)"},
    {"map_block", pytopomap_map_block, METH_VARARGS, "map_block(n, alloc, capacity) -> pe_of"},
    {"map_cyclic", pytopomap_map_cyclic, METH_VARARGS, "map_cyclic(machine, n, alloc, capacity) -> pe_of"},
    {"map_random", pytopomap_map_random, METH_VARARGS, "map_random(n, alloc, capacity, seed) -> pe_of"},
    {"allocate_nodes", pytopomap_allocate_nodes, METH_VARARGS,
     "allocate_nodes(machine, k, policy, runs, seed) -> node ids"},
    {"ugraph_from_pattern", pytopomap_ugraph_from_pattern, METH_VARARGS,
     "ugraph_from_pattern(indptr, indices, bytes) -> (xadj, adjncy, adjwgt) of C + C^T"},
    {"partition", (PyCFunction)(void (*)(void))pytopomap_partition, METH_VARARGS | METH_KEYWORDS,
     "partition(xadj, adjncy, adjwgt, vwgt, k, targets=None, hard=False, imbalance=0.03, seed=0, recursive=False, "
     "ntries=4, progress=None, part=None) -> (part, part_weights, edge_cut)"},
    {"partition_stats", pytopomap_partition_stats, METH_VARARGS,
     "partition_stats(xadj, adjncy, adjwgt, vwgt, k, part) -> (part_weights, edge_cut)"},
    {"ugraph_validate", pytopomap_ugraph_validate, METH_VARARGS,
     "ugraph_validate(xadj, adjncy, adjwgt, vwgt): raise if not a symmetric sorted CSR graph"},
    {"group_by_node", (PyCFunction)(void (*)(void))pytopomap_group_by_node, METH_VARARGS | METH_KEYWORDS,
     "group_by_node(machine, indptr, indices, bytes, alloc, capacity, seed=0, progress=None) -> (group, group_slots)"},
    {"parse_numbers", pytopomap_parse_numbers, METH_VARARGS,
     "parse_numbers(data, integer, commas) -> (values, line_counts) | (None | False, bad token offset)"},
#if TOPOMAP_HAVE_HWLOC
    {"hwloc_topology_xml", pytopomap_hwloc_topology_xml, METH_NOARGS,
     "XML of this machine's topology, discovered by libhwloc."},
#endif
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_core", "topomap C core.", -1, methods};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    if (PyType_Ready(&PyTopomapMachine_Type) < 0 || PyType_Ready(&PyTopomapEvaluator_Type) < 0) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (!m) return NULL;
    Py_INCREF(&PyTopomapMachine_Type);
    Py_INCREF(&PyTopomapEvaluator_Type);
    if (PyModule_AddObject(m, "Machine", (PyObject *)&PyTopomapMachine_Type) < 0 ||
        PyModule_AddObject(m, "Evaluator", (PyObject *)&PyTopomapEvaluator_Type) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

/* The hierarchy mapper (map_hierarchy.c) for Python: options in, (pe_of, J)
   out; and the allocation's hierarchy as found from the oracle. */
#include "glue.h"

static int32_t clamp32(long v) { return v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : (int32_t)v; }

PyObject *pytopomap_map_hierarchy(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"machine", "indptr", "indices", "bytes", "alloc", "capacity", "seed", "imbalance",
                             "depth", "effort", "tries", "progress", NULL};
    PyObject *mo, *ip, *ix, *by, *ao, *po = Py_None;
    long capacity, depth = 1, effort = TOPOMAP_HIER_ECO, tries = 1;
    unsigned long long seed = 0;
    double imbalance = 0.03, qap = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOl|KdlllO", kwlist, &mo, &ip, &ix, &by, &ao, &capacity, &seed,
                                     &imbalance, &depth, &effort, &tries, &po))
        return NULL;
    if (pytopomap_progress_check(po)) return NULL;
    /* out-of-range values reach the core, whose message names the option */
    topomap_hierarchy_options opt = {imbalance, clamp32(depth), clamp32(effort), clamp32(tries)};
    pytopomap_map_call c;
    int rc = 0;
    if (!pytopomap_map_call_init(&c, mo, ip, ix, by, ao, capacity)) {
        pytopomap_progress pc = {po, NULL, "hierarchy"};
        topomap_run_options run = {(uint64_t)seed, pytopomap_progress_cb, &pc};
        pc.ts = PyEval_SaveThread();
        rc = topomap_map_hierarchy(c.m, &c.p, c.alloc, c.nalloc, c.capacity, &opt, &run, c.pe_of, &qap);
        PyEval_RestoreThread(pc.ts);
    }
    PyObject *out = pytopomap_map_call_finish(&c, PyErr_Occurred() ? -1 : rc);
    return out ? Py_BuildValue("(Nd)", out, qap) : NULL;
}

static PyObject *i32_array(const int32_t *data, npy_intp len)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(1, &len, NPY_INT32);
    if (a && len) memcpy(PyArray_DATA(a), data, (size_t)len * sizeof *data);
    return (PyObject *)a;
}

PyObject *pytopomap_hierarchy_groups(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *mo, *ao;
    if (!PyArg_ParseTuple(args, "OO", &mo, &ao)) return NULL;
    const topomap_machine *m;
    PyArrayObject *a = pytopomap_machine_alloc(mo, ao, &m);
    if (!a) return NULL;
    topomap_hierarchy *h = NULL;
    int rc = topomap_hierarchy_create(m, PyArray_DATA(a), (int32_t)PyArray_DIM(a, 0), &h);
    Py_DECREF(a);
    if (rc) return pytopomap_raise(rc);
    npy_intp ng = h->ngroups;
    PyArrayObject *dist = (PyArrayObject *)PyArray_SimpleNew(1, &ng, NPY_FLOAT64);
    if (dist) memcpy(PyArray_DATA(dist), h->dist, (size_t)ng * sizeof *h->dist);
    PyObject *res = Py_BuildValue("{s:N,s:N,s:N,s:N,s:N,s:N,s:N,s:i}", "pes", i32_array(h->pes, h->npes), "lo",
                                  i32_array(h->lo, ng), "hi", i32_array(h->hi, ng), "parent", i32_array(h->parent, ng),
                                  "first_child", i32_array(h->first_child, ng), "nchild", i32_array(h->nchild, ng),
                                  "dist", (PyObject *)dist, "height", (int)h->height);
    topomap_hierarchy_destroy(h);
    return res;
}

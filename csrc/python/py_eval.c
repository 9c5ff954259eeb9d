/* topomap._core.evaluate and topomap._core.Evaluator (incremental). */
#include "glue.h"

static int read_mapping(PyObject *obj, int32_t n, PyArrayObject **out)
{
    *out = pytopomap_array(obj, NPY_INT32, n, "pe_of");
    return *out ? 0 : -1;
}

/* The optional message counts of the pattern's entries (None: one per entry). */
static int read_msgs(PyObject *obj, const topomap_pattern *p, PyArrayObject **out, const double **msgs)
{
    *out = NULL;
    *msgs = NULL;
    if (obj == Py_None) return 0;
    *out = pytopomap_array(obj, NPY_FLOAT64, (npy_intp)p->indptr[p->n], "msgs");
    if (!*out) return -1;
    *msgs = PyArray_DATA(*out);
    return 0;
}

PyObject *pytopomap_evaluate(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"machine", "indptr", "indices", "bytes", "pe_of", "weights", "msgs", NULL};
    PyObject *mo, *ip, *ix, *by, *po, *wo = Py_None, *mg = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!OOOO|OO", kwlist, &PyTopomapMachine_Type, &mo, &ip, &ix, &by, &po,
                                     &wo, &mg))
        return NULL;
    const topomap_machine *m = ((PyTopomapMachine *)mo)->m;
    PyArrayObject *arrs[3] = {NULL, NULL, NULL}, *pe = NULL, *load = NULL, *lev = NULL, *marr = NULL;
    PyObject *res = NULL;
    topomap_pattern p;
    double wbuf[4];
    const double *w, *msgs;
    if (pytopomap_pattern(ip, ix, by, &p, arrs) || read_mapping(po, p.n, &pe) || pytopomap_weights(wo, wbuf, &w) ||
        read_msgs(mg, &p, &marr, &msgs))
        goto cleanup;
    npy_intp nl = topomap_machine_nlinks(m), nv = topomap_machine_nlevels(m);
    load = (PyArrayObject *)PyArray_SimpleNew(1, &nl, NPY_FLOAT64);
    lev = (PyArrayObject *)PyArray_SimpleNew(1, &nv, NPY_FLOAT64);
    if (!load || !lev) goto cleanup;
    topomap_metrics mt;
    topomap_eval_detail d = {PyArray_DATA(load), PyArray_DATA(lev)};
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = topomap_evaluate_msgs(m, &p, msgs, PyArray_DATA(pe), w, &mt, &d);
    Py_END_ALLOW_THREADS
    if (rc) {
        pytopomap_raise(rc);
        goto cleanup;
    }
    PyObject *dict = pytopomap_metrics_dict(&mt);
    if (dict) res = Py_BuildValue("(NOO)", dict, load, lev);
cleanup:
    Py_XDECREF(arrs[0]);
    Py_XDECREF(arrs[1]);
    Py_XDECREF(arrs[2]);
    Py_XDECREF(pe);
    Py_XDECREF(marr);
    Py_XDECREF(load);
    Py_XDECREF(lev);
    return res;
}

typedef struct {
    PyObject_HEAD
    topomap_eval *e;
    PyObject *machine;      /* keeps the machine alive */
    PyArrayObject *arrs[4]; /* keeps the borrowed pattern arrays (and message counts) alive */
    int32_t n, npes, nlinks, nlevels;
} PyTopomapEvaluator;

static void evaluator_dealloc(PyTopomapEvaluator *self)
{
    topomap_eval_destroy(self->e);
    Py_XDECREF(self->machine);
    for (int i = 0; i < 4; i++) Py_XDECREF(self->arrs[i]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *evaluator_new(PyTypeObject *type, PyObject *args, PyObject *kw)
{
    static char *kwlist[] = {"machine", "indptr", "indices", "bytes", "pe_of", "weights", "msgs", NULL};
    PyObject *mo, *ip, *ix, *by, *po, *wo = Py_None, *mg = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!OOOO|OO", kwlist, &PyTopomapMachine_Type, &mo, &ip, &ix, &by, &po,
                                     &wo, &mg))
        return NULL;
    PyTopomapEvaluator *self = (PyTopomapEvaluator *)type->tp_alloc(type, 0);
    if (!self) return NULL;
    const topomap_machine *m = ((PyTopomapMachine *)mo)->m;
    Py_INCREF(mo);
    self->machine = mo;
    topomap_pattern p;
    PyArrayObject *pe = NULL;
    double wbuf[4];
    const double *w, *msgs;
    if (pytopomap_pattern(ip, ix, by, &p, self->arrs) || read_mapping(po, p.n, &pe) || pytopomap_weights(wo, wbuf, &w) ||
        read_msgs(mg, &p, &self->arrs[3], &msgs)) {
        Py_XDECREF(pe);
        Py_DECREF(self);
        return NULL;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = topomap_eval_create(m, &p, PyArray_DATA(pe), w, &self->e);
    if (!rc && msgs) rc = topomap_eval_set_msgs(self->e, msgs);
    Py_END_ALLOW_THREADS
    Py_DECREF(pe);
    if (rc) {
        Py_DECREF(self);
        return pytopomap_raise(rc);
    }
    self->n = p.n;
    self->npes = topomap_machine_npes(m);
    self->nlinks = topomap_machine_nlinks(m);
    self->nlevels = topomap_machine_nlevels(m);
    return (PyObject *)self;
}

static PyObject *evaluator_metrics(PyTopomapEvaluator *self, PyObject *unused)
{
    (void)unused;
    topomap_metrics mt;
    topomap_eval_metrics(self->e, &mt);
    return pytopomap_metrics_dict(&mt);
}

/* op: 0 try_move, 1 try_swap, 2 move, 3 swap */
static PyObject *change(PyTopomapEvaluator *self, PyObject *args, int op)
{
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    if (a < 0 || a >= self->n || ((op == 1 || op == 3) && (b < 0 || b >= self->n))) {
        PyErr_Format(PyExc_IndexError, "process out of range [0, %d)", (int)self->n);
        return NULL;
    }
    if ((op == 0 || op == 2) && (b < 0 || b >= self->npes)) {
        PyErr_Format(PyExc_IndexError, "PE %ld out of range [0, %d)", b, (int)self->npes);
        return NULL;
    }
    topomap_metrics mt;
    int rc = op == 0 ? topomap_eval_try_move(self->e, (int32_t)a, (int32_t)b, &mt)
           : op == 1 ? topomap_eval_try_swap(self->e, (int32_t)a, (int32_t)b, &mt)
           : op == 2 ? topomap_eval_move(self->e, (int32_t)a, (int32_t)b)
                     : topomap_eval_swap(self->e, (int32_t)a, (int32_t)b);
    if (rc) return pytopomap_raise(rc);
    if (op >= 2) Py_RETURN_NONE;
    return pytopomap_metrics_dict(&mt);
}

static PyObject *ev_try_move(PyTopomapEvaluator *s, PyObject *a) { return change(s, a, 0); }
static PyObject *ev_try_swap(PyTopomapEvaluator *s, PyObject *a) { return change(s, a, 1); }
static PyObject *ev_move(PyTopomapEvaluator *s, PyObject *a) { return change(s, a, 2); }
static PyObject *ev_swap(PyTopomapEvaluator *s, PyObject *a) { return change(s, a, 3); }

static PyObject *copy_out(const void *src, npy_intp n, int type)
{
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(1, &n, type);
    if (out) memcpy(PyArray_DATA(out), src, (size_t)n * PyArray_ITEMSIZE(out));
    return (PyObject *)out;
}

static PyObject *ev_mapping(PyTopomapEvaluator *s, PyObject *u)
{
    (void)u;
    return copy_out(topomap_eval_mapping(s->e), s->n, NPY_INT32);
}
static PyObject *ev_link_loads(PyTopomapEvaluator *s, PyObject *u)
{
    (void)u;
    return copy_out(topomap_eval_link_loads(s->e), s->nlinks, NPY_FLOAT64);
}
static PyObject *ev_level_bytes(PyTopomapEvaluator *s, PyObject *u)
{
    (void)u;
    return copy_out(topomap_eval_level_bytes(s->e), s->nlevels, NPY_FLOAT64);
}

static PyMethodDef evaluator_methods[] = {
    {"metrics", (PyCFunction)evaluator_metrics, METH_NOARGS, "current metrics"},
    {"try_move", (PyCFunction)ev_try_move, METH_VARARGS, "try_move(p, pe) -> metrics after"},
    {"try_swap", (PyCFunction)ev_try_swap, METH_VARARGS, "try_swap(p, q) -> metrics after"},
    {"move", (PyCFunction)ev_move, METH_VARARGS, "move(p, pe)"},
    {"swap", (PyCFunction)ev_swap, METH_VARARGS, "swap(p, q)"},
    {"mapping", (PyCFunction)ev_mapping, METH_NOARGS, "copy of pe_of"},
    {"link_loads", (PyCFunction)ev_link_loads, METH_NOARGS, "copy of the link loads"},
    {"level_bytes", (PyCFunction)ev_level_bytes, METH_NOARGS, "copy of the bytes per LCA level"},
    {NULL, NULL, 0, NULL},
};

PyTypeObject PyTopomapEvaluator_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "topomap._core.Evaluator",
    .tp_basicsize = sizeof(PyTopomapEvaluator),
    .tp_dealloc = (destructor)evaluator_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Evaluator(machine, indptr, indices, bytes, pe_of, weights=None, msgs=None): incremental metrics.",
    .tp_methods = evaluator_methods,
    .tp_new = evaluator_new,
};

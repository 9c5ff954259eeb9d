/* PTRAM (map_ptram.c) for Python: options in, pe_of out, and on request
   the trace of what each step did; and the stepwise state (PtramState)
   that topomap.mpi.ptram drives with its leaders' work split over ranks. */
#include "glue.h"

static PyObject *array_of(const void *data, npy_intp len, int type, size_t item)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(1, &len, type);
    if (a && len) memcpy(PyArray_DATA(a), data, (size_t)len * item);
    return (PyObject *)a;
}

static PyObject *trace_dict(const topomap_ptram_trace *t, npy_intp n)
{
    return Py_BuildValue("{s:i,s:N,s:N,s:N,s:N,s:i,s:d,s:(ddd)}", "nunits", (int)t->nunits, "group",
                         array_of(t->group, n, NPY_INT32, sizeof *t->group), "order",
                         array_of(t->order, t->nunits, NPY_INT32, sizeof *t->order), "unit_node",
                         array_of(t->unit_node, t->nunits, NPY_INT32, sizeof *t->unit_node), "round_mc",
                         array_of(t->round_mc, (npy_intp)t->rounds_done + 1, NPY_FLOAT64, sizeof *t->round_mc),
                         "rounds_done", (int)t->rounds_done, "greedy_hybrid",
                         t->greedy_hybrid, "seconds", t->seconds[0], t->seconds[1], t->seconds[2]);
}

static int options_of(PyObject *wo, long k, long rounds, long partition, long plateau, long candidates,
                      topomap_ptram_options *opt)
{
    topomap_ptram_options_init(opt);
    double wbuf[4];
    const double *w;
    if (pytopomap_weights(wo, wbuf, &w)) return -1;
    if (w) memcpy(opt->weights, w, sizeof opt->weights);
    /* out-of-range values reach the core, whose message names the option */
    opt->k = k < INT32_MIN ? INT32_MIN : k > INT32_MAX ? INT32_MAX : (int32_t)k;
    opt->rounds = rounds < INT32_MIN ? INT32_MIN : rounds > INT32_MAX ? INT32_MAX : (int32_t)rounds;
    opt->partition = partition == 0 || partition == 1 ? (int32_t)partition : -1;
    opt->plateau = plateau == 0 || plateau == 1 ? (int32_t)plateau : -1;
    opt->candidates = candidates < INT32_MIN ? INT32_MIN : candidates > INT32_MAX ? INT32_MAX : (int32_t)candidates;
    return 0;
}

PyObject *pytopomap_map_ptram(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"machine", "indptr", "indices", "bytes", "alloc", "capacity", "seed", "weights",
                             "k", "rounds", "partition", "plateau", "candidates", "progress", "trace", "grid", NULL};
    PyObject *mo, *ip, *ix, *by, *ao, *wo = Py_None, *po = Py_None, *go = Py_None;
    long capacity, k = TOPOMAP_PTRAM_DEFAULT_K, rounds = 10, partition = 1, plateau = 0, candidates = -1;
    unsigned long long seed = 0;
    int want_trace = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOl|KOlllllOpO", kwlist, &mo, &ip, &ix, &by, &ao, &capacity, &seed,
                                     &wo, &k, &rounds, &partition, &plateau, &candidates, &po, &want_trace, &go))
        return NULL;
    if (pytopomap_progress_check(po)) return NULL;
    topomap_ptram_options opt;
    if (options_of(wo, k, rounds, partition, plateau, candidates, &opt)) return NULL;
    pytopomap_map_call c;
    topomap_ptram_trace tr = {0};
    PyObject *out = NULL, *res = NULL;
    int rc = 0;
    if (pytopomap_map_call_init(&c, mo, ip, ix, by, ao, capacity) || pytopomap_map_call_grid(&c, go)) goto cleanup;
    if (want_trace) {
        size_t n = (size_t)c.p.n, r = opt.rounds > 0 ? (size_t)opt.rounds : 0;
        tr.group = malloc(n * sizeof *tr.group);
        tr.order = malloc(n * sizeof *tr.order);
        tr.unit_node = malloc(n * sizeof *tr.unit_node);
        tr.round_mc = malloc((r + 1) * sizeof *tr.round_mc);
        if (!tr.group || !tr.order || !tr.unit_node || !tr.round_mc) {
            PyErr_NoMemory();
            goto cleanup;
        }
        opt.trace = &tr;
    }
    pytopomap_progress pc = {po, NULL, "ptram"};
    opt.run = (topomap_run_options){(uint64_t)seed, pytopomap_progress_cb, &pc};
    pc.ts = PyEval_SaveThread();
    rc = topomap_map_ptram(c.m, &c.p, c.alloc, c.nalloc, c.capacity, &opt, c.pe_of);
    PyEval_RestoreThread(pc.ts);
cleanup:
    out = pytopomap_map_call_finish(&c, PyErr_Occurred() ? -1 : rc);
    if (out && want_trace) {
        PyObject *d = trace_dict(&tr, c.p.n);
        res = d ? Py_BuildValue("(NN)", out, d) : NULL;
        if (!d) Py_DECREF(out);
    } else {
        res = out;
    }
    free(tr.group);
    free(tr.order);
    free(tr.unit_node);
    free(tr.round_mc);
    return res;
}

/* ---- the stepwise state ---------------------------------------------- */

typedef struct {
    PyObject_HEAD
    topomap_ptram_state *st;
    PyObject *machine;        /* keeps the machine alive */
    PyArrayObject *arrs[4];   /* the pattern's arrays (partition = 0 uses them) and the allocation */
    int busy;                 /* a step runs without the GIL */
} PyPtramState;

static void state_dealloc(PyPtramState *self)
{
    topomap_ptram_end(self->st);
    Py_XDECREF(self->machine);
    for (int i = 0; i < 4; i++) Py_XDECREF(self->arrs[i]);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

/* One step at a time: a step runs without the GIL.  The core checks every
   argument before it changes the state, so a failed step leaves it usable. */
static int state_enter(PyPtramState *self)
{
    if (self->busy) {
        PyErr_SetString(PyExc_RuntimeError, "PtramState is already running a step in another thread");
        return -1;
    }
    self->busy = 1;
    return 0;
}

static PyObject *state_leave(PyPtramState *self, int rc, PyObject *result)
{
    self->busy = 0;
    if (!rc) return result;
    Py_XDECREF(result);
    return pytopomap_raise(rc);
}

static PyObject *state_greedy_next(PyPtramState *self, PyObject *unused)
{
    (void)unused;
    if (state_enter(self)) return NULL;
    int32_t unit;
    int needs;
    int rc = topomap_ptram_greedy_next(self->st, &unit, &needs);
    return state_leave(self, rc, rc ? NULL : Py_BuildValue("(iO)", (int)unit, needs ? Py_True : Py_False));
}

static PyObject *state_greedy_score(PyPtramState *self, PyObject *args)
{
    int unit;
    PyObject *no;
    if (!PyArg_ParseTuple(args, "iO", &unit, &no)) return NULL;
    PyArrayObject *nodes = pytopomap_array(no, NPY_INT32, -1, "nodes");
    if (!nodes) return NULL;
    npy_intp len = PyArray_DIM(nodes, 0);
    PyArrayObject *score = (PyArrayObject *)PyArray_SimpleNew(1, &len, NPY_FLOAT64);
    if (!score || state_enter(self)) {
        Py_DECREF(nodes);
        Py_XDECREF(score);
        return NULL;
    }
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = topomap_ptram_greedy_score(self->st, unit, PyArray_DATA(nodes), (int32_t)len, PyArray_DATA(score));
    Py_END_ALLOW_THREADS
    Py_DECREF(nodes);
    return state_leave(self, rc, (PyObject *)score);
}

static PyObject *state_greedy_place(PyPtramState *self, PyObject *args)
{
    int unit;
    PyObject *so;
    if (!PyArg_ParseTuple(args, "iO", &unit, &so)) return NULL;
    PyArrayObject *score = NULL;
    if (so != Py_None &&
        !(score = pytopomap_array(so, NPY_FLOAT64, topomap_ptram_nnodes(self->st), "scores (one per node)")))
        return NULL;
    if (state_enter(self)) {
        Py_XDECREF(score);
        return NULL;
    }
    int rc = topomap_ptram_greedy_place(self->st, unit, score ? PyArray_DATA(score) : NULL);
    Py_XDECREF(score);
    return state_leave(self, rc, rc ? NULL : (Py_INCREF(Py_None), Py_None));
}

static PyObject *state_round_begin(PyPtramState *self, PyObject *unused)
{
    (void)unused;
    if (state_enter(self)) return NULL;
    int go_on;
    int rc = topomap_ptram_round_begin(self->st, &go_on);
    return state_leave(self, rc, rc ? NULL : PyBool_FromLong(go_on));
}

/* Tries travel as float64 rows (u, r, m, mc, hot): one buffer for MPI. */
static PyObject *state_leader_search(PyPtramState *self, PyObject *args)
{
    PyObject *no;
    if (!PyArg_ParseTuple(args, "O", &no)) return NULL;
    PyArrayObject *nodes = pytopomap_array(no, NPY_INT32, -1, "nodes");
    if (!nodes) return NULL;
    npy_intp dims[2] = {PyArray_DIM(nodes, 0), 5};
    PyArrayObject *out = (PyArrayObject *)PyArray_SimpleNew(2, dims, NPY_FLOAT64);
    if (!out || state_enter(self)) {
        Py_DECREF(nodes);
        Py_XDECREF(out);
        return NULL;
    }
    const int32_t *nd = PyArray_DATA(nodes);
    double *row = PyArray_DATA(out);
    int rc = 0;
    Py_BEGIN_ALLOW_THREADS
    for (npy_intp i = 0; i < dims[0] && !rc; i++, row += 5) {
        topomap_ptram_try t;
        rc = topomap_ptram_leader_search(self->st, nd[i], &t);
        row[0] = t.u;
        row[1] = t.r;
        row[2] = t.m;
        row[3] = t.mc;
        row[4] = t.hot;
    }
    Py_END_ALLOW_THREADS
    Py_DECREF(nodes);
    return state_leave(self, rc, (PyObject *)out);
}

static int32_t id_of(double x, int *bad)
{
    if (!(x >= INT32_MIN && x <= INT32_MAX) || x != (double)(int32_t)x) {
        *bad = 1;
        return 0;
    }
    return (int32_t)x;
}

static PyObject *state_round_end(PyPtramState *self, PyObject *args)
{
    PyObject *ko;
    if (!PyArg_ParseTuple(args, "O", &ko)) return NULL;
    int32_t N = topomap_ptram_nnodes(self->st);
    PyArrayObject *k = (PyArrayObject *)PyArray_FROMANY(ko, NPY_FLOAT64, 2, 2, NPY_ARRAY_CARRAY_RO);
    if (!k) return NULL;
    if (PyArray_DIM(k, 0) != N || PyArray_DIM(k, 1) != 5) {
        PyErr_Format(PyExc_ValueError, "kept tries must have shape (%d, 5) (one row per node), got (%zd, %zd)",
                     (int)N, PyArray_DIM(k, 0), PyArray_DIM(k, 1));
        Py_DECREF(k);
        return NULL;
    }
    topomap_ptram_try *kept = PyMem_Malloc(((size_t)N + 1) * sizeof *kept);
    const double *row = PyArray_DATA(k);
    int bad = 0;
    for (int32_t n = 0; kept && n < N && !bad; n++, row += 5) {
        kept[n] = (topomap_ptram_try){id_of(row[0], &bad), id_of(row[1], &bad), id_of(row[2], &bad), row[3], row[4]};
        if (bad) PyErr_Format(PyExc_ValueError, "kept tries row %d: u, r, m must be integers", (int)n);
    }
    Py_DECREF(k);
    if (!kept || bad) {
        if (!kept) PyErr_NoMemory();
        PyMem_Free(kept);
        return NULL;
    }
    int applied = 0, rc = state_enter(self) ? 1 : 0;
    if (!rc) rc = topomap_ptram_round_end(self->st, kept, &applied);
    PyMem_Free(kept);
    if (rc == 1) return NULL;
    return state_leave(self, rc, rc ? NULL : PyBool_FromLong(applied));
}

static PyObject *state_finish(PyPtramState *self, PyObject *unused)
{
    (void)unused;
    npy_intp n = PyArray_DIM(self->arrs[0], 0) - 1;
    size_t rounds = 1;
    topomap_ptram_trace tr = {0};
    PyArrayObject *pe_of = (PyArrayObject *)PyArray_SimpleNew(1, &n, NPY_INT32);
    if (!pe_of || state_enter(self)) {
        Py_XDECREF(pe_of);
        return NULL;
    }
    /* the trace's round_mc needs rounds_done + 1 entries: a first call with
       no arrays tells how many */
    topomap_ptram_trace probe = {0};
    int rc = topomap_ptram_finish(self->st, PyArray_DATA(pe_of), &probe);
    PyObject *res = NULL;
    if (!rc) {
        rounds = (size_t)probe.rounds_done + 1;
        tr.group = malloc((size_t)n * sizeof *tr.group + 1);
        tr.order = malloc((size_t)n * sizeof *tr.order + 1);
        tr.unit_node = malloc((size_t)n * sizeof *tr.unit_node + 1);
        tr.round_mc = malloc(rounds * sizeof *tr.round_mc);
        if (tr.group && tr.order && tr.unit_node && tr.round_mc) {
            rc = topomap_ptram_finish(self->st, PyArray_DATA(pe_of), &tr);
            PyObject *d = rc ? NULL : trace_dict(&tr, n);
            res = d ? Py_BuildValue("(NN)", (PyObject *)pe_of, d) : NULL;
            pe_of = res ? NULL : pe_of;
        }
    }
    free(tr.group);
    free(tr.order);
    free(tr.unit_node);
    free(tr.round_mc);
    Py_XDECREF(pe_of);
    if (!rc && !res) {
        self->busy = 0;
        return PyErr_Occurred() ? NULL : PyErr_NoMemory();
    }
    return state_leave(self, rc, res);
}

static PyObject *state_get_group(PyPtramState *self, void *closure)
{
    (void)closure;
    return array_of(topomap_ptram_group(self->st), PyArray_DIM(self->arrs[0], 0) - 1, NPY_INT32, sizeof(int32_t));
}

static PyObject *state_get_nunits(PyPtramState *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(topomap_ptram_nunits(self->st));
}

static PyObject *state_get_nnodes(PyPtramState *self, void *closure)
{
    (void)closure;
    return PyLong_FromLong(topomap_ptram_nnodes(self->st));
}

static PyMethodDef state_methods[] = {
    {"greedy_next", (PyCFunction)state_greedy_next, METH_NOARGS,
     "greedy_next() -> (unit, needs_scores); unit = -1 when every unit is placed"},
    {"greedy_score", (PyCFunction)state_greedy_score, METH_VARARGS,
     "greedy_score(unit, nodes) -> float64 hybrid score of unit on each node (NaN: not free)"},
    {"greedy_place", (PyCFunction)state_greedy_place, METH_VARARGS,
     "greedy_place(unit, scores) -> None; scores: one per allocation node, or None when not needed"},
    {"round_begin", (PyCFunction)state_round_begin, METH_NOARGS, "round_begin() -> True if a round is open"},
    {"leader_search", (PyCFunction)state_leader_search, METH_VARARGS,
     "leader_search(nodes) -> float64 (len(nodes), 5) rows (u, r, m, mc, hot), u = -1: nothing kept"},
    {"round_end", (PyCFunction)state_round_end, METH_VARARGS,
     "round_end(kept) -> True if a swap was applied; kept: (nnodes, 5) rows of every node"},
    {"finish", (PyCFunction)state_finish, METH_NOARGS, "finish() -> (pe_of, trace dict as map_ptram's)"},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef state_getset[] = {
    {"group", (getter)state_get_group, NULL, "unit of every process (int32)", NULL},
    {"nunits", (getter)state_get_nunits, NULL, "number of units", NULL},
    {"nnodes", (getter)state_get_nnodes, NULL, "number of allocation nodes", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject PyPtramState_Type = {
    PyVarObject_HEAD_INIT(NULL, 0).tp_name = "topomap._core.PtramState",
    .tp_basicsize = sizeof(PyPtramState),
    .tp_dealloc = (destructor)state_dealloc,
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "PTRAM's stepwise state (map_ptram.h); created by ptram_state(...)",
    .tp_methods = state_methods,
    .tp_getset = state_getset,
};

PyObject *pytopomap_ptram_state(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"machine", "indptr", "indices", "bytes", "alloc", "capacity", "seed", "weights",
                             "k", "rounds", "partition", "plateau", "candidates", "group", NULL};
    PyObject *mo, *ip, *ix, *by, *ao, *wo = Py_None, *go = Py_None;
    long capacity, k = TOPOMAP_PTRAM_DEFAULT_K, rounds = 10, partition = 1, plateau = 0, candidates = -1;
    unsigned long long seed = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOl|KOlllllO", kwlist, &mo, &ip, &ix, &by, &ao, &capacity, &seed,
                                     &wo, &k, &rounds, &partition, &plateau, &candidates, &go))
        return NULL;
    if (PyType_Ready(&PyPtramState_Type) < 0) return NULL;
    if (capacity < 1 || capacity > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "capacity = %ld must be a positive 32-bit integer", capacity);
        return NULL;
    }
    topomap_ptram_options opt;
    if (options_of(wo, k, rounds, partition, plateau, candidates, &opt)) return NULL;
    opt.run.seed = (uint64_t)seed;
    PyPtramState *obj = PyObject_New(PyPtramState, &PyPtramState_Type);
    if (!obj) return NULL;
    obj->st = NULL;
    obj->busy = 0;
    Py_INCREF(mo);
    obj->machine = mo;
    for (int i = 0; i < 4; i++) obj->arrs[i] = NULL;
    topomap_pattern p;
    PyArrayObject *group = NULL;
    const topomap_machine *m;
    if (!(obj->arrs[3] = pytopomap_machine_alloc(mo, ao, &m)) || pytopomap_pattern(ip, ix, by, &p, obj->arrs) ||
        (go != Py_None && !(group = pytopomap_array(go, NPY_INT32, p.n, "group (one unit per process)")))) {
        Py_DECREF(obj);
        return NULL;
    }
    npy_intp na = PyArray_DIM(obj->arrs[3], 0);
    int rc;
    const int32_t *gp = group ? PyArray_DATA(group) : NULL;
    Py_BEGIN_ALLOW_THREADS
    rc = topomap_ptram_begin(m, &p, PyArray_DATA(obj->arrs[3]), (int32_t)na,
                             (int32_t)capacity, &opt, gp, &obj->st);
    Py_END_ALLOW_THREADS
    Py_XDECREF(group);
    if (rc) {
        Py_DECREF(obj);
        return pytopomap_raise(rc);
    }
    return (PyObject *)obj;
}

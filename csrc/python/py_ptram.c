/* PTRAM (map_ptram.c) for Python: options in, pe_of out, and on request
   the trace of what each step did. */
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

PyObject *pytopomap_map_ptram(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"machine", "indptr", "indices", "bytes", "alloc", "capacity", "seed", "weights",
                             "k", "rounds", "partition", "plateau", "progress", "trace", NULL};
    PyObject *mo, *ip, *ix, *by, *ao, *wo = Py_None, *po = Py_None;
    long capacity, k = TOPOMAP_PTRAM_DEFAULT_K, rounds = 10, partition = 1, plateau = 0;
    unsigned long long seed = 0;
    int want_trace = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OOOOOl|KOllllOp", kwlist, &mo, &ip, &ix, &by, &ao, &capacity, &seed,
                                     &wo, &k, &rounds, &partition, &plateau, &po, &want_trace))
        return NULL;
    if (pytopomap_progress_check(po)) return NULL;
    topomap_ptram_options opt;
    topomap_ptram_options_init(&opt);
    double wbuf[4];
    const double *w;
    if (pytopomap_weights(wo, wbuf, &w)) return NULL;
    if (w) memcpy(opt.weights, w, sizeof opt.weights);
    /* out-of-range values reach the core, whose message names the option */
    opt.k = k < INT32_MIN ? INT32_MIN : k > INT32_MAX ? INT32_MAX : (int32_t)k;
    opt.rounds = rounds < INT32_MIN ? INT32_MIN : rounds > INT32_MAX ? INT32_MAX : (int32_t)rounds;
    opt.partition = partition == 0 || partition == 1 ? (int32_t)partition : -1;
    opt.plateau = plateau == 0 || plateau == 1 ? (int32_t)plateau : -1;
    pytopomap_map_call c;
    topomap_ptram_trace tr = {0};
    PyObject *out = NULL, *res = NULL;
    int rc = 0;
    if (pytopomap_map_call_init(&c, mo, ip, ix, by, ao, capacity)) goto cleanup;
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
    pytopomap_progress pc = {po, NULL};
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

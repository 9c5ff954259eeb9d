/* Two-opt and annealed rank placement for collectives (twoopt_search.c) for
   Python: the schedule arrives flattened (stage offsets, src, dst, count). */
#include "glue.h"
#include "topomap/twoopt.h"

typedef struct {
    const topomap_machine *m;
    topomap_twoopt_schedule s;
    PyArrayObject *arrs[5]; /* stage_ptr, src, dst, count, pe_of (a copy) */
} twoopt_args;

static void args_free(twoopt_args *a)
{
    for (int i = 0; i < 5; i++) Py_XDECREF(a->arrs[i]);
}

/* 0, or -1 with an exception; arrs[4] is a fresh int32 copy of pe_of. */
static int args_init(twoopt_args *a, PyObject *mo, long nranks, PyObject *ptr, PyObject *src, PyObject *dst,
                     PyObject *count, PyObject *pe_of)
{
    memset(a, 0, sizeof *a);
    if (!PyObject_TypeCheck(mo, &PyTopomapMachine_Type)) {
        PyErr_SetString(PyExc_TypeError, "machine must be a topomap._core.Machine");
        return -1;
    }
    a->m = ((PyTopomapMachine *)mo)->m;
    if (nranks < 1 || nranks > INT32_MAX) {
        PyErr_Format(PyExc_ValueError, "two-opt needs 1 to 2^31 - 1 ranks, got n = %ld", nranks);
        return -1;
    }
    if (!(a->arrs[0] = pytopomap_array(ptr, NPY_INT64, -1, "stage_ptr"))) return -1;
    npy_intp nstages = PyArray_DIM(a->arrs[0], 0) - 1;
    if (nstages < 0 || nstages > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "stage_ptr needs 1 to 2^31 entries");
        return -1;
    }
    npy_intp nu = ((const int64_t *)PyArray_DATA(a->arrs[0]))[nstages];
    if (nu < 0) {
        PyErr_SetString(PyExc_ValueError, "stage_ptr must end with the number of unicasts");
        return -1;
    }
    if (!(a->arrs[1] = pytopomap_array(src, NPY_INT32, nu, "src")) ||
        !(a->arrs[2] = pytopomap_array(dst, NPY_INT32, nu, "dst")) ||
        !(a->arrs[3] = pytopomap_array(count, NPY_INT32, nu, "count")))
        return -1;
    PyArrayObject *given = pytopomap_array(pe_of, NPY_INT32, nranks, "pe_of");
    if (!given) return -1;
    a->arrs[4] = (PyArrayObject *)PyArray_NewCopy(given, NPY_CORDER);
    Py_DECREF(given);
    if (!a->arrs[4]) return -1;
    a->s = (topomap_twoopt_schedule){(int32_t)nranks, (int32_t)nstages, PyArray_DATA(a->arrs[0]),
                                     PyArray_DATA(a->arrs[1]), PyArray_DATA(a->arrs[2]), PyArray_DATA(a->arrs[3])};
    return 0;
}

PyObject *pytopomap_twoopt_cost(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *mo, *ptr, *src, *dst, *count, *pe;
    long nranks;
    int objective;
    if (!PyArg_ParseTuple(args, "OlOOOOOi", &mo, &nranks, &ptr, &src, &dst, &count, &pe, &objective)) return NULL;
    twoopt_args a;
    int64_t cost = 0;
    int rc = 0;
    if (!args_init(&a, mo, nranks, ptr, src, dst, count, pe)) {
        Py_BEGIN_ALLOW_THREADS
        rc = topomap_twoopt_cost(a.m, &a.s, PyArray_DATA(a.arrs[4]), objective, &cost);
        Py_END_ALLOW_THREADS
    }
    args_free(&a);
    if (PyErr_Occurred()) return NULL;
    return rc ? pytopomap_raise(rc) : PyLong_FromLongLong(cost);
}

PyObject *pytopomap_twoopt(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"machine", "nranks", "stage_ptr", "src", "dst", "count", "pe_of", "objective",
                             "iterations", "t0", "t1", "trace_every", "seed", "progress", "what", NULL};
    PyObject *mo, *ptr, *src, *dst, *count, *pe, *po = Py_None;
    long nranks;
    long long iterations = 0, trace_every = 0;
    unsigned long long seed = 0;
    int objective = TOPOMAP_TWOOPT_HOPS;
    double t0 = 0, t1 = 0;
    const char *what = "two-opt";
    if (!PyArg_ParseTupleAndKeywords(args, kw, "OlOOOOO|iLddLKOs", kwlist, &mo, &nranks, &ptr, &src, &dst, &count,
                                     &pe, &objective, &iterations, &t0, &t1, &trace_every, &seed, &po, &what))
        return NULL;
    if (pytopomap_progress_check(po)) return NULL;
    if (iterations < 0 || trace_every < 0) {
        PyErr_SetString(PyExc_ValueError, "iterations and trace_every must be >= 0");
        return NULL;
    }
    twoopt_args a;
    PyArrayObject *trace = NULL;
    int64_t initial = 0, cost = 0, accepted = 0;
    int rc = 0;
    if (!args_init(&a, mo, nranks, ptr, src, dst, count, pe)) {
        npy_intp ntrace = trace_every ? (npy_intp)(iterations / trace_every + 1) : 0;
        trace = (PyArrayObject *)PyArray_SimpleNew(1, &ntrace, NPY_INT64);
        if (trace) {
            topomap_twoopt_options opt = {objective, (int64_t)iterations, t0, t1, (int64_t)trace_every};
            pytopomap_progress pc = {po, NULL, what};
            topomap_run_options run = {(uint64_t)seed, pytopomap_progress_cb, &pc};
            pc.ts = PyEval_SaveThread();
            rc = topomap_twoopt_search(a.m, &a.s, &opt, &run, PyArray_DATA(a.arrs[4]), &initial, &cost, &accepted,
                                       ntrace ? PyArray_DATA(trace) : NULL);
            PyEval_RestoreThread(pc.ts);
        }
    }
    PyObject *res = NULL;
    if (PyErr_Occurred()) {
        /* the progress callback's exception, or one from the arguments */
    } else if (rc) {
        pytopomap_raise(rc);
    } else {
        res = Py_BuildValue("OLLLO", a.arrs[4], (long long)initial, (long long)cost, (long long)accepted, trace);
    }
    Py_XDECREF(trace);
    args_free(&a);
    return res;
}

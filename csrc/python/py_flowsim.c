/* topomap._core.flowsim: the flow-level simulator (flowsim.c) for Python. */
#include "glue.h"
#include "topomap/flowsim.h"

enum { NARR = 9 };

PyObject *pytopomap_flowsim(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"machine", "src_pe",   "dst_pe",   "bytes",     "latency", "cap",
                             "stage",   "src_rank", "dst_rank", "bandwidth", "nstages", "nranks",
                             "sync",    "iterations", "share",  "progress",  NULL};
    static const char *names[NARR] = {"src_pe", "dst_pe", "bytes", "latency", "cap",
                                      "stage",  "src_rank", "dst_rank", "bandwidth"};
    static const int types[NARR] = {NPY_INT32,   NPY_INT32, NPY_FLOAT64, NPY_FLOAT64, NPY_FLOAT64,
                                    NPY_INT32,   NPY_INT32, NPY_INT32,   NPY_FLOAT64};
    PyObject *mo, *in[NARR] = {NULL}, *po = Py_None;
    int nstages, nranks, sync, iterations, share;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O!OOOOOOOOOiiiip|O", kwlist, &PyTopomapMachine_Type, &mo, &in[0],
                                     &in[1], &in[2], &in[3], &in[4], &in[5], &in[6], &in[7], &in[8], &nstages,
                                     &nranks, &sync, &iterations, &share, &po))
        return NULL;
    if (pytopomap_progress_check(po)) return NULL;
    const topomap_machine *m = ((PyTopomapMachine *)mo)->m;
    PyArrayObject *a[NARR] = {NULL}, *finish = NULL, *stage_end = NULL, *link_bytes = NULL;
    PyObject *res = NULL;
    npy_intp nflows = -1;
    for (int i = 0; i < NARR; i++) {
        /* every flow array has the length of src_pe; bandwidth one entry per link */
        npy_intp len = i == 8 ? topomap_machine_nlinks(m) : nflows;
        a[i] = pytopomap_array(in[i], types[i], len, names[i]);
        if (!a[i]) goto cleanup;
        if (i == 0) nflows = PyArray_DIM(a[0], 0);
    }
    if (iterations < 1 || nstages < 1) {
        PyErr_Format(PyExc_ValueError, "iterations %d and nstages %d must be >= 1", iterations, nstages);
        goto cleanup;
    }
    npy_intp fdims[2] = {iterations, nflows}, sdims[2] = {iterations, nstages}, nl = topomap_machine_nlinks(m);
    finish = (PyArrayObject *)PyArray_SimpleNew(2, fdims, NPY_FLOAT64);
    stage_end = (PyArrayObject *)PyArray_SimpleNew(2, sdims, NPY_FLOAT64);
    link_bytes = (PyArrayObject *)PyArray_SimpleNew(1, &nl, NPY_FLOAT64);
    if (!finish || !stage_end || !link_bytes) goto cleanup;
    topomap_flows fl = {nflows,         PyArray_DATA(a[0]), PyArray_DATA(a[1]), PyArray_DATA(a[2]),
                        PyArray_DATA(a[3]), PyArray_DATA(a[4]), PyArray_DATA(a[5]), PyArray_DATA(a[6]),
                        PyArray_DATA(a[7]), nstages,         nranks};
    topomap_flowsim_options opt = {PyArray_DATA(a[8]), sync, iterations, share};
    topomap_flowsim_result r = {PyArray_DATA(finish), PyArray_DATA(stage_end), PyArray_DATA(link_bytes), 0, 0, 0};
    pytopomap_progress pc = {po, NULL, "flowsim"};
    topomap_run_options run = {0, pytopomap_progress_cb, &pc};
    pc.ts = PyEval_SaveThread();
    int rc = topomap_flowsim(m, &fl, &opt, &run, &r);
    PyEval_RestoreThread(pc.ts);
    if (rc) {
        if (!PyErr_Occurred()) pytopomap_raise(rc);
        goto cleanup;
    }
    res = Py_BuildValue("{s:O,s:O,s:d,s:L,s:L,s:O}", "finish", finish, "stage_end", stage_end, "makespan", r.makespan,
                        "events", (long long)r.events, "recomputes", (long long)r.recomputes, "link_bytes",
                        link_bytes);
cleanup:
    for (int i = 0; i < NARR; i++) Py_XDECREF(a[i]);
    Py_XDECREF(finish);
    Py_XDECREF(stage_end);
    Py_XDECREF(link_bytes);
    return res;
}

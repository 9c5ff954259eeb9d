/* The progress callback every long core call gets from the glue: it takes
   the GIL back only to check for Ctrl-C (PyErr_CheckSignals) and to call the
   user's progress function, then releases it again. */
#include "glue.h"

int pytopomap_progress_cb(void *ctx, double fraction)
{
    pytopomap_progress *p = ctx;
    int stop = 0;
    PyEval_RestoreThread(p->ts);
    if (PyErr_CheckSignals() < 0) {
        stop = 1;
    } else if (p->callable && p->callable != Py_None) {
        PyObject *r = PyObject_CallFunction(p->callable, "d", fraction);
        stop = r ? PyObject_IsTrue(r) : 1;
        if (stop < 0) stop = 1;
        Py_XDECREF(r);
    }
    p->ts = PyEval_SaveThread();
    return stop;
}

int pytopomap_progress_check(PyObject *callable)
{
    if (callable != Py_None && !PyCallable_Check(callable)) {
        PyErr_SetString(PyExc_TypeError, "progress must be callable or None");
        return -1;
    }
    return 0;
}

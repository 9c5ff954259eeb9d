/* The progress callback every long core call gets from the glue: it takes
   the GIL back only to check for Ctrl-C (PyErr_CheckSignals) and to call the
   user's progress function, then releases it again.

   It is also the one place that decides which exception a stop raises, as
   only here is it known why the call stops: Ctrl-C leaves the
   KeyboardInterrupt of the signal handler, a raising callable leaves its own
   exception, and a true return sets topomap.Cancelled naming p->what and the
   fraction.  The core then returns TOPOMAP_ECANCELED with the exception
   already set. */
#include "glue.h"

static void set_cancelled(const char *what, double fraction)
{
    PyObject *mod = PyImport_ImportModule("topomap.errors");
    PyObject *cls = mod ? PyObject_GetAttrString(mod, "Cancelled") : NULL;
    PyObject *exc = cls ? PyObject_CallMethod(cls, "by_progress", "sd", what ? what : "the call", fraction) : NULL;
    if (exc) PyErr_SetObject(cls, exc);
    Py_XDECREF(exc);
    Py_XDECREF(cls);
    Py_XDECREF(mod);
}

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
        Py_XDECREF(r);
        if (stop < 0) stop = 1;
        else if (stop && !PyErr_Occurred()) set_cancelled(p->what, fraction);
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

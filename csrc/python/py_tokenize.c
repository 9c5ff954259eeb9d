/* Number parsing of the pattern file readers for Python (topomap.io._text). */
#include "glue.h"
#include "topomap/tokenize.h"

/* parse_numbers(data: bytes, integer: bool, commas: bool)
   -> (values, line_counts) | (None, offset of the bad token) | (False, offset) when another
   converter must decide. */
PyObject *pytopomap_parse_numbers(PyObject *self, PyObject *args)
{
    (void)self;
    const char *buf;
    Py_ssize_t len;
    int integer, commas;
    if (!PyArg_ParseTuple(args, "y#pp", &buf, &len, &integer, &commas)) return NULL;
    int64_t ntokens, nlines, bad = -1;
    Py_BEGIN_ALLOW_THREADS
    topomap_count_tokens(buf, (int64_t)len, commas, &ntokens, &nlines);
    Py_END_ALLOW_THREADS
    npy_intp nt = (npy_intp)ntokens, nl = (npy_intp)nlines;
    PyArrayObject *values = (PyArrayObject *)PyArray_SimpleNew(1, &nt, integer ? NPY_INT64 : NPY_FLOAT64);
    PyArrayObject *counts = (PyArrayObject *)PyArray_SimpleNew(1, &nl, NPY_INT64);
    if (!values || !counts) {
        Py_XDECREF(values);
        Py_XDECREF(counts);
        return NULL;
    }
    void *v = PyArray_DATA(values);
    int64_t *c = PyArray_DATA(counts);
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = topomap_parse_numbers(buf, (int64_t)len, integer, commas, v, c, &bad);
    Py_END_ALLOW_THREADS
    if (rc) {
        Py_DECREF(values);
        Py_DECREF(counts);
        return Py_BuildValue("(OL)", rc == TOPOMAP_EINVAL ? Py_None : Py_False, (long long)bad);
    }
    return Py_BuildValue("(NN)", values, counts);
}

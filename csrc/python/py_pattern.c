/* Pattern construction and checks of pattern.c for Python (topomap/pattern.py, topomap.io). */
#include "glue.h"

/* An id array as int32 when it already is one, else as int64 (new reference). */
static PyArrayObject *pytopomap_ids(PyObject *obj, int want64, const char *what)
{
    if (!want64 && PyArray_Check(obj) && PyArray_TYPE((PyArrayObject *)obj) == NPY_INT32)
        return pytopomap_array(obj, NPY_INT32, -1, what);
    return pytopomap_array(obj, NPY_INT64, -1, what);
}

static int pytopomap_is_int32(PyObject *obj)
{
    return PyArray_Check(obj) && PyArray_TYPE((PyArrayObject *)obj) == NPY_INT32;
}

/* The output array for `in` (a converted or owned input is taken over), else a new one.  With
   `writes` the build writes into it and may shrink it: only an array owning its writeable data. */
static PyArrayObject *pytopomap_output(PyArrayObject *in, PyObject *given, int take, int writes, int type,
                                       npy_intp len)
{
    if (in && take && ((PyObject *)in != given || take > 1) && PyArray_TYPE(in) == type &&
        PyArray_DIM(in, 0) == len &&
        (!writes || (PyArray_ISWRITEABLE(in) && PyArray_CHKFLAGS(in, NPY_ARRAY_OWNDATA)))) {
        Py_INCREF(in);
        return in;
    }
    return (PyArrayObject *)PyArray_SimpleNew(1, &len, type);
}

/* pattern_build(n, src, dst, bytes, msgs, row_ptr, owned)
   -> (indptr, indices, bytes, msgs | None, self_entries) | index of the first invalid entry.
   src is None when row_ptr is given; `owned`: the caller gives its arrays away (the result
   may be them when the entries are canonical). */
PyObject *pytopomap_pattern_build(PyObject *self, PyObject *args)
{
    (void)self;
    long n;
    int owned;
    PyObject *so, *dobj, *bo, *mo, *ro, *res = NULL;
    if (!PyArg_ParseTuple(args, "lOOOOOp", &n, &so, &dobj, &bo, &mo, &ro, &owned)) return NULL;
    if (n < 1 || n > INT32_MAX) return PyErr_Format(PyExc_ValueError, "n=%ld is outside 1 .. 2^31-1", n);
    PyArrayObject *src = NULL, *dst = NULL, *byts = NULL, *msgs = NULL, *rows = NULL;
    PyArrayObject *indptr = NULL, *oi = NULL, *ob = NULL, *om = NULL;
    int wide = !(pytopomap_is_int32(dobj) && (so == Py_None || pytopomap_is_int32(so)));
    dst = pytopomap_ids(dobj, wide, "dst");
    if (!dst) goto cleanup;
    npy_intp nnz = PyArray_DIM(dst, 0);
    if (so != Py_None && !(src = pytopomap_ids(so, wide, "src"))) goto cleanup;
    if (src && PyArray_DIM(src, 0) != nnz) {
        PyErr_SetString(PyExc_ValueError, "src and dst differ in length");
        goto cleanup;
    }
    if (!(byts = pytopomap_array(bo, NPY_FLOAT64, nnz, "bytes"))) goto cleanup;
    if (mo != Py_None && !(msgs = pytopomap_array(mo, NPY_FLOAT64, nnz, "msgs"))) goto cleanup;
    if (ro != Py_None) {
        if (!(rows = pytopomap_array(ro, NPY_INT64, n + 1, "row_ptr"))) goto cleanup;
        const int64_t *rp = PyArray_DATA(rows);
        int ok = rp[0] == 0 && rp[n] == nnz;
        for (long i = 0; ok && i < n; i++) ok = rp[i + 1] >= rp[i];
        if (!ok) {
            PyErr_SetString(PyExc_ValueError, "row_ptr must start at 0, not decrease and end at the number of entries");
            goto cleanup;
        }
    } else if (!src) {
        PyErr_SetString(PyExc_ValueError, "give src or row_ptr");
        goto cleanup;
    }
    topomap_edges e = {nnz, src ? PyArray_DATA(src) : NULL, PyArray_DATA(dst), wide, PyArray_DATA(byts),
                       msgs ? PyArray_DATA(msgs) : NULL, rows ? PyArray_DATA(rows) : NULL};
    topomap_edges_info info;
    Py_BEGIN_ALLOW_THREADS
    topomap_edges_check((int32_t)n, &e, &info);
    Py_END_ALLOW_THREADS
    if (info.first_bad >= 0) {
        res = PyLong_FromLongLong(info.first_bad);
        goto cleanup;
    }
    npy_intp np1 = n + 1;
    indptr = (PyArrayObject *)PyArray_SimpleNew(1, &np1, NPY_INT64);
    /* the outputs are the input arrays when the build allows it and they are the caller's to
       give or copies made here; not with self entries, whose bytes the caller sums from its
       inputs afterwards */
    int take = topomap_pattern_build_in_place(&e, &info) && (info.canonical || !info.self_entries) ? (owned ? 2 : 1)
                                                                                                    : 0;
    int writes = !info.canonical;
    oi = pytopomap_output(wide ? NULL : dst, dobj, take, writes, NPY_INT32, nnz);
    ob = pytopomap_output(byts, bo, take, writes, NPY_FLOAT64, nnz);
    if (msgs) om = pytopomap_output(msgs, mo, take, writes, NPY_FLOAT64, nnz);
    if (!indptr || !oi || !ob || (msgs && !om)) goto cleanup;
    int64_t out = 0;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = topomap_pattern_build((int32_t)n, &e, &info, PyArray_DATA(indptr), PyArray_DATA(oi), PyArray_DATA(ob),
                               om ? PyArray_DATA(om) : NULL, &out);
    Py_END_ALLOW_THREADS
    if (rc) {
        pytopomap_raise(rc);
        goto cleanup;
    }
    PyArrayObject *outs[3] = {oi, ob, om};
    if (out < nnz && pytopomap_shrink(outs, 3, (npy_intp)out)) goto cleanup;
    res = Py_BuildValue("(OOOOL)", indptr, oi, ob, om ? (PyObject *)om : Py_None, (long long)info.self_entries);
cleanup:
    Py_XDECREF(src);
    Py_XDECREF(dst);
    Py_XDECREF(byts);
    Py_XDECREF(msgs);
    Py_XDECREF(rows);
    Py_XDECREF(indptr);
    Py_XDECREF(oi);
    Py_XDECREF(ob);
    Py_XDECREF(om);
    return res;
}

/* pattern_is_canonical(n, indptr int64, indices int32, bytes float64) -> bool */
PyObject *pytopomap_pattern_is_canonical(PyObject *self, PyObject *args)
{
    (void)self;
    long n;
    PyObject *po, *io, *bo, *res = NULL;
    if (!PyArg_ParseTuple(args, "lOOO", &n, &po, &io, &bo)) return NULL;
    if (n < 1 || n > INT32_MAX) Py_RETURN_FALSE;
    PyArrayObject *ip = pytopomap_array(po, NPY_INT64, n + 1, "indptr");
    PyArrayObject *ix = ip ? pytopomap_array(io, NPY_INT32, -1, "indices") : NULL;
    PyArrayObject *by = ix ? pytopomap_array(bo, NPY_FLOAT64, PyArray_DIM(ix, 0), "bytes") : NULL;
    if (by) {
        int ok;
        Py_BEGIN_ALLOW_THREADS
        ok = topomap_pattern_is_canonical((int32_t)n, PyArray_DATA(ip), PyArray_DIM(ix, 0), PyArray_DATA(ix),
                                          PyArray_DATA(by));
        Py_END_ALLOW_THREADS
        res = PyBool_FromLong(ok);
    }
    Py_XDECREF(ip);
    Py_XDECREF(ix);
    Py_XDECREF(by);
    return res;
}

/* first_outside(a int64, lo, hi) -> index of the first value outside [lo, hi), or -1 */
PyObject *pytopomap_first_outside(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *ao;
    long long lo, hi;
    if (!PyArg_ParseTuple(args, "OLL", &ao, &lo, &hi)) return NULL;
    PyArrayObject *a = pytopomap_array(ao, NPY_INT64, -1, "values");
    if (!a) return NULL;
    int64_t at;
    Py_BEGIN_ALLOW_THREADS
    at = topomap_first_outside(PyArray_DATA(a), PyArray_DIM(a, 0), lo, hi);
    Py_END_ALLOW_THREADS
    Py_DECREF(a);
    return PyLong_FromLongLong(at);
}

/* first_bad_weight(w float64) -> index of the first negative, NaN or infinite value, or -1 */
PyObject *pytopomap_first_bad_weight(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *wo;
    if (!PyArg_ParseTuple(args, "O", &wo)) return NULL;
    PyArrayObject *w = pytopomap_array(wo, NPY_FLOAT64, -1, "weights");
    if (!w) return NULL;
    int64_t at;
    Py_BEGIN_ALLOW_THREADS
    at = topomap_first_bad_weight(PyArray_DATA(w), PyArray_DIM(w, 0));
    Py_END_ALLOW_THREADS
    Py_DECREF(w);
    return PyLong_FromLongLong(at);
}

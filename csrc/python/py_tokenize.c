/* Number parsing of the pattern file readers for Python (topomap.io._text).  The text is
   any buffer (bytes, mmap, memoryview); the GIL is released for both passes. */
#include "glue.h"
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/tokenize.h"

/* The widest vector instructions the scanners may use: TOPOMAP_SIMD=none|sse2|avx2 in the
   environment lowers the CPU's best (to compare the paths, or to rule one out), read at the
   first scan: 0, or -1 with a ValueError naming a value that is none of these. */
static int pytopomap_simd_limit(int *limit)
{
    static int cached = -1; /* -1: not read yet */
    if (cached < 0) {
        static const char *const names[] = {"none", "sse2", "avx2"};
        const char *v = getenv("TOPOMAP_SIMD");
        int level = TOPOMAP_SCAN_SIMD_AVX2;
        if (v && *v) {
            for (level = 0; level < 3 && strcmp(v, names[level]); level++) {
            }
            if (level == 3) {
                PyErr_Format(PyExc_ValueError, "environment variable TOPOMAP_SIMD='%s' must be none, sse2 or avx2", v);
                return -1;
            }
        }
        cached = level;
    }
    *limit = cached;
    return 0;
}

/* The text is one contiguous buffer, and *limit the vector instructions to use; -1 with an
   exception. */
static int pytopomap_text_ready(Py_buffer *view, int *limit)
{
    if (!PyBuffer_IsContiguous(view, 'C')) {
        PyErr_SetString(PyExc_TypeError, "the text must be a contiguous buffer");
        return -1;
    }
    return pytopomap_simd_limit(limit);
}

static int pytopomap_scan_start(Py_buffer *view, int commas, int comment, int whole_line, int chunks,
                                topomap_scan *s)
{
    int limit;
    if (pytopomap_text_ready(view, &limit)) return -1;
    Py_BEGIN_ALLOW_THREADS
    topomap_scan_init(s, view->buf, (int64_t)view->len, commas, comment, whole_line, chunks, limit);
    Py_END_ALLOW_THREADS
    return 0;
}

/* scan_numbers(data, integer, commas, comment=-1, whole_line=False, counts=True, chunks=0)
   -> (values, line_counts | None, filled_lines, min_width, max_width, comment_lines)
    | (None, offset of the first bad token) | (False, offset) when another converter must decide. */
PyObject *pytopomap_scan_numbers(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"data", "integer", "commas", "comment", "whole_line", "counts", "chunks", NULL};
    Py_buffer view;
    int integer, commas, comment = -1, whole_line = 0, want_counts = 1, chunks = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*pp|ippi", kwlist, &view, &integer, &commas, &comment,
                                     &whole_line, &want_counts, &chunks))
        return NULL;
    PyObject *res = NULL;
    PyArrayObject *values = NULL, *counts = NULL;
    topomap_scan *s = PyMem_Malloc(sizeof *s);
    if (!s) {
        PyErr_NoMemory();
        goto cleanup;
    }
    if (pytopomap_scan_start(&view, commas, comment, whole_line, chunks, s)) goto cleanup;
    npy_intp nt = (npy_intp)s->tokens[s->nchunks], nl = (npy_intp)s->lines[s->nchunks];
    values = (PyArrayObject *)PyArray_SimpleNew(1, &nt, NPY_INT64);
    if (want_counts) counts = (PyArrayObject *)PyArray_SimpleNew(1, &nl, NPY_INT64);
    if (!values || (want_counts && !counts)) goto cleanup;
    topomap_scan_info info;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = topomap_scan_numbers(s, integer, PyArray_DATA(values), counts ? PyArray_DATA(counts) : NULL, &info);
    Py_END_ALLOW_THREADS
    if (rc == TOPOMAP_EINVAL || rc == TOPOMAP_ENOTSUP) {
        res = Py_BuildValue("(OL)", rc == TOPOMAP_EINVAL ? Py_None : Py_False, (long long)info.bad_offset);
        goto cleanup;
    }
    if (rc) {
        pytopomap_raise(rc);
        goto cleanup;
    }
    if (info.is_float) {
        PyArrayObject *as_float = (PyArrayObject *)PyArray_View(values, PyArray_DescrFromType(NPY_FLOAT64), NULL);
        if (!as_float) goto cleanup;
        Py_DECREF(values);
        values = as_float;
    }
    res = Py_BuildValue("(OOLLLL)", values, counts ? (PyObject *)counts : Py_None, (long long)info.filled_lines,
                        (long long)info.min_width, (long long)info.max_width, (long long)info.comment_lines);
cleanup:
    Py_XDECREF(values);
    Py_XDECREF(counts);
    PyMem_Free(s);
    PyBuffer_Release(&view);
    return res;
}

/* Columns of `rows` rows of the types' dtypes into cols (new references) and data; -1 with
   an exception (cols released) when one cannot be had. */
static int pytopomap_table_columns(const char *types, int width, npy_intp rows, PyArrayObject **cols, void **data)
{
    for (int j = 0; j < width; j++) {
        int type = types[j] == 'i' ? NPY_INT64 : types[j] == 'n' ? NPY_INT32 : NPY_FLOAT64;
        if (!(cols[j] = (PyArrayObject *)PyArray_SimpleNew(1, &rows, type))) {
            for (int i = 0; i < j; i++) Py_CLEAR(cols[i]);
            return -1;
        }
        data[j] = PyArray_DATA(cols[j]);
    }
    return 0;
}

/* scan_table(data, types, commas, comment=-1, whole_line=False, chunks=0)
   -> [column arrays] | None when the text is not a table of len(types) numbers per line
   of those types ('i' int64, 'n' int32 in [0, 2^31), 'f' float64, 'd' float64 of an integer). */
PyObject *pytopomap_scan_table(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"data", "types", "commas", "comment", "whole_line", "chunks", NULL};
    Py_buffer view;
    const char *types;
    int commas, comment = -1, whole_line = 0, chunks = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*sp|ipi", kwlist, &view, &types, &commas, &comment, &whole_line,
                                     &chunks))
        return NULL;
    PyObject *res = NULL;
    PyArrayObject *cols[16] = {NULL};
    void *data[16];
    int width = (int)strlen(types);
    topomap_scan *s = PyMem_Malloc(sizeof *s);
    if (!s) {
        PyErr_NoMemory();
        goto cleanup;
    }
    if (width < 1 || width > 16 || strspn(types, "infd") != (size_t)width) {
        PyErr_Format(PyExc_ValueError, "column types '%s' must be 1 to 16 of i, n, f, d", types);
        goto cleanup;
    }
    int limit;
    if (pytopomap_text_ready(&view, &limit)) goto cleanup;
    /* columns of room for the most rows the text could hold: both passes then run at once,
       and the pages never written are never touched (the columns shrink in place after);
       where that much address space is refused (strict overcommit), the two passes run one
       after the other into columns of the exact size */
    npy_intp room = (npy_intp)topomap_scan_table_capacity((int64_t)view.len, width);
    int piped = pytopomap_table_columns(types, width, room, cols, data) == 0;
    if (!piped) {
        PyErr_Clear();
        if (pytopomap_scan_start(&view, commas, comment, whole_line, chunks, s)) goto cleanup;
        if (pytopomap_table_columns(types, width, (npy_intp)(s->tokens[s->nchunks] / width), cols, data)) goto cleanup;
    }
    topomap_scan_info info;
    int64_t got;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    if (piped)
        rc = topomap_scan_table_text(s, view.buf, (int64_t)view.len, commas, comment, whole_line, chunks, limit, width,
                                     types, data, (int64_t)room, &got, &info);
    else
        rc = topomap_scan_table(s, width, types, data, &got, &info);
    Py_END_ALLOW_THREADS
    if (rc) {
        res = Py_None;
        Py_INCREF(res);
        goto cleanup;
    }
    if (piped && pytopomap_shrink(cols, width, (npy_intp)got)) goto cleanup;
    if (!(res = PyList_New(width))) goto cleanup;
    for (int j = 0; j < width; j++) {
        PyList_SET_ITEM(res, j, (PyObject *)cols[j]);
        cols[j] = NULL;
    }
cleanup:
    for (int j = 0; j < 16; j++) Py_XDECREF(cols[j]);
    PyMem_Free(s);
    PyBuffer_Release(&view);
    return res;
}

/* An int64 or float64 array (new reference) holding a copy of n values. */
static PyArrayObject *pytopomap_copy_out(const void *src, int64_t n, int type)
{
    npy_intp len = (npy_intp)n;
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(1, &len, type);
    if (a && n) memcpy(PyArray_DATA(a), src, (size_t)n * 8);
    return a;
}

/* scan_nonzeros(data, commas, comment=-1, whole_line=False, chunks=0)
   -> (line, col, value, line_counts) of every number that is not zero
    | (None, offset of the first bad token) | (False, offset) when another converter must decide. */
PyObject *pytopomap_scan_nonzeros(PyObject *self, PyObject *args, PyObject *kw)
{
    (void)self;
    static char *kwlist[] = {"data", "commas", "comment", "whole_line", "chunks", NULL};
    Py_buffer view;
    int commas, comment = -1, whole_line = 0, chunks = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "y*p|ipi", kwlist, &view, &commas, &comment, &whole_line, &chunks))
        return NULL;
    PyObject *res = NULL;
    PyArrayObject *counts = NULL, *line = NULL, *col = NULL, *value = NULL;
    topomap_scan_entries found = {0};
    topomap_scan *s = PyMem_Malloc(sizeof *s);
    if (!s) {
        PyErr_NoMemory();
        goto cleanup;
    }
    int limit;
    if (pytopomap_text_ready(&view, &limit)) goto cleanup;
    /* line counts of room for every line the text could hold, as scan_table does; the two
       passes one after the other where that address space is refused */
    npy_intp nl = (npy_intp)topomap_scan_lines_capacity((int64_t)view.len);
    counts = (PyArrayObject *)PyArray_SimpleNew(1, &nl, NPY_INT64);
    int piped = counts != NULL;
    if (!piped) {
        PyErr_Clear();
        if (pytopomap_scan_start(&view, commas, comment, whole_line, chunks, s)) goto cleanup;
        nl = (npy_intp)s->lines[s->nchunks];
        if (!(counts = (PyArrayObject *)PyArray_SimpleNew(1, &nl, NPY_INT64))) goto cleanup;
    }
    topomap_scan_info info;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    if (piped)
        rc = topomap_scan_nonzeros_text(s, view.buf, (int64_t)view.len, commas, comment, whole_line, chunks, limit,
                                        PyArray_DATA(counts), (int64_t)nl, &found, &info);
    else
        rc = topomap_scan_nonzeros(s, PyArray_DATA(counts), &found, &info);
    Py_END_ALLOW_THREADS
    if (!rc && piped && pytopomap_shrink(&counts, 1, (npy_intp)s->lines[s->nchunks])) goto cleanup;
    if (rc == TOPOMAP_EINVAL || rc == TOPOMAP_ENOTSUP) {
        res = Py_BuildValue("(OL)", rc == TOPOMAP_EINVAL ? Py_None : Py_False, (long long)info.bad_offset);
        goto cleanup;
    }
    if (rc) {
        pytopomap_raise(rc);
        goto cleanup;
    }
    line = pytopomap_copy_out(found.line, found.count, NPY_INT64);
    col = pytopomap_copy_out(found.col, found.count, NPY_INT64);
    value = pytopomap_copy_out(found.value, found.count, NPY_FLOAT64);
    if (line && col && value) res = Py_BuildValue("(OOOO)", line, col, value, counts);
cleanup:
    topomap_scan_entries_free(&found);
    Py_XDECREF(line);
    Py_XDECREF(col);
    Py_XDECREF(value);
    Py_XDECREF(counts);
    PyMem_Free(s);
    PyBuffer_Release(&view);
    return res;
}

/* File names of a sequence as file-system bytes: 0, or -1 with an exception.  `keep` holds
   the references; paths[i] points into them. */
static int pytopomap_paths(PyObject *seq, PyObject **keep, const char ***paths, Py_ssize_t *n)
{
    *keep = PySequence_Fast(seq, "paths must be a sequence");
    if (!*keep) return -1;
    *n = PySequence_Fast_GET_SIZE(*keep);
    PyObject *names = PyList_New(*n);
    *paths = PyMem_Malloc((size_t)(*n > 0 ? *n : 1) * sizeof **paths);
    if (!names || !*paths) {
        Py_XDECREF(names);
        Py_CLEAR(*keep);
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < *n; i++) {
        PyObject *b = NULL;
        if (!PyUnicode_FSConverter(PySequence_Fast_GET_ITEM(*keep, i), &b)) {
            Py_DECREF(names);
            Py_CLEAR(*keep);
            PyMem_Free(*paths);
            return -1;
        }
        PyList_SET_ITEM(names, i, b);
        (*paths)[i] = PyBytes_AS_STRING(b);
    }
    Py_SETREF(*keep, names);
    return 0;
}

/* Fill `dict[key]` with a new 1-D array of `type`, one value per record of `size` bytes at
   `field` offset; 0 or -1. */
static int pytopomap_field(PyObject *dict, const char *key, const void *records, int64_t n, size_t size,
                           size_t offset, int type)
{
    npy_intp len = (npy_intp)n;
    PyArrayObject *a = (PyArrayObject *)PyArray_SimpleNew(1, &len, type);
    if (!a) return -1;
    size_t item = (size_t)PyArray_ITEMSIZE(a);
    char *dst = PyArray_DATA(a);
    const char *src = (const char *)records + offset;
    for (int64_t i = 0; i < n; i++) memcpy(dst + (size_t)i * item, src + (size_t)i * size, item);
    int rc = PyDict_SetItemString(dict, key, (PyObject *)a);
    Py_DECREF(a);
    return rc;
}

#define PYTOPOMAP_FIELD(dict, key, recs, n, T, member, type) \
    pytopomap_field(dict, key, recs, n, sizeof(T), offsetof(T, member), type)

/* read_monitoring(paths) -> dict of record arrays | (index of the first bad file, its line) */
PyObject *pytopomap_read_monitoring(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *seq, *keep = NULL, *res = NULL;
    if (!PyArg_ParseTuple(args, "O", &seq)) return NULL;
    const char **paths = NULL;
    Py_ssize_t n;
    if (pytopomap_paths(seq, &keep, &paths, &n)) return NULL;
    topomap_monitoring m;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = topomap_read_monitoring(paths, (int64_t)n, &m);
    Py_END_ALLOW_THREADS
    if (rc) {
        pytopomap_raise(rc);
        goto cleanup;
    }
    if (m.bad_file >= 0) {
        res = Py_BuildValue("(LL)", (long long)m.bad_file, (long long)m.bad_line);
        goto cleanup;
    }
    PyObject *d = PyDict_New();
    if (!d) goto cleanup;
    typedef topomap_monitoring_p2p P;
    typedef topomap_monitoring_part Q;
    if (PYTOPOMAP_FIELD(d, "kind", m.p2p, m.np2p, P, kind, NPY_UINT8) ||
        PYTOPOMAP_FIELD(d, "me", m.p2p, m.np2p, P, me, NPY_INT64) ||
        PYTOPOMAP_FIELD(d, "peer", m.p2p, m.np2p, P, peer, NPY_INT64) ||
        PYTOPOMAP_FIELD(d, "bytes", m.p2p, m.np2p, P, bytes, NPY_FLOAT64) ||
        PYTOPOMAP_FIELD(d, "msgs", m.p2p, m.np2p, P, msgs, NPY_FLOAT64) ||
        PYTOPOMAP_FIELD(d, "file", m.p2p, m.np2p, P, file, NPY_INT32) ||
        PYTOPOMAP_FIELD(d, "part_kind", m.parts, m.nparts, Q, kind, NPY_UINT8) ||
        PYTOPOMAP_FIELD(d, "part_file", m.parts, m.nparts, Q, file, NPY_INT32) ||
        PYTOPOMAP_FIELD(d, "rank", m.parts, m.nparts, Q, rank, NPY_INT64) ||
        PYTOPOMAP_FIELD(d, "part_bytes", m.parts, m.nparts, Q, bytes, NPY_FLOAT64) ||
        PYTOPOMAP_FIELD(d, "part_msgs", m.parts, m.nparts, Q, msgs, NPY_FLOAT64) ||
        PYTOPOMAP_FIELD(d, "name_at", m.parts, m.nparts, Q, name_at, NPY_INT64) ||
        PYTOPOMAP_FIELD(d, "name_len", m.parts, m.nparts, Q, name_len, NPY_INT64) ||
        PYTOPOMAP_FIELD(d, "procs", m.parts, m.nparts, Q, procs, NPY_INT8) ||
        PYTOPOMAP_FIELD(d, "procs_count", m.parts, m.nparts, Q, procs_count, NPY_INT64) ||
        PYTOPOMAP_FIELD(d, "procs_max", m.parts, m.nparts, Q, procs_max, NPY_INT64)) {
        Py_DECREF(d);
        goto cleanup;
    }
    PyObject *names = PyBytes_FromStringAndSize(m.names, (Py_ssize_t)m.names_len);
    if (!names || PyDict_SetItemString(d, "names", names)) {
        Py_XDECREF(names);
        Py_DECREF(d);
        goto cleanup;
    }
    Py_DECREF(names);
    res = d;
cleanup:
    topomap_monitoring_free(&m);
    PyMem_Free(paths);
    Py_XDECREF(keep);
    return res;
}

/* read_dumpi(paths, type_names, type_sizes) -> dict of send record arrays | (first bad file, its line) */
PyObject *pytopomap_read_dumpi(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *seq, *names_obj, *sizes_obj, *keep = NULL, *tkeep = NULL, *res = NULL;
    if (!PyArg_ParseTuple(args, "OOO", &seq, &names_obj, &sizes_obj)) return NULL;
    const char **paths = NULL, **tnames = NULL;
    Py_ssize_t n, nt;
    topomap_dumpi d = {0};
    PyArrayObject *tsizes = NULL;
    if (pytopomap_paths(seq, &keep, &paths, &n)) return NULL;
    if (pytopomap_paths(names_obj, &tkeep, &tnames, &nt)) goto cleanup;
    if (!(tsizes = pytopomap_array(sizes_obj, NPY_INT64, nt, "type_sizes"))) goto cleanup;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    rc = topomap_read_dumpi(paths, (int64_t)n, tnames, PyArray_DATA(tsizes), (int)nt, &d);
    Py_END_ALLOW_THREADS
    if (rc) {
        pytopomap_raise(rc);
        goto cleanup;
    }
    if (d.bad_file >= 0) {
        res = Py_BuildValue("(LL)", (long long)d.bad_file, (long long)d.bad_line);
        goto cleanup;
    }
    PyObject *out = PyDict_New();
    if (!out) goto cleanup;
    typedef topomap_dumpi_send S;
    if (PYTOPOMAP_FIELD(out, "count", d.sends, d.nsends, S, count, NPY_INT64) ||
        PYTOPOMAP_FIELD(out, "size", d.sends, d.nsends, S, size, NPY_INT64) ||
        PYTOPOMAP_FIELD(out, "dest", d.sends, d.nsends, S, dest, NPY_INT64) ||
        PYTOPOMAP_FIELD(out, "comm", d.sends, d.nsends, S, comm, NPY_INT64) ||
        PYTOPOMAP_FIELD(out, "file", d.sends, d.nsends, S, file, NPY_INT32)) {
        Py_DECREF(out);
        goto cleanup;
    }
    res = out;
cleanup:
    topomap_dumpi_free(&d);
    Py_XDECREF(tsizes);
    PyMem_Free(tnames);
    Py_XDECREF(tkeep);
    PyMem_Free(paths);
    Py_XDECREF(keep);
    return res;
}

/* scan_rows(data, n, head, degree, step, weight_first, base, chunks=0) -> (row_ptr, dst, weights)
   | None when the text is not n adjacency lines of that layout (topomap/tokenize.h) */
PyObject *pytopomap_scan_rows(PyObject *self, PyObject *args)
{
    (void)self;
    Py_buffer view;
    long n;
    int head, degree, step, weight_first, chunks = 0;
    long long base;
    if (!PyArg_ParseTuple(args, "y*liiipL|i", &view, &n, &head, &degree, &step, &weight_first, &base, &chunks))
        return NULL;
    PyObject *res = NULL;
    PyArrayObject *row_ptr = NULL, *dst = NULL, *weights = NULL;
    topomap_scan *s = PyMem_Malloc(sizeof *s);
    if (!s) {
        PyErr_NoMemory();
        goto cleanup;
    }
    if (n < 1 || n > INT32_MAX || head < 0 || degree < 0 || degree > 1 || step < 1 || step > 2) {
        PyErr_SetString(PyExc_ValueError, "scan_rows: n, head, degree or step out of range");
        goto cleanup;
    }
    topomap_rows_layout layout = {(int32_t)n, head, degree, step, weight_first, base};
    int limit;
    if (pytopomap_text_ready(&view, &limit)) goto cleanup;
    npy_intp np1 = n + 1, ne = (npy_intp)topomap_scan_rows_capacity((int64_t)view.len, &layout);
    if (!(row_ptr = (PyArrayObject *)PyArray_SimpleNew(1, &np1, NPY_INT64))) goto cleanup;
    /* room for the most entries the text could hold, as scan_table does; the two passes one
       after the other where that address space is refused */
    dst = (PyArrayObject *)PyArray_SimpleNew(1, &ne, NPY_INT32);
    weights = dst ? (PyArrayObject *)PyArray_SimpleNew(1, &ne, NPY_FLOAT64) : NULL;
    int piped = weights != NULL;
    if (!piped) {
        PyErr_Clear();
        Py_CLEAR(dst);
        if (pytopomap_scan_start(&view, 0, -1, 0, chunks, s)) goto cleanup;
        int64_t entries = topomap_scan_row_entries(s, &layout);
        if (entries < 0) {
            res = Py_None;
            Py_INCREF(res);
            goto cleanup;
        }
        ne = (npy_intp)entries;
        dst = (PyArrayObject *)PyArray_SimpleNew(1, &ne, NPY_INT32);
        weights = (PyArrayObject *)PyArray_SimpleNew(1, &ne, NPY_FLOAT64);
        if (!dst || !weights) goto cleanup;
    }
    topomap_scan_info info;
    int64_t got = ne;
    int rc;
    Py_BEGIN_ALLOW_THREADS
    if (piped)
        rc = topomap_scan_rows_text(s, view.buf, (int64_t)view.len, chunks, limit, &layout, PyArray_DATA(row_ptr),
                                    PyArray_DATA(dst), PyArray_DATA(weights), (int64_t)ne, &got, &info);
    else
        rc = topomap_scan_rows(s, &layout, PyArray_DATA(row_ptr), PyArray_DATA(dst), PyArray_DATA(weights), &info);
    Py_END_ALLOW_THREADS
    PyArrayObject *entries[2] = {dst, weights};
    if (!rc && piped && pytopomap_shrink(entries, 2, (npy_intp)got)) goto cleanup;
    if (rc == TOPOMAP_EINVAL || rc == TOPOMAP_ENOTSUP) {
        res = Py_None;
        Py_INCREF(res);
    } else if (rc) {
        pytopomap_raise(rc);
    } else {
        res = Py_BuildValue("(OOO)", row_ptr, dst, weights);
    }
cleanup:
    Py_XDECREF(row_ptr);
    Py_XDECREF(dst);
    Py_XDECREF(weights);
    PyMem_Free(s);
    PyBuffer_Release(&view);
    return res;
}

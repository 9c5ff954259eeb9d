/* C callbacks for the OTF2 library inside the otf2 package, for topomap/io/otf2_trace.py.
 *
 * Why: the otf2 package calls a Python function for every event, which read traces at
 * 4-5 MB/s (a few microseconds an event).  The reader registers these C functions with
 * OTF2's global event reader instead (their addresses go through ctypes), so that an MpiSend
 * or MpiIsend event costs an append to an array and no other event reaches Python at all.
 * The signatures are OTF2 3.x's OTF2_GlobalEvtReaderCallback_MpiSend and _MpiIsend
 * (OTF2_CallbackCode is an int enum, references are uint64/uint32, userData is the sink). */
#include "glue.h"
#include <stdlib.h>

typedef struct {
    int64_t count, room;
    uint64_t *rows; /* (location, receiver, communicator, bytes) per send */
    int out_of_memory;
} pytopomap_otf2_sink;

enum { PYTOPOMAP_OTF2_SUCCESS = 0, PYTOPOMAP_OTF2_INTERRUPT = 1 };

static int pytopomap_otf2_append(pytopomap_otf2_sink *sink, uint64_t location, uint32_t receiver, uint32_t comm,
                                 uint64_t length)
{
    if (sink->count == sink->room) {
        int64_t room = sink->room ? 2 * sink->room : 4096;
        uint64_t *rows = realloc(sink->rows, (size_t)room * 4 * sizeof *rows);
        if (!rows) {
            sink->out_of_memory = 1;
            return PYTOPOMAP_OTF2_INTERRUPT; /* the library stops reading; the reader raises */
        }
        sink->rows = rows, sink->room = room;
    }
    uint64_t *row = sink->rows + 4 * sink->count++;
    row[0] = location, row[1] = receiver, row[2] = comm, row[3] = length;
    return PYTOPOMAP_OTF2_SUCCESS;
}

static int pytopomap_otf2_on_send(uint64_t location, uint64_t time, void *user_data, void *attributes,
                                  uint32_t receiver, uint32_t comm, uint32_t tag, uint64_t length)
{
    (void)time, (void)attributes, (void)tag;
    return pytopomap_otf2_append(user_data, location, receiver, comm, length);
}

static int pytopomap_otf2_on_isend(uint64_t location, uint64_t time, void *user_data, void *attributes,
                                   uint32_t receiver, uint32_t comm, uint32_t tag, uint64_t length, uint64_t request)
{
    (void)request;
    return pytopomap_otf2_on_send(location, time, user_data, attributes, receiver, comm, tag, length);
}

static void pytopomap_otf2_sink_free(PyObject *capsule)
{
    pytopomap_otf2_sink *sink = PyCapsule_GetPointer(capsule, "topomap.otf2_sink");
    if (!sink) return;
    free(sink->rows);
    free(sink);
}

/* otf2_sends() -> (sink capsule, its address, MpiSend callback address, MpiIsend callback address) */
PyObject *pytopomap_otf2_sends(PyObject *self, PyObject *args)
{
    (void)self, (void)args;
    pytopomap_otf2_sink *sink = calloc(1, sizeof *sink);
    if (!sink) return PyErr_NoMemory();
    PyObject *capsule = PyCapsule_New(sink, "topomap.otf2_sink", pytopomap_otf2_sink_free);
    if (!capsule) {
        free(sink);
        return NULL;
    }
    PyObject *res = Py_BuildValue("(ONNN)", capsule, PyLong_FromVoidPtr(sink),
                                  PyLong_FromVoidPtr((void *)(uintptr_t)pytopomap_otf2_on_send),
                                  PyLong_FromVoidPtr((void *)(uintptr_t)pytopomap_otf2_on_isend));
    Py_DECREF(capsule);
    return res;
}

static void pytopomap_otf2_rows_free(PyObject *capsule) { free(PyCapsule_GetPointer(capsule, "topomap.otf2_rows")); }

/* otf2_sends_array(sink) -> uint64 array (sends, 4) of what the callbacks recorded; the array
   takes the sink's rows over (no copy), leaving the sink empty */
PyObject *pytopomap_otf2_sends_array(PyObject *self, PyObject *args)
{
    (void)self;
    PyObject *capsule;
    if (!PyArg_ParseTuple(args, "O", &capsule)) return NULL;
    pytopomap_otf2_sink *sink = PyCapsule_GetPointer(capsule, "topomap.otf2_sink");
    if (!sink) return NULL;
    if (sink->out_of_memory) return PyErr_NoMemory();
    npy_intp dims[2] = {(npy_intp)sink->count, 4};
    if (!sink->count) return PyArray_SimpleNew(2, dims, NPY_UINT64);
    PyObject *owner = PyCapsule_New(sink->rows, "topomap.otf2_rows", pytopomap_otf2_rows_free);
    if (!owner) return NULL;
    PyObject *a = PyArray_SimpleNewFromData(2, dims, NPY_UINT64, sink->rows);
    if (!a || PyArray_SetBaseObject((PyArrayObject *)a, owner)) { /* the base is stolen, even on failure */
        Py_XDECREF(a);
        if (!a) Py_DECREF(owner);
        return NULL;
    }
    sink->rows = NULL, sink->count = sink->room = 0;
    return a;
}

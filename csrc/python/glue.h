/* Shared by the CPython glue files: argument conversion and error mapping. */
#ifndef TOPOMAP_GLUE_H
#define TOPOMAP_GLUE_H
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#define PY_ARRAY_UNIQUE_SYMBOL topomap_ARRAY_API
#ifndef TOPOMAP_GLUE_MAIN
#define NO_IMPORT_ARRAY
#endif
#include <numpy/arrayobject.h>
#include "topomap/topomap.h"

typedef struct {
    PyObject_HEAD
    topomap_machine *m;
} PyTopomapMachine;

extern PyTypeObject PyTopomapMachine_Type;
extern PyTypeObject PyTopomapEvaluator_Type;

/* Raise the Python exception for a core error code; returns NULL. */
PyObject *pytopomap_raise(int rc);
/* A C-contiguous, aligned array of `type` from any array-like (new reference),
   checking it is 1-D of length `len` (len < 0: any). */
PyArrayObject *pytopomap_array(PyObject *obj, int type, npy_intp len, const char *what);
/* Shrink the arrays of `arrays` (NULL ones skipped; each owning its data) to their first `len`
   entries, in place where the allocator can; -1 with an exception. */
int pytopomap_shrink(PyArrayObject *const *arrays, int count, npy_intp len);
/* Metrics struct -> dict. */
PyObject *pytopomap_metrics_dict(const topomap_metrics *mt);
/* Fill a pattern view from (indptr, indices, bytes); keeps new references in arrs[3]. */
int pytopomap_pattern(PyObject *indptr, PyObject *indices, PyObject *bytes, topomap_pattern *p,
                      PyArrayObject *arrs[3]);
/* Read 4 hybrid weights (None = NULL). */
int pytopomap_weights(PyObject *obj, double w[4], const double **out);

/* Build a machine of `kind` from a dict of parameters.  Returns 0 with *out
   set, a negative core error code, or 1 with a Python exception set. */
int pytopomap_create_kind(const char *kind, const topomap_node_tree *tree, PyObject *params,
                          topomap_machine **out);
/* Parameter `name` of `params` as a 1-D array of `type` (new reference), or
   NULL with an exception set (KeyError naming it when absent). */
PyArrayObject *pytopomap_param(PyObject *params, const char *name, int type, npy_intp len);

/* Progress of a long core call made with the GIL released: set ts from
   PyEval_SaveThread() before the call, restore it after.  The callback
   returns non-zero (cancel) with the exception set: KeyboardInterrupt on
   Ctrl-C, the callable's own exception when it raised, topomap.Cancelled
   ("<what> cancelled by the progress callback at N%") when it returned
   something true. */
typedef struct {
    PyObject *callable; /* None/NULL or a function of the fraction done */
    PyThreadState *ts;
    const char *what; /* the call, as the Cancelled message names it */
} pytopomap_progress;
int pytopomap_progress_cb(void *ctx, double fraction);
/* -1 with TypeError unless callable is None or callable. */
int pytopomap_progress_check(PyObject *callable);

/* The arguments every mapper's glue takes: (machine, indptr, indices,
   bytes, allocation, capacity) and its int32 output pe_of (n).  init: 0 or
   -1 with an exception set (call finish anyway).  finish: the output array
   (new reference) when rc == 0, else NULL with an exception (the pending
   one, e.g. Cancelled from the progress callback, or rc's). */
typedef struct {
    const topomap_machine *m;
    topomap_pattern p;
    const int32_t *alloc;
    int32_t nalloc, capacity;
    int32_t *pe_of;
    PyArrayObject *arrs[5]; /* allocation, CSR arrays, grid */
    PyArrayObject *out;
} pytopomap_map_call;
/* The (machine, allocation) arguments: *m set and the allocation as an
   int32 array of 1 to 2^31 - 1 PEs (new reference), or NULL with
   TypeError/ValueError. */
PyArrayObject *pytopomap_machine_alloc(PyObject *machine, PyObject *alloc, const topomap_machine **m);
int pytopomap_map_call_init(pytopomap_map_call *c, PyObject *machine, PyObject *indptr, PyObject *indices,
                            PyObject *bytes, PyObject *alloc, long capacity);
PyObject *pytopomap_map_call_finish(pytopomap_map_call *c, int rc);
/* After init: the optional grid argument (None, or the processes' (n, d)
   int32 coordinates, d in 1..3) into c->p.coords / ndims for the node
   grouping.  0, or -1 with TypeError/ValueError. */
int pytopomap_map_call_grid(pytopomap_map_call *c, PyObject *grid);

PyObject *pytopomap_evaluate(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_map_block(PyObject *self, PyObject *args);
PyObject *pytopomap_map_cyclic(PyObject *self, PyObject *args);
PyObject *pytopomap_map_random(PyObject *self, PyObject *args);
PyObject *pytopomap_allocate_nodes(PyObject *self, PyObject *args);
PyObject *pytopomap_hwloc_topology_xml(PyObject *self, PyObject *args);
PyObject *pytopomap_ugraph_from_pattern(PyObject *self, PyObject *args);
PyObject *pytopomap_partition(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_partition_stats(PyObject *self, PyObject *args);
PyObject *pytopomap_ugraph_validate(PyObject *self, PyObject *args);
PyObject *pytopomap_group_by_node(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_map_greedy(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_map_recursive(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_map_topdown(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_map_rcm(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_rcm_order(PyObject *self, PyObject *args);
PyObject *pytopomap_ugraph_bfs(PyObject *self, PyObject *args);
PyObject *pytopomap_map_ptram(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_ptram_state(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_scan_numbers(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_scan_table(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_scan_nonzeros(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_scan_rows(PyObject *self, PyObject *args);
PyObject *pytopomap_read_monitoring(PyObject *self, PyObject *args);
PyObject *pytopomap_read_dumpi(PyObject *self, PyObject *args);
PyObject *pytopomap_otf2_sends(PyObject *self, PyObject *args);
PyObject *pytopomap_otf2_sends_array(PyObject *self, PyObject *args);
PyObject *pytopomap_pattern_build(PyObject *self, PyObject *args);
PyObject *pytopomap_pattern_is_canonical(PyObject *self, PyObject *args);
PyObject *pytopomap_first_outside(PyObject *self, PyObject *args);
PyObject *pytopomap_first_bad_weight(PyObject *self, PyObject *args);
PyObject *pytopomap_map_aphid(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_alloc_tree(PyObject *self, PyObject *args);
PyObject *pytopomap_map_hierarchy(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_hierarchy_groups(PyObject *self, PyObject *args);
PyObject *pytopomap_map_kumar(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_hilbert_index(PyObject *self, PyObject *args);
PyObject *pytopomap_hilbert_order(PyObject *self, PyObject *args);
PyObject *pytopomap_lb_alias(PyObject *self, PyObject *args);
PyObject *pytopomap_lb_unit(PyObject *self, PyObject *args);
PyObject *pytopomap_flowsim(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_twoopt(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_twoopt_cost(PyObject *self, PyObject *args);
PyObject *pytopomap_coll_build(PyObject *self, PyObject *args);
PyObject *pytopomap_coll_order(PyObject *self, PyObject *args);
PyObject *pytopomap_coll_reorder(PyObject *self, PyObject *args);
PyObject *pytopomap_nbr_phase1(PyObject *self, PyObject *args, PyObject *kw);
PyObject *pytopomap_gpu_loads(PyObject *self, PyObject *args);
PyObject *pytopomap_magc_greedy(PyObject *self, PyObject *args);
#endif

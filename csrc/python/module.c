/* Module `topomap._core`: conversion helpers, error mapping, features. */
#define TOPOMAP_GLUE_MAIN
#include "glue.h"
#include "topomap_config.h"

PyObject *pytopomap_raise(int rc)
{
    const char *msg = topomap_last_error();
    if (rc == TOPOMAP_ENOMEM) return PyErr_NoMemory();
    /* a stop asked from Python (Ctrl-C, the progress callable) has its
       exception set by progress.c; only a cancel of the core's own is left */
    if (rc == TOPOMAP_ECANCELED && PyErr_Occurred()) return NULL;
    PyObject *mod = PyImport_ImportModule("topomap.errors");
    if (!mod) return NULL;
    PyObject *cls = PyObject_GetAttrString(mod, rc == TOPOMAP_EINVAL     ? "CoreInputError"
                                                : rc == TOPOMAP_ECANCELED ? "Cancelled"
                                                : rc == TOPOMAP_ENOTSUP   ? "CoreNotSupported"
                                                                          : "CoreError");
    Py_DECREF(mod);
    if (!cls) return NULL;
    PyErr_SetString(cls, msg);
    Py_DECREF(cls);
    return NULL;
}

PyArrayObject *pytopomap_array(PyObject *obj, int type, npy_intp len, const char *what)
{
    PyArrayObject *a = (PyArrayObject *)PyArray_FROMANY(obj, type, 1, 1, NPY_ARRAY_IN_ARRAY | NPY_ARRAY_FORCECAST);
    if (!a) return NULL;
    if (len >= 0 && PyArray_DIM(a, 0) != len) {
        PyErr_Format(PyExc_ValueError, "%s has length %zd, expected %zd", what, (Py_ssize_t)PyArray_DIM(a, 0),
                     (Py_ssize_t)len);
        Py_DECREF(a);
        return NULL;
    }
    return a;
}

int pytopomap_shrink(PyArrayObject *const *arrays, int count, npy_intp len)
{
    PyArray_Dims dims = {&len, 1};
    for (int i = 0; i < count; i++) {
        if (!arrays[i]) continue;
        PyObject *none = PyArray_Resize(arrays[i], &dims, 0, NPY_CORDER);
        if (!none) return -1;
        Py_DECREF(none);
    }
    return 0;
}

int pytopomap_pattern(PyObject *indptr, PyObject *indices, PyObject *bytes, topomap_pattern *p,
                      PyArrayObject *arrs[3])
{
    arrs[0] = arrs[1] = arrs[2] = NULL;
    arrs[0] = pytopomap_array(indptr, NPY_INT64, -1, "indptr");
    if (!arrs[0]) return -1;
    npy_intp n = PyArray_DIM(arrs[0], 0) - 1;
    if (n < 1 || n > INT32_MAX) {
        PyErr_SetString(PyExc_ValueError, "indptr must have n+1 entries with 1 <= n < 2^31");
        return -1;
    }
    const int64_t *ip = PyArray_DATA(arrs[0]);
    arrs[1] = pytopomap_array(indices, NPY_INT32, ip[n], "indices");
    if (!arrs[1]) return -1;
    arrs[2] = pytopomap_array(bytes, NPY_FLOAT64, ip[n], "bytes");
    if (!arrs[2]) return -1;
    *p = (topomap_pattern){(int32_t)n, ip, PyArray_DATA(arrs[1]), PyArray_DATA(arrs[2]), NULL, 0}; /* no grid */
    int rc = topomap_pattern_validate(p);
    if (rc) {
        pytopomap_raise(rc);
        return -1;
    }
    return 0;
}

int pytopomap_weights(PyObject *obj, double w[4], const double **out)
{
    *out = NULL;
    if (obj == NULL || obj == Py_None) return 0;
    PyArrayObject *a = pytopomap_array(obj, NPY_FLOAT64, 4, "weights");
    if (!a) return -1;
    for (int i = 0; i < 4; i++) w[i] = ((const double *)PyArray_DATA(a))[i];
    Py_DECREF(a);
    *out = w;
    return 0;
}

PyObject *pytopomap_metrics_dict(const topomap_metrics *mt)
{
    return Py_BuildValue(
        "{s:d,s:d,s:i,s:L,s:d,s:d,s:d,s:L,s:d,s:d,s:d,s:d,s:L,s:d,s:d}", "hop_bytes", mt->hop_bytes, "dilation",
        mt->dilation, "max_dilation", (int)mt->max_dilation, "messages", (long long)mt->messages, "total_bytes",
        mt->total_bytes, "qap", mt->qap, "max_congestion", mt->max_congestion, "nz_links",
        (long long)mt->nz_links, "nz_congestion_avg", mt->nz_congestion_avg, "nz_congestion_var",
        mt->nz_congestion_var, "hybrid", mt->hybrid, "edge_cut", mt->edge_cut, "edge_cut_messages",
        (long long)mt->edge_cut_messages, "msgs", mt->msgs, "cut_msgs", mt->cut_msgs);
}

static PyObject *features(PyObject *self, PyObject *args)
{
    (void)self;
    (void)args;
    return Py_BuildValue("{s:O,s:s,s:s,s:s}", "hwloc", TOPOMAP_HAVE_HWLOC ? Py_True : Py_False, "hwloc_version",
                         TOPOMAP_HWLOC_VERSION, "hwloc_request", TOPOMAP_HWLOC_REQUEST, "compiler",
                         TOPOMAP_COMPILER);
}

static PyMethodDef methods[] = {
    {"features", features, METH_NOARGS, "What was compiled in."},
    {"evaluate", (PyCFunction)(void (*)(void))pytopomap_evaluate, METH_VARARGS | METH_KEYWORDS,
     "evaluate(machine, indptr, indices, bytes, pe_of, weights=None, msgs=None) -> (dict, link_load, level_bytes)"},
    {"map_block", pytopomap_map_block, METH_VARARGS, "map_block(n, alloc, capacity) -> pe_of"},
    {"map_cyclic", pytopomap_map_cyclic, METH_VARARGS, "map_cyclic(machine, n, alloc, capacity) -> pe_of"},
    {"map_random", pytopomap_map_random, METH_VARARGS, "map_random(n, alloc, capacity, seed) -> pe_of"},
    {"allocate_nodes", pytopomap_allocate_nodes, METH_VARARGS,
     "allocate_nodes(machine, k, policy, runs, seed) -> node ids"},
    {"ugraph_from_pattern", pytopomap_ugraph_from_pattern, METH_VARARGS,
     "ugraph_from_pattern(indptr, indices, bytes) -> (xadj, adjncy, adjwgt) of C + C^T"},
    {"partition", (PyCFunction)(void (*)(void))pytopomap_partition, METH_VARARGS | METH_KEYWORDS,
     "partition(xadj, adjncy, adjwgt, vwgt, k, targets=None, hard=False, imbalance=0.03, seed=0, recursive=False, "
     "ntries=4, progress=None, part=None) -> (part, part_weights, edge_cut)"},
    {"partition_stats", pytopomap_partition_stats, METH_VARARGS,
     "partition_stats(xadj, adjncy, adjwgt, vwgt, k, part) -> (part_weights, edge_cut)"},
    {"ugraph_validate", pytopomap_ugraph_validate, METH_VARARGS,
     "ugraph_validate(xadj, adjncy, adjwgt, vwgt): raise if not a symmetric sorted CSR graph"},
    {"group_by_node", (PyCFunction)(void (*)(void))pytopomap_group_by_node, METH_VARARGS | METH_KEYWORDS,
     "group_by_node(machine, indptr, indices, bytes, alloc, capacity, seed=0, progress=None) -> (group, group_slots)"},
    {"map_greedy", (PyCFunction)(void (*)(void))pytopomap_map_greedy, METH_VARARGS | METH_KEYWORDS,
     "map_greedy(machine, indptr, indices, bytes, alloc, capacity, seed=0, progress=None, start=0, congestion=1, tries=1) -> pe_of"},
    {"map_recursive", (PyCFunction)(void (*)(void))pytopomap_map_recursive, METH_VARARGS | METH_KEYWORDS,
     "map_recursive(machine, indptr, indices, bytes, alloc, capacity, seed=0, progress=None, context=1, coords=None, "
     "ring=None) -> pe_of"},
    {"map_topdown", (PyCFunction)(void (*)(void))pytopomap_map_topdown, METH_VARARGS | METH_KEYWORDS,
     "map_topdown(machine, indptr, indices, bytes, alloc, capacity, seed=0, progress=None, order, gap, context=1, "
     "sweeps=4, depth=2, max_partners=64) -> pe_of"},
    {"map_rcm", (PyCFunction)(void (*)(void))pytopomap_map_rcm, METH_VARARGS | METH_KEYWORDS,
     "map_rcm(machine, indptr, indices, bytes, alloc, capacity, seed=0, progress=None, start=0) -> pe_of"},
    {"rcm_order", pytopomap_rcm_order, METH_VARARGS, "rcm_order(xadj, adjncy, start) -> reverse Cuthill-McKee order"},
    {"ugraph_bfs", pytopomap_ugraph_bfs, METH_VARARGS, "ugraph_bfs(xadj, adjncy, sources) -> hops from the nearest source (-1: none)"},
    {"ptram_state", (PyCFunction)(void (*)(void))pytopomap_ptram_state, METH_VARARGS | METH_KEYWORDS,
     "ptram_state(machine, indptr, indices, bytes, alloc, capacity, seed=0, weights=None, k=8, rounds=10, "
     "partition=1, plateau=0, group=None) -> PtramState (the steps of map_ptram)"},
    {"map_ptram", (PyCFunction)(void (*)(void))pytopomap_map_ptram, METH_VARARGS | METH_KEYWORDS,
     "map_ptram(machine, indptr, indices, bytes, alloc, capacity, seed=0, weights=None, k=8, rounds=10, partition=1, "
     "plateau=0, progress=None, trace=False) -> pe_of | (pe_of, trace dict)"},
    {"scan_numbers", (PyCFunction)(void (*)(void))pytopomap_scan_numbers, METH_VARARGS | METH_KEYWORDS,
     "scan_numbers(data, integer, commas, comment=-1, whole_line=False, counts=True, chunks=0) -> (values, "
     "line_counts, filled_lines, min_width, max_width, comment_lines) | (None | False, bad token offset)"},
    {"scan_table", (PyCFunction)(void (*)(void))pytopomap_scan_table, METH_VARARGS | METH_KEYWORDS,
     "scan_table(data, types, commas, comment=-1, whole_line=False, chunks=0) -> [columns] | None"},
    {"scan_nonzeros", (PyCFunction)(void (*)(void))pytopomap_scan_nonzeros, METH_VARARGS | METH_KEYWORDS,
     "scan_nonzeros(data, commas, comment=-1, whole_line=False, chunks=0) -> (line, col, value, line_counts) "
     "| (None | False, bad token offset)"},
    {"scan_rows", pytopomap_scan_rows, METH_VARARGS,
     "scan_rows(data, n, head, degree, step, weight_first, base, chunks=0) -> (row_ptr, dst, weights) | None"},
    {"read_monitoring", pytopomap_read_monitoring, METH_VARARGS,
     "read_monitoring(paths) -> dict of pml_monitoring record arrays | (first bad file, its line)"},
    {"read_dumpi", pytopomap_read_dumpi, METH_VARARGS,
     "read_dumpi(paths, type_names, type_sizes) -> dict of send record arrays | (first bad file, its line)"},
    {"otf2_sends", pytopomap_otf2_sends, METH_NOARGS,
     "otf2_sends() -> (sink, sink address, MpiSend callback address, MpiIsend callback address) for OTF2's "
     "global event reader"},
    {"otf2_sends_array", pytopomap_otf2_sends_array, METH_VARARGS,
     "otf2_sends_array(sink) -> (sends, 4) uint64 array of (location, receiver, communicator, bytes)"},
    {"pattern_build", pytopomap_pattern_build, METH_VARARGS,
     "pattern_build(n, src, dst, bytes, msgs, row_ptr, owned) -> (indptr, indices, bytes, msgs, self_entries) "
     "| first invalid entry"},
    {"pattern_is_canonical", pytopomap_pattern_is_canonical, METH_VARARGS,
     "pattern_is_canonical(n, indptr, indices, bytes) -> bool"},
    {"first_outside", pytopomap_first_outside, METH_VARARGS, "first_outside(a, lo, hi) -> index or -1"},
    {"first_bad_weight", pytopomap_first_bad_weight, METH_VARARGS, "first_bad_weight(w) -> index or -1"},
    {"map_aphid", (PyCFunction)(void (*)(void))pytopomap_map_aphid, METH_VARARGS | METH_KEYWORDS,
     "map_aphid(machine, indptr, indices, bytes, alloc, capacity, seed=0, recursive=True, proportional=True, ntries=4, progress=None) -> pe_of"},
    {"alloc_tree", pytopomap_alloc_tree, METH_VARARGS, "alloc_tree(machine, alloc) -> dict of the allocation tree arrays"},
    {"map_hierarchy", (PyCFunction)(void (*)(void))pytopomap_map_hierarchy, METH_VARARGS | METH_KEYWORDS,
     "map_hierarchy(machine, indptr, indices, bytes, alloc, capacity, seed=0, imbalance=0.03, depth=1, effort=1, "
     "tries=1, progress=None) -> (pe_of, qap)"},
    {"hierarchy_groups", pytopomap_hierarchy_groups, METH_VARARGS,
     "hierarchy_groups(machine, alloc) -> dict of the allocation's hierarchy (pes, lo, hi, parent, dist, ...)"},
    {"map_kumar", (PyCFunction)(void (*)(void))pytopomap_map_kumar, METH_VARARGS | METH_KEYWORDS,
     "map_kumar(method, machine, indptr, indices, bytes, alloc, capacity, seed=0, progress=None, iterations=32, "
     "alpha=0.25, beta=0.5, rule=0, objective=0, passes=100, part_size=125) -> pe_of"},
    {"hilbert_index", pytopomap_hilbert_index, METH_VARARGS, "hilbert_index(coords (count, ndims), bits) -> uint64 index"},
    {"hilbert_order", pytopomap_hilbert_order, METH_VARARGS, "hilbert_order(dims, nodes) -> positions along the curve"},
    {"lb_alias", pytopomap_lb_alias, METH_VARARGS, "lb_alias(counts, order=None, refill_next=0) -> (src, tasks)"},
    {"lb_unit", pytopomap_lb_unit, METH_VARARGS, "lb_unit(counts, order=None) -> (src, dst, tasks) per message"},
    {"flowsim", (PyCFunction)(void (*)(void))pytopomap_flowsim, METH_VARARGS | METH_KEYWORDS,
     "flowsim(machine, src_pe, dst_pe, bytes, latency, cap, stage, src_rank, dst_rank, bandwidth, nstages, nranks, "
     "sync, iterations, share, progress=None) -> dict of finish, stage_end, makespan, events, recomputes, link_bytes"},
    {"twoopt", (PyCFunction)(void (*)(void))pytopomap_twoopt, METH_VARARGS | METH_KEYWORDS,
     "twoopt(machine, nranks, stage_ptr, src, dst, count, pe_of, objective=0, iterations=0, t0=0, t1=0, "
     "trace_every=0, seed=0, progress=None, what='two-opt') -> (pe_of, initial, cost, accepted, trace)"},
    {"twoopt_cost", pytopomap_twoopt_cost, METH_VARARGS,
     "twoopt_cost(machine, nranks, stage_ptr, src, dst, count, pe_of, objective) -> int"},
    {"coll_build", pytopomap_coll_build, METH_VARARGS,
     "coll_build(op, algorithm, n, root, ppn, intra_binomial, leaders_ring, want_items) -> dict of the schedule"},
    {"coll_order", pytopomap_coll_order, METH_VARARGS, "coll_order(heuristic, p) -> (order, ref)"},
    {"coll_reorder", pytopomap_coll_reorder, METH_VARARGS, "coll_reorder(machine, pes, heuristic, seed) -> old_of_new"},
    {"nbr_phase1", (PyCFunction)(void (*)(void))pytopomap_nbr_phase1, METH_VARARGS | METH_KEYWORDS,
     "nbr_phase1(out_ptr, out_idx, theta, max_iterations=0, node=None, progress=None, distance=None, nnodes=0, "
     "cumulative=False) -> dict of the pattern T"},
    {"gpu_loads", pytopomap_gpu_loads, METH_VARARGS,
     "gpu_loads(bandwidth, route_ptr, route_chan, nic, indptr, indices, bytes, node_of, ep_of, nnodes) -> load"},
    {"magc_greedy", pytopomap_magc_greedy, METH_VARARGS,
     "magc_greedy(bandwidth, route_ptr, route_chan, c, candidates, load=None) -> (ep_of, order)"},
#if TOPOMAP_HAVE_HWLOC
    {"hwloc_topology_xml", pytopomap_hwloc_topology_xml, METH_NOARGS,
     "XML of this machine's topology, discovered by libhwloc."},
#endif
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moduledef = {PyModuleDef_HEAD_INIT, "_core", "topomap C core.", -1, methods};

PyMODINIT_FUNC PyInit__core(void)
{
    import_array();
    if (PyType_Ready(&PyTopomapMachine_Type) < 0 || PyType_Ready(&PyTopomapEvaluator_Type) < 0) return NULL;
    PyObject *m = PyModule_Create(&moduledef);
    if (!m) return NULL;
    Py_INCREF(&PyTopomapMachine_Type);
    Py_INCREF(&PyTopomapEvaluator_Type);
    if (PyModule_AddObject(m, "Machine", (PyObject *)&PyTopomapMachine_Type) < 0 ||
        PyModule_AddObject(m, "Evaluator", (PyObject *)&PyTopomapEvaluator_Type) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}

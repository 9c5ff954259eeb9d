/* The node-level QAP of Kumar's mappers (thesis §6.1, eq. 6.1: tasks onto
   nodes, flow = bytes between tasks in both directions, distance = hops
   between nodes over the whole machine), its distance-only cost changes,
   and the pipeline that turns processes into node-level tasks and back.

   Why a distance-only path next to the evaluator (DESIGN.md §3): GRASP's
   2-exchange scans O(n^2) swaps per sweep and MAHD scores every free node
   against every placed neighbour; both need only sum(w * hops), which a
   dense hop table answers in O(degree) lookups.  The evaluator's try_swap
   re-routes every message link by link, updates the link loads, the max
   tree and a journal, and undoes them; its distance-only mode sums the
   machine's QAP distance (level costs on tree networks, not hops) through
   the oracle.  Both are much slower for this one number
   (benchmarks/bench_kumar.py --deltas measures the ratios).  Nothing here
   keeps link loads; the mappers that need loads (EMAHD by congestion,
   LocalOpt) use the evaluator, and the tests check cost == the evaluator's
   hop_bytes and delta == cost difference.

   Choices the thesis leaves open:
   - n-to-1: processes are grouped with topomap_group_by_node (as few groups
     as the largest nodes hold); when every node offers one slot each
     process is its own group (the thesis's one task per node).  A group
     fits a node with at least as many slots; the fit tracker keeps a
     complete placement possible at every greedy step.
   - Distances are hop counts (route_count) between allocation nodes, the
     mean of both directions (equal on every kind but explicit per-pair
     route tables), stored as a dense table: at most 11,585 allocation
     nodes (1 GiB); kumar-hybrid only builds tables of its parts.
   - Inside a node, a group's processes take the node's PEs in rank order.

   The grouping and the nodal pattern come from the node-level problem that
   the LibTopoMap mappers share (map_physgraph.c); the fit tracker below is
   the same Hall-condition bookkeeping over facility sizes, kept apart
   because kumar-hybrid also needs it for parts, which are not nodes.

   Complexity: the grouping (multilevel partitioner), O(m^2 x route) for the
   hop table, O(m^2) memory. */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/partition.h"
#include "map_qap.h"
#include "sorted.h"

#define MAX_TABLE_NODES 11585 /* 11585^2 doubles < 1 GiB */

double topomap_i_qap_cost(const topomap_i_qap *q, const int32_t *loc)
{
    double cost = 0;
    for (int32_t i = 0; i < q->n; i++) {
        if (loc[i] < 0) continue;
        const double *di = q->d + (int64_t)loc[i] * q->m;
        for (int64_t e = q->xadj[i]; e < q->xadj[i + 1]; e++) {
            int32_t j = q->adj[e];
            if (j > i && loc[j] >= 0) cost += q->w[e] * di[loc[j]];
        }
    }
    return cost;
}

double topomap_i_qap_swap_delta(const topomap_i_qap *q, const int32_t *loc, int32_t a, int32_t b)
{
    const double *da = q->d + (int64_t)loc[a] * q->m, *db = q->d + (int64_t)loc[b] * q->m;
    double delta = 0;
    /* the a-b flow keeps its distance (d is symmetric) */
    for (int64_t e = q->xadj[a]; e < q->xadj[a + 1]; e++) {
        int32_t j = q->adj[e], lj = loc[j];
        if (j != b && lj >= 0) delta += q->w[e] * (db[lj] - da[lj]);
    }
    for (int64_t e = q->xadj[b]; e < q->xadj[b + 1]; e++) {
        int32_t j = q->adj[e], lj = loc[j];
        if (j != a && lj >= 0) delta += q->w[e] * (da[lj] - db[lj]);
    }
    return delta;
}

double topomap_i_qap_move_delta(const topomap_i_qap *q, const int32_t *loc, int32_t a, int32_t l)
{
    const double *da = q->d + (int64_t)loc[a] * q->m, *dl = q->d + (int64_t)l * q->m;
    double delta = 0;
    for (int64_t e = q->xadj[a]; e < q->xadj[a + 1]; e++) {
        int32_t lj = loc[q->adj[e]];
        if (lj >= 0) delta += q->w[e] * (dl[lj] - da[lj]);
    }
    return delta;
}

double topomap_i_qap_tolerance(const topomap_i_qap *q)
{
    double wsum = 0, dmax = 0;
    for (int64_t e = 0; e < q->xadj[q->n]; e++) wsum += q->w[e];
    for (int64_t i = 0; i < (int64_t)q->m * q->m; i++)
        if (q->d[i] > dmax) dmax = q->d[i];
    return 1e-12 * (wsum * dmax + 1.0);
}

/* ------------------------------------------------------------------ fits */

void topomap_i_fit_free(topomap_i_fit *f)
{
    free(f->value);
    free(f->slack);
    f->value = f->slack = NULL;
}

void topomap_i_fit_reset(topomap_i_fit *f, const topomap_i_qap *q)
{
    for (int32_t v = 0; v < f->nv; v++) {
        int64_t have = 0, need = 0;
        for (int32_t l = 0; l < q->m; l++) have += q->cap[l] >= f->value[v];
        for (int32_t j = 0; j < q->n; j++) need += q->size[j] >= f->value[v];
        f->slack[v] = have - need;
    }
}

int topomap_i_fit_init(topomap_i_fit *f, const topomap_i_qap *q)
{
    f->nv = 0;
    f->value = malloc(((size_t)q->n + 1) * sizeof *f->value);
    f->slack = malloc(((size_t)q->n + 1) * sizeof *f->slack);
    if (!f->value || !f->slack) {
        topomap_i_fit_free(f);
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    }
    memcpy(f->value, q->size, (size_t)q->n * sizeof *f->value);
    f->nv = topomap_i_distinct_i64(f->value, q->n);
    topomap_i_fit_reset(f, q);
    for (int32_t v = 0; v < f->nv; v++)
        if (f->slack[v] < 0) {
            int64_t bad = f->value[v];
            topomap_i_fit_free(f);
            return topomap_i_fail(TOPOMAP_EINVAL, "groups of %lld processes outnumber the nodes with that many slots",
                                  (long long)bad);
        }
    return TOPOMAP_OK;
}

/* First distinct size above s. */
static int32_t first_above(const topomap_i_fit *f, int64_t s) { return topomap_i_lower_bound_i64(f->value, f->nv, s + 1); }

int topomap_i_fit_ok(const topomap_i_fit *f, const topomap_i_qap *q, int32_t j, int32_t l)
{
    return topomap_i_fit_ok_size(f, q->size[j], q->cap[l]);
}

int topomap_i_fit_ok_size(const topomap_i_fit *f, int64_t s, int64_t c)
{
    if (s > c) return 0;
    /* placing j on l uses a location that larger facilities (sizes in (s, c]) could have had */
    for (int32_t v = first_above(f, s); v < f->nv && f->value[v] <= c; v++)
        if (f->slack[v] < 1) return 0;
    return 1;
}

void topomap_i_fit_place(topomap_i_fit *f, const topomap_i_qap *q, int32_t j, int32_t l)
{
    int64_t s = q->size[j], c = q->cap[l];
    for (int32_t v = first_above(f, s); v < f->nv && f->value[v] <= c; v++) f->slack[v]--;
}

/* ------------------------------------------------------------------ pipeline */

int topomap_i_qap_map(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                      int32_t capacity, const topomap_run_options *run, const char *what, topomap_i_qap_solver solve,
                      const void *ctx, int32_t *pe_of)
{
    int rc = topomap_pattern_validate(p);
    if (rc) return rc;
    topomap_i_ticker group_tk = {run, what, 0.0, 0.1, 0, 0};
    topomap_i_nodemap nm;
    rc = topomap_i_nodemap_create(m, p, alloc, nalloc, capacity, &group_tk, &nm);
    if (rc) return rc;
    const topomap_alloc_nodes *an = nm.an;
    int32_t nn = an->nnodes, *loc = NULL;
    topomap_i_qap q = {0};
    if (nn > MAX_TABLE_NODES) {
        rc = topomap_i_fail(TOPOMAP_EINVAL,
                            "%s: the allocation has %d nodes; the hop table is limited to %d "
                            "(kumar-hybrid maps larger allocations part by part)",
                            what, (int)nn, MAX_TABLE_NODES);
        goto cleanup;
    }
    q.d = malloc((size_t)nn * (size_t)nn * sizeof *q.d);
    loc = malloc((size_t)nm.k * sizeof *loc);
    if (!q.d || !loc) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "%s: out of memory for the hop table of %d nodes", what, (int)nn);
        goto cleanup;
    }
    for (int32_t a = 0; a < nn; a++) {
        q.d[(int64_t)a * nn + a] = 0;
        for (int32_t b = a + 1; b < nn; b++) {
            int32_t h = topomap_machine_route_count(m, an->node[a], an->node[b]);
            int32_t h2 = topomap_machine_route_count(m, an->node[b], an->node[a]);
            if (h < 0 || h2 < 0) {
                rc = topomap_i_fail(TOPOMAP_EINVAL, "%s: the machine has no route between nodes %d and %d of the allocation",
                                    what, (int)an->node[a], (int)an->node[b]);
                goto cleanup;
            }
            /* the flows are symmetric, so the QAP needs one distance per
               pair: the mean of both directions, which is the hop count on
               every kind whose routes are as long both ways (all but explicit
               per-pair route tables) */
            q.d[(int64_t)a * nn + b] = q.d[(int64_t)b * nn + a] = 0.5 * (h + h2);
        }
    }
    q.n = nm.k;
    q.m = nn;
    q.xadj = nm.xadj;
    q.adj = nm.adj;
    q.w = nm.wgt;
    q.size = nm.size;
    q.cap = an->slots;
    q.machine = m;
    q.flows = topomap_i_nodemap_quotient(&nm);
    q.loc_pe = an->first_pe;
    topomap_i_ticker solve_tk = {run, what, 0.1, 1.0, 0, 0};
    topomap_run_options sub = {run ? run->seed : 0, topomap_i_ticker_cb, &solve_tk};
    rc = solve(&q, ctx, &sub, loc);
    if (!rc) rc = topomap_place_groups(an, nm.n, nm.group, loc, pe_of);
    if (!rc) rc = topomap_i_report(&solve_tk, 1.0);
cleanup:
    topomap_i_nodemap_free(&nm);
    free(q.d);
    free(loc);
    return rc;
}

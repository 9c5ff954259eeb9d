/* The physical graph, the node-level problem and phased progress shared by
   the LibTopoMap mappers (map_physgraph.h).

   Choices: the physical graph's edge weight is the summed capacity of the
   links between two vertices (LibTopoMap's network file gives one capacity
   per adjacency; parallel cables and both directions add up).  Slot classes
   answer a question LibTopoMap never meets (its nodes all hold the same
   number of processes): which node may take which group when the last node
   of an allocation is used in part. */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "map_physgraph.h"
#include "sorted.h"

void topomap_i_physgraph_free(topomap_i_physgraph *g)
{
    free(g->xadj);
    free(g->adj);
    free(g->wgt);
    free(g->ostart);
    free(g->olink);
    free(g->oto);
    memset(g, 0, sizeof *g);
}

typedef struct {
    int32_t v;
    double w;
} nbr;

static int by_vertex(const void *a, const void *b)
{
    int32_t x = ((const nbr *)a)->v, y = ((const nbr *)b)->v;
    return (x > y) - (x < y);
}

int topomap_i_physgraph_build(const topomap_machine *m, topomap_i_physgraph *g)
{
    memset(g, 0, sizeof *g);
    int32_t nv = topomap_machine_nvertices(m), nl = topomap_machine_nlinks(m);
    int32_t *from = malloc((size_t)nl * sizeof *from + 1), *to = malloc((size_t)nl * sizeof *to + 1);
    int64_t *fill = calloc((size_t)nv + 1, sizeof *fill);
    nbr *rows = NULL;
    int rc = TOPOMAP_OK;
    g->nv = nv;
    g->xadj = calloc((size_t)nv + 1, sizeof *g->xadj);
    g->ostart = calloc((size_t)nv + 1, sizeof *g->ostart);
    if (!from || !to || !fill || !g->xadj || !g->ostart) goto nomem;
    int64_t nlive = 0;
    for (int32_t l = 0; l < nl; l++) {
        from[l] = to[l] = -1;
        if (!topomap_machine_link_exists(m, l)) continue;
        if ((rc = topomap_machine_link_ends(m, l, &from[l], &to[l]))) goto cleanup;
        if (from[l] == to[l]) {
            from[l] = to[l] = -1;
            continue;
        }
        g->ostart[from[l] + 1]++;
        fill[from[l] + 1]++;
        fill[to[l] + 1]++;
        nlive++;
    }
    for (int32_t v = 0; v < nv; v++) {
        g->ostart[v + 1] += g->ostart[v];
        fill[v + 1] += fill[v];
    }
    g->olink = malloc((size_t)nlive * sizeof *g->olink + 1);
    g->oto = malloc((size_t)nlive * sizeof *g->oto + 1);
    rows = malloc(2 * (size_t)nlive * sizeof *rows + 1);
    g->adj = malloc(2 * (size_t)nlive * sizeof *g->adj + 1);
    g->wgt = malloc(2 * (size_t)nlive * sizeof *g->wgt + 1);
    if (!g->olink || !g->oto || !rows || !g->adj || !g->wgt) goto nomem;
    int64_t *opos = g->xadj; /* borrowed as the out-link fill pointers, rebuilt below */
    memcpy(opos, g->ostart, ((size_t)nv + 1) * sizeof *opos);
    for (int32_t l = 0; l < nl; l++) {
        if (from[l] < 0) continue;
        double c = topomap_machine_link_capacity(m, l);
        g->olink[opos[from[l]]] = l;
        g->oto[opos[from[l]]++] = to[l];
        rows[fill[from[l]]++] = (nbr){to[l], c};
        rows[fill[to[l]]++] = (nbr){from[l], c};
    }
    /* fill[v] now ends row v; merge each row's duplicates into the CSR */
    int64_t len = 0, start = 0;
    g->xadj[0] = 0;
    for (int32_t v = 0; v < nv; v++) {
        int64_t end = fill[v];
        qsort(rows + start, (size_t)(end - start), sizeof *rows, by_vertex);
        for (int64_t e = start; e < end; e++) {
            if (len > g->xadj[v] && g->adj[len - 1] == rows[e].v) {
                g->wgt[len - 1] += rows[e].w;
            } else {
                g->adj[len] = rows[e].v;
                g->wgt[len++] = rows[e].w;
            }
        }
        g->xadj[v + 1] = len;
        start = end;
    }
    goto cleanup;
nomem:
    rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory building the network graph of %d vertices", (int)nv);
cleanup:
    free(from);
    free(to);
    free(fill);
    free(rows);
    if (rc) topomap_i_physgraph_free(g);
    return rc;
}

int topomap_i_report(topomap_i_ticker *t, double fraction)
{
    if (!t->run || !t->run->progress) return TOPOMAP_OK;
    double x = t->lo + (t->hi - t->lo) * fraction;
    if (t->run->progress(t->run->progress_ctx, x))
        return topomap_i_fail(TOPOMAP_ECANCELED, "%s mapping cancelled by the progress callback at %.0f%%", t->what,
                              100 * x);
    return TOPOMAP_OK;
}

int topomap_i_tick(topomap_i_ticker *t, int64_t units, double fraction)
{
    t->work += units;
    if (t->work < t->next) return TOPOMAP_OK;
    t->next = t->work + TOPOMAP_I_TICK;
    return topomap_i_report(t, fraction);
}

int topomap_i_ticker_cb(void *ctx, double fraction) { return topomap_i_report(ctx, fraction) != TOPOMAP_OK; }

void topomap_i_nodemap_free(topomap_i_nodemap *nm)
{
    topomap_alloc_nodes_destroy(nm->an);
    free(nm->group);
    free(nm->size);
    free(nm->qindptr);
    free(nm->qindices);
    free(nm->qbytes);
    free(nm->xadj);
    free(nm->adj);
    free(nm->wgt);
    free(nm->class_slots);
    free(nm->node_class);
    free(nm->group_class);
    free(nm->slack);
    free(nm->node_of_group);
    free(nm->group_of_node);
    memset(nm, 0, sizeof *nm);
}

/* Index of the last class (classes by decreasing slots) whose slots are >= s. */
static int32_t last_class_holding(const topomap_i_nodemap *nm, int64_t s)
{
    int32_t lo = 0, hi = nm->nclass - 1; /* class 0 holds every group */
    while (lo < hi) {
        int32_t mid = (lo + hi + 1) / 2;
        if (nm->class_slots[mid] >= s) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

void topomap_i_nodemap_reset(topomap_i_nodemap *nm)
{
    int32_t nn = nm->an->nnodes;
    for (int32_t g = 0; g < nm->k; g++) nm->node_of_group[g] = -1;
    for (int32_t j = 0; j < nn; j++) nm->group_of_node[j] = -1;
    for (int32_t c = 0; c < nm->nclass; c++) nm->slack[c] = 0;
    for (int32_t j = 0; j < nn; j++) nm->slack[nm->node_class[j]]++;
    for (int32_t g = 0; g < nm->k; g++) nm->slack[nm->group_class[g]]--;
    for (int32_t c = 1; c < nm->nclass; c++) nm->slack[c] += nm->slack[c - 1];
}

int topomap_i_nodemap_create(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc,
                             int32_t nalloc, int32_t capacity, topomap_i_ticker *t, topomap_i_nodemap *nm)
{
    memset(nm, 0, sizeof *nm);
    int rc = topomap_alloc_nodes_create(m, alloc, nalloc, capacity, &nm->an);
    if (rc) return rc;
    const topomap_alloc_nodes *an = nm->an;
    int32_t n = p->n, nn = an->nnodes;
    int64_t nnz = p->indptr[n], biggest = 0;
    int64_t *gslots = malloc((size_t)nn * sizeof *gslots);
    int64_t *sorted = malloc((size_t)nn * sizeof *sorted);
    nm->n = n;
    nm->group = malloc((size_t)n * sizeof *nm->group);
    if (!gslots || !sorted || !nm->group) goto nomem;
    for (int32_t j = 0; j < nn; j++) biggest = an->slots[j] > biggest ? an->slots[j] : biggest;
    if (biggest == 1) {
        if (n > nn) {
            rc = topomap_i_fail(TOPOMAP_EINVAL, "%d processes do not fit in the allocation's %d slots", (int)n, (int)nn);
            goto cleanup;
        }
        for (int32_t i = 0; i < n; i++) nm->group[i] = i;
        nm->k = n;
    } else {
        topomap_run_options run = {t->run ? t->run->seed : 0, topomap_i_ticker_cb, t};
        if ((rc = topomap_group_by_node(p, an, &run, nm->group, gslots, &nm->k))) goto cleanup;
    }
    int32_t k = nm->k;
    nm->size = calloc((size_t)k, sizeof *nm->size);
    nm->qindptr = malloc(((size_t)k + 1) * sizeof *nm->qindptr);
    nm->qindices = malloc((size_t)nnz * sizeof *nm->qindices + 1);
    nm->qbytes = malloc((size_t)nnz * sizeof *nm->qbytes + 1);
    nm->node_class = malloc((size_t)nn * sizeof *nm->node_class);
    nm->group_class = malloc((size_t)k * sizeof *nm->group_class);
    nm->node_of_group = malloc((size_t)k * sizeof *nm->node_of_group);
    nm->group_of_node = malloc((size_t)nn * sizeof *nm->group_of_node);
    if (!nm->size || !nm->qindptr || !nm->qindices || !nm->qbytes || !nm->node_class || !nm->group_class ||
        !nm->node_of_group || !nm->group_of_node)
        goto nomem;
    for (int32_t i = 0; i < n; i++) nm->size[nm->group[i]]++;
    if ((rc = topomap_pattern_quotient(p, nm->group, k, nm->qindptr, nm->qindices, nm->qbytes))) goto cleanup;
    int64_t qnnz = nm->qindptr[k];
    nm->xadj = malloc(((size_t)k + 1) * sizeof *nm->xadj);
    nm->adj = malloc(2 * (size_t)qnnz * sizeof *nm->adj + 1);
    nm->wgt = malloc(2 * (size_t)qnnz * sizeof *nm->wgt + 1);
    if (!nm->xadj || !nm->adj || !nm->wgt) goto nomem;
    topomap_pattern q = topomap_i_nodemap_quotient(nm);
    if ((rc = topomap_ugraph_from_pattern(&q, nm->xadj, nm->adj, nm->wgt))) goto cleanup;

    memcpy(sorted, an->slots, (size_t)nn * sizeof *sorted);
    int32_t nc = topomap_i_distinct_i64(sorted, nn);
    nm->nclass = nc;
    nm->class_slots = malloc((size_t)nc * sizeof *nm->class_slots);
    nm->slack = malloc((size_t)nc * sizeof *nm->slack);
    if (!nm->class_slots || !nm->slack) goto nomem;
    for (int32_t c = 0; c < nc; c++) nm->class_slots[c] = sorted[nc - 1 - c]; /* classes by decreasing slots */
    for (int32_t j = 0; j < nn; j++) nm->node_class[j] = last_class_holding(nm, an->slots[j]);
    for (int32_t g = 0; g < k; g++) nm->group_class[g] = last_class_holding(nm, nm->size[g]);
    topomap_i_nodemap_reset(nm);
    for (int32_t c = 0; c < nc; c++)
        if (nm->slack[c] < 0) {
            rc = topomap_i_fail(TOPOMAP_EINVAL, "the %d groups need more nodes of at least %lld slots than the allocation has",
                                (int)k, (long long)nm->class_slots[c]);
            goto cleanup;
        }
    goto cleanup;
nomem:
    rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory building the node-level problem of %d processes", (int)n);
cleanup:
    free(gslots);
    free(sorted);
    if (rc) topomap_i_nodemap_free(nm);
    return rc;
}

int topomap_i_nodemap_fits(const topomap_i_nodemap *nm, int32_t g, int32_t j)
{
    if (nm->group_of_node[j] >= 0 || nm->node_class[j] > nm->group_class[g]) return 0;
    /* classes in [node class, group class) lose a free node and keep their unplaced groups */
    for (int32_t c = nm->node_class[j]; c < nm->group_class[g]; c++)
        if (nm->slack[c] < 1) return 0;
    return 1;
}

void topomap_i_nodemap_place(topomap_i_nodemap *nm, int32_t g, int32_t j)
{
    for (int32_t c = nm->node_class[j]; c < nm->group_class[g]; c++) nm->slack[c]--;
    nm->node_of_group[g] = j;
    nm->group_of_node[j] = g;
}

int topomap_i_nodemap_finish(const topomap_i_nodemap *nm, int32_t *pe_of)
{
    return topomap_place_groups(nm->an, nm->n, nm->group, nm->node_of_group, pe_of);
}

void topomap_i_nodemap_vertex_index(const topomap_i_nodemap *nm, int32_t nv, int32_t *vidx)
{
    for (int32_t v = 0; v < nv; v++) vidx[v] = -1;
    for (int32_t j = 0; j < nm->an->nnodes; j++) vidx[nm->an->node[j]] = j;
}

/* Reverse Cuthill-McKee mapping: Hoefler & Snir, "Generic Topology Mapping
   Strategies for Large-scale Parallel Architectures", ICS 2011: the "rcm"
   strategy of LibTopoMap (TPM_STRATEGY=rcm; mapping as graph similarity,
   both graphs brought to a similar banded shape), after LibTopoMap's
   multicore step.

   From the paper and LibTopoMap's reference code: order the process (here:
   group) graph and the physical graph by reverse Cuthill-McKee (E. Cuthill
   and J. McKee 1969; reversed, A. George 1971) and map the i-th vertex of the
   one to the i-th of the other.  LibTopoMap orders with SPARSPAK's GENRCM:
   per connected component a pseudo-peripheral start vertex (George and Liu
   1979), then breadth-first search appending each vertex's unvisited
   neighbours in increasing degree.

   Choices the paper leaves open, and ours:
   - The physical graph is the whole network graph (compute nodes and
     switches, map_physgraph.c) and the allocation's nodes are taken in the
     order RCM puts them.  LibTopoMap deletes the unallocated vertices
     first, which on an indirect network (fat tree, dragonfly) deletes every
     switch and leaves no edge between nodes to order by; on a torus the two
     agree up to where the search goes between fragments of an allocation.
   - Degree = number of distinct neighbours (weights and parallel links do
     not count).  Ties between equal degrees keep adjacency (= index) order;
     the start rule is an option (map_libtopomap.h): GENRCM's
     pseudo-peripheral vertex, or SciPy's least-degree vertex.  The whole
     order is reversed at the end (GENRCM reverses per component; for a
     connected graph the two are the same).
   - When the groups do not fill the allocation, the i-th group takes the
     i-th node; "respecting slots": the first node in RCM order that is free
     and may take the group without leaving a later group without a node
     large enough (map_physgraph.c).

   Complexity, with U groups and E_U edges between them, V vertices and L
   links of the network: O((U + E_U) log d + V + L log d) for the two orders
   (d the largest degree, for the neighbour sorts) plus one breadth-first
   search per pseudo-peripheral step (a few per component), and
   O(U x classes) for the assignment. */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/map_libtopomap.h"
#include "map_physgraph.h"

void topomap_rcm_options_init(topomap_rcm_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->start = TOPOMAP_RCM_PERIPHERAL;
}

typedef struct {
    const topomap_ugraph *g;
    const int32_t *deg;
    uint8_t *visited;  /* placed in the order */
    int32_t *mark;     /* reached by the level structure of search `stamp` */
    int32_t stamp;
    int32_t *queue;
    int64_t *key;      /* sort scratch: degree * n + position */
} rcm;

static int32_t degree(const topomap_ugraph *g, int32_t v) { return (int32_t)(g->xadj[v + 1] - g->xadj[v]); }

/* Level structure rooted at r over the unvisited vertices: the search order
   in queue, its number of levels and where the last level starts. */
static int32_t levels(rcm *c, int32_t r, int32_t *depth, int32_t *last)
{
    const topomap_ugraph *g = c->g;
    int32_t head = 0, tail = 0, s = ++c->stamp;
    c->queue[tail++] = r;
    c->mark[r] = s;
    *depth = 0;
    while (head < tail) {
        int32_t end = tail;
        *last = head;
        ++*depth;
        for (; head < end; head++)
            for (int64_t e = g->xadj[c->queue[head]]; e < g->xadj[c->queue[head] + 1]; e++) {
                int32_t w = g->adjncy[e];
                if (!c->visited[w] && c->mark[w] != s) {
                    c->mark[w] = s;
                    c->queue[tail++] = w;
                }
            }
    }
    return tail;
}

/* George and Liu's pseudo-peripheral vertex of v's component: root a level
   structure at the last level's vertex of least degree while that adds
   levels. */
static int32_t peripheral(rcm *c, int32_t v)
{
    int32_t depth, last, d2, l2;
    int32_t count = levels(c, v, &depth, &last), r = v;
    for (;;) {
        int32_t x = c->queue[last];
        for (int32_t i = last + 1; i < count; i++)
            if (c->deg[c->queue[i]] < c->deg[x]) x = c->queue[i];
        levels(c, x, &d2, &l2);
        if (d2 <= depth) return r;
        r = x;
        depth = d2;
        last = l2;
    }
}

static int by_key(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Cuthill-McKee search from r, appending to order[*len..]. */
static void cuthill_mckee(rcm *c, int32_t r, int32_t *order, int32_t *len)
{
    const topomap_ugraph *g = c->g;
    int64_t n = g->n;
    int32_t head = *len;
    order[(*len)++] = r;
    c->visited[r] = 1;
    while (head < *len) {
        int32_t u = order[head++], s = *len;
        for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++) {
            int32_t w = g->adjncy[e];
            if (!c->visited[w]) {
                c->visited[w] = 1;
                order[(*len)++] = w;
            }
        }
        /* stable by degree: sort (degree, position) keys */
        int32_t cnt = *len - s;
        if (cnt < 2) continue;
        for (int32_t i = 0; i < cnt; i++) c->key[i] = c->deg[order[s + i]] * n + i;
        qsort(c->key, (size_t)cnt, sizeof *c->key, by_key);
        for (int32_t i = 0; i < cnt; i++) c->queue[i] = order[s + (int32_t)(c->key[i] % n)];
        memcpy(order + s, c->queue, (size_t)cnt * sizeof *order);
    }
}

int topomap_rcm_order(const topomap_ugraph *g, int32_t start, int32_t *order)
{
    if (start != TOPOMAP_RCM_PERIPHERAL && start != TOPOMAP_RCM_MIN_DEGREE)
        return topomap_i_fail(TOPOMAP_EINVAL, "rcm start must be 0 (peripheral) or 1 (min_degree), got %d", (int)start);
    int rc = topomap_ugraph_validate(g);
    if (rc) return rc;
    int32_t n = g->n, maxdeg = 0;
    rcm c = {.g = g};
    int32_t *deg = malloc((size_t)n * sizeof *deg + 1);
    int32_t *seq = malloc((size_t)n * sizeof *seq + 1);
    int32_t *count = NULL;
    c.deg = deg;
    c.visited = calloc((size_t)n + 1, 1);
    c.mark = calloc((size_t)n + 1, sizeof *c.mark);
    c.queue = malloc((size_t)n * sizeof *c.queue + 1);
    c.key = malloc((size_t)n * sizeof *c.key + 1);
    if (!deg || !seq || !c.visited || !c.mark || !c.queue || !c.key) goto nomem;
    for (int32_t v = 0; v < n; v++) {
        deg[v] = degree(g, v);
        maxdeg = deg[v] > maxdeg ? deg[v] : maxdeg;
    }
    /* the candidate starts: by index, or by (degree, index) for MIN_DEGREE */
    if (start == TOPOMAP_RCM_MIN_DEGREE) {
        if (!(count = calloc((size_t)maxdeg + 2, sizeof *count))) goto nomem;
        for (int32_t v = 0; v < n; v++) count[deg[v] + 1]++;
        for (int32_t d = 0; d <= maxdeg; d++) count[d + 1] += count[d];
        for (int32_t v = 0; v < n; v++) seq[count[deg[v]]++] = v;
    } else {
        for (int32_t v = 0; v < n; v++) seq[v] = v;
    }
    int32_t len = 0;
    for (int32_t i = 0; i < n && len < n; i++) {
        int32_t v = seq[i];
        if (c.visited[v]) continue;
        cuthill_mckee(&c, start == TOPOMAP_RCM_PERIPHERAL ? peripheral(&c, v) : v, order, &len);
    }
    for (int32_t i = 0; i < n / 2; i++) {
        int32_t x = order[i];
        order[i] = order[n - 1 - i];
        order[n - 1 - i] = x;
    }
    goto cleanup;
nomem:
    rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory ordering a graph of %d vertices", (int)n);
cleanup:
    free(deg);
    free(seq);
    free(count);
    free(c.visited);
    free(c.mark);
    free(c.queue);
    free(c.key);
    return rc;
}

int topomap_map_rcm(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                    int32_t capacity, const topomap_rcm_options *opt_in, int32_t *pe_of)
{
    topomap_rcm_options opt;
    if (opt_in) opt = *opt_in;
    else topomap_rcm_options_init(&opt);
    if (opt.start != TOPOMAP_RCM_PERIPHERAL && opt.start != TOPOMAP_RCM_MIN_DEGREE)
        return topomap_i_fail(TOPOMAP_EINVAL, "rcm start must be 0 (peripheral) or 1 (min_degree), got %d",
                              (int)opt.start);
    int rc = topomap_pattern_validate(p);
    if (rc) return rc;
    topomap_i_ticker t = {&opt.run, "rcm", 0.0, 0.8, 0, TOPOMAP_I_TICK};
    topomap_i_nodemap nm;
    topomap_i_physgraph pg = {0};
    int32_t *gorder = NULL, *vorder = NULL, *vidx = NULL, *nrank = NULL, *cursor = NULL, *clist = NULL;
    if ((rc = topomap_i_nodemap_create(m, p, alloc, nalloc, capacity, &t, &nm))) return rc;
    t.lo = 0.8;
    t.hi = 1.0;
    if ((rc = topomap_i_report(&t, 0)) || (rc = topomap_i_physgraph_build(m, &pg))) goto cleanup;
    int32_t k = nm.k, nv = pg.nv, nn = nm.an->nnodes, nc = nm.nclass;
    gorder = malloc((size_t)k * sizeof *gorder);
    vorder = malloc((size_t)nv * sizeof *vorder);
    vidx = malloc((size_t)nv * sizeof *vidx);
    nrank = malloc((size_t)nn * sizeof *nrank);
    cursor = calloc(2 * ((size_t)nc + 1), sizeof *cursor); /* and the class ends after it */
    clist = malloc((size_t)nn * sizeof *clist);
    if (!gorder || !vorder || !vidx || !nrank || !cursor || !clist) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the rcm mapping of %d groups", (int)k);
        goto cleanup;
    }
    topomap_ugraph qg = topomap_i_nodemap_graph(&nm), ng = topomap_i_physgraph_view(&pg);
    if ((rc = topomap_rcm_order(&qg, opt.start, gorder)) || (rc = topomap_i_report(&t, 0.4)) ||
        (rc = topomap_rcm_order(&ng, opt.start, vorder)) || (rc = topomap_i_report(&t, 0.8)))
        goto cleanup;
    /* the allocation's nodes in RCM order (nrank), listed by slot class:
       class c is clist[cursor[c] .. end[c]) */
    topomap_i_nodemap_vertex_index(&nm, nv, vidx);
    for (int32_t j = 0; j < nn; j++) cursor[nm.node_class[j] + 1]++;
    for (int32_t c = 0; c < nc; c++) cursor[c + 1] += cursor[c];
    for (int32_t i = 0, r = 0; i < nv; i++) {
        int32_t j = vidx[vorder[i]];
        if (j < 0) continue;
        nrank[j] = r++;
        clist[cursor[nm.node_class[j]]++] = j;
    }
    int32_t *end = cursor + nc + 1;
    for (int32_t c = nc; c > 0; c--) end[c - 1] = cursor[c] = cursor[c - 1];
    cursor[0] = 0;
    /* the i-th group takes the first free node in RCM order that may take it;
       nodes are taken in order within a class, so each class's cursor only
       moves forward, and whether a class may take a group does not depend
       on which of its nodes (map_physgraph.c) */
    for (int32_t i = 0; i < k; i++) {
        int32_t g = gorder[i], best = -1;
        for (int32_t c = 0; c <= nm.group_class[g]; c++) {
            while (cursor[c] < end[c] && nm.group_of_node[clist[cursor[c]]] >= 0) cursor[c]++;
            if (cursor[c] == end[c]) continue;
            int32_t j = clist[cursor[c]];
            if (topomap_i_nodemap_fits(&nm, g, j) && (best < 0 || nrank[j] < nrank[best])) best = j;
        }
        if (best < 0) {
            rc = topomap_i_fail(TOPOMAP_EINVAL, "no allocation node can take group %d of %lld processes", (int)g,
                                (long long)nm.size[g]);
            goto cleanup;
        }
        topomap_i_nodemap_place(&nm, g, best);
    }
    if (!(rc = topomap_i_nodemap_finish(&nm, pe_of))) rc = topomap_i_report(&t, 1);
cleanup:
    topomap_i_nodemap_free(&nm);
    topomap_i_physgraph_free(&pg);
    free(gorder);
    free(vorder);
    free(vidx);
    free(nrank);
    free(cursor);
    free(clist);
    return rc;
}

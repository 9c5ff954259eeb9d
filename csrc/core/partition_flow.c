/* Max-flow refinement of a bisection (Sanders & Schulz, "Engineering
   multilevel graph partitioning algorithms", ESA 2011, §4; KaHIP's flow
   refinement, which is what its strong presets add over FM).

   A band around the cut becomes a flow network: breadth-first from the
   boundary, side s gives up a region R_s no heavier than what side 1 - s
   can take under its target plus alpha x its slack (limit - target); the
   rest of side 0 is contracted into the source, the rest of side 1 into
   the sink.  Any s-t cut of that network is a bisection whose cut is the
   network's cut plus the edges the regions did not reach, and the present
   bisection is one of them, so a minimum cut never cuts more.  With
   alpha = 1 every minimum cut keeps both sides within their limits; a
   larger alpha searches a wider band and some of its minimum cuts do not.

   Choices the source leaves open, and ours:
   - The most balanced minimum cut: the source side grows from what the
     source reaches in the residual graph by the residual's strongly
     connected components (Tarjan) that do not reach the sink, in the
     order Tarjan completes them, so every step is a minimum cut (a
     closed set); the step of best balance within the limits is kept.  The
     source sweeps several random topological orders; one order found the
     straight cut of the jagged grid test where the two extreme minimum
     cuts (smallest and largest source side) are both too unbalanced.
   - alpha = 1, 2, 4, 8 (MAX_ROUNDS rounds), stopping early once a round
     neither cuts less (by more than round-off) nor grows the band.
   - The band grows in vertex order from the boundary and skips a vertex
     that would overfill it (its neighbours may still join through others).
   - Max flow: Dinic's algorithm with floating-point capacities; residuals
     up to 1e-12 of the largest edge weight count as saturated.

   With it the hierarchy mapper's strong preset maps delaunay_n15 with a J
   at or below KaHIP strong's on all four hierarchies measured (figures in
   map_hierarchy.c).

   Cost per round: O(band + its edges) to build the network and sweep the
   cuts, plus the max flow (Dinic: O(V^2 E) at worst, a few BFS phases on
   meshes). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "partition_internal.h"

#define MAX_ROUNDS 4

typedef struct {
    int32_t nv;            /* band vertices, then source nv and sink nv + 1 */
    int64_t *head;         /* nv + 3: CSR of arcs by tail */
    int32_t *to, *rev;     /* arcs */
    double *res;           /* residual capacity */
    int32_t *level, *queue;
    int64_t *it;
    int64_t *stack;        /* the current path's arcs; Tarjan's frames */
    int32_t *low, *comp;   /* Tarjan's */
    uint8_t *mark;
    double *cw;            /* band weight of each component */
    double eps;
} net;

static int bfs_levels(net *f)
{
    int32_t s = f->nv, t = f->nv + 1, qh = 0, qt = 0;
    for (int32_t v = 0; v < f->nv + 2; v++) f->level[v] = -1;
    f->level[s] = 0;
    f->queue[qt++] = s;
    while (qh < qt) {
        int32_t v = f->queue[qh++];
        if (f->level[t] >= 0 && f->level[v] >= f->level[t]) break; /* no shortest path goes further */
        for (int64_t a = f->head[v]; a < f->head[v + 1]; a++)
            if (f->res[a] > f->eps && f->level[f->to[a]] < 0) {
                f->level[f->to[a]] = f->level[v] + 1;
                f->queue[qt++] = f->to[a];
            }
    }
    /* nodes as far as the sink, or unreached, are dead ends */
    for (int32_t i = 0; i < qt; i++)
        if (f->queue[i] != t && f->level[t] >= 0 && f->level[f->queue[i]] >= f->level[t]) f->level[f->queue[i]] = -1;
    return f->level[t] >= 0;
}

/* One blocking flow on the level graph, path by path. */
static double blocking_flow(net *f)
{
    int32_t s = f->nv, t = f->nv + 1, depth = 0, v = s;
    double total = 0;
    for (int32_t u = 0; u < f->nv + 2; u++) f->it[u] = f->head[u];
    for (;;) {
        if (v == t) {
            double push = INFINITY;
            for (int32_t i = 0; i < depth; i++) push = fmin(push, f->res[f->stack[i]]);
            int32_t cut_at = depth;
            for (int32_t i = 0; i < depth; i++) {
                int64_t a = f->stack[i];
                f->res[a] -= push;
                f->res[f->rev[a]] += push;
                if (f->res[a] <= f->eps && cut_at == depth) cut_at = i;
            }
            total += push;
            depth = cut_at; /* resume from the tail of the first saturated arc */
            v = depth ? f->to[f->stack[depth - 1]] : s;
            continue;
        }
        int64_t a = f->it[v];
        while (a < f->head[v + 1] && !(f->res[a] > f->eps && f->level[f->to[a]] == f->level[v] + 1)) a++;
        f->it[v] = a;
        if (a < f->head[v + 1]) {
            f->stack[depth++] = a;
            v = f->to[a];
        } else {
            f->level[v] = -1; /* dead end */
            if (!depth) break;
            depth--;
            v = depth ? f->to[f->stack[depth - 1]] : s;
            f->it[v]++;
        }
    }
    return total;
}

/* mark[v] |= bit for the nodes that reach (from the source: are reached
   from) `start` through arcs with residual capacity. */
static void reach(net *f, int32_t start, int towards, uint8_t bit)
{
    int32_t qh = 0, qt = 0;
    f->mark[start] |= bit;
    f->queue[qt++] = start;
    while (qh < qt) {
        int32_t v = f->queue[qh++];
        for (int64_t a = f->head[v]; a < f->head[v + 1]; a++) {
            double r = towards ? f->res[f->rev[a]] : f->res[a];
            if (r > f->eps && !(f->mark[f->to[a]] & bit)) {
                f->mark[f->to[a]] |= bit;
                f->queue[qt++] = f->to[a];
            }
        }
    }
}

/* Tarjan's strongly connected components of the residual graph, numbered
   in the order they complete: a residual arc never leads to a component
   of higher number.  Returns their count. */
static int32_t components(net *f)
{
    int32_t N = f->nv + 2, *index = f->level, *sstack = f->queue, ns = 0, nf = 0, next = 0, ncomp = 0;
    int64_t *frame = f->stack, *it = f->it;
    for (int32_t v = 0; v < N; v++) index[v] = -1;
    for (int32_t root = 0; root < N; root++) {
        if (index[root] >= 0) continue;
        index[root] = f->low[root] = next++;
        sstack[ns++] = root;
        f->mark[root] |= 4; /* on the stack */
        frame[nf] = root;
        it[nf++] = f->head[root];
        while (nf) {
            int32_t v = (int32_t)frame[nf - 1];
            if (it[nf - 1] < f->head[v + 1]) {
                int64_t a = it[nf - 1]++;
                int32_t w = f->to[a];
                if (!(f->res[a] > f->eps)) continue;
                if (index[w] < 0) {
                    index[w] = f->low[w] = next++;
                    sstack[ns++] = w;
                    f->mark[w] |= 4;
                    frame[nf] = w;
                    it[nf++] = f->head[w];
                } else if (f->mark[w] & 4 && index[w] < f->low[v]) {
                    f->low[v] = index[w];
                }
                continue;
            }
            nf--;
            if (f->low[v] == index[v]) {
                int32_t w;
                do {
                    w = sstack[--ns];
                    f->mark[w] &= (uint8_t)~4;
                    f->comp[w] = ncomp;
                } while (w != v);
                ncomp++;
            }
            if (nf) {
                int32_t u = (int32_t)frame[nf - 1];
                if (f->low[v] < f->low[u]) f->low[u] = f->low[v];
            }
        }
    }
    return ncomp;
}

typedef struct {
    int32_t *id;    /* n: band index of a vertex, -1 outside */
    int32_t *band;  /* the band's vertices */
    uint8_t *side;
    double *cap_s, *cap_t;
} scratch;

/* The band for limit room[] (side s gives up at most room[s]); returns its size. */
static int32_t grow_band(const topomap_i_pgraph *g, const int32_t *part, const double room[2], scratch *w)
{
    int32_t nb = 0;
    double taken[2] = {0, 0};
    for (int32_t v = 0; v < g->n; v++) {
        int boundary = 0;
        for (int64_t e = g->xadj[v]; e < g->xadj[v + 1] && !boundary; e++) boundary = part[g->adj[e]] != part[v];
        if (boundary && w->id[v] < 0 && taken[part[v]] + g->vw[v] <= room[part[v]]) {
            taken[part[v]] += g->vw[v];
            w->id[v] = nb;
            w->band[nb++] = v;
        }
    }
    for (int32_t i = 0; i < nb; i++) {
        int32_t v = w->band[i];
        for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
            int32_t u = g->adj[e];
            if (w->id[u] < 0 && part[u] == part[v] && taken[part[u]] + g->vw[u] <= room[part[u]]) {
                taken[part[u]] += g->vw[u];
                w->id[u] = nb;
                w->band[nb++] = u;
            }
        }
    }
    return nb;
}

/* The flow network of the band; *net_cut = what the present bisection cuts in it. */
static int build_net(const topomap_i_pgraph *g, const int32_t *part, int32_t nb, scratch *w, net *f, double *net_cut)
{
    int64_t inner = 0;
    double biggest = 0, cut = 0;
    for (int32_t i = 0; i < nb; i++) {
        int32_t v = w->band[i];
        w->cap_s[i] = w->cap_t[i] = 0;
        for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
            int32_t u = g->adj[e];
            double x = g->ew[e];
            biggest = fmax(biggest, x);
            if (w->id[u] >= 0) {
                inner++;
                if (part[u] != part[v] && v < u) cut += x;
            } else if (part[u] == 0) {
                w->cap_s[i] += x;
                if (part[v] == 1) cut += x;
            } else {
                w->cap_t[i] += x;
                if (part[v] == 0) cut += x;
            }
        }
    }
    int64_t narcs = inner + 2 * (int64_t)nb * 2;
    f->nv = nb;
    f->head = calloc((size_t)nb + 3, sizeof *f->head);
    f->to = malloc((size_t)narcs * sizeof *f->to + 1);
    f->rev = malloc((size_t)narcs * sizeof *f->rev + 1);
    f->res = malloc((size_t)narcs * sizeof *f->res + 1);
    f->level = malloc(((size_t)nb + 2) * sizeof *f->level);
    f->queue = malloc(((size_t)nb + 2) * sizeof *f->queue);
    f->it = malloc(((size_t)nb + 2) * sizeof *f->it);
    f->stack = malloc(((size_t)nb + 2) * sizeof *f->stack);
    f->low = malloc(((size_t)nb + 2) * sizeof *f->low);
    f->comp = malloc(((size_t)nb + 2) * sizeof *f->comp);
    f->mark = malloc((size_t)nb + 2);
    f->cw = malloc(((size_t)nb + 2) * sizeof *f->cw);
    if (!f->head || !f->to || !f->rev || !f->res || !f->level || !f->queue || !f->it || !f->stack || !f->low ||
        !f->comp || !f->mark || !f->cw)
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for a flow network of %d vertices", (int)nb);
    int32_t s = nb, t = nb + 1;
    /* arcs per tail: inner edges, an arc to s and one to t where the vertex
       has edges there, and their reverses out of s and t */
    for (int32_t i = 0; i < nb; i++) {
        int32_t v = w->band[i];
        for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) f->head[i + 1] += w->id[g->adj[e]] >= 0;
        f->head[i + 1] += (w->cap_s[i] > 0) + (w->cap_t[i] > 0);
        f->head[s + 1] += w->cap_s[i] > 0;
        f->head[t + 1] += w->cap_t[i] > 0;
    }
    for (int32_t v = 0; v < nb + 2; v++) f->head[v + 1] += f->head[v];
    int64_t *fill = f->it; /* scratch until the flow starts */
    for (int32_t v = 0; v < nb + 2; v++) fill[v] = f->head[v];
    for (int32_t i = 0; i < nb; i++) {
        int32_t v = w->band[i];
        for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
            int32_t j = w->id[g->adj[e]];
            if (j < i) continue; /* each inner edge once, from its lower end; j < 0: outside */
            int64_t a = fill[i]++, b = fill[j]++;
            f->to[a] = j;
            f->to[b] = i;
            f->rev[a] = b;
            f->rev[b] = a;
            f->res[a] = f->res[b] = g->ew[e];
        }
        if (w->cap_s[i] > 0) { /* s -> i, and its reverse */
            int64_t a = fill[s]++, b = fill[i]++;
            f->to[a] = i, f->to[b] = s, f->rev[a] = b, f->rev[b] = a;
            f->res[a] = w->cap_s[i], f->res[b] = 0;
        }
        if (w->cap_t[i] > 0) { /* i -> t */
            int64_t a = fill[i]++, b = fill[t]++;
            f->to[a] = t, f->to[b] = i, f->rev[a] = b, f->rev[b] = a;
            f->res[a] = w->cap_t[i], f->res[b] = 0;
        }
    }
    f->eps = 1e-12 * fmax(biggest, 1e-300);
    *net_cut = cut;
    return TOPOMAP_OK;
}

static void net_free(net *f)
{
    free(f->head);
    free(f->to);
    free(f->rev);
    free(f->res);
    free(f->level);
    free(f->queue);
    free(f->it);
    free(f->stack);
    free(f->low);
    free(f->comp);
    free(f->mark);
    free(f->cw);
    memset(f, 0, sizeof *f);
}

/* The most balanced minimum cut that fits the limits, of those one sweep
   meets: the source side starts as what the source reaches in the residual
   graph and takes the components that do not reach the sink one by one in
   Tarjan's order, so every arc with residual capacity out of it leads to
   a component already in and every step is a minimum cut.  w->side[i] = 0
   for band vertices on the source side; returns 1 if one fits. */
static int most_balanced(const topomap_i_pgraph *g, const int32_t *part, const double *pw, const double *limit,
                         int32_t nb, scratch *w, net *f)
{
    memset(f->mark, 0, (size_t)nb + 2);
    reach(f, nb, 0, 1);
    reach(f, nb + 1, 1, 2);
    int32_t ncomp = components(f), upto = -2;
    double cur = pw[0], total = pw[0] + pw[1], best = INFINITY;
    for (int32_t c = 0; c < ncomp; c++) f->cw[c] = 0;
    for (int32_t i = 0; i < nb; i++) {
        double x = g->vw[w->band[i]];
        if (part[w->band[i]] == 0) cur -= x; /* the source side before the sweep: side 0 outside the band */
        if (f->mark[i] & 1) cur += x;
        else if (!(f->mark[i] & 2)) f->cw[f->comp[i]] += x;
    }
    for (int32_t c = -1; c < ncomp; c++) {
        if (c >= 0) cur += f->cw[c];
        double rest = total - cur, over = fmax(cur / limit[0], rest / limit[1]);
        if (cur <= limit[0] * (1 + 1e-12) && rest <= limit[1] * (1 + 1e-12) && over < best) {
            best = over;
            upto = c;
        }
    }
    if (upto == -2) return 0;
    for (int32_t i = 0; i < nb; i++)
        w->side[i] = !(f->mark[i] & 1 || (!(f->mark[i] & 2) && f->comp[i] <= upto));
    return 1;
}

int topomap_i_flow_refine(const topomap_i_pgraph *g, const double *limit, int32_t *part, double *pw,
                          topomap_i_pctx *c, int *changed)
{
    int32_t n = g->n;
    scratch w = {malloc((size_t)n * sizeof(int32_t) + 1), malloc((size_t)n * sizeof(int32_t) + 1),
                 malloc((size_t)n + 1), malloc((size_t)n * sizeof(double) + 1), malloc((size_t)n * sizeof(double) + 1)};
    net f = {0};
    int rc = TOPOMAP_OK;
    if (changed) *changed = 0;
    if (!w.id || !w.band || !w.side || !w.cap_s || !w.cap_t) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory refining %d vertices by flows", (int)n);
        goto cleanup;
    }
    for (int32_t v = 0; v < n; v++) w.id[v] = -1;
    double alpha = 1;
    int32_t last_nb = -1;
    for (int round = 0; round < MAX_ROUNDS; round++, alpha *= 2) {
        double room[2], net_cut = 0, flow = 0, total = pw[0] + pw[1];
        for (int s = 0; s < 2; s++) { /* side s gives up what fits side 1 - s with alpha x its slack */
            double tgt = total * limit[1 - s] / (limit[0] + limit[1]);
            room[s] = fmax(0, tgt + alpha * (limit[1 - s] - tgt) - pw[1 - s]);
        }
        int32_t nb = grow_band(g, part, room, &w);
        int improved = 0;
        if (nb > 0 && !(rc = build_net(g, part, nb, &w, &f, &net_cut))) {
            while (bfs_levels(&f)) flow += blocking_flow(&f);
            rc = topomap_i_ptick(c, f.head[nb + 2]);
            if (!rc && flow < net_cut * (1 - 1e-9) && most_balanced(g, part, pw, limit, nb, &w, &f)) {
                for (int32_t i = 0; i < nb; i++) {
                    int32_t v = w.band[i], to = w.side[i];
                    if (part[v] != to) {
                        pw[part[v]] -= g->vw[v];
                        pw[to] += g->vw[v];
                        part[v] = to;
                    }
                }
                improved = 1;
                if (changed) *changed = 1;
            }
        }
        for (int32_t i = 0; i < nb; i++) w.id[w.band[i]] = -1;
        net_free(&f);
        if (rc || (!improved && nb == last_nb)) break; /* the band has stopped growing */
        last_nb = nb;
    }
cleanup:
    net_free(&f);
    free(w.id);
    free(w.band);
    free(w.side);
    free(w.cap_s);
    free(w.cap_t);
    return rc;
}

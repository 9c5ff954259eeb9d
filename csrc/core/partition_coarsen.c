/* Coarsening by heavy-edge matching (Karypis & Kumar 1998, SIAM J. Sci.
   Comput. 20(1), §3: "HEM").

   Choices the source leaves open, as made here:
   - Visit order: a permutation drawn from the call's seeded generator
     (METIS 5's SHEM sorts by degree first; the plain random order of the
     1998 paper is used).
   - Ties between equally heavy edges go to the lighter neighbour (keeps
     coarse vertex weights even), then to the first in the adjacency row.
   - A pair is matched only if its weight stays <= max_vw (the caller passes
     1.5 W / coarsening target), so no coarse vertex gets too heavy to
     balance.
   - Unmatched vertices are copied to the coarse graph alone; there is no
     2-hop matching, so the caller stops when a level shrinks by less than
     5%.
   - Coarse ids follow the smallest fine id of each pair, which keeps the
     memory order of the fine graph.

   The random visit order makes the matching wait on memory (a row and its
   offsets per vertex, far from the last one); fetching them a few visits
   ahead cuts a 10^6-vertex bisection of the 160x80x80 stencil from 2.7 to
   2.4 s of CPU, with the same matching (the 10^6 topdown mapping from the
   graph alone spends 19 % of its time here instead of 21 %). */
#include <stdlib.h>
#include "topomap/error.h"
#include "partition_internal.h"
#include "prefetch.h"


int topomap_i_coarsen(const topomap_i_pgraph *g, double max_vw, topomap_i_pctx *c, int32_t *cmap,
                      topomap_i_pgraph *coarse)
{
    int rc = TOPOMAP_OK;
    int32_t n = g->n;
    int64_t m = g->xadj[n];
    topomap_i_pool *pool = &c->pool;
    int32_t *order = topomap_i_palloc(pool, (size_t)n * sizeof *order);
    int32_t *match = topomap_i_palloc(pool, (size_t)n * sizeof *match);
    int32_t *rep = topomap_i_palloc(pool, (size_t)n * sizeof *rep);
    int64_t *pos = NULL, *cx = NULL;
    int32_t *ca = NULL;
    double *cw = NULL, *cv = NULL;
    *coarse = (topomap_i_pgraph){0};
    if (!order || !match || !rep) goto nomem;
    for (int32_t v = 0; v < n; v++) {
        order[v] = v;
        match[v] = -1;
    }
    topomap_rng_shuffle_i32(&c->rng, order, n);
    for (int32_t i = 0; i < n; i++) {
        int32_t u = order[i];
        if (i + AHEAD_OFFSETS < n) PREFETCH(&g->xadj[order[i + AHEAD_OFFSETS]]);
        if (i + AHEAD_ROW < n) {
            int32_t w = order[i + AHEAD_ROW];
            PREFETCH(&match[w]);
            PREFETCH(&g->adj[g->xadj[w]]);
            PREFETCH(&g->ew[g->xadj[w]]);
        }
        if (match[u] >= 0) continue;
        int32_t best = -1;
        double bw = -1, bv = 0;
        for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++) {
            int32_t v = g->adj[e];
            if (match[v] >= 0 || g->vw[u] + g->vw[v] > max_vw) continue;
            if (g->ew[e] > bw || (g->ew[e] == bw && g->vw[v] < bv)) {
                best = v;
                bw = g->ew[e];
                bv = g->vw[v];
            }
        }
        match[u] = best >= 0 ? best : u;
        if (best >= 0) match[best] = u;
    }
    rc = topomap_i_ptick(c, m + n);
    if (rc) goto cleanup;

    int32_t nc = 0;
    for (int32_t v = 0; v < n; v++) cmap[v] = -1;
    for (int32_t v = 0; v < n; v++) {
        if (cmap[v] >= 0) continue;
        cmap[v] = cmap[match[v]] = nc;
        rep[nc++] = v;
    }
    pos = topomap_i_palloc(pool, (size_t)nc * sizeof *pos);
    cx = topomap_i_palloc(pool, ((size_t)nc + 1) * sizeof *cx);
    ca = topomap_i_palloc(pool, (size_t)m * sizeof *ca);
    cw = topomap_i_palloc(pool, (size_t)m * sizeof *cw);
    cv = topomap_i_palloc(pool, (size_t)nc * sizeof *cv);
    if (!pos || !cx || !ca || !cw || !cv) goto nomem;
    for (int32_t i = 0; i < nc; i++) pos[i] = -1;
    /* Merge the rows of each pair; pos[] remembers where a coarse neighbour
       sits in the current row (positions only grow, so >= row start means
       "seen in this row"). */
    int64_t len = 0;
    cx[0] = 0;
    for (int32_t i = 0; i < nc; i++) {
        int32_t u = rep[i], v = match[u];
        int64_t start = len;
        cv[i] = g->vw[u] + (v != u ? g->vw[v] : 0);
        for (int side = 0; side < (v != u ? 2 : 1); side++) {
            int32_t x = side ? v : u;
            for (int64_t e = g->xadj[x]; e < g->xadj[x + 1]; e++) {
                int32_t y = cmap[g->adj[e]];
                if (y == i) continue;
                if (pos[y] >= start) {
                    cw[pos[y]] += g->ew[e];
                } else {
                    pos[y] = len;
                    ca[len] = y;
                    cw[len++] = g->ew[e];
                }
            }
        }
        cx[i + 1] = len;
    }
    rc = topomap_i_ptick(c, m + n);
    if (rc) goto cleanup;
    coarse->n = nc;
    coarse->xadj = cx;
    coarse->adj = ca;
    coarse->ew = cw;
    coarse->vw = cv;
    coarse->owned[0] = cx;
    coarse->owned[1] = ca;
    coarse->owned[2] = cw;
    coarse->owned[3] = cv;
    coarse->pool = pool;
    cx = NULL;
    ca = NULL;
    cw = cv = NULL;
    topomap_i_pgraph_weigh(coarse);
    goto cleanup;
nomem:
    rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory coarsening a graph of %d vertices", (int)n);
cleanup:
    topomap_i_pfree(pool, order);
    topomap_i_pfree(pool, match);
    topomap_i_pfree(pool, rep);
    topomap_i_pfree(pool, pos);
    topomap_i_pfree(pool, cx);
    topomap_i_pfree(pool, ca);
    topomap_i_pfree(pool, cw);
    topomap_i_pfree(pool, cv);
    return rc;
}

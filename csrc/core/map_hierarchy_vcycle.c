/* V-cycles: improve a given partition by coarsening the graph without
   crossing part boundaries, refining the (unchanged) partition on the
   coarse levels, and projecting back (Walshaw 2004, "Multilevel refinement
   for combinatorial optimisation problems", Ann. Oper. Res. 131; Sanders &
   Schulz 2011, "Engineering multilevel graph partitioning algorithms", ESA,
   §"iterated V-cycles": matching never contracts a cut edge, so the coarse
   levels hold the current partition and refinement there moves whole
   clusters).  Clustering by size-constrained label propagation (Meyerhenke,
   Sanders & Schulz 2014, "Partitioning complex networks via size-constrained
   clustering", SEA; KaHIP's and Integrated Process Mapping's coarsening,
   notes/anchors.md §1.3), restricted to the vertex's own part.  Refinement
   on every level is topomap_partition_refine (balancing pass + k-way FM,
   partition.h) under the hard capacities the partition already meets.

   Choices the sources leave open, as made here:
   - Cluster weight bound 1.5 W / (30 k), as partition.c's coarsening; 3
     label-propagation rounds in a seeded random order, a vertex joins the
     neighbouring cluster (in its part) it is most connected to, ties to
     the first seen, never above the bound; coarsening stops at 30 k
     vertices or when a level shrinks by less than 5%.
   - Every level is refined under the caller's capacities: the projected
     partition meets them, so the balancing pass has nothing to do and FM
     keeps them.  When a coarse refinement cannot balance unequal cluster
     weights back to the capacities (partition.h: TOPOMAP_EINVAL), the cycle
     is dropped.
   - A cycle is kept only if its cut is smaller; the first that is not ends
     the cycles.
   On the reference graphs (3 seeds, rgg_n_2_15_s0 / delaunay_n15 into 2
   and 8 parts) two cycles cut the multilevel partition's cut by 7-20% on
   rgg_n_2_15_s0 and 1-2% on delaunay_n15.

   Complexity per cycle: O(m) per level for clustering and contraction
   (rows sorted in O(d log d)), plus one FM refinement per level. */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/rng.h"
#include "map_hierarchy_internal.h"
#include "partition_internal.h"
#include "prefetch.h"

#define MAX_LEVELS 48
#define LP_ROUNDS 3
#define COARSEST 30 /* vertices per part at which coarsening stops */

int topomap_i_hspan_cb(void *span, double f)
{
    const topomap_i_hspan *s = span;
    return s->progress(s->ctx, s->lo + (s->hi - s->lo) * f);
}

int topomap_i_hspan_report(const topomap_i_hspan *s, double f)
{
    if (s && s->progress && topomap_i_hspan_cb((void *)s, f))
        return topomap_i_fail(TOPOMAP_ECANCELED, "hierarchy mapping cancelled by the progress callback at %.0f%%",
                              100 * (s->lo + (s->hi - s->lo) * f));
    return TOPOMAP_OK;
}

topomap_i_hspan topomap_i_hspan_sub(const topomap_i_hspan *s, double a, double b)
{
    topomap_i_hspan t = *s;
    t.lo = s->lo + (s->hi - s->lo) * a;
    t.hi = s->lo + (s->hi - s->lo) * b;
    return t;
}

/* One coarse level: its graph and the map from the next finer level. */
typedef struct {
    topomap_ugraph g;
    int64_t *xadj;
    int32_t *adj;
    double *ew, *vw;
    int32_t *cmap; /* finer vertex -> vertex of this level */
    int32_t *part;
} level;

static void level_free(level *l)
{
    free(l->xadj);
    free(l->adj);
    free(l->ew);
    free(l->vw);
    free(l->cmap);
    free(l->part);
}

typedef struct {
    double w;
    int32_t v;
} entry;

static int cmp_entry(const void *a, const void *b)
{
    int32_t x = ((const entry *)a)->v, y = ((const entry *)b)->v;
    return (x > y) - (x < y);
}

static double vweight(const topomap_ugraph *g, int32_t v) { return g->vwgt ? g->vwgt[v] : 1.0; }

/* Size-constrained label propagation inside parts; cmap[v] = compact
   cluster id (in order of first appearance); returns the cluster count.
   A label's sum is valid while its mark is the current visit's number, so
   no pass clears the marks.  The visits go in random order, so rows and
   labels are fetched a few visits ahead (as partition_coarsen.c does).
   Scratch: label, order (n), size, acc (n), mark (n). */
static int32_t cluster(const topomap_ugraph *g, const int32_t *part, double maxw, topomap_rng *r, int32_t *cmap,
                       int32_t *label, int32_t *order, double *size, double *acc, int32_t *mark)
{
    int32_t n = g->n, visit = -1;
    for (int32_t v = 0; v < n; v++) {
        label[v] = v;
        order[v] = v;
        size[v] = vweight(g, v);
        acc[v] = 0;
        mark[v] = -1;
    }
    topomap_rng_shuffle_i32(r, order, n);
    for (int round = 0; round < LP_ROUNDS; round++) {
        int64_t moved = 0;
        for (int32_t i = 0; i < n; i++) {
            if (++visit == INT32_MAX) {
                for (int32_t v = 0; v < n; v++) mark[v] = -1;
                visit = 0;
            }
            if (i + AHEAD_OFFSETS < n) PREFETCH(&g->xadj[order[i + AHEAD_OFFSETS]]);
            if (i + AHEAD_ROW < n) {
                int32_t w = order[i + AHEAD_ROW];
                PREFETCH(&g->adjncy[g->xadj[w]]);
                PREFETCH(&g->adjwgt[g->xadj[w]]);
                PREFETCH(&part[w]);
            }
            int32_t v = order[i], own = label[v], best = own;
            double wv = vweight(g, v);
            for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
                int32_t u = g->adjncy[e];
                if (part[u] != part[v]) continue;
                int32_t l = label[u];
                if (mark[l] != visit) {
                    mark[l] = visit;
                    acc[l] = 0;
                }
                acc[l] += g->adjwgt[e];
            }
            double bw = mark[own] == visit ? acc[own] : 0;
            for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
                int32_t u = g->adjncy[e], l = label[u];
                if (part[u] != part[v] || l == own) continue;
                if (acc[l] > bw && size[l] + wv <= maxw) {
                    bw = acc[l];
                    best = l;
                }
            }
            if (best != own) {
                size[own] -= wv;
                size[best] += wv;
                label[v] = best;
                moved++;
            }
        }
        if (!moved) break;
    }
    int32_t nc = 0;
    for (int32_t v = 0; v < n; v++) mark[v] = -1;
    for (int32_t v = 0; v < n; v++) {
        int32_t l = label[v];
        if (mark[l] < 0) mark[l] = nc++;
        cmap[v] = mark[l];
    }
    return nc;
}

/* The quotient graph of fine under cmap (nc clusters), rows sorted. */
static int contract(const topomap_ugraph *fine, const int32_t *cmap, int32_t nc, level *out, int32_t *start,
                    int32_t *members, double *acc, int32_t *mark, entry *row)
{
    int32_t n = fine->n;
    int64_t m = fine->xadj[n];
    out->xadj = malloc(((size_t)nc + 1) * sizeof *out->xadj);
    out->adj = malloc((size_t)m * sizeof *out->adj + 1);
    out->ew = malloc((size_t)m * sizeof *out->ew + 1);
    out->vw = calloc((size_t)nc, sizeof *out->vw);
    if (!out->xadj || !out->adj || !out->ew || !out->vw)
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory contracting %d vertices", (int)n);
    for (int32_t c = 0; c <= nc; c++) start[c] = 0;
    for (int32_t v = 0; v < n; v++) {
        start[cmap[v] + 1]++;
        out->vw[cmap[v]] += vweight(fine, v);
    }
    for (int32_t c = 0; c < nc; c++) start[c + 1] += start[c];
    for (int32_t v = 0; v < n; v++) members[start[cmap[v]]++] = v;
    for (int32_t c = nc; c > 0; c--) start[c] = start[c - 1];
    start[0] = 0;
    for (int32_t c = 0; c < nc; c++) mark[c] = -1;
    int64_t len = 0;
    out->xadj[0] = 0;
    for (int32_t c = 0; c < nc; c++) {
        int32_t cnt = 0;
        for (int32_t t = start[c]; t < start[c + 1]; t++) {
            int32_t v = members[t];
            for (int64_t e = fine->xadj[v]; e < fine->xadj[v + 1]; e++) {
                int32_t d = cmap[fine->adjncy[e]];
                if (d == c) continue;
                if (mark[d] != c) {
                    mark[d] = c;
                    acc[d] = 0;
                    row[cnt++].v = d;
                }
                acc[d] += fine->adjwgt[e];
            }
        }
        for (int32_t i = 0; i < cnt; i++) row[i].w = acc[row[i].v];
        qsort(row, (size_t)cnt, sizeof *row, cmp_entry);
        for (int32_t i = 0; i < cnt; i++) {
            out->adj[len] = row[i].v;
            out->ew[len++] = row[i].w;
        }
        out->xadj[c + 1] = len;
    }
    out->g = (topomap_ugraph){nc, out->xadj, out->adj, out->ew, out->vw};
    return TOPOMAP_OK;
}

static int refine(const topomap_ugraph *g, int32_t k, const double *caps, uint64_t seed, const topomap_i_hspan *sp,
                  int32_t *part)
{
    topomap_partition_options opt;
    topomap_partition_options_init(&opt);
    opt.trusted = 1;
    opt.hard = 1;
    opt.imbalance = 0;
    opt.seed = seed;
    if (sp && sp->progress) {
        opt.progress = topomap_i_hspan_cb;
        opt.progress_ctx = (void *)sp;
    }
    return topomap_partition_refine(g, k, caps, &opt, part, NULL, NULL);
}

/* One V-cycle: 0 and *improved set, or an error other than EINVAL. */
static int vcycle(const topomap_ugraph *g, int32_t k, const double *caps, topomap_rng *r, const topomap_i_hspan *sp,
                  int32_t *part, double *scratch_d, int32_t *scratch_i, entry *row)
{
    int32_t n = g->n;
    level lv[MAX_LEVELS];
    int nl = 0, rc = TOPOMAP_OK;
    double total = 0;
    for (int32_t v = 0; v < n; v++) total += vweight(g, v);
    double maxw = 1.5 * total / ((double)COARSEST * k);
    const topomap_ugraph *fine = g;
    const int32_t *fpart = part;
    double *size = scratch_d, *acc = scratch_d + n;
    int32_t *label = scratch_i, *order = scratch_i + n, *mark = scratch_i + 2 * (size_t)n,
            *start = scratch_i + 3 * (size_t)n, *members = scratch_i + 4 * (size_t)n + 1;
    while (nl < MAX_LEVELS && fine->n > COARSEST * k) {
        level *l = &lv[nl];
        memset(l, 0, sizeof *l);
        l->cmap = malloc((size_t)fine->n * sizeof *l->cmap);
        if (!l->cmap) {
            rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory coarsening %d vertices", (int)fine->n);
            break;
        }
        nl++;
        double mw = maxw;
        for (int32_t v = 0; v < fine->n; v++)
            if (vweight(fine, v) > mw) mw = vweight(fine, v);
        int32_t nc = cluster(fine, fpart, mw, r, l->cmap, label, order, size, acc, mark);
        if (nc > 0.95 * fine->n) { /* stalled: this level would add nothing */
            nl--;
            level_free(l);
            break;
        }
        if ((rc = contract(fine, l->cmap, nc, l, start, members, acc, mark, row))) break;
        l->part = malloc((size_t)nc * sizeof *l->part);
        if (!l->part) {
            rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory coarsening %d vertices", (int)fine->n);
            break;
        }
        for (int32_t v = 0; v < fine->n; v++) l->part[l->cmap[v]] = fpart[v];
        fine = &l->g;
        fpart = l->part;
    }
    /* refine from the coarsest level up; the finest level is the caller's */
    for (int i = nl - 1; i >= 0 && !rc; i--) {
        topomap_i_hspan s = topomap_i_hspan_sub(sp, (double)(nl - 1 - i) / (nl + 1), (double)(nl - i) / (nl + 1));
        rc = refine(&lv[i].g, k, caps, topomap_rng_next(r), &s, lv[i].part);
        int32_t *finer = i > 0 ? lv[i - 1].part : part;
        int32_t nf = i > 0 ? lv[i - 1].g.n : n;
        for (int32_t v = 0; !rc && v < nf; v++) finer[v] = lv[i].part[lv[i].cmap[v]];
    }
    if (!rc) {
        topomap_i_hspan s = topomap_i_hspan_sub(sp, (double)nl / (nl + 1), 1);
        rc = refine(g, k, caps, topomap_rng_next(r), &s, part);
    }
    for (int i = 0; i < nl; i++) level_free(&lv[i]);
    return rc;
}

int topomap_i_vcycles(const topomap_ugraph *g, int32_t k, const double *caps, int32_t cycles, uint64_t seed,
                      const topomap_i_hspan *span, int32_t *part, double *cut)
{
    int32_t n = g->n;
    int rc = TOPOMAP_OK;
    double before = 0, after = 0;
    int32_t *backup = malloc((size_t)n * sizeof *backup);
    double *sd = malloc(2 * (size_t)n * sizeof *sd);
    int32_t *si = malloc((5 * (size_t)n + 2) * sizeof *si);
    entry *row = malloc((size_t)n * sizeof *row);
    if (!backup || !sd || !si || !row) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for V-cycles on %d vertices", (int)n);
        goto cleanup;
    }
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    if ((rc = topomap_i_partition_stats(g, k, part, NULL, &before))) goto cleanup;
    for (int32_t c = 0; c < cycles; c++) {
        memcpy(backup, part, (size_t)n * sizeof *part);
        topomap_i_hspan s = topomap_i_hspan_sub(span, (double)c / cycles, (double)(c + 1) / cycles);
        rc = vcycle(g, k, caps, &r, &s, part, sd, si, row);
        if (rc == TOPOMAP_EINVAL) { /* unequal cluster weights did not fit the capacities */
            memcpy(part, backup, (size_t)n * sizeof *part);
            rc = TOPOMAP_OK;
            break;
        }
        if (rc) goto cleanup;
        if ((rc = topomap_i_partition_stats(g, k, part, NULL, &after))) goto cleanup;
        if (!(after < before)) {
            memcpy(part, backup, (size_t)n * sizeof *part);
            break;
        }
        before = after;
    }
    if (cut) *cut = before;
cleanup:
    free(backup);
    free(sd);
    free(si);
    free(row);
    return rc;
}

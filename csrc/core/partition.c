/* Multilevel graph partitioning (Karypis & Kumar 1998: "A fast and high
   quality multilevel scheme for partitioning irregular graphs", SIAM J. Sci.
   Comput. 20(1), and "Multilevel k-way partitioning scheme for irregular
   graphs", JPDC 48(1)): coarsen by heavy-edge matching
   (partition_coarsen.c), partition the coarsest graph by recursive
   greedy-growing bisection (partition_initial.c), then project back level by
   level, balancing and FM-refining at each (partition_refine.c, Fiduccia &
   Mattheyses 1982).  This file holds the public API, input checks and the
   level driver.

   Choices the sources leave open, as made here:
   - k-way: coarsen while the graph has more than 30 k vertices; a
     bisection: more than 30.  Stop early when a level shrinks by less than
     5% (matching has stalled, e.g. on a star).  Coarse vertices weigh at
     most 1.5 W / that target.
   - The initial k-way partition of the coarsest graph is a recursive
     bisection; every bisection step runs opt->ntries (default 4) complete
     multilevel bisections and keeps the best (least overload, then
     smallest cut).  Measured on the reference graphs (3elt, rgg_n_2_15_s0,
     delaunay_n15; k = 8, 64, 512; 3 seeds) and 16^3, 22^3 stencils into
     full nodes of 8: 4 runs instead of 1 lower the cut by 2% on average
     with the k-way scheme and by 4% with recursive bisection (13% on
     rgg_n_2_15_s0, k = 64; 8.5% on the 16^3 stencil), 2 runs give about
     half of that for half the time.  Coarsening bisections down to 30
     rather than 100 vertices lowers the cut by about 1%.
   - Each bisection of a recursive bisection into k parts gets the imbalance
     (1 + eps)^(1 / ceil(log2 k)) - 1, so that the nested bounds compose to
     about 1 + eps; the final k-way balancing pass enforces the real bound
     in any case.
   - Bounds per level: partition.h's L_i computed from that level's vertex
     weights (coarse vertices are heavier, so coarse bounds are looser).
   - Hard capacities apply at the finest level of the whole graph only.
     Above it, the targets t_i = W cap_i / sum(cap) are used with imbalance
     0 (L_i = R_i still leaves one vertex of room); 0 gave 0.3-2% smaller
     cuts than 3% on 16^3 and 32^3 stencils into full nodes of 8.  The finest level is refined
     first under max((1 + opt->imbalance) cap_i, cap_i + largest vertex
     weight), then balanced to the capacities and refined again: k-way FM
     cannot move anything between exactly full parts, and this first pass
     cut rgg_n_2_15_s0 into 64 full parts 18% lower (5128 -> 4215).  With
     k > 2 the two passes run a second time, kept if the cut is lower:
     with partition_paths.c's balancing, 0.2-2.1% lower cuts (mean of
     seeds 0-2) on the reference graphs and 22^3, 46^3 stencils into full
     nodes of 8 and 16; a third time gained another 0.3-1% for another
     pass's time (2.5 s on 10^6 vertices into 62,500 parts).  The second
     time is for callers that ask for more than one try: with ntries = 1
     (the node grouping above 32,768 processes) the passes run once, as
     the second cost 3.2 s of 25 s for a 0.33% lower cut on 10^6 vertices
     into 62,500 parts (0.34% in 1.6 instead of 1.8 s at 93,312).
   - k = 2 is one step of recursive bisection (the best of ntries
     multilevel bisections).
   - recursive = 1 (APHiD's choice): recursive bisection of the whole graph,
     each bisection multilevel, then the finest-level pass above (balancing
     to the bounds, k-way FM).
   - Progress: k-way coarsening reports 0..0.1, the initial partition
     0.1..0.4 (by parts finished), refinement 0.4..1 (by level size);
     recursive bisection reports 0..0.9 by parts, its final pass 0.9..1.
     Cancellation is also checked every 2^16 units of work (about that many
     edge visits).

   Complexity, n vertices and m edges: a coarsening level O(n + m), levels
   about log2(n / 30 k); a bisection O(ntries (n + m)) (its own coarsening,
   growths on <= 30 vertices, FM passes of O(m + b log n) for b boundary
   vertices, at most 10 per level, the later ones over the last boundary
   and the kept moves' neighbourhoods only), so recursive bisection into
   k parts O(ntries (n + m) log k) -- and the k-way initial partition the same on
   the coarsest graph, which is the whole graph when k > n / 30 (nodes of
   16 processes); the finest level adds 2 x 2 passes (ntries > 1) or 2 of balancing
   (partition_paths.c: O(n + m) per round, at most 8) and k-way FM. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "partition_internal.h"

#define CHECK_EVERY 65536
#define MAX_LEVELS 64
#define BISECT_COARSEN_TO 30
#define FINEST_CYCLES 2

/* Debug builds validate trusted graphs too, so the C tests catch a caller
   whose graph breaks the invariants. */
#ifdef NDEBUG
#define CHECK_TRUSTED 0
#else
#define CHECK_TRUSTED 1
#endif

void topomap_partition_options_init(topomap_partition_options *opt)
{
    *opt = (topomap_partition_options){0};
    opt->imbalance = 0.03;
    opt->ntries = 4;
}

void topomap_i_pgraph_free(topomap_i_pgraph *g)
{
    for (int i = 0; i < 4; i++) topomap_i_pfree(g->pool, g->owned[i]);
    *g = (topomap_i_pgraph){0};
}

void topomap_i_pgraph_weigh(topomap_i_pgraph *g)
{
    g->total_w = 0;
    g->min_w = g->n ? g->vw[0] : 0;
    g->max_w = g->min_w;
    for (int32_t v = 0; v < g->n; v++) {
        g->total_w += g->vw[v];
        g->min_w = fmin(g->min_w, g->vw[v]);
        g->max_w = fmax(g->max_w, g->vw[v]);
    }
}

int topomap_i_preport(topomap_i_pctx *c, double fraction)
{
    if (fraction > c->fraction) c->fraction = fraction > 1 ? 1 : fraction;
    if (c->progress && c->progress(c->progress_ctx, c->fraction))
        return topomap_i_fail(TOPOMAP_ECANCELED, "partitioning cancelled by the progress callback at %.0f%%",
                              100 * c->fraction);
    return TOPOMAP_OK;
}

int topomap_i_ptick(topomap_i_pctx *c, int64_t units)
{
    c->work += units;
    if (c->work < c->next_check) return TOPOMAP_OK;
    c->next_check = c->work + CHECK_EVERY;
    return topomap_i_preport(c, c->fraction);
}

/* ---------------------------------------------------------------- input checks */

static int64_t find(const int32_t *a, int64_t lo, int64_t hi, int32_t x)
{
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (a[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return (int)lo;
}

int topomap_ugraph_validate(const topomap_ugraph *g)
{
    if (g->n < 1) return topomap_i_fail(TOPOMAP_EINVAL, "a graph needs at least one vertex, got n=%d", (int)g->n);
    if (g->xadj[0] != 0) return topomap_i_fail(TOPOMAP_EINVAL, "xadj[0] must be 0, got %lld", (long long)g->xadj[0]);
    /* all offsets first: a row is read only once every row is known to lie
       within xadj[n] */
    for (int32_t u = 0; u < g->n; u++)
        if (g->xadj[u + 1] < g->xadj[u])
            return topomap_i_fail(TOPOMAP_EINVAL, "xadj decreases at vertex %d", (int)u);
    for (int32_t u = 0; u < g->n; u++) {
        if (g->vwgt && !(g->vwgt[u] >= 0 && isfinite(g->vwgt[u])))
            return topomap_i_fail(TOPOMAP_EINVAL, "vertex %d has weight %g (must be finite and >= 0)", (int)u,
                                  g->vwgt[u]);
        for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++) {
            int32_t v = g->adjncy[e];
            if (v < 0 || v >= g->n)
                return topomap_i_fail(TOPOMAP_EINVAL, "vertex %d has neighbour %d, out of range [0, %d)", (int)u,
                                      (int)v, (int)g->n);
            if (v == u) return topomap_i_fail(TOPOMAP_EINVAL, "vertex %d has a self loop", (int)u);
            if (e > g->xadj[u] && v <= g->adjncy[e - 1])
                return topomap_i_fail(TOPOMAP_EINVAL,
                                      "neighbours of vertex %d are not sorted and unique (%d after %d)", (int)u,
                                      (int)v, (int)g->adjncy[e - 1]);
            double w = g->adjwgt ? g->adjwgt[e] : 1;
            if (!(w > 0 && isfinite(w)))
                return topomap_i_fail(TOPOMAP_EINVAL, "edge %d - %d has weight %g (must be finite and > 0)", (int)u,
                                      (int)v, w);
        }
    }
    /* symmetry last: it reads rows of other vertices, which must be sane */
    for (int32_t u = 0; u < g->n; u++)
        for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++) {
            int32_t v = g->adjncy[e];
            int64_t f = find(g->adjncy, g->xadj[v], g->xadj[v + 1], u);
            if (f == g->xadj[v + 1] || g->adjncy[f] != u)
                return topomap_i_fail(TOPOMAP_EINVAL, "edge %d - %d is stored in row %d but not in row %d", (int)u,
                                      (int)v, (int)u, (int)v);
            if (g->adjwgt && g->adjwgt[e] != g->adjwgt[f])
                return topomap_i_fail(TOPOMAP_EINVAL, "edge %d - %d has weight %g in row %d but %g in row %d",
                                      (int)u, (int)v, g->adjwgt[e], (int)u, g->adjwgt[f], (int)v);
        }
    return TOPOMAP_OK;
}

/* Sort a row of (neighbour, weight) pairs by neighbour: insertion sort for
   the short rows of meshes, heap sort beyond. */
static void sift(int32_t *a, double *w, int64_t i, int64_t n)
{
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) return;
        if (c + 1 < n && a[c + 1] > a[c]) c++;
        if (a[c] <= a[i]) return;
        int32_t ta = a[i];
        double tw = w[i];
        a[i] = a[c];
        w[i] = w[c];
        a[c] = ta;
        w[c] = tw;
        i = c;
    }
}

static void sort_row(int32_t *a, double *w, int64_t n)
{
    if (n <= 32) {
        for (int64_t i = 1; i < n; i++) {
            int32_t ta = a[i];
            double tw = w[i];
            int64_t j = i;
            for (; j > 0 && a[j - 1] > ta; j--) {
                a[j] = a[j - 1];
                w[j] = w[j - 1];
            }
            a[j] = ta;
            w[j] = tw;
        }
        return;
    }
    for (int64_t i = n / 2; i-- > 0;) sift(a, w, i, n);
    for (int64_t end = n - 1; end > 0; end--) {
        int32_t ta = a[0];
        double tw = w[0];
        a[0] = a[end];
        w[0] = w[end];
        a[end] = ta;
        w[end] = tw;
        sift(a, w, 0, end);
    }
}

int topomap_ugraph_from_pattern(const topomap_pattern *p, int64_t *xadj, int32_t *adjncy, double *adjwgt)
{
    int rc = topomap_pattern_validate(p);
    if (rc) return rc;
    int32_t n = p->n;
    int64_t *fill = calloc((size_t)n + 1, sizeof *fill);
    int64_t *pos = malloc((size_t)n * sizeof *pos);
    if (!fill || !pos) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory symmetrising a pattern of %d processes", (int)n);
        goto cleanup;
    }
    /* Room for row u: its own messages plus those it receives. */
    for (int32_t u = 0; u < n; u++) {
        fill[u + 1] += p->indptr[u + 1] - p->indptr[u];
        for (int64_t e = p->indptr[u]; e < p->indptr[u + 1]; e++) fill[p->indices[e] + 1]++;
    }
    for (int32_t u = 0; u < n; u++) fill[u + 1] += fill[u];
    int64_t *start = xadj; /* row starts before compaction, reused as the output */
    for (int32_t u = 0; u <= n; u++) start[u] = fill[u];
    for (int32_t u = 0; u < n; u++)
        for (int64_t e = p->indptr[u]; e < p->indptr[u + 1]; e++) {
            int32_t v = p->indices[e];
            adjncy[fill[u]] = v;
            adjwgt[fill[u]++] = p->bytes[e];
            adjncy[fill[v]] = u;
            adjwgt[fill[v]++] = p->bytes[e];
        }
    /* Merge duplicates within each row (p->q and q->p), sort, and compact
       the rows to the left; pos[] stamps where a neighbour sits in the
       current output row (positions only grow). */
    for (int32_t v = 0; v < n; v++) pos[v] = -1;
    int64_t len = 0;
    for (int32_t u = 0; u < n; u++) {
        int64_t row = len, s = start[u], e_end = start[u + 1];
        for (int64_t e = s; e < e_end; e++) {
            int32_t v = adjncy[e];
            if (pos[v] >= row) {
                adjwgt[pos[v]] += adjwgt[e];
            } else {
                pos[v] = len;
                adjncy[len] = v;
                adjwgt[len++] = adjwgt[e];
            }
        }
        sort_row(adjncy + row, adjwgt + row, len - row);
        xadj[u] = row;
    }
    xadj[n] = len;
cleanup:
    free(fill);
    free(pos);
    return rc;
}

/* ---------------------------------------------------------------- the driver */

static int refine_level(const topomap_i_pgraph *g, int32_t k, const double *limit, int32_t *part, double *pw,
                        topomap_i_pctx *c, int *fits)
{
    int rc = topomap_i_balance_paths(g, k, limit, part, pw, c);
    if (!rc) rc = topomap_i_balance(g, k, limit, part, pw, c, fits);
    if (!rc) rc = topomap_i_fm(g, k, limit, part, pw, c);
    if (!rc && k == 2 && c->flows) {
        int changed = 0;
        topomap_i_part_weights(g, k, part, pw);
        rc = topomap_i_flow_refine(g, limit, part, pw, c, &changed);
        if (!rc && changed) rc = topomap_i_fm(g, k, limit, part, pw, c);
    }
    /* fresh sums: FM's moves and roll-backs accumulate round-off */
    topomap_i_part_weights(g, k, part, pw);
    return rc;
}

/* The finest level of the whole graph.  Hard capacities leave k-way FM no
   room when parts are exactly full, so that level is first refined under
   max((1 + c->slack) cap_i, cap_i + largest vertex weight), then balanced to
   the capacities and refined again; with k > 2 parts and ntries > 1 the two
   passes run a second time, which is kept if it cuts less. */
static int refine_finest(const topomap_i_pgraph *g, int32_t k, const double *tgt, const double *cap, double eps,
                         double *limit, int32_t *part, double *pw, topomap_i_pctx *c, int *fits)
{
    int rc = TOPOMAP_OK;
    int32_t *first = NULL;
    double first_cut = 0;
    int first_fits = 0;
    topomap_i_part_weights(g, k, part, pw);
    for (int cycle = 0; cycle < (cap && k > 2 && c->ntries > 1 ? FINEST_CYCLES : 1); cycle++) {
        if (cycle > 0) {
            if (!first && !(first = malloc((size_t)g->n * sizeof *first))) {
                rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory refining %d vertices", (int)g->n);
                break;
            }
            memcpy(first, part, (size_t)g->n * sizeof *first);
            first_cut = topomap_i_cut(g, part);
            first_fits = *fits;
        }
        if (cap) {
            for (int32_t i = 0; i < k; i++) limit[i] = fmax((1 + c->slack) * cap[i], cap[i] + g->max_w);
            if ((rc = refine_level(g, k, limit, part, pw, c, fits))) break;
        }
        topomap_i_limits(g, k, tgt, cap, eps, limit);
        if ((rc = refine_level(g, k, limit, part, pw, c, fits))) break;
        if (cycle > 0 && !(*fits && (!first_fits || topomap_i_cut(g, part) < first_cut))) {
            memcpy(part, first, (size_t)g->n * sizeof *part);
            topomap_i_part_weights(g, k, part, pw);
            *fits = first_fits;
        }
    }
    free(first);
    return rc;
}

int topomap_i_multilevel(const topomap_i_pgraph *g, int32_t k, const double *tgt, const double *cap, double eps,
                         int recursive, int report, topomap_i_pctx *c, int32_t *part, int *fits)
{
    int rc = TOPOMAP_OK;
    topomap_i_pgraph levels[MAX_LEVELS];
    int32_t *cmaps[MAX_LEVELS] = {0}, *parts[MAX_LEVELS] = {0};
    int nlev = 1;
    double *pw = malloc((size_t)k * sizeof *pw);
    double *limit = malloc((size_t)k * sizeof *limit);
    levels[0] = *g;
    memset(levels[0].owned, 0, sizeof levels[0].owned); /* borrowed */
    *fits = 0;
    if (!pw || !limit) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %d parts", (int)k);
        goto cleanup;
    }
    int depth = 0;
    while ((1 << depth) < k) depth++;
    double eps_bisect = depth > 0 ? pow(1 + eps, 1.0 / depth) - 1 : eps;
    if (recursive) {
        c->rb_done = 0;
        c->rb_total = k;
        c->rb_lo = 0;
        c->rb_hi = 0.9;
        if ((rc = topomap_i_recursive_bisection(g, k, tgt, eps_bisect, report, c, part))) goto cleanup;
        if ((rc = refine_finest(g, k, tgt, cap, eps, limit, part, pw, c, fits))) goto cleanup;
        if (report) rc = topomap_i_preport(c, 1);
        goto cleanup;
    }
    int32_t coarsen_to = k == 2 ? BISECT_COARSEN_TO : (k > INT32_MAX / 30 ? INT32_MAX : 30 * k);
    double max_vw = 1.5 * g->total_w / coarsen_to;
    while (nlev < MAX_LEVELS && levels[nlev - 1].n > coarsen_to) {
        const topomap_i_pgraph *fine = &levels[nlev - 1];
        cmaps[nlev - 1] = topomap_i_palloc(&c->pool, (size_t)fine->n * sizeof(int32_t));
        if (!cmaps[nlev - 1]) {
            rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory coarsening %d vertices", (int)fine->n);
            goto cleanup;
        }
        if ((rc = topomap_i_coarsen(fine, fmax(max_vw, fine->max_w), c, cmaps[nlev - 1], &levels[nlev])))
            goto cleanup;
        nlev++;
        if (report && (rc = topomap_i_preport(c, 0.1 * (1 - (double)levels[nlev - 1].n / g->n)))) goto cleanup;
        if (levels[nlev - 1].n > 0.95 * fine->n) break;
    }
    for (int l = 0; l < nlev; l++) {
        parts[l] = l == 0 ? part : topomap_i_palloc(&c->pool, (size_t)levels[l].n * sizeof(int32_t));
        if (!parts[l]) {
            rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for a level of %d vertices", (int)levels[l].n);
            goto cleanup;
        }
    }
    const topomap_i_pgraph *top = &levels[nlev - 1];
    c->rb_done = 0;
    c->rb_total = k;
    c->rb_lo = 0.1;
    c->rb_hi = 0.4;
    rc = k == 2 ? topomap_i_grow_bisection(top, tgt, eps, c, parts[nlev - 1])
                : topomap_i_recursive_bisection(top, k, tgt, eps_bisect, report, c, parts[nlev - 1]);
    if (rc) goto cleanup;
    double total = 0, done = 0;
    for (int l = 0; l < nlev; l++) total += levels[l].n;
    for (int l = nlev - 1; l >= 0; l--) {
        if (l < nlev - 1)
            for (int32_t v = 0; v < levels[l].n; v++) parts[l][v] = parts[l + 1][cmaps[l][v]];
        if (k == 2 && l == nlev - 1 && !c->flows && (l > 0 || !cap)) {
            /* grow_bisection balanced and FM-refined this level under these
               limits; FM again from its fixed point would find nothing */
            topomap_i_limits(&levels[l], 2, tgt, NULL, eps, limit);
            topomap_i_part_weights(&levels[l], 2, parts[l], pw);
            rc = topomap_i_balance(&levels[l], 2, limit, parts[l], pw, c, fits);
        } else if (l == 0) {
            rc = refine_finest(g, k, tgt, cap, eps, limit, part, pw, c, fits);
        } else {
            topomap_i_limits(&levels[l], k, tgt, NULL, eps, limit);
            topomap_i_part_weights(&levels[l], k, parts[l], pw);
            rc = refine_level(&levels[l], k, limit, parts[l], pw, c, fits);
        }
        if (rc) goto cleanup;
        done += levels[l].n;
        if (report && (rc = topomap_i_preport(c, 0.4 + 0.6 * done / total))) goto cleanup;
    }
cleanup:
    for (int l = 0; l < nlev; l++) {
        if (l > 0) {
            topomap_i_pgraph_free(&levels[l]);
            topomap_i_pfree(&c->pool, parts[l]);
        }
        topomap_i_pfree(&c->pool, cmaps[l]);
    }
    free(pw);
    free(limit);
    return rc;
}

/* ---------------------------------------------------------------- public entry points */

/* Absolute targets (sum = W) from the caller's targets; checks them and, in
   hard mode, that the capacities can hold the graph. */
static int make_targets(const topomap_i_pgraph *g, int32_t k, const double *targets, int hard, double *tgt)
{
    if (hard && !targets) return topomap_i_fail(TOPOMAP_EINVAL, "hard capacity mode needs the capacities");
    double sum = 0, biggest = 0;
    for (int32_t i = 0; i < k; i++) {
        double t = targets ? targets[i] : 1;
        if (!(t >= 0 && isfinite(t)))
            return topomap_i_fail(TOPOMAP_EINVAL, "%s of part %d is %g (must be finite and >= 0)",
                                  hard ? "capacity" : "target", (int)i, t);
        sum += t;
        biggest = fmax(biggest, t);
    }
    if (!(sum > 0) && g->total_w > 0)
        return topomap_i_fail(TOPOMAP_EINVAL, "the %s of the %d parts sum to 0", hard ? "capacities" : "targets",
                              (int)k);
    if (hard) {
        if (sum < g->total_w * (1 - 1e-12))
            return topomap_i_fail(TOPOMAP_EINVAL, "capacities sum to %g, less than the total vertex weight %g", sum,
                                  g->total_w);
        for (int32_t v = 0; v < g->n; v++)
            if (g->vw[v] > biggest * (1 + 1e-12))
                return topomap_i_fail(TOPOMAP_EINVAL, "vertex %d weighs %g, more than the largest capacity %g",
                                      (int)v, g->vw[v], biggest);
        if (g->min_w == g->max_w && g->max_w > 0) {
            double slots = 0;
            for (int32_t i = 0; i < k; i++) slots += floor(targets[i] / g->max_w + 1e-9);
            if (slots < g->n)
                return topomap_i_fail(TOPOMAP_EINVAL,
                                      "capacities hold only %.0f vertices of weight %g, the graph has %d", slots,
                                      g->max_w, (int)g->n);
        }
    }
    for (int32_t i = 0; i < k; i++) {
        double t = targets ? targets[i] : 1;
        tgt[i] = sum > 0 ? g->total_w * t / sum : 0;
    }
    return TOPOMAP_OK;
}

/* The working view of a caller's graph: its arrays, with unit weights
   where it has none. */
static int make_view(const topomap_ugraph *gr, topomap_i_pgraph *g)
{
    int32_t n = gr->n;
    int64_t m = gr->xadj[n];
    *g = (topomap_i_pgraph){.n = n, .xadj = gr->xadj, .adj = gr->adjncy, .ew = gr->adjwgt, .vw = gr->vwgt};
    if (!g->ew) {
        double *ones = topomap_i_palloc(NULL, (size_t)m * sizeof *ones);
        g->owned[0] = ones;
        for (int64_t e = 0; ones && e < m; e++) ones[e] = 1;
        g->ew = ones;
    }
    if (!g->vw) {
        double *ones = topomap_i_palloc(NULL, (size_t)n * sizeof *ones);
        g->owned[1] = ones;
        for (int32_t v = 0; ones && v < n; v++) ones[v] = 1;
        g->vw = ones;
    }
    if (!g->ew || !g->vw) {
        topomap_i_pgraph_free(g);
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the weights of %d vertices", (int)n);
    }
    topomap_i_pgraph_weigh(g);
    return TOPOMAP_OK;
}

static int check_parts(int32_t n, int32_t k, const int32_t *part)
{
    for (int32_t v = 0; v < n; v++)
        if (part[v] < 0 || part[v] >= k)
            return topomap_i_fail(TOPOMAP_EINVAL, "part[%d] = %d is out of range [0, %d)", (int)v, (int)part[v],
                                  (int)k);
    return TOPOMAP_OK;
}

static int run(const topomap_ugraph *gr, int32_t k, const double *targets, const topomap_partition_options *opt_in,
               int32_t *part, int given, double *part_weights, double *edge_cut)
{
    int rc = TOPOMAP_OK;
    topomap_partition_options opt;
    topomap_i_pgraph g = {0};
    topomap_i_pctx c = {0};
    double *tgt = NULL, *limit = NULL, *pw = NULL;
    if (opt_in) opt = *opt_in;
    else topomap_partition_options_init(&opt);
    if (k < 1) return topomap_i_fail(TOPOMAP_EINVAL, "the number of parts must be >= 1, got %d", (int)k);
    if (!(opt.imbalance >= 0 && isfinite(opt.imbalance)))
        return topomap_i_fail(TOPOMAP_EINVAL, "imbalance must be finite and >= 0, got %g", opt.imbalance);
    if (opt.ntries < 1) return topomap_i_fail(TOPOMAP_EINVAL, "ntries must be >= 1, got %d", (int)opt.ntries);
    if (opt.flows != 0 && opt.flows != 1) return topomap_i_fail(TOPOMAP_EINVAL, "flows must be 0 or 1, got %d", opt.flows);
    if ((!opt.trusted || CHECK_TRUSTED) && (rc = topomap_ugraph_validate(gr))) return rc;
    int32_t n = gr->n;
    if ((rc = make_view(gr, &g))) goto cleanup;
    tgt = malloc((size_t)k * sizeof *tgt);
    limit = malloc((size_t)k * sizeof *limit);
    pw = malloc((size_t)k * sizeof *pw);
    if (!tgt || !limit || !pw) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory partitioning %d vertices into %d parts", (int)n, (int)k);
        goto cleanup;
    }
    if ((rc = make_targets(&g, k, targets, opt.hard, tgt))) goto cleanup;
    if (given && (rc = check_parts(n, k, part))) goto cleanup;
    topomap_rng_seed(&c.rng, opt.seed);
    c.ntries = opt.ntries;
    c.flows = opt.flows;
    c.slack = opt.imbalance;
    c.progress = opt.progress;
    c.progress_ctx = opt.progress_ctx;
    c.next_check = CHECK_EVERY;
    const double *cap = opt.hard ? targets : NULL;
    double eps = opt.hard ? 0 : opt.imbalance;
    int fits = 0;
    if (given || k == 1) {
        if (!given)
            for (int32_t v = 0; v < n; v++) part[v] = 0;
        rc = refine_finest(&g, k, tgt, cap, eps, limit, part, pw, &c, &fits);
    } else {
        /* k = 2 is one step of recursive bisection: best of ntries bisections */
        rc = topomap_i_multilevel(&g, k, tgt, cap, eps, opt.recursive || k == 2, 1, &c, part, &fits);
    }
    if (rc) goto cleanup;
    topomap_i_limits(&g, k, tgt, cap, eps, limit);
    topomap_i_part_weights(&g, k, part, pw);
    for (int32_t i = 0; i < k; i++)
        if (pw[i] > limit[i] * (1 + 1e-12) + 1e-12) {
            rc = topomap_i_fail(TOPOMAP_EINVAL,
                                "part %d weighs %g after balancing, above its %s %g (vertex weights differ, and "
                                "packing them exactly is NP-hard)",
                                (int)i, pw[i], opt.hard ? "capacity" : "bound", limit[i]);
            goto cleanup;
        }
    if (part_weights) memcpy(part_weights, pw, (size_t)k * sizeof *pw);
    if (edge_cut) *edge_cut = topomap_i_cut(&g, part);
    rc = topomap_i_preport(&c, 1);
cleanup:
    topomap_i_pctx_free(&c);
    topomap_i_pgraph_free(&g);
    free(tgt);
    free(limit);
    free(pw);
    return rc;
}

int topomap_partition(const topomap_ugraph *g, int32_t k, const double *targets, const topomap_partition_options *opt,
                      int32_t *part, double *part_weights, double *edge_cut)
{
    return run(g, k, targets, opt, part, 0, part_weights, edge_cut);
}

int topomap_partition_refine(const topomap_ugraph *g, int32_t k, const double *targets,
                             const topomap_partition_options *opt, int32_t *part, double *part_weights,
                             double *edge_cut)
{
    return run(g, k, targets, opt, part, 1, part_weights, edge_cut);
}

int topomap_i_partition_stats(const topomap_ugraph *gr, int32_t k, const int32_t *part, double *part_weights,
                              double *edge_cut)
{
    topomap_i_pgraph g = {0};
    int rc = make_view(gr, &g);
    if (rc) return rc;
    if (part_weights) topomap_i_part_weights(&g, k, part, part_weights);
    if (edge_cut) *edge_cut = topomap_i_cut(&g, part);
    topomap_i_pgraph_free(&g);
    return TOPOMAP_OK;
}

int topomap_partition_stats(const topomap_ugraph *gr, int32_t k, const int32_t *part, double *part_weights,
                            double *edge_cut)
{
    if (k < 1) return topomap_i_fail(TOPOMAP_EINVAL, "the number of parts must be >= 1, got %d", (int)k);
    int rc = topomap_ugraph_validate(gr);
    if (!rc) rc = check_parts(gr->n, k, part);
    if (!rc) rc = topomap_i_partition_stats(gr, k, part, part_weights, edge_cut);
    return rc;
}

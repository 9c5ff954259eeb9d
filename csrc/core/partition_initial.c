/* Initial partitions of the coarsest graph: greedy graph growing bisection
   (GGGP, Karypis & Kumar 1998, SIAM J. Sci. Comput. 20(1), §4) and
   recursive bisection into k parts (the scheme of Karypis & Kumar's
   multilevel recursive bisection; APHiD §II-A uses it on traffic graphs).

   Choices the sources leave open, as made here:
   - A growth starts at a uniformly random vertex; when the region has no
     frontier left (the graph is disconnected) it restarts at the next vertex
     of a seeded random order that is still outside.
   - The frontier vertex added next maximises (weight to the region) -
     (weight outside); a vertex that would take the region past its limit is
     skipped.  Growth stops once the region reaches its target weight.
   - Every growth is balanced and FM-refined; of GROW_TRIES = 4 growths the
     one with the least overload, then the smallest cut, is kept (first
     found on ties).  2, 4 and 8 growths gave final cuts within 1% of each
     other on the reference graphs (the coarsest graph has <= 30 vertices,
     so growths are cheap).
   - Recursive bisection gives the first floor(k/2) parts to side 0, with the
     summed targets of the parts on each side; each side's targets are then
     rescaled to the weight the side actually received.  The caller chooses
     the per-bisection imbalance. */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "topomap/error.h"
#include "partition_internal.h"

#define GROW_TRIES 4

int topomap_i_grow_bisection(const topomap_i_pgraph *g, const double tgt[2], double eps,
                             topomap_i_pctx *c, int32_t *part)
{
    int rc = TOPOMAP_OK;
    int32_t n = g->n;
    topomap_i_heap h = {0};
    int32_t *trial = malloc((size_t)n * sizeof *trial);
    int32_t *order = malloc((size_t)n * sizeof *order);
    char *skip = malloc((size_t)n);
    double limit[2], pw[2], best_over = 0, best_cut = 0;
    if (!trial || !order || !skip) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory bisecting a graph of %d vertices", (int)n);
        goto cleanup;
    }
    if ((rc = topomap_i_heap_init(&h, n))) goto cleanup;
    topomap_i_limits(g, 2, tgt, NULL, eps, limit);
    for (int32_t t = 0; t < GROW_TRIES; t++) {
        for (int32_t v = 0; v < n; v++) {
            trial[v] = 1;
            order[v] = v;
        }
        memset(skip, 0, (size_t)n);
        topomap_rng_shuffle_i32(&c->rng, order, n);
        topomap_i_heap_clear(&h);
        double w0 = 0;
        int32_t next = 0;
        while (w0 < tgt[0]) {
            if (h.size == 0) {
                while (next < n && (trial[order[next]] == 0 || skip[order[next]])) next++;
                if (next == n) break;
                topomap_i_heap_set(&h, order[next], 0);
            }
            int32_t v = topomap_i_heap_pop(&h);
            if (w0 > 0 && w0 + g->vw[v] > limit[0]) {
                skip[v] = 1;
                continue;
            }
            trial[v] = 0;
            w0 += g->vw[v];
            /* u's key = weight to the region - weight outside; v joining
               the region turns one of u's outside edges into a region edge */
            for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
                int32_t u = g->adj[e];
                if (trial[u] == 0 || skip[u]) continue;
                if (topomap_i_heap_has(&h, u)) {
                    topomap_i_heap_set(&h, u, topomap_i_heap_key(&h, u) + 2 * g->ew[e]);
                } else {
                    double key = 0;
                    for (int64_t f = g->xadj[u]; f < g->xadj[u + 1]; f++)
                        key += trial[g->adj[f]] == 0 ? g->ew[f] : -g->ew[f];
                    topomap_i_heap_set(&h, u, key);
                }
            }
        }
        if ((rc = topomap_i_ptick(c, n + g->xadj[n]))) goto cleanup;
        int ok;
        topomap_i_part_weights(g, 2, trial, pw);
        if ((rc = topomap_i_balance(g, 2, limit, trial, pw, c, &ok))) goto cleanup;
        if ((rc = topomap_i_fm(g, 2, limit, trial, pw, c))) goto cleanup;
        topomap_i_part_weights(g, 2, trial, pw);
        double over = 0;
        for (int i = 0; i < 2; i++)
            if (pw[i] - limit[i] > over) over = pw[i] - limit[i];
        double cut = topomap_i_cut(g, trial);
        if (t == 0 || over < best_over || (over == best_over && cut < best_cut)) {
            best_over = over;
            best_cut = cut;
            memcpy(part, trial, (size_t)n * sizeof *part);
        }
    }
cleanup:
    topomap_i_heap_free(&h);
    free(trial);
    free(order);
    free(skip);
    return rc;
}

/* The vertices of `side` as a graph of their own; sub_of[i] = fine id. */
static int extract(const topomap_i_pgraph *g, const int32_t *side, int32_t s, int32_t *sub_of,
                   int32_t *local, topomap_i_pool *pool, topomap_i_pgraph *sub)
{
    int32_t ns = 0;
    int64_t ms = 0;
    for (int32_t v = 0; v < g->n; v++) {
        if (side[v] != s) continue;
        local[v] = ns;
        sub_of[ns++] = v;
        for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) ms += side[g->adj[e]] == s;
    }
    *sub = (topomap_i_pgraph){.pool = pool};
    int64_t *x = topomap_i_palloc(pool, ((size_t)ns + 1) * sizeof *x);
    int32_t *a = topomap_i_palloc(pool, (size_t)ms * sizeof *a);
    double *w = topomap_i_palloc(pool, (size_t)ms * sizeof *w);
    double *vw = topomap_i_palloc(pool, (size_t)ns * sizeof *vw);
    sub->owned[0] = x;
    sub->owned[1] = a;
    sub->owned[2] = w;
    sub->owned[3] = vw;
    if (!x || !a || !w || !vw) {
        topomap_i_pgraph_free(sub);
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory extracting a subgraph of %d vertices", (int)ns);
    }
    int64_t len = 0;
    x[0] = 0;
    for (int32_t i = 0; i < ns; i++) {
        int32_t v = sub_of[i];
        vw[i] = g->vw[v];
        for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
            if (side[g->adj[e]] != s) continue;
            a[len] = local[g->adj[e]];
            w[len++] = g->ew[e];
        }
        x[i + 1] = len;
    }
    sub->n = ns;
    sub->xadj = x;
    sub->adj = a;
    sub->ew = w;
    sub->vw = vw;
    topomap_i_pgraph_weigh(sub);
    return TOPOMAP_OK;
}

static double sum(const double *a, int32_t n)
{
    double s = 0;
    for (int32_t i = 0; i < n; i++) s += a[i];
    return s;
}

/* Targets a[0..n) rescaled to sum to `total` (equal shares if they sum to 0). */
static void rescale(const double *a, int32_t n, double total, double *out)
{
    double s = sum(a, n);
    for (int32_t i = 0; i < n; i++) out[i] = s > 0 ? total * a[i] / s : total / n;
}

int topomap_i_recursive_bisection(const topomap_i_pgraph *g, int32_t k, const double *tgt,
                                  double eps, int report, topomap_i_pctx *c, int32_t *part)
{
    int rc = TOPOMAP_OK;
    int32_t n = g->n;
    if (k == 1 || n == 0) {
        for (int32_t v = 0; v < n; v++) part[v] = 0;
        if (report) {
            c->rb_done += k;
            rc = topomap_i_preport(c, c->rb_lo + (c->rb_hi - c->rb_lo) * c->rb_done / c->rb_total);
        }
        return rc;
    }
    int32_t k0 = k / 2;
    int32_t *side = topomap_i_palloc(&c->pool, (size_t)n * sizeof *side);
    int32_t *sub_of = topomap_i_palloc(&c->pool, (size_t)n * sizeof *sub_of);
    int32_t *local = topomap_i_palloc(&c->pool, (size_t)n * sizeof *local);
    int32_t *sub_part = topomap_i_palloc(&c->pool, (size_t)n * sizeof *sub_part);
    double *sub_tgt = malloc((size_t)k * sizeof *sub_tgt);
    topomap_i_pgraph sub = {0};
    if (!side || !sub_of || !local || !sub_part || !sub_tgt) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory bisecting a graph of %d vertices", (int)n);
        goto cleanup;
    }
    double halves[2] = {sum(tgt, k0), sum(tgt + k0, k - k0)}, bt[2];
    rescale(halves, 2, g->total_w, bt);
    /* independent multilevel bisections; the best is kept */
    double best_cut = 0, best_over = 0, lim[2], pw[2];
    topomap_i_limits(g, 2, bt, NULL, eps, lim);
    for (int32_t t = 0; t < c->ntries; t++) {
        int fits;
        if ((rc = topomap_i_multilevel(g, 2, bt, NULL, eps, 0, 0, c, sub_part, &fits))) goto cleanup;
        topomap_i_part_weights(g, 2, sub_part, pw);
        double over = fmax(0, fmax(pw[0] - lim[0], pw[1] - lim[1]));
        double cut = c->ntries > 1 ? topomap_i_cut(g, sub_part) : 0; /* one try: nothing to compare */
        if (t == 0 || over < best_over || (over == best_over && cut < best_cut)) {
            best_over = over;
            best_cut = cut;
            memcpy(side, sub_part, (size_t)n * sizeof *side);
        }
    }
    for (int32_t s = 0; s < 2; s++) {
        int32_t off = s ? k0 : 0, ks = s ? k - k0 : k0;
        if ((rc = extract(g, side, s, sub_of, local, &c->pool, &sub))) goto cleanup;
        rescale(tgt + off, ks, sub.total_w, sub_tgt);
        rc = topomap_i_recursive_bisection(&sub, ks, sub_tgt, eps, report, c, sub_part);
        for (int32_t i = 0; i < sub.n && !rc; i++) part[sub_of[i]] = off + sub_part[i];
        topomap_i_pgraph_free(&sub);
        if (rc) goto cleanup;
    }
cleanup:
    topomap_i_pfree(&c->pool, side);
    topomap_i_pfree(&c->pool, sub_of);
    topomap_i_pfree(&c->pool, local);
    topomap_i_pfree(&c->pool, sub_part);
    free(sub_tgt);
    return rc;
}

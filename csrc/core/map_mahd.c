/* MAHD, EMAHD and Kumar's GGE baseline (Kumar 2012, §6.2.2, Algorithm 1 of
   ch. 6 with G and G' put right as in notes 001 §4.6):

     1. s = the task with the most neighbours
     2. p = the node of least average hop distance to all allocated nodes
     3. map s -> p; push the neighbours of s on a max-heap keyed by their
        number of neighbours
     4. while the heap is not empty: s = pop; map s to the free node of least
        average hop distance to the nodes of its mapped neighbours; push its
        neighbours that are neither mapped nor in the heap.

   GGE (as the thesis ran it, after Hoefler & Snir 2011) replaces step 4's
   rule by "the free node closest to the most recently mapped neighbour".
   EMAHD runs MAHD from every start node p and keeps the best mapping, by
   hop-bytes (ch. 6) or by maximum link congestion (ch. 7, where EMAHD <=
   MAHD in every row of Table 7.2.1).

   Choices the thesis leaves open:
   - Neighbours are those of the undirected task graph (bytes either way);
     "number of neighbours" is that count, unweighted.
   - Ties: the heap pops the lower task index first; among nodes the lower
     allocation index (allocation order) wins; step 1 takes the lowest index.
   - Average hop distance is the plain mean over the mapped neighbours (the
     thesis); rule WEIGHTED weighs each by its bytes, which makes step 4 the
     greedy choice of least added hop-bytes.
   - A task graph of several components: when the heap runs dry, the
     unmapped task with the most neighbours starts again on the free node of
     least average hop distance to all allocated nodes.
   - n-to-1: tasks are groups of processes (map_qap.c); a node is a
     candidate for a group only if it can hold it and a complete placement
     stays possible.
   - EMAHD ties: lower hop-bytes, then the earlier start node.  Congestion is
     computed by the evaluator (topomap_evaluate on the group quotient, each
     group on one PE of its node: the same link loads as the full mapping).

   Complexity, n tasks onto m nodes, E task-graph edges: MAHD
   O(m E + n log n + m^2) with the hop table; GGE O(m n); EMAHD m times
   MAHD plus, by congestion, m evaluations O(E x route). */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/eval.h"
#include "topomap/map_kumar.h"
#include "map_qap.h"

typedef struct {
    const topomap_i_qap *q;
    int rule;
    int32_t first;    /* step 1's task */
    int32_t *deg;
    double *central;  /* sum of hops to every allocated node */
    int32_t *heap, hlen;
    char *inheap;
    int64_t *stamp;   /* when each task was mapped */
    int64_t clock;
    topomap_i_fit fit;
    int32_t *freel, *fpos, nfree;
    int32_t *nloc;    /* scratch: nodes of the mapped neighbours */
    double *nw;       /* and their bytes */
    topomap_i_ticker *tk;
    double frac;
} mahd;

/* Does task a pop before task b? */
static int pops_first(const mahd *s, int32_t a, int32_t b)
{
    return s->deg[a] != s->deg[b] ? s->deg[a] > s->deg[b] : a < b;
}

static void heap_push(mahd *s, int32_t t)
{
    int32_t i = s->hlen++;
    s->heap[i] = t;
    s->inheap[t] = 1;
    while (i > 0 && pops_first(s, s->heap[i], s->heap[(i - 1) / 2])) {
        int32_t p = (i - 1) / 2, x = s->heap[p];
        s->heap[p] = s->heap[i];
        s->heap[i] = x;
        i = p;
    }
}

static int32_t heap_pop(mahd *s)
{
    int32_t top = s->heap[0];
    s->heap[0] = s->heap[--s->hlen];
    for (int32_t i = 0;;) {
        int32_t l = 2 * i + 1, r = l + 1, b = i;
        if (l < s->hlen && pops_first(s, s->heap[l], s->heap[b])) b = l;
        if (r < s->hlen && pops_first(s, s->heap[r], s->heap[b])) b = r;
        if (b == i) break;
        int32_t x = s->heap[b];
        s->heap[b] = s->heap[i];
        s->heap[i] = x;
        i = b;
    }
    s->inheap[top] = 0;
    return top;
}

static void place(mahd *s, int32_t *loc, int32_t t, int32_t l)
{
    const topomap_i_qap *q = s->q;
    loc[t] = l;
    s->stamp[t] = s->clock++;
    topomap_i_fit_place(&s->fit, q, t, l);
    int32_t i = s->fpos[l], last = s->freel[--s->nfree];
    s->freel[i] = last;
    s->fpos[last] = i;
    s->fpos[l] = -1;
    for (int64_t e = q->xadj[t]; e < q->xadj[t + 1]; e++) {
        int32_t u = q->adj[e];
        if (loc[u] < 0 && !s->inheap[u]) heap_push(s, u);
    }
}

/* The free node that can take t with the least score[l], ties to the lower index. */
#define ARGMIN_FREE(s, t, score_expr, out)                                  \
    do {                                                                    \
        double best_ = 0;                                                   \
        (out) = -1;                                                         \
        for (int32_t f_ = 0; f_ < (s)->nfree; f_++) {                       \
            int32_t l = (s)->freel[f_];                                     \
            if (!topomap_i_fit_ok(&(s)->fit, (s)->q, (t), l)) continue;     \
            double v_ = (score_expr);                                       \
            if ((out) < 0 || v_ < best_ || (v_ == best_ && l < (out))) {    \
                best_ = v_;                                                 \
                (out) = l;                                                  \
            }                                                               \
        }                                                                   \
    } while (0)

static double sum_to(const double *dl, const int32_t *nloc, const double *nw, int32_t k)
{
    double v = 0;
    for (int32_t i = 0; i < k; i++) v += nw[i] * dl[nloc[i]];
    return v;
}

static int32_t most_central(mahd *s, int32_t t)
{
    int32_t out;
    ARGMIN_FREE(s, t, s->central[l], out);
    return out;
}

/* Step 4's node for task t (it has at least one mapped neighbour). */
static int32_t step_node(mahd *s, const int32_t *loc, int32_t t)
{
    const topomap_i_qap *q = s->q;
    const double *d = q->d;
    int32_t k = 0, recent = -1, out;
    for (int64_t e = q->xadj[t]; e < q->xadj[t + 1]; e++) {
        int32_t u = q->adj[e];
        if (loc[u] < 0) continue;
        s->nloc[k] = loc[u];
        s->nw[k++] = s->rule == TOPOMAP_MAHD_WEIGHTED ? q->w[e] : 1.0;
        if (recent < 0 || s->stamp[u] > s->stamp[recent]) recent = u;
    }
    if (s->rule == TOPOMAP_MAHD_GGE) {
        const double *dr = d + (int64_t)loc[recent] * q->m;
        ARGMIN_FREE(s, t, dr[l], out);
    } else {
        /* the sum has the average's argmin: the number of neighbours is fixed */
        ARGMIN_FREE(s, t, sum_to(d + (int64_t)l * q->m, s->nloc, s->nw, k), out);
    }
    return out;
}

/* One MAHD run from start node `start` (-1: the most central). */
static int run_once(mahd *s, int32_t start, int32_t *loc)
{
    const topomap_i_qap *q = s->q;
    int32_t n = q->n, m = q->m, placed = 0;
    topomap_i_fit_reset(&s->fit, q);
    for (int32_t j = 0; j < n; j++) {
        loc[j] = -1;
        s->inheap[j] = 0;
    }
    for (int32_t l = 0; l < m; l++) s->freel[l] = s->fpos[l] = l;
    s->nfree = m;
    s->hlen = 0;
    s->clock = 0;
    int32_t seed_task = s->first;
    while (placed < n) {
        if (placed > 0) { /* a new component: the unmapped task with the most neighbours */
            seed_task = -1;
            for (int32_t j = 0; j < n; j++)
                if (loc[j] < 0 && (seed_task < 0 || pops_first(s, j, seed_task))) seed_task = j;
        }
        int32_t l = placed == 0 && start >= 0 ? start : most_central(s, seed_task);
        place(s, loc, seed_task, l);
        placed++;
        while (s->hlen > 0) {
            int32_t t = heap_pop(s);
            int64_t before = s->nfree;
            place(s, loc, t, step_node(s, loc, t));
            placed++;
            int rc = topomap_i_tick(s->tk, TOPOMAP_I_QAP_UNITS(before * (1 + q->xadj[t + 1] - q->xadj[t])), s->frac);
            if (rc) return rc;
        }
    }
    return TOPOMAP_OK;
}

static int check_args(const topomap_i_mahd_args *args)
{
    if (args->rule < TOPOMAP_MAHD_AVERAGE || args->rule > TOPOMAP_MAHD_GGE)
        return topomap_i_fail(TOPOMAP_EINVAL, "MAHD rule = %d must be 0 (average), 1 (weighted) or 2 (GGE)", args->rule);
    if (args->objective != TOPOMAP_OBJECTIVE_HOP_BYTES && args->objective != TOPOMAP_OBJECTIVE_MAX_CONGESTION)
        return topomap_i_fail(TOPOMAP_EINVAL, "EMAHD objective = %d must be 0 (hop_bytes) or 1 (max_congestion)",
                              args->objective);
    return TOPOMAP_OK;
}

int topomap_i_mahd_solve(const topomap_i_qap *q, const void *ctx, const topomap_run_options *run, int32_t *best)
{
    const topomap_i_mahd_args *args = ctx;
    int rc = check_args(args);
    if (rc) return rc;
    if (args->exhaustive && args->objective == TOPOMAP_OBJECTIVE_MAX_CONGESTION && !q->machine)
        return topomap_i_fail(TOPOMAP_EINVAL, "EMAHD by max_congestion needs machine nodes as locations");
    int32_t n = q->n, m = q->m;
    const char *what = args->exhaustive ? "EMAHD" : args->rule == TOPOMAP_MAHD_GGE ? "GGE" : "MAHD";
    topomap_i_ticker tk = {run, what, 0.0, 1.0, 0, 0};
    mahd s = {.q = q, .rule = args->rule};
    s.tk = &tk;
    int32_t *loc = malloc((size_t)n * sizeof *loc), *pe = malloc((size_t)n * sizeof *pe);
    s.deg = malloc((size_t)n * sizeof *s.deg);
    s.heap = malloc((size_t)n * sizeof *s.heap);
    s.inheap = malloc((size_t)n);
    s.stamp = malloc((size_t)n * sizeof *s.stamp);
    s.nloc = malloc((size_t)n * sizeof *s.nloc);
    s.nw = malloc((size_t)n * sizeof *s.nw);
    s.central = calloc((size_t)m, sizeof *s.central);
    s.freel = malloc((size_t)m * sizeof *s.freel);
    s.fpos = malloc((size_t)m * sizeof *s.fpos);
    int have_fit = 0;
    if (!loc || !pe || !s.deg || !s.heap || !s.inheap || !s.stamp || !s.nloc || !s.nw || !s.central || !s.freel ||
        !s.fpos) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory in MAHD (%d tasks, %d nodes)", (int)n, (int)m);
        goto cleanup;
    }
    rc = topomap_i_fit_init(&s.fit, q);
    if (rc) goto cleanup;
    have_fit = 1;
    for (int32_t j = 0; j < n; j++) {
        s.deg[j] = (int32_t)(q->xadj[j + 1] - q->xadj[j]);
        if (pops_first(&s, j, s.first)) s.first = j;
    }
    for (int32_t a = 0; a < m; a++)
        for (int32_t b = 0; b < m; b++) s.central[a] += q->d[(int64_t)a * m + b];
    if (!args->exhaustive) {
        rc = run_once(&s, -1, best);
        goto cleanup;
    }
    double best_obj = 0, best_hb = 0;
    int found = 0;
    for (int32_t start = 0; start < m; start++) {
        topomap_i_fit_reset(&s.fit, q);
        if (!topomap_i_fit_ok(&s.fit, q, s.first, start)) continue;
        s.frac = (double)start / m;
        rc = run_once(&s, start, loc);
        if (rc) goto cleanup;
        double hb = topomap_i_qap_cost(q, loc), obj = hb;
        if (args->objective == TOPOMAP_OBJECTIVE_MAX_CONGESTION) {
            topomap_metrics mt;
            for (int32_t j = 0; j < n; j++) pe[j] = q->loc_pe[loc[j]];
            rc = topomap_evaluate(q->machine, &q->flows, pe, NULL, &mt, NULL);
            if (rc) goto cleanup;
            obj = mt.max_congestion;
        }
        if (!found || obj < best_obj || (obj == best_obj && hb < best_hb)) {
            found = 1;
            best_obj = obj;
            best_hb = hb;
            memcpy(best, loc, (size_t)n * sizeof *best);
        }
    }
cleanup:
    if (have_fit) topomap_i_fit_free(&s.fit);
    free(loc);
    free(pe);
    free(s.deg);
    free(s.heap);
    free(s.inheap);
    free(s.stamp);
    free(s.nloc);
    free(s.nw);
    free(s.central);
    free(s.freel);
    free(s.fpos);
    return rc;
}

int topomap_map_mahd(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                     int32_t capacity, int rule, const topomap_run_options *run, int32_t *pe_of)
{
    topomap_i_mahd_args args = {rule, 0, TOPOMAP_OBJECTIVE_HOP_BYTES};
    int rc = check_args(&args);
    if (rc) return rc;
    return topomap_i_qap_map(m, p, alloc, nalloc, capacity, run, rule == TOPOMAP_MAHD_GGE ? "GGE" : "MAHD",
                             topomap_i_mahd_solve, &args, pe_of);
}

int topomap_map_emahd(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                      int32_t capacity, int rule, int objective, const topomap_run_options *run, int32_t *pe_of)
{
    topomap_i_mahd_args args = {rule, 1, objective};
    int rc = check_args(&args);
    if (rc) return rc;
    return topomap_i_qap_map(m, p, alloc, nalloc, capacity, run, "EMAHD", topomap_i_mahd_solve, &args, pe_of);
}

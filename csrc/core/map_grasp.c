/* GRASP for the quadratic assignment problem (Li, Pardalos & Resende 1994,
   "A greedy randomized adaptive search procedure for the quadratic
   assignment problem"), as Kumar's thesis uses it for hop-byte mapping
   (§6.2.1; notes 001 §4.5): the QAPLIB dense code, run unmodified on the
   task graph.  Each iteration builds a mapping in two randomized greedy
   stages and improves it by 2-exchange local search; the cheapest mapping
   of all iterations is kept.

   Stage 1: the beta-fraction of smallest distances (ascending) is paired
   element by element with the beta-fraction of largest flows (descending);
   of these products, one of the alpha-fraction smallest is chosen at random
   and its flow pair {i, j} is assigned to its location pair {k, l}.
   Stage 2: one (facility, location) pair at a time, chosen at random among
   the alpha-fraction cheapest by the cost against the assignments made so
   far.  Local search: swaps of two facilities while one lowers the cost.

   The dense code treats a missing flow as a flow of 0, and so does this
   one: zero flows fill the tail of stage 1's flow list (their products are
   0, the smallest), and a facility without a placed neighbour costs 0 at
   every free location.  On a sparse task graph a construction therefore
   places unconnected facilities at random until the greedy part takes
   over, which is what gives the multi-start its spread (a variant that
   drew only from the placed facilities' neighbours was faster but never
   found the optimum of some 7-task cases).  Stage 2 draws that zero-cost
   part without listing it: when the zero-cost pairs fill the candidate
   list, a uniform zero-cost pair is exactly the list's uniform draw (its
   ties are broken at random); otherwise the list is every zero-cost pair
   plus the cheapest pairs of the facilities with placed neighbours
   (distances between distinct nodes are positive, so those cost more).

   Choices the sources leave open (the thesis ran the QAPLIB code as is):
   - List lengths: floor(beta x pairs) for stage 1's lists (at least one),
     paired up to the shorter; max(1, floor(alpha x candidates)) for the
     candidate lists.
   - Ties are broken at random, afresh in every list of every iteration (hop
     counts are small integers, so most distances tie; an index-order
     tie-break made every construction start from the same node pairs).
   - The stage-1 pair is oriented by a coin flip (i -> k, j -> l or i -> l,
     j -> k); an assignment of it that does not fit is left to stage 2.
   - n-to-1: a facility (group) may only take a location (node) that holds
     it, and only while a complete placement stays possible (map_qap.c).
   - Local search: first improvement, facilities a < b in index order, then
     moves of a onto each unused location (more nodes than groups), sweeps
     until one finds no change lowering the cost by more than round-off.
   - Defaults: 32 iterations, alpha 0.25, beta 0.5 (the values usually
     quoted for this GRASP).  The best mapping is the first with the lowest
     cost.

   Complexity, n facilities onto m locations, E flows, per iteration: stage 1
   O(m^2 log n + E log E); stage 2 O(n (n + m)) for the zero-cost steps and
   O(frontier x m) for the others, O(E m) to keep the costs; a local-search
   sweep O(n (n + m) degree).  Memory O(n m), limited to n m <= 2^25. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/map_kumar.h"
#include "topomap/rng.h"
#include "map_qap.h"

#define MAX_CELLS (INT64_C(1) << 25)

/* A value, a random tie key, and the pair it belongs to. */
typedef struct {
    double v;
    uint32_t tie;
    int32_t a, b;
} triple;

static int before(const triple *x, const triple *y)
{
    if (x->v != y->v) return x->v < y->v;
    if (x->tie != y->tie) return x->tie < y->tie;
    if (x->a != y->a) return x->a < y->a;
    return x->b < y->b;
}

static int cmp_triple(const void *x, const void *y)
{
    return before(x, y) ? -1 : before(y, x) ? 1 : 0;
}

static void swap_t(triple *x, triple *y)
{
    triple t = *x;
    *x = *y;
    *y = t;
}

/* Rearrange c[0..len) so that its r smallest come first (any order). */
static void select_smallest(triple *c, int64_t len, int64_t r)
{
    int64_t lo = 0, hi = len - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        /* median of three to the end as pivot */
        if (before(&c[mid], &c[lo])) swap_t(&c[mid], &c[lo]);
        if (before(&c[hi], &c[lo])) swap_t(&c[hi], &c[lo]);
        if (before(&c[mid], &c[hi])) swap_t(&c[mid], &c[hi]);
        triple pivot = c[hi];
        int64_t s = lo;
        for (int64_t i = lo; i < hi; i++)
            if (before(&c[i], &pivot)) swap_t(&c[i], &c[s++]);
        swap_t(&c[s], &c[hi]);
        if (s == r - 1 || s == r) return;
        if (s < r) lo = s + 1;
        else hi = s - 1;
    }
}

/* Max-heap of the `cap` smallest triples seen. */
static void heap_offer(triple *h, int64_t *len, int64_t cap, triple t)
{
    if (*len < cap) {
        int64_t i = (*len)++;
        h[i] = t;
        while (i > 0 && before(&h[(i - 1) / 2], &h[i])) {
            swap_t(&h[(i - 1) / 2], &h[i]);
            i = (i - 1) / 2;
        }
        return;
    }
    if (!before(&t, &h[0])) return;
    h[0] = t;
    for (int64_t i = 0;;) {
        int64_t l = 2 * i + 1, r = l + 1, big = i;
        if (l < *len && before(&h[big], &h[l])) big = l;
        if (r < *len && before(&h[big], &h[r])) big = r;
        if (big == i) break;
        swap_t(&h[i], &h[big]);
        i = big;
    }
}

void topomap_grasp_options_init(topomap_grasp_options *opt)
{
    opt->iterations = 32;
    opt->alpha = 0.25;
    opt->beta = 0.5;
}

int topomap_i_grasp_check(const topomap_grasp_options *o)
{
    if (o->iterations < 1) return topomap_i_fail(TOPOMAP_EINVAL, "GRASP iterations = %d must be >= 1", (int)o->iterations);
    if (!(o->alpha > 0 && o->alpha <= 1))
        return topomap_i_fail(TOPOMAP_EINVAL, "GRASP alpha = %g must be in (0, 1]", o->alpha);
    if (!(o->beta > 0 && o->beta <= 1))
        return topomap_i_fail(TOPOMAP_EINVAL, "GRASP beta = %g must be in (0, 1]", o->beta);
    return TOPOMAP_OK;
}

/* The state of one construction. */
typedef struct {
    const topomap_i_qap *q;
    topomap_i_fit fit;
    int32_t *sidx;            /* facility -> index of its size in fit.value */
    int64_t *nfit;            /* per size index: free locations that fit it now */
    char *ok;                 /* per size index v, free-list position x: ok[v * m + x] = fits */
    int32_t *loc;
    int32_t *unplaced, *upos; /* unplaced facilities, position of each (or -1) */
    int32_t nunplaced;
    int32_t *freel, *fpos;    /* free locations, position of each (or -1) */
    int32_t nfree;
    int32_t *front, *fidx;    /* unplaced facilities with a placed neighbour, position of each (or -1) */
    int32_t nfront;
    double *c;                /* n x m: cost of j at l against the placed facilities */
} build;

static void list_remove(int32_t *list, int32_t *pos, int32_t *len, int32_t x)
{
    int32_t i = pos[x], last = list[--*len];
    list[i] = last;
    pos[last] = i;
    pos[x] = -1;
}

static void place(build *s, int32_t j, int32_t l)
{
    const topomap_i_qap *q = s->q;
    s->loc[j] = l;
    topomap_i_fit_place(&s->fit, q, j, l);
    list_remove(s->unplaced, s->upos, &s->nunplaced, j);
    list_remove(s->freel, s->fpos, &s->nfree, l);
    if (s->fidx[j] >= 0) list_remove(s->front, s->fidx, &s->nfront, j);
    const double *dl = q->d + (int64_t)l * q->m;
    for (int64_t e = q->xadj[j]; e < q->xadj[j + 1]; e++) {
        int32_t u = q->adj[e];
        if (s->loc[u] >= 0) continue;
        if (s->fidx[u] < 0) {
            s->fidx[u] = s->nfront;
            s->front[s->nfront++] = u;
        }
        double *cu = s->c + (int64_t)u * q->m, w = q->w[e];
        for (int32_t x = 0; x < q->m; x++) cu[x] += w * dl[x];
    }
}

/* The u-th free location (free-list order) that fits facility j. */
static int32_t nth_fitting(const build *s, int32_t j, int64_t u)
{
    const char *ok = s->ok + (int64_t)s->sidx[j] * s->q->m;
    for (int32_t x = 0; x < s->nfree; x++)
        if (ok[x] && u-- == 0) return s->freel[x];
    return -1; /* not reached: u < the number of fitting locations */
}

/* A random tie key for pair (j, l) of this step: a multiplicative hash of a
   per-step salt, cheaper than one generator call per candidate. */
static inline uint32_t tie_key(uint64_t salt, int32_t j, int32_t l)
{
    uint64_t h = (salt ^ ((uint64_t)(uint32_t)j << 32 | (uint32_t)l)) * UINT64_C(0x9E3779B97F4A7C15);
    return (uint32_t)(h >> 32);
}

/* One step of stage 2: place a pair drawn from the alpha-fraction cheapest. */
static void stage2_step(build *s, double alpha, topomap_rng *rng, triple *cand, int64_t *work)
{
    const topomap_i_qap *q = s->q;
    const topomap_i_fit *f = &s->fit;
    for (int32_t v = 0; v < f->nv; v++) {
        char *ok = s->ok + (int64_t)v * q->m;
        s->nfit[v] = 0;
        for (int32_t x = 0; x < s->nfree; x++) {
            ok[x] = (char)topomap_i_fit_ok_size(f, f->value[v], q->cap[s->freel[x]]);
            s->nfit[v] += ok[x];
        }
    }
    int64_t zero = 0, front = 0; /* candidates of cost 0 and of the frontier */
    for (int32_t i = 0; i < s->nunplaced; i++) {
        int32_t j = s->unplaced[i];
        if (s->fidx[j] < 0) zero += s->nfit[s->sidx[j]];
        else front += s->nfit[s->sidx[j]];
    }
    int64_t r = (int64_t)floor(alpha * (double)(zero + front));
    if (r < 1) r = 1;
    int64_t u = (int64_t)topomap_rng_below(rng, (uint64_t)(r <= zero ? zero : r));
    *work += (int64_t)f->nv * s->nfree + s->nunplaced;
    if (u < zero) { /* a uniform zero-cost pair */
        for (int32_t i = 0; i < s->nunplaced; i++) {
            int32_t j = s->unplaced[i];
            if (s->fidx[j] >= 0) continue;
            if (u < s->nfit[s->sidx[j]]) {
                place(s, j, nth_fitting(s, j, u));
                return;
            }
            u -= s->nfit[s->sidx[j]];
        }
    }
    int64_t nc = 0;
    uint64_t salt = topomap_rng_next(rng);
    for (int32_t i = 0; i < s->nfront; i++) {
        int32_t j = s->front[i];
        const double *cj = s->c + (int64_t)j * q->m;
        const char *ok = s->ok + (int64_t)s->sidx[j] * q->m;
        for (int32_t x = 0; x < s->nfree; x++) {
            int32_t l = s->freel[x];
            if (ok[x]) cand[nc++] = (triple){cj[l], tie_key(salt, j, l), j, l};
        }
    }
    select_smallest(cand, nc, r - zero);
    *work += 2 * nc;
    triple pick = cand[u - zero];
    place(s, pick.a, pick.b);
}

/* Stage 1: the list lengths, then per iteration the lists and the draw. */
typedef struct {
    int64_t npairs, rcl, nonzero;
    triple *dist, *flow, *prod;
} stage1;

static int stage1_init(stage1 *t, const topomap_i_qap *q, const topomap_grasp_options *opt)
{
    int64_t n = q->n, m = q->m;
    int64_t nflow = (int64_t)floor(opt->beta * (double)(n * (n - 1) / 2));
    int64_t ndist = (int64_t)floor(opt->beta * (double)(m * (m - 1) / 2));
    if (nflow < 1 && n > 1) nflow = 1;
    if (ndist < 1 && m > 1) ndist = 1;
    t->npairs = nflow < ndist ? nflow : ndist;
    t->rcl = (int64_t)floor(opt->alpha * (double)t->npairs);
    if (t->rcl < 1) t->rcl = 1;
    t->nonzero = q->xadj[n] / 2;
    t->dist = malloc((size_t)t->npairs * sizeof *t->dist + 1);
    t->flow = malloc((size_t)t->nonzero * sizeof *t->flow + 1);
    t->prod = malloc((size_t)t->npairs * sizeof *t->prod + 1);
    if (!t->dist || !t->flow || !t->prod) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory in GRASP stage 1");
    return TOPOMAP_OK;
}

static int stage1_run(const stage1 *t, build *s, topomap_rng *rng, topomap_i_ticker *tk, double frac)
{
    const topomap_i_qap *q = s->q;
    int32_t n = q->n, m = q->m;
    if (t->npairs < 1) return TOPOMAP_OK;
    int64_t len = 0, nf = 0;
    for (int32_t a = 0; a < m; a++) {
        for (int32_t b = a + 1; b < m; b++)
            heap_offer(t->dist, &len, t->npairs, (triple){q->d[(int64_t)a * m + b], (uint32_t)topomap_rng_next(rng), a, b});
        int rc = topomap_i_tick(tk, TOPOMAP_I_QAP_UNITS(m - a), frac);
        if (rc) return rc;
    }
    qsort(t->dist, (size_t)len, sizeof *t->dist, cmp_triple);
    for (int32_t i = 0; i < n; i++)
        for (int64_t e = q->xadj[i]; e < q->xadj[i + 1]; e++)
            if (q->adj[e] > i) t->flow[nf++] = (triple){-q->w[e], (uint32_t)topomap_rng_next(rng), i, q->adj[e]};
    qsort(t->flow, (size_t)nf, sizeof *t->flow, cmp_triple);
    for (int64_t k = 0; k < t->npairs; k++)
        t->prod[k] = (triple){k < nf ? t->dist[k].v * -t->flow[k].v : 0.0, (uint32_t)topomap_rng_next(rng), (int32_t)k, 0};
    select_smallest(t->prod, t->npairs, t->rcl);
    int64_t k = t->prod[topomap_rng_below(rng, (uint64_t)t->rcl)].a;
    int32_t i, j;
    if (k < nf) {
        i = t->flow[k].a;
        j = t->flow[k].b;
    } else { /* a zero flow: a random pair of facilities that do not communicate (one exists: k >= nf) */
        for (;;) {
            i = (int32_t)topomap_rng_below(rng, (uint64_t)n);
            j = (int32_t)topomap_rng_below(rng, (uint64_t)n);
            int talk = i == j;
            for (int64_t e = q->xadj[i]; e < q->xadj[i + 1] && !talk; e++) talk = q->adj[e] == j;
            if (!talk) break;
        }
    }
    int32_t a = t->dist[k].a, b = t->dist[k].b;
    if (topomap_rng_below(rng, 2)) {
        a = t->dist[k].b;
        b = t->dist[k].a;
    }
    if (topomap_i_fit_ok(&s->fit, q, i, a)) place(s, i, a);
    if (topomap_i_fit_ok(&s->fit, q, j, b)) place(s, j, b);
    return TOPOMAP_OK;
}

static void stage1_free(stage1 *t)
{
    free(t->dist);
    free(t->flow);
    free(t->prod);
}

static void local_search_sweeps(const topomap_i_qap *q, build *s, double tol, topomap_i_ticker *tk, double frac,
                                int *rc)
{
    int32_t *loc = s->loc;
    for (int improved = 1; improved && !*rc;) {
        improved = 0;
        for (int32_t a = 0; a < q->n && !*rc; a++) {
            int64_t work = 0;
            for (int32_t b = a + 1; b < q->n; b++) {
                work += 1 + (q->xadj[a + 1] - q->xadj[a]) + (q->xadj[b + 1] - q->xadj[b]);
                if (q->size[a] > q->cap[loc[b]] || q->size[b] > q->cap[loc[a]]) continue;
                if (topomap_i_qap_swap_delta(q, loc, a, b) < -tol) {
                    int32_t t = loc[a];
                    loc[a] = loc[b];
                    loc[b] = t;
                    improved = 1;
                }
            }
            for (int32_t f = 0; f < s->nfree; f++) {
                int32_t l = s->freel[f];
                work += 1 + (q->xadj[a + 1] - q->xadj[a]);
                if (q->size[a] > q->cap[l]) continue;
                if (topomap_i_qap_move_delta(q, loc, a, l) < -tol) {
                    s->freel[f] = loc[a];
                    loc[a] = l;
                    improved = 1;
                }
            }
            *rc = topomap_i_tick(tk, TOPOMAP_I_QAP_UNITS(work), frac);
        }
    }
}

int topomap_i_grasp_solve(const topomap_i_qap *q, const void *ctx, const topomap_run_options *run, int32_t *best)
{
    const topomap_grasp_options *opt = ctx;
    int rc = topomap_i_grasp_check(opt);
    if (rc) return rc;
    int32_t n = q->n, m = q->m;
    if ((int64_t)n * m > MAX_CELLS)
        return topomap_i_fail(TOPOMAP_EINVAL,
                              "GRASP on %d groups x %d nodes exceeds its %lld-cell limit (kumar-hybrid maps part by part)",
                              (int)n, (int)m, (long long)MAX_CELLS);
    topomap_rng rng;
    topomap_rng_seed(&rng, run ? run->seed : 0);
    topomap_i_ticker tk = {run, "GRASP", 0.0, 1.0, 0, 0};
    build s = {.q = q};
    stage1 st = {0};
    triple *cand = NULL;
    int have_fit = 0;
    s.loc = malloc((size_t)n * sizeof *s.loc);
    s.sidx = malloc((size_t)n * sizeof *s.sidx);
    s.nfit = malloc((size_t)n * sizeof *s.nfit);
    s.ok = NULL;
    s.unplaced = malloc((size_t)n * sizeof *s.unplaced);
    s.upos = malloc((size_t)n * sizeof *s.upos);
    s.front = malloc((size_t)n * sizeof *s.front);
    s.fidx = malloc((size_t)n * sizeof *s.fidx);
    s.freel = malloc((size_t)m * sizeof *s.freel);
    s.fpos = malloc((size_t)m * sizeof *s.fpos);
    s.c = malloc((size_t)n * (size_t)m * sizeof *s.c);
    cand = malloc((size_t)n * (size_t)m * sizeof *cand);
    if (!s.loc || !s.sidx || !s.nfit || !s.unplaced || !s.upos || !s.front || !s.fidx || !s.freel || !s.fpos || !s.c ||
        !cand) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory in GRASP (%d groups, %d nodes)", (int)n, (int)m);
        goto cleanup;
    }
    rc = topomap_i_fit_init(&s.fit, q);
    if (rc) goto cleanup;
    have_fit = 1;
    s.ok = malloc((size_t)s.fit.nv * (size_t)m);
    if (!s.ok) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory in GRASP");
        goto cleanup;
    }
    for (int32_t j = 0; j < n; j++)
        for (s.sidx[j] = 0; s.fit.value[s.sidx[j]] != q->size[j];) s.sidx[j]++;
    rc = stage1_init(&st, q, opt);
    if (rc) goto cleanup;
    double tol = topomap_i_qap_tolerance(q), best_cost = 0;
    for (int32_t it = 0; it < opt->iterations; it++) {
        double frac = (double)it / opt->iterations;
        rc = topomap_i_report(&tk, frac); /* at least once per iteration */
        if (rc) goto cleanup;
        topomap_i_fit_reset(&s.fit, q);
        for (int32_t j = 0; j < n; j++) {
            s.loc[j] = -1;
            s.unplaced[j] = s.upos[j] = j;
            s.fidx[j] = -1;
        }
        for (int32_t l = 0; l < m; l++) s.freel[l] = s.fpos[l] = l;
        s.nunplaced = n;
        s.nfree = m;
        s.nfront = 0;
        memset(s.c, 0, (size_t)n * (size_t)m * sizeof *s.c);
        rc = stage1_run(&st, &s, &rng, &tk, frac);
        if (rc) goto cleanup;
        while (s.nunplaced > 0) {
            int64_t work = 0;
            stage2_step(&s, opt->alpha, &rng, cand, &work);
            rc = topomap_i_tick(&tk, TOPOMAP_I_QAP_UNITS(work), frac);
            if (rc) goto cleanup;
        }
        local_search_sweeps(q, &s, tol, &tk, frac, &rc);
        if (rc) goto cleanup;
        double cost = topomap_i_qap_cost(q, s.loc);
        if (it == 0 || cost < best_cost) {
            best_cost = cost;
            memcpy(best, s.loc, (size_t)n * sizeof *best);
        }
    }
cleanup:
    if (have_fit) topomap_i_fit_free(&s.fit);
    stage1_free(&st);
    free(s.loc);
    free(s.sidx);
    free(s.nfit);
    free(s.ok);
    free(s.unplaced);
    free(s.upos);
    free(s.front);
    free(s.fidx);
    free(s.freel);
    free(s.fpos);
    free(s.c);
    free(cand);
    return rc;
}

int topomap_map_grasp(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                      int32_t capacity, const topomap_grasp_options *opt, const topomap_run_options *run,
                      int32_t *pe_of)
{
    topomap_grasp_options def;
    if (!opt) {
        topomap_grasp_options_init(&def);
        opt = &def;
    }
    int rc = topomap_i_grasp_check(opt);
    if (rc) return rc;
    return topomap_i_qap_map(m, p, alloc, nalloc, capacity, run, "GRASP", topomap_i_grasp_solve, opt, pe_of);
}

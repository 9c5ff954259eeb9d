/* PTRAM, serial (Mirsadeghi 2017 §3.3.1-§3.3.5, Algs. 3.1 and 3.2; 000
   notes §2).  The order of operations, the tie rules and the complexity
   are in topomap/map_ptram.h; this comment lists the choices the thesis
   leaves open and why they were made so.

   - Step 1 partitioner: the thesis uses Scotch; we use
     topomap_group_by_node (multilevel k-way, hard node capacities, seeded),
     "any partitioner works" (§3.3.1).  The seed reaches only this step.
   - Tie of delta (Alg. 3.1 line 7): lowest unit index (unspecified).
   - Candidate nodes: the thesis's "non-occupied nodes"; we add that a node
     must hold the unit and leave the other units placeable, which only
     matters with unequal nodes (a partially used last node).  Without
     grouping a node takes units while it has slots, and it is scored once
     per step whatever its number of free slots: the network metrics only
     see nodes.
   - A unit with no placed neighbour scores the same on every node (its
     messages are all left out of the partial mapping), so it goes to the
     first free node without evaluating the others: the result is the
     same as evaluating them.
   - Hybrid metric: raw sum with weights (1,1,1,1 as eq. 3.3), congestion =
     load / capacity, population variance, from the shared evaluator.
   - Refinement radius k (not given): the default TOPOMAP_PTRAM_DEFAULT_K
     was chosen by benchmarks/bench_ptram.py --sweep-k (README).  "Closest"
     = topomap_machine_distance between the nodes' first PEs, ties to the
     lower allocation node index; empty nodes in the radius are tried as
     moves (the thesis's leaders only swap, but an empty node is a process
     with no traffic).
   - Alg. 3.2 line 5 loops over the flows q through l*, but the search
     inside does not depend on q: it runs once if any flow crosses l*.
   - The hottest link (line 4): lowest link id among the tied maxima.
   - A leader keeps only a try strictly below the current MC (line 12), the
     first of its lowest; the global choice is the lowest MC, ties to the
     lowest leader (unspecified; the leader "rank" is the allocation node
     index).  Stop rule as the thesis: a round with no decrease, or `rounds`.
   - Without grouping a node may host several units: its leader searches
     for each of them, in unit order.
   - plateau = 1 (not in the thesis, off by default): the thesis stops as
     soon as no single swap lowers the maximum, which happens whenever
     several links share it; the option also accepts a swap that keeps the
     maximum and lowers the hottest link's load (computed from the routes of
     the moved units' messages, O(degree x route) per try), so the tied
     links are relieved one round after another.  Applying every leader's
     kept swap per round instead of one was measured too and gained nothing
     (the other swaps rarely still lower the maximum), so it is not offered.
   - Comparisons use a relative tie tolerance of 1e-10 so that round-off in
     running sums never chooses between equivalent nodes.
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "topomap/error.h"
#include "topomap/eval.h"
#include "topomap/map_ptram.h"
#include "topomap/partition.h"

#define TIE_REL 1e-10
/* Work units (messages re-routed by a try) between two progress checks:
   about 5-10 ms. */
#define CHECK_EVERY (1 << 15)

/* a is lower than b beyond round-off */
static int below(double a, double b) { return a < b - TIE_REL * fmax(fabs(a), fabs(b)); }

static double now(void)
{
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Progress over the three steps: each reports a fraction of its own range. */
typedef struct {
    int (*cb)(void *ctx, double fraction);
    void *ctx;
    double lo, hi, fraction;
    int64_t work, next_check;
} progress;

static int report(progress *g, double f)
{
    double x = g->lo + (g->hi - g->lo) * (f > 1 ? 1 : f);
    if (x > g->fraction) g->fraction = x;
    if (g->cb && g->cb(g->ctx, g->fraction))
        return topomap_i_fail(TOPOMAP_ECANCELED, "ptram cancelled by the progress callback at %.0f%%",
                              100 * g->fraction);
    return TOPOMAP_OK;
}

static int tick(progress *g, int64_t units, double f)
{
    g->work += units;
    if (g->work < g->next_check) return TOPOMAP_OK;
    g->next_check = g->work + CHECK_EVERY;
    return report(g, f);
}

/* The partitioner's own fractions, mapped into step 1's range. */
static int scaled_progress(void *ctx, double f)
{
    progress *g = ctx;
    double x = g->lo + (g->hi - g->lo) * f;
    if (x > g->fraction) g->fraction = x;
    return g->cb(g->ctx, g->fraction);
}

typedef struct {
    const topomap_machine *m;
    const topomap_alloc_nodes *an;
    int32_t nu, N, partition;
    topomap_pattern q;                                /* between units */
    int64_t *t_indptr; int32_t *t_indices; double *t_bytes; /* its transpose */
    int64_t *xadj; int32_t *adj; double *wgt;         /* q + q^T: the traffic delta counts */
    int64_t *size;      /* processes of each unit */
    int32_t *unit_node; /* allocation node of each unit, -1 while unplaced */
    int64_t *used;      /* processes on each allocation node */
    /* node classes (partition = 1): distinct slot counts, ascending */
    int32_t nclass;
    int64_t *cls_val;
    int32_t *node_cls, *unit_cls;
    int64_t *free_cnt, *left_cnt; /* empty nodes / unplaced units per class */
    int64_t *suffix_n, *suffix_u; /* their suffix sums (scratch) */
    topomap_eval *e;
    int32_t *route;
    progress pg;
} ptram;

static int32_t class_of(const ptram *s, int64_t v)
{
    int32_t lo = 0, hi = s->nclass;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (s->cls_val[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

static int build_classes(ptram *s)
{
    const topomap_alloc_nodes *an = s->an;
    s->cls_val = malloc((size_t)s->N * sizeof *s->cls_val);
    s->node_cls = malloc((size_t)s->N * sizeof *s->node_cls);
    s->unit_cls = malloc((size_t)s->nu * sizeof *s->unit_cls);
    s->free_cnt = calloc((size_t)s->N, sizeof *s->free_cnt);
    s->left_cnt = calloc((size_t)s->N, sizeof *s->left_cnt);
    s->suffix_n = malloc((size_t)s->N * sizeof *s->suffix_n);
    s->suffix_u = malloc((size_t)s->N * sizeof *s->suffix_u);
    if (!s->cls_val || !s->node_cls || !s->unit_cls || !s->free_cnt || !s->left_cnt || !s->suffix_n || !s->suffix_u)
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    memcpy(s->cls_val, an->slots, (size_t)s->N * sizeof *s->cls_val);
    qsort(s->cls_val, (size_t)s->N, sizeof *s->cls_val, cmp_i64);
    s->nclass = 0;
    for (int32_t j = 0; j < s->N; j++)
        if (!s->nclass || s->cls_val[s->nclass - 1] != s->cls_val[j]) s->cls_val[s->nclass++] = s->cls_val[j];
    for (int32_t j = 0; j < s->N; j++) s->free_cnt[s->node_cls[j] = class_of(s, an->slots[j])]++;
    for (int32_t u = 0; u < s->nu; u++) {
        s->unit_cls[u] = class_of(s, s->size[u]);
        if (s->unit_cls[u] == s->nclass)
            return topomap_i_fail(TOPOMAP_EINVAL, "unit %d has %lld processes, more than any node's %lld slots", (int)u,
                                  (long long)s->size[u], (long long)s->cls_val[s->nclass - 1]);
        s->left_cnt[s->unit_cls[u]]++;
    }
    return TOPOMAP_OK;
}

/* admit[C] (C >= c): may a unit of class c take an empty node of class C and
   leave the other unplaced units placeable?  Units fit nodes by size only,
   so by Hall's theorem they are placeable iff, for every class c', the
   unplaced units of class >= c' are no more than the empty nodes of class
   >= c'; the placement lowers the node count for c' <= C and the unit count
   for c' <= c. */
static void admissible(const ptram *s, int32_t c, unsigned char *admit)
{
    int64_t nodes = 0, units = 0, *suffix_n = s->suffix_n, *suffix_u = s->suffix_u;
    int32_t D = s->nclass;
    for (int32_t x = D - 1; x >= 0; x--) {
        nodes += s->free_cnt[x];
        units += s->left_cnt[x];
        suffix_n[x] = nodes;
        suffix_u[x] = units;
    }
    int ok = 1;
    for (int32_t C = c; C < D; C++) {
        if (C > c) ok = ok && suffix_u[C] <= suffix_n[C] - 1;
        admit[C] = (unsigned char)ok;
    }
}

static int64_t degree(const ptram *s, int32_t u)
{
    return s->q.indptr[u + 1] - s->q.indptr[u] + s->t_indptr[u + 1] - s->t_indptr[u];
}

static int place(ptram *s, int32_t u, int32_t j)
{
    int rc = topomap_eval_move(s->e, u, s->an->first_pe[j]);
    if (rc) return rc;
    if (s->partition) {
        s->free_cnt[s->node_cls[j]]--;
        s->left_cnt[s->unit_cls[u]]--;
    }
    s->unit_node[u] = j;
    s->used[j] += s->size[u];
    return TOPOMAP_OK;
}

/* Alg. 3.1. */
static int greedy(ptram *s, int32_t *order)
{
    int32_t nu = s->nu, N = s->N;
    const topomap_alloc_nodes *an = s->an;
    double *A = calloc((size_t)nu, sizeof *A), *B = malloc((size_t)nu * sizeof *B);
    int32_t *nplaced = calloc((size_t)nu, sizeof *nplaced);
    unsigned char *admit = calloc((size_t)N + 1, 1);
    int rc = TOPOMAP_OK;
    if (!A || !B || !nplaced || !admit) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (int32_t u = 0; u < nu; u++) {
        B[u] = 0;
        for (int64_t t = s->xadj[u]; t < s->xadj[u + 1]; t++) B[u] += s->wgt[t];
    }
    for (int32_t step = 0; step < nu; step++) {
        double alpha = 1.0 / (double)(step + 1), best = 0;
        int32_t p = -1;
        for (int32_t u = 0; u < nu; u++) {
            if (s->unit_node[u] >= 0) continue;
            double d = A[u] + alpha * B[u];
            if (p < 0 || below(best, d)) {
                p = u;
                best = d;
            }
        }
        if (s->partition) admissible(s, s->unit_cls[p], admit);
        int32_t target = -1;
        double score = 0;
        double done = 1 - (double)(nu - step) * (nu - step) / ((double)nu * nu);
        for (int32_t j = 0; j < N; j++) {
            if (s->partition ? s->used[j] || s->node_cls[j] < s->unit_cls[p] || !admit[s->node_cls[j]]
                             : s->used[j] + s->size[p] > an->slots[j])
                continue;
            if (!nplaced[p]) {
                target = j;
                break;
            }
            topomap_metrics mt;
            rc = topomap_eval_try_move(s->e, p, an->first_pe[j], &mt);
            if (!rc) rc = tick(&s->pg, 1 + degree(s, p), done);
            if (rc) goto cleanup;
            if (target < 0 || below(mt.hybrid, score)) {
                target = j;
                score = mt.hybrid;
            }
        }
        if (target < 0) { /* the admissibility rule keeps a node for every unit */
            rc = topomap_i_fail(TOPOMAP_EINVAL, "ptram: no free node holds unit %d (%lld processes)", (int)p,
                                (long long)s->size[p]);
            goto cleanup;
        }
        rc = place(s, p, target);
        if (rc) goto cleanup;
        if (order) order[step] = p;
        for (int64_t t = s->xadj[p]; t < s->xadj[p + 1]; t++) {
            int32_t r = s->adj[t];
            A[r] += s->wgt[t];
            B[r] -= s->wgt[t];
            nplaced[r]++;
        }
    }
cleanup:
    free(A);
    free(B);
    free(nplaced);
    free(admit);
    return rc;
}

typedef struct {
    double d;
    int32_t j;
} near_node;

static int cmp_near(const void *a, const void *b)
{
    const near_node *x = a, *y = b;
    if (x->d != y->d) return x->d < y->d ? -1 : 1;
    return (x->j > y->j) - (x->j < y->j);
}

/* The kk allocation nodes nearest to n, ties to the lower index. */
static void nearest(const ptram *s, int32_t n, int32_t kk, near_node *buf, int32_t *out)
{
    const topomap_alloc_nodes *an = s->an;
    int32_t c = 0;
    for (int32_t j = 0; j < s->N; j++)
        if (j != n) buf[c++] = (near_node){topomap_machine_distance(s->m, an->first_pe[n], an->first_pe[j]), j};
    qsort(buf, (size_t)c, sizeof *buf, cmp_near);
    for (int32_t i = 0; i < kk; i++) out[i] = buf[i].j;
}

/* A leader's kept try: unit u to node m, swapped with unit r (-1: a move);
   the max congestion after it and, for a plateau try, the congestion of
   the hottest link after it. */
typedef struct {
    int32_t u, r, m;
    double mc, hot;
} try_rec;

/* Bytes over link l of the messages of unit u (sent or received) and of
   unit r (-1: none) with u on allocation node a and r on node b; a message
   between u and r counts once. */
static double traffic_on(ptram *s, int32_t u, int32_t a, int32_t r, int32_t b, int32_t l)
{
    const topomap_alloc_nodes *an = s->an;
    double sum = 0;
    for (int which = 0; which < 2; which++) {
        int32_t x = which ? r : u;
        if (x < 0) break;
        for (int side = 0; side < 2; side++) {
            const int64_t *ip = side ? s->t_indptr : s->q.indptr;
            const int32_t *ix = side ? s->t_indices : s->q.indices;
            const double *bw = side ? s->t_bytes : s->q.bytes;
            for (int64_t t = ip[x]; t < ip[x + 1]; t++) {
                int32_t y = ix[t];
                if (which && y == u) continue;
                int32_t nx = an->node[which ? b : a], ny = an->node[y == u ? a : y == r ? b : s->unit_node[y]];
                if (nx == ny) continue;
                int32_t h = side ? topomap_machine_route(s->m, ny, nx, s->route)
                                 : topomap_machine_route(s->m, nx, ny, s->route);
                for (int32_t i = 0; i < h; i++)
                    if (s->route[i] == l) {
                        sum += bw[t];
                        break;
                    }
            }
        }
    }
    return sum;
}

static int can_swap(const ptram *s, int32_t u, int32_t r)
{
    const int64_t *slots = s->an->slots;
    return !s->partition ||
           (s->size[u] <= slots[s->unit_node[r]] && s->size[r] <= slots[s->unit_node[u]]);
}

static int can_move(const ptram *s, int32_t u, int32_t m)
{
    return s->partition ? !s->used[m] && s->size[u] <= s->an->slots[m] : s->used[m] + s->size[u] <= s->an->slots[m];
}

static int try_it(ptram *s, const try_rec *t, topomap_metrics *mt)
{
    return t->r >= 0 ? topomap_eval_try_swap(s->e, t->u, t->r, mt)
                     : topomap_eval_try_move(s->e, t->u, s->an->first_pe[t->m], mt);
}

static int apply(ptram *s, const try_rec *t)
{
    int32_t n = s->unit_node[t->u];
    int rc = t->r >= 0 ? topomap_eval_swap(s->e, t->u, t->r) : topomap_eval_move(s->e, t->u, s->an->first_pe[t->m]);
    if (rc) return rc;
    s->used[n] -= s->size[t->u];
    s->used[t->m] += s->size[t->u];
    s->unit_node[t->u] = t->m;
    if (t->r >= 0) {
        s->used[t->m] -= s->size[t->r];
        s->used[n] += s->size[t->r];
        s->unit_node[t->r] = n;
    }
    return TOPOMAP_OK;
}

/* The link of largest congestion, the lowest id among tied ones. */
static int32_t hottest(const ptram *s, double mc)
{
    const double *load = topomap_eval_link_loads(s->e);
    int32_t nl = topomap_machine_nlinks(s->m);
    for (int32_t l = 0; l < nl; l++)
        if (load[l] > 0 && !below(load[l] / topomap_machine_link_capacity(s->m, l), mc)) return l;
    return -1;
}

/* Is try t (max congestion mc, hottest link's congestion hot) better than
   the kept one?  Lower MC first; with plateau, an equal MC and a cooler
   hottest link. */
static int better(const try_rec *t, const try_rec *kept)
{
    return below(t->mc, kept->mc) || (!below(kept->mc, t->mc) && below(t->hot, kept->hot));
}

/* Alg. 3.2. */
static int refine(ptram *s, int32_t rounds, int32_t k, int32_t plateau, topomap_ptram_trace *tr)
{
    int32_t N = s->N, nu = s->nu, kk = k < N - 1 ? k : N - 1;
    int32_t *knn = malloc(((size_t)N * kk + 1) * sizeof *knn);
    unsigned char *have = calloc((size_t)N, 1);
    near_node *buf = malloc((size_t)N * sizeof *buf);
    int32_t *start = malloc(((size_t)N + 1) * sizeof *start), *members = malloc((size_t)nu * sizeof *members);
    try_rec *kept = malloc((size_t)N * sizeof *kept);
    int rc = TOPOMAP_OK;
    if (!knn || !have || !buf || !start || !members || !kept) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    topomap_metrics cur, mt;
    topomap_eval_metrics(s->e, &cur);
    if (tr && tr->round_mc) tr->round_mc[0] = cur.max_congestion;
    for (int32_t round = 0; round < rounds && cur.max_congestion > 0; round++) {
        rc = report(&s->pg, (double)round / rounds);
        if (rc) goto cleanup;
        int32_t lstar = hottest(s, cur.max_congestion);
        double cap = topomap_machine_link_capacity(s->m, lstar), hot = topomap_eval_link_loads(s->e)[lstar] / cap;
        /* the units of each node, in unit order */
        memset(start, 0, ((size_t)N + 1) * sizeof *start);
        for (int32_t u = 0; u < nu; u++) start[s->unit_node[u] + 1]++;
        for (int32_t j = 0; j < N; j++) start[j + 1] += start[j];
        for (int32_t u = 0; u < nu; u++) members[start[s->unit_node[u]]++] = u;
        for (int32_t j = N; j > 0; j--) start[j] = start[j - 1];
        start[0] = 0;
        int32_t chosen = -1;
        for (int32_t n = 0; n < N; n++) {
            kept[n] = (try_rec){-1, -1, -1, cur.max_congestion, hot};
            for (int32_t t = start[n]; t < start[n + 1]; t++) {
                int32_t u = members[t];
                double mine = traffic_on(s, u, n, -1, -1, lstar);
                if (mine == 0) continue;
                if (!have[n]) {
                    nearest(s, n, kk, buf, knn + (size_t)n * kk);
                    have[n] = 1;
                }
                for (int32_t i = 0; i < kk; i++) {
                    int32_t m = knn[(size_t)n * kk + i];
                    for (int32_t t2 = start[m]; t2 <= start[m + 1]; t2++) {
                        try_rec cand = {u, t2 < start[m + 1] ? members[t2] : -1, m, 0, hot};
                        if (cand.r >= 0 ? !can_swap(s, u, cand.r) : !can_move(s, u, m)) continue;
                        rc = try_it(s, &cand, &mt);
                        if (!rc) rc = tick(&s->pg, 1 + degree(s, u) + (cand.r >= 0 ? degree(s, cand.r) : 0),
                                           (double)round / rounds);
                        if (rc) goto cleanup;
                        cand.mc = mt.max_congestion;
                        if (plateau && !below(cand.mc, cur.max_congestion)) {
                            double before = cand.r >= 0 ? traffic_on(s, u, n, cand.r, m, lstar) : mine;
                            cand.hot = hot + (traffic_on(s, u, m, cand.r, n, lstar) - before) / cap;
                        }
                        if (better(&cand, &kept[n])) kept[n] = cand;
                    }
                }
            }
            if (kept[n].u >= 0 && (chosen < 0 || better(&kept[n], &kept[chosen]))) chosen = n;
        }
        if (chosen < 0) break;
        rc = apply(s, &kept[chosen]);
        if (rc) goto cleanup;
        topomap_eval_metrics(s->e, &cur);
        if (tr) {
            tr->rounds_done = round + 1;
            if (tr->round_mc) tr->round_mc[round + 1] = cur.max_congestion;
        }
    }
cleanup:
    free(knn);
    free(have);
    free(buf);
    free(start);
    free(members);
    free(kept);
    return rc;
}

void topomap_ptram_options_init(topomap_ptram_options *opt)
{
    *opt = (topomap_ptram_options){0};
    for (int i = 0; i < 4; i++) opt->weights[i] = 1.0;
    opt->k = TOPOMAP_PTRAM_DEFAULT_K;
    opt->rounds = 10;
    opt->partition = 1;
}

static int check_options(const topomap_ptram_options *o)
{
    for (int i = 0; i < 4; i++)
        if (!(o->weights[i] >= 0) || !isfinite(o->weights[i]))
            return topomap_i_fail(TOPOMAP_EINVAL, "ptram option weights[%d] = %g must be finite and >= 0", i,
                                  o->weights[i]);
    if (o->k < 1) return topomap_i_fail(TOPOMAP_EINVAL, "ptram option k = %d must be >= 1", (int)o->k);
    if (o->rounds < 0) return topomap_i_fail(TOPOMAP_EINVAL, "ptram option rounds = %d must be >= 0", (int)o->rounds);
    if (o->partition != 0 && o->partition != 1)
        return topomap_i_fail(TOPOMAP_EINVAL, "ptram option partition = %d must be 0 or 1", (int)o->partition);
    if (o->plateau != 0 && o->plateau != 1)
        return topomap_i_fail(TOPOMAP_EINVAL, "ptram option plateau = %d must be 0 or 1", (int)o->plateau);
    return TOPOMAP_OK;
}

int topomap_map_ptram(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                      int32_t capacity, const topomap_ptram_options *opt, int32_t *pe_of)
{
    topomap_ptram_options defaults;
    topomap_ptram_options_init(&defaults);
    if (!opt) opt = &defaults;
    topomap_ptram_trace *tr = opt->trace;
    int32_t n = p->n;
    ptram s = {0};
    topomap_alloc_nodes *an = NULL;
    int32_t *group = NULL, *unit_pe = NULL;
    int64_t *qindptr = NULL, *gslots = NULL;
    int32_t *qindices = NULL;
    double *qbytes = NULL;
    int rc = check_options(opt);
    if (!rc) rc = topomap_pattern_validate(p);
    if (!rc) rc = topomap_alloc_nodes_create(m, alloc, nalloc, capacity, &an);
    if (rc) goto cleanup;
    double t0 = now();
    s.m = m;
    s.an = an;
    s.N = an->nnodes;
    s.partition = opt->partition;
    s.pg = (progress){opt->run.progress, opt->run.progress_ctx, 0, opt->partition ? 0.1 : 0, 0, 0, CHECK_EVERY};
    int64_t nnz = p->indptr[n], total = 0;
    for (int32_t j = 0; j < s.N; j++) total += an->slots[j];
    group = malloc((size_t)n * sizeof *group);
    if (!group) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (n > total) {
        rc = topomap_i_fail(TOPOMAP_EINVAL, "%d processes do not fit in the allocation's %lld slots", (int)n,
                            (long long)total);
        goto cleanup;
    }
    if (opt->partition) {
        topomap_run_options run = {opt->run.seed, opt->run.progress ? scaled_progress : NULL, &s.pg};
        gslots = malloc((size_t)s.N * sizeof *gslots);
        qindptr = malloc(((size_t)n + 1) * sizeof *qindptr);
        qindices = malloc((size_t)nnz * sizeof *qindices + 1);
        qbytes = malloc((size_t)nnz * sizeof *qbytes + 1);
        if (!gslots || !qindptr || !qindices || !qbytes) {
            rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
            goto cleanup;
        }
        rc = topomap_group_by_node(p, an, &run, group, gslots, &s.nu);
        if (!rc) rc = topomap_pattern_quotient(p, group, s.nu, qindptr, qindices, qbytes);
        if (rc) goto cleanup;
        s.q = (topomap_pattern){s.nu, qindptr, qindices, qbytes};
    } else {
        for (int32_t i = 0; i < n; i++) group[i] = i;
        s.nu = n;
        s.q = *p;
    }
    double t1 = now();
    int64_t qnnz = s.q.indptr[s.nu];
    s.t_indptr = malloc(((size_t)s.nu + 1) * sizeof *s.t_indptr);
    s.t_indices = malloc((size_t)qnnz * sizeof *s.t_indices + 1);
    s.t_bytes = malloc((size_t)qnnz * sizeof *s.t_bytes + 1);
    s.xadj = malloc(((size_t)s.nu + 1) * sizeof *s.xadj);
    s.adj = malloc(2 * (size_t)qnnz * sizeof *s.adj + 1);
    s.wgt = malloc(2 * (size_t)qnnz * sizeof *s.wgt + 1);
    s.size = calloc((size_t)s.nu, sizeof *s.size);
    s.unit_node = malloc((size_t)s.nu * sizeof *s.unit_node);
    s.used = calloc((size_t)s.N, sizeof *s.used);
    s.route = malloc(((size_t)topomap_machine_max_route(m) + 1) * sizeof *s.route);
    unit_pe = malloc((size_t)s.nu * sizeof *unit_pe);
    if (!s.t_indptr || !s.t_indices || !s.t_bytes || !s.xadj || !s.adj || !s.wgt || !s.size || !s.unit_node ||
        !s.used || !s.route || !unit_pe) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (int32_t i = 0; i < n; i++) s.size[group[i]]++;
    for (int32_t u = 0; u < s.nu; u++) s.unit_node[u] = unit_pe[u] = TOPOMAP_UNPLACED;
    rc = topomap_pattern_transpose(&s.q, s.t_indptr, s.t_indices, s.t_bytes);
    if (!rc) rc = topomap_ugraph_from_pattern(&s.q, s.xadj, s.adj, s.wgt);
    if (!rc && s.partition) rc = build_classes(&s);
    if (!rc) rc = topomap_eval_create(m, &s.q, unit_pe, opt->weights, &s.e);
    if (rc) goto cleanup;
    s.pg.lo = s.pg.fraction = opt->partition ? 0.1 : 0;
    s.pg.hi = 0.9;
    rc = greedy(&s, tr ? tr->order : NULL);
    if (rc) goto cleanup;
    double t2 = now();
    if (tr) {
        topomap_metrics mt;
        topomap_eval_metrics(s.e, &mt);
        tr->greedy_hybrid = mt.hybrid;
        tr->rounds_done = 0;
    }
    s.pg.lo = 0.9;
    s.pg.hi = 1;
    rc = refine(&s, opt->rounds, opt->k, opt->plateau, tr);
    if (!rc) rc = report(&s.pg, 1);
    if (!rc) rc = topomap_place_groups(an, n, group, s.unit_node, pe_of);
    if (rc) goto cleanup;
    if (tr) {
        tr->nunits = s.nu;
        if (tr->group) memcpy(tr->group, group, (size_t)n * sizeof *group);
        if (tr->unit_node) memcpy(tr->unit_node, s.unit_node, (size_t)s.nu * sizeof *s.unit_node);
        tr->seconds[0] = t1 - t0;
        tr->seconds[1] = t2 - t1;
        tr->seconds[2] = now() - t2;
    }
cleanup:
    topomap_eval_destroy(s.e);
    free(s.t_indptr);
    free(s.t_indices);
    free(s.t_bytes);
    free(s.xadj);
    free(s.adj);
    free(s.wgt);
    free(s.size);
    free(s.unit_node);
    free(s.used);
    free(s.route);
    free(s.cls_val);
    free(s.node_cls);
    free(s.unit_cls);
    free(s.free_cnt);
    free(s.left_cnt);
    free(s.suffix_n);
    free(s.suffix_u);
    free(unit_pe);
    free(group);
    free(gslots);
    free(qindptr);
    free(qindices);
    free(qbytes);
    topomap_alloc_nodes_destroy(an);
    return rc;
}

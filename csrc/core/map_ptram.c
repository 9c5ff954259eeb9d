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
   - Candidates (not in the thesis): scoring every free node is U x N
     tries, over 9 minutes at 10^6 processes (62,500 nodes).  Above
     TOPOMAP_PTRAM_EXHAUSTIVE_NODES allocation nodes the greedy scores only
     the TOPOMAP_PTRAM_DEFAULT_CANDIDATES free nodes a breadth-first search
     of the network reaches first from the unit's placed neighbours' nodes:
     where the thesis's choice lands in practice, since the hop-bytes term
     grows with the distance to them.  On the 72x36x36 stencil onto
     torus:18x18x18/16 (6,250 nodes), 24 candidates gave hop-bytes 0.285 and
     max congestion 0.322 x block in 1.9 s of CPU, every node 0.281 and
     0.319 in 106 s (8 / 16 / 32 / 64 candidates: hop-bytes 0.296 / 0.291 /
     0.275 / 0.268).  On the 160x80x80 stencil (10^6 processes, 62,500
     nodes) 24 / 32 / 64 took 28 / 31 / 37 s, hence 24
     (benchmarks/bench_mappers_scaling.py).
*/
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "topomap/error.h"
#include "topomap/eval.h"
#include "topomap/map_ptram.h"
#include "topomap/partition.h"
#include "map_physgraph.h"
#include "sorted.h"

#define TIE_REL 1e-10

/* fmax for the finite values here, inlined (fmax is a libm call: 3 % of
   PTRAM's greedy step at 10^6 processes) */
static inline double larger(double a, double b) { return a > b ? a : b; }

/* Work units (messages re-routed by a try) between two progress checks:
   about 5-10 ms. */
#define CHECK_EVERY (1 << 15)
/* Units per block of the greedy's scan for the next unit: a step rescans
   the blocks whose bounds are stale (the placed unit's, its neighbours'),
   so smaller blocks scan less.  The scan's choice does not depend on the
   size.  At 10^6 processes (62,500 units) 256 -> 64 took the scan from
   1.7 to 1.0 s of CPU; 32 gained nothing more. */
#define SCAN_BLOCK 64

/* a is lower than b beyond round-off */
static int below(double a, double b) { return a < b - TIE_REL * larger(fabs(a), fabs(b)); }

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
    double d;
    int32_t j;
} near_node;

struct topomap_ptram_state {
    const topomap_machine *m;
    topomap_alloc_nodes *an;
    int32_t n, nu, N, partition, plateau, kk, rounds;
    int32_t *group;                                   /* unit of each process */
    int64_t *qindptr; int32_t *qindices; double *qbytes; /* the quotient's storage (partition = 1) */
    topomap_pattern q;                                /* between units */
    int64_t *t_indptr; int32_t *t_indices; double *t_bytes; /* its transpose */
    int64_t *xadj; int32_t *adj; double *wgt;         /* q + q^T: the traffic delta counts */
    int64_t *size;      /* processes of each unit */
    int32_t *unit_node; /* allocation node of each unit, -1 while unplaced */
    int32_t *unit_pe;   /* the evaluator's initial (empty) mapping */
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
    /* greedy: A (B) = traffic with placed (unplaced) units, placed neighbours */
    double *A, *B;
    int32_t *nplaced, *order, step, pending;
    /* per block of SCAN_BLOCK units: upper bounds of A and B over its
       unplaced units, and how many are unplaced */
    double *bmaxA, *bmaxB;
    int32_t *bleft, nblocks;
    unsigned char *admit;
    /* greedy candidates (cand_limit > 0): the network as an undirected
       graph, the BFS's stamps and queue, each vertex's allocation node */
    int32_t cand_limit, ncand, bfs_stamp;
    topomap_i_physgraph net;
    int32_t *vstamp, *vqueue, *vnode, *cand, *cmark;
    /* refinement */
    int32_t *knn, *start, *members;
    unsigned char *have;
    near_node *buf;
    int32_t round, lstar, round_open, stopped, rounds_done, mc_cap;
    double hot, cap, greedy_hybrid, *round_mc;
    topomap_metrics cur;
    double t0, t1, t2;
};
typedef struct topomap_ptram_state ptram;

static int32_t class_of(const ptram *s, int64_t v) { return topomap_i_lower_bound_i64(s->cls_val, s->nclass, v); }

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
    s->nclass = topomap_i_distinct_i64(s->cls_val, s->N);
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

static int nearer(near_node x, near_node y) { return x.d != y.d ? x.d < y.d : x.j < y.j; }

static int cmp_near(const void *a, const void *b)
{
    const near_node *x = a, *y = b;
    return nearer(*x, *y) ? -1 : nearer(*y, *x);
}

/* The kk allocation nodes nearest to n, ties to the lower index: the kk
   best kept in a heap whose root is the farthest of them, O(N log kk)
   instead of sorting all N (at 62,500 nodes that sort was 4 % of PTRAM). */
static void nearest(const ptram *s, int32_t n, int32_t kk, near_node *buf, int32_t *out)
{
    const topomap_alloc_nodes *an = s->an;
    int32_t c = 0;
    for (int32_t j = 0; j < s->N; j++) {
        if (j == n) continue;
        near_node x = {topomap_machine_distance(s->m, an->first_pe[n], an->first_pe[j]), j};
        int32_t i;
        if (c < kk) {
            for (i = c++; i > 0 && nearer(buf[(i - 1) / 2], x); i = (i - 1) / 2) buf[i] = buf[(i - 1) / 2];
        } else if (nearer(x, buf[0])) {
            for (i = 0;;) {
                int32_t ch = 2 * i + 1;
                if (ch >= c) break;
                if (ch + 1 < c && nearer(buf[ch], buf[ch + 1])) ch++;
                if (!nearer(x, buf[ch])) break;
                buf[i] = buf[ch];
                i = ch;
            }
        } else {
            continue;
        }
        buf[i] = x;
    }
    qsort(buf, (size_t)c, sizeof *buf, cmp_near);
    for (int32_t i = 0; i < kk; i++) out[i] = buf[i].j;
}

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

static int try_it(ptram *s, const topomap_ptram_try *t, topomap_metrics *mt)
{
    return t->r >= 0 ? topomap_eval_try_swap(s->e, t->u, t->r, mt)
                     : topomap_eval_try_move(s->e, t->u, s->an->first_pe[t->m], mt);
}

static int apply(ptram *s, const topomap_ptram_try *t)
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
static int better(const topomap_ptram_try *t, const topomap_ptram_try *kept)
{
    return below(t->mc, kept->mc) || (!below(kept->mc, t->mc) && below(t->hot, kept->hot));
}

/* The network as an undirected graph of vertices (map_physgraph.c: rows
   sorted, so the BFS meets tied vertices lowest first) and each vertex's
   allocation node, for the candidate search. */
static int build_network(ptram *s)
{
    int32_t V = topomap_machine_nvertices(s->m);
    int rc = topomap_i_physgraph_build(s->m, &s->net);
    if (rc) return rc;
    s->vstamp = calloc((size_t)V, sizeof *s->vstamp);
    s->vqueue = malloc((size_t)V * sizeof *s->vqueue);
    s->vnode = malloc((size_t)V * sizeof *s->vnode);
    s->cand = malloc((size_t)s->N * sizeof *s->cand);
    s->cmark = calloc((size_t)s->N, sizeof *s->cmark);
    if (!s->vstamp || !s->vqueue || !s->vnode || !s->cand || !s->cmark)
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    for (int32_t v = 0; v < V; v++) s->vnode[v] = -1;
    for (int32_t j = 0; j < s->N; j++) s->vnode[s->an->node[j]] = j;
    return TOPOMAP_OK;
}

void topomap_ptram_options_init(topomap_ptram_options *opt)
{
    *opt = (topomap_ptram_options){0};
    for (int i = 0; i < 4; i++) opt->weights[i] = 1.0;
    opt->k = TOPOMAP_PTRAM_DEFAULT_K;
    opt->rounds = 10;
    opt->partition = 1;
    opt->candidates = -1;
}

static int check_options(const topomap_ptram_options *o)
{
    for (int i = 0; i < 4; i++)
        if (!(o->weights[i] >= 0) || !isfinite(o->weights[i]))
            return topomap_i_fail(TOPOMAP_EINVAL, "ptram option weights[%d] = %g must be finite and >= 0", i,
                                  o->weights[i]);
    if (o->k < 1) return topomap_i_fail(TOPOMAP_EINVAL, "ptram option k = %d must be >= 1", (int)o->k);
    if (o->rounds < 0) return topomap_i_fail(TOPOMAP_EINVAL, "ptram option rounds = %d must be >= 0", (int)o->rounds);
    if (o->candidates < -1)
        return topomap_i_fail(TOPOMAP_EINVAL, "ptram option candidates = %d must be -1 (auto), 0 (every free node) "
                              "or a count >= 1", (int)o->candidates);
    if (o->partition != 0 && o->partition != 1)
        return topomap_i_fail(TOPOMAP_EINVAL, "ptram option partition = %d must be 0 or 1", (int)o->partition);
    if (o->plateau != 0 && o->plateau != 1)
        return topomap_i_fail(TOPOMAP_EINVAL, "ptram option plateau = %d must be 0 or 1", (int)o->plateau);
    return TOPOMAP_OK;
}

/* Units fit nodes by size only, so the units can all be placed iff, for
   every class c, the units of class >= c are no more than the nodes of
   class >= c (Hall's theorem; see admissible). */
static int check_placeable(ptram *s)
{
    int64_t nodes = 0, units = 0;
    for (int32_t c = s->nclass - 1; c >= 0; c--) {
        nodes += s->free_cnt[c];
        units += s->left_cnt[c];
        if (units > nodes)
            return topomap_i_fail(TOPOMAP_EINVAL, "ptram: the %lld units of %lld or more processes do not fit the %lld "
                                  "nodes with that many slots", (long long)units, (long long)s->cls_val[c],
                                  (long long)nodes);
    }
    return TOPOMAP_OK;
}

/* A group vector given by the caller (the distributed version adopts the
   root's step 1): units numbered 0..nu-1, none empty. */
static int adopt_group(ptram *s, const int32_t *group)
{
    int32_t n = s->n, nu = 0;
    for (int32_t i = 0; i < n; i++) {
        if (group[i] < 0 || group[i] >= n)
            return topomap_i_fail(TOPOMAP_EINVAL, "ptram: group[%d] = %d is not a unit id in [0, %d)", (int)i,
                                  (int)group[i], (int)n);
        if (group[i] >= nu) nu = group[i] + 1;
    }
    int64_t *count = calloc((size_t)nu + 1, sizeof *count);
    if (!count) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    for (int32_t i = 0; i < n; i++) count[group[i]]++;
    int rc = TOPOMAP_OK;
    for (int32_t u = 0; u < nu && !rc; u++)
        if (!count[u])
            rc = topomap_i_fail(TOPOMAP_EINVAL, "ptram: unit %d of the group vector has no process (units must be "
                                "numbered 0..%d without gaps)", (int)u, (int)nu - 1);
    free(count);
    if (rc) return rc;
    memcpy(s->group, group, (size_t)n * sizeof *group);
    s->nu = nu;
    return TOPOMAP_OK;
}

static void *alloc_n(size_t count, size_t item, int *failed)
{
    void *x = calloc(count ? count : 1, item);
    if (!x) *failed = 1;
    return x;
}

/* The greedy step is over: record what the trace reports and start the
   refinement's progress range. */
static void greedy_done(ptram *s)
{
    s->t2 = now();
    topomap_eval_metrics(s->e, &s->cur);
    s->greedy_hybrid = s->cur.hybrid;
    s->round_mc[0] = s->cur.max_congestion;
    s->pg.lo = 0.9;
    s->pg.hi = 1;
}

int topomap_ptram_begin(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                        int32_t capacity, const topomap_ptram_options *opt, const int32_t *group,
                        topomap_ptram_state **out)
{
    topomap_ptram_options defaults;
    topomap_ptram_options_init(&defaults);
    if (!opt) opt = &defaults;
    ptram *s = calloc(1, sizeof *s);
    int64_t *gslots = NULL;
    int rc = TOPOMAP_OK, failed = 0;
    *out = NULL;
    if (!s) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    rc = check_options(opt);
    if (!rc) rc = topomap_pattern_validate(p);
    if (!rc) rc = topomap_alloc_nodes_create(m, alloc, nalloc, capacity, &s->an);
    if (!rc && group && !opt->partition)
        rc = topomap_i_fail(TOPOMAP_EINVAL, "ptram: a group vector is only adopted with partition = 1");
    if (rc) goto cleanup;
    s->t0 = now();
    int32_t n = p->n;
    s->m = m;
    s->n = n;
    s->N = s->an->nnodes;
    s->partition = opt->partition;
    s->plateau = opt->plateau;
    s->rounds = opt->rounds;
    s->kk = opt->k < s->N - 1 ? opt->k : s->N - 1;
    s->cand_limit = opt->candidates < 0 ? (s->N <= TOPOMAP_PTRAM_EXHAUSTIVE_NODES ? 0 : TOPOMAP_PTRAM_DEFAULT_CANDIDATES)
                                        : opt->candidates;
    if (s->cand_limit >= s->N) s->cand_limit = 0;
    s->pending = -1;
    s->pg = (progress){opt->run.progress, opt->run.progress_ctx, 0, opt->partition ? 0.1 : 0, 0, 0, CHECK_EVERY};
    int64_t nnz = p->indptr[n], total = 0;
    for (int32_t j = 0; j < s->N; j++) total += s->an->slots[j];
    if (n > total) {
        rc = topomap_i_fail(TOPOMAP_EINVAL, "%d processes do not fit in the allocation's %lld slots", (int)n,
                            (long long)total);
        goto cleanup;
    }
    s->group = alloc_n((size_t)n, sizeof *s->group, &failed);
    if (failed) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (opt->partition) {
        gslots = alloc_n((size_t)s->N, sizeof *gslots, &failed);
        s->qindptr = alloc_n((size_t)n + 1, sizeof *s->qindptr, &failed);
        s->qindices = alloc_n((size_t)nnz, sizeof *s->qindices, &failed);
        s->qbytes = alloc_n((size_t)nnz, sizeof *s->qbytes, &failed);
        if (failed) {
            rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
            goto cleanup;
        }
        if (group) {
            rc = adopt_group(s, group);
        } else {
            topomap_run_options run = {opt->run.seed, opt->run.progress ? scaled_progress : NULL, &s->pg};
            rc = topomap_group_by_node(p, s->an, &run, s->group, gslots, &s->nu);
        }
        if (!rc) rc = topomap_pattern_quotient(p, s->group, s->nu, s->qindptr, s->qindices, s->qbytes);
        if (rc) goto cleanup;
        s->q = (topomap_pattern){s->nu, s->qindptr, s->qindices, s->qbytes};
    } else {
        for (int32_t i = 0; i < n; i++) s->group[i] = i;
        s->nu = n;
        s->q = *p;
    }
    s->t1 = now();
    int32_t nu = s->nu, N = s->N;
    int64_t qnnz = s->q.indptr[nu];
    s->t_indptr = alloc_n((size_t)nu + 1, sizeof *s->t_indptr, &failed);
    s->t_indices = alloc_n((size_t)qnnz, sizeof *s->t_indices, &failed);
    s->t_bytes = alloc_n((size_t)qnnz, sizeof *s->t_bytes, &failed);
    s->xadj = alloc_n((size_t)nu + 1, sizeof *s->xadj, &failed);
    s->adj = alloc_n(2 * (size_t)qnnz, sizeof *s->adj, &failed);
    s->wgt = alloc_n(2 * (size_t)qnnz, sizeof *s->wgt, &failed);
    s->size = alloc_n((size_t)nu, sizeof *s->size, &failed);
    s->unit_node = alloc_n((size_t)nu, sizeof *s->unit_node, &failed);
    s->unit_pe = alloc_n((size_t)nu, sizeof *s->unit_pe, &failed);
    s->used = alloc_n((size_t)N, sizeof *s->used, &failed);
    s->route = alloc_n((size_t)topomap_machine_max_route(m) + 1, sizeof *s->route, &failed);
    s->A = alloc_n((size_t)nu, sizeof *s->A, &failed);
    s->B = alloc_n((size_t)nu, sizeof *s->B, &failed);
    s->nplaced = alloc_n((size_t)nu, sizeof *s->nplaced, &failed);
    s->order = alloc_n((size_t)nu, sizeof *s->order, &failed);
    s->admit = alloc_n((size_t)N + 1, 1, &failed);
    s->nblocks = (nu + SCAN_BLOCK - 1) / SCAN_BLOCK;
    s->bmaxA = alloc_n((size_t)s->nblocks, sizeof *s->bmaxA, &failed);
    s->bmaxB = alloc_n((size_t)s->nblocks, sizeof *s->bmaxB, &failed);
    s->bleft = alloc_n((size_t)s->nblocks, sizeof *s->bleft, &failed);
    s->knn = alloc_n((size_t)N * s->kk, sizeof *s->knn, &failed);
    s->have = alloc_n((size_t)N, 1, &failed);
    s->buf = alloc_n((size_t)N, sizeof *s->buf, &failed);
    s->start = alloc_n((size_t)N + 1, sizeof *s->start, &failed);
    s->members = alloc_n((size_t)nu, sizeof *s->members, &failed);
    /* rounds can be huge and most runs stop early: round_mc grows as needed */
    s->mc_cap = s->rounds < 64 ? s->rounds + 1 : 65;
    s->round_mc = alloc_n((size_t)s->mc_cap, sizeof *s->round_mc, &failed);
    if (failed) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (int32_t i = 0; i < n; i++) s->size[s->group[i]]++;
    for (int32_t u = 0; u < nu; u++) s->unit_node[u] = s->unit_pe[u] = TOPOMAP_UNPLACED;
    rc = topomap_pattern_transpose(&s->q, s->t_indptr, s->t_indices, s->t_bytes);
    if (!rc) rc = topomap_ugraph_from_pattern(&s->q, s->xadj, s->adj, s->wgt);
    if (!rc && s->partition) rc = build_classes(s);
    if (!rc && s->partition) rc = check_placeable(s);
    if (!rc && s->cand_limit) rc = build_network(s);
    if (!rc) rc = topomap_eval_create(m, &s->q, s->unit_pe, opt->weights, &s->e);
    if (rc) goto cleanup;
    for (int32_t u = 0; u < nu; u++) {
        for (int64_t t = s->xadj[u]; t < s->xadj[u + 1]; t++) s->B[u] += s->wgt[t];
        s->bleft[u / SCAN_BLOCK]++;
        s->bmaxB[u / SCAN_BLOCK] = larger(s->bmaxB[u / SCAN_BLOCK], s->B[u]);
    }
    s->pg.lo = s->pg.fraction = opt->partition ? 0.1 : 0;
    s->pg.hi = 0.9;
    if (!nu) greedy_done(s);
cleanup:
    free(gslots);
    if (rc) {
        topomap_ptram_end(s);
        s = NULL;
    }
    *out = s;
    return rc;
}

int32_t topomap_ptram_nunits(const topomap_ptram_state *s) { return s->nu; }
int32_t topomap_ptram_nnodes(const topomap_ptram_state *s) { return s->N; }
const int32_t *topomap_ptram_group(const topomap_ptram_state *s) { return s->group; }

/* May unit p (the pending one) take node j now? */
static int is_free(const ptram *s, int32_t p, int32_t j)
{
    return s->partition ? !s->used[j] && s->node_cls[j] >= s->unit_cls[p] && s->admit[s->node_cls[j]]
                        : s->used[j] + s->size[p] <= s->an->slots[j];
}

/* Queue network vertex v in the search for p's candidates (once), and take
   it if it is a free node: the queue's order is the order of visits, so
   taking them as they are queued gives the first ones visited without
   expanding the vertices queued before them. */
static void reach(ptram *s, int32_t p, int32_t v, int32_t stamp, int32_t *tail, int32_t *c)
{
    if (s->vstamp[v] == stamp) return;
    s->vstamp[v] = stamp;
    s->vqueue[(*tail)++] = v;
    int32_t j = s->vnode[v];
    if (j >= 0 && is_free(s, p, j)) s->cand[(*c)++] = j;
}

/* cand[0..ncand) = the first cand_limit free nodes for the pending unit p
   that a breadth-first search of the network from all its placed
   neighbours' nodes at once reaches (the nodes fewest hops from one of
   them), in node order; marked in cmark with the step. */
static void find_candidates(ptram *s, int32_t p)
{
    int32_t stamp = ++s->bfs_stamp, head = 0, tail = 0, c = 0, limit = s->cand_limit;
    for (int64_t t = s->xadj[p]; t < s->xadj[p + 1] && c < limit; t++) {
        int32_t j = s->unit_node[s->adj[t]];
        if (j >= 0) reach(s, p, s->an->node[j], stamp, &tail, &c);
    }
    while (head < tail && c < limit) {
        int32_t v = s->vqueue[head++];
        for (int64_t e = s->net.xadj[v]; e < s->net.xadj[v + 1] && c < limit; e++)
            reach(s, p, s->net.adj[e], stamp, &tail, &c);
    }
    for (int32_t j = 0; j < s->N && !c; j++) /* none reachable: the network is cut; the first free node */
        if (is_free(s, p, j)) s->cand[c++] = j;
    qsort(s->cand, (size_t)c, sizeof *s->cand, topomap_i_cmp_i32);
    for (int32_t i = 0; i < c; i++) s->cmark[s->cand[i]] = s->step + 1;
    s->ncand = c;
}

/* Is node j scored for the pending unit? */
static int scored(const ptram *s, int32_t j) { return !s->cand_limit || s->cmark[j] == s->step + 1; }

static int check_pending(const ptram *s, int32_t unit, const char *step)
{
    if (s->pending < 0 || unit != s->pending)
        return topomap_i_fail(TOPOMAP_EINVAL, "ptram %s: unit %d is not the unit greedy_next chose (%d)", step,
                              (int)unit, (int)s->pending);
    return TOPOMAP_OK;
}

static double greedy_done_fraction(const ptram *s)
{
    return 1 - (double)(s->nu - s->step) * (s->nu - s->step) / ((double)s->nu * s->nu);
}

/* Alg. 3.1, the choice of the next unit. */
int topomap_ptram_greedy_next(topomap_ptram_state *s, int32_t *unit, int *needs_scores)
{
    *unit = -1;
    *needs_scores = 0;
    if (s->step == s->nu) return TOPOMAP_OK;
    double alpha = 1.0 / (double)(s->step + 1), best = 0;
    int32_t p = -1;
    /* The scan in unit order, skipping a block none of whose deltas can
       pass `best`: below() grows with its second argument and rounding is
       monotonic, so maxA + alpha maxB bounds them; the scanned blocks'
       bounds are tightened on the way. */
    for (int32_t b = 0; b < s->nblocks; b++) {
        if (!s->bleft[b] || (p >= 0 && !below(best, s->bmaxA[b] + alpha * s->bmaxB[b]))) continue;
        int32_t end = (b + 1) * SCAN_BLOCK < s->nu ? (b + 1) * SCAN_BLOCK : s->nu;
        double ma = 0, mb = 0;
        for (int32_t u = b * SCAN_BLOCK; u < end; u++) {
            if (s->unit_node[u] >= 0) continue;
            double d = s->A[u] + alpha * s->B[u];
            ma = larger(ma, s->A[u]);
            mb = larger(mb, s->B[u]);
            if (p < 0 || below(best, d)) {
                p = u;
                best = d;
            }
        }
        s->bmaxA[b] = ma;
        s->bmaxB[b] = mb;
    }
    if (s->partition) admissible(s, s->unit_cls[p], s->admit);
    s->pending = p;
    *unit = p;
    *needs_scores = s->nplaced[p] > 0;
    if (*needs_scores && s->cand_limit) find_candidates(s, p);
    return TOPOMAP_OK;
}

/* Alg. 3.1, a leader's part: the hybrid metric of p on each of its nodes. */
int topomap_ptram_greedy_score(topomap_ptram_state *s, int32_t unit, const int32_t *nodes, int32_t count,
                               double *score)
{
    int rc = check_pending(s, unit, "greedy_score");
    if (rc) return rc;
    for (int32_t i = 0; i < count; i++)
        if (nodes[i] < 0 || nodes[i] >= s->N)
            return topomap_i_fail(TOPOMAP_EINVAL, "ptram greedy_score: nodes[%d] = %d is not an allocation node in "
                                  "[0, %d)", (int)i, (int)nodes[i], (int)s->N);
    double done = greedy_done_fraction(s);
    for (int32_t i = 0; i < count; i++) {
        int32_t j = nodes[i];
        score[i] = NAN;
        if (!is_free(s, unit, j) || !scored(s, j)) continue;
        topomap_metrics mt;
        rc = topomap_eval_try_move(s->e, unit, s->an->first_pe[j], &mt);
        if (!rc) rc = tick(&s->pg, 1 + degree(s, unit), done);
        if (rc) return rc;
        score[i] = mt.hybrid;
    }
    return TOPOMAP_OK;
}

/* Alg. 3.1, the decision every leader takes from the gathered scores: the
   lowest score, a tie to the lowest node index. */
int topomap_ptram_greedy_place(topomap_ptram_state *s, int32_t p, const double *score)
{
    int rc = check_pending(s, p, "greedy_place");
    if (rc) return rc;
    if (s->nplaced[p] && !score)
        return topomap_i_fail(TOPOMAP_EINVAL, "ptram greedy_place: unit %d has placed neighbours and needs scores",
                              (int)p);
    int32_t target = -1, bounded = s->nplaced[p] && s->cand_limit, count = bounded ? s->ncand : s->N;
    double best = 0;
    for (int32_t i = 0; i < count; i++) {
        int32_t j = bounded ? s->cand[i] : i;
        if (!is_free(s, p, j)) continue;
        if (!s->nplaced[p]) {
            target = j;
            break;
        }
        if (isnan(score[j]))
            return topomap_i_fail(TOPOMAP_EINVAL, "ptram greedy_place: the score of node %d, free for unit %d, is "
                                  "missing (NaN)", (int)j, (int)p);
        if (target < 0 || below(score[j], best)) {
            target = j;
            best = score[j];
        }
    }
    if (target < 0) /* the admissibility rule keeps a node for every unit */
        return topomap_i_fail(TOPOMAP_EINVAL, "ptram: no free node holds unit %d (%lld processes)", (int)p,
                              (long long)s->size[p]);
    rc = place(s, p, target);
    if (rc) return rc;
    s->order[s->step++] = p;
    s->pending = -1;
    s->bleft[p / SCAN_BLOCK]--;
    for (int64_t t = s->xadj[p]; t < s->xadj[p + 1]; t++) {
        int32_t r = s->adj[t];
        s->A[r] += s->wgt[t];
        s->B[r] -= s->wgt[t];
        s->nplaced[r]++;
        s->bmaxA[r / SCAN_BLOCK] = larger(s->bmaxA[r / SCAN_BLOCK], s->A[r]);
    }
    if (s->step == s->nu) greedy_done(s);
    return TOPOMAP_OK;
}

/* Alg. 3.2, the start of a round: the hottest link and each node's units. */
int topomap_ptram_round_begin(topomap_ptram_state *s, int *go_on)
{
    *go_on = 0;
    if (s->step < s->nu)
        return topomap_i_fail(TOPOMAP_EINVAL, "ptram round_begin: the greedy step has placed %d of %d units",
                              (int)s->step, (int)s->nu);
    if (s->round_open) return topomap_i_fail(TOPOMAP_EINVAL, "ptram round_begin: round %d is still open", (int)s->round);
    if (s->stopped || s->round >= s->rounds || !(s->cur.max_congestion > 0)) return TOPOMAP_OK;
    int rc = report(&s->pg, (double)s->round / s->rounds);
    if (rc) return rc;
    int32_t N = s->N, nu = s->nu, *start = s->start;
    s->lstar = hottest(s, s->cur.max_congestion);
    s->cap = topomap_machine_link_capacity(s->m, s->lstar);
    s->hot = topomap_eval_link_loads(s->e)[s->lstar] / s->cap;
    memset(start, 0, ((size_t)N + 1) * sizeof *start);
    for (int32_t u = 0; u < nu; u++) start[s->unit_node[u] + 1]++;
    for (int32_t j = 0; j < N; j++) start[j + 1] += start[j];
    for (int32_t u = 0; u < nu; u++) s->members[start[s->unit_node[u]]++] = u;
    for (int32_t j = N; j > 0; j--) start[j] = start[j - 1];
    start[0] = 0;
    s->round_open = 1;
    *go_on = 1;
    return TOPOMAP_OK;
}

/* Alg. 3.2, a leader's part: node n's kept try on the round's start state. */
int topomap_ptram_leader_search(topomap_ptram_state *s, int32_t n, topomap_ptram_try *kept)
{
    if (!s->round_open) return topomap_i_fail(TOPOMAP_EINVAL, "ptram leader_search: no round is open");
    if (n < 0 || n >= s->N)
        return topomap_i_fail(TOPOMAP_EINVAL, "ptram leader_search: node %d is not an allocation node in [0, %d)",
                              (int)n, (int)s->N);
    const int32_t *start = s->start, *members = s->members, kk = s->kk;
    double mcur = s->cur.max_congestion, progress_at = (double)s->round / s->rounds;
    *kept = (topomap_ptram_try){-1, -1, -1, mcur, s->hot};
    for (int32_t t = start[n]; t < start[n + 1]; t++) {
        int32_t u = members[t];
        double mine = traffic_on(s, u, n, -1, -1, s->lstar);
        if (mine == 0) continue;
        if (!s->have[n]) {
            nearest(s, n, kk, s->buf, s->knn + (size_t)n * kk);
            s->have[n] = 1;
        }
        for (int32_t i = 0; i < kk; i++) {
            int32_t m = s->knn[(size_t)n * kk + i];
            for (int32_t t2 = start[m]; t2 <= start[m + 1]; t2++) {
                topomap_ptram_try cand = {u, t2 < start[m + 1] ? members[t2] : -1, m, 0, s->hot};
                if (cand.r >= 0 ? !can_swap(s, u, cand.r) : !can_move(s, u, m)) continue;
                topomap_metrics mt;
                int rc = try_it(s, &cand, &mt);
                if (!rc) rc = tick(&s->pg, 1 + degree(s, u) + (cand.r >= 0 ? degree(s, cand.r) : 0), progress_at);
                if (rc) return rc;
                cand.mc = mt.max_congestion;
                if (s->plateau && !below(cand.mc, mcur)) {
                    double before = cand.r >= 0 ? traffic_on(s, u, n, cand.r, m, s->lstar) : mine;
                    cand.hot = s->hot + (traffic_on(s, u, m, cand.r, n, s->lstar) - before) / s->cap;
                }
                if (better(&cand, kept)) *kept = cand;
            }
        }
    }
    return TOPOMAP_OK;
}

/* A gathered try must be one the state allows, or applying it would corrupt
   every leader's state alike. */
static int check_try(const ptram *s, int32_t n, const topomap_ptram_try *t)
{
    if (t->u == -1) return TOPOMAP_OK;
    if (t->u < 0 || t->u >= s->nu || s->unit_node[t->u] != n)
        return topomap_i_fail(TOPOMAP_EINVAL, "ptram round_end: kept[%d].u = %d is not a unit on node %d", (int)n,
                              (int)t->u, (int)n);
    if (t->m < 0 || t->m >= s->N || t->m == n)
        return topomap_i_fail(TOPOMAP_EINVAL, "ptram round_end: kept[%d].m = %d is not another allocation node",
                              (int)n, (int)t->m);
    if (t->r == -1 ? !can_move(s, t->u, t->m)
                   : t->r < 0 || t->r >= s->nu || s->unit_node[t->r] != t->m || !can_swap(s, t->u, t->r))
        return topomap_i_fail(TOPOMAP_EINVAL, "ptram round_end: kept[%d] (unit %d to node %d, r = %d) is not a "
                              "possible swap or move", (int)n, (int)t->u, (int)t->m, (int)t->r);
    if (isnan(t->mc) || isnan(t->hot))
        return topomap_i_fail(TOPOMAP_EINVAL, "ptram round_end: kept[%d] has a NaN congestion", (int)n);
    return TOPOMAP_OK;
}

/* Alg. 3.2, the decision every leader takes from the gathered tries. */
int topomap_ptram_round_end(topomap_ptram_state *s, const topomap_ptram_try *kept, int *applied)
{
    *applied = 0;
    if (!s->round_open) return topomap_i_fail(TOPOMAP_EINVAL, "ptram round_end: no round is open");
    int32_t chosen = -1;
    for (int32_t n = 0; n < s->N; n++) {
        int rc = check_try(s, n, &kept[n]);
        if (rc) return rc;
        if (kept[n].u >= 0 && (chosen < 0 || better(&kept[n], &kept[chosen]))) chosen = n;
    }
    s->round_open = 0;
    if (chosen < 0) {
        s->stopped = 1;
        return TOPOMAP_OK;
    }
    if (s->round + 2 > s->mc_cap) {
        int32_t cap = s->mc_cap < s->rounds / 2 ? 2 * s->mc_cap : s->rounds + 1;
        double *grown = realloc(s->round_mc, (size_t)cap * sizeof *grown);
        if (!grown) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        s->round_mc = grown;
        s->mc_cap = cap;
    }
    int rc = apply(s, &kept[chosen]);
    if (rc) return rc;
    topomap_eval_metrics(s->e, &s->cur);
    s->round_mc[++s->round] = s->cur.max_congestion;
    s->rounds_done = s->round;
    *applied = 1;
    return TOPOMAP_OK;
}

int topomap_ptram_finish(topomap_ptram_state *s, int32_t *pe_of, topomap_ptram_trace *tr)
{
    if (s->step < s->nu)
        return topomap_i_fail(TOPOMAP_EINVAL, "ptram finish: the greedy step has placed %d of %d units", (int)s->step,
                              (int)s->nu);
    int rc = report(&s->pg, 1);
    if (!rc) rc = topomap_place_groups(s->an, s->n, s->group, s->unit_node, pe_of);
    if (rc || !tr) return rc;
    tr->nunits = s->nu;
    tr->rounds_done = s->rounds_done;
    tr->greedy_hybrid = s->greedy_hybrid;
    if (tr->group) memcpy(tr->group, s->group, (size_t)s->n * sizeof *s->group);
    if (tr->order) memcpy(tr->order, s->order, (size_t)s->nu * sizeof *s->order);
    if (tr->unit_node) memcpy(tr->unit_node, s->unit_node, (size_t)s->nu * sizeof *s->unit_node);
    if (tr->round_mc) memcpy(tr->round_mc, s->round_mc, ((size_t)s->rounds_done + 1) * sizeof *s->round_mc);
    tr->seconds[0] = s->t1 - s->t0;
    tr->seconds[1] = s->t2 - s->t1;
    tr->seconds[2] = now() - s->t2;
    return TOPOMAP_OK;
}

void topomap_ptram_end(topomap_ptram_state *s)
{
    if (!s) return;
    topomap_eval_destroy(s->e);
    topomap_i_physgraph_free(&s->net);
    void *owned[] = {s->group, s->qindptr, s->qindices, s->qbytes, s->t_indptr, s->t_indices, s->t_bytes,
                     s->xadj, s->adj, s->wgt, s->size, s->unit_node, s->unit_pe, s->used, s->cls_val,
                     s->node_cls, s->unit_cls, s->free_cnt, s->left_cnt, s->suffix_n, s->suffix_u, s->route,
                     s->A, s->B, s->nplaced, s->order, s->admit, s->knn, s->have, s->buf, s->start,
                     s->members, s->round_mc, s->vstamp, s->vqueue, s->vnode, s->cand,
                     s->cmark, s->bmaxA, s->bmaxB, s->bleft};
    for (size_t i = 0; i < sizeof owned / sizeof *owned; i++) free(owned[i]);
    topomap_alloc_nodes_destroy(s->an);
    free(s);
}

/* The serial mapping: the steps above with one leader serving every node. */
int topomap_map_ptram(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                      int32_t capacity, const topomap_ptram_options *opt, int32_t *pe_of)
{
    topomap_ptram_state *s = NULL;
    int32_t *nodes = NULL;
    double *score = NULL, *part = NULL;
    topomap_ptram_try *kept = NULL;
    int rc = topomap_ptram_begin(m, p, alloc, nalloc, capacity, opt, NULL, &s), failed = 0, go_on = 1, needs;
    if (rc) goto cleanup;
    nodes = alloc_n((size_t)s->N, sizeof *nodes, &failed);
    score = alloc_n((size_t)s->N, sizeof *score, &failed);
    part = alloc_n((size_t)s->N, sizeof *part, &failed);
    kept = alloc_n((size_t)s->N, sizeof *kept, &failed);
    if (failed) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (int32_t j = 0; j < s->N; j++) nodes[j] = j;
    for (int32_t u; !(rc = topomap_ptram_greedy_next(s, &u, &needs)) && u >= 0;) {
        if (needs && s->cand_limit) { /* only the candidates are read */
            rc = topomap_ptram_greedy_score(s, u, s->cand, s->ncand, part);
            for (int32_t i = 0; i < s->ncand; i++) score[s->cand[i]] = part[i];
        } else if (needs) {
            rc = topomap_ptram_greedy_score(s, u, nodes, s->N, score);
        }
        if (!rc) rc = topomap_ptram_greedy_place(s, u, needs ? score : NULL);
        if (rc) goto cleanup;
    }
    while (!rc && !(rc = topomap_ptram_round_begin(s, &go_on)) && go_on) {
        for (int32_t n = 0; n < s->N && !rc; n++) rc = topomap_ptram_leader_search(s, n, &kept[n]);
        if (!rc) rc = topomap_ptram_round_end(s, kept, &go_on);
    }
    if (!rc) rc = topomap_ptram_finish(s, pe_of, opt ? opt->trace : NULL);
cleanup:
    topomap_ptram_end(s);
    free(nodes);
    free(score);
    free(part);
    free(kept);
    return rc;
}

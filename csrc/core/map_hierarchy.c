/* The hierarchy mapper: n-to-1 process mapping minimising the QAP objective
   J(C, D, Pi) on hierarchies (KaHIP's global multisection: Schulz & Träff,
   "Better process mapping and sparse quadratic assignment", SEA 2017, and
   KaHIP's `global_multisection`; SharedMap's hierarchical multisection,
   Schulz & Woydt, ACDA 2025; VieM's local search in the communication
   neighbourhood N_C^d, Schulz & Träff 2017; notes/anchors.md §1.1-1.4).

   1. The allocation as a tree (topomap_hierarchy_create): sort the PEs;
      the distance between consecutive PEs splits a group at its largest
      value into children, recursively; checked against the oracle.
   2. Multisection, top-down: the processes of a group are partitioned
      among its children (topomap_partition of the induced subgraph of
      C + C^T), each split improved by V-cycles (map_hierarchy_vcycle.c),
      level by level down to the PEs.
   3. Local search on J, a try judged from per-process shares of J
      (eval_shares.c): every process with a neighbour on another PE tries
      moves into PEs with room and swaps with the processes within `depth`
      hops of it in the communication graph; one that changes PE activates
      its neighbours (label-propagation order, as in KaHIP's and
      SharedMap's refinement; first PE by PE).
   4. `tries` complete runs with derived seeds; the lowest J is kept.

   Choices the sources leave open, as made here:
   - Which machines: any whose PE distance is a function of the lowest
     common group of a tree over the allocated PEs, found from the oracle's
     distances (not from the machine kind), the PEs of a group numbered
     consecutively (true of every topomap kind that is a hierarchy: tleaf
     trees, node trees, fat trees).  Levels of equal distance merge into one
     (a split between them costs nothing), as the Scotch tleaf export does.
   - Balance: every PE holds at most L = min(capacity, ceil((1 + eps) n /
     PEs)) processes: KaHIP's (1 + eps) ceil(n / k) rounded up to a whole
     process, never above tm.map's capacity.  A split gives W processes to
     the fewest children, largest first, whose capacities (PEs x L) hold W
     (processes that do not fill the allocation stay together, as
     map_nodes.c does for nodes), targets proportional to their PEs, and
     lets each child grow to its capacity (the partitioner's soft bound set
     to exactly that), so slack goes where it lowers the cut.  Against
     KaHIP's per-level share (1 + eps)^(1/height) - 1 this lowered J by 2%
     (geometric mean of the six rgg_n_2_15_s0 / delaunay_n15 benchmark
     instances, 6 seeds) and found the optimum on 58 instead of 54 of 60
     random 6-8 process cases.  A part above its capacity (rounding) is made
     exact by topomap_partition_refine.
   - A group whose PEs are all at distance 0 (a node whose cores the
     machine does not tell apart, as on a fat tree) is not
     partitioned: every split of it gives the same J, so its processes fill
     its PEs in order.  On the 100^3 stencil onto fattree:k=40,levels=3/16
     the 62,500 node splits took 6.6 of 38 s of CPU.
   - Effort per split: recursive bisection (eco, strong; 4-18% lower J than
     k-way on the reference graphs) or k-way (fast).  The root split, which
     carries most of J, gets more multilevel tries (ntries_root, up to 4x
     more when the graph is small: 2^17 / n) and `root_attempts` complete
     attempts of which the smallest cut is kept; V-cycles only where the
     split's distance step is at least `vcycle_share` of the root's (on
     1:10:100 the PE level, step 1, gets none under eco).  Zero-slack
     scrambled grids (16 x 16 onto 4:8:4, capacity 2) needed ntries_root 4:
     with 2, 6 of 48 seeded runs had a top cut 10% above the optimum.
   - Local search: a move goes to the PE of a neighbour or, when that PE is
     full, to a PE with room in its lowest group with room that does not
     hold the process's own PE; swap partners are processes within `depth`
     hops whose PE holds a neighbour (a swap that takes u where it has no
     neighbour is found from the other side), at most max_partners of them.
     The best improving change is applied at once; ties keep the first
     candidate; improvements below 1e-12 J count as none.  After the
     multisection and V-cycles it gains 0.1-0.3% on the reference graphs
     and most on small and sparse allocations.
   - Presets (effort_preset): measured against KaHIP eco's J on the six
     instances (6 seeds, medians): fast 1.03, eco 0.95, strong 0.92 of it
     (benchmarks/bench_hierarchy.py prints the run-by-run ratios).  Above
     2^17 processes eco runs less (ECO_LARGE).
   - Strong refines every bisection by max flows (partition_flow.c), as
     KaHIP strong does, and spends the time saved elsewhere on the root:
     16 multilevel runs per root bisection, 2 root attempts, 2 V-cycles
     (before: 8, 4, 4 without flows).  Over the 13 instances of
     benchmarks/bench_mapping_quality.py (medians of seeds 0-2) J went from
     0.967 to 0.951 x the best of KaHIP strong and Scotch (geometric mean),
     at 0.22 x KaHIP strong's CPU (0.13 before); on delaunay_n15 from
     1.017 / 1.021 / 1.009 / 1.025 x KaHIP strong's J to 0.999 / 0.977 /
     0.956 / 0.981 on 4:16:16 / 4:8:8 / 16:4:2 / 8:8:8.  With flows and the
     old runs it was 0.948 at 0.30 x.

   Complexity: the tree O(N log N + N x (sum of arities) + min(N, 256)^2)
   distance lookups for N allocated PEs; each multisection level costs one
   multilevel partitioning of the whole graph, O(m) per bisection level
   times ntries, plus O(m) per V-cycle level; a local-search sweep
   O(sum over active processes of candidates x degree) distance lookups.
   Memory O(n + m + N). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/map_hierarchy.h"
#include "topomap/partition.h"
#include "topomap/rng.h"
#include "map_hierarchy_internal.h"
#include "topomap/eval.h"
#include "eval_deltas.h"
#include "map_topdown.h"
#include "sorted.h"

#define CHECK_EVERY 4096
#define ALL_PAIRS_LIMIT 256
#define SIBLING_LIMIT 64

/* ================================================================== the tree */

void topomap_hierarchy_destroy(topomap_hierarchy *h)
{
    if (!h) return;
    free(h->pes);
    free(h->lo);
    free(h->hi);
    free(h->first_child);
    free(h->nchild);
    free(h->parent);
    free(h->dist);
    free(h->leaf_of);
    free(h);
}

/* Distance in the tree between the leaves of positions i and j. */
static double tree_distance(const topomap_hierarchy *h, int32_t i, int32_t j)
{
    int32_t a = h->leaf_of[i], b = h->leaf_of[j];
    while (a != b) { /* children have larger ids than their parents */
        if (a > b) a = h->parent[a];
        else b = h->parent[b];
    }
    return i == j ? 0.0 : h->dist[a];
}

static int not_a_hierarchy(const topomap_hierarchy *h, int32_t i, int32_t j, double d)
{
    return topomap_i_fail(TOPOMAP_ENOTSUP,
                          "the machine is not a hierarchy over the allocation: PEs %d and %d are at distance %g, but "
                          "the groups found from the distances between consecutive PEs put them at %g",
                          (int)h->pes[i], (int)h->pes[j], d, tree_distance(h, i, j));
}

static int check_hierarchy(const topomap_machine *m, const topomap_hierarchy *h)
{
    for (int32_t i = 0; i < h->npes; i++) {
        int32_t child = h->leaf_of[i];
        for (int32_t g = h->parent[child]; g >= 0; child = g, g = h->parent[g]) {
            int32_t k = h->nchild[g], own = child - h->first_child[g];
            int32_t count = k - 1 > SIBLING_LIMIT ? SIBLING_LIMIT : k - 1;
            for (int32_t t = 1; t <= count; t++) {
                int32_t sib = h->first_child[g] + (own + t) % k, j = h->lo[sib];
                double d = topomap_machine_distance(m, h->pes[i], h->pes[j]);
                if (d != h->dist[g]) return not_a_hierarchy(h, i, j, d);
            }
        }
    }
    if (h->npes <= ALL_PAIRS_LIMIT)
        for (int32_t i = 0; i < h->npes; i++)
            for (int32_t j = i + 1; j < h->npes; j++) {
                double d = topomap_machine_distance(m, h->pes[i], h->pes[j]);
                if (d != tree_distance(h, i, j) || d != topomap_machine_distance(m, h->pes[j], h->pes[i]))
                    return not_a_hierarchy(h, i, j, d);
            }
    return TOPOMAP_OK;
}

int topomap_hierarchy_create(const topomap_machine *m, const int32_t *alloc, int32_t nalloc,
                             topomap_hierarchy **out)
{
    if (nalloc < 1) return topomap_i_fail(TOPOMAP_EINVAL, "an allocation needs at least one PE, got %d", (int)nalloc);
    int rc = TOPOMAP_OK;
    size_t N = (size_t)nalloc, G = 2 * N;
    double *key = NULL;
    int32_t *depth = NULL;
    topomap_hierarchy *h = calloc(1, sizeof *h);
    if (!h) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    h->npes = nalloc;
    h->pes = malloc(N * sizeof *h->pes);
    h->leaf_of = malloc(N * sizeof *h->leaf_of);
    h->lo = malloc(G * sizeof *h->lo);
    h->hi = malloc(G * sizeof *h->hi);
    h->first_child = malloc(G * sizeof *h->first_child);
    h->nchild = malloc(G * sizeof *h->nchild);
    h->parent = malloc(G * sizeof *h->parent);
    h->dist = malloc(G * sizeof *h->dist);
    key = malloc(N * sizeof *key);
    depth = malloc(G * sizeof *depth);
    if (!h->pes || !h->leaf_of || !h->lo || !h->hi || !h->first_child || !h->nchild || !h->parent || !h->dist ||
        !key || !depth) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the hierarchy of %d PEs", (int)nalloc);
        goto cleanup;
    }
    if ((rc = topomap_i_sorted_pes(m, alloc, nalloc, h->pes))) goto cleanup;
    key[0] = 0;
    for (int32_t i = 1; i < nalloc; i++) key[i] = topomap_machine_distance(m, h->pes[i - 1], h->pes[i]);
    /* Breadth first: a group's children are appended together, so they get
       consecutive ids larger than their parent's. */
    int32_t ng = 1;
    h->lo[0] = 0;
    h->hi[0] = nalloc;
    h->parent[0] = -1;
    depth[0] = 0;
    for (int32_t g = 0; g < ng; g++) {
        int32_t lo = h->lo[g], hi = h->hi[g];
        h->first_child[g] = ng;
        h->nchild[g] = 0;
        h->dist[g] = 0;
        if (hi - lo == 1) {
            h->leaf_of[lo] = g;
            continue;
        }
        double top = key[lo + 1];
        for (int32_t i = lo + 2; i < hi; i++)
            if (key[i] > top) top = key[i];
        h->dist[g] = top;
        int32_t start = lo;
        for (int32_t i = lo + 1; i <= hi; i++)
            if (i == hi || key[i] == top) {
                h->lo[ng] = start;
                h->hi[ng] = i;
                h->parent[ng] = g;
                depth[ng] = depth[g] + 1;
                ng++;
                h->nchild[g]++;
                start = i;
            }
    }
    h->ngroups = ng;
    for (int32_t g = 0; g < ng; g++)
        if (h->nchild[g] == 0 && depth[g] > h->height) h->height = depth[g];
    rc = check_hierarchy(m, h);
cleanup:
    free(key);
    free(depth);
    if (rc) topomap_hierarchy_destroy(h);
    else *out = h;
    return rc;
}

/* ================================================================== options */

void topomap_hierarchy_options_init(topomap_hierarchy_options *opt)
{
    *opt = (topomap_hierarchy_options){0.03, 1, TOPOMAP_HIER_ECO, 1};
}

/* What an effort preset sets. */
typedef struct {
    int recursive;        /* partitioner: recursive bisection or k-way */
    int32_t ntries_root;  /* multilevel runs per bisection (partition.h), root split */
    int32_t ntries;       /* the same below the root */
    int32_t root_attempts; /* complete root splits, the smallest cut kept */
    int32_t vcycles_root; /* V-cycles after the root split (map_hierarchy_vcycle.c) */
    int32_t vcycles;      /* V-cycles after a split below it ... */
    double vcycle_share;  /* ... when its distance step is at least this share of the root's */
    int32_t sweeps;       /* local search: at most this many activations per process */
    int32_t max_partners; /* swap candidates looked at per process */
    int flows;            /* max-flow refinement in the bisections (partition.h) */
} preset;

/* Above this many processes eco makes one multilevel run per split, one
   root attempt and one V-cycle, and searches half as long (as map_nodes.c's
   grouping does above its own threshold): on the 160x80x80 stencil onto
   fattree:k=40,levels=3/16 (1,024,000 processes) that is 28.7 s of CPU
   instead of 65 s, for hop-bytes 0.469 instead of 0.465 x block (max
   congestion 1.30 instead of 1.09).  The root split gets no V-cycle: on
   the 100^3 stencil onto that fat tree its cycle took 3.2 s and kept
   nothing (29.9 -> 26.5 s, the same mapping); J rose by 0.14 % and 0.10 %
   on scrambled 64^3 and 80x60x40 stencils (8:8:16:16:16 and a k=24 fat
   tree) and stayed the same on a scrambled 512^2.  Strong keeps its runs at
   every size. */
#define ECO_LARGE ((int32_t)1 << 17)

static preset effort_preset(int32_t effort, int32_t n)
{
    switch (effort) {
    case TOPOMAP_HIER_FAST: return (preset){0, 1, 1, 1, 1, 1, 0.05, 2, 16, 0};
    case TOPOMAP_HIER_STRONG: return (preset){1, 16, 4, 2, 2, 2, 0.0, 16, 256, 1};
    default:
        return n > ECO_LARGE ? (preset){1, 1, 1, 1, 0, 1, 0.05, 3, 32, 0} : (preset){1, 4, 2, 2, 2, 2, 0.05, 6, 64, 0};
    }
}

/* ================================================================== one run */

typedef struct {
    const topomap_machine *m;
    const topomap_pattern *p;
    const topomap_hierarchy *h;
    topomap_ugraph g; /* C + C^T of the whole pattern */
    int32_t n, L;
    preset pr;
    int32_t depth;
    /* multisection scratch */
    int32_t *proc, *plo, *phi, *loc, *part, *trial_part, *tmp, *order;
    double delta_root; /* distance step of the root split */
    int64_t *sxadj;
    int32_t *sadj;
    double *swgt, *targets, *caps, *pw; /* per used child: PEs, capacity, weight */
    /* local search state */
    int32_t *leaf;  /* process -> leaf group */
    int32_t *load;  /* group -> processes in it */
    int32_t *cap;   /* group -> L x PEs */
    int32_t *hint;  /* group -> a child that had room */
    int32_t *gstamp, *pmark, stamp_id; /* visit marks of groups and processes */
    int32_t *cand, *cpos, *queue, *bfs; /* candidate leaves, each leaf's place among them */
    double *base; /* per candidate leaf: the process's share there, its messages there left out */
    int32_t head, tail, pending;       /* the circular queue of active processes */
    uint8_t *active;
} ctx;

static void ctx_free(ctx *c)
{
    free((void *)c->g.xadj);
    free((void *)c->g.adjncy);
    free((void *)c->g.adjwgt);
    free(c->proc);
    free(c->plo);
    free(c->phi);
    free(c->loc);
    free(c->part);
    free(c->trial_part);
    free(c->tmp);
    free(c->order);
    free(c->sxadj);
    free(c->sadj);
    free(c->swgt);
    free(c->targets);
    free(c->caps);
    free(c->pw);
    free(c->leaf);
    free(c->load);
    free(c->cap);
    free(c->hint);
    free(c->gstamp);
    free(c->pmark);
    free(c->cand);
    free(c->cpos);
    free(c->base);
    free(c->queue);
    free(c->bfs);
    free(c->active);
}

static int ctx_init(ctx *c)
{
    int32_t n = c->p->n, ng = c->h->ngroups;
    int64_t nnz = c->p->indptr[n];
    size_t un = (size_t)n, e2 = 2 * (size_t)nnz + 1, G = (size_t)ng;
    int64_t *xadj = malloc((un + 1) * sizeof *xadj);
    int32_t *adj = malloc(e2 * sizeof *adj);
    double *wgt = malloc(e2 * sizeof *wgt);
    c->g = (topomap_ugraph){n, xadj, adj, wgt, NULL};
    c->proc = malloc(un * sizeof *c->proc);
    c->plo = malloc(G * sizeof *c->plo);
    c->phi = malloc(G * sizeof *c->phi);
    c->loc = malloc(un * sizeof *c->loc);
    c->part = malloc(un * sizeof *c->part);
    c->trial_part = malloc(un * sizeof *c->trial_part);
    c->tmp = malloc((un + G + 1) * sizeof *c->tmp);
    c->order = malloc(G * sizeof *c->order);
    c->sxadj = malloc((un + 1) * sizeof *c->sxadj);
    c->sadj = malloc(e2 * sizeof *c->sadj);
    c->swgt = malloc(e2 * sizeof *c->swgt);
    c->targets = malloc(G * sizeof *c->targets);
    c->caps = malloc(G * sizeof *c->caps);
    c->pw = malloc(G * sizeof *c->pw);
    c->leaf = malloc(un * sizeof *c->leaf);
    c->load = malloc(G * sizeof *c->load);
    c->cap = malloc(G * sizeof *c->cap);
    c->hint = calloc(G, sizeof *c->hint);
    c->gstamp = calloc(G, sizeof *c->gstamp);
    c->pmark = calloc(un, sizeof *c->pmark);
    c->cand = malloc(G * sizeof *c->cand);
    c->cpos = malloc(G * sizeof *c->cpos);
    c->base = malloc(G * sizeof *c->base);
    c->queue = malloc(un * sizeof *c->queue);
    c->bfs = malloc(un * sizeof *c->bfs);
    c->active = malloc(un);
    if (!xadj || !adj || !wgt || !c->proc || !c->plo || !c->phi || !c->loc || !c->part || !c->trial_part ||
        !c->tmp || !c->order || !c->sxadj || !c->sadj || !c->swgt || !c->targets || !c->caps || !c->pw || !c->leaf ||
        !c->load || !c->cap || !c->hint || !c->gstamp || !c->pmark || !c->cand || !c->cpos || !c->base || !c->queue ||
        !c->bfs || !c->active)
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory mapping %d processes onto a hierarchy", (int)n);
    for (int32_t i = 0; i < n; i++) c->loc[i] = -1;
    for (int32_t g = 0; g < ng; g++) c->cap[g] = c->L * (c->h->hi[g] - c->h->lo[g]);
    return topomap_ugraph_from_pattern(c->p, xadj, adj, wgt);
}

/* ------------------------------------------------------------------ multisection */

/* One attempt at splitting the group's subgraph sg over `used` children:
   a partition with targets c->targets (the children's PEs) whose soft
   bound is their capacities c->caps, made exact if it is not, then
   V-cycles under the capacities.  Part weights in c->pw. */
static int split_once(ctx *c, const topomap_ugraph *sg, int32_t used, int32_t ntries, int32_t vcycles,
                      uint64_t seed, const topomap_i_hspan *sp, int32_t *part, double *cut)
{
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    topomap_partition_options opt;
    topomap_partition_options_init(&opt);
    opt.trusted = 1;
    /* a child may take up to its capacity: the soft bound (1 + eps) t_j is
       exactly cap_j, since the targets are proportional to the capacities */
    double sum = 0;
    for (int32_t j = 0; j < used; j++) sum += c->targets[j];
    opt.imbalance = c->caps[0] * sum / (c->targets[0] * sg->n) - 1;
    if (opt.imbalance < 0) opt.imbalance = 0;
    opt.seed = topomap_rng_next(&r);
    opt.recursive = c->pr.recursive;
    opt.ntries = ntries;
    opt.flows = c->pr.flows;
    topomap_i_hspan part_span = topomap_i_hspan_sub(sp, 0, vcycles > 0 ? 0.5 : 1);
    if (sp->progress) {
        opt.progress = topomap_i_hspan_cb;
        opt.progress_ctx = &part_span;
    }
    int rc = topomap_partition(sg, used, c->targets, &opt, part, c->pw, cut);
    int over = 0;
    for (int32_t j = 0; !rc && j < used; j++) over |= c->pw[j] > c->caps[j];
    if (!rc && over) {
        opt.hard = 1;
        rc = topomap_partition_refine(sg, used, c->caps, &opt, part, c->pw, cut);
    }
    if (rc || vcycles == 0) return rc;
    topomap_i_hspan vs = topomap_i_hspan_sub(sp, 0.5, 1);
    return topomap_i_vcycles(sg, used, c->caps, vcycles, topomap_rng_next(&r), &vs, part, cut);
}

/* Split the processes of internal group g over its children. */
static int split_group(ctx *c, int32_t g, uint64_t seed, const topomap_i_hspan *sp)
{
    const topomap_hierarchy *h = c->h;
    int32_t lo = c->plo[g], hi = c->phi[g], W = hi - lo, k = h->nchild[g], f = h->first_child[g];
    /* the fewest children, largest first (ties in order), that hold W */
    for (int32_t j = 0; j < k; j++) {
        int32_t i = j;
        c->order[j] = j;
        while (i > 0 && c->cap[f + c->order[i - 1]] < c->cap[f + c->order[i]]) {
            int32_t t = c->order[i - 1];
            c->order[i - 1] = c->order[i];
            c->order[i] = t;
            i--;
        }
    }
    int32_t used = 0;
    int64_t room = 0;
    while (used < k && room < W) room += c->cap[f + c->order[used++]];
    qsort(c->order, (size_t)used, sizeof *c->order, topomap_i_cmp_i32);
    if (used == 1 || W <= 1 || h->dist[g] == 0) {
        /* children at distance 0 from each other (the PEs of a node whose
           cores the machine does not tell apart): every split costs the
           same, so fill them in order */
        for (int32_t i = 0, j = 0, held = 0; i < W; i++, held++) {
            if (held == c->cap[f + c->order[j]]) {
                j++;
                held = 0;
            }
            c->part[i] = j;
        }
    } else {
        /* the group's processes are in ascending ids, so its rows stay sorted */
        topomap_ugraph sg = topomap_i_induced_subgraph(&c->g, c->proc + lo, W, c->loc, c->sxadj, c->sadj, c->swgt);
        for (int32_t j = 0; j < used; j++) {
            int32_t ch = f + c->order[j];
            c->targets[j] = (double)(h->hi[ch] - h->lo[ch]);
            c->caps[j] = (double)c->cap[ch];
        }
        /* effort follows the split's share of J: the distance it adds */
        double child = 0;
        for (int32_t j = 0; j < k; j++)
            if (h->dist[f + j] > child) child = h->dist[f + j];
        int top = g == 0;
        int32_t vcycles = top ? c->pr.vcycles_root : c->pr.vcycles;
        if (h->dist[g] - child < c->pr.vcycle_share * c->delta_root) vcycles = 0;
        int32_t attempts = top ? c->pr.root_attempts : 1, ntries = c->pr.ntries;
        if (top) { /* the root split matters most, and on small graphs more tries cost little */
            int64_t more = ((int64_t)1 << 17) / W, most = 4 * (int64_t)c->pr.ntries_root;
            ntries = more < c->pr.ntries_root ? c->pr.ntries_root : (int32_t)(more > most ? most : more);
        }
        topomap_rng r;
        topomap_rng_seed(&r, seed);
        double best = INFINITY;
        for (int32_t a = 0; a < attempts; a++) {
            double cut = 0;
            topomap_i_hspan s = topomap_i_hspan_sub(sp, (double)a / attempts, (double)(a + 1) / attempts);
            int32_t *out = a == 0 ? c->part : c->trial_part;
            int rc = split_once(c, &sg, used, ntries, vcycles, topomap_rng_next(&r), &s, out, &cut);
            if (rc) return rc;
            if (cut < best) {
                best = cut;
                if (a > 0) memcpy(c->part, out, (size_t)W * sizeof *out);
            }
        }
    }
    /* children's ranges in child order, ascending process ids inside */
    int32_t *count = c->tmp; /* used + 1 entries, then the sort's scratch after them */
    topomap_i_sort_by_part(c->proc + lo, W, c->part, used, count, c->tmp + used + 1);
    for (int32_t j = 0; j < k; j++) c->plo[f + j] = c->phi[f + j] = lo; /* unused children stay empty */
    for (int32_t j = 0; j < used; j++) {
        c->plo[f + c->order[j]] = lo + count[j];
        c->phi[f + c->order[j]] = lo + count[j + 1];
    }
    return TOPOMAP_OK;
}

static int multisection(ctx *c, uint64_t seed, const topomap_i_hspan *sp, int32_t *pe_of)
{
    const topomap_hierarchy *h = c->h;
    int32_t n = c->n;
    for (int32_t i = 0; i < n; i++) c->proc[i] = i;
    c->plo[0] = 0;
    c->phi[0] = n;
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    double done = 0, total = (double)n * (h->height > 0 ? h->height : 1);
    for (int32_t g = 0; g < h->ngroups; g++) {
        uint64_t s = topomap_rng_next(&r);
        if (h->nchild[g] == 0) {
            for (int32_t i = c->plo[g]; i < c->phi[g]; i++) pe_of[c->proc[i]] = h->pes[h->lo[g]];
            continue;
        }
        int32_t W = c->phi[g] - c->plo[g];
        topomap_i_hspan sub = topomap_i_hspan_sub(sp, done / total, (done + W) / total);
        int rc = split_group(c, g, s, &sub);
        if (!rc) rc = topomap_i_hspan_report(&sub, 1);
        if (rc) return rc;
        done += W;
    }
    return TOPOMAP_OK;
}

/* ------------------------------------------------------------------ local search */

static void add_load(ctx *c, int32_t leaf, int32_t d)
{
    for (int32_t g = leaf; g >= 0; g = c->h->parent[g]) c->load[g] += d;
}

/* A leaf with room in group g (which has some), found from the last hint. */
static int32_t free_leaf(ctx *c, int32_t g)
{
    const topomap_hierarchy *h = c->h;
    while (h->nchild[g] > 0) {
        int32_t k = h->nchild[g], f = h->first_child[g], j = c->hint[g];
        for (int32_t t = 0; t < k; t++, j = j + 1 == k ? 0 : j + 1)
            if (c->load[f + j] < c->cap[f + j]) break;
        c->hint[g] = j;
        g = f + j;
    }
    return g;
}

/* Process u now sits on leaf t (the evaluator already knows). */
static void relabel(ctx *c, int32_t u, int32_t t)
{
    add_load(c, c->leaf[u], -1);
    add_load(c, t, 1);
    c->leaf[u] = t;
}

static void push(ctx *c, int32_t u)
{
    if (c->active[u]) return;
    c->active[u] = 1;
    c->queue[c->tail] = u;
    c->tail = c->tail + 1 == c->n ? 0 : c->tail + 1;
    c->pending++;
}

static void push_neighbours(ctx *c, int32_t u)
{
    for (int64_t k = c->g.xadj[u]; k < c->g.xadj[u + 1]; k++) push(c, c->g.adjncy[k]);
}

/* A fresh mark value; marks are cleared before the counter could overflow. */
static int32_t new_stamp(ctx *c)
{
    if (c->stamp_id == INT32_MAX) {
        memset(c->gstamp, 0, (size_t)c->h->ngroups * sizeof *c->gstamp);
        memset(c->pmark, 0, (size_t)c->n * sizeof *c->pmark);
        c->stamp_id = 0;
    }
    return ++c->stamp_id;
}

/* Process u: apply its best improving move or swap, judged by the change of
   J from the evaluator's shares (eval_shares.c; the leaves, single PEs,
   are the places).  *changed = 1 and *partner = the swapped process or -1 when the
   mapping changed. */
static int improve(ctx *c, topomap_eval *e, int32_t u, double *J, double thresh, int *changed, int32_t *partner)
{
    const topomap_hierarchy *h = c->h;
    int32_t own = c->leaf[u], nleaf = 0, best_leaf = -1, best_partner = -1;
    double best = -thresh;
    *changed = 0;
    /* the leaves of u's neighbours: move targets, and where swap partners sit */
    int32_t nb = new_stamp(c);
    for (int64_t k = c->g.xadj[u]; k < c->g.xadj[u + 1]; k++) {
        int32_t t = c->leaf[c->g.adjncy[k]];
        if (t != own && c->gstamp[t] != nb) {
            c->gstamp[t] = nb;
            c->cpos[t] = nleaf;
            c->cand[nleaf++] = t;
        }
    }
    if (!nleaf) return TOPOMAP_OK;
    const int32_t *pe_of = topomap_eval_mapping(e);
    topomap_i_eval_gather(e, u, c->leaf);
    double su = topomap_i_eval_share(e, u);
    /* moves: a full neighbour leaf is replaced by a leaf with room in its
       lowest group that has room and does not hold u's own leaf */
    for (int32_t i = 0; i < nleaf; i++) {
        int32_t t = c->cand[i];
        c->base[i] = topomap_i_eval_base(e, t, h->pes[h->lo[t]]);
        double at;
        if (c->load[t] >= c->cap[t]) {
            int32_t g = h->parent[t], here = h->lo[own];
            while (g >= 0 && !(h->lo[g] <= here && here < h->hi[g]) && c->load[g] >= c->cap[g]) g = h->parent[g];
            if (g < 0 || (h->lo[g] <= here && here < h->hi[g])) continue;
            t = free_leaf(c, g);
            if (c->gstamp[t] == nb) continue; /* a neighbour leaf is tried as itself */
            at = topomap_i_eval_base(e, t, h->pes[h->lo[t]]); /* no neighbour of u is there */
        } else {
            at = topomap_i_eval_at(e, c->base[i], t, h->pes[h->lo[t]], -1);
        }
        if (at - su < best) {
            best = at - su;
            best_leaf = t;
        }
    }
    /* swaps with processes within `depth` hops sitting on a neighbour leaf */
    if (c->depth > 0) {
        int32_t seen = new_stamp(c), head = 0, tail = 0, looked = 0, limit = c->pr.max_partners;
        c->pmark[u] = seen;
        c->bfs[tail++] = u;
        for (int32_t d = 0; d < c->depth && head < tail && looked < limit; d++) {
            int32_t level_end = tail;
            for (; head < level_end && looked < limit; head++) {
                int32_t x = c->bfs[head];
                for (int64_t k = c->g.xadj[x]; k < c->g.xadj[x + 1] && looked < limit; k++) {
                    int32_t v = c->g.adjncy[k], tv = c->leaf[v];
                    if (c->pmark[v] == seen) continue;
                    c->pmark[v] = seen;
                    c->bfs[tail++] = v;
                    if (tv == own || c->gstamp[tv] != nb) continue;
                    looked++;
                    double new_u = topomap_i_eval_at(e, c->base[c->cpos[tv]], tv, pe_of[v], v);
                    double delta = topomap_i_eval_swap_delta(e, u, v, new_u);
                    if (delta < best) {
                        best = delta;
                        best_leaf = -1;
                        best_partner = v;
                    }
                }
            }
        }
    }
    int rc = TOPOMAP_OK;
    if (best_partner >= 0) {
        int32_t to_u = c->leaf[best_partner];
        if (!(rc = topomap_eval_swap(e, u, best_partner))) {
            relabel(c, best_partner, own);
            relabel(c, u, to_u);
        }
    } else if (best_leaf >= 0) {
        if (!(rc = topomap_eval_move(e, u, h->pes[h->lo[best_leaf]]))) relabel(c, u, best_leaf);
    } else {
        return TOPOMAP_OK;
    }
    if (rc) return rc;
    *J += best;
    *changed = 1;
    *partner = best_partner;
    return TOPOMAP_OK;
}

static int local_search(ctx *c, uint64_t seed, const topomap_i_hspan *sp, int32_t *pe_of, double *J_out)
{
    const topomap_hierarchy *h = c->h;
    int32_t n = c->n;
    topomap_eval *e = NULL;
    int rc = topomap_eval_create_flags(c->m, c->p, pe_of, NULL, TOPOMAP_EVAL_DISTANCE_ONLY, &e);
    if (!rc) rc = topomap_i_eval_shares(e);
    if (rc) goto cleanup;
    topomap_metrics mt;
    topomap_eval_metrics(e, &mt);
    double J = mt.qap, thresh = 1e-12 * (fabs(J) + 1);
    /* leaves and loads of the multisection's result */
    for (int32_t g = 0; g < h->ngroups; g++) c->load[g] = 0;
    for (int32_t g = 0; g < h->ngroups; g++)
        if (h->nchild[g] == 0) {
            c->load[g] = c->phi[g] - c->plo[g];
            for (int32_t i = c->plo[g]; i < c->phi[g]; i++) c->leaf[c->proc[i]] = g;
        }
    for (int32_t g = h->ngroups - 1; g > 0; g--) c->load[h->parent[g]] += c->load[g];
    /* boundary processes, leaf by leaf, a leaf's in a seeded random order */
    c->head = c->tail = c->pending = 0;
    for (int32_t u = 0; u < n; u++) {
        c->active[u] = 0;
        for (int64_t k = c->g.xadj[u]; k < c->g.xadj[u + 1]; k++)
            if (c->leaf[c->g.adjncy[k]] != c->leaf[u]) {
                push(c, u);
                break;
            }
    }
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    topomap_rng_shuffle_i32(&r, c->queue, c->pending);
    if ((rc = topomap_i_sort_by_place(c->queue, c->pending, c->leaf, h->ngroups))) goto cleanup;
    int64_t budget = (int64_t)c->pr.sweeps * (c->pending > 0 ? c->pending : 1), steps = 0;
    while (c->pending > 0 && steps < budget) {
        int32_t u = c->queue[c->head], partner = -1;
        c->head = c->head + 1 == n ? 0 : c->head + 1;
        c->pending--;
        c->active[u] = 0;
        int changed = 0;
        if ((rc = improve(c, e, u, &J, thresh, &changed, &partner))) goto cleanup;
        if (changed) {
            push_neighbours(c, u);
            if (partner >= 0) push_neighbours(c, partner);
            push(c, u); /* it may improve further from its new place */
        }
        if (++steps % CHECK_EVERY == 0 && (rc = topomap_i_hspan_report(sp, (double)steps / (double)budget)))
            goto cleanup;
    }
#ifndef NDEBUG
    topomap_i_eval_shares_check(e);
#endif
    memcpy(pe_of, topomap_eval_mapping(e), (size_t)n * sizeof *pe_of);
    topomap_eval_metrics(e, &mt);
    *J_out = mt.qap;
    rc = topomap_i_hspan_report(sp, 1);
cleanup:
    topomap_eval_destroy(e);
    return rc;
}

/* ================================================================== driver */

static int check_options(const topomap_hierarchy_options *o)
{
    if (!(o->imbalance >= 0 && isfinite(o->imbalance)))
        return topomap_i_fail(TOPOMAP_EINVAL, "imbalance must be finite and >= 0, got %g", o->imbalance);
    if (o->depth < 0) return topomap_i_fail(TOPOMAP_EINVAL, "depth must be >= 0, got %d", (int)o->depth);
    if (o->effort < TOPOMAP_HIER_FAST || o->effort > TOPOMAP_HIER_STRONG)
        return topomap_i_fail(TOPOMAP_EINVAL, "effort must be 0 (fast), 1 (eco) or 2 (strong), got %d", (int)o->effort);
    if (o->tries < 1) return topomap_i_fail(TOPOMAP_EINVAL, "tries must be >= 1, got %d", (int)o->tries);
    return TOPOMAP_OK;
}

int topomap_map_hierarchy(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc,
                          int32_t nalloc, int32_t capacity, const topomap_hierarchy_options *opt_in,
                          const topomap_run_options *run, int32_t *pe_of, double *qap)
{
    topomap_hierarchy_options opt;
    if (opt_in) opt = *opt_in;
    else topomap_hierarchy_options_init(&opt);
    int rc = check_options(&opt);
    if (!rc) rc = topomap_pattern_validate(p);
    if (rc) return rc;
    if (capacity < 1) return topomap_i_fail(TOPOMAP_EINVAL, "capacity must be >= 1, got %d", (int)capacity);
    if (nalloc < 1) return topomap_i_fail(TOPOMAP_EINVAL, "an allocation needs at least one PE, got %d", (int)nalloc);
    if ((int64_t)nalloc * capacity < p->n)
        return topomap_i_fail(TOPOMAP_EINVAL, "%d processes do not fit on %d PEs with capacity %d", (int)p->n,
                              (int)nalloc, (int)capacity);
    ctx c = {0};
    int32_t *trial = NULL;
    topomap_hierarchy *h = NULL;
    if ((rc = topomap_hierarchy_create(m, alloc, nalloc, &h))) return rc;
    double avg = ceil((1 + opt.imbalance) * (double)p->n / nalloc - 1e-9);
    c.m = m;
    c.p = p;
    c.h = h;
    c.n = p->n;
    c.L = avg < capacity ? (int32_t)avg : capacity;
    if (c.L < 1) c.L = 1;
    for (int32_t j = 0; j < h->nchild[0]; j++) {
        double step = h->dist[0] - h->dist[h->first_child[0] + j];
        if (step > c.delta_root) c.delta_root = step;
    }
    c.pr = effort_preset(opt.effort, p->n);
    c.depth = opt.depth;
    trial = malloc((size_t)p->n * sizeof *trial);
    if (!trial) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    if ((rc = ctx_init(&c))) goto cleanup;
    topomap_rng r;
    topomap_rng_seed(&r, run ? run->seed : 0);
    double best = INFINITY;
    for (int32_t t = 0; t < opt.tries; t++) {
        uint64_t s1 = topomap_rng_next(&r), s2 = topomap_rng_next(&r);
        double lo = (double)t / opt.tries, width = 1.0 / opt.tries, J = 0;
        topomap_i_hspan ms = {run ? run->progress : NULL, run ? run->progress_ctx : NULL, lo, lo + 0.8 * width};
        topomap_i_hspan ls = {ms.progress, ms.ctx, lo + 0.8 * width, lo + width};
        if ((rc = multisection(&c, s1, &ms, trial))) goto cleanup;
        if ((rc = local_search(&c, s2, &ls, trial, &J))) goto cleanup;
        if (J < best) {
            best = J;
            memcpy(pe_of, trial, (size_t)p->n * sizeof *pe_of);
        }
    }
    if (qap) *qap = best;
cleanup:
    ctx_free(&c);
    free(trial);
    topomap_hierarchy_destroy(h);
    return rc;
}

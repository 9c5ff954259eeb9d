/* APHiD, top-down (Michelogiannakis, Ibrahim, Shalf, Wilke, Knight & Kenny,
   "APHiD: Hierarchical Task Placement to Enable a Tapered Fat Tree Topology
   for Lower Power and Cost in HPC Networks", LBNL 2017, §II-A and Fig. 4;
   pruning §II-B; notes 004 §2).  The processes of the root are partitioned
   into as many parts as the root has children, each part's processes into
   as many as that child has children, and so on down to single PEs; every
   step sees only the traffic inside its group, whose level is already
   fixed for the traffic that leaves it.

   Choices the paper leaves open, as made here:
   - Levels come from the machine, not from a list of degrees: the
     allocation's PEs form a tree under the routing oracle's level_of
     (topomap_alloc_tree_create): node tree levels, then the network's
     (fat tree leaf/agg/spine, tree levels, dragonfly router/group/global).
     Levels at which a group does not split are skipped, so a partial or
     fragmented allocation gets exactly the splits it has.  A network whose
     oracle puts every node pair at one level while the hop counts differ
     (torus, mesh, hypercube, graph fabric) has no levels to follow: the
     call fails with TOPOMAP_ENOTSUP rather than treat it as a crossbar
     (one level with equal hop counts is one: a single switch).
   - Part sizes (the [gap] of uneven sizes): by default each child takes
     its exact share of the group's processes in proportion to its slots
     (capacity x its allocated PEs; largest remainder), the paper's
     "partitions of specific sizes" and METIS tpwgts proportional to the
     endpoints below each child.  With proportional = 0 the slots are only
     bounds: a job that does not fill its allocation may gather in fewer
     subtrees when that cuts less traffic.
   - Children are ordered by their smallest PE id (the machines number each
     subtree contiguously) and part i goes to child i: the paper keeps the
     partition index order, all siblings of a fat tree being equivalent.
   - Partitioner: topomap's multilevel recursive bisection instead of METIS
     (greedy growing initial bisection = METIS IPTYPE GROW; heavy-edge
     matching in random visit order; boundary FM refinement, which is what
     METIS uses for edge-cut bisection), ntries runs per bisection; k-way
     on request.  Graph: C + C^T (weights are bytes; METIS needs an
     undirected graph).
   - Pruning (APHiD's 5 %) is the caller's: topomap/mappers/aphid.py prunes
     C + C^T once, relative to its heaviest edge, before the first split;
     it is not redone relative to each group's heaviest edge.  The pruned
     pattern arrives symmetric, so C + C^T doubles it: the same partitions.
   - A split whose parts hold one process each is not partitioned: every
     assignment cuts every edge (the PEs of a flat node, capacity 1).
   - Seeds: one 64-bit partition seed per split, drawn in breadth-first
     order from the run's seed.
   - Bottom-up APHiD (§II-A, Fig. 2) is not implemented: it needs groups of
     exact sizes at every level from contracted vertices of unequal weight
     (bin packing) on partial allocations, and the paper found it worse.

   Complexity: the tree costs one sort and O(N L) level_of calls for N
   allocated PEs and L levels (O(N L b) if a machine numbered the PEs of a
   subtree non-contiguously, b the largest fan-out).  Each tree level
   partitions disjoint induced subgraphs of total size <= n + E, recursive
   bisection into b parts in O((n + E) log b), so the whole run is
   O((n + E) sum_levels log b_l) = O((n + E) log N) on a regular tree (the
   paper's O(E log k log N) with N read as the number of endpoints).
   Memory O(n + E + N). */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/map_aphid.h"
#include "topomap/partition.h"
#include "topomap/rng.h"
#include "map_topdown.h"

/* Work units (vertices + edge ends) between progress reports of small splits. */
#define REPORT_EVERY 65536

void topomap_alloc_tree_destroy(topomap_alloc_tree *t)
{
    if (!t) return;
    free(t->pes);
    free(t->start);
    free(t->size);
    free(t->level);
    free(t->first_child);
    free(t->nchildren);
    free(t);
}

int topomap_alloc_tree_create(const topomap_machine *m, const int32_t *alloc, int32_t nalloc,
                              topomap_alloc_tree **out)
{
    if (nalloc < 1) return topomap_i_fail(TOPOMAP_EINVAL, "an allocation needs >= 1 PE, got %d", (int)nalloc);
    int rc = TOPOMAP_OK;
    size_t cap = 2 * (size_t)nalloc; /* every inner group has >= 2 children: <= 2N - 1 groups */
    topomap_alloc_tree *t = calloc(1, sizeof *t);
    int32_t *cls = malloc((size_t)nalloc * sizeof *cls), *tmp = malloc((size_t)nalloc * sizeof *tmp);
    int32_t *rep = malloc((size_t)nalloc * sizeof *rep), *count = malloc(((size_t)nalloc + 1) * sizeof *count);
    int32_t *cmax = malloc((size_t)nalloc * sizeof *cmax);
    if (t) {
        t->pes = malloc((size_t)nalloc * sizeof *t->pes);
        t->start = malloc(cap * sizeof *t->start);
        t->size = malloc(cap * sizeof *t->size);
        t->level = malloc(cap * sizeof *t->level);
        t->first_child = malloc(cap * sizeof *t->first_child);
        t->nchildren = malloc(cap * sizeof *t->nchildren);
    }
    if (!t || !cls || !tmp || !rep || !count || !cmax || !t->pes || !t->start || !t->size || !t->level ||
        !t->first_child || !t->nchildren) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the tree of %d PEs", (int)nalloc);
        goto cleanup;
    }
    if ((rc = topomap_i_sorted_pes(m, alloc, nalloc, t->pes))) goto cleanup;
    t->npes = nalloc;
    int32_t top = 0;
    for (int32_t i = 1; i < nalloc; i++) {
        int32_t lv = topomap_machine_level_of(m, t->pes[0], t->pes[i]);
        if (lv > top) top = lv;
    }
    t->ngroups = 1;
    t->start[0] = 0;
    t->size[0] = nalloc;
    t->level[0] = nalloc == 1 ? 0 : top;
    for (int32_t g = 0; g < t->ngroups; g++) {
        int32_t s = t->start[g], len = t->size[g], L = t->level[g];
        if (len == 1) {
            t->first_child[g] = -1;
            t->nchildren[g] = 0;
            continue;
        }
        /* classes of "meet below L", found against one representative each
           (the relation is an equivalence on a tree); the class of the
           previous PE is tried first, as subtrees are numbered contiguously */
        int32_t b = 0, last = 0;
        for (int32_t i = 0; i < len; i++) {
            int32_t pe = t->pes[s + i], c = -1, lv = 0;
            if (b > 0 && (lv = topomap_machine_level_of(m, pe, rep[last])) < L) c = last;
            for (int32_t j = 0; c < 0 && j < b; j++)
                if (j != last && (lv = topomap_machine_level_of(m, pe, rep[j])) < L) c = j;
            if (c < 0) {
                c = b++;
                rep[c] = pe;
                count[c] = 0;
                cmax[c] = 0;
                lv = 0;
            }
            if (lv > cmax[c]) cmax[c] = lv;
            count[c]++;
            cls[i] = c;
            last = c;
        }
        if (b == 1) { /* L overstated the group (an oracle that is not a tree): retry one level lower */
            t->level[g] = cmax[0];
            g--;
            continue;
        }
        /* stable counting sort: each child's PEs stay in increasing order */
        int32_t off = 0;
        t->first_child[g] = t->ngroups;
        t->nchildren[g] = b;
        for (int32_t c = 0; c < b; c++) {
            int32_t child = t->ngroups + c;
            t->start[child] = s + off;
            t->size[child] = count[c];
            t->level[child] = count[c] == 1 ? 0 : cmax[c];
            int32_t k = count[c];
            count[c] = off;
            off += k;
        }
        for (int32_t i = 0; i < len; i++) tmp[count[cls[i]]++] = t->pes[s + i];
        memcpy(t->pes + s, tmp, (size_t)len * sizeof *tmp);
        t->ngroups += b;
    }
    *out = t;
    t = NULL;
cleanup:
    topomap_alloc_tree_destroy(t);
    free(cls);
    free(tmp);
    free(rep);
    free(count);
    free(cmax);
    return rc;
}

void topomap_aphid_options_init(topomap_aphid_options *opt)
{
    *opt = (topomap_aphid_options){0};
    opt->recursive = 1;
    opt->proportional = 1;
    opt->ntries = 4;
}

/* A network whose oracle has one level for every pair of distinct nodes
   but routes them over different hop counts has no hierarchy. */
static int check_levels(const topomap_machine *m, const topomap_alloc_tree *t)
{
    int32_t P = topomap_machine_pes_per_node(m), nn = topomap_machine_nnodes(m);
    if (topomap_machine_node_of(m, t->pes[0]) == topomap_machine_node_of(m, t->pes[t->npes - 1]))
        return TOPOMAP_OK; /* one node: only its node tree matters */
    int32_t lv1 = topomap_machine_level_of(m, 0, P), h1 = topomap_machine_route_count(m, 0, 1), other = -1;
    for (int32_t x = 2; x < nn; x++) {
        if (topomap_machine_level_of(m, 0, x * P) != lv1) return TOPOMAP_OK;
        if (other < 0 && topomap_machine_route_count(m, 0, x) != h1) other = x;
    }
    if (other < 0) return TOPOMAP_OK; /* a crossbar: one switch, every node as far */
    return topomap_i_fail(TOPOMAP_ENOTSUP,
                          "aphid needs a network with levels: the routing oracle puts all %d nodes at one level, "
                          "yet node 0 is %d hops from node 1 and %d from node %d (tori, meshes, hypercubes and "
                          "graph fabrics have no levels to follow)",
                          (int)nn, (int)h1, (int)topomap_machine_route_count(m, 0, other), (int)other);
}

/* Progress over the whole run: a split's partitioner reports its own
   fraction, scaled into the split's share of the work; splits too small to
   report on their own are reported every REPORT_EVERY units. */
typedef struct {
    const topomap_run_options *run;
    double total, done, span;
    int64_t since;
} aphid_progress;

static int forward(aphid_progress *pr, double f)
{
    double x = (pr->done + f * pr->span) / pr->total;
    pr->since = 0;
    return pr->run->progress(pr->run->progress_ctx, x < 1 ? x : 1);
}

static int split_progress(void *ctx, double f)
{
    aphid_progress *pr = ctx;
    if (pr->span < REPORT_EVERY && pr->since < REPORT_EVERY) return 0;
    return forward(pr, f);
}

/* How many of a group's cnt processes each child takes, as hard part
   capacities caps[0..k) of the children used[0..k) (offsets, increasing).
   Proportional: exact shares of the children's slots (largest remainder,
   ties to the earlier child), children with no share left out; capacity:
   every child, its slots as the bound.  *singles: every part holds one
   process at most. */
static int32_t child_parts(const topomap_alloc_tree *t, int32_t g, int64_t capacity, int32_t cnt, int proportional,
                           int32_t *used, double *caps, int64_t *share, int64_t *rem, int *singles)
{
    int32_t b = t->nchildren[g], c0 = t->first_child[g], k = 0;
    int64_t total = t->size[g], given = 0; /* slots are capacity x PEs: shares by PEs, no overflow */
    for (int32_t j = 0; j < b; j++) {
        int64_t pes = t->size[c0 + j];
        share[j] = proportional ? (int64_t)cnt * pes / total : capacity * pes;
        rem[j] = proportional ? (int64_t)cnt * pes % total : 0;
        given += share[j];
    }
    for (; proportional && given < cnt; given++) { /* b is a fan-out: a scan per leftover process is cheap */
        int32_t best = 0;
        for (int32_t j = 1; j < b; j++)
            if (rem[j] > rem[best]) best = j;
        share[best]++;
        rem[best] = -1;
    }
    *singles = 1;
    for (int32_t j = 0; j < b; j++)
        if (share[j] > 0) {
            used[k] = j;
            caps[k++] = (double)share[j];
            if (share[j] > 1) *singles = 0;
        }
    return k;
}

int topomap_map_aphid(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                      int32_t capacity, const topomap_aphid_options *opt_in, const topomap_run_options *run,
                      int32_t *pe_of)
{
    topomap_aphid_options opt;
    if (opt_in) opt = *opt_in;
    else topomap_aphid_options_init(&opt);
    if (capacity < 1) return topomap_i_fail(TOPOMAP_EINVAL, "capacity must be >= 1, got %d", (int)capacity);
    if (opt.ntries < 1) return topomap_i_fail(TOPOMAP_EINVAL, "ntries must be >= 1, got %d", (int)opt.ntries);
    int rc = topomap_pattern_validate(p);
    if (rc) return rc;
    int32_t n = p->n;
    if ((int64_t)n > (int64_t)nalloc * capacity)
        return topomap_i_fail(TOPOMAP_EINVAL, "%d processes do not fit on %d PEs with capacity %d", (int)n,
                              (int)nalloc, (int)capacity);
    topomap_alloc_tree *t = NULL;
    int64_t *xadj = NULL, *sxadj = NULL;
    int32_t *adj = NULL, *sadj = NULL, *tasks = NULL, *loc = NULL, *part = NULL, *tmp = NULL;
    int32_t *tstart = NULL, *tcount = NULL, *depth = NULL, *used = NULL, *pcount = NULL;
    int64_t *share = NULL, *rem = NULL;
    double *wgt = NULL, *swgt = NULL, *caps = NULL;
    if ((rc = topomap_alloc_tree_create(m, alloc, nalloc, &t))) goto cleanup;
    if ((rc = check_levels(m, t))) goto cleanup;
    int64_t nnz = p->indptr[n];
    int32_t G = t->ngroups;
    xadj = malloc(((size_t)n + 1) * sizeof *xadj);
    sxadj = malloc(((size_t)n + 1) * sizeof *sxadj);
    adj = malloc((2 * (size_t)nnz + 1) * sizeof *adj);
    wgt = malloc((2 * (size_t)nnz + 1) * sizeof *wgt);
    tasks = malloc((size_t)n * sizeof *tasks);
    loc = malloc((size_t)n * sizeof *loc);
    part = malloc((size_t)n * sizeof *part);
    tmp = malloc((size_t)n * sizeof *tmp);
    tstart = calloc((size_t)G, sizeof *tstart);
    tcount = calloc((size_t)G, sizeof *tcount);
    depth = calloc((size_t)G, sizeof *depth);
    used = malloc((size_t)nalloc * sizeof *used);
    pcount = malloc(((size_t)nalloc + 1) * sizeof *pcount);
    caps = malloc((size_t)nalloc * sizeof *caps);
    share = malloc((size_t)nalloc * sizeof *share);
    rem = malloc((size_t)nalloc * sizeof *rem);
    if (!xadj || !sxadj || !adj || !wgt || !tasks || !loc || !part || !tmp || !tstart || !tcount ||
        !depth || !used || !pcount || !caps || !share || !rem) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory placing %d processes", (int)n);
        goto cleanup;
    }
    if ((rc = topomap_ugraph_from_pattern(p, xadj, adj, wgt))) goto cleanup;
    int64_t m2 = xadj[n];
    sadj = malloc(((size_t)m2 + 1) * sizeof *sadj);
    swgt = malloc(((size_t)m2 + 1) * sizeof *swgt);
    if (!sadj || !swgt) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %lld edge ends", (long long)m2);
        goto cleanup;
    }
    int32_t height = 1;
    for (int32_t g = 0; g < G; g++)
        for (int32_t c = 0; c < t->nchildren[g]; c++) {
            depth[t->first_child[g] + c] = depth[g] + 1;
            if (depth[g] + 1 > height) height = depth[g] + 1;
        }
    aphid_progress pr = {run, (double)(n + m2) * height + 1, 0, 0, 0};
    topomap_partition_options popt;
    topomap_partition_options_init(&popt);
    popt.trusted = 1;
    popt.hard = 1;
    popt.recursive = opt.recursive;
    popt.ntries = opt.ntries;
    if (run && run->progress) {
        popt.progress = split_progress;
        popt.progress_ctx = &pr;
    }
    topomap_rng rng;
    topomap_rng_seed(&rng, run ? run->seed : 0);
    for (int32_t v = 0; v < n; v++) {
        tasks[v] = v; /* each group's range stays sorted: rows come out sorted */
        loc[v] = -1;
    }
    topomap_ugraph whole = {n, xadj, adj, wgt, NULL};
    tcount[0] = n;
    for (int32_t g = 0; g < G; g++) {
        int32_t cnt = tcount[g], ts = tstart[g], *mine = tasks + ts;
        if (cnt == 0) continue;
        if (t->nchildren[g] == 0) {
            for (int32_t i = 0; i < cnt; i++) pe_of[mine[i]] = t->pes[t->start[g]];
            continue;
        }
        int32_t c0 = t->first_child[g];
        int singles;
        int32_t k = child_parts(t, g, capacity, cnt, opt.proportional, used, caps, share, rem, &singles);
        if (k == 1) {
            memset(part, 0, (size_t)cnt * sizeof *part);
        } else if (singles) { /* one process per part: every assignment cuts every edge */
            for (int32_t i = 0; i < cnt; i++) part[i] = i;
        } else {
            topomap_ugraph sub = topomap_i_induced_subgraph(&whole, mine, cnt, loc, sxadj, sadj, swgt);
            int64_t e = sxadj[cnt];
            pr.span = (double)cnt + (double)e;
            pr.since += cnt + e;
            popt.seed = topomap_rng_next(&rng);
            if ((rc = topomap_partition(&sub, k, caps, &popt, part, NULL, NULL))) goto cleanup;
            pr.done += pr.span;
        }
        topomap_i_sort_by_part(mine, cnt, part, k, pcount, tmp);
        for (int32_t j = 0; j < k; j++) {
            tstart[c0 + used[j]] = ts + pcount[j];
            tcount[c0 + used[j]] = pcount[j + 1] - pcount[j];
        }
    }
    pr.done = pr.total;
    if (run && run->progress && forward(&pr, 0) != 0)
        rc = topomap_i_fail(TOPOMAP_ECANCELED, "aphid cancelled by the progress callback at 100%%");
cleanup:
    topomap_alloc_tree_destroy(t);
    free(xadj);
    free(sxadj);
    free(adj);
    free(sadj);
    free(wgt);
    free(swgt);
    free(tasks);
    free(loc);
    free(part);
    free(tmp);
    free(tstart);
    free(tcount);
    free(depth);
    free(used);
    free(pcount);
    free(caps);
    free(share);
    free(rem);
    return rc;
}

/* The hierarchy mapper (map_hierarchy*.c) and the evaluator's distance-only
   mode it searches with: lean deltas == full recomputation over random
   walks, the allocation's tree against the oracle, V-cycles that never
   worsen a cut nor break capacities, and the mapper's contract (valid,
   deterministic, cancellable, errors naming the bad value). */
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "map_hierarchy_internal.h"
#include "check.h"

/* A random directed pattern of n processes, edge probability q. */
typedef struct {
    topomap_pattern p;
    int64_t *indptr;
    int32_t *idx;
    double *by;
} owned_pattern;

static owned_pattern random_pattern(topomap_rng *r, int32_t n, double q)
{
    owned_pattern o;
    o.indptr = calloc((size_t)n + 1, sizeof *o.indptr);
    o.idx = malloc((size_t)n * n * sizeof *o.idx + 1);
    o.by = malloc((size_t)n * n * sizeof *o.by + 1);
    int64_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        for (int32_t j = 0; j < n; j++)
            if (i != j && topomap_rng_uniform(r) < q) {
                o.idx[k] = j;
                o.by[k++] = 1 + (double)topomap_rng_below(r, 50);
            }
        o.indptr[i + 1] = k;
    }
    o.p = (topomap_pattern){n, o.indptr, o.idx, o.by};
    return o;
}

/* A 2-D grid of w x h processes, both directions of each edge, 1 byte each;
   process ids scrambled by a seeded permutation. */
static owned_pattern grid(int32_t w, int32_t h, uint64_t seed)
{
    int32_t n = w * h, *perm = malloc((size_t)n * sizeof *perm), *inv = malloc((size_t)n * sizeof *inv);
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    for (int32_t i = 0; i < n; i++) perm[i] = i;
    topomap_rng_shuffle_i32(&r, perm, n);
    for (int32_t i = 0; i < n; i++) inv[perm[i]] = i;
    owned_pattern o;
    o.indptr = calloc((size_t)n + 1, sizeof *o.indptr);
    o.idx = malloc(4 * (size_t)n * sizeof *o.idx);
    o.by = malloc(4 * (size_t)n * sizeof *o.by);
    int64_t k = 0;
    for (int32_t v = 0; v < n; v++) {
        int32_t c = inv[v], x = c % w, y = c / w, nb[4], d = 0;
        if (x > 0) nb[d++] = c - 1;
        if (x + 1 < w) nb[d++] = c + 1;
        if (y > 0) nb[d++] = c - w;
        if (y + 1 < h) nb[d++] = c + w;
        int32_t ids[4];
        for (int32_t t = 0; t < d; t++) ids[t] = perm[nb[t]];
        for (int32_t a = 1; a < d; a++) /* rows sorted */
            for (int32_t b = a; b > 0 && ids[b - 1] > ids[b]; b--) {
                int32_t tmp = ids[b];
                ids[b] = ids[b - 1];
                ids[b - 1] = tmp;
            }
        for (int32_t t = 0; t < d; t++) {
            o.idx[k] = ids[t];
            o.by[k++] = 1;
        }
        o.indptr[v + 1] = k;
    }
    o.p = (topomap_pattern){n, o.indptr, o.idx, o.by};
    free(perm);
    free(inv);
    return o;
}

static void free_pattern(owned_pattern *o)
{
    free(o->indptr);
    free(o->idx);
    free(o->by);
}

/* hierarchy a0 PEs per node (node tree costs[0]), network tree arities a1,
   a2 with costs[1], costs[2] */
static topomap_machine *hierarchy_machine(int32_t a0, int32_t a1, int32_t a2, const double costs[3])
{
    static const int32_t zeros[64] = {0};
    topomap_node_tree t = {a0, 1, zeros, costs};
    int32_t ar[2] = {a1, a2};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_tree(&t, 2, ar, costs + 1, &m) == 0);
    return m;
}

/* ------------------------------------------------------------------ distance-only evaluator */

static void distance_only_walk(const topomap_machine *m, uint64_t seed, int steps)
{
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    int32_t n = 30, npes = topomap_machine_npes(m);
    owned_pattern o = random_pattern(&r, n, 0.25);
    int32_t *pe_of = malloc((size_t)n * sizeof *pe_of);
    for (int32_t i = 0; i < n; i++)
        pe_of[i] = topomap_rng_below(&r, 5) ? (int32_t)topomap_rng_below(&r, (uint64_t)npes) : TOPOMAP_UNPLACED;
    topomap_eval *e = NULL;
    CHECK(topomap_eval_create_flags(m, &o.p, pe_of, NULL, TOPOMAP_EVAL_DISTANCE_ONLY, &e) == 0);
    if (!e) return;
    CHECK(topomap_eval_link_loads(e) == NULL && topomap_eval_level_bytes(e) == NULL);
    for (int s = 0; s < steps; s++) {
        topomap_metrics tried, now, full, before;
        topomap_eval_metrics(e, &before);
        int32_t a = (int32_t)topomap_rng_below(&r, (uint64_t)n);
        if (s % 2) {
            int32_t pe = topomap_rng_below(&r, 5) ? (int32_t)topomap_rng_below(&r, (uint64_t)npes) : TOPOMAP_UNPLACED;
            CHECK(topomap_eval_try_move(e, a, pe, &tried) == 0);
            topomap_eval_metrics(e, &now); /* a try changes nothing */
            CHECK(now.qap == before.qap && now.messages == before.messages);
            CHECK(topomap_eval_move(e, a, pe) == 0);
        } else {
            int32_t b = (int32_t)topomap_rng_below(&r, (uint64_t)n);
            CHECK(topomap_eval_try_swap(e, a, b, &tried) == 0);
            CHECK(topomap_eval_swap(e, a, b) == 0);
        }
        topomap_eval_metrics(e, &now);
        CHECK(topomap_evaluate(m, &o.p, topomap_eval_mapping(e), NULL, &full, NULL) == 0);
        CHECK(close_to(tried.qap, full.qap) && close_to(now.qap, full.qap));
        CHECK(close_to(now.total_bytes, full.total_bytes) && now.messages == full.messages);
        CHECK(close_to(now.edge_cut, full.edge_cut) && now.edge_cut_messages == full.edge_cut_messages);
        CHECK(tried.messages == full.messages && close_to(tried.edge_cut, full.edge_cut));
        CHECK(isnan(now.hop_bytes) && isnan(now.max_congestion) && now.max_dilation == -1 && now.nz_links == -1);
    }
    topomap_eval_destroy(e);
    free(pe_of);
    free_pattern(&o);
}

static void test_distance_only(void)
{
    const double costs[3] = {1, 10, 100};
    topomap_machine *m = hierarchy_machine(4, 3, 2, costs);
    distance_only_walk(m, 1, 300);
    /* the lean mode never looks at routes: any machine, any distances */
    int32_t groups[8] = {0, 0, 1, 1, 0, 0, 0, 0};
    double tc[2] = {1, 5};
    topomap_node_tree t4 = {4, 2, groups, tc};
    topomap_machine *torus = NULL;
    int32_t dims[2] = {3, 4};
    uint8_t wrap[2] = {1, 0};
    CHECK(topomap_machine_create_torus(&t4, 2, dims, wrap, &torus) == 0);
    distance_only_walk(torus, 2, 300);
    int64_t ip[2] = {0, 0};
    topomap_pattern p = {1, ip, NULL, NULL};
    int32_t pe0 = 0;
    topomap_eval *e = NULL;
    CHECK(topomap_eval_create_flags(m, &p, &pe0, NULL, 4, &e) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "flags 0x4") != NULL);
    topomap_machine_destroy(m);
    topomap_machine_destroy(torus);
}

/* ------------------------------------------------------------------ the tree */

static void test_hierarchy_tree(void)
{
    const double costs[3] = {1, 10, 100};
    topomap_machine *m = hierarchy_machine(4, 3, 2, costs); /* 24 PEs */
    topomap_rng r;
    topomap_rng_seed(&r, 5);
    for (int trial = 0; trial < 20; trial++) {
        int32_t all[24], nalloc = 1 + (int32_t)topomap_rng_below(&r, 24);
        for (int32_t i = 0; i < 24; i++) all[i] = i;
        topomap_rng_shuffle_i32(&r, all, 24);
        topomap_hierarchy *h = NULL;
        CHECK(topomap_hierarchy_create(m, all, nalloc, &h) == 0);
        if (!h) continue;
        CHECK(h->npes == nalloc && h->lo[0] == 0 && h->hi[0] == nalloc);
        int32_t leaves = 0;
        for (int32_t g = 0; g < h->ngroups; g++) {
            if (h->nchild[g] == 0) {
                leaves++;
                CHECK(h->hi[g] - h->lo[g] == 1 && h->leaf_of[h->lo[g]] == g && h->dist[g] == 0);
                continue;
            }
            CHECK(h->nchild[g] >= 2);
            int32_t at = h->lo[g];
            for (int32_t c = h->first_child[g]; c < h->first_child[g] + h->nchild[g]; c++) {
                CHECK(h->parent[c] == g && h->lo[c] == at && h->dist[c] < h->dist[g]);
                at = h->hi[c];
            }
            CHECK(at == h->hi[g]);
        }
        CHECK(leaves == nalloc);
        /* every pair: the machine distance is that of the pair's lowest common group */
        for (int32_t i = 0; i < nalloc; i++)
            for (int32_t j = 0; j < nalloc; j++) {
                int32_t a = h->leaf_of[i], b = h->leaf_of[j];
                while (a != b) {
                    if (a > b) a = h->parent[a];
                    else b = h->parent[b];
                }
                CHECK(topomap_machine_distance(m, h->pes[i], h->pes[j]) == h->dist[a]);
            }
        for (int32_t i = 1; i < nalloc; i++) CHECK(h->pes[i - 1] < h->pes[i]);
        topomap_hierarchy_destroy(h);
    }
    int32_t dup[3] = {1, 5, 1};
    topomap_hierarchy *h = NULL;
    CHECK(topomap_hierarchy_create(m, dup, 3, &h) == TOPOMAP_EINVAL && h == NULL);
    CHECK(strstr(topomap_last_error(), "PE 1 appears twice") != NULL);
    int32_t out[1] = {24};
    CHECK(topomap_hierarchy_create(m, out, 1, &h) == TOPOMAP_EINVAL);
    topomap_machine_destroy(m);

    /* equal distances merge: 2 x 3 nodes at distance 10 form one group of 6 */
    const double flat[3] = {1, 10, 10};
    m = hierarchy_machine(2, 2, 3, flat);
    int32_t pes[12];
    for (int32_t i = 0; i < 12; i++) pes[i] = i;
    CHECK(topomap_hierarchy_create(m, pes, 12, &h) == 0);
    if (h) {
        CHECK(h->nchild[0] == 6 && h->dist[0] == 10 && h->height == 2);
        topomap_hierarchy_destroy(h);
    }
    topomap_machine_destroy(m);

    /* a torus is no hierarchy: refused, naming two PEs */
    static const int32_t z[1] = {0};
    static const double c0[1] = {0};
    topomap_node_tree one = {1, 1, z, c0};
    int32_t dims[2] = {4, 4};
    uint8_t wrap[2] = {1, 1};
    CHECK(topomap_machine_create_torus(&one, 2, dims, wrap, &m) == 0);
    int32_t tp[16];
    for (int32_t i = 0; i < 16; i++) tp[i] = i;
    CHECK(topomap_hierarchy_create(m, tp, 16, &h) == TOPOMAP_ENOTSUP);
    CHECK(strstr(topomap_last_error(), "not a hierarchy") != NULL && strstr(topomap_last_error(), "PEs ") != NULL);
    /* ...but two neighbouring nodes are one (distance 1) */
    CHECK(topomap_hierarchy_create(m, tp, 2, &h) == 0);
    topomap_hierarchy_destroy(h);
    topomap_machine_destroy(m);
}

/* ------------------------------------------------------------------ V-cycles */

static void test_vcycles(void)
{
    owned_pattern o = grid(40, 30, 3);
    int32_t n = o.p.n;
    int64_t *xadj = malloc(((size_t)n + 1) * sizeof *xadj);
    int32_t *adj = malloc(2 * (size_t)o.p.indptr[n] * sizeof *adj);
    double *w = malloc(2 * (size_t)o.p.indptr[n] * sizeof *w);
    CHECK(topomap_ugraph_from_pattern(&o.p, xadj, adj, w) == 0);
    topomap_ugraph g = {n, xadj, adj, w, NULL};
    int32_t *part = malloc((size_t)n * sizeof *part);
    for (int k = 2; k <= 4; k += 2) {
        topomap_partition_options opt;
        topomap_partition_options_init(&opt);
        opt.ntries = 1;
        opt.seed = (uint64_t)k;
        double caps[4], cut0 = 0, cut1 = 0, pw[4];
        CHECK(topomap_partition(&g, k, NULL, &opt, part, pw, &cut0) == 0);
        for (int i = 0; i < k; i++) caps[i] = pw[i] + 2;
        topomap_i_hspan none = {NULL, NULL, 0, 1};
        CHECK(topomap_i_vcycles(&g, k, caps, 3, 7, &none, part, &cut1) == 0);
        double cut2 = 0;
        CHECK(topomap_partition_stats(&g, k, part, pw, &cut2) == 0);
        CHECK(cut1 <= cut0 && close_to(cut1, cut2));
        for (int i = 0; i < k; i++) CHECK(pw[i] <= caps[i]);
    }
    free(xadj);
    free(adj);
    free(w);
    free(part);
    free_pattern(&o);
}

/* ------------------------------------------------------------------ the mapper */

static int cancel_at_half(void *ctx, double f)
{
    int *calls = ctx;
    (*calls)++;
    return f >= 0.5;
}

static void test_mapper(void)
{
    const double costs[3] = {1, 10, 100};
    topomap_machine *m = hierarchy_machine(4, 4, 2, costs); /* 32 PEs */
    owned_pattern o = grid(16, 8, 11);                       /* 128 processes */
    int32_t n = o.p.n, alloc[32];
    for (int32_t i = 0; i < 32; i++) alloc[i] = 31 - i;
    int32_t *pe_of = malloc((size_t)n * sizeof *pe_of), *again = malloc((size_t)n * sizeof *again);
    topomap_run_options run = {42, NULL, NULL};
    for (int32_t effort = TOPOMAP_HIER_FAST; effort <= TOPOMAP_HIER_STRONG; effort++) {
        topomap_hierarchy_options opt;
        topomap_hierarchy_options_init(&opt);
        opt.effort = effort;
        double J = 0, J2 = 0;
        CHECK(topomap_map_hierarchy(m, &o.p, alloc, 32, 4, &opt, &run, pe_of, &J) == 0);
        int32_t load[32] = {0};
        for (int32_t i = 0; i < n; i++) {
            CHECK(pe_of[i] >= 0 && pe_of[i] < 32);
            if (pe_of[i] >= 0 && pe_of[i] < 32) load[pe_of[i]]++;
        }
        for (int32_t i = 0; i < 32; i++) CHECK(load[i] <= 4); /* L = min(4, ceil(1.03 * 128 / 32)) */
        topomap_metrics mt, blk;
        CHECK(topomap_evaluate(m, &o.p, pe_of, NULL, &mt, NULL) == 0);
        CHECK(close_to(mt.qap, J));
        int32_t *block = again;
        CHECK(topomap_map_block(n, alloc, 32, 4, block) == 0);
        CHECK(topomap_evaluate(m, &o.p, block, NULL, &blk, NULL) == 0);
        CHECK(J < 0.5 * blk.qap); /* a scrambled grid: neighbours brought together */
        CHECK(topomap_map_hierarchy(m, &o.p, alloc, 32, 4, &opt, &run, again, &J2) == 0);
        CHECK(memcmp(pe_of, again, (size_t)n * sizeof *pe_of) == 0 && J == J2);
    }
    /* capacity 8 with imbalance 0: still 4 per PE, the average */
    topomap_hierarchy_options opt;
    topomap_hierarchy_options_init(&opt);
    opt.imbalance = 0;
    CHECK(topomap_map_hierarchy(m, &o.p, alloc, 32, 8, &opt, &run, pe_of, NULL) == 0);
    int32_t load[32] = {0};
    for (int32_t i = 0; i < n; i++) load[pe_of[i]]++;
    for (int32_t i = 0; i < 32; i++) CHECK(load[i] == 4);
    /* fewer processes than PEs on a part of the machine: a process per PE */
    owned_pattern small = grid(5, 3, 2);
    int32_t part_alloc[20];
    for (int32_t i = 0; i < 20; i++) part_alloc[i] = 3 + i;
    CHECK(topomap_map_hierarchy(m, &small.p, part_alloc, 20, 1, NULL, &run, pe_of, NULL) == 0);
    int32_t seen[32] = {0};
    for (int32_t i = 0; i < small.p.n; i++) {
        CHECK(pe_of[i] >= 3 && pe_of[i] < 23);
        if (pe_of[i] >= 0 && pe_of[i] < 32) CHECK(++seen[pe_of[i]] == 1);
    }
    /* cancellation: the callback's stop ends the call with ECANCELED */
    int calls = 0;
    topomap_run_options stop = {1, cancel_at_half, &calls};
    CHECK(topomap_map_hierarchy(m, &o.p, alloc, 32, 4, NULL, &stop, pe_of, NULL) == TOPOMAP_ECANCELED);
    CHECK(calls > 0 && strstr(topomap_last_error(), "cancelled") != NULL);
    /* errors name the bad value */
    opt.imbalance = -1;
    CHECK(topomap_map_hierarchy(m, &o.p, alloc, 32, 4, &opt, &run, pe_of, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "imbalance") != NULL);
    topomap_hierarchy_options_init(&opt);
    opt.depth = -2;
    CHECK(topomap_map_hierarchy(m, &o.p, alloc, 32, 4, &opt, &run, pe_of, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "depth") != NULL);
    topomap_hierarchy_options_init(&opt);
    opt.effort = 3;
    CHECK(topomap_map_hierarchy(m, &o.p, alloc, 32, 4, &opt, &run, pe_of, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "effort") != NULL);
    topomap_hierarchy_options_init(&opt);
    opt.tries = 0;
    CHECK(topomap_map_hierarchy(m, &o.p, alloc, 32, 4, &opt, &run, pe_of, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "tries") != NULL);
    CHECK(topomap_map_hierarchy(m, &o.p, alloc, 32, 3, NULL, &run, pe_of, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "do not fit") != NULL);
    free(pe_of);
    free(again);
    free_pattern(&o);
    free_pattern(&small);
    topomap_machine_destroy(m);
}

/* Random weighted patterns on random partial allocations, capacities,
   depths and tries: valid mappings, and the J returned is the full
   evaluation's. */
static void test_random_cases(void)
{
    const double costs[3] = {2, 7, 30};
    topomap_machine *m = hierarchy_machine(2, 3, 3, costs); /* 18 PEs */
    topomap_rng r;
    topomap_rng_seed(&r, 9);
    for (int trial = 0; trial < 25; trial++) {
        int32_t all[18], nalloc = 1 + (int32_t)topomap_rng_below(&r, 18), cap = 1 + (int32_t)topomap_rng_below(&r, 3);
        for (int32_t i = 0; i < 18; i++) all[i] = i;
        topomap_rng_shuffle_i32(&r, all, 18);
        int32_t n = 1 + (int32_t)topomap_rng_below(&r, (uint64_t)nalloc * cap);
        owned_pattern o = random_pattern(&r, n, 0.3);
        int32_t *pe_of = malloc((size_t)n * sizeof *pe_of);
        topomap_run_options run = {(uint64_t)trial, NULL, NULL};
        topomap_hierarchy_options opt;
        topomap_hierarchy_options_init(&opt);
        opt.depth = (int32_t)topomap_rng_below(&r, 3);
        opt.tries = 1 + (int32_t)topomap_rng_below(&r, 2);
        double J = -1;
        CHECK(topomap_map_hierarchy(m, &o.p, all, nalloc, cap, &opt, &run, pe_of, &J) == 0);
        int32_t load[18] = {0};
        for (int32_t i = 0; i < n; i++) {
            int ok = 0;
            for (int32_t j = 0; j < nalloc; j++) ok |= pe_of[i] == all[j];
            CHECK(ok);
            if (ok) CHECK(++load[pe_of[i]] <= cap);
        }
        topomap_metrics mt;
        CHECK(topomap_evaluate(m, &o.p, pe_of, NULL, &mt, NULL) == 0);
        CHECK(close_to(mt.qap, J));
        free(pe_of);
        free_pattern(&o);
    }
    topomap_machine_destroy(m);
}

int main(void)
{
    test_distance_only();
    test_hierarchy_tree();
    test_vcycles();
    test_mapper();
    test_random_cases();
    return check_report();
}

/* LibTopoMap's heuristics (map_greedy.c, map_recursive.c, map_rcm.c) and
   what they share (map_physgraph.c): the network graph, RCM orders worked
   by hand, the greedy rule on a line, valid mappings under capacities and
   uneven nodes on several kinds, determinism, cancellation, errors. */
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "map_physgraph.h"
#include "check.h"

static topomap_machine *torus(int32_t pes, int32_t nd, const int32_t *dims, int wrap)
{
    int32_t groups[64] = {0};
    double costs[1] = {1};
    topomap_node_tree tree = {pes, 1, groups, costs};
    uint8_t w[3] = {(uint8_t)wrap, (uint8_t)wrap, (uint8_t)wrap};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_torus(&tree, nd, dims, w, &m) == 0);
    return m;
}

static topomap_machine *fattree(int32_t pes)
{
    int32_t groups[64] = {0};
    double costs[1] = {1};
    topomap_node_tree tree = {pes, 1, groups, costs};
    int32_t mm[2] = {4, 4}, ww[2] = {1, 4}, pp[2] = {1, 2};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_fattree(&tree, 2, mm, ww, pp, NULL, TOPOMAP_FATTREE_DMODK, &m) == 0);
    return m;
}

/* A random directed pattern of n processes (caller frees the arrays). */
static topomap_pattern random_pattern(topomap_rng *r, int32_t n, double density)
{
    int64_t *ip = calloc((size_t)n + 1, sizeof *ip);
    int32_t *ix = malloc((size_t)n * n * sizeof *ix + 1);
    double *by = malloc((size_t)n * n * sizeof *by + 1);
    int64_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        for (int32_t j = 0; j < n; j++)
            if (i != j && topomap_rng_uniform(r) < density) {
                ix[k] = j;
                by[k++] = 1 + (double)topomap_rng_below(r, 9);
            }
        ip[i + 1] = k;
    }
    topomap_pattern p = {n, ip, ix, by};
    return p;
}

static void free_pattern(topomap_pattern *p)
{
    free((void *)p->indptr);
    free((void *)p->indices);
    free((void *)p->bytes);
}

static void test_physgraph(void)
{
    /* 3x3 torus: 9 vertices of degree 4, each neighbour joined by 2 links (both ways) */
    int32_t d3[2] = {3, 3};
    topomap_machine *m = torus(1, 2, d3, 1);
    topomap_i_physgraph g;
    CHECK(topomap_i_physgraph_build(m, &g) == 0);
    CHECK(g.nv == 9);
    int ok = 1;
    for (int32_t v = 0; v < 9; v++) {
        ok &= g.xadj[v + 1] - g.xadj[v] == 4 && g.ostart[v + 1] - g.ostart[v] == 4;
        for (int64_t e = g.xadj[v]; e < g.xadj[v + 1]; e++) ok &= close_to(g.wgt[e], 2) && (e == g.xadj[v] || g.adj[e] > g.adj[e - 1]);
    }
    CHECK(ok);
    topomap_ugraph u = topomap_i_physgraph_view(&g);
    CHECK(topomap_ugraph_validate(&u) == 0);
    topomap_i_physgraph_free(&g);
    topomap_machine_destroy(m);
    /* 2x2 torus: +1 and -1 reach the same neighbour, so each edge sums 4 links */
    int32_t d2[2] = {2, 2};
    m = torus(1, 2, d2, 1);
    CHECK(topomap_i_physgraph_build(m, &g) == 0);
    CHECK(g.xadj[1] == 2 && close_to(g.wgt[0], 4) && g.adj[0] == 1 && g.adj[1] == 2);
    topomap_i_physgraph_free(&g);
    topomap_machine_destroy(m);
    /* fat tree XGFT(2; 4,4; 1,4; 1,2): 16 nodes, 4 leaf and 4 top switches, 2 cables per leaf-top pair */
    m = fattree(1);
    CHECK(topomap_i_physgraph_build(m, &g) == 0);
    CHECK(g.nv == 24 && g.xadj[1] - g.xadj[0] == 1); /* a node sees its leaf switch only */
    int32_t leaf = g.adj[0];
    CHECK(leaf >= 16 && g.xadj[leaf + 1] - g.xadj[leaf] == 8); /* 4 nodes + 4 top switches */
    CHECK(close_to(g.wgt[g.xadj[leaf + 1] - 1], 4));          /* 2 cables x 2 directions */
    topomap_i_physgraph_free(&g);
    topomap_machine_destroy(m);
}

static void test_rcm_orders(void)
{
    /* path 0-1-2-3-4 (edges listed both ways) */
    int64_t px[6] = {0, 1, 3, 5, 7, 8};
    int32_t pa[8] = {1, 0, 2, 1, 3, 2, 4, 3};
    topomap_ugraph path = {5, px, pa, NULL, NULL};
    int32_t order[6];
    CHECK(topomap_rcm_order(&path, TOPOMAP_RCM_PERIPHERAL, order) == 0);
    CHECK(order[0] == 4 && order[1] == 3 && order[2] == 2 && order[3] == 1 && order[4] == 0);
    /* 3 x 2 grid 0-1-2 / 3-4-5: from corner 0, 3 (degree 2) comes before 1 (degree 3) */
    int64_t gx[7] = {0, 2, 5, 7, 9, 12, 14};
    int32_t ga[14] = {1, 3, 0, 2, 4, 1, 5, 0, 4, 1, 3, 5, 2, 4};
    topomap_ugraph grid = {6, gx, ga, NULL, NULL};
    int32_t want[6] = {5, 2, 4, 1, 3, 0};
    for (int32_t rule = 0; rule < 2; rule++) {
        CHECK(topomap_rcm_order(&grid, rule, order) == 0);
        CHECK(memcmp(order, want, sizeof want) == 0);
    }
    /* star with centre 2 and leaves 0, 1, 3, plus an isolated vertex 4.
       Peripheral: components by lowest vertex; from 0 the last level {1, 3}
       adds no level, so 0, 2, 1, 3, then 4.  Least degree: 4 (degree 0)
       first, then 0, 2, 1, 3.  Reversed. */
    int64_t sx[6] = {0, 1, 2, 5, 6, 6};
    int32_t sa[6] = {2, 2, 0, 1, 3, 2};
    topomap_ugraph star = {5, sx, sa, NULL, NULL};
    int32_t peri[5] = {4, 3, 1, 2, 0}, mind[5] = {3, 1, 2, 0, 4};
    CHECK(topomap_rcm_order(&star, TOPOMAP_RCM_PERIPHERAL, order) == 0);
    CHECK(memcmp(order, peri, sizeof peri) == 0);
    CHECK(topomap_rcm_order(&star, TOPOMAP_RCM_MIN_DEGREE, order) == 0);
    CHECK(memcmp(order, mind, sizeof mind) == 0);
    CHECK(topomap_rcm_order(&star, 2, order) == TOPOMAP_EINVAL);
}

/* The greedy rule by hand on a line of 3 nodes: 0 -5- 1 -1- 2.  Process 1
   is heaviest (6): node 0.  Then 0 (5 to it) goes next to node 0's nearest
   free node, 1; then 2 (1 to process 1, on node 0): nearest free node 2. */
static void test_greedy_by_hand(void)
{
    int32_t d[1] = {3};
    topomap_machine *m = torus(1, 1, d, 0);
    int64_t ip[4] = {0, 1, 3, 4};
    int32_t ix[4] = {1, 0, 2, 1};
    double by[4] = {5, 5, 1, 1};
    topomap_pattern p = {3, ip, ix, by};
    int32_t alloc[3] = {0, 1, 2}, pe[3];
    topomap_greedy_options o;
    topomap_greedy_options_init(&o);
    CHECK(topomap_map_greedy(m, &p, alloc, 3, 1, &o, pe) == 0);
    CHECK(pe[0] == 1 && pe[1] == 0 && pe[2] == 2);
    topomap_machine_destroy(m);
}

static int check_mapping(const topomap_machine *m, int32_t n, const int32_t *pe, const int32_t *alloc, int32_t na,
                         int32_t cap)
{
    int32_t npes = topomap_machine_npes(m);
    int32_t *count = calloc((size_t)npes, sizeof *count);
    uint8_t *allowed = calloc((size_t)npes, 1);
    int ok = 1;
    for (int32_t i = 0; i < na; i++) allowed[alloc[i]] = 1;
    for (int32_t i = 0; i < n; i++) {
        if (pe[i] < 0 || pe[i] >= npes || !allowed[pe[i]]) ok = 0;
        else if (++count[pe[i]] > cap) ok = 0;
    }
    free(count);
    free(allowed);
    return ok;
}

static int run(int method, const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t na,
               int32_t cap, uint64_t seed, int (*progress)(void *, double), int32_t *pe)
{
    topomap_run_options run = {seed, progress, NULL};
    if (method == 0) {
        topomap_greedy_options o;
        topomap_greedy_options_init(&o);
        o.run = run;
        o.tries = 2;
        return topomap_map_greedy(m, p, alloc, na, cap, &o, pe);
    }
    if (method == 1) {
        topomap_recursive_options o;
        topomap_recursive_options_init(&o);
        o.run = run;
        return topomap_map_recursive(m, p, alloc, na, cap, &o, pe);
    }
    topomap_rcm_options o;
    topomap_rcm_options_init(&o);
    o.run = run;
    return topomap_map_rcm(m, p, alloc, na, cap, &o, pe);
}

static int stop(void *ctx, double f)
{
    (void)ctx;
    (void)f;
    return 1;
}

/* Random allocations giving nodes different numbers of PEs, random patterns
   filling them (or nearly), every method: valid, deterministic. */
static void test_mappers(topomap_machine *m, uint64_t seed)
{
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    int32_t npes = topomap_machine_npes(m), P = topomap_machine_pes_per_node(m), nn = topomap_machine_nnodes(m);
    int32_t *alloc = malloc((size_t)npes * sizeof *alloc), *nodes = malloc((size_t)nn * sizeof *nodes);
    int32_t na = 0;
    for (int32_t v = 0; v < nn; v++) nodes[v] = v;
    topomap_rng_shuffle_i32(&r, nodes, nn);
    int32_t used = 1 + (int32_t)topomap_rng_below(&r, (uint64_t)nn);
    for (int32_t i = 0; i < used; i++) {
        int32_t take = 1 + (int32_t)topomap_rng_below(&r, (uint64_t)P);
        for (int32_t j = 0; j < take; j++) alloc[na++] = nodes[i] * P + j;
    }
    topomap_rng_shuffle_i32(&r, alloc, na);
    int32_t cap = 1 + (int32_t)topomap_rng_below(&r, 2);
    int32_t n = na * cap - (int32_t)topomap_rng_below(&r, 3);
    if (n < 1) n = 1;
    topomap_pattern p = random_pattern(&r, n, 0.3);
    int32_t *pe = malloc((size_t)n * sizeof *pe), *again = malloc((size_t)n * sizeof *again);
    for (int method = 0; method < 3; method++) {
        CHECK(run(method, m, &p, alloc, na, cap, seed, NULL, pe) == 0);
        CHECK(check_mapping(m, n, pe, alloc, na, cap));
        CHECK(run(method, m, &p, alloc, na, cap, seed, NULL, again) == 0);
        CHECK(memcmp(pe, again, (size_t)n * sizeof *pe) == 0);
        CHECK(run(method, m, &p, alloc, na, cap, seed, stop, again) == TOPOMAP_ECANCELED);
    }
    if (n > na) /* more processes than PEs: capacity 1 cannot hold them */
        for (int method = 0; method < 3; method++) CHECK(run(method, m, &p, alloc, na, 1, seed, NULL, pe) == TOPOMAP_EINVAL);
    free_pattern(&p);
    free(pe);
    free(again);
    free(alloc);
    free(nodes);
}

/* A 2-D stencil onto a mesh of its shape: with geometry, dilation 1. */
static void test_recursive_stencil(void)
{
    enum { X = 8, Y = 8, N = X * Y };
    int32_t d[2] = {X, Y};
    topomap_machine *m = torus(1, 2, d, 0);
    int64_t ip[N + 1] = {0};
    int32_t ix[4 * N], alloc[N], pe[N], coords[2 * N], ring[2] = {0, 0};
    double by[4 * N];
    int64_t k = 0;
    for (int32_t v = 0; v < N; v++) {
        int32_t x = v % X, y = v / X, nb[4] = {y ? v - X : -1, x ? v - 1 : -1, x < X - 1 ? v + 1 : -1, y < Y - 1 ? v + X : -1};
        for (int j = 0; j < 4; j++)
            if (nb[j] >= 0) {
                ix[k] = nb[j];
                by[k++] = 1;
            }
        ip[v + 1] = k;
        alloc[v] = v;
        coords[2 * v] = x;
        coords[2 * v + 1] = y;
    }
    topomap_pattern p = {N, ip, ix, by};
    topomap_recursive_options o;
    topomap_recursive_options_init(&o);
    o.ndims = 2;
    o.coords = coords;
    o.ring = ring;
    CHECK(topomap_map_recursive(m, &p, alloc, N, 1, &o, pe) == 0);
    topomap_metrics mt;
    CHECK(topomap_evaluate(m, &p, pe, NULL, &mt, NULL) == 0);
    CHECK(mt.max_dilation == 1);
    coords[5] = 9; /* outside a ring of 8: refused */
    ring[0] = ring[1] = 8;
    CHECK(topomap_map_recursive(m, &p, alloc, N, 1, &o, pe) == TOPOMAP_EINVAL);
    topomap_machine_destroy(m);
}

static void test_bad_options(void)
{
    int32_t d[1] = {4};
    topomap_machine *m = torus(1, 1, d, 1);
    int64_t ip[3] = {0, 1, 2};
    int32_t ix[2] = {1, 0}, alloc[4] = {0, 1, 2, 3}, pe[2];
    double by[2] = {1, 1};
    topomap_pattern p = {2, ip, ix, by};
    topomap_greedy_options g;
    topomap_greedy_options_init(&g);
    g.start = 2;
    CHECK(topomap_map_greedy(m, &p, alloc, 4, 1, &g, pe) == TOPOMAP_EINVAL);
    topomap_greedy_options_init(&g);
    g.tries = 0;
    CHECK(topomap_map_greedy(m, &p, alloc, 4, 1, &g, pe) == TOPOMAP_EINVAL);
    topomap_greedy_options_init(&g);
    g.congestion = -1;
    CHECK(topomap_map_greedy(m, &p, alloc, 4, 1, &g, pe) == TOPOMAP_EINVAL);
    topomap_greedy_options_init(&g);
    g.candidates = -1;
    CHECK(topomap_map_greedy(m, &p, alloc, 4, 1, &g, pe) == TOPOMAP_EINVAL);
    topomap_recursive_options r;
    topomap_recursive_options_init(&r);
    r.context = 7;
    CHECK(topomap_map_recursive(m, &p, alloc, 4, 1, &r, pe) == TOPOMAP_EINVAL);
    topomap_recursive_options_init(&r);
    int32_t coords[4] = {0, 1, 2, 3}, ring[1] = {-1};
    r.ndims = 1;
    r.coords = coords;
    r.ring = ring;
    CHECK(topomap_map_recursive(m, &p, alloc, 4, 1, &r, pe) == TOPOMAP_EINVAL);
    topomap_rcm_options c;
    topomap_rcm_options_init(&c);
    c.start = 5;
    CHECK(topomap_map_rcm(m, &p, alloc, 4, 1, &c, pe) == TOPOMAP_EINVAL);
    CHECK(topomap_map_rcm(m, &p, alloc, 1, 1, NULL, pe) == TOPOMAP_EINVAL); /* 2 processes, 1 PE */
    int32_t outside[1] = {9};
    CHECK(topomap_map_greedy(m, &p, outside, 1, 2, NULL, pe) == TOPOMAP_EINVAL);
    topomap_machine_destroy(m);
}

int main(void)
{
    test_physgraph();
    test_rcm_orders();
    test_greedy_by_hand();
    test_recursive_stencil();
    test_bad_options();
    int32_t d44[2] = {4, 4}, d333[3] = {3, 3, 3};
    topomap_machine *ms[4] = {torus(4, 2, d44, 1), torus(1, 3, d333, 0), fattree(3), NULL};
    int32_t groups[2] = {0, 0};
    double costs[1] = {1};
    topomap_node_tree tree = {2, 1, groups, costs};
    CHECK(topomap_machine_create_dragonfly(&tree, 5, 2, 2, 2, TOPOMAP_DRAGONFLY_ABSOLUTE, &ms[3]) == 0);
    for (int i = 0; i < 4; i++) {
        for (uint64_t seed = 0; seed < 6; seed++) test_mappers(ms[i], 17 * seed + (uint64_t)i);
        topomap_machine_destroy(ms[i]);
    }
    return check_report();
}

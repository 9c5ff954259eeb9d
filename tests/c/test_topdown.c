/* The top-down mapper (map_dualrb.c + map_qap_search.c) on its own: the
   embedding of a 2-D stencil on a torus with geometry, a fat tree by its
   levels, valid mappings under capacities and partial nodes, determinism,
   the search never raising J, the congestion search never raising the
   maximum congestion, cancellation and bad orders; the search's stop when
   it stalls; the congestion search's work per sweep under dense traffic;
   the search's deltas on one-way routes with sockets. */
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "check.h"
#include "map_congestion_search.h"
#include "map_physgraph.h"
#include "map_qap_search.h"

static topomap_machine *torus2(int32_t pes, int32_t x, int32_t y)
{
    int32_t groups[64] = {0}, dims[2] = {x, y};
    double costs[1] = {1};
    topomap_node_tree tree = {pes, 1, groups, costs};
    uint8_t w[2] = {1, 1};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_torus(&tree, 2, dims, w, &m) == 0);
    return m;
}

/* An X x Y 5-point stencil, rank = x + X y, unit bytes both ways. */
static topomap_pattern stencil(int32_t X, int32_t Y)
{
    int32_t n = X * Y;
    int64_t *ip = calloc((size_t)n + 1, sizeof *ip);
    int32_t *ix = malloc(4 * (size_t)n * sizeof *ix);
    double *by = malloc(4 * (size_t)n * sizeof *by);
    int64_t k = 0;
    for (int32_t r = 0; r < n; r++) {
        int32_t x = r % X, y = r / X, nb[4] = {y > 0 ? r - X : -1, x > 0 ? r - 1 : -1, x < X - 1 ? r + 1 : -1,
                                               y < Y - 1 ? r + X : -1};
        for (int i = 0; i < 4; i++)
            if (nb[i] >= 0) {
                ix[k] = nb[i];
                by[k++] = 1;
            }
        ip[r + 1] = k;
    }
    return (topomap_pattern){n, ip, ix, by};
}

/* The next 31 random bits of a 64-bit LCG. */
static uint32_t lcg(uint64_t *state)
{
    *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(*state >> 33);
}

static void free_pattern(topomap_pattern *p)
{
    free((void *)p->indptr);
    free((void *)p->indices);
    free((void *)p->bytes);
}

static topomap_metrics metrics(const topomap_machine *m, const topomap_pattern *p, const int32_t *pe_of)
{
    topomap_metrics mt;
    CHECK(topomap_evaluate(m, p, pe_of, NULL, &mt, NULL) == 0);
    return mt;
}

static double qap(const topomap_machine *m, const topomap_pattern *p, const int32_t *pe_of)
{
    return metrics(m, p, pe_of).qap;
}

static int valid(const topomap_pattern *p, const int32_t *pe_of, int32_t nalloc, int32_t cap)
{
    int32_t load[128] = {0}, ok = 1;
    for (int32_t i = 0; i < p->n; i++) {
        ok &= pe_of[i] >= 0 && pe_of[i] < nalloc;
        if (ok) load[pe_of[i]]++;
    }
    for (int32_t i = 0; i < nalloc; i++) ok &= load[i] <= cap;
    return ok;
}

static void test_torus_embedding(void)
{
    /* 16 x 16 stencil, 4 x 4 blocks onto a 4 x 4 torus of 16-PE nodes: one hop per cut edge */
    topomap_machine *m = torus2(16, 4, 4);
    topomap_pattern p = stencil(16, 16);
    int32_t alloc[256], order[16], gap[15] = {0}, coords[32], ring[2] = {4, 4}, pe_of[256];
    for (int32_t i = 0; i < 256; i++) alloc[i] = i;
    for (int32_t v = 0; v < 16; v++) {
        order[v] = v;
        coords[2 * v] = v % 4;
        coords[2 * v + 1] = v / 4;
    }
    topomap_topdown_options o;
    topomap_topdown_options_init(&o);
    o.order = order;
    o.gap = gap;
    o.count = 16;
    o.coords = coords;
    o.ring = ring;
    o.ndims = 2;
    CHECK(topomap_map_topdown(m, &p, alloc, 256, 1, &o, pe_of) == 0);
    topomap_metrics mt;
    CHECK(topomap_evaluate(m, &p, pe_of, NULL, &mt, NULL) == 0);
    CHECK(mt.max_dilation == 1);
    CHECK(close_to(mt.hop_bytes, 2 * (3 * 16 + 3 * 16))); /* 3 cuts of 16 edges per dimension, both ways */
    /* the same by the processes' coordinates instead of the partitioner */
    int32_t xy[512];
    for (int32_t r = 0; r < 256; r++) {
        xy[2 * r] = r % 16;
        xy[2 * r + 1] = r / 16;
    }
    o.pcoords = xy;
    o.pdims = 2;
    CHECK(topomap_map_topdown(m, &p, alloc, 256, 1, &o, pe_of) == 0);
    CHECK(topomap_evaluate(m, &p, pe_of, NULL, &mt, NULL) == 0);
    CHECK(mt.max_dilation == 1);
    CHECK(close_to(mt.hop_bytes, 2 * (3 * 16 + 3 * 16)));
    xy[77] = 1 << 20;
    CHECK(topomap_map_topdown(m, &p, alloc, 256, 1, &o, pe_of) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "process 38 has coordinate 1048576 on axis 1") != NULL);
    xy[77] = 4;
    o.pdims = 4;
    CHECK(topomap_map_topdown(m, &p, alloc, 256, 1, &o, pe_of) == TOPOMAP_EINVAL);
    free_pattern(&p);
    topomap_machine_destroy(m);
}

static void test_fattree_levels_and_properties(void)
{
    int32_t groups[64] = {0};
    double costs[1] = {1};
    topomap_node_tree tree = {2, 1, groups, costs};
    int32_t mm[2] = {4, 4}, ww[2] = {1, 4}, pp[2] = {1, 2};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_fattree(&tree, 2, mm, ww, pp, NULL, TOPOMAP_FATTREE_DMODK, &m) == 0);
    int32_t nn = topomap_machine_nnodes(m), order[64], gap[64];
    for (int32_t v = 0; v < nn; v++) order[v] = v;
    for (int32_t v = 0; v + 1 < nn; v++) gap[v] = -topomap_machine_route_count(m, v, v + 1);
    topomap_rng r;
    topomap_rng_seed(&r, 7);
    for (int trial = 0; trial < 20; trial++) {
        /* a partial last node, capacity 1-2, fewer processes than slots */
        int32_t nalloc = 2 * nn - (int32_t)topomap_rng_below(&r, 2), cap = 1 + (int32_t)topomap_rng_below(&r, 2);
        int32_t alloc[128], pe_of[256], again[256], raw[256], X = 3 + (int32_t)topomap_rng_below(&r, 5);
        for (int32_t i = 0; i < nalloc; i++) alloc[i] = i;
        int32_t Y = (nalloc * cap) / X;
        Y = Y > 1 + (int32_t)topomap_rng_below(&r, 8) ? Y - (int32_t)topomap_rng_below(&r, 2) : Y;
        topomap_pattern p = stencil(X, Y);
        topomap_topdown_options o;
        topomap_topdown_options_init(&o);
        o.order = order;
        o.gap = gap;
        o.count = (nalloc + 1) / 2;
        o.run.seed = (uint64_t)trial;
        o.flow_min = trial % 4 == 2 ? 2 : o.flow_min; /* max-flow refinement in every graph bisection */
        int32_t xy[512];
        if (trial % 2) { /* odd trials split by the stencil's coordinates */
            for (int32_t r = 0; r < p.n; r++) {
                xy[2 * r] = r % X;
                xy[2 * r + 1] = r / X;
            }
            o.pcoords = xy;
            o.pdims = 2;
        }
        CHECK(topomap_map_topdown(m, &p, alloc, nalloc, cap, &o, pe_of) == 0);
        CHECK(topomap_map_topdown(m, &p, alloc, nalloc, cap, &o, again) == 0);
        CHECK(memcmp(pe_of, again, (size_t)p.n * sizeof *pe_of) == 0);
        CHECK(valid(&p, pe_of, nalloc, cap));
        /* the congestion search: valid, seeded, and the maximum never rises
           (moves to free PEs happen here: fewer processes than slots) */
        o.congestion_sweeps = 5;
        CHECK(topomap_map_topdown(m, &p, alloc, nalloc, cap, &o, again) == 0);
        CHECK(valid(&p, again, nalloc, cap));
        CHECK(metrics(m, &p, again).max_congestion <= metrics(m, &p, pe_of).max_congestion);
        CHECK(topomap_map_topdown(m, &p, alloc, nalloc, cap, &o, raw) == 0);
        CHECK(memcmp(raw, again, (size_t)p.n * sizeof *raw) == 0);
        o.congestion_sweeps = 0;
        o.sweeps = 0;
        CHECK(topomap_map_topdown(m, &p, alloc, nalloc, cap, &o, raw) == 0);
        CHECK(qap(m, &p, pe_of) <= qap(m, &p, raw) * (1 + 1e-12));
        o.tries = 3; /* the first try is the run above */
        CHECK(topomap_map_topdown(m, &p, alloc, nalloc, cap, &o, again) == 0);
        CHECK(qap(m, &p, again) <= qap(m, &p, raw) * (1 + 1e-12));
        free_pattern(&p);
    }
    topomap_machine_destroy(m);
}

static int stop_at_once(void *ctx, double f)
{
    (void)ctx;
    (void)f;
    return 1;
}

static void test_errors_and_cancel(void)
{
    topomap_machine *m = torus2(1, 2, 2);
    topomap_pattern p = stencil(2, 2);
    int32_t alloc[4] = {0, 1, 2, 3}, order[4] = {0, 1, 1, 3}, gap[3] = {0, 0, 0}, pe_of[4];
    topomap_topdown_options o;
    topomap_topdown_options_init(&o);
    CHECK(topomap_map_topdown(m, &p, alloc, 4, 1, &o, pe_of) == TOPOMAP_EINVAL); /* no order */
    o.order = order;
    o.gap = gap;
    o.count = 4;
    CHECK(topomap_map_topdown(m, &p, alloc, 4, 1, &o, pe_of) == TOPOMAP_EINVAL); /* node 1 twice */
    CHECK(strstr(topomap_last_error(), "listed twice") != NULL);
    order[2] = 2;
    o.context = 2;
    CHECK(topomap_map_topdown(m, &p, alloc, 4, 1, &o, pe_of) == TOPOMAP_EINVAL);
    o.context = 1;
    o.tries = 0;
    CHECK(topomap_map_topdown(m, &p, alloc, 4, 1, &o, pe_of) == TOPOMAP_EINVAL);
    o.tries = 1;
    o.congestion_sweeps = -1;
    CHECK(topomap_map_topdown(m, &p, alloc, 4, 1, &o, pe_of) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "congestion_sweeps >= 0") != NULL);
    o.congestion_sweeps = 0;
    o.flow_min = -1;
    CHECK(topomap_map_topdown(m, &p, alloc, 4, 1, &o, pe_of) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "flow_min >= 0") != NULL);
    o.flow_min = 0;
    CHECK(topomap_map_topdown(m, &p, alloc, 3, 1, &o, pe_of) == TOPOMAP_EINVAL); /* 4 processes, 3 PEs */
    o.run.progress = stop_at_once;
    CHECK(topomap_map_topdown(m, &p, alloc, 4, 1, &o, pe_of) == TOPOMAP_ECANCELED);
    free_pattern(&p);
    topomap_machine_destroy(m);
}

/* The search judges its tries in eighths of a sweep, at least 4096: on the
   embedding of a 128 x 128 stencil (12,288 processes on a node boundary,
   nothing to gain) it ends after the first 4096 tries instead of trying all
   12,288; from a random placement, where every eighth gains, it goes on
   and lowers J. */
static void test_search_stops_when_it_stalls(void)
{
    topomap_machine *m = torus2(16, 32, 32);
    topomap_pattern p = stencil(128, 128);
    int32_t n = p.n, *alloc = malloc((size_t)n * sizeof *alloc), *pe_of = malloc((size_t)n * sizeof *pe_of);
    int64_t nnz = p.indptr[n], *xadj = malloc(((size_t)n + 1) * sizeof *xadj);
    int32_t *adj = malloc(2 * (size_t)nnz * sizeof *adj);
    double *w = malloc(2 * (size_t)nnz * sizeof *w);
    for (int32_t i = 0; i < n; i++) alloc[i] = i;
    topomap_alloc_nodes *an = NULL;
    CHECK(topomap_alloc_nodes_create(m, alloc, n, 1, &an) == 0);
    CHECK(topomap_ugraph_from_pattern(&p, xadj, adj, w) == 0);
    topomap_ugraph g = {n, xadj, adj, w, NULL};
    topomap_run_options run;
    memset(&run, 0, sizeof run);
    topomap_i_qap_search_options o = {1, 4, 2, 64};
    for (int shuffled = 0; shuffled < 2; shuffled++) {
        for (int32_t r = 0; r < n; r++) {
            int32_t x = r % 128, y = r / 128;
            pe_of[r] = 16 * (x / 4 + 32 * (y / 4)) + x % 4 + 4 * (y % 4);
        }
        uint64_t state = 12345;
        for (int32_t i = n - 1; shuffled && i > 0; i--) {
            int32_t j = (int32_t)(lcg(&state) % (uint32_t)(i + 1)), tmp = pe_of[i];
            pe_of[i] = pe_of[j];
            pe_of[j] = tmp;
        }
        double before = qap(m, &p, pe_of);
        topomap_i_ticker t = {&run, "test", 0, 1, 0, TOPOMAP_I_TICK};
        CHECK(topomap_i_qap_search(m, &p, &g, an, &o, &t, pe_of) == 0);
        double after = qap(m, &p, pe_of);
        if (shuffled) {
            CHECK(t.work > 4096);
            CHECK(after < 0.8 * before); /* 1,042,560 -> 783,486 */
        } else {
            CHECK(t.work == 4096);
            CHECK(after == before);
        }
    }
    topomap_alloc_nodes_destroy(an);
    topomap_machine_destroy(m);
    free_pattern(&p);
    free(alloc);
    free(pe_of);
    free(xadj);
    free(adj);
    free(w);
}

/* Dense random traffic (256 processes, 30 % of the pairs, 1, 4 or 9 bytes)
   in rank order on a 4 x 4 torus of 16-PE nodes: the graph has fewer than
   2^16 edge ends, so a sweep stops after 2^20 (plus the one hot process
   that crosses it; without the bound 3 sweeps scan more than that), and
   the maximum congestion still drops. */
static void test_congestion_sweeps_are_bounded_under_dense_traffic(void)
{
    topomap_machine *m = torus2(16, 4, 4);
    int32_t n = 256, alloc[256], pe_of[256], deg_max = 0;
    int64_t *ip = calloc((size_t)n + 1, sizeof *ip);
    int32_t *ix = malloc((size_t)n * n * sizeof *ix);
    double *by = malloc((size_t)n * n * sizeof *by);
    uint64_t state = 7;
    int64_t k = 0;
    for (int32_t u = 0; u < n; u++) {
        for (int32_t v = 0; v < n; v++) {
            uint32_t r = lcg(&state);
            if (u != v && r % 10 < 3) {
                ix[k] = v;
                by[k++] = (double)((r / 10 % 3 + 1) * (r / 10 % 3 + 1));
            }
        }
        ip[u + 1] = k;
    }
    topomap_pattern p = {n, ip, ix, by};
    int64_t *xadj = malloc(((size_t)n + 1) * sizeof *xadj);
    int32_t *adj = malloc(2 * (size_t)k * sizeof *adj);
    double *w = malloc(2 * (size_t)k * sizeof *w);
    CHECK(topomap_ugraph_from_pattern(&p, xadj, adj, w) == 0);
    for (int32_t u = 0; u < n; u++) {
        int32_t deg = (int32_t)(xadj[u + 1] - xadj[u]);
        alloc[u] = pe_of[u] = u;
        deg_max = deg > deg_max ? deg : deg_max;
    }
    topomap_ugraph g = {n, xadj, adj, w, NULL};
    topomap_alloc_nodes *an = NULL;
    CHECK(topomap_alloc_nodes_create(m, alloc, n, 1, &an) == 0);
    topomap_run_options run;
    memset(&run, 0, sizeof run);
    topomap_i_ticker t = {&run, "test", 0, 1, 0, TOPOMAP_I_TICK};
    topomap_i_congestion_search_options o = {3, 3, 64};
    double before = metrics(m, &p, pe_of).max_congestion;
    CHECK(TOPOMAP_I_CONGESTION_SWEEP_WORK * xadj[n] < TOPOMAP_I_CONGESTION_SWEEP_WORK_MIN);
    CHECK(topomap_i_congestion_search(m, &p, &g, an, &o, &t, pe_of) == 0);
    /* one hot process's tries: 64 partners of two rows each, and a move per neighbour */
    int64_t one = 64 * (1 + 2 * (int64_t)deg_max) + (int64_t)deg_max * (1 + deg_max);
    CHECK(t.work > TOPOMAP_I_CONGESTION_SWEEP_WORK_MIN);
    CHECK(t.work <= 3 * (TOPOMAP_I_CONGESTION_SWEEP_WORK_MIN + one));
    double after = metrics(m, &p, pe_of).max_congestion;
    CHECK(after < before);
    int32_t load[256] = {0}, most = 0;
    for (int32_t u = 0; u < n; u++) most = ++load[pe_of[u]] > most ? load[pe_of[u]] : most;
    CHECK(most == 1);
    topomap_alloc_nodes_destroy(an);
    topomap_machine_destroy(m);
    free_pattern(&p);
    free(xadj);
    free(adj);
    free(w);
}

/* The search judges a change by the evaluator's shares of J (eval_shares.c,
   checked against a recomputation in debug builds): on a one-way
   ring of 8 nodes (the distance from a to b is b - a mod 8, not b to a) of
   4 PEs in 2 sockets (distance 1 within a socket, 3 across), 2 processes
   per PE so that moves have room, random traffic with messages both ways
   between some pairs.  J never rises, and the mapping stays valid. */
static void test_search_on_one_way_routes(void)
{
    int32_t src[8], dst[8], groups[8] = {0, 0, 1, 1, 0, 0, 0, 0};
    double costs[2] = {1, 3};
    for (int32_t i = 0; i < 8; i++) {
        src[i] = i;
        dst[i] = (i + 1) % 8;
    }
    topomap_node_tree tree = {4, 2, groups, costs};
    topomap_graph_desc gd = {8, 0, 8, src, dst, NULL, TOPOMAP_ROUTING_SHORTEST, 0, NULL, NULL, NULL, NULL};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_graph(&tree, &gd, &m) == 0);
    if (!m) return;
    CHECK(topomap_machine_distance(m, 0, 4) == 1 && topomap_machine_distance(m, 4, 0) == 7);
    int32_t n = 48, alloc[32], pe_of[48];
    for (int32_t i = 0; i < 32; i++) alloc[i] = i;
    topomap_alloc_nodes *an = NULL;
    CHECK(topomap_alloc_nodes_create(m, alloc, 32, 2, &an) == 0);
    uint64_t state = 99;
    for (int trial = 0; trial < 20; trial++) {
        int64_t *ip = calloc((size_t)n + 1, sizeof *ip);
        int32_t *ix = malloc((size_t)n * n * sizeof *ix);
        double *by = malloc((size_t)n * n * sizeof *by);
        int64_t k = 0;
        for (int32_t u = 0; u < n; u++) {
            for (int32_t v = 0; v < n; v++)
                if (v != u && lcg(&state) % 8 == 0) {
                    ix[k] = v;
                    by[k++] = 1 + lcg(&state) % 9;
                }
            ip[u + 1] = k;
        }
        topomap_pattern p = {n, ip, ix, by};
        int64_t *xadj = malloc(((size_t)n + 1) * sizeof *xadj);
        int32_t *adj = malloc(2 * (size_t)k * sizeof *adj + 1);
        double *w = malloc(2 * (size_t)k * sizeof *w + 1);
        CHECK(topomap_ugraph_from_pattern(&p, xadj, adj, w) == 0);
        topomap_ugraph g = {n, xadj, adj, w, NULL};
        int32_t load[32] = {0};
        for (int32_t u = 0; u < n; u++) { /* random PEs with room */
            int32_t pe = (int32_t)(lcg(&state) % 32);
            while (load[pe] == 2) pe = (pe + 1) % 32;
            load[pe]++;
            pe_of[u] = pe;
        }
        double before = qap(m, &p, pe_of);
        topomap_run_options run;
        memset(&run, 0, sizeof run);
        topomap_i_ticker t = {&run, "test", 0, 1, 0, TOPOMAP_I_TICK};
        topomap_i_qap_search_options o = {(uint64_t)trial, 4, 2, 64};
        CHECK(topomap_i_qap_search(m, &p, &g, an, &o, &t, pe_of) == 0);
        double after = qap(m, &p, pe_of);
        CHECK(after < before); /* 48 processes placed at random always gain */
        CHECK(valid(&p, pe_of, 32, 2));
        free_pattern(&p);
        free(xadj);
        free(adj);
        free(w);
    }
    topomap_alloc_nodes_destroy(an);
    topomap_machine_destroy(m);
}

int main(void)
{
    test_search_on_one_way_routes();
    test_torus_embedding();
    test_search_stops_when_it_stalls();
    test_congestion_sweeps_are_bounded_under_dense_traffic();
    test_fattree_levels_and_properties();
    test_errors_and_cancel();
    return check_report();
}

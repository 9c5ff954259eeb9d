/* The max-flow refinement of a bisection (partition_flow.c): the minimum
   cut against brute force, a jagged grid cut made straight, and on random
   graphs a cut that never grows, limits that hold and exact part weights;
   cancellation; the partitioner's `flows` option end to end. */
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "partition_internal.h"
#include "check.h"

typedef struct {
    int32_t n;
    int64_t xadj[257];
    int32_t adj[4096];
    double ew[4096], vw[256];
} graph;

static void add_edge(double *dense, int32_t n, int32_t a, int32_t b, double w)
{
    dense[a * n + b] += w;
    dense[b * n + a] += w;
}

static void from_dense(graph *g, const double *dense, int32_t n)
{
    g->n = n;
    int64_t len = 0;
    for (int32_t v = 0; v < n; v++) {
        g->xadj[v] = len;
        for (int32_t u = 0; u < n; u++)
            if (u != v && dense[v * n + u] > 0) {
                g->adj[len] = u;
                g->ew[len++] = dense[v * n + u];
            }
    }
    g->xadj[n] = len;
}

static topomap_i_pgraph view(graph *g)
{
    topomap_i_pgraph p = {g->n, g->xadj, g->adj, g->ew, g->vw, 0, 0, 0, {0}};
    topomap_i_pgraph_weigh(&p);
    return p;
}

static void weights(const topomap_i_pgraph *g, const int32_t *part, double *pw)
{
    pw[0] = pw[1] = 0;
    for (int32_t v = 0; v < g->n; v++) pw[part[v]] += g->vw[v];
}

static topomap_i_pctx ctx(void)
{
    topomap_i_pctx c = {0};
    topomap_rng_seed(&c.rng, 1);
    c.ntries = 1;
    c.next_check = 1 << 16;
    return c;
}

/* Two anchors too heavy for any band, every light vertex on the boundary:
   the band is all light vertices, so the refined cut must be the minimum
   cut between the anchors, found here over every assignment. */
static void test_minimum_cut_against_brute_force(void)
{
    topomap_rng r;
    topomap_rng_seed(&r, 7);
    for (int trial = 0; trial < 60; trial++) {
        int32_t light = 3 + (int32_t)topomap_rng_below(&r, 10), n = light + 2, A = light, B = light + 1;
        double dense[256] = {0};
        int32_t part[16];
        for (int32_t v = 0; v < light; v++) part[v] = (int32_t)topomap_rng_below(&r, 2);
        part[A] = 0;
        part[B] = 1;
        for (int32_t a = 0; a < n; a++)
            for (int32_t b = a + 1; b < n; b++)
                if (topomap_rng_uniform(&r) < 0.35) add_edge(dense, n, a, b, 1 + (double)topomap_rng_below(&r, 5));
        for (int32_t v = 0; v < light; v++) add_edge(dense, n, v, part[v] ? A : B, 0.5); /* on the boundary */
        graph G;
        from_dense(&G, dense, n);
        double lightw = 0;
        for (int32_t v = 0; v < light; v++) lightw += G.vw[v] = 1 + (double)topomap_rng_below(&r, 3);
        G.vw[A] = G.vw[B] = 100 * lightw;
        topomap_i_pgraph g = view(&G);
        double pw[2], limit[2], before = topomap_i_cut(&g, part);
        weights(&g, part, pw);
        limit[0] = pw[0] + lightw;
        limit[1] = pw[1] + lightw;
        topomap_i_pctx c = ctx();
        CHECK(topomap_i_flow_refine(&g, limit, part, pw, &c, NULL) == 0);
        double best = INFINITY;
        int32_t trialpart[16];
        for (int32_t mask = 0; mask < (1 << light); mask++) {
            for (int32_t v = 0; v < light; v++) trialpart[v] = (mask >> v) & 1;
            trialpart[A] = 0;
            trialpart[B] = 1;
            best = fmin(best, topomap_i_cut(&g, trialpart));
        }
        double after = topomap_i_cut(&g, part), check[2];
        CHECK(close_to(after, best));
        CHECK(after <= before + 1e-9);
        CHECK(part[A] == 0 && part[B] == 1);
        weights(&g, part, check);
        CHECK(close_to(check[0], pw[0]) && close_to(check[1], pw[1]));
    }
}

/* A 12 x 4 grid split with a jagged boundary (rows end at 5, 7, 5, 7
   columns: cut 10, sides of 24). */
static topomap_i_pgraph jagged_grid(graph *G, int32_t *part)
{
    int32_t W = 12, H = 4, n = W * H;
    static double dense[48 * 48];
    memset(dense, 0, sizeof dense);
    for (int32_t y = 0; y < H; y++)
        for (int32_t x = 0; x < W; x++) {
            if (x + 1 < W) add_edge(dense, n, y * W + x, y * W + x + 1, 1);
            if (y + 1 < H) add_edge(dense, n, y * W + x, (y + 1) * W + x, 1);
            part[y * W + x] = x >= (y % 2 ? 7 : 5);
        }
    from_dense(G, dense, n);
    for (int32_t v = 0; v < n; v++) G->vw[v] = 1;
    return view(G);
}

/* A 12 x 4 grid split with a jagged boundary (rows end at 5, 7, 5, 7
   columns: cut 10) has a straight balanced cut of 4 the band reaches. */
static void test_jagged_grid_becomes_straight(void)
{
    int32_t part[48];
    graph G;
    topomap_i_pgraph g = jagged_grid(&G, part);
    double pw[2], limit[2] = {26.4, 26.4};
    weights(&g, part, pw);
    CHECK(close_to(topomap_i_cut(&g, part), 10));
    topomap_i_pctx c = ctx();
    CHECK(topomap_i_flow_refine(&g, limit, part, pw, &c, NULL) == 0);
    CHECK(close_to(topomap_i_cut(&g, part), 4));
    CHECK(pw[0] <= limit[0] && pw[1] <= limit[1]);
}

static int stop(void *ctx, double fraction)
{
    (void)fraction;
    ++*(int *)ctx;
    return 1;
}

/* The refinement counts its work and a callback that asks to stop ends it
   with TOPOMAP_ECANCELED, the bisection still valid. */
static void test_cancellation(void)
{
    int32_t part[48];
    graph G;
    topomap_i_pgraph g = jagged_grid(&G, part);
    double pw[2], limit[2] = {26.4, 26.4}, check[2];
    weights(&g, part, pw);
    int calls = 0;
    topomap_i_pctx c = ctx();
    c.next_check = 0;
    c.progress = stop;
    c.progress_ctx = &calls;
    CHECK(topomap_i_flow_refine(&g, limit, part, pw, &c, NULL) == TOPOMAP_ECANCELED && calls == 1);
    weights(&g, part, check);
    CHECK(close_to(check[0], pw[0]) && close_to(check[1], pw[1]));
}

/* Random weighted graphs and bisections within random limits. */
static void test_random_bisections(void)
{
    topomap_rng r;
    topomap_rng_seed(&r, 11);
    for (int trial = 0; trial < 200; trial++) {
        int32_t n = 2 + (int32_t)topomap_rng_below(&r, 60), part[64];
        static double dense[64 * 64];
        memset(dense, 0, sizeof dense);
        double p = 0.02 + 0.3 * topomap_rng_uniform(&r);
        for (int32_t a = 0; a < n; a++)
            for (int32_t b = a + 1; b < n; b++)
                if (topomap_rng_uniform(&r) < p) add_edge(dense, n, a, b, topomap_rng_uniform(&r) * 10 + 0.01);
        graph G;
        from_dense(&G, dense, n);
        for (int32_t v = 0; v < n; v++) {
            G.vw[v] = trial % 2 ? 1 : 0.5 + (double)topomap_rng_below(&r, 4);
            part[v] = (int32_t)topomap_rng_below(&r, 2);
        }
        topomap_i_pgraph g = view(&G);
        double pw[2], limit[2], check[2], before = topomap_i_cut(&g, part);
        weights(&g, part, pw);
        for (int i = 0; i < 2; i++) limit[i] = pw[i] * (1 + topomap_rng_uniform(&r) * 0.3);
        topomap_i_pctx c = ctx();
        int changed = -1;
        CHECK(topomap_i_flow_refine(&g, limit, part, pw, &c, &changed) == 0);
        CHECK(topomap_i_cut(&g, part) <= before * (1 + 1e-12) + 1e-12);
        CHECK(changed == (topomap_i_cut(&g, part) < before));
        weights(&g, part, check);
        CHECK(close_to(check[0], pw[0]) && close_to(check[1], pw[1]));
        CHECK(pw[0] <= limit[0] * (1 + 1e-9) && pw[1] <= limit[1] * (1 + 1e-9));
        for (int32_t v = 0; v < n; v++) CHECK(part[v] == 0 || part[v] == 1);
    }
}

/* The option through topomap_partition: a valid, seeded bisection of a
   grid that cuts no more than FM alone on these seeds' sum; bad values fail. */
static void test_partition_option(void)
{
    int32_t W = 40, H = 24, n = W * H;
    int64_t *xadj = malloc(((size_t)n + 1) * sizeof *xadj);
    int32_t *adj = malloc(4 * (size_t)n * sizeof *adj), *part = malloc((size_t)n * sizeof *part),
            *again = malloc((size_t)n * sizeof *again);
    int64_t len = 0;
    for (int32_t v = 0; v < n; v++) {
        int32_t x = v % W, y = v / W;
        xadj[v] = len;
        if (y > 0) adj[len++] = v - W;
        if (x > 0) adj[len++] = v - 1;
        if (x + 1 < W) adj[len++] = v + 1;
        if (y + 1 < H) adj[len++] = v + W;
    }
    xadj[n] = len;
    topomap_ugraph g = {n, xadj, adj, NULL, NULL};
    double with = 0, without = 0, pw[2], cut;
    for (uint64_t seed = 0; seed < 6; seed++)
        for (int flows = 0; flows < 2; flows++) {
            topomap_partition_options o;
            topomap_partition_options_init(&o);
            o.seed = seed;
            o.ntries = 1;
            o.flows = flows;
            CHECK(topomap_partition(&g, 2, NULL, &o, part, pw, &cut) == 0);
            CHECK(pw[0] <= 1.03 * n / 2 + 1e-9 && pw[1] <= 1.03 * n / 2 + 1e-9);
            *(flows ? &with : &without) += cut;
            CHECK(topomap_partition(&g, 2, NULL, &o, again, NULL, NULL) == 0);
            CHECK(!memcmp(part, again, (size_t)n * sizeof *part));
        }
    CHECK(with <= without);
    topomap_partition_options o;
    topomap_partition_options_init(&o);
    o.flows = 2;
    CHECK(topomap_partition(&g, 2, NULL, &o, part, NULL, NULL) == TOPOMAP_EINVAL);
    free(xadj);
    free(adj);
    free(part);
    free(again);
}

int main(void)
{
    test_minimum_cut_against_brute_force();
    test_jagged_grid_becomes_straight();
    test_random_bisections();
    test_cancellation();
    test_partition_option();
    return check_report();
}

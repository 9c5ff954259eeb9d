/* The graph partitioner on its own, under ASan/UBSan: hand-worked graphs,
   every error path, cancellation, and random graphs checked against the
   balance bounds of partition.h recomputed here from their definition. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "check.h"
#include "partition_internal.h"

/* A graph built edge by edge (sorted CSR out). */
typedef struct {
    int32_t n;
    int64_t m; /* undirected edges */
    int32_t *eu, *ev;
    double *ew;
    int64_t *xadj;
    int32_t *adj;
    double *w;
} builder;

static void b_init(builder *b, int32_t n, int64_t max_edges)
{
    b->n = n;
    b->m = 0;
    b->eu = malloc((size_t)max_edges * sizeof *b->eu);
    b->ev = malloc((size_t)max_edges * sizeof *b->ev);
    b->ew = malloc((size_t)max_edges * sizeof *b->ew);
    b->xadj = calloc((size_t)n + 1, sizeof *b->xadj);
    b->adj = malloc((size_t)(2 * max_edges + 1) * sizeof *b->adj);
    b->w = malloc((size_t)(2 * max_edges + 1) * sizeof *b->w);
}

static void b_edge(builder *b, int32_t u, int32_t v, double w)
{
    b->eu[b->m] = u;
    b->ev[b->m] = v;
    b->ew[b->m++] = w;
}

/* Sorted CSR through topomap_ugraph_from_pattern (one direction per edge, so
   the symmetrised weight is exactly w). */
static topomap_ugraph b_graph(builder *b)
{
    int64_t *ip = calloc((size_t)b->n + 1, sizeof *ip);
    int32_t *idx = malloc((size_t)(b->m + 1) * sizeof *idx);
    double *by = malloc((size_t)(b->m + 1) * sizeof *by);
    for (int64_t e = 0; e < b->m; e++) ip[b->eu[e] + 1]++;
    for (int32_t i = 0; i < b->n; i++) ip[i + 1] += ip[i];
    int64_t *fill = malloc(((size_t)b->n + 1) * sizeof *fill);
    memcpy(fill, ip, ((size_t)b->n + 1) * sizeof *fill);
    for (int64_t e = 0; e < b->m; e++) {
        idx[fill[b->eu[e]]] = b->ev[e];
        by[fill[b->eu[e]]++] = b->ew[e];
    }
    topomap_pattern p = {b->n, ip, idx, by};
    CHECK(topomap_ugraph_from_pattern(&p, b->xadj, b->adj, b->w) == TOPOMAP_OK);
    free(ip);
    free(idx);
    free(by);
    free(fill);
    topomap_ugraph g = {b->n, b->xadj, b->adj, b->w, NULL};
    return g;
}

static void b_free(builder *b)
{
    free(b->eu);
    free(b->ev);
    free(b->ew);
    free(b->xadj);
    free(b->adj);
    free(b->w);
}

/* Reference cut and weights, from the definitions. */
static double ref_cut(const topomap_ugraph *g, const int32_t *part)
{
    double cut = 0;
    for (int32_t u = 0; u < g->n; u++)
        for (int64_t e = g->xadj[u]; e < g->xadj[u + 1]; e++)
            if (part[u] != part[g->adjncy[e]]) cut += g->adjwgt ? g->adjwgt[e] : 1;
    return cut / 2;
}

/* partition.h's bound L_i, written again from its comment. */
static double ref_limit(const topomap_ugraph *g, int32_t k, const double *targets, int hard, double eps, int32_t i)
{
    double W = 0, wmin = INFINITY, wmax = 0, sum = 0;
    for (int32_t v = 0; v < g->n; v++) {
        double w = g->vwgt ? g->vwgt[v] : 1;
        W += w;
        wmin = fmin(wmin, w);
        wmax = fmax(wmax, w);
    }
    if (hard) return targets[i];
    for (int32_t j = 0; j < k; j++) sum += targets ? targets[j] : 1;
    double t = W * (targets ? targets[i] : 1) / sum;
    double r = wmin == wmax ? (wmax > 0 ? wmax * ceil(t / wmax - 1e-9) : 0) : t + wmax;
    return fmax((1 + eps) * t, r);
}

static int respects_bounds(const topomap_ugraph *g, int32_t k, const double *targets, int hard, double eps,
                           const int32_t *part, const double *pw)
{
    double *w = calloc((size_t)k, sizeof *w);
    int ok = 1;
    for (int32_t v = 0; v < g->n; v++) {
        if (part[v] < 0 || part[v] >= k) ok = 0;
        else w[part[v]] += g->vwgt ? g->vwgt[v] : 1;
    }
    for (int32_t i = 0; i < k && ok; i++)
        ok = w[i] <= ref_limit(g, k, targets, hard, eps, i) * (1 + 1e-12) + 1e-12 && close_to(w[i], pw[i]);
    free(w);
    return ok;
}

static void two_cliques(builder *b, int32_t size)
{
    b_init(b, 2 * size, (int64_t)size * size + 1);
    for (int c = 0; c < 2; c++)
        for (int32_t i = 0; i < size; i++)
            for (int32_t j = i + 1; j < size; j++) b_edge(b, c * size + i, c * size + j, 1);
    b_edge(b, size - 1, size, 1);
}

static void grid(builder *b, int32_t nx, int32_t ny)
{
    b_init(b, nx * ny, 2 * (int64_t)nx * ny);
    for (int32_t y = 0; y < ny; y++)
        for (int32_t x = 0; x < nx; x++) {
            if (x + 1 < nx) b_edge(b, y * nx + x, y * nx + x + 1, 1);
            if (y + 1 < ny) b_edge(b, y * nx + x, (y + 1) * nx + x, 1);
        }
}

static void test_two_cliques(void)
{
    builder b;
    two_cliques(&b, 6);
    topomap_ugraph g = b_graph(&b);
    int32_t part[12], again[12];
    double pw[2], cut = -1;
    CHECK(topomap_partition(&g, 2, NULL, NULL, part, pw, &cut) == TOPOMAP_OK);
    CHECK(cut == 1 && pw[0] == 6 && pw[1] == 6);
    for (int i = 1; i < 6; i++) CHECK(part[i] == part[0] && part[6 + i] == part[6]);
    CHECK(part[0] != part[6]);
    CHECK(topomap_partition(&g, 2, NULL, NULL, again, NULL, NULL) == TOPOMAP_OK);
    CHECK(memcmp(part, again, sizeof part) == 0);
    b_free(&b);
}

static void test_grid_quadrants(void)
{
    builder b;
    grid(&b, 16, 16);
    topomap_ugraph g = b_graph(&b);
    int32_t part[256];
    double pw[4], cut;
    for (uint64_t seed = 0; seed < 5; seed++) {
        topomap_partition_options opt;
        topomap_partition_options_init(&opt);
        opt.seed = seed;
        CHECK(topomap_partition(&g, 4, NULL, &opt, part, pw, &cut) == TOPOMAP_OK);
        /* 32 is optimal (quadrants); within 25% of it, as test_partition.py documents */
        CHECK(cut >= 32 && cut <= 40);
        CHECK(respects_bounds(&g, 4, NULL, 0, 0.03, part, pw));
        CHECK(close_to(cut, ref_cut(&g, part)));
    }
    b_free(&b);
}

static void test_hard_capacities(void)
{
    builder b;
    grid(&b, 6, 5);
    topomap_ugraph g = b_graph(&b);
    int32_t part[30];
    double caps[4] = {8, 8, 8, 6}, pw[30], cut;
    topomap_partition_options opt;
    topomap_partition_options_init(&opt);
    opt.hard = 1;
    for (uint64_t seed = 0; seed < 20; seed++) {
        opt.seed = seed;
        opt.recursive = (int)(seed & 1);
        CHECK(topomap_partition(&g, 4, caps, &opt, part, pw, &cut) == TOPOMAP_OK);
        for (int i = 0; i < 4; i++) CHECK(pw[i] == caps[i]);
    }
    /* a partially used last node: 30 processes on 4 x 8 slots */
    double roomy[4] = {8, 8, 8, 8};
    CHECK(topomap_partition(&g, 4, roomy, &opt, part, pw, &cut) == TOPOMAP_OK);
    for (int i = 0; i < 4; i++) CHECK(pw[i] <= 8);
    /* k = n with capacity 1: every vertex alone, everything cut */
    double ones[30];
    for (int i = 0; i < 30; i++) ones[i] = 1;
    CHECK(topomap_partition(&g, 30, ones, &opt, part, pw, &cut) == TOPOMAP_OK);
    CHECK(cut == 49);
    for (int i = 0; i < 30; i++) CHECK(pw[i] == 1);
    b_free(&b);
}

static void test_symmetrise(void)
{
    /* 0 -> 2 (1), 0 -> 1 (2), 1 -> 0 (3), 2 -> 1 (4): rows given unsorted */
    int64_t ip[4] = {0, 2, 3, 4};
    int32_t idx[4] = {2, 1, 0, 1};
    double by[4] = {1, 2, 3, 4};
    topomap_pattern p = {3, ip, idx, by};
    int64_t x[4];
    int32_t a[8];
    double w[8];
    CHECK(topomap_ugraph_from_pattern(&p, x, a, w) == TOPOMAP_OK);
    CHECK(x[0] == 0 && x[1] == 2 && x[2] == 4 && x[3] == 6);
    CHECK(a[0] == 1 && w[0] == 5 && a[1] == 2 && w[1] == 1);
    CHECK(a[2] == 0 && w[2] == 5 && a[3] == 2 && w[3] == 4);
    CHECK(a[4] == 0 && w[4] == 1 && a[5] == 1 && w[5] == 4);
    topomap_ugraph g = {3, x, a, w, NULL};
    CHECK(topomap_ugraph_validate(&g) == TOPOMAP_OK);

    /* a hub whose row (> 32 entries, reverse order) takes the heap sort */
    enum { H = 100 };
    int64_t hip[H + 1];
    int32_t hidx[H - 1];
    double hby[H - 1];
    hip[0] = 0;
    for (int i = 0; i < H; i++) hip[i + 1] = H - 1; /* row 0 holds every message */
    for (int i = 0; i < H - 1; i++) {
        hidx[i] = H - 1 - i;
        hby[i] = H - 1 - i;
    }
    topomap_pattern hub = {H, hip, hidx, hby};
    int64_t hx[H + 1];
    int32_t ha[2 * (H - 1)];
    double hw[2 * (H - 1)];
    CHECK(topomap_ugraph_from_pattern(&hub, hx, ha, hw) == TOPOMAP_OK);
    CHECK(hx[1] == H - 1 && hx[H] == 2 * (H - 1));
    int sorted = 1;
    for (int i = 0; i < H - 1; i++) sorted &= ha[i] == i + 1 && hw[i] == i + 1;
    CHECK(sorted);
    topomap_ugraph hg = {H, hx, ha, hw, NULL};
    CHECK(topomap_ugraph_validate(&hg) == TOPOMAP_OK);
    /* a star: matching stalls after one pair per level */
    int32_t part[H];
    double pw[3], cut;
    CHECK(topomap_partition(&hg, 3, NULL, NULL, part, pw, &cut) == TOPOMAP_OK);
    CHECK(respects_bounds(&hg, 3, NULL, 0, 0.03, part, pw) && close_to(cut, ref_cut(&hg, part)));
}

static int bad(const topomap_ugraph *g, const char *needle)
{
    int32_t part[8];
    int rc = topomap_partition(g, 2, NULL, NULL, part, NULL, NULL);
    if (rc != TOPOMAP_EINVAL || !strstr(topomap_last_error(), needle)) {
        fprintf(stderr, "expected EINVAL with '%s', got %d: %s\n", needle, rc, topomap_last_error());
        return 0;
    }
    return 1;
}

static void test_bad_graphs(void)
{
    int64_t x[4] = {0, 1, 2, 2};
    int32_t a[2] = {1, 0};
    double w[2] = {1, 1}, vw[3] = {1, 1, 1};
    topomap_ugraph g = {3, x, a, w, vw};
    CHECK(topomap_ugraph_validate(&g) == TOPOMAP_OK);
    w[1] = 2;
    CHECK(bad(&g, "edge 0 - 1 has weight 1 in row 0 but 2 in row 1"));
    w[1] = 1;
    w[0] = w[1] = NAN;
    CHECK(bad(&g, "edge 0 - 1 has weight nan"));
    w[0] = w[1] = -1;
    CHECK(bad(&g, "edge 0 - 1 has weight -1"));
    w[0] = w[1] = 1;
    vw[2] = -3;
    CHECK(bad(&g, "vertex 2 has weight -3"));
    vw[2] = NAN;
    CHECK(bad(&g, "vertex 2 has weight nan"));
    vw[2] = 1;
    a[1] = 2;
    CHECK(bad(&g, "edge 0 - 1 is stored in row 0 but not in row 1"));
    a[1] = 0;
    a[0] = 0;
    CHECK(bad(&g, "vertex 0 has a self loop"));
    a[0] = 7;
    CHECK(bad(&g, "vertex 0 has neighbour 7, out of range"));
    a[0] = 1;
    int64_t xd[4] = {0, 2, 1, 2};
    topomap_ugraph gd = {3, xd, a, w, NULL};
    CHECK(bad(&gd, "xadj decreases at vertex 1"));
    int64_t xu[3] = {0, 2, 4};
    int32_t au[4] = {1, 1, 0, 0};
    topomap_ugraph gu = {2, xu, au, NULL, NULL};
    CHECK(bad(&gu, "not sorted and unique (1 after 1)"));

    int32_t part[3];
    CHECK(topomap_partition(&g, 0, NULL, NULL, part, NULL, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "got 0") != NULL);
    topomap_partition_options opt;
    topomap_partition_options_init(&opt);
    opt.imbalance = NAN;
    CHECK(topomap_partition(&g, 2, NULL, &opt, part, NULL, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "imbalance") != NULL);
    topomap_partition_options_init(&opt);
    opt.ntries = 0;
    CHECK(topomap_partition(&g, 2, NULL, &opt, part, NULL, NULL) == TOPOMAP_EINVAL);
    topomap_partition_options_init(&opt);
    double tg[2] = {1, -1};
    CHECK(topomap_partition(&g, 2, tg, &opt, part, NULL, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "target of part 1 is -1") != NULL);
    tg[1] = 0;
    tg[0] = 0;
    CHECK(topomap_partition(&g, 2, tg, &opt, part, NULL, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "sum to 0") != NULL);

    opt.hard = 1;
    CHECK(topomap_partition(&g, 2, NULL, &opt, part, NULL, NULL) == TOPOMAP_EINVAL);
    double small[2] = {1, 1};
    CHECK(topomap_partition(&g, 2, small, &opt, part, NULL, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "capacities sum to 2, less than the total vertex weight 3") != NULL);
    double heavy_w[3] = {1, 5, 1}, caps[2] = {4, 4};
    g.vwgt = heavy_w;
    CHECK(topomap_partition(&g, 2, caps, &opt, part, NULL, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "vertex 1 weighs 5, more than the largest capacity 4") != NULL);
    double twos[3] = {2, 2, 2}, threes[2] = {3, 3};
    g.vwgt = twos;
    CHECK(topomap_partition(&g, 2, threes, &opt, part, NULL, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "capacities hold only 2 vertices of weight 2") != NULL);

    /* unequal weights that no packing fits: 2+2+2+1 into 3.5 + 3.5 */
    int64_t x4[5] = {0, 1, 2, 3, 4};
    int32_t a4[4] = {1, 0, 3, 2};
    double w4[4] = {1, 1, 1, 1}, v4[4] = {2, 2, 2, 1}, c4[2] = {3.5, 3.5};
    topomap_ugraph g4 = {4, x4, a4, w4, v4};
    int32_t p4[4];
    CHECK(topomap_partition(&g4, 2, c4, &opt, p4, NULL, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "NP-hard") != NULL);

    int32_t given[3] = {0, 3, 0};
    g.vwgt = NULL;
    CHECK(topomap_partition_refine(&g, 2, NULL, NULL, given, NULL, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "part[1] = 3 is out of range [0, 2)") != NULL);
    CHECK(topomap_partition_stats(&g, 2, given, NULL, NULL) == TOPOMAP_EINVAL);
}

typedef struct {
    int calls, cancel_at;
    double last;
    int monotone;
} watch;

static int watcher(void *ctx, double f)
{
    watch *w = ctx;
    if (f < w->last || f > 1) w->monotone = 0;
    w->last = f;
    return ++w->calls == w->cancel_at;
}

static void test_progress_and_cancel(void)
{
    builder b;
    grid(&b, 120, 120);
    topomap_ugraph g = b_graph(&b);
    int32_t *part = malloc(120 * 120 * sizeof *part);
    topomap_partition_options opt;
    for (int recursive = 0; recursive < 2; recursive++) {
        topomap_partition_options_init(&opt);
        opt.recursive = recursive;
        watch w = {0, -1, 0, 1};
        opt.progress = watcher;
        opt.progress_ctx = &w;
        CHECK(topomap_partition(&g, 16, NULL, &opt, part, NULL, NULL) == TOPOMAP_OK);
        CHECK(w.calls > 10 && w.monotone && w.last == 1);
        int total = w.calls;
        for (int at = 1; at < total; at += total / 7 + 1) {
            watch c = {0, at, 0, 1};
            opt.progress_ctx = &c;
            CHECK(topomap_partition(&g, 16, NULL, &opt, part, NULL, NULL) == TOPOMAP_ECANCELED);
            CHECK(c.calls == at && strstr(topomap_last_error(), "cancelled") != NULL);
        }
    }
    free(part);
    b_free(&b);
}

static void test_refine_and_stats(void)
{
    builder b;
    grid(&b, 8, 8);
    topomap_ugraph g = b_graph(&b);
    int32_t part[64];
    double pw[2], cut;
    /* stripes by column parity: balanced, every horizontal edge cut (56) */
    for (int v = 0; v < 64; v++) part[v] = v % 2;
    CHECK(topomap_partition_stats(&g, 2, part, pw, &cut) == TOPOMAP_OK);
    CHECK(cut == 56 && pw[0] == 32 && pw[1] == 32);
    CHECK(topomap_partition_refine(&g, 2, NULL, NULL, part, pw, &cut) == TOPOMAP_OK);
    CHECK(cut < 56 && close_to(cut, ref_cut(&g, part)) && respects_bounds(&g, 2, NULL, 0, 0.03, part, pw));
    /* everything in part 0: balancing must move half out */
    for (int v = 0; v < 64; v++) part[v] = 0;
    CHECK(topomap_partition_refine(&g, 2, NULL, NULL, part, pw, &cut) == TOPOMAP_OK);
    CHECK(respects_bounds(&g, 2, NULL, 0, 0.03, part, pw));
    b_free(&b);
}

/* A chain 0-1-...-11 in 4 full parts of 3, given as 0000 111 22 333: the
   part next to the overweight one is full, so the vertex it sheds must pass
   through part 1 (3 -> 1, 6 -> 2) to reach the part with room.  Moved out
   alone it would cost a cut edge: the path keeps the optimum of 3 cut edges
   with contiguous parts. */
static void test_balance_along_a_path(void)
{
    builder b;
    b_init(&b, 12, 11);
    for (int v = 0; v < 11; v++) b_edge(&b, v, v + 1, 1);
    topomap_ugraph g = b_graph(&b);
    int32_t part[12] = {0, 0, 0, 0, 1, 1, 1, 2, 2, 3, 3, 3};
    double caps[4] = {3, 3, 3, 3}, pw[4], cut;
    topomap_partition_options opt;
    topomap_partition_options_init(&opt);
    opt.hard = 1;
    CHECK(topomap_partition_refine(&g, 4, caps, &opt, part, pw, &cut) == TOPOMAP_OK);
    CHECK(cut == 3 && close_to(cut, ref_cut(&g, part)));
    for (int i = 0; i < 4; i++) CHECK(pw[i] == 3);
    for (int v = 0; v < 12; v++) CHECK(part[v] == part[3 * (v / 3)]);
    b_free(&b);
}

static void test_edge_cases(void)
{
    /* disconnected: three triangles, no edges between them */
    builder b;
    b_init(&b, 9, 9);
    for (int c = 0; c < 3; c++) {
        b_edge(&b, 3 * c, 3 * c + 1, 1);
        b_edge(&b, 3 * c + 1, 3 * c + 2, 1);
        b_edge(&b, 3 * c, 3 * c + 2, 1);
    }
    topomap_ugraph g = b_graph(&b);
    int32_t part[9];
    double pw[12], cut;
    CHECK(topomap_partition(&g, 3, NULL, NULL, part, pw, &cut) == TOPOMAP_OK);
    CHECK(cut == 0 && pw[0] == 3 && pw[1] == 3 && pw[2] == 3);
    /* k = 1 */
    CHECK(topomap_partition(&g, 1, NULL, NULL, part, pw, &cut) == TOPOMAP_OK);
    CHECK(cut == 0 && pw[0] == 9);
    /* k > n: some parts stay empty, none above its bound */
    CHECK(topomap_partition(&g, 12, NULL, NULL, part, pw, &cut) == TOPOMAP_OK);
    CHECK(respects_bounds(&g, 12, NULL, 0, 0.03, part, pw));
    /* zero-weight vertices */
    double vw[9] = {0, 0, 0, 1, 1, 1, 2, 2, 2};
    g.vwgt = vw;
    CHECK(topomap_partition(&g, 2, NULL, NULL, part, pw, &cut) == TOPOMAP_OK);
    CHECK(respects_bounds(&g, 2, NULL, 0, 0.03, part, pw));
    /* an edgeless graph */
    int64_t x1[3] = {0, 0, 0};
    topomap_ugraph empty = {2, x1, NULL, NULL, NULL};
    CHECK(topomap_partition(&empty, 2, NULL, NULL, part, pw, &cut) == TOPOMAP_OK);
    CHECK(cut == 0 && pw[0] == 1 && pw[1] == 1);
    b_free(&b);
}

static void test_random_graphs(void)
{
    topomap_rng r;
    topomap_rng_seed(&r, 42);
    for (int trial = 0; trial < 150; trial++) {
        int32_t n = 2 + (int32_t)topomap_rng_below(&r, 300);
        int64_t m = (int64_t)topomap_rng_below(&r, (uint64_t)n * 4 + 1);
        builder b;
        b_init(&b, n, m + 1);
        for (int64_t e = 0; e < m; e++) {
            int32_t u = (int32_t)topomap_rng_below(&r, (uint64_t)n), v = (int32_t)topomap_rng_below(&r, (uint64_t)n);
            if (u != v) b_edge(&b, u, v, 1 + (double)topomap_rng_below(&r, 9));
        }
        topomap_ugraph g = b_graph(&b);
        int32_t k = 1 + (int32_t)topomap_rng_below(&r, 20);
        int hard = (int)topomap_rng_below(&r, 2);
        double *vw = malloc((size_t)n * sizeof *vw), *targets = malloc((size_t)k * sizeof *targets);
        double *pw = malloc((size_t)k * sizeof *pw);
        int32_t *part = malloc((size_t)n * sizeof *part), *again = malloc((size_t)n * sizeof *again);
        int weighted = !hard && topomap_rng_below(&r, 2);
        for (int32_t v = 0; v < n; v++) vw[v] = weighted ? (double)topomap_rng_below(&r, 5) : 1;
        g.vwgt = vw;
        double sum = 0;
        for (int32_t i = 0; i < k; i++) sum += targets[i] = 1 + (double)topomap_rng_below(&r, 4);
        if (hard) /* capacities that just hold the n unit vertices */
            for (int32_t i = 0; i < k; i++) targets[i] = ceil(n * targets[i] / sum);
        topomap_partition_options opt;
        topomap_partition_options_init(&opt);
        opt.hard = hard;
        opt.seed = (uint64_t)trial;
        opt.recursive = (int)topomap_rng_below(&r, 2);
        opt.imbalance = 0.1 * (double)topomap_rng_below(&r, 3);
        const double *tg = hard || topomap_rng_below(&r, 2) ? targets : NULL;
        double cut;
        CHECK(topomap_partition(&g, k, tg, &opt, part, pw, &cut) == TOPOMAP_OK);
        CHECK(respects_bounds(&g, k, tg, hard, opt.imbalance, part, pw));
        CHECK(close_to(cut, ref_cut(&g, part)));
        CHECK(topomap_partition(&g, k, tg, &opt, again, NULL, NULL) == TOPOMAP_OK);
        CHECK(memcmp(part, again, (size_t)n * sizeof *part) == 0);
        free(vw);
        free(targets);
        free(pw);
        free(part);
        free(again);
        b_free(&b);
    }
}

/* The call's pool: a freed large block serves the next request it holds,
   the smallest such first; small and huge blocks are not kept; a full pool
   drops its smallest block. */
static void test_pool(void)
{
    topomap_i_pool p = {0};
    size_t big = (size_t)1 << 20, small = 64;
    char *a = topomap_i_palloc(&p, big), *b = topomap_i_palloc(&p, 2 * big), *s = topomap_i_palloc(&p, small);
    CHECK(a && b && s);
    memset(a, 1, big);
    memset(b, 2, 2 * big);
    topomap_i_pfree(&p, b);
    topomap_i_pfree(&p, a);
    topomap_i_pfree(&p, s);
    CHECK(p.count == 2);
    CHECK(topomap_i_palloc(&p, big / 2) == a); /* the smaller of the two that hold it */
    CHECK(topomap_i_palloc(&p, big + 1) == b);
    CHECK(p.count == 0);
    char *c = topomap_i_palloc(&p, 3 * big); /* none holds it: a new block */
    CHECK(c && c != a && c != b);
    topomap_i_pfree(&p, a);
    topomap_i_pfree(&p, b);
    topomap_i_pfree(&p, c);
    char *huge = topomap_i_palloc(&p, (size_t)1 << 25);
    CHECK(huge != NULL);
    topomap_i_pfree(&p, huge);
    CHECK(p.count == 3);
    topomap_i_pool_free(&p);
    char *blocks[POOL_SLOTS + 1];
    for (int32_t i = 0; i <= POOL_SLOTS; i++) blocks[i] = topomap_i_palloc(&p, big + (size_t)i * 4096);
    for (int32_t i = 0; i <= POOL_SLOTS; i++) topomap_i_pfree(&p, blocks[i]);
    CHECK(p.count == POOL_SLOTS);
    size_t least = SIZE_MAX;
    for (int32_t i = 0; i < p.count; i++) least = p.cap[i] < least ? p.cap[i] : least;
    CHECK(least == big + 4096); /* the smallest, blocks[0], was dropped for the last */
    topomap_i_pool_free(&p);
    CHECK(p.count == 0);
    topomap_i_pfree(NULL, topomap_i_palloc(NULL, big));

    /* a graph whose levels pass through the pool: the same partition twice,
       its cut as counted */
    builder g;
    grid(&g, 150, 150);
    topomap_ugraph ug = b_graph(&g);
    int32_t k = 64, *part = malloc((size_t)ug.n * sizeof *part), *again = malloc((size_t)ug.n * sizeof *again);
    topomap_partition_options opt;
    topomap_partition_options_init(&opt);
    opt.recursive = 1;
    double cut, *pw = malloc((size_t)k * sizeof *pw);
    CHECK(topomap_partition(&ug, k, NULL, &opt, part, pw, &cut) == TOPOMAP_OK);
    CHECK(close_to(cut, ref_cut(&ug, part)));
    CHECK(respects_bounds(&ug, k, NULL, 0, opt.imbalance, part, pw));
    CHECK(topomap_partition(&ug, k, NULL, &opt, again, NULL, NULL) == TOPOMAP_OK);
    CHECK(memcmp(part, again, (size_t)ug.n * sizeof *part) == 0);
    free(pw);
    free(part);
    free(again);
    b_free(&g);
}

/* Breadth-first hops: a path 0-1-2-3 with a branch 1-4 and an isolated
   vertex 5, from one source and from two; bad sources, neighbours and rows
   are errors. */
static void test_bfs(void)
{
    static const int64_t xadj[7] = {0, 1, 4, 6, 7, 8, 8};
    static const int32_t adj[8] = {1, 0, 2, 4, 1, 3, 2, 1};
    topomap_ugraph g = {6, xadj, adj, NULL, NULL};
    int32_t dist[6], one[1] = {0}, two[3] = {3, 4, 3};
    CHECK(topomap_ugraph_bfs(&g, one, 1, dist) == TOPOMAP_OK);
    CHECK(dist[0] == 0 && dist[1] == 1 && dist[2] == 2 && dist[3] == 3 && dist[4] == 2 && dist[5] == -1);
    CHECK(topomap_ugraph_bfs(&g, two, 3, dist) == TOPOMAP_OK);   /* a repeated source counts once */
    CHECK(dist[0] == 2 && dist[1] == 1 && dist[2] == 1 && dist[3] == 0 && dist[4] == 0 && dist[5] == -1);
    CHECK(topomap_ugraph_bfs(&g, NULL, 0, dist) == TOPOMAP_OK && dist[0] == -1 && dist[5] == -1);
    int32_t outside[1] = {6};
    CHECK(topomap_ugraph_bfs(&g, outside, 1, dist) == TOPOMAP_EINVAL);
    static const int32_t bad_adj[8] = {1, 0, 2, 7, 1, 3, 2, 1};
    topomap_ugraph bad = {6, xadj, bad_adj, NULL, NULL};
    CHECK(topomap_ugraph_bfs(&bad, one, 1, dist) == TOPOMAP_EINVAL);
    static const int64_t bad_xadj[7] = {0, 4, 1, 6, 7, 8, 8};
    topomap_ugraph rows = {6, bad_xadj, adj, NULL, NULL};
    CHECK(topomap_ugraph_bfs(&rows, one, 1, dist) == TOPOMAP_EINVAL);
    static const int64_t shifted[7] = {-1, 1, 4, 6, 7, 8, 8};
    topomap_ugraph before = {6, shifted, adj, NULL, NULL};
    CHECK(topomap_ugraph_bfs(&before, one, 1, dist) == TOPOMAP_EINVAL);
}

int main(void)
{
    test_two_cliques();
    test_grid_quadrants();
    test_hard_capacities();
    test_symmetrise();
    test_bad_graphs();
    test_progress_and_cancel();
    test_refine_and_stats();
    test_balance_along_a_path();
    test_edge_cases();
    test_random_graphs();
    test_pool();
    test_bfs();
    return check_report();
}

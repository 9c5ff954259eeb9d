/* Kumar's mappers and the Hilbert curve: the node-level QAP's deltas against
   its cost and the evaluator, GRASP against exhaustive search, the fit
   tracker, the mappers' validity, determinism, ordering guarantees,
   cancellation and errors, and the curve's bijection and unit steps. */
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "map_qap.h"
#include "check.h"

/* ------------------------------------------------------------------ Hilbert */

static void test_hilbert_cube(int32_t ndims, int32_t bits)
{
    int64_t side = (int64_t)1 << bits, total = 1;
    for (int32_t i = 0; i < ndims; i++) total *= side;
    uint32_t *at = malloc((size_t)total * ndims * sizeof *at); /* point at each curve position */
    char *seen = calloc((size_t)total, 1);
    uint32_t c[8];
    int ok = 1;
    for (int64_t v = 0; v < total; v++) {
        int64_t r = v;
        for (int32_t i = 0; i < ndims; i++) {
            c[i] = (uint32_t)(r % side);
            r /= side;
        }
        uint64_t h = 0;
        CHECK(topomap_hilbert_index(ndims, bits, c, &h) == 0);
        if (h >= (uint64_t)total || seen[h]) {
            ok = 0;
            continue;
        }
        seen[h] = 1;
        memcpy(at + h * ndims, c, (size_t)ndims * sizeof *c);
    }
    CHECK(ok); /* a bijection onto 0..total-1 */
    for (int32_t i = 0; i < ndims; i++) CHECK(at[i] == 0); /* starts at the origin */
    int steps = 1;
    for (int64_t h = 0; ok && h + 1 < total; h++) {
        int64_t dist = 0;
        for (int32_t i = 0; i < ndims; i++) dist += labs((long)at[h * ndims + i] - (long)at[(h + 1) * ndims + i]);
        steps &= dist == 1;
    }
    CHECK(steps);
    free(at);
    free(seen);
}

static void test_hilbert(void)
{
    for (int32_t b = 1; b <= 4; b++) test_hilbert_cube(2, b);
    for (int32_t b = 1; b <= 3; b++) test_hilbert_cube(3, b);
    test_hilbert_cube(4, 2);
    test_hilbert_cube(5, 1);
    /* the first-order 2-D curve is the "U": (0,0) (0,1) (1,1) (1,0), axis 0 most significant */
    uint32_t pts[4][2] = {{0, 0}, {0, 1}, {1, 1}, {1, 0}};
    for (uint64_t k = 0; k < 4; k++) {
        uint64_t h = 99;
        CHECK(topomap_hilbert_index(2, 1, pts[k], &h) == 0 && h == k);
    }
    uint32_t c[2] = {4, 0}, big[3] = {0, 0, 0};
    uint64_t h;
    CHECK(topomap_hilbert_index(2, 2, c, &h) == TOPOMAP_EINVAL);     /* 4 is outside [0, 4) */
    CHECK(topomap_hilbert_index(3, 22, big, &h) == TOPOMAP_EINVAL);  /* 66 bits */
    CHECK(topomap_hilbert_index(0, 2, big, &h) == TOPOMAP_EINVAL);
    /* ordering a 3 x 5 mesh: a permutation sorted by curve index over the 8 x 8 square */
    int32_t dims[2] = {3, 5}, nodes[15], order[15];
    for (int32_t i = 0; i < 15; i++) nodes[i] = 14 - i;
    CHECK(topomap_hilbert_order(2, dims, 15, nodes, order) == 0);
    char hit[15] = {0};
    uint64_t last = 0;
    int sorted = 1;
    for (int32_t r = 0; r < 15; r++) {
        CHECK(order[r] >= 0 && order[r] < 15 && !hit[order[r]]);
        hit[order[r]] = 1;
        uint32_t xy[2] = {(uint32_t)(nodes[order[r]] % 3), (uint32_t)(nodes[order[r]] / 3)};
        CHECK(topomap_hilbert_index(2, 3, xy, &h) == 0);
        sorted &= r == 0 || h > last;
        last = h;
    }
    CHECK(sorted);
    CHECK(nodes[order[0]] == 0); /* the origin comes first */
    int32_t bad = 15;
    CHECK(topomap_hilbert_order(2, dims, 1, &bad, order) == TOPOMAP_EINVAL);
}

/* ------------------------------------------------------------------ QAP */

/* A random QAP of n facilities on m locations: symmetric flows (both rows), distances
   from a torus's hop counts between m random nodes. */
typedef struct {
    topomap_i_qap q;
    topomap_machine *mach;
    int32_t nodes[60]; /* location l is machine node nodes[l] */
} instance;

static void make_instance(instance *in, int32_t n, int32_t m, double density, uint64_t seed)
{
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    int32_t dims[3] = {4, 3, 5};
    uint8_t wrap[3] = {1, 1, 0};
    int32_t g = 0;
    double cost = 0;
    topomap_node_tree tree = {1, 1, &g, &cost};
    CHECK(topomap_machine_create_torus(&tree, 3, dims, wrap, &in->mach) == 0);
    topomap_i_qap *q = &in->q;
    memset(q, 0, sizeof *q);
    q->n = n;
    q->m = m;
    q->xadj = calloc((size_t)n + 1, sizeof *q->xadj);
    q->adj = malloc((size_t)n * n * sizeof *q->adj);
    q->w = malloc((size_t)n * n * sizeof *q->w);
    double *dense = calloc((size_t)n * n, sizeof *dense);
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = i + 1; j < n; j++)
            if (topomap_rng_uniform(&r) < density) dense[i * n + j] = dense[j * n + i] = 1 + (double)topomap_rng_below(&r, 9);
    for (int32_t i = 0; i < n; i++) {
        q->xadj[i + 1] = q->xadj[i];
        for (int32_t j = 0; j < n; j++)
            if (dense[i * n + j] > 0) {
                q->adj[q->xadj[i + 1]] = j;
                q->w[q->xadj[i + 1]++] = dense[i * n + j];
            }
    }
    free(dense);
    int32_t *nodes = in->nodes;
    for (int32_t i = 0; i < 60; i++) nodes[i] = i;
    topomap_rng_shuffle_i32(&r, nodes, 60);
    q->d = malloc((size_t)m * m * sizeof *q->d);
    for (int32_t a = 0; a < m; a++)
        for (int32_t b = 0; b < m; b++) q->d[a * m + b] = topomap_machine_route_count(in->mach, nodes[a], nodes[b]);
    q->size = malloc((size_t)n * sizeof *q->size);
    q->cap = malloc((size_t)m * sizeof *q->cap);
    for (int32_t j = 0; j < n; j++) q->size[j] = 1;
    for (int32_t l = 0; l < m; l++) q->cap[l] = 1;
}

static void free_instance(instance *in)
{
    free(in->q.xadj);
    free(in->q.adj);
    free(in->q.w);
    free(in->q.d);
    free(in->q.size);
    free(in->q.cap);
    topomap_machine_destroy(in->mach);
}

static void test_deltas(uint64_t seed)
{
    instance in;
    make_instance(&in, 9, 12, 0.4, seed);
    const topomap_i_qap *q = &in.q;
    topomap_rng r;
    topomap_rng_seed(&r, seed + 1000);
    int32_t perm[12], loc[9];
    for (int32_t i = 0; i < 12; i++) perm[i] = i;
    topomap_rng_shuffle_i32(&r, perm, 12);
    memcpy(loc, perm, sizeof loc);
    int ok = 1;
    for (int t = 0; t < 200; t++) {
        double before = topomap_i_qap_cost(q, loc);
        int32_t a = (int32_t)topomap_rng_below(&r, 9);
        if (topomap_rng_below(&r, 2)) {
            int32_t b = (int32_t)topomap_rng_below(&r, 9);
            if (a == b) continue;
            double d = topomap_i_qap_swap_delta(q, loc, a, b);
            int32_t x = loc[a];
            loc[a] = loc[b];
            loc[b] = x;
            ok &= close_to(topomap_i_qap_cost(q, loc) - before, d);
        } else {
            int32_t l = perm[9 + topomap_rng_below(&r, 3)], f = -1; /* one of the free locations */
            for (int32_t i = 9; i < 12; i++)
                if (perm[i] == l) f = i;
            double d = topomap_i_qap_move_delta(q, loc, a, l);
            perm[f] = loc[a];
            loc[a] = l;
            ok &= close_to(topomap_i_qap_cost(q, loc) - before, d);
        }
    }
    CHECK(ok);
    /* the cost is the evaluator's hop-bytes of the flows sent one way (i -> j, i < j) */
    int64_t ip[10] = {0};
    int32_t ix[81], pe[9];
    double by[81];
    for (int32_t i = 0; i < 9; i++) {
        ip[i + 1] = ip[i];
        for (int64_t e = q->xadj[i]; e < q->xadj[i + 1]; e++)
            if (q->adj[e] > i) {
                ix[ip[i + 1]] = q->adj[e];
                by[ip[i + 1]++] = q->w[e];
            }
        pe[i] = in.nodes[loc[i]];
    }
    topomap_pattern one_way = {9, ip, ix, by};
    topomap_metrics mt;
    CHECK(topomap_evaluate(in.mach, &one_way, pe, NULL, &mt, NULL) == 0);
    CHECK(close_to(mt.hop_bytes, topomap_i_qap_cost(q, loc)));
    free_instance(&in);
}

static double brute_force(const topomap_i_qap *q, int32_t *loc, int32_t depth, char *used)
{
    if (depth == q->n) return topomap_i_qap_cost(q, loc);
    double best = -1;
    for (int32_t l = 0; l < q->m; l++) {
        if (used[l] || q->size[depth] > q->cap[l]) continue;
        used[l] = 1;
        loc[depth] = l;
        double c = brute_force(q, loc, depth + 1, used);
        if (best < 0 || c < best) best = c;
        used[l] = 0;
        loc[depth] = -1;
    }
    return best;
}

static void test_grasp_optimum(uint64_t seed, int32_t n, int32_t m)
{
    instance in;
    make_instance(&in, n, m, 0.5, seed);
    int32_t loc[8], used_loc[8];
    char used[8] = {0};
    for (int32_t i = 0; i < n; i++) used_loc[i] = -1;
    double opt = brute_force(&in.q, used_loc, 0, used);
    topomap_grasp_options go;
    topomap_grasp_options_init(&go);
    go.iterations = 256;
    topomap_run_options run = {seed, NULL, NULL};
    CHECK(topomap_i_grasp_solve(&in.q, &go, &run, loc) == 0);
    CHECK(close_to(topomap_i_qap_cost(&in.q, loc), opt));
    /* MAHD: a complete, valid assignment, never better than the optimum */
    topomap_i_mahd_args ma = {TOPOMAP_MAHD_AVERAGE, 0, TOPOMAP_OBJECTIVE_HOP_BYTES};
    CHECK(topomap_i_mahd_solve(&in.q, &ma, &run, loc) == 0);
    char hit[8] = {0};
    int valid = 1;
    for (int32_t i = 0; i < n; i++) {
        valid &= loc[i] >= 0 && loc[i] < m && !hit[loc[i]];
        if (valid) hit[loc[i]] = 1;
    }
    CHECK(valid);
    CHECK(topomap_i_qap_cost(&in.q, loc) >= opt - 1e-9);
    free_instance(&in);
}

static void test_fit(void)
{
    /* groups of 4, 4, 2 onto nodes of 4, 2, 4, 4 slots */
    int64_t size[3] = {4, 4, 2}, cap[4] = {4, 2, 4, 4};
    topomap_i_qap q = {.n = 3, .m = 4, .size = size, .cap = cap};
    topomap_i_fit f;
    CHECK(topomap_i_fit_init(&f, &q) == 0);
    CHECK(!topomap_i_fit_ok(&f, &q, 0, 1)); /* 4 processes on 2 slots */
    CHECK(topomap_i_fit_ok(&f, &q, 2, 0));  /* one 4-node to spare */
    topomap_i_fit_place(&f, &q, 2, 0);
    CHECK(!topomap_i_fit_ok(&f, &q, 2, 2)); /* now the 4-groups need both 4-nodes left... */
    CHECK(topomap_i_fit_ok(&f, &q, 0, 2));
    topomap_i_fit_place(&f, &q, 0, 2);
    CHECK(topomap_i_fit_ok(&f, &q, 1, 3));
    topomap_i_fit_reset(&f, &q);
    CHECK(topomap_i_fit_ok(&f, &q, 2, 1)); /* after a reset everything is free again */
    topomap_i_fit_free(&f);
    int64_t size2[3] = {4, 4, 4};
    topomap_i_qap q2 = {.n = 3, .m = 4, .size = size2, .cap = (int64_t[4]){4, 2, 2, 4}};
    CHECK(topomap_i_fit_init(&f, &q2) == TOPOMAP_EINVAL); /* three 4-groups, two 4-nodes */
}

/* ------------------------------------------------------------------ mappers */

static int cancel_now(void *ctx, double fraction)
{
    (void)fraction;
    ++*(int *)ctx;
    return 1;
}

static int count_calls(void *ctx, double fraction)
{
    CHECK(fraction >= 0 && fraction <= 1);
    ++*(int *)ctx;
    return 0;
}

/* A 2-D stencil of w x h processes (bytes 1..3 by direction). */
static topomap_pattern stencil(int32_t w, int32_t h, int64_t **ip, int32_t **ix, double **by)
{
    int32_t n = w * h;
    *ip = calloc((size_t)n + 1, sizeof **ip);
    *ix = malloc(4 * (size_t)n * sizeof **ix);
    *by = malloc(4 * (size_t)n * sizeof **by);
    int64_t k = 0;
    for (int32_t y = 0; y < h; y++)
        for (int32_t x = 0; x < w; x++) {
            int32_t nb[4] = {y > 0 ? (y - 1) * w + x : -1, x > 0 ? y * w + x - 1 : -1, x + 1 < w ? y * w + x + 1 : -1,
                             y + 1 < h ? (y + 1) * w + x : -1};
            double b[4] = {1, 3, 3, 1};
            for (int i = 0; i < 4; i++)
                if (nb[i] >= 0) {
                    (*ix)[k] = nb[i];
                    (*by)[k++] = b[i];
                }
            (*ip)[y * w + x + 1] = k;
        }
    return (topomap_pattern){n, *ip, *ix, *by};
}

static int valid_mapping(const topomap_machine *m, int32_t n, const int32_t *pe_of, const int32_t *alloc, int32_t na,
                         int32_t cap)
{
    int32_t *use = calloc((size_t)topomap_machine_npes(m), sizeof *use);
    char *in = calloc((size_t)topomap_machine_npes(m), 1);
    int ok = 1;
    for (int32_t i = 0; i < na; i++) in[alloc[i]] = 1;
    for (int32_t i = 0; i < n && ok; i++) ok = pe_of[i] >= 0 && pe_of[i] < topomap_machine_npes(m) && in[pe_of[i]] && ++use[pe_of[i]] <= cap;
    free(use);
    free(in);
    return ok;
}

static topomap_metrics evaluate(const topomap_machine *m, const topomap_pattern *p, const int32_t *pe_of)
{
    topomap_metrics mt;
    CHECK(topomap_evaluate(m, p, pe_of, NULL, &mt, NULL) == 0);
    return mt;
}

static void test_mappers(int32_t ppn, int32_t cap)
{
    int32_t dims[3] = {4, 4, 4}, g[2] = {0, 0};
    uint8_t wrap[3] = {1, 1, 1};
    double cost = 1;
    int32_t groups[4] = {0, 0, 0, 0};
    topomap_node_tree tree = {ppn, 1, ppn == 1 ? g : groups, &cost};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_torus(&tree, 3, dims, wrap, &m) == 0);
    int64_t *ip;
    int32_t *ix;
    double *by;
    topomap_pattern p = stencil(6, 5, &ip, &ix, &by);
    int32_t n = p.n;
    /* a fragmented allocation: nodes 5..12, 30..40, 50..63, last node partly */
    int32_t alloc[256], na = 0;
    for (int32_t v = 0; v < 64 && na * cap < n + 3; v++)
        if ((v >= 5 && v <= 12) || (v >= 30 && v <= 40) || v >= 50)
            for (int32_t i = 0; i < ppn && na * cap < n + 3; i++) alloc[na++] = v * ppn + i;
    int32_t *pe = malloc((size_t)n * sizeof *pe), *pe2 = malloc((size_t)n * sizeof *pe2);
    topomap_run_options run = {7, NULL, NULL};
    topomap_grasp_options go;
    topomap_grasp_options_init(&go);
    go.iterations = 4;

    CHECK(topomap_map_grasp(m, &p, alloc, na, cap, &go, &run, pe) == 0);
    CHECK(valid_mapping(m, n, pe, alloc, na, cap));
    CHECK(topomap_map_grasp(m, &p, alloc, na, cap, &go, &run, pe2) == 0);
    CHECK(memcmp(pe, pe2, (size_t)n * sizeof *pe) == 0); /* same seed, same mapping */

    CHECK(topomap_map_mahd(m, &p, alloc, na, cap, TOPOMAP_MAHD_AVERAGE, &run, pe) == 0);
    CHECK(valid_mapping(m, n, pe, alloc, na, cap));
    topomap_metrics mahd = evaluate(m, &p, pe);
    CHECK(topomap_map_emahd(m, &p, alloc, na, cap, TOPOMAP_MAHD_AVERAGE, TOPOMAP_OBJECTIVE_HOP_BYTES, &run, pe) == 0);
    CHECK(valid_mapping(m, n, pe, alloc, na, cap));
    CHECK(evaluate(m, &p, pe).hop_bytes <= mahd.hop_bytes);
    CHECK(topomap_map_mahd(m, &p, alloc, na, cap, TOPOMAP_MAHD_GGE, &run, pe) == 0);
    CHECK(valid_mapping(m, n, pe, alloc, na, cap));
    CHECK(topomap_map_emahd(m, &p, alloc, na, cap, TOPOMAP_MAHD_WEIGHTED, TOPOMAP_OBJECTIVE_MAX_CONGESTION, &run, pe) ==
          0);
    CHECK(valid_mapping(m, n, pe, alloc, na, cap));
    CHECK(topomap_map_emahd(m, &p, alloc, na, cap, TOPOMAP_MAHD_AVERAGE, TOPOMAP_OBJECTIVE_MAX_CONGESTION, &run, pe) == 0);
    topomap_metrics em = evaluate(m, &p, pe);
    CHECK(topomap_map_max_contention(m, &p, alloc, na, cap, 50, &run, pe) == 0);
    CHECK(valid_mapping(m, n, pe, alloc, na, cap));
    CHECK(evaluate(m, &p, pe).max_congestion <= em.max_congestion);

    CHECK(topomap_map_kumar_hybrid(m, &p, alloc, na, cap, 3, &go, &run, pe) == 0);
    CHECK(valid_mapping(m, n, pe, alloc, na, cap));
    CHECK(topomap_map_kumar_hybrid(m, &p, alloc, na, cap, 3, &go, &run, pe2) == 0);
    CHECK(memcmp(pe, pe2, (size_t)n * sizeof *pe) == 0);

    /* progress: called with fractions in [0, 1]; a cancel stops every mapper */
    int calls = 0;
    topomap_run_options watch = {1, count_calls, &calls};
    CHECK(topomap_map_grasp(m, &p, alloc, na, cap, &go, &watch, pe) == 0 && calls > 0);
    topomap_run_options stop = {1, cancel_now, &calls};
    calls = 0;
    CHECK(topomap_map_grasp(m, &p, alloc, na, cap, &go, &stop, pe) == TOPOMAP_ECANCELED && calls == 1);
    CHECK(topomap_map_mahd(m, &p, alloc, na, cap, 0, &stop, pe) == TOPOMAP_ECANCELED);
    CHECK(topomap_map_emahd(m, &p, alloc, na, cap, 0, 0, &stop, pe) == TOPOMAP_ECANCELED);
    CHECK(topomap_map_max_contention(m, &p, alloc, na, cap, 5, &stop, pe) == TOPOMAP_ECANCELED);
    CHECK(topomap_map_kumar_hybrid(m, &p, alloc, na, cap, 3, &go, &stop, pe) == TOPOMAP_ECANCELED);

    /* errors name the option */
    topomap_grasp_options badg = go;
    badg.iterations = 0;
    CHECK(topomap_map_grasp(m, &p, alloc, na, cap, &badg, &run, pe) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "iterations") != NULL);
    badg = go;
    badg.alpha = 0;
    CHECK(topomap_map_grasp(m, &p, alloc, na, cap, &badg, &run, pe) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "alpha") != NULL);
    badg = go;
    badg.beta = 1.5;
    CHECK(topomap_map_kumar_hybrid(m, &p, alloc, na, cap, 3, &badg, &run, pe) == TOPOMAP_EINVAL);
    CHECK(topomap_map_kumar_hybrid(m, &p, alloc, na, cap, 0, &go, &run, pe) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "part_size") != NULL);
    CHECK(topomap_map_mahd(m, &p, alloc, na, cap, 3, &run, pe) == TOPOMAP_EINVAL);
    CHECK(topomap_map_emahd(m, &p, alloc, na, cap, 0, 2, &run, pe) == TOPOMAP_EINVAL);
    CHECK(topomap_map_max_contention(m, &p, alloc, na, cap, 0, &run, pe) == TOPOMAP_EINVAL);
    CHECK(topomap_map_grasp(m, &p, alloc, 2, 1, &go, &run, pe) == TOPOMAP_EINVAL); /* 30 processes, 2 slots */
    free(pe);
    free(pe2);
    free(ip);
    free(ix);
    free(by);
    topomap_machine_destroy(m);
}

/* GRASP beats the launcher order on a scrambled allocation. */
static void test_grasp_beats_scrambled_block(void)
{
    int32_t dims[2] = {5, 4}, g = 0;
    uint8_t wrap[2] = {1, 0};
    double cost = 0;
    topomap_node_tree tree = {1, 1, &g, &cost};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_torus(&tree, 2, dims, wrap, &m) == 0);
    int64_t *ip;
    int32_t *ix;
    double *by;
    topomap_pattern p = stencil(4, 4, &ip, &ix, &by);
    int32_t alloc[20], pe[16];
    for (int32_t i = 0; i < 20; i++) alloc[i] = (i * 7) % 20;
    topomap_grasp_options go;
    topomap_grasp_options_init(&go);
    go.iterations = 8;
    topomap_run_options run = {3, NULL, NULL};
    CHECK(topomap_map_grasp(m, &p, alloc, 20, 1, &go, &run, pe) == 0);
    topomap_metrics grasp = evaluate(m, &p, pe);
    CHECK(topomap_map_block(16, alloc, 20, 1, pe) == 0);
    topomap_metrics block = evaluate(m, &p, pe);
    CHECK(grasp.hop_bytes < block.hop_bytes); /* a scrambled allocation order is easy to beat */
    free(ip);
    free(ix);
    free(by);
    topomap_machine_destroy(m);
}

int main(void)
{
    test_hilbert();
    test_fit();
    for (uint64_t s = 0; s < 6; s++) test_deltas(s);
    for (uint64_t s = 0; s < 16; s++) test_grasp_optimum(s, 6 + (int32_t)(s % 2), 7);
    test_mappers(1, 1);
    test_mappers(4, 2);
    test_grasp_beats_scrambled_block();
    return check_report();
}

/* The C core on its own, built with AddressSanitizer and UBSan (see Makefile).
   Hand-worked cases, error paths, and incremental == full recomputation over
   long random walks on every network kind (the link deltas a change would
   make == the loads it then makes). */
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "eval_deltas.h"
#include "eval_pairs.h"
#include "check.h"

static const int32_t flat1_groups[1] = {0};
static const double zero_cost[1] = {0};
static const topomap_node_tree flat1 = {1, 1, flat1_groups, zero_cost};

static void test_torus_routes(void)
{
    int32_t dims[2] = {2, 2};
    uint8_t wrap[2] = {1, 1};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_torus(&flat1, 2, dims, wrap, &m) == TOPOMAP_OK);
    int32_t r[8];
    /* node 1 = (1,0) -> node 2 = (0,1): x tie goes +, from node 1 (link 4), then y + from node 0 (link 2) */
    CHECK(topomap_machine_route(m, 1, 2, r) == 2 && r[0] == 4 && r[1] == 2);
    CHECK(topomap_machine_route_count(m, 3, 3) == 0);
    CHECK(topomap_machine_max_route(m) == 2);
    topomap_machine_destroy(m);

    /* 1-D mesh of 3: 2 -> 0 goes - twice: links (2*1+0)*2+1 = 5, then 3 */
    int32_t d3 = 3;
    uint8_t nowrap = 0;
    CHECK(topomap_machine_create_torus(&flat1, 1, &d3, &nowrap, &m) == TOPOMAP_OK);
    CHECK(topomap_machine_route(m, 2, 0, r) == 2 && r[0] == 5 && r[1] == 3);
    CHECK(!topomap_machine_link_exists(m, 4) && topomap_machine_link_exists(m, 5));
    topomap_machine_destroy(m);
}

static void test_tree_network(void)
{
    int32_t ar[2] = {2, 2};
    double costs[2] = {3, 7};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_tree(&flat1, 2, ar, costs, &m) == TOPOMAP_OK);
    int32_t r[8];
    /* nodes 0 and 3 meet at the root: up 0 (edge 0), up level 1 (edge 4+0), down edge 4+1, down edge 3 */
    CHECK(topomap_machine_route(m, 0, 3, r) == 4 && r[0] == 0 && r[1] == 8 && r[2] == 11 && r[3] == 7);
    CHECK(topomap_machine_distance(m, 0, 1) == 3 && topomap_machine_distance(m, 0, 3) == 7);
    CHECK(topomap_machine_nlinks(m) == 12);
    topomap_machine_destroy(m);
}

static void test_errors(void)
{
    topomap_machine *m = NULL;
    int32_t dims[1] = {0};
    uint8_t wrap[1] = {1};
    CHECK(topomap_machine_create_torus(&flat1, 1, dims, wrap, &m) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "size 0") != NULL);
    int32_t big[2] = {65536, 65536};
    uint8_t w2[2] = {1, 1};
    CHECK(topomap_machine_create_torus(&flat1, 2, big, w2, &m) == TOPOMAP_EINVAL);
    int32_t bad_groups[2] = {0, 1}; /* top level is not one group */
    double c1[1] = {1};
    topomap_node_tree bad = {2, 1, bad_groups, c1};
    CHECK(topomap_machine_create_single(&bad, &m) == TOPOMAP_EINVAL);

    int32_t d4 = 4;
    CHECK(topomap_machine_create_torus(&flat1, 1, &d4, wrap, &m) == TOPOMAP_OK);
    double cap[8] = {1, 1, 1, 1, 1, 1, 1, 0};
    CHECK(topomap_machine_set_capacities(m, cap) == TOPOMAP_EINVAL);
    int64_t indptr[3] = {0, 1, 2};
    int32_t idx[2] = {1, 1}; /* process 1 sends to itself */
    double by[2] = {1, 1};
    topomap_pattern p = {2, indptr, idx, by};
    CHECK(topomap_pattern_validate(&p) == TOPOMAP_EINVAL);
    idx[1] = 0;
    int32_t pe_of[2] = {0, 7};
    topomap_metrics mt;
    CHECK(topomap_evaluate(m, &p, pe_of, NULL, &mt, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "process 1") != NULL);
    topomap_eval *e = NULL;
    pe_of[1] = 2;
    CHECK(topomap_eval_create(m, &p, pe_of, NULL, &e) == TOPOMAP_OK);
    CHECK(topomap_eval_move(e, 0, 99) == TOPOMAP_EINVAL);
    CHECK(topomap_eval_move(e, 0, -2) == TOPOMAP_EINVAL);
    CHECK(topomap_eval_try_swap(e, 0, -1, &mt) == TOPOMAP_EINVAL);
    topomap_eval_destroy(e);
    topomap_machine_destroy(m);
}

static int metrics_equal(const topomap_metrics *a, const topomap_metrics *b)
{
    double scale = 1 + a->max_congestion * a->max_congestion;
    return close_to(a->hop_bytes, b->hop_bytes) && a->dilation == b->dilation &&
           a->max_dilation == b->max_dilation && close_to(a->qap, b->qap) &&
           close_to(a->max_congestion, b->max_congestion) && a->nz_links == b->nz_links &&
           close_to(a->nz_congestion_avg, b->nz_congestion_avg) &&
           fabs(a->nz_congestion_var - b->nz_congestion_var) <= 1e-9 * scale &&
           close_to(a->edge_cut, b->edge_cut) && a->edge_cut_messages == b->edge_cut_messages &&
           a->messages == b->messages && close_to(a->total_bytes, b->total_bytes);
}

/* A random pattern of n processes (each pair at 30 %, 1-100 bytes) and a
   random mapping, from r; one process in six unplaced (TOPOMAP_UNPLACED)
   when `unplaced`.  The arrays are the caller's to free_walk. */
static topomap_pattern walk_pattern(topomap_rng *r, int32_t n, int32_t npes, int unplaced, int32_t **pe_out)
{
    int64_t *indptr = calloc((size_t)n + 1, sizeof *indptr);
    int32_t *idx = malloc((size_t)n * n * sizeof *idx), *pe_of = malloc((size_t)n * sizeof *pe_of);
    double *by = malloc((size_t)n * n * sizeof *by);
    int64_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        for (int32_t j = 0; j < n; j++)
            if (i != j && topomap_rng_uniform(r) < 0.3) {
                idx[k] = j;
                by[k++] = 1 + (double)topomap_rng_below(r, 100);
            }
        indptr[i + 1] = k;
        pe_of[i] = !unplaced || topomap_rng_below(r, 6) ? (int32_t)topomap_rng_below(r, (uint64_t)npes)
                                                          : TOPOMAP_UNPLACED;
    }
    *pe_out = pe_of;
    return (topomap_pattern){n, indptr, idx, by};
}

static void free_walk(topomap_pattern *p, int32_t *pe_of)
{
    free((void *)p->indptr);
    free((void *)p->indices);
    free((void *)p->bytes);
    free(pe_of);
}

/* Random pattern of n processes, random walk of moves/swaps: incremental
   == full, every step, and a distance-only evaluator walked alongside keeps
   the same distance sums.  About one process in six is unplaced
   (TOPOMAP_UNPLACED) at any time, as in a greedy mapper's partial mapping. */
static void random_walk(const topomap_machine *m, uint64_t seed, int steps, int32_t n)
{
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    int32_t npes = topomap_machine_npes(m), *pe_of;
    topomap_pattern p = walk_pattern(&r, n, npes, 1, &pe_of);
    topomap_eval *e = NULL, *de = NULL;
    CHECK(topomap_eval_create(m, &p, pe_of, NULL, &e) == TOPOMAP_OK);
    CHECK(topomap_eval_create_flags(m, &p, pe_of, NULL, TOPOMAP_EVAL_DISTANCE_ONLY, &de) == TOPOMAP_OK);
    if (!e || !de) return;
    int32_t L = topomap_machine_nlinks(m);
    double *before = malloc(((size_t)L + 1) * sizeof *before), *expect = malloc(((size_t)L + 1) * sizeof *expect);
    topomap_i_link_deltas d;
    CHECK(topomap_i_link_deltas_init(&d, L) == TOPOMAP_OK);
    for (int s = 0; s < steps; s++) {
        topomap_metrics tried, now, full;
        int32_t a = (int32_t)topomap_rng_below(&r, (uint64_t)n);
        memcpy(before, topomap_eval_link_loads(e), (size_t)L * sizeof *before);
        if (s % 2) {
            int32_t pe = topomap_rng_below(&r, 6) ? (int32_t)topomap_rng_below(&r, (uint64_t)npes) : TOPOMAP_UNPLACED;
            CHECK(topomap_i_eval_link_deltas(e, a, pe, -1, -1, &d) == 0);
            CHECK(topomap_eval_try_move(e, a, pe, &tried) == 0);
            CHECK(topomap_eval_move(e, a, pe) == 0);
            CHECK(topomap_eval_move(de, a, pe) == 0);
        } else {
            int32_t b = (int32_t)topomap_rng_below(&r, (uint64_t)n);
            const int32_t *at = topomap_eval_mapping(e);
            CHECK(topomap_i_eval_link_deltas(e, a, at[b], b, at[a], &d) == 0);
            CHECK(topomap_eval_try_swap(e, a, b, &tried) == 0);
            CHECK(topomap_eval_swap(e, a, b) == 0);
            CHECK(topomap_eval_swap(de, a, b) == 0);
        }
        memcpy(expect, before, (size_t)L * sizeof *expect);
        for (int64_t i = 0; i < d.n; i++) expect[d.links[i]] += d.dw[i];
        CHECK(memcmp(expect, topomap_eval_link_loads(e), (size_t)L * sizeof *expect) == 0);
        topomap_eval_metrics(e, &now);
        CHECK(topomap_evaluate(m, &p, topomap_eval_mapping(e), NULL, &full, NULL) == 0);
        CHECK(metrics_equal(&tried, &full));
        CHECK(metrics_equal(&now, &full));
        topomap_metrics dist;
        topomap_eval_metrics(de, &dist);
        CHECK(close_to(dist.qap, full.qap) && close_to(dist.edge_cut, full.edge_cut) &&
              dist.messages == full.messages && close_to(dist.total_bytes, full.total_bytes));
    }
    topomap_i_link_deltas_free(&d);
    free(before);
    free(expect);
    topomap_eval_destroy(e);
    topomap_eval_destroy(de);
    free_walk(&p, pe_of);
}

/* The evaluator's shares of J (eval_shares.c), every process placed, PEs
   as the places: the change of J each predicts for a random move or swap
   is J after it (the evaluator's, and a full evaluation's) minus J
   before. */
static void shares_walk(const topomap_machine *m, uint64_t seed, int steps, int32_t n)
{
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    int32_t npes = topomap_machine_npes(m), *pe_of;
    topomap_pattern p = walk_pattern(&r, n, npes, 0, &pe_of);
    topomap_eval *e = NULL;
    CHECK(topomap_eval_create_flags(m, &p, pe_of, NULL, TOPOMAP_EVAL_DISTANCE_ONLY, &e) == TOPOMAP_OK);
    if (!e) return;
    CHECK(topomap_i_eval_shares(e) == TOPOMAP_OK);
    for (int s = 0; s < steps; s++) {
        topomap_metrics before, after, full;
        topomap_eval_metrics(e, &before);
        const int32_t *at = topomap_eval_mapping(e);
        int32_t a = (int32_t)topomap_rng_below(&r, (uint64_t)n), b = (int32_t)topomap_rng_below(&r, (uint64_t)n);
        topomap_i_eval_gather(e, a, at);
        double delta;
        if (s % 2) {
            int32_t pe = (int32_t)topomap_rng_below(&r, (uint64_t)npes);
            delta = topomap_i_eval_at(e, topomap_i_eval_base(e, pe, pe), pe, pe, -1) - topomap_i_eval_share(e, a);
            CHECK(topomap_eval_move(e, a, pe) == 0);
        } else {
            int32_t pb = at[b];
            double new_a = topomap_i_eval_at(e, topomap_i_eval_base(e, pb, pb), pb, pb, b);
            delta = a == b ? 0 : topomap_i_eval_swap_delta(e, a, b, new_a);
            CHECK(topomap_eval_swap(e, a, b) == 0);
        }
        topomap_eval_metrics(e, &after);
        CHECK(topomap_evaluate(m, &p, topomap_eval_mapping(e), NULL, &full, NULL) == 0);
        CHECK(close_to(after.qap - before.qap, delta) && close_to(after.qap, full.qap));
    }
    topomap_i_eval_shares_check(e);
    topomap_eval_destroy(e);
    free_walk(&p, pe_of);
}

static void test_incremental(void)
{
    int32_t groups[8] = {0, 0, 1, 1, 0, 0, 0, 0};
    double costs[2] = {1, 5};
    topomap_node_tree t4 = {4, 2, groups, costs};
    topomap_machine *m = NULL;
    int32_t dims[3] = {3, 4, 2};
    uint8_t wrap[3] = {1, 0, 1};
    CHECK(topomap_machine_create_torus(&t4, 3, dims, wrap, &m) == 0);
    double cap[3 * 4 * 2 * 3 * 2];
    for (int i = 0; i < topomap_machine_nlinks(m); i++) cap[i] = 1 + i % 3;
    CHECK(topomap_machine_set_capacities(m, cap) == 0);
    random_walk(m, 1, 400, 24);
    shares_walk(m, 11, 400, 24);
    topomap_machine_destroy(m);
    int32_t ar[3] = {2, 3, 2};
    double tc[3] = {10, 20, 40};
    CHECK(topomap_machine_create_tree(&t4, 3, ar, tc, &m) == 0);
    random_walk(m, 2, 400, 24);
    shares_walk(m, 12, 400, 24);
    topomap_machine_destroy(m);
    CHECK(topomap_machine_create_single(&t4, &m) == 0);
    random_walk(m, 3, 100, 24);
    topomap_machine_destroy(m);
    /* more nodes than the evaluator's pair table has slots (eval_pairs.h):
       pairs with and without a place, and the table growing on the way */
    int32_t big[2] = {24, 16};
    uint8_t wrap2[2] = {1, 1};
    CHECK(topomap_machine_create_torus(&flat1, 2, big, wrap2, &m) == 0);
    CHECK(topomap_machine_nnodes(m) > TOPOMAP_I_PAIR_SLOTS);
    random_walk(m, 4, 600, 300);
    shares_walk(m, 14, 600, 300);
    topomap_machine_destroy(m);
}

/* Above 2^16 messages the full evaluation splits the work over threads: it
   must agree exactly (integral bytes) with the serial incremental build. */
static void test_threaded_full_evaluation(void)
{
    int32_t dims[3] = {6, 5, 4};
    uint8_t wrap[3] = {1, 1, 0};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_torus(&flat1, 3, dims, wrap, &m) == 0);
    int32_t n = 4000, deg = 25;
    int64_t *indptr = malloc(((size_t)n + 1) * sizeof *indptr);
    int32_t *idx = malloc((size_t)n * deg * sizeof *idx), *pe_of = malloc((size_t)n * sizeof *pe_of);
    double *by = malloc((size_t)n * deg * sizeof *by);
    topomap_rng r;
    topomap_rng_seed(&r, 11);
    indptr[0] = 0;
    for (int32_t i = 0; i < n; i++) {
        for (int32_t k = 0; k < deg; k++) {
            idx[(int64_t)i * deg + k] = (i + 1 + k * 37) % n;
            by[(int64_t)i * deg + k] = (double)(1 + topomap_rng_below(&r, 1000));
        }
        indptr[i + 1] = (int64_t)(i + 1) * deg;
        pe_of[i] = (int32_t)topomap_rng_below(&r, 120);
    }
    /* rows must be sorted for a canonical pattern; the evaluator does not need it */
    topomap_pattern p = {n, indptr, idx, by};
    topomap_metrics full, inc;
    topomap_eval *e = NULL;
    CHECK(topomap_evaluate(m, &p, pe_of, NULL, &full, NULL) == 0);
    CHECK(topomap_eval_create(m, &p, pe_of, NULL, &e) == 0);
    topomap_eval_metrics(e, &inc);
    CHECK(full.hop_bytes == inc.hop_bytes && full.dilation == inc.dilation && full.qap == inc.qap);
    CHECK(full.max_congestion == inc.max_congestion && full.nz_links == inc.nz_links);
    CHECK(close_to(full.nz_congestion_avg, inc.nz_congestion_avg));
    CHECK(close_to(full.nz_congestion_var, inc.nz_congestion_var));
    CHECK(full.messages == (int64_t)n * deg);
    topomap_eval_destroy(e);
    topomap_machine_destroy(m);
    free(indptr);
    free(idx);
    free(pe_of);
    free(by);
}

/* Message counts: the ring 0 -> 1 -> 2 -> 3 -> 0 on a 1-D torus of 4 nodes of 2 PEs, processes on
   PEs 0, 1, 2, 4, so 0 -> 1 stays inside node 0; msgs 3, 0, 5, 2 messages per entry. */
static void test_message_counts(void)
{
    const int32_t groups[2] = {0, 0};
    const double cost[1] = {0};
    const topomap_node_tree two = {2, 1, groups, cost};
    int32_t d = 4;
    uint8_t w = 1;
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_torus(&two, 1, &d, &w, &m) == 0);
    int64_t ip[5] = {0, 1, 2, 3, 4};
    int32_t ix[4] = {1, 2, 3, 0};
    double by[4] = {1, 1, 1, 1}, msgs[4] = {3, 0, 5, 2};
    topomap_pattern p = {4, ip, ix, by};
    int32_t pe_of[4] = {0, 1, 2, 4};
    topomap_metrics full, plain, after;
    CHECK(topomap_evaluate_msgs(m, &p, msgs, pe_of, NULL, &full, NULL) == 0);
    CHECK(full.messages == 4 && full.edge_cut_messages == 3 && full.msgs == 10 && full.cut_msgs == 7);
    CHECK(topomap_evaluate(m, &p, pe_of, NULL, &plain, NULL) == 0);
    CHECK(plain.msgs == 4 && plain.cut_msgs == 3);            /* without counts: one per pair */
    topomap_eval *e = NULL;
    CHECK(topomap_eval_create(m, &p, pe_of, NULL, &e) == 0);
    CHECK(topomap_eval_set_msgs(e, msgs) == 0);
    topomap_eval_metrics(e, &after);
    CHECK(after.msgs == 10 && after.cut_msgs == 7);
    /* process 3 joins process 2 on node 1: entry 2 -> 3 (5 messages) stays inside it now */
    CHECK(topomap_eval_try_move(e, 3, 3, &after) == 0 && after.cut_msgs == 2);
    CHECK(topomap_eval_move(e, 3, 3) == 0);
    int32_t moved[4] = {0, 1, 2, 3};
    CHECK(topomap_evaluate_msgs(m, &p, msgs, moved, NULL, &full, NULL) == 0 && full.cut_msgs == 2);
    topomap_eval_metrics(e, &after);
    CHECK(after.cut_msgs == 2 && after.msgs == 10);
    CHECK(topomap_eval_set_msgs(e, NULL) == 0);              /* back to one per pair */
    topomap_eval_metrics(e, &after);
    CHECK(after.msgs == 4 && after.cut_msgs == 2);
    topomap_eval_destroy(e);
    topomap_machine_destroy(m);
}

static void test_rng_and_baselines(void)
{
    topomap_rng a, b;
    topomap_rng_seed(&a, 42);
    topomap_rng_seed(&b, 42);
    for (int i = 0; i < 100; i++) CHECK(topomap_rng_next(&a) == topomap_rng_next(&b));
    for (int i = 0; i < 1000; i++) CHECK(topomap_rng_below(&a, 7) < 7);

    int32_t d = 4;
    uint8_t w = 1;
    int32_t g2[4] = {0, 1, 0, 0};
    double c2[2] = {0, 0};
    topomap_node_tree t2 = {2, 2, g2, c2};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_torus(&t2, 1, &d, &w, &m) == 0);
    int32_t alloc[8] = {0, 1, 2, 3, 4, 5, 6, 7}, pe[8];
    CHECK(topomap_map_cyclic(m, 8, alloc, 8, 1, pe) == 0);
    int32_t want[8] = {0, 2, 4, 6, 1, 3, 5, 7};
    for (int i = 0; i < 8; i++) CHECK(pe[i] == want[i]);
    CHECK(topomap_map_block(9, alloc, 8, 1, pe) == TOPOMAP_EINVAL);
    CHECK(topomap_map_random(8, alloc, 8, 1, 5, pe) == 0);
    int seen[8] = {0};
    for (int i = 0; i < 8; i++) seen[pe[i]]++;
    for (int i = 0; i < 8; i++) CHECK(seen[i] == 1);
    int32_t nodes[4];
    CHECK(topomap_allocate_nodes(m, 3, TOPOMAP_ALLOC_FRAGMENTED, 2, 9, nodes) == 0);
    CHECK(nodes[0] < nodes[1] && nodes[1] < nodes[2]);
    /* the whole machine: one run */
    CHECK(topomap_allocate_nodes(m, 4, TOPOMAP_ALLOC_FRAGMENTED, 2, 9, nodes) == 0);
    for (int i = 0; i < 4; i++) CHECK(nodes[i] == i);
    CHECK(topomap_allocate_nodes(m, 2, TOPOMAP_ALLOC_FRAGMENTED, 0, 9, nodes) == TOPOMAP_EINVAL);
    topomap_machine_destroy(m);
}

int main(void)
{
    test_torus_routes();
    test_tree_network();
    test_errors();
    test_incremental();
    test_message_counts();
    test_threaded_full_evaluation();
    test_rng_and_baselines();
    return check_report();
}

/* Fat trees in the C core: hand-worked routes and link ids, link ends,
   connected walks on random shapes, all-to-all link loads, errors, and a
   10^5-node tree built in O(levels) memory. */
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "check.h"

static const int32_t flat1_groups[1] = {0};
static const double zero_cost[1] = {0};
static const topomap_node_tree flat1 = {1, 1, flat1_groups, zero_cost};

static int route_is(const topomap_machine *m, int32_t a, int32_t b, int32_t n, const int32_t *want)
{
    int32_t r[64];
    if (topomap_machine_route(m, a, b, r) != n) return 0;
    return memcmp(r, want, (size_t)n * sizeof *r) == 0;
}

/* XGFT(2; 2,4; 1,2): 4 leaves of 2 nodes, 2 spines.
   Vertices: nodes 0-7, leaves 8-11, spines 12-13.
   Level-1 cables 0-7 (node u -> leaf u/2), level-2 cables 8-15: leaf l,
   port q (= spine q) -> cable 8 + 2l + q.  Link 2c up, 2c+1 down.
   0 -> 5 meets at level 2.  D-mod-k: up port at the leaf = 5 mod 2 = 1:
   node 0 up (cable 0, link 0), leaf 0 -> spine 1 (cable 9, link 18),
   spine 1 -> leaf 2 (cable 8+4+1 = 13, down link 27), leaf 2 -> node 5
   (cable 5, link 11).  Shortest: port 0 -> links 0, 16, 25, 11. */
static void test_hand_worked_two_level(void)
{
    int32_t m[2] = {2, 4}, w[2] = {1, 2}, p[2] = {1, 1};
    topomap_machine *dk = NULL, *sp = NULL;
    CHECK(topomap_machine_create_fattree(&flat1, 2, m, w, p, NULL, TOPOMAP_FATTREE_DMODK, &dk) == TOPOMAP_OK);
    CHECK(topomap_machine_create_fattree(&flat1, 2, m, w, p, NULL, TOPOMAP_FATTREE_SHORTEST, &sp) == TOPOMAP_OK);
    if (!dk || !sp) goto cleanup;
    CHECK(topomap_machine_nnodes(dk) == 8 && topomap_machine_nvertices(dk) == 14);
    CHECK(topomap_machine_nlinks(dk) == 32 && topomap_machine_max_route(dk) == 4);
    CHECK(route_is(dk, 0, 5, 4, (const int32_t[]){0, 18, 27, 11}));
    CHECK(route_is(sp, 0, 5, 4, (const int32_t[]){0, 16, 25, 11}));
    /* 0 -> 4: port 4 mod 2 = 0, so both routings agree */
    CHECK(route_is(dk, 0, 4, 4, (const int32_t[]){0, 16, 25, 9}));
    CHECK(route_is(sp, 0, 4, 4, (const int32_t[]){0, 16, 25, 9}));
    /* same leaf: up cable 0, down cable 1 */
    CHECK(route_is(dk, 0, 1, 2, (const int32_t[]){0, 3}));
    CHECK(topomap_machine_route_count(dk, 0, 5) == 4 && topomap_machine_route_count(dk, 6, 7) == 2);
    CHECK(topomap_machine_level_of(dk, 0, 5) == 1 + 2 && topomap_machine_level_of(dk, 2, 3) == 1 + 1);
    CHECK(topomap_machine_distance(dk, 0, 5) == 4.0);
    int32_t from, to;
    CHECK(topomap_machine_link_ends(dk, 18, &from, &to) == 0 && from == 8 && to == 13);
    CHECK(topomap_machine_link_ends(dk, 27, &from, &to) == 0 && from == 13 && to == 10);
    CHECK(topomap_machine_link_ends(dk, 11, &from, &to) == 0 && from == 10 && to == 5);
    CHECK(topomap_machine_link_ends(dk, 32, &from, &to) == TOPOMAP_EINVAL);
cleanup:
    topomap_machine_destroy(dk);
    topomap_machine_destroy(sp);
}

/* PGFT(2; 2,2; 1,2; 1,2): 2 leaves, 2 spines, 2 cables per leaf-spine pair.
   Leaf port q = spine + 2 * cable.  Level-1 cables 0-3, level-2 cables
   4 + 4l + q.  0 -> 3: q = 3 mod 4 = 3 (spine 1, cable 1): cable 7 up
   (link 14), cable 4+4+3 = 11 down (link 23), node 3 (link 7).
   0 -> 2: q = 2 (spine 0, cable 1): links 0, 12, 21, 5. */
static void test_parallel_cables(void)
{
    int32_t m[2] = {2, 2}, w[2] = {1, 2}, p[2] = {1, 2};
    double cap[2] = {3.5, 1.0};
    topomap_machine *t = NULL;
    CHECK(topomap_machine_create_fattree(&flat1, 2, m, w, p, cap, TOPOMAP_FATTREE_DMODK, &t) == TOPOMAP_OK);
    if (!t) return;
    CHECK(topomap_machine_nlinks(t) == 24);
    CHECK(route_is(t, 0, 3, 4, (const int32_t[]){0, 14, 23, 7}));
    CHECK(route_is(t, 0, 2, 4, (const int32_t[]){0, 12, 21, 5}));
    int32_t from, to;
    CHECK(topomap_machine_link_ends(t, 14, &from, &to) == 0 && from == 4 && to == 7);
    CHECK(topomap_machine_link_ends(t, 12, &from, &to) == 0 && from == 4 && to == 6);
    CHECK(topomap_machine_link_capacity(t, 0) == 3.5 && topomap_machine_link_capacity(t, 7) == 3.5);
    CHECK(topomap_machine_link_capacity(t, 8) == 1.0 && topomap_machine_link_capacity(t, 23) == 1.0);
    topomap_machine_destroy(t);
}

/* Every route of a shape is a walk over real links from a to b, 2 * level long. */
static void check_walks(const topomap_machine *t)
{
    int32_t n = topomap_machine_nnodes(t), r[64];
    for (int32_t a = 0; a < n; a++)
        for (int32_t b = 0; b < n; b++) {
            int32_t len = topomap_machine_route(t, a, b, r), at = a, ok = len <= topomap_machine_max_route(t);
            for (int32_t i = 0; i < len && ok; i++) {
                int32_t from, to;
                ok = topomap_machine_link_ends(t, r[i], &from, &to) == 0 && from == at;
                at = to;
            }
            CHECK(ok && at == b && len == topomap_machine_route_count(t, a, b));
            if (a != b) CHECK(len == 2 * (topomap_machine_level_of(t, a, b) - 1));
        }
}

static void test_random_shapes(void)
{
    topomap_rng rng;
    topomap_rng_seed(&rng, 7);
    for (int trial = 0; trial < 40; trial++) {
        int32_t h = 1 + (int32_t)topomap_rng_below(&rng, 3), m[3], w[3], p[3];
        for (int32_t i = 0; i < h; i++) {
            m[i] = 1 + (int32_t)topomap_rng_below(&rng, 3);
            w[i] = 1 + (int32_t)topomap_rng_below(&rng, 3);
            p[i] = 1 + (int32_t)topomap_rng_below(&rng, 2);
        }
        topomap_machine *t = NULL;
        int32_t routing = trial % 2 ? TOPOMAP_FATTREE_SHORTEST : TOPOMAP_FATTREE_DMODK;
        CHECK(topomap_machine_create_fattree(&flat1, h, m, w, p, NULL, routing, &t) == TOPOMAP_OK);
        if (t) check_walks(t);
        topomap_machine_destroy(t);
    }
}

/* All-to-all, 1 byte per message, on the k-ary 2-tree XGFT(2; k,k; 1,k):
   the up link leaf L -> spine s carries the k sources of L times the k-1
   destinations outside L with d mod k = s; the down link spine s -> leaf L'
   carries the k(k-1) sources outside L' times the one destination of L'
   with d mod k = s.  So D-mod-k loads every leaf-spine link with k(k-1);
   lowest-port routing sends everything through spine 0: k * k(k-1). */
static void test_all_to_all_loads(void)
{
    enum { k = 4, N = k * k };
    int32_t m[2] = {k, k}, w[2] = {1, k}, p[2] = {1, 1};
    int64_t indptr[N + 1];
    int32_t idx[N * (N - 1)], pe_of[N];
    double by[N * (N - 1)];
    int64_t e = 0;
    for (int32_t i = 0; i < N; i++) {
        indptr[i] = e;
        pe_of[i] = i;
        for (int32_t j = 0; j < N; j++)
            if (j != i) {
                idx[e] = j;
                by[e++] = 1.0;
            }
    }
    indptr[N] = e;
    topomap_pattern pat = {N, indptr, idx, by};
    for (int32_t routing = 0; routing < 2; routing++) {
        topomap_machine *t = NULL;
        CHECK(topomap_machine_create_fattree(&flat1, 2, m, w, p, NULL, routing, &t) == TOPOMAP_OK);
        if (!t) continue;
        int32_t nl = topomap_machine_nlinks(t);
        double *load = calloc((size_t)nl, sizeof *load);
        double lev[8];
        topomap_metrics mt;
        topomap_eval_detail d = {load, lev};
        CHECK(topomap_evaluate(t, &pat, pe_of, NULL, &mt, &d) == TOPOMAP_OK);
        double top = 0;
        int32_t used = 0;
        for (int32_t l = 2 * N; l < nl; l++) { /* leaf-spine links follow the 2N node links */
            if (load[l] > top) top = load[l];
            used += load[l] > 0;
        }
        if (routing == TOPOMAP_FATTREE_DMODK) CHECK(top == k * (k - 1) && used == nl - 2 * N);
        else CHECK(top == k * k * (k - 1) && used == 2 * k);
        CHECK(mt.max_congestion == (N - 1 > top ? N - 1 : top));
        free(load);
        topomap_machine_destroy(t);
    }
}

static void test_errors(void)
{
    topomap_machine *t = NULL;
    int32_t m[2] = {2, 0}, w[2] = {1, 2}, p[2] = {1, 1};
    CHECK(topomap_machine_create_fattree(&flat1, 2, m, w, p, NULL, 0, &t) == TOPOMAP_EINVAL && !t);
    CHECK(strstr(topomap_last_error(), "level 2 has m=0") != NULL);
    m[1] = 2;
    CHECK(topomap_machine_create_fattree(&flat1, 2, m, w, p, NULL, 7, &t) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "routing 7") != NULL);
    double cap[2] = {1.0, 0.0};
    CHECK(topomap_machine_create_fattree(&flat1, 2, m, w, p, cap, 0, &t) == TOPOMAP_EINVAL && !t);
    CHECK(strstr(topomap_last_error(), "level 2 has link capacity 0") != NULL);
    int32_t big[2] = {65536, 65536};
    CHECK(topomap_machine_create_fattree(&flat1, 2, big, w, p, NULL, 0, &t) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "2^31 nodes") != NULL);
    int32_t mm[2] = {1, 1073741824}, ww[2] = {1, 1};
    CHECK(topomap_machine_create_fattree(&flat1, 2, mm, ww, p, NULL, 0, &t) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "2^31 vertices") != NULL || strstr(topomap_last_error(), "2^31 links") != NULL);
    CHECK(topomap_machine_create_fattree(&flat1, 0, m, w, p, NULL, 0, &t) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "got 0") != NULL);
}

/* k-ary 3-tree, k = 46: 97336 nodes, 3 * 97336 cables, no per-pair tables. */
static void test_large(void)
{
    int32_t m[3] = {46, 46, 46}, w[3] = {1, 46, 46}, p[3] = {1, 1, 1};
    topomap_machine *t = NULL;
    CHECK(topomap_machine_create_fattree(&flat1, 3, m, w, p, NULL, 0, &t) == TOPOMAP_OK);
    if (!t) return;
    CHECK(topomap_machine_nnodes(t) == 97336 && topomap_machine_nlinks(t) == 2 * 3 * 97336);
    CHECK(topomap_machine_nvertices(t) == 97336 + 3 * 2116);
    int32_t r[6], from, to, n = 97336;
    CHECK(topomap_machine_route(t, 0, n - 1, r) == 6);
    CHECK(topomap_machine_link_ends(t, r[0], &from, &to) == 0 && from == 0);
    CHECK(topomap_machine_link_ends(t, r[5], &from, &to) == 0 && to == n - 1);
    /* D-mod-k: the top switch reached is b mod (46*46) among the 2116 */
    CHECK(topomap_machine_link_ends(t, r[2], &from, &to) == 0 && to == n + 2 * 2116 + (n - 1) % 2116);
    topomap_machine_destroy(t);
}

int main(void)
{
    test_hand_worked_two_level();
    test_parallel_cables();
    test_random_shapes();
    test_all_to_all_loads();
    test_errors();
    test_large();
    return check_report();
}

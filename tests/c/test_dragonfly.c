/* Dragonfly and hypercube routing oracles under ASan/UBSan: hand-worked
   routes and arrangement tables, refused shapes, and for several shapes
   every route is a walk over real links whose length is route_count and
   whose longest case is exactly max_route. */
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "check.h"

static const int32_t flat1_groups[1] = {0};
static const double zero_cost[1] = {0};
static const topomap_node_tree flat1 = {1, 1, flat1_groups, zero_cost};

/* Every route between distinct nodes walks real links from a to b. */
static void check_walks(const topomap_machine *m)
{
    int32_t n = topomap_machine_nnodes(m), longest = 0, bad = 0;
    int32_t *r = malloc((size_t)topomap_machine_max_route(m) * sizeof *r);
    for (int32_t a = 0; a < n && !bad; a++) {
        for (int32_t b = 0; b < n && !bad; b++) {
            int32_t h = topomap_machine_route(m, a, b, r), at = a;
            if (h != topomap_machine_route_count(m, a, b) || h > topomap_machine_max_route(m)) bad = 1;
            for (int32_t i = 0; i < h && !bad; i++) {
                int32_t from, to;
                if (topomap_machine_link_ends(m, r[i], &from, &to) != TOPOMAP_OK || from != at) bad = 1;
                at = to;
            }
            if (at != b || (a != b && (h == 0 || topomap_machine_distance(m, a, b) != h))) bad = 1;
            if (h > longest) longest = h;
        }
    }
    CHECK(!bad);
    CHECK(longest == topomap_machine_max_route(m));
    free(r);
}

static void test_tiny_routes(void)
{
    /* g=3, a=2, h=1, p=1, absolute.  Routers R0..R5 (group R/2) are vertices
       6..11.  Global ports: group i port k on router k; absolute wiring
       joins R0-R2, R1-R4, R3-R5.  Ids: up 2n, down 2n+1, local 12 + R,
       global 18 + 2i + k. */
    topomap_machine *m = NULL;
    int32_t r[8];
    CHECK(topomap_machine_create_dragonfly(&flat1, 3, 2, 1, 1, TOPOMAP_DRAGONFLY_ABSOLUTE, &m) == TOPOMAP_OK);
    CHECK(topomap_machine_nlinks(m) == 24 && topomap_machine_nvertices(m) == 12 && topomap_machine_max_route(m) == 5);
    CHECK(topomap_machine_route(m, 0, 1, r) == 3 && r[0] == 0 && r[1] == 12 && r[2] == 3);
    CHECK(topomap_machine_route(m, 0, 2, r) == 3 && r[0] == 0 && r[1] == 18 && r[2] == 5);
    /* R0 -> R5: the only g0-g2 link is R1 -> R4: local, global, local */
    CHECK(topomap_machine_route(m, 0, 5, r) == 5 && r[0] == 0 && r[1] == 12 && r[2] == 19 && r[3] == 16 && r[4] == 11);
    /* R3 -> R4: R3 owns the g1-g2 link to R5, then local R5 -> R4 */
    CHECK(topomap_machine_route(m, 3, 4, r) == 4 && r[0] == 6 && r[1] == 21 && r[2] == 17 && r[3] == 9);
    CHECK(topomap_machine_level_of(m, 0, 1) == 3 && topomap_machine_level_of(m, 0, 3) == 4);
    int32_t from, to;
    CHECK(topomap_machine_link_ends(m, 22, &from, &to) == TOPOMAP_OK && from == 10 && to == 7);
    CHECK(topomap_machine_link_ends(m, 24, &from, &to) == TOPOMAP_EINVAL);
    check_walks(m);
    topomap_machine_destroy(m);

    /* p=2: nodes 0 and 1 share router 0: up, down */
    CHECK(topomap_machine_create_dragonfly(&flat1, 3, 2, 1, 2, TOPOMAP_DRAGONFLY_ABSOLUTE, &m) == TOPOMAP_OK);
    CHECK(topomap_machine_route(m, 1, 0, r) == 2 && r[0] == 2 && r[1] == 1);
    CHECK(topomap_machine_level_of(m, 0, 1) == 2);
    check_walks(m);
    topomap_machine_destroy(m);
}

/* g=5, a=2, h=2: global router pairs (R = 2*group + router) worked by hand
   from the arrangement definitions (see tests/test_dragonfly.py). */
static void test_arrangement_tables(void)
{
    static const int32_t expect[3][10][2] = {
        {{0, 2}, {0, 4}, {1, 6}, {1, 8}, {2, 4}, {3, 6}, {3, 8}, {5, 7}, {5, 9}, {7, 9}},
        {{0, 3}, {0, 5}, {1, 6}, {1, 8}, {2, 5}, {2, 7}, {3, 8}, {4, 7}, {4, 9}, {6, 9}},
        {{0, 2}, {0, 8}, {1, 5}, {1, 7}, {2, 4}, {3, 7}, {3, 9}, {4, 6}, {5, 9}, {6, 8}},
    };
    for (int32_t arr = 0; arr < 3; arr++) {
        topomap_machine *m = NULL;
        CHECK(topomap_machine_create_dragonfly(&flat1, 5, 2, 2, 1, arr, &m) == TOPOMAP_OK);
        int32_t base = 2 * 10 + 10 * 1, seen[10] = {0};
        CHECK(topomap_machine_nlinks(m) == base + 20);
        for (int32_t l = base; l < base + 20; l++) {
            int32_t from, to, hit = 0;
            CHECK(topomap_machine_link_ends(m, l, &from, &to) == TOPOMAP_OK);
            int32_t lo = (from < to ? from : to) - 10, hi = (from < to ? to : from) - 10;
            for (int32_t e = 0; e < 10; e++)
                if (expect[arr][e][0] == lo && expect[arr][e][1] == hi) {
                    seen[e]++;
                    hit = 1;
                }
            CHECK(hit);
        }
        for (int32_t e = 0; e < 10; e++) CHECK(seen[e] == 2); /* one link each way */
        check_walks(m);
        topomap_machine_destroy(m);
    }
}

static void test_shapes(void)
{
    /* balanced, parallel links (rounds > 1), even and odd spares, a = 1, p > 1 */
    static const int32_t shapes[][4] = {
        {9, 4, 2, 2}, {4, 3, 2, 1}, {2, 2, 1, 1}, {2, 3, 2, 1}, {6, 2, 3, 1}, {4, 2, 2, 2},
        {5, 1, 4, 3}, {7, 3, 4, 1}, {5, 2, 3, 1}, {6, 2, 4, 1}, {3, 4, 1, 1}, {8, 2, 4, 1},
    };
    for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
        for (int32_t arr = 0; arr < 3; arr++) {
            topomap_machine *m = NULL;
            const int32_t *x = shapes[s];
            int rc = topomap_machine_create_dragonfly(&flat1, x[0], x[1], x[2], x[3], arr, &m);
            CHECK(rc == TOPOMAP_OK);
            if (rc) continue;
            int64_t N = (int64_t)x[0] * x[1] * x[3], R = (int64_t)x[0] * x[1];
            CHECK(topomap_machine_nlinks(m) == 2 * N + R * (x[1] - 1) + R * x[2]);
            check_walks(m);
            topomap_machine_destroy(m);
        }
    }
}

static void test_refused(void)
{
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_dragonfly(&flat1, 10, 2, 4, 1, 0, &m) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "g=10 exceeds a*h+1 = 9") != NULL && m == NULL);
    /* g = 5 odd, a*h = 5 -> one spare port per group: cannot be paired */
    CHECK(topomap_machine_create_dragonfly(&flat1, 5, 1, 5, 1, 0, &m) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "1 spare") != NULL);
    CHECK(topomap_machine_create_dragonfly(&flat1, 1, 2, 2, 1, 0, &m) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "g=1") != NULL);
    CHECK(topomap_machine_create_dragonfly(&flat1, 3, 2, 1, 1, 3, &m) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "arrangement 3") != NULL);
    CHECK(topomap_machine_create_dragonfly(&flat1, 1000, 1000, 1000, 1000, 0, &m) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "limit 2^31") != NULL);
}

static void test_hypercube(void)
{
    topomap_machine *m = NULL;
    int32_t r[8];
    CHECK(topomap_machine_create_hypercube(&flat1, 3, &m) == TOPOMAP_OK);
    /* 6 -> 1: differing bits 0, 1, 2 corrected in that order: 6 -> 7 -> 5 -> 1 */
    CHECK(topomap_machine_route(m, 6, 1, r) == 3 && r[0] == 18 && r[1] == 22 && r[2] == 17);
    CHECK(topomap_machine_route_count(m, 2, 3) == 1 && topomap_machine_distance(m, 0, 7) == 3);
    CHECK(topomap_machine_nlinks(m) == 24 && topomap_machine_max_route(m) == 3);
    check_walks(m);
    topomap_machine_destroy(m);
    CHECK(topomap_machine_create_hypercube(&flat1, 0, &m) == TOPOMAP_EINVAL);
    CHECK(topomap_machine_create_hypercube(&flat1, 27, &m) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "27") != NULL);
}

int main(void)
{
    test_tiny_routes();
    test_arrangement_tables();
    test_shapes();
    test_refused();
    test_hypercube();
    return check_report();
}

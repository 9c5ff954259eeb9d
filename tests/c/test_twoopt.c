/* Two-opt and annealed rank placement: hand-worked hop and contention
   values on a ring, the incremental cost against a full recomputation after
   every search, the strict-improvement trace, cancellation and errors. */
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "topomap/twoopt.h"
#include "check.h"

static topomap_machine *ring(int32_t n)
{
    int32_t g = 0, dims[1] = {n};
    uint8_t wrap[1] = {1};
    double cost = 0;
    topomap_node_tree tree = {1, 1, &g, &cost};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_torus(&tree, 1, dims, wrap, &m) == 0);
    return m;
}

/* Binomial broadcast of p ranks from 0, largest mask first (003 §2.1). */
static int64_t bcast(int32_t p, int64_t *ptr, int32_t *src, int32_t *dst)
{
    int64_t k = 0;
    int32_t top = 1, s = 0;
    while (top < p) top <<= 1;
    ptr[0] = 0;
    for (int32_t mask = top >> 1; mask >= 1; mask >>= 1) {
        for (int32_t r = 0; r + mask < p; r += 2 * mask) {
            src[k] = r;
            dst[k++] = r + mask;
        }
        ptr[++s] = k;
    }
    return s;
}

/* Recursive doubling, both directions of each exchange (p a power of two). */
static int32_t rdoubling(int32_t p, int64_t *ptr, int32_t *src, int32_t *dst)
{
    int64_t k = 0;
    int32_t s = 0;
    ptr[0] = 0;
    for (int32_t d = 1; d < p; d <<= 1) {
        for (int32_t r = 0; r < p; r++) {
            src[k] = r;
            dst[k++] = r ^ d;
        }
        ptr[++s] = k;
    }
    return s;
}

static int stop_at_once(void *ctx, double f)
{
    (void)f;
    (*(int *)ctx)++;
    return 1;
}

static void test_hand_values(void)
{
    topomap_machine *m = ring(8);
    int64_t ptr[4];
    int32_t src[8], dst[8], one[8], pe[8];
    for (int i = 0; i < 8; i++) one[i] = 1, pe[i] = i;
    int32_t ns = (int32_t)bcast(8, ptr, src, dst);
    topomap_twoopt_schedule s = {8, ns, ptr, src, dst, one};
    int64_t cost = -1;
    /* 0->4 is 4 hops, 0->2 and 4->6 2 each, four 1-hop messages */
    CHECK(topomap_twoopt_cost(m, &s, pe, TOPOMAP_TWOOPT_HOPS, &cost) == 0 && cost == 12);
    CHECK(topomap_twoopt_cost(m, &s, pe, TOPOMAP_TWOOPT_CONTENTION, &cost) == 0 && cost == 0);
    /* one stage 0->2, 1->3 and 1->3 again (count 2): link 1->2 carries 3, link 2->3 carries 2 */
    int64_t p1[2] = {0, 2};
    int32_t a[2] = {0, 1}, b[2] = {2, 3}, c[2] = {1, 2};
    topomap_twoopt_schedule t = {8, 1, p1, a, b, c};
    CHECK(topomap_twoopt_cost(m, &t, pe, TOPOMAP_TWOOPT_CONTENTION, &cost) == 0 && cost == 3);
    CHECK(topomap_twoopt_cost(m, &t, pe, TOPOMAP_TWOOPT_HOPS, &cost) == 0 && cost == 6);
    topomap_machine_destroy(m);
}

/* Every search's final cost equals a full recomputation of its placement; a
   two-opt trace never rises; the placement stays a permutation. */
static void test_incremental(int objective, double t0)
{
    enum { P = 32 };
    topomap_machine *m = ring(48);
    int64_t ptr[8];
    int32_t src[P * 5], dst[P * 5], cnt[P * 5], pe[P], seen[48];
    int32_t ns = rdoubling(P, ptr, src, dst);
    for (int i = 0; i < P * 5; i++) cnt[i] = 1 + i % 3;
    topomap_twoopt_schedule s = {P, ns, ptr, src, dst, cnt};
    for (uint64_t seed = 1; seed <= 4; seed++) {
        topomap_rng r;
        topomap_rng_seed(&r, seed);
        int32_t all[48];
        for (int i = 0; i < 48; i++) all[i] = i;
        topomap_rng_shuffle_i32(&r, all, 48);
        memcpy(pe, all, sizeof pe);
        int64_t before = 0, start = -3, after = -1, again = -2, kept = -1, trace[11];
        CHECK(topomap_twoopt_cost(m, &s, pe, objective, &before) == 0);
        topomap_twoopt_options opt = {objective, 5000, t0, t0 > 0 ? 0.05 : 0, 500};
        topomap_run_options run = {seed, NULL, NULL};
        CHECK(topomap_twoopt_search(m, &s, &opt, &run, pe, &start, &after, &kept, trace) == 0);
        CHECK(start == before);
        CHECK(topomap_twoopt_cost(m, &s, pe, objective, &again) == 0);
        CHECK(after == again);
        CHECK(after <= before && trace[0] == before);
        if (t0 == 0) {
            CHECK(after < before && kept > 0);
            for (int k = 1; k < 11; k++) CHECK(trace[k] <= trace[k - 1]);
            CHECK(trace[10] == after);
        }
        memset(seen, 0, sizeof seen);
        for (int i = 0; i < P; i++) seen[pe[i]]++;
        for (int i = 0; i < P; i++) CHECK(seen[all[i]] == 1);
        /* same seed, same result */
        int32_t pe2[P];
        memcpy(pe2, all, sizeof pe2);
        int64_t after2 = 0, kept2 = 0;
        CHECK(topomap_twoopt_search(m, &s, &opt, &run, pe2, &start, &after2, &kept2, NULL) == 0);
        CHECK(after2 == after && kept2 == kept && !memcmp(pe, pe2, sizeof pe));
    }
    topomap_machine_destroy(m);
}

static void test_errors_and_cancel(void)
{
    topomap_machine *m = ring(8);
    int64_t ptr[4], cost = 0, kept = 0;
    int32_t src[8], dst[8], one[8], pe[8];
    for (int i = 0; i < 8; i++) one[i] = 1, pe[i] = i;
    int32_t ns = (int32_t)bcast(8, ptr, src, dst);
    topomap_twoopt_schedule s = {8, ns, ptr, src, dst, one};
    CHECK(topomap_twoopt_cost(m, &s, pe, 7, &cost) == TOPOMAP_EINVAL);
    topomap_twoopt_schedule none = {0, ns, ptr, src, dst, one};
    CHECK(topomap_twoopt_cost(m, &none, pe, 0, &cost) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "n >= 1") != NULL);
    pe[3] = 8;
    CHECK(topomap_twoopt_cost(m, &s, pe, 0, &cost) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "rank 3") != NULL);
    pe[3] = 3;
    dst[0] = 0;
    CHECK(topomap_twoopt_cost(m, &s, pe, 0, &cost) == TOPOMAP_EINVAL);
    dst[0] = 4;
    topomap_twoopt_options bad = {0, 10, 1.0, 2.0, 0};
    CHECK(topomap_twoopt_search(m, &s, &bad, NULL, pe, &cost, &cost, &kept, NULL) == TOPOMAP_EINVAL);
    int calls = 0;
    topomap_twoopt_options opt = {0, 100000, 0, 0, 0};
    topomap_run_options run = {1, stop_at_once, &calls};
    CHECK(topomap_twoopt_search(m, &s, &opt, &run, pe, &cost, &cost, &kept, NULL) == TOPOMAP_ECANCELED && calls == 1);
    topomap_machine_destroy(m);
}

int main(void)
{
    test_hand_values();
    test_incremental(TOPOMAP_TWOOPT_HOPS, 0);
    test_incremental(TOPOMAP_TWOOPT_CONTENTION, 0);
    test_incremental(TOPOMAP_TWOOPT_HOPS, 2.0);
    test_incremental(TOPOMAP_TWOOPT_CONTENTION, 2.0);
    test_errors_and_cancel();
    return check_report();
}

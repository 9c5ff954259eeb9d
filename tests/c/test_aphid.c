/* APHiD (map_aphid.c): the allocation tree against level_of, planted
   clusters kept below their subtree, capacities, determinism, flat networks
   refused, cancellation and argument errors. */
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "check.h"

static topomap_machine *fat_tree(int32_t levels, int32_t k, int32_t pes_per_node)
{
    int32_t m[8], w[8], p[8], groups[64];
    for (int32_t i = 0; i < levels; i++) {
        m[i] = k;
        w[i] = i ? k : 1;
        p[i] = 1;
    }
    for (int32_t i = 0; i < pes_per_node; i++) groups[i] = 0;
    double cost = 0;
    topomap_node_tree tree = {pes_per_node, 1, groups, &cost};
    topomap_machine *mach = NULL;
    CHECK(topomap_machine_create_fattree(&tree, levels, m, w, p, NULL, TOPOMAP_FATTREE_DMODK, &mach) == 0);
    return mach;
}

/* Every group: its PEs meet at exactly its level, its children partition it
   and meet each other at its level. */
static void check_tree(const topomap_machine *m, const int32_t *alloc, int32_t nalloc)
{
    topomap_alloc_tree *t = NULL;
    CHECK(topomap_alloc_tree_create(m, alloc, nalloc, &t) == 0);
    if (!t) return;
    CHECK(t->npes == nalloc && t->start[0] == 0 && t->size[0] == nalloc);
    int32_t *seen = calloc((size_t)topomap_machine_npes(m), sizeof *seen);
    for (int32_t i = 0; i < nalloc; i++) seen[alloc[i]]++;
    for (int32_t i = 0; i < nalloc; i++) CHECK(seen[t->pes[i]] == 1);
    int32_t leaves = 0;
    for (int32_t g = 0; g < t->ngroups; g++) {
        const int32_t *pe = t->pes + t->start[g];
        int32_t top = 0;
        for (int32_t a = 0; a < t->size[g]; a++)
            for (int32_t b = a + 1; b < t->size[g]; b++) {
                int32_t lv = topomap_machine_level_of(m, pe[a], pe[b]);
                if (lv > top) top = lv;
            }
        CHECK(top == t->level[g]);
        if (t->nchildren[g] == 0) {
            CHECK(t->size[g] == 1 && t->first_child[g] == -1);
            leaves++;
            continue;
        }
        CHECK(t->nchildren[g] >= 2);
        int32_t c0 = t->first_child[g], covered = 0;
        for (int32_t c = 0; c < t->nchildren[g]; c++) {
            CHECK(t->start[c0 + c] == t->start[g] + covered);
            covered += t->size[c0 + c];
            if (c > 0) {
                CHECK(t->pes[t->start[c0 + c - 1]] < t->pes[t->start[c0 + c]]); /* ordered by smallest PE */
                CHECK(topomap_machine_level_of(m, t->pes[t->start[c0]], t->pes[t->start[c0 + c]]) == t->level[g]);
            }
        }
        CHECK(covered == t->size[g]);
    }
    CHECK(leaves == nalloc);
    free(seen);
    topomap_alloc_tree_destroy(t);
}

static void test_tree(void)
{
    topomap_machine *m = fat_tree(3, 4, 2); /* 64 nodes of 2 PEs */
    int32_t npes = topomap_machine_npes(m), alloc[128];
    topomap_rng r;
    topomap_rng_seed(&r, 5);
    for (int32_t trial = 0; trial < 20; trial++) {
        for (int32_t i = 0; i < npes; i++) alloc[i] = i;
        topomap_rng_shuffle_i32(&r, alloc, npes);
        check_tree(m, alloc, 1 + (int32_t)topomap_rng_below(&r, (uint64_t)npes));
    }
    topomap_alloc_tree *t = NULL;
    int32_t dup[3] = {4, 9, 4}, out[2] = {3, 128};
    CHECK(topomap_alloc_tree_create(m, dup, 3, &t) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "PE 4 appears twice") != NULL);
    CHECK(topomap_alloc_tree_create(m, out, 2, &t) == TOPOMAP_EINVAL);
    CHECK(t == NULL);
    topomap_machine_destroy(m);
}

/* n = 2^levels processes in two clusters (heavy inside, light between)
   under random labels, on a binary fat tree: the root split is the planted
   one, which the exhaustive optimum confirms. */
static void test_planted(uint64_t seed)
{
    topomap_machine *m = fat_tree(3, 2, 1);
    int32_t n = 8, alloc[8], lab[8], pe_of[8], pe_again[8];
    for (int32_t i = 0; i < n; i++) alloc[i] = i;
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    for (int32_t i = 0; i < n; i++) lab[i] = i % 2;
    topomap_rng_shuffle_i32(&r, lab, n);
    double w[8][8] = {{0}};
    int64_t indptr[9] = {0};
    int32_t idx[64];
    double by[64];
    int64_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        for (int32_t j = 0; j < n; j++) {
            if (i == j) continue;
            double x = lab[i] == lab[j] ? 4 + 6 * topomap_rng_uniform(&r) : 0.5 + 1.5 * topomap_rng_uniform(&r);
            if (topomap_rng_uniform(&r) < (lab[i] == lab[j] ? 0.7 : 0.4)) {
                idx[k] = j;
                by[k++] = x;
                w[i][j] += x;
                w[j][i] += x;
            }
        }
        indptr[i + 1] = k;
    }
    topomap_pattern p = {n, indptr, idx, by};
    topomap_run_options run = {seed, NULL, NULL};
    CHECK(topomap_map_aphid(m, &p, alloc, n, 1, NULL, &run, pe_of) == 0);
    CHECK(topomap_map_aphid(m, &p, alloc, n, 1, NULL, &run, pe_again) == 0);
    CHECK(memcmp(pe_of, pe_again, sizeof pe_of) == 0);
    double cut = 0, best = 1e300;
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = i + 1; j < n; j++)
            if (pe_of[i] / 4 != pe_of[j] / 4) cut += w[i][j];
    for (int32_t mask = 0; mask < 256; mask++) { /* every 4 | 4 split */
        if (__builtin_popcount((unsigned)mask) != 4) continue;
        double c = 0;
        for (int32_t i = 0; i < n; i++)
            for (int32_t j = i + 1; j < n; j++)
                if (((mask >> i) & 1) != ((mask >> j) & 1)) c += w[i][j];
        if (c < best) best = c;
    }
    CHECK(close_to(cut, best));
    int32_t used[8] = {0};
    for (int32_t i = 0; i < n; i++) used[pe_of[i]]++;
    for (int32_t i = 0; i < n; i++) CHECK(used[i] == 1);
    topomap_machine_destroy(m);
}

/* A ring of n processes on a partial allocation with capacity 3: valid,
   within capacities, and the children's shares are proportional. */
static void test_capacity(void)
{
    topomap_machine *m = fat_tree(2, 4, 2); /* 16 nodes x 2 PEs */
    int32_t alloc[7] = {0, 1, 2, 3, 8, 9, 20}, n = 19, pe_of[19];
    int64_t indptr[20];
    int32_t idx[19];
    double by[19];
    for (int32_t i = 0; i < n; i++) {
        indptr[i] = i;
        idx[i] = (i + 1) % n;
        by[i] = 1 + i % 3;
    }
    indptr[n] = n;
    topomap_pattern p = {n, indptr, idx, by};
    topomap_aphid_options opt;
    topomap_aphid_options_init(&opt);
    for (int mode = 0; mode < 2; mode++) {
        opt.proportional = mode;
        CHECK(topomap_map_aphid(m, &p, alloc, 7, 3, &opt, NULL, pe_of) == 0);
        int32_t on[40] = {0}, leaf[4] = {0};
        for (int32_t i = 0; i < n; i++) {
            on[pe_of[i]]++;
            leaf[pe_of[i] / 8]++;
        }
        for (int32_t i = 0; i < 40; i++) CHECK(on[i] <= 3);
        for (int32_t i = 0; i < 7; i++) on[alloc[i]] = 0;
        for (int32_t i = 0; i < 40; i++) CHECK(on[i] == 0); /* only allocated PEs */
        /* 4 + 2 + 1 PEs under leaves 0, 1, 2: 19 x (4, 2, 1) / 7 = 10.86, 5.43, 2.71 -> 11 + 5 + 3
           (the two leftovers to the largest remainders, 6/7 and 5/7) */
        if (mode) CHECK(leaf[0] == 11 && leaf[1] == 5 && leaf[2] == 3);
    }
    CHECK(topomap_map_aphid(m, &p, alloc, 6, 3, NULL, NULL, pe_of) == TOPOMAP_EINVAL); /* 19 > 18 slots */
    opt.ntries = 0;
    CHECK(topomap_map_aphid(m, &p, alloc, 7, 3, &opt, NULL, pe_of) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "ntries") != NULL);
    topomap_machine_destroy(m);
}

static void test_flat_networks(void)
{
    int32_t groups[4] = {0, 0, 0, 0}, dims[2] = {4, 4}, alloc[8] = {0, 1, 2, 3, 4, 5, 6, 7}, pe_of[8];
    uint8_t wrap[2] = {1, 1};
    double cost = 0;
    topomap_node_tree tree = {4, 1, groups, &cost};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_torus(&tree, 2, dims, wrap, &m) == 0);
    int64_t indptr[9] = {0, 1, 2, 3, 4, 5, 6, 7, 8};
    int32_t idx[8] = {1, 2, 3, 4, 5, 6, 7, 0};
    double by[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    topomap_pattern p = {8, indptr, idx, by};
    CHECK(topomap_map_aphid(m, &p, alloc, 8, 1, NULL, NULL, pe_of) == TOPOMAP_ENOTSUP); /* two nodes of a torus */
    CHECK(strstr(topomap_last_error(), "no levels") != NULL);
    CHECK(topomap_map_aphid(m, &p, alloc, 4, 2, NULL, NULL, pe_of) == 0); /* one node: its tree only */
    for (int32_t i = 0; i < 8; i++) CHECK(pe_of[i] >= 0 && pe_of[i] < 4);
    topomap_machine_destroy(m);
    /* a one-level fat tree is a crossbar: every node 2 hops away */
    int32_t k = 8, one = 1;
    topomap_node_tree flat = {1, 1, groups, &cost};
    CHECK(topomap_machine_create_fattree(&flat, 1, &k, &one, &one, NULL, TOPOMAP_FATTREE_DMODK, &m) == 0);
    CHECK(topomap_map_aphid(m, &p, alloc, 8, 1, NULL, NULL, pe_of) == 0);
    topomap_machine_destroy(m);
}

static int stop_at(void *ctx, double fraction)
{
    int *calls = ctx;
    CHECK(fraction >= 0 && fraction <= 1);
    return ++*calls >= 3;
}

/* A 128 x 128 torus stencil on 256 nodes of 64 PEs: the root split is big
   enough for the partitioner's own reports to reach the callback. */
static void test_cancel(void)
{
    topomap_machine *m = fat_tree(4, 4, 64);
    int32_t side = 128, n = side * side;
    int32_t *alloc = malloc((size_t)n * sizeof *alloc), *pe_of = malloc((size_t)n * sizeof *pe_of);
    int64_t *indptr = malloc(((size_t)n + 1) * sizeof *indptr);
    int32_t *idx = malloc(4 * (size_t)n * sizeof *idx);
    double *by = malloc(4 * (size_t)n * sizeof *by);
    int64_t e = 0;
    for (int32_t i = 0; i < n; i++) {
        alloc[i] = i;
        indptr[i] = e;
        int32_t x = i % side, y = i / side;
        int32_t nb[4] = {x + side * ((y + side - 1) % side), (x + side - 1) % side + side * y,
                         (x + 1) % side + side * y, x + side * ((y + 1) % side)};
        for (int32_t j = 0; j < 4; j++) {
            idx[e] = nb[j];
            by[e++] = 1;
        }
        for (int64_t a = indptr[i] + 1; a < e; a++) /* rows sorted (wrap-around breaks the order) */
            for (int64_t b = a; b > indptr[i] && idx[b - 1] > idx[b]; b--) {
                int32_t t = idx[b];
                idx[b] = idx[b - 1];
                idx[b - 1] = t;
            }
    }
    indptr[n] = e;
    topomap_pattern p = {n, indptr, idx, by};
    int calls = 0;
    topomap_run_options run = {1, stop_at, &calls};
    CHECK(topomap_map_aphid(m, &p, alloc, n, 1, NULL, &run, pe_of) == TOPOMAP_ECANCELED);
    CHECK(calls == 3);
    free(alloc);
    free(pe_of);
    free(indptr);
    free(idx);
    free(by);
    topomap_machine_destroy(m);
}

int main(void)
{
    test_tree();
    for (uint64_t seed = 0; seed < 30; seed++) test_planted(seed);
    test_capacity();
    test_flat_networks();
    test_cancel();
    return check_report();
}

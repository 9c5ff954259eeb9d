/* The node-level view of map_nodes.c: allocation grouping, group sizes
   against the slots, the quotient pattern against a dense recomputation,
   and group placement. */
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "check.h"

static void test_alloc_nodes(const topomap_machine *m)
{
    /* PEs of nodes 2, 0, 2, 5 (4 PEs per node) -> nodes 2, 0, 5 */
    int32_t alloc[5] = {9, 1, 8, 20, 10};
    topomap_alloc_nodes *an = NULL;
    CHECK(topomap_alloc_nodes_create(m, alloc, 5, 2, &an) == 0);
    if (!an) return;
    CHECK(an->nnodes == 3);
    CHECK(an->node[0] == 2 && an->node[1] == 0 && an->node[2] == 5);
    CHECK(an->slots[0] == 6 && an->slots[1] == 2 && an->slots[2] == 2);
    CHECK(an->first_pe[0] == 9 && an->first_pe[2] == 20);
    CHECK(an->pe_start[0] == 0 && an->pe_start[1] == 3 && an->pes[0] == 9 && an->pes[1] == 8 && an->pes[2] == 10);
    /* processes 0..4 in group 0 (node 2) then 5 in group 2 (node 5) */
    int32_t group[6] = {0, 0, 0, 0, 0, 2}, pe_of[6];
    CHECK(topomap_place_groups(an, 6, group, NULL, pe_of) == 0);
    CHECK(pe_of[0] == 9 && pe_of[1] == 9 && pe_of[2] == 8 && pe_of[3] == 8 && pe_of[4] == 10 && pe_of[5] == 20);
    int32_t full[7] = {0, 0, 0, 0, 0, 0, 0};
    CHECK(topomap_place_groups(an, 7, full, NULL, pe_of) == TOPOMAP_EINVAL); /* 7 > 6 slots */
    int32_t swapped[3] = {1, 0, 2};
    int32_t g2[3] = {1, 1, 0};
    CHECK(topomap_place_groups(an, 3, g2, swapped, pe_of) == 0);
    CHECK(pe_of[0] == 9 && pe_of[1] == 9 && pe_of[2] == 1);
    topomap_alloc_nodes_destroy(an);
    int32_t bad[2] = {1, 999};
    CHECK(topomap_alloc_nodes_create(m, bad, 2, 1, &an) == TOPOMAP_EINVAL);
}

static void test_group_and_quotient(const topomap_machine *m, uint64_t seed)
{
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    int32_t n = 5 + (int32_t)topomap_rng_below(&r, 40), npes = topomap_machine_npes(m);
    int64_t *indptr = calloc((size_t)n + 1, sizeof *indptr);
    int32_t *idx = malloc((size_t)n * n * sizeof *idx);
    double *by = malloc((size_t)n * n * sizeof *by);
    int64_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        for (int32_t j = 0; j < n; j++)
            if (i != j && topomap_rng_uniform(&r) < 0.2) {
                idx[k] = j;
                by[k++] = 1 + (double)topomap_rng_below(&r, 50);
            }
        indptr[i + 1] = k;
    }
    topomap_pattern p = {n, indptr, idx, by};
    int32_t capacity = 1 + (int32_t)topomap_rng_below(&r, 3);
    int32_t nalloc = (n + capacity - 1) / capacity + (int32_t)topomap_rng_below(&r, 6);
    if (nalloc > npes) nalloc = npes;
    int32_t *alloc = malloc((size_t)npes * sizeof *alloc);
    for (int32_t i = 0; i < npes; i++) alloc[i] = i;
    for (int32_t i = npes - 1; i > 0; i--) { /* a random allocation */
        int32_t j = (int32_t)topomap_rng_below(&r, (uint64_t)i + 1), t = alloc[i];
        alloc[i] = alloc[j];
        alloc[j] = t;
    }
    topomap_alloc_nodes *an = NULL;
    CHECK(topomap_alloc_nodes_create(m, alloc, nalloc, capacity, &an) == 0);
    int32_t *group = malloc((size_t)n * sizeof *group), ng = 0;
    int64_t *gslots = malloc((size_t)an->nnodes * sizeof *gslots);
    topomap_run_options run = {seed, NULL, NULL};
    int rc = topomap_group_by_node(&p, an, &run, group, gslots, &ng);
    if (n > nalloc * capacity) {
        CHECK(rc == TOPOMAP_EINVAL);
    } else {
        CHECK(rc == 0);
        /* as few groups as the largest nodes can hold */
        int64_t total = 0;
        for (int32_t j = 0; j < ng; j++) total += gslots[j];
        CHECK(total >= n && total - gslots[ng - 1] < n);
        int64_t *size = calloc((size_t)ng, sizeof *size);
        for (int32_t i = 0; i < n; i++) {
            CHECK(group[i] >= 0 && group[i] < ng);
            if (group[i] >= 0 && group[i] < ng) size[group[i]]++;
        }
        for (int32_t j = 0; j < ng; j++) CHECK(size[j] <= gslots[j]);
        free(size);
        /* quotient == dense sum over pairs in different groups */
        int64_t *qp = malloc(((size_t)ng + 1) * sizeof *qp);
        int32_t *qi = malloc((size_t)k * sizeof *qi + 1);
        double *qb = malloc((size_t)k * sizeof *qb + 1);
        double *dense = calloc((size_t)ng * ng, sizeof *dense);
        CHECK(topomap_pattern_quotient(&p, group, ng, qp, qi, qb) == 0);
        for (int32_t i = 0; i < n; i++)
            for (int64_t e = indptr[i]; e < indptr[i + 1]; e++)
                if (group[i] != group[idx[e]]) dense[(size_t)group[i] * ng + group[idx[e]]] += by[e];
        for (int32_t a = 0; a < ng; a++) {
            for (int64_t e = qp[a]; e < qp[a + 1]; e++) {
                CHECK(qi[e] != a && (e == qp[a] || qi[e - 1] < qi[e]));
                CHECK(close_to(qb[e], dense[(size_t)a * ng + qi[e]]));
                dense[(size_t)a * ng + qi[e]] = 0;
            }
        }
        for (int64_t i = 0; i < (int64_t)ng * ng; i++) CHECK(dense[i] == 0);
        topomap_pattern q = {ng, qp, qi, qb};
        CHECK(topomap_pattern_validate(&q) == 0);
        free(qp);
        free(qi);
        free(qb);
        free(dense);
    }
    free(gslots);
    free(group);
    topomap_alloc_nodes_destroy(an);
    free(alloc);
    free(indptr);
    free(idx);
    free(by);
}

/* A 7-point stencil on an a x b x c grid, rank x + a (y + b z), with its coordinates. */
static topomap_pattern grid_stencil(int32_t a, int32_t b, int32_t c, int32_t *coords, int64_t *indptr, int32_t *idx,
                                    double *by)
{
    int32_t n = a * b * c, dims[3] = {a, b, c};
    int64_t k = 0;
    for (int32_t i = 0; i < n; i++) {
        int32_t x[3] = {i % a, i / a % b, i / (a * b)};
        for (int32_t d = 0; d < 3; d++) coords[3 * i + d] = x[d];
        for (int32_t d = 0, s = 1; d < 3; s *= dims[d], d++) {
            if (x[d] > 0) idx[k] = i - s, by[k++] = 1;
            if (x[d] < dims[d] - 1) idx[k] = i + s, by[k++] = 1;
        }
        indptr[i + 1] = k;
        /* rows sorted: -s entries ascend as s falls; emit in id order */
        int64_t lo = indptr[i];
        for (int64_t e = lo + 1; e < k; e++)
            for (int64_t f = e; f > lo && idx[f - 1] > idx[f]; f--) {
                int32_t t = idx[f];
                idx[f] = idx[f - 1];
                idx[f - 1] = t;
            }
    }
    indptr[0] = 0;
    topomap_pattern p = {n, indptr, idx, by, coords, 3};
    return p;
}

static void test_group_by_grid(void)
{
    enum { A = 8, B = 4, C = 4, N = A * B * C };
    int32_t coords[3 * N], idx[6 * N], group[N];
    int64_t indptr[N + 1];
    double by[6 * N];
    topomap_pattern p = grid_stencil(A, B, C, coords, indptr, idx, by);
    CHECK(topomap_pattern_validate(&p) == 0);
    int64_t slots[8] = {16, 16, 16, 16, 16, 16, 16, 16};
    int done = 0;
    /* boxes of least surface 20 (4x2x2, 2x4x2, 2x2x4); the first by b0, then b1: 2 x 2 x 4 */
    CHECK(topomap_i_group_by_grid(&p, 8, slots, group, &done) == 0 && done);
    int32_t lo[8][3], hi[8][3], size[8] = {0};
    for (int32_t g = 0; g < 8; g++)
        for (int32_t d = 0; d < 3; d++) lo[g][d] = INT32_MAX, hi[g][d] = -1;
    for (int32_t i = 0; i < N; i++) {
        int32_t g = group[i];
        CHECK(g >= 0 && g < 8);
        if (g < 0 || g >= 8) continue;
        size[g]++;
        for (int32_t d = 0; d < 3; d++) {
            lo[g][d] = coords[3 * i + d] < lo[g][d] ? coords[3 * i + d] : lo[g][d];
            hi[g][d] = coords[3 * i + d] > hi[g][d] ? coords[3 * i + d] : hi[g][d];
        }
    }
    for (int32_t g = 0; g < 8; g++)
        CHECK(size[g] == 16 && hi[g][0] - lo[g][0] == 1 && hi[g][1] - lo[g][1] == 1 && hi[g][2] - lo[g][2] == 3);
    CHECK(group[0] == 0 && group[2] == 1 && group[2 * A] == 4); /* boxes in grid order, axis 0 fastest */
    double cut = 0;
    for (int32_t i = 0; i < N; i++)
        for (int64_t e = indptr[i]; e < indptr[i + 1]; e++) cut += group[i] != group[idx[e]] ? by[e] : 0;
    CHECK(cut == 2 * (3 * B * C + 1 * A * C)); /* 3 cuts across x (B x C faces), 1 across y, both directions */

    /* no tiling: unequal slots, room left over, a duplicated cell; the caller then partitions */
    int64_t uneven[8] = {17, 16, 16, 16, 16, 16, 16, 15};
    CHECK(topomap_i_group_by_grid(&p, 8, uneven, group, &done) == 0 && !done);
    int64_t roomy[9] = {16, 16, 16, 16, 16, 16, 16, 16, 16};
    CHECK(topomap_i_group_by_grid(&p, 9, roomy, group, &done) == 0 && !done);
    int32_t dup[3 * N];
    memcpy(dup, coords, sizeof dup);
    dup[3 * 5] = 4; /* processes 5 and 7 on process 4's cell (4, 0, 0) */
    dup[3 * 7] = 4;
    p.coords = dup;
    CHECK(topomap_i_group_by_grid(&p, 8, slots, group, &done) == 0 && !done);
    int64_t prime[1] = {N};
    p.coords = coords;
    CHECK(topomap_i_group_by_grid(&p, 1, prime, group, &done) == 0 && done); /* one box, the whole grid */
    /* hostile coordinates are named */
    dup[3 * 9 + 1] = -1;
    p.coords = dup;
    CHECK(topomap_i_group_by_grid(&p, 8, slots, group, &done) == TOPOMAP_EINVAL && !done);
    CHECK(strstr(topomap_last_error(), "process 9") != NULL);
    p.coords = coords;
    p.ndims = 4;
    CHECK(topomap_i_group_by_grid(&p, 8, slots, group, &done) == TOPOMAP_EINVAL);
    p.ndims = 3;
}

static void test_group_by_node_grid(const topomap_machine *m)
{
    /* 4x2x2 = 16 processes onto 4 nodes of the 4x4 torus (one PE each, capacity 4: 4 slots) */
    enum { N = 16 };
    int32_t coords[3 * N], idx[6 * N], group[N], alloc[4] = {0, 4, 8, 12}, ng = 0;
    int64_t indptr[N + 1], gslots[4];
    double by[6 * N];
    topomap_pattern p = grid_stencil(4, 2, 2, coords, indptr, idx, by);
    topomap_alloc_nodes *an = NULL;
    CHECK(topomap_alloc_nodes_create(m, alloc, 4, 4, &an) == 0);
    if (!an) return;
    CHECK(topomap_group_by_node(&p, an, NULL, group, gslots, &ng) == 0 && ng == 4);
    /* boxes of 4 cells: 1x2x2 (surface 4 + 2 + 2 = 8) beats 2x2x1 and 2x1x2 (2 + 2 + 4), and 4x1x1 (1 + 4 + 4) */
    for (int32_t i = 0; i < N; i++) CHECK(group[i] == coords[3 * i]);
    /* 3x3x1 = 9 processes: 3 groups of 4 slots leave room, so no box tiling; the partitioner, within the slots */
    topomap_pattern q = grid_stencil(3, 3, 1, coords, indptr, idx, by);
    CHECK(topomap_group_by_node(&q, an, NULL, group, gslots, &ng) == 0 && ng == 3);
    int32_t size[3] = {0};
    for (int32_t i = 0; i < 9; i++)
        if (group[i] >= 0 && group[i] < 3) size[group[i]]++;
    CHECK(size[0] <= 4 && size[1] <= 4 && size[2] <= 4 && size[0] + size[1] + size[2] == 9);
    topomap_alloc_nodes_destroy(an);
}

int main(void)
{
    int32_t groups[4] = {0, 0, 0, 0};
    double costs[1] = {1};
    topomap_node_tree t4 = {4, 1, groups, costs};
    int32_t dims[2] = {4, 4};
    uint8_t wrap[2] = {1, 1};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_torus(&t4, 2, dims, wrap, &m) == 0);
    test_alloc_nodes(m);
    test_group_by_grid();
    test_group_by_node_grid(m);
    for (uint64_t s = 1; s <= 60; s++) test_group_and_quotient(m, s);
    topomap_machine_destroy(m);
    return check_report();
}

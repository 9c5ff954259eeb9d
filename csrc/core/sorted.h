/* Internal: sorting and searching int arrays, shared by the mappers that keep
   sorted PE lists or classes of distinct slot counts (map_aphid.c,
   map_hierarchy.c, map_physgraph.c, map_qap.c, map_ptram.c) and by the
   evaluator's work split (eval.c).  Inline: the comparators are qsort's
   inner loop. */
#ifndef TOPOMAP_SORTED_H
#define TOPOMAP_SORTED_H
#include <stdint.h>
#include <stdlib.h>

/* qsort comparators, ascending. */
static inline int topomap_i_cmp_i32(const void *a, const void *b)
{
    int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
    return (x > y) - (x < y);
}

static inline int topomap_i_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* The first index i in [0, n) with a[i] >= v (n if none), a ascending. */
static inline int32_t topomap_i_lower_bound_i64(const int64_t *a, int32_t n, int64_t v)
{
    int32_t lo = 0, hi = n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (a[mid] < v) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Sort v[0, n) ascending and keep each value once at its front; returns how
   many distinct values there are. */
static inline int32_t topomap_i_distinct_i64(int64_t *v, int32_t n)
{
    qsort(v, (size_t)n, sizeof *v, topomap_i_cmp_i64);
    int32_t nd = 0;
    for (int32_t j = 0; j < n; j++)
        if (nd == 0 || v[nd - 1] != v[j]) v[nd++] = v[j];
    return nd;
}

#endif

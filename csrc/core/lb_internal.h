/* Shared by lb_alias.c and lb_unit.c: input checks of the load balancers. */
#ifndef TOPOMAP_LB_INTERNAL_H
#define TOPOMAP_LB_INTERNAL_H
#include <stdint.h>

/* Checks nproc >= 1, counts[p] >= 0 and a total that leaves room for
   k * nproc (at most INT64_MAX - nproc), and that order (if not NULL) is a
   permutation of 0..nproc-1; sets *total.  EINVAL names the process. */
int topomap_i_lb_check(int32_t nproc, const int64_t *counts, const int32_t *order, int64_t *total);

/* The process at position i of the order (rank order when order is NULL). */
static inline int32_t topomap_i_lb_at(const int32_t *order, int32_t i) { return order ? order[i] : i; }
#endif

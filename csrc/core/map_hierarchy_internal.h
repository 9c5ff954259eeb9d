/* Internal to the hierarchy mapper (map_hierarchy*.c). */
#ifndef TOPOMAP_MAP_HIERARCHY_INTERNAL_H
#define TOPOMAP_MAP_HIERARCHY_INTERNAL_H
#include <stdint.h>
#include "topomap/partition.h"

/* A sub-task's progress 0..1 mapped onto [lo, hi] of a callback's range
   (progress NULL: no callback). */
typedef struct {
    int (*progress)(void *ctx, double fraction);
    void *ctx;
    double lo, hi;
} topomap_i_hspan;

/* The callback of a span (ctx = the span). */
int topomap_i_hspan_cb(void *span, double fraction);
/* Report fraction f of the span: 0, or TOPOMAP_ECANCELED with a message. */
int topomap_i_hspan_report(const topomap_i_hspan *s, double f);
/* The part [a, b] (fractions of s) of span s. */
topomap_i_hspan topomap_i_hspan_sub(const topomap_i_hspan *s, double a, double b);

/* Improve a k-way partition of g in place by at most `cycles` V-cycles
   (map_hierarchy_vcycle.c).  On entry part[v] in [0, k) with every part
   weighing at most caps[i] (absolute vertex weight); so on return.  A cycle
   that finds no smaller cut leaves the partition as it was and ends the
   cycles.  *cut (may be NULL) receives the final cut (each edge once). */
int topomap_i_vcycles(const topomap_ugraph *g, int32_t k, const double *caps, int32_t cycles, uint64_t seed,
                      const topomap_i_hspan *span, int32_t *part, double *cut);

#endif

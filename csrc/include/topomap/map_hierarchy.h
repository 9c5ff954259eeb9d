/* The hierarchy mapper (method "hierarchy", csrc/core/map_hierarchy*.c):
   n-to-1 mapping that minimises the QAP objective J = sum over directed
   messages of bytes x distance(PE_p, PE_q) on machines whose PE distance
   depends only on the lowest common group of a hierarchy (KaHIP/VieM/Scotch
   `tleaf` machines: node tree levels + tree network levels, fat trees).
   Top-down multisection along the hierarchy, then a swap/move local search
   on communication neighbourhoods through the evaluator (eval.h). */
#ifndef TOPOMAP_MAP_HIERARCHY_H
#define TOPOMAP_MAP_HIERARCHY_H
#include <stdint.h>
#include "machine.h"
#include "pattern.h"
#include "map.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------ */
/* The allocation seen as a hierarchy.                                 */

/* Groups of allocated PEs, numbered top-down (group 0 = all of them, the
   children of a group are consecutive ids).  `pes` holds the allocated PEs
   in increasing id order and group g owns pes[lo[g] .. hi[g]); a leaf
   (nchild 0) is one PE.  Two PEs in different children of g are at distance
   dist[g] (dist of a leaf is 0), and dist strictly decreases from a group to
   its children: levels of equal distance are merged into one group. */
typedef struct {
    int32_t ngroups, npes;
    int32_t height;      /* internal groups on the longest root-to-leaf path */
    int32_t *pes;        /* npes */
    int32_t *lo, *hi;    /* ngroups */
    int32_t *first_child, *nchild, *parent;
    double *dist;
    int32_t *leaf_of;    /* npes: the leaf group of pes[i] */
} topomap_hierarchy;

/* Build the hierarchy of an allocation from the routing oracle: sorted PEs
   whose consecutive distances split them top-down (largest distance first).
   Checks that the machine distance of every PE to a representative of each
   sibling group of its ancestors equals that group's distance (for groups
   with more than 65 children, to the next 64 siblings cyclically), and of
   every pair of PEs when the allocation has at most 256 PEs (ALL_PAIRS_LIMIT); fails with
   TOPOMAP_ENOTSUP naming two PEs whose distance breaks the hierarchy
   otherwise (a torus, a dragonfly, a graph network). */
int topomap_hierarchy_create(const topomap_machine *m, const int32_t *alloc, int32_t nalloc,
                             topomap_hierarchy **out);
void topomap_hierarchy_destroy(topomap_hierarchy *h);

/* ------------------------------------------------------------------ */
/* The mapper.                                                          */

enum { TOPOMAP_HIER_FAST = 0, TOPOMAP_HIER_ECO = 1, TOPOMAP_HIER_STRONG = 2 };

typedef struct {
    /* epsilon >= 0: every PE holds at most L = min(capacity, ceil((1 + eps)
       n / PEs)) processes, and each multisection step splits a group within
       (1 + eps)^(1/height) of its children's shares. */
    double imbalance;
    /* >= 0: the swap search pairs u with processes within `depth` hops of u
       in the communication graph (VieM's N_C^d); 0 = moves only. */
    int32_t depth;
    int32_t effort; /* TOPOMAP_HIER_FAST | ECO | STRONG */
    int32_t tries;  /* >= 1 complete runs with derived seeds, the lowest J kept */
} topomap_hierarchy_options;

/* imbalance 0.03, depth 1, effort ECO, tries 1. */
void topomap_hierarchy_options_init(topomap_hierarchy_options *opt);

/* Map the n processes of p onto the allocation's PEs (at most `capacity`
   each, and the bound L above), minimising J.  Fails with TOPOMAP_ENOTSUP
   when the machine is not a hierarchy over the allocation (see
   topomap_hierarchy_create), TOPOMAP_EINVAL for bad options or when the
   processes do not fit, TOPOMAP_ECANCELED when the progress callback says
   so.  Same seed, same mapping.  *qap (may be NULL) receives J. */
int topomap_map_hierarchy(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc,
                          int32_t nalloc, int32_t capacity, const topomap_hierarchy_options *opt,
                          const topomap_run_options *run, int32_t *pe_of, double *qap);

#ifdef __cplusplus
}
#endif
#endif

/* APHiD (Michelogiannakis, Ibrahim, Shalf, Wilke, Knight & Kenny 2017):
   top-down hierarchical partitioning that follows the machine's levels.
   Choices the paper leaves open and the complexity: csrc/core/map_aphid.c. */
#ifndef TOPOMAP_MAP_APHID_H
#define TOPOMAP_MAP_APHID_H
#include <stdint.h>
#include "machine.h"
#include "map.h"
#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The allocation as a tree of groups, read from the routing oracle: two
   allocated PEs share a group of level L when topomap_machine_level_of(a, b)
   <= L.  A group with a single child is merged into it, so every inner
   group has >= 2 children and every leaf is one PE (level 0).  Groups are
   numbered breadth first from the root (group 0); the children of a group
   are consecutive, in increasing order of their smallest PE id; `pes` lists
   the allocation's PEs in that tree order, group g covering
   pes[start[g] .. start[g] + size[g]). */
typedef struct {
    int32_t ngroups;
    int32_t npes;
    int32_t *pes;         /* npes */
    int32_t *start;       /* ngroups */
    int32_t *size;        /* ngroups */
    int32_t *level;       /* ngroups: level of the lowest common ancestor of the group's PEs */
    int32_t *first_child; /* ngroups: -1 for a leaf */
    int32_t *nchildren;   /* ngroups: 0 for a leaf */
} topomap_alloc_tree;

/* Fails with TOPOMAP_EINVAL on a PE outside the machine or listed twice. */
int topomap_alloc_tree_create(const topomap_machine *m, const int32_t *alloc, int32_t nalloc,
                              topomap_alloc_tree **out);
void topomap_alloc_tree_destroy(topomap_alloc_tree *t);

typedef struct {
    int recursive;    /* 1: recursive bisection at every split (APHiD's choice), 0: multilevel k-way */
    int proportional; /* 1: each child takes its exact share of a group's processes, in proportion to its
                         slots; 0: the children's slots are only bounds (fewer subtrees when that cuts less) */
    int32_t ntries;   /* multilevel runs per bisection, the best kept (>= 1) */
} topomap_aphid_options;

/* recursive 1, proportional 1, ntries 4. */
void topomap_aphid_options_init(topomap_aphid_options *opt);

/* Map the n processes of p onto the allocation (capacity processes per PE):
   partition the traffic C + C^T of the processes of each group of the
   allocation tree among the group's children, from the root down, with the
   children's slots as hard capacities.  Processes are pruned beforehand by
   the caller if wanted (APHiD's 5 % rule is topomap/patterns_util.prune).
   TOPOMAP_ENOTSUP when the allocation spans several nodes of a network
   whose routing oracle has no levels (every node pair meets at one level
   while hop counts differ: tori, meshes, hypercubes, graph fabrics). */
int topomap_map_aphid(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                      int32_t capacity, const topomap_aphid_options *opt, const topomap_run_options *run,
                      int32_t *pe_of);

#ifdef __cplusplus
}
#endif
#endif

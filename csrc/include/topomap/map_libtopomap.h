/* LibTopoMap's heuristics (T. Hoefler and M. Snir, "Generic Topology
   Mapping Strategies for Large-scale Parallel Architectures", ICS 2011):
   greedy graph embedding, recursive co-bisection and reverse Cuthill-McKee.

   All three first run the multicore step of LibTopoMap (the processes are
   grouped into as few groups as the largest allocation nodes hold,
   topomap_group_by_node, and the nodal pattern between the groups is built,
   topomap_pattern_quotient), then map groups onto the allocation's nodes
   through the machine's network graph (topomap_machine_link_ends, so every
   machine kind works), then put each group onto its node's PEs in rank order
   (topomap_place_groups).  Each algorithm's file (map_greedy.c,
   map_recursive.c, map_rcm.c) states what it takes from the paper, what it
   had to choose and its complexity.

   Every mapper writes pe_of[0..p->n) for the PEs alloc[0..nalloc), at most
   `capacity` processes per PE; TOPOMAP_EINVAL names a bad option or
   argument, TOPOMAP_ECANCELED means the progress callback asked to stop. */
#ifndef TOPOMAP_MAP_LIBTOPOMAP_H
#define TOPOMAP_MAP_LIBTOPOMAP_H
#include <stdint.h>
#include "machine.h"
#include "map.h"
#include "partition.h"
#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- greedy (map_greedy.c) ---- */
enum { TOPOMAP_GREEDY_START_FIRST = 0, TOPOMAP_GREEDY_START_RANDOM = 1 };
typedef struct {
    topomap_run_options run;
    int32_t start;      /* where the heaviest group goes: the allocation's first node, or a seeded random one */
    int32_t congestion; /* 1: among the nearest nodes, the least traffic/capacity on the routes; 0: lowest id */
    int32_t tries;      /* >= 1 runs from different start nodes (the others seeded random), the best kept */
    int32_t candidates; /* price at most this many nearest free nodes (search order) per placement; 0: all */
} topomap_greedy_options;
/* seed 0, no progress, start FIRST, congestion 1, tries 1, candidates 64. */
void topomap_greedy_options_init(topomap_greedy_options *opt);
int topomap_map_greedy(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                       int32_t capacity, const topomap_greedy_options *opt, int32_t *pe_of);

/* ---- recursive co-bisection (map_recursive.c) ---- */
typedef struct {
    topomap_run_options run;
    /* 1: every bisection of the groups weighs their traffic to the groups
       outside the part (placed, or bound for other node halves) by the hops
       to each node half, Scotch-style; 0: plain co-bisection, halves paired
       in order (LibTopoMap). */
    int32_t context;
    /* Optional node geometry (tori, meshes, hypercubes; NULL = none): machine
       node v sits at coords[v * ndims + d], and ring[d] is the size of
       dimension d if it wraps around, else 0.  With it the nodes are cut at
       the median of their longest extent instead of by graph bisection. */
    int32_t ndims;
    const int32_t *coords;
    const int32_t *ring;
} topomap_recursive_options;
/* seed 0, no progress, context 1, no geometry. */
void topomap_recursive_options_init(topomap_recursive_options *opt);
int topomap_map_recursive(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                          int32_t capacity, const topomap_recursive_options *opt, int32_t *pe_of);

/* ---- reverse Cuthill-McKee (map_rcm.c) ---- */
/* Where each connected component's Cuthill-McKee search starts:
   PERIPHERAL: a pseudo-peripheral vertex found by George and Liu's
     level-structure search from the component's lowest-numbered vertex
     (SPARSPAK's GENRCM, which LibTopoMap uses); the components in order of
     their lowest-numbered vertex.
   MIN_DEGREE: the unvisited vertex of least degree, ties to the lower
     index (SciPy's reverse_cuthill_mckee, with a stable sort).
   Either way the vertices a vertex discovers are appended in increasing
   degree, ties in adjacency order, and the whole order is reversed. */
enum { TOPOMAP_RCM_PERIPHERAL = 0, TOPOMAP_RCM_MIN_DEGREE = 1 };
/* order[i] = the i-th vertex of g (weights ignored) in reverse Cuthill-McKee order. */
int topomap_rcm_order(const topomap_ugraph *g, int32_t start, int32_t *order);

typedef struct {
    topomap_run_options run;
    int32_t start; /* TOPOMAP_RCM_PERIPHERAL or TOPOMAP_RCM_MIN_DEGREE, for both graphs */
} topomap_rcm_options;
/* seed 0, no progress, start PERIPHERAL. */
void topomap_rcm_options_init(topomap_rcm_options *opt);
int topomap_map_rcm(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                    int32_t capacity, const topomap_rcm_options *opt, int32_t *pe_of);

#ifdef __cplusplus
}
#endif
#endif

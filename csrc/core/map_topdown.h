/* Internal: the steps shared by the mappers that split the processes of a
   group of PEs among its children, top-down (map_aphid.c, map_hierarchy.c,
   map_dualrb.c), and by their local searches.
   Implementation in map_topdown.c. */
#ifndef TOPOMAP_MAP_TOPDOWN_H
#define TOPOMAP_MAP_TOPDOWN_H
#include <stdint.h>
#include "topomap/machine.h"
#include "topomap/partition.h"

/* pes[0, nalloc) = the allocation's PEs in increasing order; TOPOMAP_EINVAL
   naming the entry when a PE is outside the machine or listed twice. */
int topomap_i_sorted_pes(const topomap_machine *m, const int32_t *alloc, int32_t nalloc, int32_t *pes);

/* The subgraph of g induced by the vertices verts[0, w) (vertex i of it is
   verts[i]; rows keep g's order, so ascending verts keep them sorted),
   written to sxadj (w + 1) / sadj / swgt (g's edge count at most).  loc
   (g->n) is all -1 on entry and again on return. */
topomap_ugraph topomap_i_induced_subgraph(const topomap_ugraph *g, const int32_t *verts, int32_t w, int32_t *loc,
                                          int64_t *sxadj, int32_t *sadj, double *swgt);

/* Stable counting sort of items[0, w) by part[i] in [0, k): on return part
   j's items stand at items[count[j] .. count[j + 1]) in their former order.
   Scratch: count (k + 1), tmp (w). */
void topomap_i_sort_by_part(int32_t *items, int32_t w, const int32_t *part, int32_t k, int32_t *count,
                            int32_t *tmp);

/* Stable sort of items[0, w) by place[items[i]] in [0, k): the first
   queue of a local search place by place (map_qap_search.c,
   map_hierarchy.c).  A try reads the processes near u, and when the next
   try is on the same or a nearby place they are still in cache: the QAP
   search ran 2.2 x faster so on the 100^3 stencil onto
   torus:40x40x40/16, to the same J, than in a random order of all
   processes.  0 or TOPOMAP_ENOMEM. */
int topomap_i_sort_by_place(int32_t *items, int32_t w, const int32_t *place, int32_t k);

/* Ring geometry of the mappers that cut tori by coordinates (map_recursive.c,
   map_dualrb.c).  The shortest arc of a ring of r positions that covers
   the occupied ones (occ[x] != 0, at least one): its extent, *start its
   first position. */
int64_t topomap_i_ring_arc(const uint8_t *occ, int64_t r, int64_t *start);
/* Hops between the intervals [s1, s1 + e1) and [s2, s2 + e2) of one
   dimension, on a ring of r positions (0: a path); 0 when they meet. */
int64_t topomap_i_interval_hops(int64_t s1, int64_t e1, int64_t s2, int64_t e2, int64_t r);

/* The half (0 or 1) a part too small for both fills first: the one its
   outside traffic prefers (ext[2i + h]: member i's outside cost on half h;
   NULL or equal sums: no preference), else the one with more room. */
int topomap_i_fill_first(const double *ext, int32_t n, int64_t room0, int64_t room1);

#endif

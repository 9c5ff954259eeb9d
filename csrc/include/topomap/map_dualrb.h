/* The top-down mapper for any machine (csrc/core/map_dualrb.c): dual
   recursive bipartitioning of the processes along the target's own
   decomposition, then swap/move search on the QAP objective. */
#ifndef TOPOMAP_MAP_DUALRB_H
#define TOPOMAP_MAP_DUALRB_H
#include <stdint.h>
#include "machine.h"
#include "map.h"
#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    topomap_run_options run;
    /* The target decomposition: the allocation's machine nodes, each once,
       in leaf order, and gap[i] (i < count - 1) the level of the cut
       between order[i] and order[i + 1]: a range of the order splits at
       its lowest-level gap (the one nearest its middle on a tie). */
    const int32_t *order;
    const int32_t *gap;
    int32_t count;
    /* Optional geometry (tori, meshes, hypercubes): coords[v * ndims + d]
       of every machine node v and ring[d] (the ring's size, 0 for a path).
       With it a range is cut across whichever of its (up to 3) longest
       extents costs least, at the coordinate nearest its middle; `gap` is
       then not read. */
    const int32_t *coords;
    const int32_t *ring;
    int32_t ndims;
    /* Optional process coordinates (a Cartesian process grid, mesh
       centroids): pcoords[u * pdims + a], 0 <= x < 2^20, 1 <= pdims <= 3.
       With them a part is split by coordinates (the first or last k0 along
       whichever axis costs least) instead of by the graph partitioner. */
    const int32_t *pcoords;
    int32_t pdims;
    int32_t context; /* 1: Scotch's external gains (anchors); 0: plain min cuts */
    int32_t sweeps;  /* local-search budget in sweeps over the boundary; 0: none */
    int32_t depth;   /* swap partners within this many hops in the traffic graph */
    int32_t max_partners;
    int32_t ntries;  /* multilevel runs per bisection, the best kept */
    int32_t tries;   /* complete runs with derived seeds, the lowest QAP objective kept */
    int32_t congestion_sweeps; /* then a bounded search on maximum link congestion; 0: none */
    int32_t flow_min; /* plain min cuts of at least this many processes add max-flow refinement; 0: none */
} topomap_topdown_options;

/* context 1, sweeps 4, depth 2, max_partners 64, ntries 2, tries 1, congestion_sweeps 0,
   flow_min TOPOMAP_TOPDOWN_FLOW_MIN, no order (required). */
#define TOPOMAP_TOPDOWN_FLOW_MIN 16384
void topomap_topdown_options_init(topomap_topdown_options *opt);

int topomap_map_topdown(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                        int32_t capacity, const topomap_topdown_options *opt, int32_t *pe_of);

#ifdef __cplusplus
}
#endif
#endif

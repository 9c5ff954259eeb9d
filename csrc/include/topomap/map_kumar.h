/* Kumar's hop-byte and maximum-contention mappers and Hilbert-curve
   renumbering (Kumar CH, "Topology and Routing Aware Mapping on Parallel
   Processors", PhD thesis 2012: ch. 6 GRASP, MAHD, EMAHD, the GGE baseline
   and the partition-based hybrid; ch. 7 LocalOpt; §5.5 SFC rank order).

   Kumar's model is one task per node: these mappers first group the
   processes into as few groups as the allocation's largest nodes hold
   (topomap_group_by_node, hard capacities; one process per group when every
   node offers one slot, the thesis's setting), map the group quotient onto
   the allocation's nodes as a quadratic assignment problem with the hop
   count between nodes as distance, and place each group's processes on its
   node's PEs in rank order (topomap_place_groups).  With integral bytes the
   node-level objective equals the evaluator's hop_bytes exactly.

   Every mapper writes pe_of[0..n) for the PEs alloc[0..nalloc), at most
   `capacity` processes per PE, works on every machine kind through the
   routing oracle, is deterministic for a seed (serial code) and returns
   TOPOMAP_ECANCELED when run->progress asks to stop. */
#ifndef TOPOMAP_MAP_KUMAR_H
#define TOPOMAP_MAP_KUMAR_H
#include <stdint.h>
#include "machine.h"
#include "map.h"
#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GRASP for the QAP (Li, Pardalos & Resende 1994), thesis §6.2.1. */
typedef struct {
    int32_t iterations; /* constructions + local searches, the best kept (>= 1) */
    double alpha;       /* restricted candidate list fraction, (0, 1] */
    double beta;        /* stage-1 fraction of smallest distances / largest flows, (0, 1] */
} topomap_grasp_options;

/* iterations 32, alpha 0.25, beta 0.5. */
void topomap_grasp_options_init(topomap_grasp_options *opt);

int topomap_map_grasp(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                      int32_t capacity, const topomap_grasp_options *opt, const topomap_run_options *run,
                      int32_t *pe_of);

/* Step 7 of MAHD (Algorithm 1 of ch. 6): where the next task goes. */
enum {
    TOPOMAP_MAHD_AVERAGE = 0,  /* the free node of least average hop distance to its mapped neighbours (the thesis) */
    TOPOMAP_MAHD_WEIGHTED = 1, /* the same average weighted by bytes: the least added hop-bytes */
    TOPOMAP_MAHD_GGE = 2       /* Kumar's GGE baseline: the free node closest to its most recently mapped neighbour */
};
/* How EMAHD picks the best of its runs. */
enum { TOPOMAP_OBJECTIVE_HOP_BYTES = 0, TOPOMAP_OBJECTIVE_MAX_CONGESTION = 1 };

/* MAHD (rule AVERAGE or WEIGHTED) or GGE (rule GGE), one run from the most
   central node. */
int topomap_map_mahd(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                     int32_t capacity, int rule, const topomap_run_options *run, int32_t *pe_of);

/* EMAHD: the MAHD run from every node that can hold the first task, the
   best by `objective` (ties: lower hop-bytes, then the earlier start node
   in allocation order).  Includes MAHD's own start, so it is never worse
   than MAHD by that objective. */
int topomap_map_emahd(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                      int32_t capacity, int rule, int objective, const topomap_run_options *run, int32_t *pe_of);

/* Ch. 7 "LocalOpt": EMAHD picked by maximum congestion, then first-improvement
   swap sweeps through the evaluator (pairs with a task on a most loaded link,
   then with a task on a link loaded to >= 90 % of the maximum when those
   are exhausted; moves to unused nodes too), accepting a swap that lowers
   the maximum link congestion, or keeps it and lowers the sum of squared
   link congestions; at most `max_passes` (>= 1) sweeps. */
int topomap_map_max_contention(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc,
                               int32_t nalloc, int32_t capacity, int32_t max_passes, const topomap_run_options *run,
                               int32_t *pe_of);

/* The hybrid of §6.2.3: the allocation's nodes and the processes are both
   cut into parts of about `part_size` (>= 1) nodes, GRASP maps the part
   quotient, then GRASP maps each matched pair.  One part: plain GRASP. */
int topomap_map_kumar_hybrid(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc,
                             int32_t nalloc, int32_t capacity, int32_t part_size, const topomap_grasp_options *opt,
                             const topomap_run_options *run, int32_t *pe_of);

/* Hilbert curve (Skilling 2004, "Programming the Hilbert curve") over the
   cube [0, 2^bits)^ndims, ndims * bits <= 64: position of a point along
   the curve.  coords[0] is the most significant axis; the curve starts at
   the origin and consecutive positions are unit steps. */
int topomap_hilbert_index(int32_t ndims, int32_t bits, const uint32_t *coords, uint64_t *index);

/* The nodes of a torus or mesh of size dims[0..ndims) (node id = x0 + d0 *
   (x1 + d1 * ...)) along the Hilbert curve over the enclosing 2^m cube:
   order[r] = the position in nodes[] of the r-th node met (a
   permutation of 0..count-1).  Axis 0 is the curve's most significant. */
int topomap_hilbert_order(int32_t ndims, const int32_t *dims, int32_t count, const int32_t *nodes, int32_t *order);

#ifdef __cplusplus
}
#endif
#endif

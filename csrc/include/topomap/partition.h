/* Graph partitioning: k parts of bounded weight with a small edge cut
   (multilevel k-way, Karypis & Kumar 1998; FM refinement, Fiduccia &
   Mattheyses 1982).  The mappers use it to group processes into nodes
   (PTRAM step 1, LibTopoMap's multicore step, APHiD's bisections).

   Balance.  t_i is part i's target weight: soft mode scales `targets` (NULL
   = all equal) so that they sum to the total vertex weight W; hard mode reads
   `targets` as absolute capacities (sum >= W) and sets t_i = W * cap_i / sum.
   Every returned partition has weight(i) <= L_i where
     soft: L_i = max((1 + imbalance) * t_i, R_i),
           R_i = w * ceil(t_i / w) if every vertex weighs the same w,
           R_i = t_i + (largest vertex weight) otherwise;
     hard: L_i = cap_i (exact; guaranteed whenever all vertex weights are
           equal and the capacities can hold them, otherwise the call fails
           with TOPOMAP_EINVAL naming the part it could not fit: packing
           unequal weights into bins is NP-hard).
   R_i is the smallest bound a greedy balancing pass can always reach: a part
   below its target can take any vertex.  Example: 10 unit vertices into 3
   parts may come out 4 + 3 + 3 whatever the imbalance. */
#ifndef TOPOMAP_PARTITION_H
#define TOPOMAP_PARTITION_H
#include <stdint.h>
#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An undirected graph in CSR: each edge {u, v} is stored as v in row u and u
   in row v with the same weight.  Rows are sorted by neighbour, without
   duplicates or self loops. */
typedef struct {
    int32_t n;
    const int64_t *xadj;   /* n + 1 */
    const int32_t *adjncy; /* xadj[n] */
    const double *adjwgt;  /* xadj[n], finite and > 0; NULL = all 1 */
    const double *vwgt;    /* n, finite and >= 0; NULL = all 1 */
} topomap_ugraph;

typedef struct {
    double imbalance;  /* epsilon >= 0 of the soft bound (ignored in hard mode) */
    uint64_t seed;     /* same seed, same partition */
    int hard;          /* 1: `targets` are capacities never to exceed */
    int recursive;     /* 1: recursive bisection, 0: multilevel k-way */
    int32_t ntries;    /* multilevel runs per bisection step, the best kept (>= 1) */
    int flows;         /* 1: max-flow refinement of every 2-way level (KaHIP's strong presets); 0: FM only */
    /* 1: the caller built the graph from one already checked (an induced
       subgraph, a contraction, topomap_ugraph_from_pattern), so the O(m log d)
       topomap_ugraph_validate is skipped in release builds (NDEBUG); builds
       without NDEBUG, such as the C tests, still check it. */
    int trusted;
    /* Called now and then with the fraction done; non-zero cancels the call,
       which then returns TOPOMAP_ECANCELED.  NULL: never called. */
    int (*progress)(void *ctx, double fraction);
    void *progress_ctx;
} topomap_partition_options;

/* imbalance 0.03, seed 0, soft, k-way, 4 tries, no flows, no progress callback. */
void topomap_partition_options_init(topomap_partition_options *opt);

/* Check the CSR invariants above; the message names the first bad entry. */
int topomap_ugraph_validate(const topomap_ugraph *g);

/* Hops from the nearest of the ns sources to every vertex into dist (n;
   -1 where none is reached).  A source outside [0, n) is an error. */
int topomap_ugraph_bfs(const topomap_ugraph *g, const int32_t *sources, int32_t ns, int32_t *dist);

/* The undirected graph C + C^T of a directed pattern: weight{p,q} =
   bytes[p,q] + bytes[q,p].  xadj has n + 1 entries; adjncy and adjwgt must
   hold 2 * nnz entries (the edge count is xadj[n]).  Rows come out sorted.
   Ready to use as a topomap_ugraph with the same n. */
int topomap_ugraph_from_pattern(const topomap_pattern *p, int64_t *xadj, int32_t *adjncy,
                                double *adjwgt);

/* Partition g into k >= 1 parts: part[v] in [0, k) (caller-owned, n).
   `targets` has k entries or is NULL (soft mode only).  Optional outputs:
   part_weights (k) and edge_cut (sum of the weights of edges whose ends lie
   in different parts, each undirected edge once). */
int topomap_partition(const topomap_ugraph *g, int32_t k, const double *targets,
                      const topomap_partition_options *opt, int32_t *part, double *part_weights,
                      double *edge_cut);

/* Improve a given partition in place (part[v] in [0, k) on entry): the
   balancing pass that enforces the bound above, then FM refinement.  Used
   to bring another partitioner's answer within topomap's bounds. */
int topomap_partition_refine(const topomap_ugraph *g, int32_t k, const double *targets,
                             const topomap_partition_options *opt, int32_t *part,
                             double *part_weights, double *edge_cut);

/* Weights and cut of any partition (part[v] in [0, k)). */
int topomap_partition_stats(const topomap_ugraph *g, int32_t k, const int32_t *part,
                            double *part_weights, double *edge_cut);

#ifdef __cplusplus
}
#endif
#endif

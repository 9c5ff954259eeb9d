/* Rank placement for collectives by pairwise swaps: Cui's "two-opt"
   (K. Cui, PhD thesis, SOKENDAI 2024, §3.3.2; Cui & Koibuchi, IEICE Trans.
   Inf. & Syst. 103(12), 2020) and simulated annealing over the same move.

   A collective is a list of stages of unicasts between ranks; a placement
   puts rank r on PE pe_of[r].  Two objectives (notes 003 §2.3-§2.4):
     HOPS        H(pi) = sum over unicasts of count x hops(node(pe_of[src]),
                 node(pe_of[dst])), each direction of an exchange a unicast;
     CONTENTION  C(pi) = sum over stages and directed links of
                 max(0, load - 1), load = messages of the stage whose route
                 crosses the link (the machine's deterministic routes).
   A move swaps the PEs of two distinct ranks drawn uniformly; its delta
   touches only the unicasts of those two ranks (a unicast between them
   once), so an iteration costs O(unicasts per rank x route length), not a
   re-evaluation of the whole schedule. */
#ifndef TOPOMAP_TWOOPT_H
#define TOPOMAP_TWOOPT_H
#include <stdint.h>
#include "machine.h"
#include "map.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Unicast k of stage s, k in [stage_ptr[s], stage_ptr[s+1]): src[k] -> dst[k]
   (ranks in [0, nranks), src != dst) carrying count[k] >= 1 messages. */
typedef struct {
    int32_t nranks, nstages;
    const int64_t *stage_ptr;
    const int32_t *src, *dst, *count;
} topomap_twoopt_schedule;

enum { TOPOMAP_TWOOPT_HOPS = 0, TOPOMAP_TWOOPT_CONTENTION = 1 };

typedef struct {
    int objective;      /* TOPOMAP_TWOOPT_HOPS or _CONTENTION */
    int64_t iterations; /* swaps tried (>= 0) */
    /* Annealing: 0 = two-opt (a swap is kept only if it lowers the cost);
       > 0 = Metropolis acceptance at temperature t0 (in cost units) falling
       geometrically to t1 > 0 over the iterations, the best placement seen
       returned. */
    double t0, t1;
    int64_t trace_every; /* > 0: trace[k] = cost after k * trace_every iterations */
} topomap_twoopt_options;

/* Check the schedule and the placement (PEs of the machine) and compute the
   objective into *cost. */
int topomap_twoopt_cost(const topomap_machine *m, const topomap_twoopt_schedule *s, const int32_t *pe_of,
                        int objective, int64_t *cost);

/* Improve pe_of[0..nranks) in place.  *initial = the starting objective,
   *cost = the final one, *accepted = swaps kept; trace (may be NULL) holds iterations / trace_every
   + 1 entries (trace[0] the starting cost).  Deterministic for run->seed;
   TOPOMAP_ECANCELED when run->progress asks to stop (pe_of then holds a
   valid but partial result). */
int topomap_twoopt_search(const topomap_machine *m, const topomap_twoopt_schedule *s,
                          const topomap_twoopt_options *opt, const topomap_run_options *run, int32_t *pe_of,
                          int64_t *initial, int64_t *cost, int64_t *accepted, int64_t *trace);

#ifdef __cplusplus
}
#endif
#endif

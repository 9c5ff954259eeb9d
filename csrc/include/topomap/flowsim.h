/* Flow-level network simulation (issue 14, congestion): the time a set of
   messages takes on the machine's links, fluid model.

   Flows f = 0..F-1, each from PE src_pe[f] to PE dst_pe[f] with bytes[f] >= 0,
   latency[f] >= 0 seconds and a rate cap[f] > 0 bytes/s (+inf: none), in
   stage[f] of 0..nstages-1, sent by rank src_rank[f] to rank dst_rank[f]
   (0..nranks-1).  bandwidth[l] (bytes/s, machine nlinks entries) must be
   finite and > 0 for every link some route uses; other entries are ignored.

   Route: a flow between PEs of different nodes crosses the links of
   topomap_machine_route(node_a, node_b); a flow inside one node crosses none,
   so only its cap limits it (no links, no cap and bytes > 0 is an error).

   Life of a flow: released at time R (below), it waits latency seconds
   without using bandwidth, then transfers its bytes at a rate that changes
   over time; it finishes when the last byte arrives (R + latency for a
   0-byte flow).

   Rates, share != 0: at every instant the flows in their transfer phase get
   the max-min fair allocation under the link bandwidths and their caps
   (progressive filling, Bertsekas & Gallager, Data Networks, 2nd ed. 1992,
   §6.5.2), recomputed each time a flow finishes or starts transferring.
   share == 0: each flow alone, at min(cap, smallest bandwidth on its route)
   (the Hockney model: no congestion).

   Schedule: the stages run in order 0..nstages-1, `iterations` times over;
   iteration i+1 stage 0 follows iteration i stage nstages-1.
   - TOPOMAP_FLOWSIM_BARRIER: every flow of a (iteration, stage) is released
     when every flow of the previous one has finished (time 0 for the
     first); an empty stage takes no time.
   - TOPOMAP_FLOWSIM_RANKS: rank r is ready for its first stage at 0 and for
     the next one at max(ready for this one, finish of every flow of this
     stage with dst_rank r); a flow is released when its src_rank is ready
     for its stage.  A rank that only sends runs ahead, so instances of the
     same flow in different iterations may transfer at the same time.

   Outputs: finish[i * F + f], the finish time of flow f in iteration i;
   stage_end[i * nstages + s], the largest finish of that (iteration, stage)
   (an empty one: the end of the one before, 0 for the very first);
   makespan (largest time of all); link_bytes[l] (may be NULL), the bytes
   of one iteration through each link; events, the distinct times the
   simulation stopped at; recomputes, how many rate allocations it ran.

   Finishes and transfer starts within a relative 1e-11 of the next event
   time are taken together at that time, so symmetric patterns give few
   events; results are exact to about that precision. */
#ifndef TOPOMAP_FLOWSIM_H
#define TOPOMAP_FLOWSIM_H
#include <stdint.h>
#include "machine.h"
#include "map.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { TOPOMAP_FLOWSIM_BARRIER = 0, TOPOMAP_FLOWSIM_RANKS = 1 };

typedef struct {
    int64_t nflows;
    const int32_t *src_pe, *dst_pe;
    const double *bytes, *latency, *cap;
    const int32_t *stage, *src_rank, *dst_rank;
    int32_t nstages, nranks;
} topomap_flows;

typedef struct {
    const double *bandwidth; /* machine nlinks entries */
    int32_t sync;            /* TOPOMAP_FLOWSIM_BARRIER or TOPOMAP_FLOWSIM_RANKS */
    int32_t iterations;      /* >= 1 */
    int32_t share;           /* 0: every flow alone (Hockney), else max-min fair sharing */
} topomap_flowsim_options;

typedef struct {
    double *finish;     /* caller-owned, iterations * nflows */
    double *stage_end;  /* caller-owned, iterations * nstages */
    double *link_bytes; /* caller-owned, machine nlinks, or NULL */
    double makespan;
    int64_t events, recomputes;
} topomap_flowsim_result;

/* Simulate.  run may be NULL; its progress callback is called now and then
   with the fraction of flow instances finished, and a non-zero return stops
   the simulation with TOPOMAP_ECANCELED.  Bad input: TOPOMAP_EINVAL with a
   message naming the first bad entry ("flow 17: bytes nan"). */
int topomap_flowsim(const topomap_machine *m, const topomap_flows *flows, const topomap_flowsim_options *opt,
                    const topomap_run_options *run, topomap_flowsim_result *res);

#ifdef __cplusplus
}
#endif
#endif

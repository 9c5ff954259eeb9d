/* Internal: bounded local search on maximum link congestion over any
   machine (map_congestion_search.c), the last phase of mappers that first
   optimise hop-bytes or J (map_dualrb.c); and the acceptance rule it shares
   with Kumar's LocalOpt (map_maxcontention.c), judged from link deltas
   (map_congestion_judge.c). */
#ifndef TOPOMAP_MAP_CONGESTION_SEARCH_H
#define TOPOMAP_MAP_CONGESTION_SEARCH_H
#include <stdint.h>
#include "topomap/eval.h"
#include "topomap/machine.h"
#include "topomap/map.h"
#include "topomap/partition.h"
#include "eval_deltas.h"
#include "map_physgraph.h"

typedef struct {
    uint64_t seed;
    int32_t sweeps;       /* at most this many sweeps over the processes on hot links */
    int32_t max_partners; /* swap partners tried per hot process */
} topomap_i_congestion_search_options;

/* Warm sweeps try the processes on links loaded to at least this fraction
   of the maximum. */
#define TOPOMAP_I_CONGESTION_WARM 0.9

/* A sweep stops trying hot processes once its tries have scanned this many
   edge ends of the traffic graph per edge end it has (or _MIN, if more):
   where nearly every process is hot (dense traffic) the tries cost
   hot x partners x degree, 100x the graph per sweep. */
#define TOPOMAP_I_CONGESTION_SWEEP_WORK 16
#define TOPOMAP_I_CONGESTION_SWEEP_WORK_MIN (1 << 20)

/* 1 when `a` has a lower maximum congestion than `cur`, or the same maximum
   and a lower sum of squared link congestions (relative 1e-9): the rule that
   spreads load off tied maxima until the maximum itself can drop. */
int topomap_i_congestion_better(const topomap_metrics *a, const topomap_metrics *cur);

/* That rule on changes not yet made: an evaluator of the current mapping,
   its metrics, the links at the maximum and scratch for the deltas. */
typedef struct {
    const topomap_machine *m;
    topomap_eval *e;
    topomap_metrics cur;
    topomap_i_link_deltas d; /* of the change judged last */
    int64_t at_max;          /* links at the maximum congestion */
    int64_t touched_at_max;  /* of them, those the change judged last touches */
} topomap_i_congestion_judge;

int topomap_i_judge_init(topomap_i_congestion_judge *j, const topomap_machine *m, const topomap_pattern *p,
                         const int32_t *pe_of);
void topomap_i_judge_free(topomap_i_congestion_judge *j);
/* 1 when moving p to new_p and q (or -1) to new_q is better than now; *rc
   on failure (no route). */
int topomap_i_judge_better(topomap_i_congestion_judge *j, int32_t p, int32_t new_p, int32_t q, int32_t new_q,
                           int *rc);
/* After the change judged last has been made on j->e: j->cur and the count
   of links at the maximum. */
void topomap_i_judge_accepted(topomap_i_congestion_judge *j);

/* Improve pe_of (PEs of the allocation described by an, at most
   `an->capacity` processes per PE) in place; g is the pattern's C + C^T.
   The maximum congestion never increases. */
int topomap_i_congestion_search(const topomap_machine *m, const topomap_pattern *p, const topomap_ugraph *g,
                                const topomap_alloc_nodes *an, const topomap_i_congestion_search_options *o,
                                topomap_i_ticker *t, int32_t *pe_of);

#endif

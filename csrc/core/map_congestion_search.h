/* Internal: bounded local search on maximum link congestion over any
   machine (map_congestion_search.c), the last phase of mappers that first
   optimise hop-bytes or J (map_dualrb.c); and the acceptance rule it shares
   with Kumar's LocalOpt (map_maxcontention.c). */
#ifndef TOPOMAP_MAP_CONGESTION_SEARCH_H
#define TOPOMAP_MAP_CONGESTION_SEARCH_H
#include <stdint.h>
#include "topomap/eval.h"
#include "topomap/machine.h"
#include "topomap/map.h"
#include "topomap/partition.h"
#include "map_physgraph.h"

typedef struct {
    uint64_t seed;
    int32_t sweeps;       /* at most this many sweeps over the processes on hot links */
    int32_t max_partners; /* swap partners tried per hot process */
} topomap_i_congestion_search_options;

/* Warm sweeps try the processes on links loaded to at least this fraction
   of the maximum. */
#define TOPOMAP_I_CONGESTION_WARM 0.9

/* 1 when `a` has a lower maximum congestion than `cur`, or the same maximum
   and a lower sum of squared link congestions (relative 1e-9): the rule that
   spreads load off tied maxima until the maximum itself can drop. */
int topomap_i_congestion_better(const topomap_metrics *a, const topomap_metrics *cur);

/* Improve pe_of (PEs of the allocation described by an, at most
   `an->capacity` processes per PE) in place; g is the pattern's C + C^T.
   The maximum congestion never increases. */
int topomap_i_congestion_search(const topomap_machine *m, const topomap_pattern *p, const topomap_ugraph *g,
                                const topomap_alloc_nodes *an, const topomap_i_congestion_search_options *o,
                                topomap_i_ticker *t, int32_t *pe_of);

#endif

/* Internal: swap/move local search on the QAP objective J over any machine
   (map_qap_search.c), for mappers that first place processes on nodes
   (map_dualrb.c). */
#ifndef TOPOMAP_MAP_QAP_SEARCH_H
#define TOPOMAP_MAP_QAP_SEARCH_H
#include <stdint.h>
#include "topomap/machine.h"
#include "topomap/map.h"
#include "topomap/partition.h"
#include "map_physgraph.h"

typedef struct {
    uint64_t seed;
    int32_t sweeps;       /* budget: sweeps x the processes first on a node boundary */
    int32_t depth;        /* swap partners within this many hops of the traffic graph */
    int32_t max_partners; /* swap partners tried per process */
} topomap_i_qap_search_options;

/* Improve pe_of (PEs of the allocation described by an, at most `an->capacity`
   processes per PE) in place; g is the pattern's C + C^T. */
int topomap_i_qap_search(const topomap_machine *m, const topomap_pattern *p, const topomap_ugraph *g,
                         const topomap_alloc_nodes *an, const topomap_i_qap_search_options *o, topomap_i_ticker *t,
                         int32_t *pe_of);

#endif

/* Internal: the link-load changes a move or swap would make, gathered
   without making it (eval.c), for a search that judges changes by the links
   they touch (map_congestion_search.c) instead of through the evaluator's
   full try, which journals and rolls back every metric. */
#ifndef TOPOMAP_EVAL_DELTAS_H
#define TOPOMAP_EVAL_DELTAS_H
#include <stdint.h>
#include "topomap/eval.h"

typedef struct {
    int32_t *where;  /* nlinks: index of a link in links, or -1 */
    int32_t *links;  /* the links touched ... */
    double *dw;      /* ... and the bytes they gain (< 0: lose) */
    int64_t n, cap;
    /* Bytes gained per pair of slots of the evaluator's pair table
       (eval_pairs.h), each pair's route walked once at the end: under dense
       traffic a process's hundreds of messages share a few node pairs.
       TOPOMAP_I_PAIR_SLOTS^2 entries, allocated at first use. */
    double *pair_w;
    uint8_t *pair_seen;
    int32_t *pairs;  /* the pairs touched, as slot_a * TOPOMAP_I_PAIR_SLOTS + slot_b */
    int32_t npairs;
} topomap_i_link_deltas;

int topomap_i_link_deltas_init(topomap_i_link_deltas *d, int32_t nlinks);
void topomap_i_link_deltas_free(topomap_i_link_deltas *d);

/* Into d: every link whose load changes if p moved to new_p and q (or -1)
   to new_q, with the change; the evaluator is left as it was.  Fails on a
   distance-only evaluator or a pair of nodes without a route. */
int topomap_i_eval_link_deltas(topomap_eval *e, int32_t p, int32_t new_p, int32_t q, int32_t new_q,
                               topomap_i_link_deltas *d);

#endif

/* Internal: what a move or swap would change, found without making it,
   for searches that judge changes by that alone instead of through the
   evaluator's full try, which journals and rolls back every metric: the
   link loads it touches (eval.c; map_congestion_search.c), and its change
   of J from per-process shares (eval_shares.c; map_qap_search.c,
   map_hierarchy.c). */
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

/* ---- J as per-process shares (eval_shares.c), for local searches on J
   alone.  A search groups PEs into places (allocation nodes, or PEs) such
   that the distance from any PE of a place to a process elsewhere is the
   same.  Around a process u it gathers u's messages once
   (topomap_i_eval_gather), sums u's share at a place from its messages to
   the other places once per place (_base), and then a try costs u's
   messages to that place (_at) and, for a swap, v's messages
   (_swap_delta).  Changes are made with topomap_eval_move / _swap, which
   refresh the shares around them; J is the evaluator's. */

/* Keep shares from now on (every process must be placed). */
int topomap_i_eval_shares(topomap_eval *e);
double topomap_i_eval_share(const topomap_eval *e, int32_t u);
/* Gather u's messages, place[x] being process x's place. */
void topomap_i_eval_gather(topomap_eval *e, int32_t u, const int32_t *place);
/* The gathered process's share on PE `at` of place j, its messages to j left out. */
double topomap_i_eval_base(topomap_eval *e, int32_t j, int32_t at);
/* Its share on PE pe of place j: `base` (of j) plus its messages to j, those
   with process `skip` (-1: none) left out. */
double topomap_i_eval_at(topomap_eval *e, double base, int32_t j, int32_t pe, int32_t skip);
/* The change of J if the gathered u and v swapped PEs, new_u being u's
   share on v's PE without its messages with v. */
double topomap_i_eval_swap_delta(topomap_eval *e, int32_t u, int32_t v, double new_u);
#ifndef NDEBUG
/* Debug builds (the C tests): the shares kept are the shares, and J is their half-sum. */
void topomap_i_eval_shares_check(topomap_eval *e);
#endif

#endif

/* Internal: the QAP objective J = sum of bytes x distance kept as each
   process's share (its messages' bytes x distance, sent and received), for
   the local searches that judge a move or swap by its change of J alone
   (map_qap_search.c over nodes, map_hierarchy.c over PEs) instead of
   through the evaluator's journalled try.

   A search groups PEs into places (allocation nodes, or the hierarchy's
   leaves) such that the distance from any PE of a place to a process
   elsewhere is the same.  Around a process u it gathers u's messages once
   (topomap_i_shares_gather), sums u's share at a place from its messages
   to the other places once per place (topomap_i_shares_base), and then a
   try costs u's messages to that place and, for a swap, v's messages. */
#ifndef TOPOMAP_QAP_SHARES_H
#define TOPOMAP_QAP_SHARES_H
#include <stdint.h>
#include "topomap/machine.h"
#include "topomap/pattern.h"
#include "eval_pairs.h"

typedef struct {
    const topomap_machine *m;
    const topomap_pattern *p;
    int32_t *pe_of;     /* the mapping: the search changes it, then calls topomap_i_shares_moved */
    int64_t *t_indptr;  /* the pattern transposed: who sends to each process */
    int32_t *t_indices;
    double *t_bytes;
    double *share;      /* n */
    double J;           /* the search adds its changes' deltas */
    topomap_i_pairs pairs;
    /* the gathered messages of one process: other end, its PE and place, bytes, 1 if received */
    int32_t nm, *mx, *mpe, *mplace;
    double *mw;
    uint8_t *min;
} topomap_i_shares;

/* The shares of the mapping pe_of (every process placed; kept, not copied)
   and J.  0 or TOPOMAP_ENOMEM; free in any case. */
int topomap_i_shares_init(topomap_i_shares *s, const topomap_machine *m, const topomap_pattern *p, int32_t *pe_of);
void topomap_i_shares_free(topomap_i_shares *s);

/* Distance of a message from PE a to PE b (the pair table while it has
   room; on larger allocations a lookup that misses costs more than the
   network's distance). */
static inline double topomap_i_shares_dist(topomap_i_shares *s, int32_t a, int32_t b)
{
    const topomap_machine *m = s->m;
    int32_t na = topomap_machine_node_of(m, a), nb = topomap_machine_node_of(m, b);
    if (na == nb) return topomap_machine_distance(m, a, b);
    return s->pairs.full ? topomap_machine_node_distance(m, na, nb)
                         : topomap_i_pairs_distance(&s->pairs, m, a, b, na, nb);
}

/* Gather u's messages, place[x] being process x's place. */
void topomap_i_shares_gather(topomap_i_shares *s, int32_t u, const int32_t *place);
/* The gathered process's share on PE `at` of place j, its messages to j left out. */
double topomap_i_shares_base(topomap_i_shares *s, int32_t j, int32_t at);
/* Its share on PE pe of place j: `base` (of j) plus its messages to j, those
   with process `skip` (-1: none) left out. */
double topomap_i_shares_at(topomap_i_shares *s, double base, int32_t j, int32_t pe, int32_t skip);
/* The change of J if the gathered u and v swapped PEs, new_u being u's
   share on v's PE without its messages with v. */
double topomap_i_shares_swap_delta(topomap_i_shares *s, int32_t u, int32_t v, double new_u);
/* After pe_of[u] changed: the shares of u and of everyone it exchanges messages with. */
void topomap_i_shares_moved(topomap_i_shares *s, int32_t u);
/* The first `len` entries of queue (processes) sorted by place in [0,
   nplaces), stably: a try reads the processes near u, and when the next
   try is on the same or a nearby place they are still in cache (the QAP
   search ran 2.2 x faster so on the 100^3 stencil onto torus:40x40x40/16,
   to the same J, than in a random order of all processes).  0 or
   TOPOMAP_ENOMEM. */
int topomap_i_shares_order(int32_t *queue, int32_t len, const int32_t *place, int32_t nplaces);

#ifndef NDEBUG
/* Debug builds (the C tests): the shares kept are the shares, and J is their half-sum. */
void topomap_i_shares_check(topomap_i_shares *s);
#endif

#endif

/* Message combining over common neighbourhoods (Mirsadeghi, Traff, Balaji, Afsahi 2017,
   notes 002 and 000 ch. 6): Phase 1 (Alg. 1 + Alg. 2) simulated for all ranks of a
   distributed graph topology in synchronous rounds, in one process. */
#ifndef TOPOMAP_NEIGHBORHOOD_H
#define TOPOMAP_NEIGHBORHOOD_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int32_t n;              /* ranks */
    const int64_t *out_ptr; /* n + 1 */
    const int32_t *out_idx; /* out_ptr[n]: the destinations of each rank, no duplicates */
    int32_t theta;          /* friendship threshold, >= 1 */
    int32_t max_iterations; /* Alg. 1 iteration cap; <= 0: none (the loop always ends) */
    const int32_t *node;    /* optional, n: node of each rank; a friend on the same node
                               outranks any heavier one elsewhere */
    int (*progress)(void *ctx, double fraction);
    void *progress_ctx;
    /* optional ("path-cost-aware friend choice", beyond the papers; needs node): the
       nnodes x nnodes path cost between nodes (row-major, symmetric, >= 0, e.g. hops), every
       node[p] in 0..nnodes-1.  Rank p then prefers friend q by the smallest
       distance[node[p]][node[q]] first (the extra leg p -> q -> destination that each
       offloaded neighbour's data takes), then the most common neighbours, then the lowest
       rank; this replaces the same-node rule (a same-node friend costs 0 hops). */
    const int32_t *distance;
    int32_t nnodes;
    /* nonzero: cumulative combining (beyond the papers, note 002 s9 "cumulative combining",
       000 s9 "drop only the offloaded neighbours"): a paired rank drops only the half of CN
       it hands to its friend and keeps the half it takes on, so a destination may be combined
       again in a later iteration, its message then carrying more than two origins */
    int32_t cumulative;
} topomap_nbr_input;

/* The pattern T of every rank, owned by the result (topomap_nbr_free).  Rank p's combining
   steps are steps [step_ptr[p], step_ptr[p+1]), in iteration order; step s was taken at
   Alg. 1 iteration step_iter[s] with friend step_friend[s] and takes on (onloads) the
   destinations on_idx[on_ptr[s] .. on_ptr[s+1]) (ascending): without cumulative combining it
   sends each the combined message of origins {p, friend} at once; with it, it keeps them
   active and sends after the last step that changes their origins (or hands them on).  Rank p
   left the loop at iteration done_iter[p] and then sends directly (its own block alone) to
   final_idx[final_ptr[p] .. final_ptr[p+1]): the destinations it still holds and never took on. */
typedef struct {
    int32_t n, iterations;
    int64_t nsteps;
    int64_t *step_ptr;    /* n + 1 */
    int32_t *step_iter;   /* nsteps */
    int32_t *step_friend; /* nsteps */
    int64_t *on_ptr;      /* nsteps + 1 */
    int32_t *on_idx;
    int64_t *final_ptr; /* n + 1 */
    int32_t *final_idx;
    int32_t *done_iter;   /* n */
    int32_t *friends0;    /* n: friends at the first iteration */
    int32_t *alg2_rounds; /* n: Alg. 2 rounds summed over the iterations the rank matched in */
    /* per iteration (iterations entries): ranks still in the loop, pairs formed, Alg. 2
       rounds, Alg. 2 messages, and 1 where C was recomputed rather than updated */
    int32_t *it_active, *it_pairs, *it_rounds, *it_recomputed;
    int64_t *it_messages;
    double seconds; /* wall time of the whole call */
} topomap_nbr_result;

/* Run Phase 1 for all ranks; *res is filled (free it with topomap_nbr_free, also on failure). */
int topomap_nbr_phase1(const topomap_nbr_input *in, topomap_nbr_result *res);
void topomap_nbr_free(topomap_nbr_result *res);

#ifdef __cplusplus
}
#endif
#endif

/* PTRAM: Parallel Topology- and Routing-Aware Mapping (Mirsadeghi 2017,
   Ch. 3 §3.3; Mirsadeghi & Afsahi, IPDPSW/HIPS 2016), serial.

   Three steps, each in a fixed order so that the distributed version (one
   leader per node over MPI) can reproduce the mapping bit for bit:

   1. Units.  partition = 1: the processes are grouped with
      topomap_group_by_node (seeded) and the units ("super-processes") are
      the groups, with the nodal pattern topomap_pattern_quotient between
      them; a node hosts at most one unit.  partition = 0: every process is
      a unit of its own and a node hosts as many units as it has slots.

   2. Greedy (Alg. 3.1).  One incremental evaluator on the units' pattern,
      every unit unplaced.  Step s = 0, 1, ...:
        alpha = 1 / (s + 1);
        p = the unplaced unit of largest delta = A + alpha * B, where A (B) is
            its traffic in both directions with placed (unplaced) units; a
            tie (see below) goes to the lowest unit index;
        the free nodes: partition = 1, empty nodes whose slots hold p and
            that leave the other unplaced units placeable (a node-size check
            that only matters when nodes have different slot counts);
            partition = 0, nodes with a slot left;
        if p has no placed neighbour every free node scores the same and p
            goes to the first free node; otherwise every free node n is
            scored by the hybrid metric of the partial mapping with p on n
            (topomap_eval_try_move to the node's first PE) and p goes to the
            lowest score, a tie to the lowest allocation node index;
        with candidates = c > 0 (not the thesis) only c free nodes are
            scored: the first c that a breadth-first search of the network
            (every vertex's distinct neighbours in increasing order,
            across both ends of every link) reaches from the nodes of p's
            placed neighbours, those taken in unit order; the first free
            node if it reaches none.
   3. Refinement (Alg. 3.2), at most `rounds` rounds.  A round:
        MC = current max congestion; l* = the link of largest congestion
            (lowest link id among equals); stop if MC = 0;
        for each allocation node n in order (the "leader"), for each unit u
            on n in index order whose traffic (sent or received) crosses l*:
            for each of the k nodes m nearest to n (topomap_machine_distance
            between the nodes' first PEs, ties to the lower node index),
            try swapping u with each unit r on m in index order (when both
            fit their new node), then moving u onto m (when m has room: an
            empty node if partition = 1, a free slot if 0); the leader keeps
            its first try of lowest MC, and only one strictly below MC;
        with plateau = 1 a try that leaves MC unchanged (tied) and lowers
            the congestion of l* also counts, below any try of lower MC and
            ranked by the congestion of l* after it;
        the round's swap is the lowest leader MC (then, with plateau, the
            lowest l* congestion), a tie to the lower leader; it is applied;
        the refinement stops after a round that found nothing.
      Every try of a round sees the state at the start of the round, exactly
      as the thesis's leaders search in parallel between two gathers.
   Finally units go to their node's PEs in process order
   (topomap_place_groups; thesis §3.3.1).

   Parallel decomposition (the thesis's leaders; topomap.mpi.ptram).  The
   steps below run on every rank on identical states; only the marked parts
   are split among leaders, each computing them for the allocation nodes it
   serves, and their results are gathered to every rank (Allgatherv) before
   the identical decision:
     begin            step 1 on one rank, its group vector given to the
                      others' topomap_ptram_begin (same units, same order);
     greedy_next      every rank: the unit p and whether it needs scores;
     greedy_score *   a leader: the hybrid score of p on each of its nodes
                      (NaN for a node that is not free for p);
     greedy_place     every rank: the argmin scan over all N gathered scores
                      in node order (the tie rule above), then the move;
     round_begin      every rank: MC, l*, the units of each node;
     leader_search *  a leader: node n's kept try (the body of "for each
                      allocation node n" above, on the round's start state);
     round_end        every rank: the scan of the N gathered tries in node
                      order (lowest MC, plateau, lower node), then the swap.
   topomap_map_ptram is these steps with one leader serving every node, so
   the serial and distributed mappings are equal by construction.

   Ties: a and b are tied when |a - b| <= 1e-10 * max(|a|, |b|), so floating
   round-off in the running sums never decides between equivalent choices.
   Every value compared comes from one evaluator whose state is the same
   sequence of moves on every leader (with plateau, the l* congestion after
   a try adds the moved units' l* traffic, summed from their routes in CSR
   order, to the evaluator's load).

   Complexity: with U units, N allocation nodes, d the units' largest
   degree, l the longest route, L links and c units per node (1 with
   grouping): step 1 is the partitioner's; step 2 is O(U^2) for the delta
   scans at worst (blocks of units whose bound cannot win are skipped:
   about U^2 / 256 on stencils) plus at most U N tries of O(d l log L) each
   (the thesis's O(n^2 d + n d l), serial), or with c candidates U c tries
   and a search over the network's V vertices and E links per unit, O(V + E)
   at worst but a few hops in practice; a refinement round is O(L + U d l) to find the
   hot link and its flows plus at most c k (c + 1) tries per searching
   leader, and O(N log N) once per searching leader for its nearest nodes.
   Memory: O(U d + N k + L). */
#ifndef TOPOMAP_MAP_PTRAM_H
#define TOPOMAP_MAP_PTRAM_H
#include <stdint.h>
#include "machine.h"
#include "map.h"
#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* What a run did, for tests and benchmarks.  Every array is caller-owned
   and may be NULL; sizes below. */
typedef struct {
    int32_t nunits;      /* out: units (groups, or processes when partition = 0) */
    int32_t *group;      /* n: unit of each process */
    int32_t *order;      /* n (nunits used): units in greedy placement order */
    int32_t *unit_node;  /* n (nunits used): allocation node of each unit */
    double *round_mc;    /* rounds + 1: MC after the greedy step, then after each round */
    int32_t rounds_done; /* out: rounds that applied a swap (one swap or move each) */
    double greedy_hybrid;
    double seconds[3];   /* out: wall time of steps 1, 2, 3 */
} topomap_ptram_trace;

typedef struct {
    topomap_run_options run; /* the seed goes to the partitioner of step 1 */
    double weights[4];       /* hybrid weights of HB, MC, NZCA, NZCV, >= 0 */
    int32_t k;               /* nodes searched around each leader, >= 1 */
    int32_t rounds;          /* refinement rounds, >= 0 (0: greedy only) */
    int32_t partition;       /* 1: group processes into nodes first; 0: no grouping */
    int32_t plateau;         /* 1: also accept swaps that keep MC and cool the hottest link (not the thesis) */
    int32_t candidates;      /* greedy nodes scored per unit: 0 every free node (the thesis), c > 0 the c free
                                nodes nearest its placed neighbours, -1 auto (0 up to
                                TOPOMAP_PTRAM_EXHAUSTIVE_NODES allocation nodes, else
                                TOPOMAP_PTRAM_DEFAULT_CANDIDATES) */
    topomap_ptram_trace *trace; /* optional output */
} topomap_ptram_options;

/* Defaults: seed 0, weights 1,1,1,1, k = TOPOMAP_PTRAM_DEFAULT_K,
   rounds 10, partition 1, plateau 0, candidates -1, no progress, no trace. */
#define TOPOMAP_PTRAM_DEFAULT_K 8
#define TOPOMAP_PTRAM_EXHAUSTIVE_NODES 4096
#define TOPOMAP_PTRAM_DEFAULT_CANDIDATES 24
void topomap_ptram_options_init(topomap_ptram_options *opt);

/* Map the n = p->n processes onto the PEs alloc[0..nalloc), at most
   `capacity` per PE; writes pe_of[0..n).  TOPOMAP_EINVAL names a bad option
   or argument, TOPOMAP_ECANCELED when the progress callback asked to stop. */
int topomap_map_ptram(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                      int32_t capacity, const topomap_ptram_options *opt, int32_t *pe_of);

/* The steps of topomap_map_ptram, for callers that split the leaders' work
   (see "Parallel decomposition" above).  Every function returns 0 or a
   negative TOPOMAP_E* code naming the bad argument or the step called out
   of order; topomap_ptram_end frees the state (NULL is fine). */
typedef struct topomap_ptram_state topomap_ptram_state;

/* A leader's kept try: unit u moves to allocation node m, swapped with unit
   r (-1: a move into free room); mc = max congestion after it; hot = the
   hottest link's congestion after it (plateau); u = -1: no try kept. */
typedef struct {
    int32_t u, r, m;
    double mc, hot;
} topomap_ptram_try;

/* Validate, build the units (step 1, or adopt `group`: n entries numbering
   units 0..U-1, every unit used, the units placeable on the nodes; only
   with partition = 1; NULL: run the seeded partitioner), the evaluator and
   the node classes.  The state keeps pointers to m and, with partition =
   0, to p's arrays: both must outlive it. */
int topomap_ptram_begin(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                        int32_t capacity, const topomap_ptram_options *opt, const int32_t *group,
                        topomap_ptram_state **out);
int32_t topomap_ptram_nunits(const topomap_ptram_state *st);
int32_t topomap_ptram_nnodes(const topomap_ptram_state *st);
const int32_t *topomap_ptram_group(const topomap_ptram_state *st); /* n entries */

/* Greedy step: *unit = the next unit (-1 when all are placed) and
   *needs_scores = 0 when it has no placed neighbour (it goes to the first
   free node without scores). */
int topomap_ptram_greedy_next(topomap_ptram_state *st, int32_t *unit, int *needs_scores);
/* score[i] = hybrid metric with `unit` (the one greedy_next returned) on
   allocation node nodes[i], NaN when that node is not free for it. */
int topomap_ptram_greedy_score(topomap_ptram_state *st, int32_t unit, const int32_t *nodes, int32_t count,
                               double *score);
/* Place `unit` by the scan over score[0..N) (every free node's score; may
   be NULL when needs_scores was 0). */
int topomap_ptram_greedy_place(topomap_ptram_state *st, int32_t unit, const double *score);

/* Refinement round: *go_on = 0 when MC = 0, the rounds are used up or the
   last round found nothing; else the round's hottest link is fixed. */
int topomap_ptram_round_begin(topomap_ptram_state *st, int *go_on);
/* Node n's kept try for the open round. */
int topomap_ptram_leader_search(topomap_ptram_state *st, int32_t n, topomap_ptram_try *kept);
/* Close the round with the kept try of every node (N entries, checked):
   *applied = 1 if a swap or move was applied. */
int topomap_ptram_round_end(topomap_ptram_state *st, const topomap_ptram_try *kept, int *applied);

/* After the greedy step (and any rounds): pe_of[0..n) and the trace
   (optional, as topomap_ptram_options.trace). */
int topomap_ptram_finish(topomap_ptram_state *st, int32_t *pe_of, topomap_ptram_trace *trace);
void topomap_ptram_end(topomap_ptram_state *st);

#ifdef __cplusplus
}
#endif
#endif

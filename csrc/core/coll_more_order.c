/* Placement orders for the collectives Mirsadeghi's heuristics leave out:
   topomap's extension of notes 000 §3 (the thesis's future work) to Bruck
   allgather and alltoall, allreduce by recursive doubling and Rabenseifner,
   and pairwise alltoall, as MPICH runs them (coll_algorithms.c).

   One walk in the spirit of RDMH (Alg. 4.2): a reference rank places its
   still unplaced partners in a fixed preference order, each next to it
   (Alg. 4.1, coll_place.c); after two placements the newest rank becomes the
   reference; a reference without unplaced partners hands over to the latest
   placed rank that still has one.  Each pattern is connected (it holds the
   +-1 or XOR 1 partners), so the walk places every rank.  The preference
   puts the partners of the heavier stages first; where all stages weigh the
   same, the earlier stage first:

   - BKMH, Bruck allgather and alltoall: stage k sends to r - 2^k (allgather,
     min(2^k, p - 2^k) blocks) or r + 2^k (alltoall, about p / 2 blocks), so
     r + 2^k and r - 2^k for k from the last stage down.  For alltoall,
     whose stages weigh about the same, the last stages come first too: for
     a power of two their partners r + j p / 2^m form cosets, so a node of
     2^m ranks holds m stages whole (a node of consecutive ranks keeps
     only parts of the first m stages inside, fewer bytes in all).
   - ARMH, allreduce by recursive doubling (every stage carries the whole
     vector) and Rabenseifner (stage k of the halving and the matching
     doubling stage carry p / 2^(k+1) chunks): XOR partners v ^ 2^k from
     k = 0 up over the virtual ranks of MPICH's fold; then, as for RDMH
     (coll_order.c), each folded even rank 2i right after its partner
     2i + 1, next to it (their fold messages carry the whole vector).
   - PWMH, pairwise alltoall: round i pairs r with r ^ i for a power of two,
     else with r + i and r - i; every round carries one block, so i from 1 up.

   Cost: O(p log p) but for PWMH, whose p - 1 partners per rank make it
   O(p^2) (a per-rank cursor never looks at a placed partner twice), plus
   the hand-overs' scans back through the order (at most 0.1 ms for any of
   them at 4,000 and 4,096 ranks). */
#include <stdlib.h>
#include "topomap/collectives.h"
#include "topomap/error.h"

typedef struct {
    int32_t heuristic, n, pof2, levels; /* n ranks walked (virtual for ARMH), levels = ceil(log2 n) */
} walk;

static int32_t degree(const walk *w)
{
    switch (w->heuristic) {
    case TOPOMAP_COLL_BKMH: return 2 * w->levels;
    case TOPOMAP_COLL_ARMH: return w->levels;
    default: return w->pof2 ? w->n - 1 : 2 * (w->n - 1);
    }
}

/* The j-th preferred partner of rank r (may repeat a rank or be r itself for tiny n). */
static int32_t partner(const walk *w, int32_t r, int32_t j)
{
    int64_t n = w->n;
    switch (w->heuristic) {
    case TOPOMAP_COLL_BKMH: {
        int64_t step = (int64_t)1 << (w->levels - 1 - j / 2);
        return (int32_t)(j % 2 ? (r - step + n) % n : (r + step) % n);
    }
    case TOPOMAP_COLL_ARMH: return r ^ (int32_t)1 << j;
    default:
        if (w->pof2) return r ^ (j + 1);
        return (int32_t)(j % 2 ? (r - (j / 2 + 1) + n) % n : (r + j / 2 + 1) % n);
    }
}

/* The next unplaced partner of r, or -1; cursor[r] skips those already placed. */
static int32_t next_partner(const walk *w, const char *placed, int32_t *cursor, int32_t r)
{
    for (int32_t deg = degree(w); cursor[r] < deg; cursor[r]++) {
        int32_t u = partner(w, r, cursor[r]);
        if (!placed[u]) return u;
    }
    return -1;
}

/* The walk over w->n ranks into order / ref. */
static int run_walk(const walk *w, int32_t *order, int32_t *ref)
{
    int32_t n = w->n;
    char *placed = calloc((size_t)n, 1);
    int32_t *cursor = calloc((size_t)n, sizeof *cursor);
    if (!placed || !cursor) {
        free(placed);
        free(cursor);
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %d ranks", (int)n);
    }
    order[0] = 0;
    ref[0] = -1;
    placed[0] = 1;
    int32_t r = 0, count = 0;
    for (int32_t t = 1; t < n; t++) {
        int32_t next = next_partner(w, placed, cursor, r);
        for (int32_t b = t - 1; next < 0; b--) { /* b >= 0: the pattern is connected */
            r = order[b];
            next = next_partner(w, placed, cursor, r);
            count = 0;
        }
        placed[next] = 1;
        order[t] = next;
        ref[t] = r;
        if (++count == 2) {
            r = next;
            count = 0;
        }
    }
    free(placed);
    free(cursor);
    return 0;
}

int topomap_coll_order_more(int32_t heuristic, int32_t p, int32_t *order, int32_t *ref)
{
    if (heuristic < TOPOMAP_COLL_BKMH || heuristic > TOPOMAP_COLL_PWMH)
        return topomap_i_fail(TOPOMAP_EINVAL, "unknown reordering heuristic %d", (int)heuristic);
    if (p < 1) return topomap_i_fail(TOPOMAP_EINVAL, "p = %d: reordering needs at least one rank", (int)p);
    int32_t q = 1;
    while (q <= p / 2) q <<= 1;
    walk w = {heuristic, heuristic == TOPOMAP_COLL_ARMH ? q : p, (p & (p - 1)) == 0, 0};
    while (((int64_t)1 << w.levels) < w.n) w.levels++;
    if (heuristic != TOPOMAP_COLL_ARMH || q == p) return run_walk(&w, order, ref);
    int32_t rem = p - q, *vo = malloc(2 * (size_t)q * sizeof *vo);
    if (!vo) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %d ranks", (int)p);
    int rc = run_walk(&w, vo, vo + q);
    for (int32_t k = 0, t = 0; !rc && k < q; k++) { /* virtual v is real 2v + 1 for v < rem, else v + rem */
        int32_t v = vo[k], w_ref = vo[q + k];
        order[t] = v < rem ? 2 * v + 1 : v + rem;
        ref[t++] = w_ref < 0 ? -1 : (w_ref < rem ? 2 * w_ref + 1 : w_ref + rem);
        if (v < rem) {
            order[t] = 2 * v;
            ref[t++] = 2 * v + 1;
        }
    }
    free(vo);
    if (!rc) { /* virtual 0 is real 1 with 0 right after it: Alg. 4.1 places rank 0 first */
        order[0] = 0;
        order[1] = 1;
        ref[0] = -1;
        ref[1] = 0;
    }
    return rc;
}

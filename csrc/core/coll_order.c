/* The placement orders of Mirsadeghi's allgather heuristics (notes 000
   §3.3-3.6): which rank is placed next and next to whom.

   Non-power-of-two p (the notes' fixes):
   - RDMH runs over the pof2 ranks that take part in recursive doubling
     after MPICH's fold (virtual rank v is real 2v + 1 for v < rem = p - pof2,
     else v + rem; coll_algorithms.c); each folded even rank 2i is placed
     right after its partner 2i + 1, next to it, since their fold messages
     carry the partner's whole data.  Should every partner of the reference
     be placed before the order is complete (the thesis's i reaching 0; not
     seen for any power of two up to 2^16), the reference moves back to the
     latest placed rank with an unplaced partner.
   - BBMH visits r + i only while r + i < p (as written it misses ranks: for
     p = 6 only 4 are placed).
   - BGMH starts at the largest power of two below p and extends a snapshot
     of the placed set each round. */
#include <stdlib.h>
#include "topomap/collectives.h"
#include "topomap/error.h"

static int32_t floor_pof2(int32_t n)
{
    int32_t p = 1;
    while (p <= n / 2) p <<= 1;
    return p;
}

/* RDMH (Alg. 4.2) over virtual ranks [0, q), q a power of two: prefer the
   partner of the latest stage (largest message); after two placements around
   a reference the newest rank becomes the reference. */
static int rdmh(int32_t q, int32_t *vorder, int32_t *vref)
{
    char *placed = calloc((size_t)q, 1);
    if (!placed) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %d ranks", (int)q);
    int32_t ref = 0, count = 0, t = 1;
    placed[0] = 1;
    vorder[0] = 0;
    vref[0] = -1;
    while (t < q) {
        int32_t i = q / 2;
        while (i > 0 && placed[ref ^ i]) i >>= 1;
        if (i == 0) { /* every partner of ref is placed: back to the latest rank that still has one */
            for (int32_t b = t - 1; b >= 0 && i == 0; b--)
                for (int32_t j = q / 2; j > 0; j >>= 1)
                    if (!placed[vorder[b] ^ j]) {
                        ref = vorder[b];
                        i = j;
                        break;
                    }
            count = 0;
        }
        int32_t next = ref ^ i;
        placed[next] = 1;
        vorder[t] = next;
        vref[t++] = ref;
        if (++count == 2) {
            ref = next;
            count = 0;
        }
    }
    free(placed);
    return 0;
}

/* BBMH (Alg. 4.4), depth first with smaller subtrees first, kept on an
   explicit stack of (rank, next i). */
static void bbmh(int32_t p, int32_t *order, int32_t *ref)
{
    int32_t stack_r[33], t = 1, top = 0;
    int64_t stack_i[33];
    order[0] = 0;
    ref[0] = -1;
    stack_r[0] = 0;
    stack_i[0] = 1;
    while (top >= 0) {
        int32_t r = stack_r[top];
        int64_t i = stack_i[top];
        if ((r & i) || r + i >= p) {
            top--;
            continue;
        }
        stack_i[top] = i * 2;
        order[t] = (int32_t)(r + i);
        ref[t++] = r;
        stack_r[++top] = (int32_t)(r + i);
        stack_i[top] = 1;
    }
}

/* BGMH (Alg. 4.5): the heaviest remaining gather-tree edges first. */
static void bgmh(int32_t p, int32_t *order, int32_t *ref)
{
    int32_t t = 1;
    order[0] = 0;
    ref[0] = -1;
    for (int64_t i = floor_pof2(p) == p ? p / 2 : floor_pof2(p); i > 0; i >>= 1)
        for (int32_t v = 0, snapshot = t; v < snapshot; v++)
            if (order[v] + i < p) {
                order[t] = (int32_t)(order[v] + i);
                ref[t++] = order[v];
            }
}

int topomap_coll_order(int32_t heuristic, int32_t p, int32_t *order, int32_t *ref)
{
    if (p < 1) return topomap_i_fail(TOPOMAP_EINVAL, "p = %d: reordering needs at least one rank", (int)p);
    switch (heuristic) {
    case TOPOMAP_COLL_RMH:
        for (int32_t t = 0; t < p; t++) {
            order[t] = t;
            ref[t] = t - 1;
        }
        return 0;
    case TOPOMAP_COLL_BBMH: bbmh(p, order, ref); return 0;
    case TOPOMAP_COLL_BGMH: bgmh(p, order, ref); return 0;
    case TOPOMAP_COLL_RDMH: break;
    default: return topomap_coll_order_more(heuristic, p, order, ref);
    }
    int32_t q = floor_pof2(p), rem = p - q;
    int32_t *vo = malloc(2 * (size_t)q * sizeof *vo);
    if (!vo) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %d ranks", (int)p);
    int rc = rdmh(q, vo, vo + q);
    int32_t t = 0;
    for (int32_t k = 0; !rc && k < q; k++) {
        int32_t v = vo[k], r = v < rem ? 2 * v + 1 : v + rem, w = vo[q + k];
        order[t] = r;
        ref[t++] = w < 0 ? -1 : (w < rem ? 2 * w + 1 : w + rem);
        if (v < rem) { /* the folded partner right after, next to it */
            order[t] = 2 * v;
            ref[t++] = r;
        }
    }
    free(vo);
    if (!rc && rem > 0) { /* virtual 0 is real 1 with 0 right after it: Alg. 4.1 places rank 0 first */
        order[0] = 0;
        order[1] = 1;
        ref[1] = 0;
    }
    return rc;
}

/* The collective algorithms as MPICH 4 runs them (src/mpi/coll/<op>/<op>_intra_<name>.c),
   one stage per round of concurrent sends.  Rules for n not a power of two:

   - binomial bcast / gather (MPIR_Bcast_intra_binomial,
     MPIR_Gather_intra_binomial): any n, the tree of ranks relative to the
     root; a subtree past n is cut off.
   - recursive doubling, allreduce (MPIR_Allreduce_intra_recursive_doubling)
     and Rabenseifner (MPIR_Allreduce_intra_reduce_scatter_allgather): with
     pof2 the largest power of two <= n and rem = n - pof2, each even rank
     2i < 2 rem first hands its data to 2i + 1 and sits out; the pof2
     remaining ranks run the power-of-two algorithm (virtual rank v is real
     2v + 1 for v < rem, else v + rem); at the end 2i + 1 sends the result back.
   - recursive doubling, allgather: MPICH selects it only for powers of two
     (Bruck otherwise); topomap applies the allreduce fold above, so a folded
     pair's two blocks travel together.
   - ring and Bruck allgather (MPIR_Allgather_intra_ring / _brucks), Bruck
     alltoall (MPIR_Alltoall_intra_brucks): any n; Bruck's last allgather
     round sends the n - 2^k blocks still missing.
   - pairwise alltoall (MPIR_Alltoall_intra_pairwise): round i pairs r with
     r XOR i for a power of two, else sends to r + i and receives from r - i.
   - hierarchical allgather (000 §3.1): node i holds ranks [i ppn, (i+1) ppn)
     (the last node may hold fewer), its first rank leads; the leaders' phase
     is recursive doubling with the fold above over nodes, or a ring. */
#include "coll_internal.h"

static int32_t floor_pof2(int32_t n)
{
    int32_t p = 1;
    while (p <= n / 2) p <<= 1;
    return p;
}

static int32_t ceil_log2(int64_t n)
{
    int32_t l = 0;
    while (((int64_t)1 << l) < n) l++;
    return l;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

/* Stage k of a binomial broadcast over q ranks base, base + 1, ... (mod n),
   L = ceil(log2 of the largest group) stages in all: the largest mask first. */
static void bcast_stage(coll_emit *e, int64_t base, int32_t q, int32_t n, int32_t L, int32_t k, int64_t lo,
                        int64_t cnt, int64_t mod)
{
    int64_t mask = (int64_t)1 << (L - 1 - k);
    for (int64_t rel = 0; rel + mask < q; rel += 2 * mask) {
        coll_msg(e, (int32_t)((base + rel) % n), (int32_t)((base + rel + mask) % n));
        coll_range(e, lo, cnt, mod);
    }
}

/* Stage k of a binomial gather over the same group: rank rel with bit k set
   and no lower one sends its subtree's blocks [rel, rel + 2^k) to rel - 2^k. */
static void gather_stage(coll_emit *e, int64_t base, int32_t q, int32_t n, int32_t k)
{
    int64_t mask = (int64_t)1 << k;
    for (int64_t rel = mask; rel < q; rel += 2 * mask) {
        coll_msg(e, (int32_t)((base + rel) % n), (int32_t)((base + rel - mask) % n));
        coll_range(e, base + rel, min64(mask, q - rel), n);
    }
}

void coll_binomial_bcast(coll_emit *e, int32_t n, int32_t root)
{
    int32_t L = ceil_log2(n);
    for (int32_t k = 0; k < L; k++) {
        bcast_stage(e, root, n, n, L, k, 0, 1, 1);
        coll_stage_end(e);
    }
}

void coll_binomial_gather(coll_emit *e, int32_t n, int32_t root)
{
    for (int32_t k = 0; k < ceil_log2(n); k++) {
        gather_stage(e, root, n, n, k);
        coll_stage_end(e);
    }
}

/* Recursive doubling over m participants (participant i is rank i * stride)
   with MPICH's fold.  whole: every message carries item 0 (the reduced
   vector); else the blocks of the participants the sender stands for, which
   are ranks [i * stride, min(j * stride, n)) for participants [i, j). */
typedef struct {
    int32_t m, stride, n, rem;
    int whole;
} rd_group;

static int64_t rd_real(const rd_group *g, int64_t v) { return (v < g->rem ? 2 * v + 1 : v + g->rem) * g->stride; }

static void rd_items(coll_emit *e, const rd_group *g, int64_t a, int64_t b)
{
    if (g->whole) {
        coll_item(e, 0);
        return;
    }
    int64_t lo = a * g->stride, hi = min64(b * g->stride, g->n);
    coll_range(e, lo, hi - lo, g->n);
}

/* The folded pairs: first the even participant hands over, at the end it gets everything back. */
static void rd_fold(coll_emit *e, const rd_group *g, int back)
{
    for (int64_t i = 0; i < g->rem; i++) {
        int64_t even = 2 * i * g->stride, odd = (2 * i + 1) * g->stride;
        coll_msg(e, (int32_t)(back ? odd : even), (int32_t)(back ? even : odd));
        rd_items(e, g, back ? 0 : 2 * i, back ? g->m : 2 * i + 1);
    }
    coll_stage_end(e);
}

static void rd_run(coll_emit *e, int32_t m, int32_t stride, int32_t n, int whole)
{
    int32_t pof2 = floor_pof2(m);
    rd_group g = {m, stride, n, m - pof2, whole};
    rd_fold(e, &g, 0);
    for (int64_t mask = 1; mask < pof2; mask <<= 1) {
        for (int64_t v = 0; v < pof2; v++) {
            coll_msg(e, (int32_t)rd_real(&g, v), (int32_t)rd_real(&g, v ^ mask));
            /* virtual ranks [a, a + mask) stand for participants [fold(a), fold(a + mask)) */
            int64_t a = v & ~(mask - 1), b = a + mask;
            rd_items(e, &g, a < g.rem ? 2 * a : a + g.rem, b <= g.rem ? 2 * b : b + g.rem);
        }
        coll_stage_end(e);
    }
    rd_fold(e, &g, 1);
}

void coll_rd(coll_emit *e, int32_t n, int whole) { rd_run(e, n, 1, n, whole); }

/* Reduce-scatter by recursive halving, then allgather by recursive doubling,
   over pof2 chunks of the vector.  MPICH tracks send_idx / recv_idx /
   last_idx per rank; they follow from the virtual rank's low bits. */
void coll_rabenseifner(coll_emit *e, int32_t n)
{
    int32_t pof2 = floor_pof2(n), rem = n - pof2;
    rd_group g = {n, 1, n, rem, 0};
    for (int64_t i = 0; i < rem; i++) { /* the fold: the whole vector is chunks [0, pof2) */
        coll_msg(e, (int32_t)(2 * i), (int32_t)(2 * i + 1));
        coll_range(e, 0, pof2, pof2);
    }
    coll_stage_end(e);
    int32_t L = ceil_log2(pof2);
    for (int32_t k = 0; k < L; k++) {
        int64_t mask = (int64_t)1 << k, half = pof2 / (2 * mask);
        for (int64_t v = 0; v < pof2; v++) {
            /* after k halvings v owns the chunk block of width pof2 / 2^k given by its low k bits, reversed */
            int64_t width = pof2 / mask, start = 0;
            for (int32_t b = 0; b < k; b++)
                if (v >> b & 1) start += pof2 >> (b + 1);
            int64_t w = v ^ mask;
            coll_msg(e, (int32_t)rd_real(&g, v), (int32_t)rd_real(&g, w));
            if (v < w) coll_range(e, start + half, width - half, pof2); /* keep the lower half */
            else coll_range(e, start, half, pof2);
        }
        coll_stage_end(e);
    }
    for (int32_t k = L - 1; k >= 0; k--) {
        int64_t mask = (int64_t)1 << k;
        for (int64_t v = 0; v < pof2; v++) {
            /* v holds the fully reduced block of width pof2 / 2^(k+1) it owned after k + 1 halvings */
            int64_t width = pof2 >> (k + 1), start = 0;
            for (int32_t b = 0; b <= k; b++)
                if (v >> b & 1) start += pof2 >> (b + 1);
            coll_msg(e, (int32_t)rd_real(&g, v), (int32_t)rd_real(&g, v ^ mask));
            coll_range(e, start, width, pof2);
        }
        coll_stage_end(e);
    }
    for (int64_t i = 0; i < rem; i++) {
        coll_msg(e, (int32_t)(2 * i + 1), (int32_t)(2 * i));
        coll_range(e, 0, pof2, pof2);
    }
    coll_stage_end(e);
}

void coll_ring_allgather(coll_emit *e, int32_t n)
{
    for (int64_t t = 0; t + 1 < n; t++) {
        for (int64_t r = 0; r < n; r++) {
            coll_msg(e, (int32_t)r, (int32_t)((r + 1) % n));
            coll_range(e, (r - t + n) % n, 1, n);
        }
        coll_stage_end(e);
    }
}

void coll_bruck_allgather(coll_emit *e, int32_t n)
{
    for (int64_t step = 1; step < n; step <<= 1) {
        for (int64_t r = 0; r < n; r++) {
            coll_msg(e, (int32_t)r, (int32_t)((r - step + n) % n));
            coll_range(e, r, min64(step, n - step), n); /* it holds blocks r .. r + step - 1 */
        }
        coll_stage_end(e);
    }
}

void coll_bruck_alltoall(coll_emit *e, int32_t n)
{
    for (int32_t k = 0; ((int64_t)1 << k) < n; k++) {
        int64_t step = (int64_t)1 << k;
        /* slots j in [0, n) with bit k set */
        int64_t slots = (n >> (k + 1)) * step + (((int64_t)n & (2 * step - 1)) > step ? ((int64_t)n & (2 * step - 1)) - step : 0);
        for (int64_t r = 0; r < n; r++) {
            coll_msg(e, (int32_t)r, (int32_t)((r + step) % n));
            if (!e->want) {
                if (!e->rc) e->s->count[e->s->nmsgs - 1] = slots;
                continue;
            }
            /* slot j of rank r holds the block of origin r - (j mod 2^k) for origin + j */
            for (int64_t j = step; j < n; j++) {
                if (!(j & step)) continue;
                int64_t origin = ((r - (j & (step - 1))) % n + n) % n;
                coll_item(e, origin * n + (origin + j) % n);
            }
        }
        coll_stage_end(e);
    }
}

void coll_pairwise_alltoall(coll_emit *e, int32_t n)
{
    int pof2 = (n & (n - 1)) == 0;
    for (int64_t i = 1; i < n; i++) {
        for (int64_t r = 0; r < n; r++) {
            int64_t dst = pof2 ? r ^ i : (r + i) % n;
            coll_msg(e, (int32_t)r, (int32_t)dst);
            coll_item(e, r * n + dst);
        }
        coll_stage_end(e);
    }
}

void coll_hierarchical_allgather(coll_emit *e, int32_t n, int32_t ppn, int binomial, int ring)
{
    int32_t nodes = (int32_t)((n + (int64_t)ppn - 1) / ppn), L = ceil_log2(ppn);
#define NODE_SIZE(i) ((int32_t)min64(ppn, n - (int64_t)(i) * ppn))
    if (binomial) {
        for (int32_t k = 0; k < L; k++) {
            for (int32_t i = 0; i < nodes; i++) gather_stage(e, (int64_t)i * ppn, NODE_SIZE(i), n, k);
            coll_stage_end(e);
        }
    } else {
        for (int64_t r = 0; r < n; r++)
            if (r % ppn) {
                coll_msg(e, (int32_t)r, (int32_t)(r - r % ppn));
                coll_item(e, r);
            }
        coll_stage_end(e);
    }
    if (ring) {
        for (int64_t t = 0; t + 1 < nodes; t++) {
            for (int64_t i = 0; i < nodes; i++) {
                int64_t from = (i - t + nodes) % nodes; /* the node whose blocks travel */
                coll_msg(e, (int32_t)(i * ppn), (int32_t)((i + 1) % nodes * ppn));
                coll_range(e, from * ppn, NODE_SIZE(from), n);
            }
            coll_stage_end(e);
        }
    } else {
        rd_run(e, nodes, ppn, n, 0);
    }
    if (binomial) {
        for (int32_t k = 0; k < L; k++) {
            for (int32_t i = 0; i < nodes; i++) bcast_stage(e, (int64_t)i * ppn, NODE_SIZE(i), n, L, k, 0, n, n);
            coll_stage_end(e);
        }
    } else {
        for (int64_t r = 0; r < n; r++)
            if (r % ppn) {
                coll_msg(e, (int32_t)(r - r % ppn), (int32_t)r);
                coll_range(e, 0, n, n);
            }
        coll_stage_end(e);
    }
#undef NODE_SIZE
}

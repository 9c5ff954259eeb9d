/* The top-down mapper ("topdown"): dual recursive bipartitioning of the
   processes themselves along the target's own decomposition (Pellegrini &
   Roman, "Scotch: a software package for static mapping by dual recursive
   bipartitioning", HPCN 1996: Scotch's DRB with external gains; notes/
   anchors.md §1.2), then swap/move search on the QAP objective
   (map_qap_search.c).

   The target's decomposition comes from the caller (topomap/mappers/
   topdown.py): the allocation's nodes in leaf order and a level per gap
   between neighbours in that order; a range splits at its lowest-level gap.
   Tori and meshes are cut across their longest extent (recursive coordinate
   bisection, as Scotch's torus targets), hierarchies and fat trees and
   dragonflies at their levels and groups, other fabrics by recursive graph
   bisection of the network.

   Unlike LibTopoMap's scheme (map_recursive.c) no node grouping comes
   first: the processes of a part are bisected into exactly the process
   slots of the two node halves, so on a grid-like pattern every node ends up
   with a block whose shape follows the cuts of the target and neighbouring
   blocks land on neighbouring nodes.  Grouping first (a partition into
   nodes that does not know the target) gave blocks of a dozen shapes on a
   3-D stencil and 2.6x the hop-bytes of the geometric embedding on a torus.

   Choices the sources leave open, and ours:
   - Sizes: a part of W processes over node halves of S0 and S1 slots gets
     exactly S0 and W - S0 when it fills them; otherwise the half its outside
     traffic prefers (else the larger) is filled first, the rest go to the
     other, so the nodes used stay few and close (as map_nodes.c).
   - External gains: a process outside the part is bound for the range of
     the decomposition it was last assigned to (a single node once placed);
     hops(range R, half Q) = the mean over up to 8 nodes of Q, spread, of
     the fewest route hops to up to 32 nodes of R (a golden-ratio stride).
     ext[u][h] = sum over u's traffic to outside processes of bytes x
     hops(their range, half h).  With geometry, the fewest hops between
     the boxes, plus 1e-5 x the hops without wrap-around on the rings the
     range spans (box_hops): a half of a ring touches the other half at
     both ends, and parts of one face that took different ends left seams
     of 5-20 hops.  With that tie-break, on the torus stencils without
     their grid: 36x18x18, seeds 0-9, hop-bytes median 0.192 -> 0.181 and
     mean 0.183 -> 0.158 x block (3 seeds reach the embedding), maximum
     congestion median 0.356 -> 0.301; 72x36x36, seeds 0-5, 0.145 -> 0.131
     and 0.229 -> 0.188; 160x80x80, seeds 0-3, 0.059 -> 0.059 and 0.227 ->
     0.182 (seed 2 worse, 0.059 -> 0.094; seed 3 better, 0.084 -> 0.055).
   - The bisection with gains: the part's traffic graph plus two anchors,
     one per half, each joined to the processes that prefer its half by how
     much more the other half costs them; the anchors weigh W + 1 and
     2 (W + 1) against capacities k0 + W + 1 and k1 + 2 (W + 1), so that the
     only packing puts anchor h on side h.  If the partitioner cannot pack
     that, the plain min cut, its sides swapped when the sizes allow and
     that costs less.
   - The plain min cut does not depend on the candidate machine cut, only
     on the sizes: with outside costs it is made once per part and judged
     under each candidate's costs (a part with no preference, the first,
     still gets one per candidate, its only source of variety: the 16x16
     stencil onto torus:4x4/16 kept its embedding for 10 of 12 seeds with
     one).  On a torus a part has up to 3 candidates, so this drops 2 of
     every 6 multilevel runs: CPU -12 to -25% (160x80x80 stencil without
     its grid, seed 0: about 124 -> 99 s), and quality better or within
     the seed spread: hop-bytes median 0.169 -> 0.168 x block (36x18x18
     onto torus:9x9x9/16), 0.150 -> 0.126 (72x36x36, 12 seeds), 0.102 ->
     0.095 (128x128 onto torus:32x32/16), delaunay_n15 0.1033 -> 0.1041,
     30x20x20 onto 750 nodes of torus:10x10x10/16 0.182 -> 0.188 (24
     seeds where not said; with 8 seeds the last two looked 3 % and 18 %
     worse).
   - Seeds: the i-th partitioner call gets a seed derived from (seed, i).
   - Tries: `tries` complete runs, the first with the seed itself, the
     others with seeds derived from (seed, try); the lowest J is kept.  The
     cuts at the top levels are often tied and the run's quality varies
     with the seed: hop-bytes 0.181 / 0.194 / 0.107 x block for seeds 0-2 on
     the 36x18x18 stencil onto torus:9x9x9/16 without its grid, 0.136 /
     0.142 / 0.107 as the best of 3.

   - Max flow at the top: bisections of at least flow_min processes
     (default TOPOMAP_TOPDOWN_FLOW_MIN = 16,384) run the plain min cut's
     partitioner with flows (partition_flow.c).  A jagged top cut
     misplaces every process below it: on the 160x80x80 stencil onto
     torus:40x40x40/16 without its grid, seed 0 cut the 80^3 half at
     13,284 where two straight planes cost 12,800, and ended at hop-bytes
     0.121 x block (Scotch 0.087).
     With flows from 32,768 processes (before the ring tie-break): 0.056
     and 0.084 for seeds 0 and 3
     (0.121 and 0.122 before) in 120 s of CPU against 130 s before; from
     131,072 processes, 0.076 and 0.087; from 32,768 with one multilevel
     run per bisection there, 0.090 and 0.094.  On the 72x36x36 stencil
     (torus:18x18x18/16) the median of seeds 0-9 went from 0.147 to 0.138
     at the same CPU; smaller inputs are unchanged.  Only the plain min
     cut gets flows, not the anchored split: its anchors weigh about np / 2,
     the partitioner's relaxed limits (cap + heaviest vertex) then let the
     flow band take the whole part, and at 10^6 those networks cost 70 s
     of 190 for the same mapping (seeds 0 and 3) or a slightly better one
     without them (seed 1: 0.0578 against 0.0587).  Once the plain cut was
     made once per part (above), from 16,384 instead of 32,768: 72x36x36
     seeds 0-11, hop-bytes median 0.126 -> 0.110 and max congestion 0.198
     -> 0.163 x block (5 seeds better, e.g. 0.185 -> 0.108, none worse)
     for 4 % more CPU; the 10^6 stencil seeds 0 and 1 the same mapping
     for 3 % more; 36x18x18 (24 seeds) unchanged down to 4,096;
     delaunay_n15 and rgg_n_2_15_s0 onto torus:16x16x8/16 (24 seeds)
     within 1 %.
   - Congestion: with congestion_sweeps > 0, the kept mapping then goes
     through the bounded search on maximum link congestion
     (map_congestion_search.c), seeded from (seed, 0xc0).

   Complexity, for n processes, m traffic edges and A nodes: O(log A)
   levels, each partitioning disjoint parts of the traffic graph (O(n + m)
   per level times the partitioner's tries), plus O(m) outside-cost lookups
   per level (cached per range) and O(A log A) to find the cuts.  Memory
   O(n + m + A). */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/eval.h"
#include "topomap/map_dualrb.h"
#include "topomap/partition.h"
#include "topomap/rng.h"
#include "map_physgraph.h"
#include "map_congestion_search.h"
#include "map_topdown.h"
#include "map_qap_search.h"

#define NSAMPLE 32 /* nodes of a range its distance is measured to */
#define NCOST 8    /* nodes of a half its distance is averaged over */
#define RING_TIE 1e-5 /* weight of the hops without wrap-around, a tie-break (box_hops) */

void topomap_topdown_options_init(topomap_topdown_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->context = 1;
    opt->sweeps = 4;
    opt->depth = 2;
    opt->max_partners = 64;
    opt->ntries = 2;
    opt->tries = 1;
    opt->flow_min = TOPOMAP_TOPDOWN_FLOW_MIN;
}

typedef struct {
    int32_t lo, hi;
} range;

typedef struct {
    int64_t key;
    int32_t i;
} topomap_i_geokey;

#define PCOORD_BITS 20
#define TOPOMAP_I_MAXDIMS 64

typedef struct {
    const topomap_machine *m;
    const topomap_topdown_options *opt;
    const topomap_alloc_nodes *an;
    topomap_i_ticker *t, inner;
    topomap_ugraph g;
    int32_t n, A;
    int32_t *order;  /* A: allocation node index at each leaf position */
    int32_t *group;  /* n: allocation node of a placed process */
    range *dom;      /* n: where a process is bound for */
    int32_t *local;  /* n: index in the part being split, -1 outside */
    int32_t *side;   /* n + 2: partitioner output */
    int32_t *best;   /* n: sides of the split kept */
    int32_t *plain;  /* n: the part's plain min cut, made once per split (plain_k0 >= 0) */
    int32_t plain_k0;
    double *ext;     /* 2n: outside cost of each local process on half 0 and 1 */
    int64_t *sxadj;  /* the anchored subgraph */
    int32_t *sadj;
    double *swgt, *svw;
    int32_t *tmp;
    int32_t *keep;   /* n: sides of the best candidate cut */
    int32_t *gord;   /* with process coordinates, pdims x n: the part's local indices sorted along each axis */
    topomap_i_geokey *gkeys; /* n: sort buffer */
    int32_t pair[TOPOMAP_I_MAXDIMS]; /* with both geometries: process axis cut with machine dimension d, or -1 */
    int32_t *corder; /* A: the range's order for the best candidate cut */
    int64_t *keys;   /* A: sort keys of a range (coordinate << 32 | position) */
    uint8_t *occ;    /* largest ring: occupied coordinates */
    int32_t *box;    /* with geometry, 2 ndims per range start: the live range's box (start, extent) */
    int32_t *cstamp, *chi; /* per range start: the cached range's end, stamp */
    double *ccost;         /* 2 per range start */
    int32_t stamp;
    uint64_t seed;   /* of the try being made */
    int64_t calls, placed;
} drb;

static int32_t node_at(const drb *c, int32_t pos)
{
    return c->an->node[c->order[pos]];
}

/* The gap of [lo, hi) to cut at: the lowest level, the nearest the middle
   on a tie; returns the first position of the second half. */
static int32_t cut_of(const drb *c, int32_t lo, int32_t hi)
{
    int32_t best = lo + 1;
    int64_t best_off = INT64_MAX;
    for (int32_t g = lo; g < hi - 1; g++) {
        int64_t off = 2 * (int64_t)(g + 1) - lo - hi;
        off = off < 0 ? -off : off;
        int32_t lv = c->opt->gap[g], bl = c->opt->gap[best - 1];
        if (best_off == INT64_MAX || lv < bl || (lv == bl && off < best_off)) {
            best = g + 1;
            best_off = off;
        }
    }
    return best;
}

/* Hops from range r to half q: with geometry the fewest between their
   boxes (dimension-order routes) plus the ring tie-break (RING_TIE; see
   "External gains" above); else the mean over up to NCOST nodes of q of the
   fewest hops to up to NSAMPLE nodes of r. */
static double box_hops(const drb *c, int32_t a, int32_t b)
{
    const int32_t *x = c->box + 2 * (int64_t)a * c->opt->ndims, *y = c->box + 2 * (int64_t)b * c->opt->ndims;
    int64_t sum = 0, line = 0;
    for (int32_t d = 0; d < c->opt->ndims; d++) {
        sum += topomap_i_interval_hops(x[2 * d], x[2 * d + 1], y[2 * d], y[2 * d + 1], c->opt->ring[d]);
        if (c->opt->ring[d] > 0 && x[2 * d + 1] > 1)
            line += topomap_i_interval_hops(x[2 * d], x[2 * d + 1], y[2 * d], y[2 * d + 1], 0);
    }
    return (double)sum + RING_TIE * (double)line;
}

static double range_hops(const drb *c, range r, range q)
{
    if (c->opt->coords) return box_hops(c, r.lo, q.lo);
    int32_t ql = q.hi - q.lo, nq = ql < NCOST ? ql : NCOST, rl = r.hi - r.lo, nr = rl < NSAMPLE ? rl : NSAMPLE;
    int64_t sum = 0;
    for (int32_t i = 0; i < nq; i++) {
        int32_t x = node_at(c, q.lo + (int32_t)((int64_t)i * ql / nq)), least = INT32_MAX;
        for (int32_t j = 0; j < nr; j++) {
            double f = (j + 1) * 0.6180339887498949;
            int32_t y = rl <= NSAMPLE ? r.lo + j : r.lo + (int32_t)((f - (int64_t)f) * rl);
            int32_t h = topomap_machine_route_count(c->m, x, node_at(c, y));
            least = h < least ? h : least;
        }
        sum += least;
    }
    return (double)sum / nq;
}

/* ext[2i + h] for the (marked) processes P: bytes x hops from the ranges
   of their outside neighbours to half h.  Returns 1 if some process
   prefers a half. */
static int outside_costs(drb *c, const int32_t *P, int32_t np, range half0, range half1)
{
    int differ = 0, s = ++c->stamp;
    for (int32_t i = 0; i < np; i++) {
        double e0 = 0, e1 = 0;
        for (int64_t e = c->g.xadj[P[i]]; e < c->g.xadj[P[i] + 1]; e++) {
            int32_t v = c->g.adjncy[e];
            if (c->local[v] >= 0) continue;
            range r = c->dom[v];
            if (c->cstamp[r.lo] != s || c->chi[r.lo] != r.hi) {
                c->cstamp[r.lo] = s;
                c->chi[r.lo] = r.hi;
                c->ccost[2 * r.lo] = range_hops(c, r, half0);
                c->ccost[2 * r.lo + 1] = range_hops(c, r, half1);
            }
            e0 += c->g.adjwgt[e] * c->ccost[2 * r.lo];
            e1 += c->g.adjwgt[e] * c->ccost[2 * r.lo + 1];
        }
        c->ext[2 * i] = e0;
        c->ext[2 * i + 1] = e1;
        differ |= e0 != e1;
    }
    return differ;
}

/* cut + outside cost of sides s[i] (flipped if `flip`). */
static double objective(const drb *c, const int32_t *P, int32_t np, const int32_t *s, int flip)
{
    double cost = 0;
    for (int32_t i = 0; i < np; i++) {
        int32_t si = s[i] ^ flip;
        cost += c->ext[2 * i + si];
        for (int64_t e = c->g.xadj[P[i]]; e < c->g.xadj[P[i] + 1]; e++) {
            int32_t j = c->local[c->g.adjncy[e]];
            if (j > i && (s[j] ^ flip) != si) cost += c->g.adjwgt[e];
        }
    }
    return cost;
}

/* The traffic graph of the marked P, plus (w0 > 0) anchors: vertex np for
   half 0 of weight w0 and np + 1 for half 1 of weight w1, joined to the
   processes that prefer them. */
static topomap_ugraph subgraph(drb *c, const int32_t *P, int32_t np, double w0, double w1)
{
    int64_t len = 0;
    for (int32_t i = 0; i < np; i++) {
        c->sxadj[i] = len;
        c->svw[i] = 1;
        for (int64_t e = c->g.xadj[P[i]]; e < c->g.xadj[P[i] + 1]; e++)
            if (c->local[c->g.adjncy[e]] >= 0) {
                c->sadj[len] = c->local[c->g.adjncy[e]];
                c->swgt[len++] = c->g.adjwgt[e];
            }
        double pref = (c->ext[2 * i + 1] - c->ext[2 * i]);
        if (w0 > 0 && pref != 0) {
            c->sadj[len] = pref > 0 ? np : np + 1;
            c->swgt[len++] = pref > 0 ? pref : -pref;
        }
    }
    if (w0 <= 0) {
        c->sxadj[np] = len;
        return (topomap_ugraph){np, c->sxadj, c->sadj, c->swgt, NULL};
    }
    for (int32_t a = 0; a < 2; a++) {
        c->sxadj[np + a] = len;
        c->svw[np + a] = a ? w1 : w0;
        for (int32_t i = 0; i < np; i++) {
            double pref = (c->ext[2 * i + 1] - c->ext[2 * i]);
            if ((a == 0 && pref > 0) || (a == 1 && pref < 0)) {
                c->sadj[len] = i;
                c->swgt[len++] = pref > 0 ? pref : -pref;
            }
        }
    }
    c->sxadj[np + 2] = len;
    return (topomap_ugraph){np + 2, c->sxadj, c->sadj, c->swgt, c->svw};
}

static topomap_partition_options popts(drb *c)
{
    topomap_partition_options o;
    topomap_partition_options_init(&o);
    o.trusted = 1;
    o.hard = 1;
    o.seed = topomap_rng_mix(c->seed ^ topomap_rng_mix((uint64_t)c->calls++));
    o.ntries = c->opt->ntries;
    c->inner.lo = c->inner.hi = c->t->lo + (c->t->hi - c->t->lo) * (double)c->placed / c->n;
    o.progress = topomap_i_ticker_cb;
    o.progress_ctx = &c->inner;
    return o;
}

/* Sides of the marked P into c->best: k0 processes for half 0, k1 for half 1.
   With a preference (ctx), the anchored split and the plain min cut (its
   sides swapped when the sizes allow and that is cheaper) are both made
   and the one of least cut + outside cost is kept. */
static int bisect(drb *c, const int32_t *P, int32_t np, int32_t k0, int32_t k1, int ctx)
{
    int rc, have = 0;
    double best = 0;
    if (ctx) {
        /* anchor 0 weighs k1 + 1 and anchor 1 k0 + 1 against two capacities
           of np + 1: the anchors land apart and anchor 0's side holds
           exactly k0 processes, whichever side the partitioner calls it */
        double caps[2] = {(double)np + 1, (double)np + 1};
        topomap_ugraph g = subgraph(c, P, np, k1 + 1, k0 + 1);
        topomap_partition_options o = popts(c); /* no flows: see "Max flow at the top" */
        rc = topomap_partition(&g, 2, caps, &o, c->side, NULL, NULL);
        if (rc && rc != TOPOMAP_EINVAL) return rc; /* EINVAL: no packing found */
        if (!rc && c->side[np] != c->side[np + 1]) {
            for (int32_t i = 0; i < np; i++) c->best[i] = c->side[i] != c->side[np];
            best = objective(c, P, np, c->best, 0);
            have = 1;
        }
    }
    if (!ctx || c->plain_k0 != k0) {
        double caps[2] = {(double)k0, (double)k1};
        topomap_ugraph g = subgraph(c, P, np, 0, 0);
        topomap_partition_options o = popts(c);
        o.flows = c->opt->flow_min > 0 && np >= c->opt->flow_min;
        if ((rc = topomap_partition(&g, 2, caps, &o, c->plain, NULL, NULL))) return rc;
        c->plain_k0 = ctx ? k0 : -1;
    }
    double plain = objective(c, P, np, c->plain, 0);
    int flip = 0;
    if (ctx && k0 == k1) {
        double flipped = objective(c, P, np, c->plain, 1);
        if (flipped < plain) {
            plain = flipped;
            flip = 1;
        }
    }
    if (!have || plain < best)
        for (int32_t i = 0; i < np; i++) c->best[i] = c->plain[i] ^ flip;
    return TOPOMAP_OK;
}

static int by_geokey(const void *a, const void *b)
{
    const topomap_i_geokey *x = a, *y = b;
    if (x->key != y->key) return (x->key > y->key) - (x->key < y->key);
    return (x->i > y->i) - (x->i < y->i);
}

/* With process coordinates: the part's local indices sorted along each
   axis (then the other axes in order) into c->gord, once per part. */
static void sort_processes(drb *c, const int32_t *P, int32_t np)
{
    int32_t pd = c->opt->pdims;
    for (int32_t a = 0; a < pd; a++) {
        for (int32_t i = 0; i < np; i++) {
            const int32_t *x = c->opt->pcoords + (int64_t)P[i] * pd;
            int64_t key = x[a];
            for (int32_t b = 0; b < pd; b++)
                if (b != a) key = (key << PCOORD_BITS) | x[b];
            c->gkeys[i] = (topomap_i_geokey){key, i};
        }
        qsort(c->gkeys, (size_t)np, sizeof *c->gkeys, by_geokey);
        for (int32_t i = 0; i < np; i++) c->gord[(int64_t)a * c->n + i] = c->gkeys[i].i;
    }
}

/* Sides into c->best by coordinates: along `axis` (every axis if -1), the
   first or the last k0 processes go to half 0; the one of least cut +
   outside cost. */
static void geometric_bisect(drb *c, const int32_t *P, int32_t np, int32_t k0, int32_t axis)
{
    double best = 0;
    int have = 0;
    for (int32_t a = 0; a < c->opt->pdims; a++)
        for (int down = 0; down < 2 && (axis < 0 || a == axis); down++) {
            const int32_t *ord = c->gord + (int64_t)a * c->n;
            for (int32_t r = 0; r < np; r++) c->side[ord[r]] = down ? r < np - k0 : r >= k0;
            double cost = objective(c, P, np, c->side, 0);
            if (!have || cost < best) {
                have = 1;
                best = cost;
                memcpy(c->best, c->side, (size_t)np * sizeof *c->best);
            }
        }
}

static void mark(drb *c, const int32_t *P, int32_t np, int on)
{
    for (int32_t i = 0; i < np; i++) c->local[P[i]] = on ? i : -1;
}

static int32_t coord(const drb *c, int32_t pos, int32_t d)
{
    return c->opt->coords[(int64_t)node_at(c, pos) * c->opt->ndims + d];
}

/* The extent of [lo, hi) along dimension d (on a ring, the ring minus its
   longest empty run) and the coordinate it starts at. */
static int32_t extent_of(drb *c, int32_t lo, int32_t hi, int32_t d, int32_t *start)
{
    int32_t r = c->opt->ring[d];
    if (r == 0) {
        int32_t a = INT32_MAX, b = INT32_MIN;
        for (int32_t i = lo; i < hi; i++) {
            int32_t x = coord(c, i, d);
            a = x < a ? x : a;
            b = x > b ? x : b;
        }
        *start = a;
        return b - a + 1;
    }
    memset(c->occ, 0, (size_t)r);
    for (int32_t i = lo; i < hi; i++) c->occ[coord(c, i, d)] = 1;
    int64_t first;
    int32_t extent = (int32_t)topomap_i_ring_arc(c->occ, r, &first);
    *start = (int32_t)first;
    return extent;
}

/* box[lo] = the box of [lo, hi). */
static void set_box(drb *c, int32_t lo, int32_t hi)
{
    int32_t *b = c->box + 2 * (int64_t)lo * c->opt->ndims;
    for (int32_t d = 0; d < c->opt->ndims; d++) b[2 * d + 1] = extent_of(c, lo, hi, d, &b[2 * d]);
}

static int by_key(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Sort [lo, hi) of the order along dimension d (from `start` on a ring;
   descending if `down`; then by position) and return the cut where the
   coordinate changes nearest the middle (the first on a tie). */
static int32_t sort_along(drb *c, int32_t lo, int32_t hi, int32_t d, int32_t start, int down)
{
    int32_t len = hi - lo, r = c->opt->ring[d];
    for (int32_t i = 0; i < len; i++) {
        int64_t x = coord(c, lo + i, d) - start;
        if (r > 0) x = ((x % r) + r) % r;
        if (down) x = INT32_MAX - x;
        c->keys[i] = (x << 32) | (int64_t)c->order[lo + i];
    }
    qsort(c->keys, (size_t)len, sizeof *c->keys, by_key);
    int32_t best = lo + 1;
    int64_t best_off = INT64_MAX;
    for (int32_t i = 0; i < len; i++) {
        c->order[lo + i] = (int32_t)(c->keys[i] & 0xffffffff);
        if (i > 0 && (c->keys[i] >> 32) != (c->keys[i - 1] >> 32)) {
            int64_t off = 2 * (int64_t)i - len;
            off = off < 0 ? -off : off;
            if (off < best_off) {
                best_off = off;
                best = lo + i;
            }
        }
    }
    return best;
}

/* Sides of the processes P for the node halves [lo, mid) and [mid, hi)
   into c->best; *cost = cut + outside cost. */
static int split_at(drb *c, const int32_t *P, int32_t np, int32_t lo, int32_t mid, int32_t hi, int32_t d,
                    double *cost)
{
    range h0 = {lo, mid}, h1 = {mid, hi};
    int64_t S0 = 0, S1 = 0; /* slots of the halves (the order inside a part changes with geometry) */
    for (int32_t i = lo; i < hi; i++) *(i < mid ? &S0 : &S1) += c->an->slots[c->order[i]];
    int ctx = c->opt->context && outside_costs(c, P, np, h0, h1);
    if (!ctx)
        for (int32_t i = 0; i < 2 * np; i++) c->ext[i] = 0;
    int32_t k0;
    if (np >= S0 + S1) {
        k0 = (int32_t)S0;
    } else {
        int f = topomap_i_fill_first(ctx ? c->ext : NULL, np, S0, S1);
        int64_t kf = np < (f ? S1 : S0) ? np : (f ? S1 : S0);
        k0 = (int32_t)(f ? np - kf : kf);
    }
    int32_t k1 = np - k0;
    int rc = TOPOMAP_OK;
    if (k0 == 0 || k1 == 0) {
        for (int32_t i = 0; i < np; i++) c->best[i] = k0 == 0;
    } else if (c->opt->pcoords) {
        geometric_bisect(c, P, np, k0, d < 0 || d >= TOPOMAP_I_MAXDIMS ? -1 : c->pair[d]);
    } else if ((rc = bisect(c, P, np, k0, k1, ctx))) {
        return rc;
    }
    *cost = objective(c, P, np, c->best, 0);
    return TOPOMAP_OK;
}

/* The process split in c->best for the cut at mid, counted from the other
   end of dimension d (a 9-ring's 4-plane half at the high end instead of
   the low one): kept, with that order of [lo, hi), if it costs less than
   *best.  Only when the split fills the part and the halves match. */
static int other_end(drb *c, const int32_t *P, int32_t np, int32_t lo, int32_t mid, int32_t hi, int32_t d,
                     int32_t start, double *best, int32_t *best_mid)
{
    int64_t S0 = 0, S = 0, D0 = 0;
    for (int32_t i = lo; i < hi; i++) {
        S += c->an->slots[c->order[i]];
        if (i < mid) S0 += c->an->slots[c->order[i]];
    }
    int32_t dmid = sort_along(c, lo, hi, d, start, 1);
    for (int32_t i = lo; i < dmid; i++) D0 += c->an->slots[c->order[i]];
    if (np < S || D0 != S0) return TOPOMAP_OK;
    set_box(c, lo, dmid);
    set_box(c, dmid, hi);
    if (!c->opt->context || !outside_costs(c, P, np, (range){lo, dmid}, (range){dmid, hi})) return TOPOMAP_OK;
    double cost = objective(c, P, np, c->best, 0);
    if (cost < *best) {
        *best = cost;
        *best_mid = dmid;
        memcpy(c->keep, c->best, (size_t)np * sizeof *c->keep);
        memcpy(c->corder, c->order + lo, (size_t)(hi - lo) * sizeof *c->corder);
    }
    return TOPOMAP_OK;
}

/* Map the processes P onto the nodes at leaf positions [lo, hi): with
   geometry, try the cuts across the (up to 3) longest extents, each also
   counted from the other end with the same process split (a 9-ring's
   4-plane half is the low or the high end), and keep the cheapest; else
   cut at the lowest-level gap. */
static int split(drb *c, int32_t *P, int32_t np, int32_t lo, int32_t hi)
{
    if (np == 0) return TOPOMAP_OK;
    if (hi - lo == 1) {
        for (int32_t i = 0; i < np; i++) {
            c->group[P[i]] = c->order[lo];
            c->dom[P[i]] = (range){lo, hi};
        }
        c->placed += np;
        return topomap_i_tick(c->t, np, (double)c->placed / c->n);
    }
    int32_t mid, dims[3], starts[3], ncand = 0, rc = TOPOMAP_OK;
    double cost;
    mark(c, P, np, 1);
    c->plain_k0 = -1;
    if (c->opt->pcoords) sort_processes(c, P, np);
    if (!c->opt->coords) {
        mid = cut_of(c, lo, hi);
        rc = split_at(c, P, np, lo, mid, hi, -1, &cost);
    } else {
        int32_t ext3[3] = {0, 0, 0};
        for (int32_t d = 0; d < c->opt->ndims; d++) { /* the 3 longest extents, first dimension first on a tie */
            int32_t st, e = extent_of(c, lo, hi, d, &st);
            if (e < 2) continue;
            int32_t at = ncand < 3 ? ncand++ : 3;
            while (at > 0 && ext3[at - 1] < e) {
                if (at < 3) {
                    ext3[at] = ext3[at - 1];
                    dims[at] = dims[at - 1];
                    starts[at] = starts[at - 1];
                }
                at--;
            }
            if (at < 3) {
                ext3[at] = e;
                dims[at] = d;
                starts[at] = st;
            }
        }
        double best = 0;
        int32_t best_mid = -1;
        for (int32_t q = 0; q < ncand && !rc; q++) {
            mid = sort_along(c, lo, hi, dims[q], starts[q], 0);
            set_box(c, lo, mid);
            set_box(c, mid, hi);
            if ((rc = split_at(c, P, np, lo, mid, hi, dims[q], &cost))) break;
            if (best_mid < 0 || cost < best) {
                best = cost;
                best_mid = mid;
                memcpy(c->keep, c->best, (size_t)np * sizeof *c->keep);
                memcpy(c->corder, c->order + lo, (size_t)(hi - lo) * sizeof *c->corder);
            }
            if ((rc = other_end(c, P, np, lo, mid, hi, dims[q], starts[q], &best, &best_mid))) break;
        }
        if (!rc) {
            mid = best_mid;
            memcpy(c->best, c->keep, (size_t)np * sizeof *c->best);
            memcpy(c->order + lo, c->corder, (size_t)(hi - lo) * sizeof *c->corder);
            set_box(c, lo, mid);
            set_box(c, mid, hi);
        }
    }
    mark(c, P, np, 0);
    if (rc) return rc;
    range h0 = {lo, mid}, h1 = {mid, hi};
    int32_t n0 = 0, n1 = 0;
    for (int32_t i = 0; i < np; i++) {
        c->dom[P[i]] = c->best[i] ? h1 : h0;
        if (c->best[i]) c->tmp[n1++] = P[i];
        else P[n0++] = P[i];
    }
    memcpy(P + n0, c->tmp, (size_t)n1 * sizeof *P);
    if ((rc = split(c, P, n0, lo, mid))) return rc;
    return split(c, P + n0, n1, mid, hi);
}

/* order: machine nodes -> allocation node indices, each exactly once. */
static int read_order(drb *c, const topomap_topdown_options *o)
{
    int32_t nn = topomap_machine_nnodes(c->m), A = c->an->nnodes;
    if (!o->order || !o->gap || o->count != A)
        return topomap_i_fail(TOPOMAP_EINVAL, "topdown needs the order of the allocation's %d nodes (got %d entries)",
                              (int)A, (int)o->count);
    int32_t *index = malloc((size_t)nn * sizeof *index);
    if (!index) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %d nodes", (int)nn);
    for (int32_t v = 0; v < nn; v++) index[v] = -1;
    for (int32_t j = 0; j < A; j++) index[c->an->node[j]] = j;
    int rc = TOPOMAP_OK;
    for (int32_t i = 0; i < A && !rc; i++) {
        int32_t v = o->order[i];
        if (v < 0 || v >= nn || index[v] < 0)
            rc = topomap_i_fail(TOPOMAP_EINVAL, "topdown order entry %d is node %d, not a node of the allocation or "
                                                "listed twice", (int)i, (int)v);
        else c->order[i] = index[v];
        if (!rc) index[v] = -1;
    }
    free(index);
    if (!rc && o->coords) {
        if (o->ndims < 1 || !o->ring)
            rc = topomap_i_fail(TOPOMAP_EINVAL, "topdown geometry needs ndims >= 1 (got %d) and the ring sizes",
                                (int)o->ndims);
        for (int32_t d = 0; d < o->ndims && !rc; d++)
            for (int32_t v = 0; v < nn && !rc; v++) {
                int32_t x = o->coords[(int64_t)v * o->ndims + d], r = o->ring[d];
                if (r < 0 || x < 0 || (r > 0 && x >= r) || x > INT32_MAX / 2)
                    rc = topomap_i_fail(TOPOMAP_EINVAL, "node %d has coordinate %d in dimension %d (ring %d)", (int)v,
                                        (int)x, (int)d, (int)r);
            }
    }
    return rc;
}

/* With both geometries: pair the machine dimensions of extent >= 2 with the
   process axes, longest with longest (ties by index), so that every cut of
   the machine cuts the processes across the matching axis and parts stay
   boxes of the embedding's proportions (36 x 18 x 18 processes onto 9^3
   nodes: 4 x 2 x 2 blocks).  Unpaired dimensions try every axis. */
static void insert_desc(int32_t *ext, int32_t *id, int32_t count, int32_t e, int32_t i)
{
    int32_t at = count;
    for (; at > 0 && ext[at - 1] < e; at--) {
        ext[at] = ext[at - 1];
        id[at] = id[at - 1];
    }
    ext[at] = e;
    id[at] = i;
}

static void pair_axes(drb *c)
{
    int32_t md[TOPOMAP_I_MAXDIMS], me[TOPOMAP_I_MAXDIMS], nm = 0, pa[3], pe[3], pd = c->opt->pdims;
    for (int32_t d = 0; d < TOPOMAP_I_MAXDIMS; d++) c->pair[d] = -1;
    if (!c->opt->pcoords || !c->opt->coords) return;
    for (int32_t d = 0; d < c->opt->ndims && d < TOPOMAP_I_MAXDIMS; d++) insert_desc(me, md, nm++, c->box[2 * d + 1], d);
    while (nm > 0 && me[nm - 1] < 2) nm--;
    for (int32_t a = 0; a < pd; a++) {
        int32_t lo = INT32_MAX, hi = -1;
        for (int32_t u = 0; u < c->n; u++) {
            int32_t x = c->opt->pcoords[(int64_t)u * pd + a];
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
        insert_desc(pe, pa, a, c->n ? hi - lo + 1 : 0, a);
    }
    for (int32_t i = 0; i < nm && i < pd; i++) c->pair[md[i]] = pa[i];
}

/* One complete run with c->seed from the initial order: the bipartitioning,
   the PEs, the search; *J = its QAP objective. */
static int one_try(drb *c, const topomap_pattern *p, int32_t *P, topomap_i_ticker *t, int32_t *pe_of, double *J)
{
    int32_t n = c->n, A = c->A;
    double lo = t->lo, hi = t->hi, cut = c->opt->sweeps > 0 ? 0.8 : 1.0;
    for (int32_t u = 0; u < n; u++) {
        P[u] = u;
        c->local[u] = -1;
        c->dom[u] = (range){0, A};
    }
    c->calls = c->placed = 0;
    if (c->opt->coords) set_box(c, 0, A);
    pair_axes(c);
    t->hi = lo + (hi - lo) * cut;
    int rc = topomap_i_report(t, 0);
    if (!rc) rc = split(c, P, n, 0, A);
    if (!rc) rc = topomap_place_groups(c->an, n, c->group, NULL, pe_of);
    if (!rc && c->opt->sweeps > 0) {
        topomap_i_qap_search_options so = {c->seed, c->opt->sweeps, c->opt->depth, c->opt->max_partners};
        t->lo = t->hi;
        t->hi = hi;
        rc = topomap_i_qap_search(c->m, p, &c->g, c->an, &so, t, pe_of);
    }
    t->lo = lo;
    t->hi = hi;
    topomap_eval *e = NULL;
    if (!rc && c->opt->tries > 1 && !(rc = topomap_eval_create_flags(c->m, p, pe_of, NULL, TOPOMAP_EVAL_DISTANCE_ONLY, &e))) {
        topomap_metrics mt;
        topomap_eval_metrics(e, &mt);
        *J = mt.qap;
        topomap_eval_destroy(e);
    }
    return rc;
}

int topomap_map_topdown(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                        int32_t capacity, const topomap_topdown_options *opt, int32_t *pe_of)
{
    if (!opt) return topomap_i_fail(TOPOMAP_EINVAL, "topdown needs options with the target's decomposition");
    if (opt->context != 0 && opt->context != 1)
        return topomap_i_fail(TOPOMAP_EINVAL, "topdown context must be 0 or 1, got %d", (int)opt->context);
    if (opt->ntries < 1 || opt->tries < 1 || opt->sweeps < 0 || opt->depth < 0 || opt->max_partners < 1 ||
        opt->congestion_sweeps < 0 || opt->flow_min < 0)
        return topomap_i_fail(TOPOMAP_EINVAL, "topdown needs ntries >= 1, tries >= 1, sweeps >= 0, depth >= 0, "
                                              "max_partners >= 1, congestion_sweeps >= 0 and flow_min >= 0 "
                                              "(got %d, %d, %d, %d, %d, %d, %d)",
                              (int)opt->ntries, (int)opt->tries, (int)opt->sweeps, (int)opt->depth,
                              (int)opt->max_partners, (int)opt->congestion_sweeps, (int)opt->flow_min);
    int rc = topomap_pattern_validate(p);
    if (rc) return rc;
    if (opt->pcoords) {
        if (opt->pdims < 1 || opt->pdims > 3)
            return topomap_i_fail(TOPOMAP_EINVAL, "topdown process coordinates need 1 to 3 axes, got %d",
                                  (int)opt->pdims);
        for (int64_t i = 0; i < (int64_t)p->n * opt->pdims; i++)
            if (opt->pcoords[i] < 0 || opt->pcoords[i] >= (1 << PCOORD_BITS))
                return topomap_i_fail(TOPOMAP_EINVAL, "process %lld has coordinate %d on axis %d (must be 0 to %d)",
                                      (long long)(i / opt->pdims), (int)opt->pcoords[i], (int)(i % opt->pdims),
                                      (1 << PCOORD_BITS) - 1);
    }
    topomap_alloc_nodes *an = NULL;
    if ((rc = topomap_alloc_nodes_create(m, alloc, nalloc, capacity, &an))) return rc;
    int32_t n = p->n, A = an->nnodes;
    if (n > an->pe_start[A] * (int64_t)capacity) {
        rc = topomap_i_fail(TOPOMAP_EINVAL, "%d processes do not fit %d PEs x capacity %d", (int)n,
                            (int)an->pe_start[A], (int)capacity);
        topomap_alloc_nodes_destroy(an);
        return rc;
    }
    topomap_i_ticker t = {&opt->run, "topdown", 0.0, 1.0, 0, TOPOMAP_I_TICK};
    int64_t m2 = 2 * (int64_t)p->indptr[n];
    drb c = {.m = m, .opt = opt, .an = an, .t = &t, .n = n, .A = A};
    c.inner = (topomap_i_ticker){&opt->run, "topdown", 0, 0, 0, TOPOMAP_I_TICK};
    int64_t *xadj = malloc(((size_t)n + 1) * sizeof *xadj);
    int32_t *adj = malloc((size_t)m2 * sizeof *adj + 1), *P = malloc(((size_t)n + 1) * sizeof *P);
    double *wgt = malloc((size_t)m2 * sizeof *wgt + 1);
    c.order = malloc((size_t)A * sizeof *c.order);
    int32_t *first = malloc((size_t)A * sizeof *first), *trial = malloc(((size_t)n + 1) * sizeof *trial);
    double bestJ = 0, share = opt->congestion_sweeps > 0 ? 0.85 : 1.0;
    c.group = malloc(((size_t)n + 1) * sizeof *c.group);
    c.dom = malloc(((size_t)n + 1) * sizeof *c.dom);
    c.local = malloc(((size_t)n + 1) * sizeof *c.local);
    c.side = malloc(((size_t)n + 2) * sizeof *c.side);
    c.best = malloc(((size_t)n + 1) * sizeof *c.best);
    c.plain = malloc(((size_t)n + 1) * sizeof *c.plain);
    c.tmp = malloc(((size_t)n + 1) * sizeof *c.tmp);
    c.ext = malloc(2 * ((size_t)n + 1) * sizeof *c.ext);
    c.sxadj = malloc(((size_t)n + 3) * sizeof *c.sxadj);
    c.sadj = malloc(((size_t)m2 + 2 * (size_t)n + 1) * sizeof *c.sadj);
    c.swgt = malloc(((size_t)m2 + 2 * (size_t)n + 1) * sizeof *c.swgt);
    c.svw = malloc(((size_t)n + 2) * sizeof *c.svw);
    int32_t maxring = 1;
    for (int32_t d = 0; opt->coords && d < opt->ndims; d++) maxring = opt->ring[d] > maxring ? opt->ring[d] : maxring;
    c.keep = malloc(((size_t)n + 1) * sizeof *c.keep);
    if (opt->pcoords) {
        c.gord = malloc((size_t)opt->pdims * ((size_t)n + 1) * sizeof *c.gord);
        c.gkeys = malloc(((size_t)n + 1) * sizeof *c.gkeys);
    }
    c.corder = malloc((size_t)A * sizeof *c.corder);
    c.keys = malloc((size_t)A * sizeof *c.keys);
    c.occ = malloc((size_t)maxring);
    c.box = opt->coords ? malloc(2 * (size_t)A * opt->ndims * sizeof *c.box) : NULL;
    c.cstamp = calloc((size_t)A, sizeof *c.cstamp);
    c.chi = malloc((size_t)A * sizeof *c.chi);
    c.ccost = malloc(2 * (size_t)A * sizeof *c.ccost);
    if (!xadj || !adj || !wgt || !P || !first || !trial || !c.order || !c.group || !c.dom || !c.local || !c.side || !c.best ||
        !c.plain || !c.tmp || !c.ext || !c.sxadj || !c.sadj || !c.swgt || !c.svw || !c.keep || !c.corder || !c.keys || !c.occ || (opt->coords && !c.box) ||
        (opt->pcoords && (!c.gord || !c.gkeys)) || !c.cstamp || !c.chi || !c.ccost) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the topdown mapping of %d processes", (int)n);
        goto cleanup;
    }
    if ((rc = read_order(&c, opt)) || (rc = topomap_ugraph_from_pattern(p, xadj, adj, wgt))) goto cleanup;
    c.g = (topomap_ugraph){n, xadj, adj, wgt, NULL};
    memcpy(first, c.order, (size_t)A * sizeof *first);
    for (int32_t k = 0; k < opt->tries && !rc; k++) {
        double J = 0;
        c.seed = k ? topomap_rng_mix(opt->run.seed ^ topomap_rng_mix((uint64_t)k)) : opt->run.seed;
        t.lo = share * k / opt->tries;
        t.hi = share * (k + 1.0) / opt->tries;
        memcpy(c.order, first, (size_t)A * sizeof *first);
        if ((rc = one_try(&c, p, P, &t, k ? trial : pe_of, &J))) break;
        if (k == 0 || J < bestJ) {
            bestJ = J;
            if (k) memcpy(pe_of, trial, (size_t)n * sizeof *pe_of);
        }
    }
    if (!rc && opt->congestion_sweeps > 0) {
        topomap_i_congestion_search_options co = {topomap_rng_mix(opt->run.seed ^ 0xc0), opt->congestion_sweeps,
                                                  opt->max_partners};
        t.lo = share;
        t.hi = 1.0;
        rc = topomap_i_congestion_search(m, p, &c.g, an, &co, &t, pe_of);
    }
    if (!rc) rc = topomap_i_report(&t, 1);
cleanup:
    topomap_alloc_nodes_destroy(an);
    free(xadj);
    free(adj);
    free(wgt);
    free(P);
    free(first);
    free(trial);
    free(c.order);
    free(c.group);
    free(c.dom);
    free(c.local);
    free(c.side);
    free(c.best);
    free(c.plain);
    free(c.tmp);
    free(c.ext);
    free(c.sxadj);
    free(c.sadj);
    free(c.swgt);
    free(c.svw);
    free(c.keep);
    free(c.gord);
    free(c.gkeys);
    free(c.corder);
    free(c.keys);
    free(c.occ);
    free(c.box);
    free(c.cstamp);
    free(c.chi);
    free(c.ccost);
    return rc;
}

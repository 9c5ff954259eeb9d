/* Recursive co-bisection: Hoefler & Snir, "Generic Topology Mapping
   Strategies for Large-scale Parallel Architectures", ICS 2011: the
   "recursive" strategy of LibTopoMap (TPM_STRATEGY=recursive, after Scotch's
   dual recursive bipartitioning), after LibTopoMap's multicore step.

   From the paper and LibTopoMap's reference code: bisect the physical graph
   (LibTopoMap: METIS recursive bisection of the network graph, vertex weight
   = the processes a vertex hosts, so switches and unused nodes weigh 0; edge
   weight = capacity) and the process (here: group) graph into halves of
   matching sizes, map half to half, recurse until one process and one node
   are left.

   Choices the paper leaves open, and ours:
   - Node halves without geometry: topomap_partition of the network part,
     vertex weights 1 (allocation node) / 0 (switch, unallocated node), the
     summed link capacities as edge weights (map_physgraph.c), into exact
     halves (hard capacities ceil(A/2), floor(A/2)), or the partitioner's
     soft bound when that fails; if a side still gets no allocation node,
     the first ceil(A/2) nodes in vertex order against the rest.  On a fat
     tree the cut follows the switch hierarchy (whole leaf switches stay
     together while they fit in a half); on a dragonfly it keeps groups,
     then routers, together.  Before the first cut, unallocated vertices of
     degree <= 1 are pruned, repeatedly (unused nodes and subtrees).
   - Node halves with geometry (tori, meshes, hypercubes; the Python layer
     passes the coordinates): the allocation nodes sorted along a dimension
     of largest extent (the shortest arc covering them on a ring), then by
     id, cut at the median.  Min cuts of a torus part are often tied (a
     cylinder cuts as cheaply across as along); a box cut keeps the halves
     in the groups' shape.  When some group of the part talks to groups
     outside it, every dimension of largest extent (up to 3) is tried and
     the split of least cost below is kept.
   - Group halves: as many as each node half holds.  When the groups do not
     fill the allocation they fill one half first (the half their outside
     traffic prefers, else the one with more nodes): a compact node set.
   - Context (Scotch's external gains; option `context`): a group outside
     the part sits on its node once placed, else is bound for a node half
     (a domain: up to 32 of its nodes, spread by a golden-ratio stride, and
     with geometry the box covering it).  hops(domain, half) = the mean,
     over up to 8 nodes of the half, of the hops to the domain: to the node,
     to the box, or to the nearest sampled node.  ext[g][h] = sum over g's
     traffic to outside groups of bytes x hops(their domain, half h).  The
     split's cost = the group cut + sum of ext over the chosen sides.  With
     some preference the group graph gets two anchor vertices, one per
     half, each joined to the groups that prefer its half by the difference
     of their ext; two ways of keeping the anchors apart are tried (anchors
     heavier than all groups under matching capacities; or every group
     joined to both anchors by a weight larger than all others, which adds
     the same to every split that separates them), and the cheaper split
     whose anchors land apart is kept (on swapped sides when the counts
     allow).  Otherwise, and without context (LibTopoMap), the plain min
     cut, its halves swapped with context if that is cheaper.
   - A group alone facing several nodes takes the one with the least bytes
     x hops to the domains of its neighbours (the first in vertex order on
     a tie, or without context).
   - Node sizes (slot classes, map_physgraph.c): after each group split,
     groups of too large a class move to the other side (the one whose move
     adds the least cut), swapping back a smaller group when that side is
     full, until both halves can be completed.
   - The parts are done depth first, half 0 first; the i-th partitioner call
     gets a seed derived from (seed, i).

   Complexity, with U groups and E_U edges between them, A allocation nodes,
   V vertices and L links of the network (after pruning): O(log A) levels,
   each partitioning disjoint parts of both graphs (with context, up to 2
   group partitions per candidate cut and 3 candidates), so O((U + E_U + V +
   L) log A) times the partitioner's near-linear cost; plus up to 16 hop
   counts per edge leaving a part (32 x 8 per outside domain, cached) per
   level, and O(A log A) sorting per level with geometry. */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/map_libtopomap.h"
#include "topomap/rng.h"
#include "map_physgraph.h"
#include "map_topdown.h"

#define NSAMPLE 32 /* nodes kept per domain */
#define NCOST 8     /* of which a node half's cost is averaged over */

void topomap_recursive_options_init(topomap_recursive_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->context = 1;
}

typedef struct {
    int64_t k1, k2;
} gkey;

/* A node half where groups are bound: up to NSAMPLE of its nodes, and
   with geometry the box that covers them (box[2d], box[2d+1] = start and
   extent in dimension d; MAX_BOX dimensions at most, else no box).  A
   placed group's domain is its node instead: dom = -1 - node. */
#define MAX_BOX 32
typedef struct {
    int32_t n;
    int32_t node[NSAMPLE];
    int32_t nbox;
    int32_t box[2 * MAX_BOX];
} domain;

typedef struct {
    const topomap_machine *m;
    topomap_i_nodemap *nm;
    const topomap_i_physgraph *pg;
    topomap_i_ticker *t;
    topomap_i_ticker inner; /* for the partitioner: the progress so far, fixed */
    const topomap_recursive_options *opt;
    int64_t calls;
    int32_t placed;
    int32_t *vidx;  /* nv: allocation node of a network vertex, or -1 */
    int32_t *local; /* max(nv, k): index in the part being worked on, -1 outside */
    int32_t *tmp;   /* max(nv, k) + 2: stable partition scratch */
    int32_t *part;  /* nv + k + 2: partitioner output, node sides then group sides */
    int32_t *best;  /* nv + k: node and group sides of the best candidate split */
    int32_t *side;  /* k: side of a group in the split being made, -1 outside */
    int32_t *dom;   /* k: the domain each group is bound for (-1 - node once placed) */
    domain *doms;   /* a stack: the parts still to split own the domains below the top */
    int32_t ndom, capdom, stamp;
    int32_t *dstamp; /* per domain: stamp of its cached costs */
    double *dcost;   /* per domain: cost to node half 0 and 1 */
    double *ext;    /* 2k: outside cost of each local group on side 0 and 1 */
    int32_t *cnt;   /* 4 x nclass: groups and nodes per class and side */
    int64_t *sxadj; /* subgraph scratch, room for the two anchors */
    int32_t *sadj;
    double *swgt, *svw;
    gkey *keys;     /* nv: geometric sort keys */
    uint8_t *occ;   /* largest ring: occupied positions */
} rec;

static void mark(rec *c, const int32_t *vs, int32_t n, int on)
{
    for (int32_t i = 0; i < n; i++) c->local[vs[i]] = on ? i : -1;
}

/* The subgraph induced by the marked vs[0..n) (sorted, so rows stay sorted). */
static topomap_ugraph induced(rec *c, const int64_t *xadj, const int32_t *adj, const double *wgt, const int32_t *vs,
                              int32_t n)
{
    int64_t len = 0;
    for (int32_t i = 0; i < n; i++) {
        c->sxadj[i] = len;
        for (int64_t e = xadj[vs[i]]; e < xadj[vs[i] + 1]; e++)
            if (c->local[adj[e]] >= 0) {
                c->sadj[len] = c->local[adj[e]];
                c->swgt[len++] = wgt[e];
            }
    }
    c->sxadj[n] = len;
    topomap_ugraph g = {n, c->sxadj, c->sadj, c->swgt, NULL};
    return g;
}

/* Stable: the entries with flag 0 first; returns how many. */
static int32_t stable_split(rec *c, int32_t *a, int32_t n, const int32_t *flag)
{
    int32_t n0 = 0, n1 = 0;
    for (int32_t i = 0; i < n; i++)
        if (flag[i] == 0) a[n0++] = a[i];
        else c->tmp[n1++] = a[i];
    memcpy(a + n0, c->tmp, (size_t)n1 * sizeof *a);
    return n0;
}

static topomap_partition_options popts(rec *c)
{
    topomap_partition_options o;
    topomap_partition_options_init(&o);
    o.trusted = 1;
    /* 2 multilevel runs per bisection, not 4: on the 46^3 stencil (seeds
       0-2, torus:40x40x40/16 and fattree:k=40,levels=3/16) hop-bytes and
       max congestion moved by -2% to +1.5% (mean over seeds), within the
       seed-to-seed spread, for 16% less CPU */
    o.ntries = 2;
    o.seed = topomap_rng_mix(c->opt->run.seed ^ topomap_rng_mix((uint64_t)c->calls++));
    c->inner.lo = c->inner.hi = c->t->lo + (c->t->hi - c->t->lo) * c->placed / c->nm->k;
    o.progress = topomap_i_ticker_cb;
    o.progress_ctx = &c->inner;
    return o;
}

/* Node halves by graph bisection: part[i] for V[i]. */
static int bisect_graph(rec *c, const int32_t *V, int32_t nv, int32_t A)
{
    const topomap_i_physgraph *pg = c->pg;
    mark(c, V, nv, 1);
    topomap_ugraph g = induced(c, pg->xadj, pg->adj, pg->wgt, V, nv);
    mark(c, V, nv, 0);
    for (int32_t i = 0; i < nv; i++) c->svw[i] = c->vidx[V[i]] >= 0 ? 1.0 : 0.0;
    g.vwgt = c->svw;
    topomap_partition_options o = popts(c);
    o.hard = 1;
    double caps[2] = {(double)((A + 1) / 2), (double)(A / 2)};
    int rc = topomap_partition(&g, 2, caps, &o, c->part, NULL, NULL);
    if (rc == TOPOMAP_EINVAL) {
        o.hard = 0;
        o.imbalance = 0;
        rc = topomap_partition(&g, 2, NULL, &o, c->part, NULL, NULL);
    }
    if (rc) return rc;
    int32_t a0 = 0;
    for (int32_t i = 0; i < nv; i++) a0 += c->vidx[V[i]] >= 0 && c->part[i] == 0;
    if (a0 == 0 || a0 == A)
        for (int32_t i = 0, seen = 0; i < nv; i++) {
            int node = c->vidx[V[i]] >= 0;
            c->part[i] = node && seen < (A + 1) / 2 ? 0 : 1;
            seen += node;
        }
    return TOPOMAP_OK;
}

static int by_gkey(const void *a, const void *b)
{
    const gkey *x = a, *y = b;
    return x->k1 != y->k1 ? (x->k1 > y->k1) - (x->k1 < y->k1) : (x->k2 > y->k2) - (x->k2 < y->k2);
}

/* The extent of the allocation nodes of V (those with part[i] == h, or
   all if h < 0) along dimension d (the shortest arc that covers them on a
   ring) and where it starts. */
static int64_t extent_of(rec *c, const int32_t *V, int32_t nv, int32_t h, int32_t d, int64_t *start)
{
    const topomap_recursive_options *o = c->opt;
    *start = 0;
    if (o->ring[d] > 0) {
        int32_t r = o->ring[d];
        memset(c->occ, 0, (size_t)r);
        for (int32_t i = 0; i < nv; i++)
            if (c->vidx[V[i]] >= 0 && (h < 0 || c->part[i] == h)) c->occ[o->coords[(int64_t)V[i] * o->ndims + d]] = 1;
        return topomap_i_ring_arc(c->occ, r, start);
    }
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    for (int32_t i = 0; i < nv; i++)
        if (c->vidx[V[i]] >= 0 && (h < 0 || c->part[i] == h)) {
            int64_t x = o->coords[(int64_t)V[i] * o->ndims + d];
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
    *start = lo;
    return hi - lo + 1;
}

/* Node halves by coordinates: part[i] for V[i], cut at the median of the
   allocation nodes along dimension d (from `start` on a ring), then by id. */
static void bisect_geo(rec *c, const int32_t *V, int32_t nv, int32_t A, int32_t d, int64_t start)
{
    const topomap_recursive_options *o = c->opt;
    int32_t r = o->ring[d], na = 0;
#define KEY(v) ((gkey){r > 0 ? (((o->coords[(int64_t)(v) * o->ndims + d] - start) % r) + r) % r \
                             : o->coords[(int64_t)(v) * o->ndims + d] - start, (v)})
    for (int32_t i = 0; i < nv; i++)
        if (c->vidx[V[i]] >= 0) c->keys[na++] = KEY(V[i]);
    qsort(c->keys, (size_t)A, sizeof *c->keys, by_gkey);
    gkey cut = c->keys[(A + 1) / 2 - 1]; /* the last node of half 0 */
    for (int32_t i = 0; i < nv; i++) {
        gkey k = KEY(V[i]);
        c->part[i] = by_gkey(&k, &cut) > 0;
    }
#undef KEY
}

/* The A allocation nodes V[i] with part[i] == h, or NSAMPLE of them spread
   by a golden-ratio stride (an even stride would follow one row of a grid). */
static void sample(rec *c, const int32_t *V, int32_t nv, int32_t h, int32_t A, domain *d)
{
    int32_t ns = A < NSAMPLE ? A : NSAMPLE, idx[NSAMPLE];
    for (int32_t s = 0; s < ns; s++) {
        double f = (s + 1) * 0.6180339887498949;
        idx[s] = A <= NSAMPLE ? s : (int32_t)((f - (int64_t)f) * A);
    }
    for (int32_t s = 1; s < ns; s++) /* sort the indices */
        for (int32_t j = s; j > 0 && idx[j - 1] > idx[j]; j--) {
            int32_t x = idx[j];
            idx[j] = idx[j - 1];
            idx[j - 1] = x;
        }
    d->n = 0;
    for (int32_t i = 0, seen = 0; i < nv && d->n < ns; i++) {
        if (c->vidx[V[i]] < 0 || c->part[i] != h) continue;
        while (d->n < ns && idx[d->n] == seen) d->node[d->n++] = V[i];
        seen++;
    }
    d->nbox = c->opt->coords && c->opt->ndims <= MAX_BOX ? c->opt->ndims : 0;
    for (int32_t k = 0; k < d->nbox; k++) {
        int64_t start, extent = extent_of(c, V, nv, h, k, &start);
        d->box[2 * k] = (int32_t)start;
        d->box[2 * k + 1] = (int32_t)extent;
    }
}

/* Hops from machine node x to the box of d: per dimension, the distance to
   the interval (on a ring, the shorter way to its arc). */
static int64_t box_hops(const rec *c, int32_t x, const domain *d)
{
    const topomap_recursive_options *o = c->opt;
    int64_t sum = 0;
    for (int32_t k = 0; k < d->nbox; k++)
        sum += topomap_i_interval_hops(o->coords[(int64_t)x * o->ndims + k], 1, d->box[2 * k], d->box[2 * k + 1],
                                       o->ring[k]);
    return sum;
}

/* Push a domain on the stack; its id is its position. */
static int push_domain(rec *c, const domain *d, int32_t *id)
{
    if (c->ndom == c->capdom) {
        int32_t cap = c->capdom ? 2 * c->capdom : 64;
        domain *doms = realloc(c->doms, (size_t)cap * sizeof *doms);
        if (doms) c->doms = doms;
        int32_t *ds = realloc(c->dstamp, (size_t)cap * sizeof *ds);
        if (ds) c->dstamp = ds;
        double *dc = realloc(c->dcost, 2 * (size_t)cap * sizeof *dc);
        if (dc) c->dcost = dc;
        if (!doms || !ds || !dc) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %d domains", (int)cap);
        c->capdom = cap;
    }
    c->doms[c->ndom] = *d;
    c->dstamp[c->ndom] = 0;
    *id = c->ndom++;
    return TOPOMAP_OK;
}

/* Hops from the nodes of `half` (up to NCOST of them, spread) to where a
   group of domain d will sit, on average: to its node once placed, else to
   the nearest point of its box, or of its sampled nodes without geometry. */
static double hops(const rec *c, int32_t d, const domain *half)
{
    int32_t nc = half->n < NCOST ? half->n : NCOST;
    int64_t sum = 0;
    for (int32_t i = 0; i < nc; i++) {
        int32_t x = half->node[(int64_t)i * half->n / nc];
        if (d < 0) {
            sum += topomap_machine_route_count(c->m, x, -1 - d);
            continue;
        }
        if (c->doms[d].nbox) {
            sum += box_hops(c, x, &c->doms[d]);
            continue;
        }
        int32_t least = INT32_MAX;
        for (int32_t j = 0; j < c->doms[d].n; j++) {
            int32_t h = topomap_machine_route_count(c->m, x, c->doms[d].node[j]);
            least = h < least ? h : least;
        }
        sum += least;
    }
    return (double)sum / nc;
}

/* ext[2i + h] for the (marked) groups G: bytes x hops from the domains of
   their outside neighbours to node half h.  Returns 1 if some group
   prefers a half. */
static int outside_costs(rec *c, const int32_t *G, int32_t ng, const domain half[2])
{
    const topomap_i_nodemap *nm = c->nm;
    int differ = 0, s = ++c->stamp;
    for (int32_t i = 0; i < ng; i++) {
        double e0 = 0, e1 = 0;
        for (int64_t e = nm->xadj[G[i]]; e < nm->xadj[G[i] + 1]; e++) {
            int32_t h = nm->adj[e], d = c->dom[h];
            if (c->local[h] >= 0) continue;
            if (d < 0) {
                e0 += nm->wgt[e] * hops(c, d, &half[0]);
                e1 += nm->wgt[e] * hops(c, d, &half[1]);
                continue;
            }
            if (c->dstamp[d] != s) {
                c->dstamp[d] = s;
                c->dcost[2 * d] = hops(c, d, &half[0]);
                c->dcost[2 * d + 1] = hops(c, d, &half[1]);
            }
            e0 += nm->wgt[e] * c->dcost[2 * d];
            e1 += nm->wgt[e] * c->dcost[2 * d + 1];
        }
        c->ext[2 * i] = e0;
        c->ext[2 * i + 1] = e1;
        differ |= e0 != e1;
    }
    return differ;
}

/* cut + outside cost of the split s[i] (side of G[i], flipped if `flip`). */
static double objective(const rec *c, const int32_t *G, int32_t ng, const int32_t *s, int flip)
{
    const topomap_i_nodemap *nm = c->nm;
    double cost = 0;
    for (int32_t i = 0; i < ng; i++) {
        int32_t si = s[i] ^ flip;
        cost += c->ext[2 * i + si];
        for (int64_t e = nm->xadj[G[i]]; e < nm->xadj[G[i] + 1]; e++) {
            int32_t j = c->local[nm->adj[e]];
            if (j > i && (s[j] ^ flip) != si) cost += nm->wgt[e];
        }
    }
    return cost;
}

/* The group graph of the marked G plus anchors ng (for node half 0) and
   ng + 1 (half 1): a group is joined to the anchor of the half it prefers
   by how much more it costs on the other half, so that a cut counts the
   group cut plus the outside costs.  The anchors weigh more than all the
   groups (vertex weights in svw), so that no side can hold both. */
static topomap_ugraph anchored(rec *c, const int32_t *G, int32_t ng)
{
    const topomap_i_nodemap *nm = c->nm;
    int64_t len = 0;
    for (int32_t i = 0; i < ng; i++) {
        c->sxadj[i] = len;
        c->svw[i] = 1;
        for (int64_t e = nm->xadj[G[i]]; e < nm->xadj[G[i] + 1]; e++)
            if (c->local[nm->adj[e]] >= 0) {
                c->sadj[len] = c->local[nm->adj[e]];
                c->swgt[len++] = nm->wgt[e];
            }
        double pref = c->ext[2 * i + 1] - c->ext[2 * i];
        if (pref != 0) {
            c->sadj[len] = pref > 0 ? ng : ng + 1;
            c->swgt[len++] = pref > 0 ? pref : -pref;
        }
    }
    for (int32_t a = 0; a < 2; a++) {
        c->sxadj[ng + a] = len;
        c->svw[ng + a] = ng + 1;
        for (int32_t i = 0; i < ng; i++) {
            double pref = c->ext[2 * i + 1] - c->ext[2 * i];
            if ((a == 0 && pref > 0) || (a == 1 && pref < 0)) {
                c->sadj[len] = i;
                c->swgt[len++] = pref > 0 ? pref : -pref;
            }
        }
    }
    c->sxadj[ng + 2] = len;
    topomap_ugraph g = {ng + 2, c->sxadj, c->sadj, c->swgt, c->svw};
    return g;
}

static topomap_ugraph anchored_big(rec *c, const int32_t *G, int32_t ng)
{
    const topomap_i_nodemap *nm = c->nm;
    double big = 1;
    for (int32_t i = 0; i < ng; i++) {
        big += c->ext[2 * i] > c->ext[2 * i + 1] ? c->ext[2 * i] - c->ext[2 * i + 1] : c->ext[2 * i + 1] - c->ext[2 * i];
        for (int64_t e = nm->xadj[G[i]]; e < nm->xadj[G[i] + 1]; e++) big += nm->wgt[e];
    }
#define TO_ANCHOR(i, a) (big + ((a) == 0 ? c->ext[2 * (i) + 1] - c->ext[2 * (i)] : c->ext[2 * (i)] - c->ext[2 * (i) + 1]) \
                         * (((a) == 0) == (c->ext[2 * (i) + 1] > c->ext[2 * (i)])))
    int64_t len = 0;
    for (int32_t i = 0; i < ng; i++) {
        c->sxadj[i] = len;
        for (int64_t e = nm->xadj[G[i]]; e < nm->xadj[G[i] + 1]; e++)
            if (c->local[nm->adj[e]] >= 0) {
                c->sadj[len] = c->local[nm->adj[e]];
                c->swgt[len++] = nm->wgt[e];
            }
        for (int32_t a = 0; a < 2; a++) {
            c->sadj[len] = ng + a;
            c->swgt[len++] = TO_ANCHOR(i, a);
        }
    }
    for (int32_t a = 0; a < 2; a++) {
        c->sxadj[ng + a] = len;
        for (int32_t i = 0; i < ng; i++) {
            c->sadj[len] = i;
            c->swgt[len++] = TO_ANCHOR(i, a);
        }
    }
#undef TO_ANCHOR
    c->sxadj[ng + 2] = len;
    topomap_ugraph g = {ng + 2, c->sxadj, c->sadj, c->swgt, NULL};
    return g;
}

/* Sides of the groups of G into c->side: k0 and k1 groups for node halves
   of A0 and A1 nodes.  With a preference (ctx), the anchored min cut, if
   its anchors land apart (on swapped sides only if the counts allow);
   else the plain min cut, its halves swapped if that costs less outside. */
static int split_groups(rec *c, const int32_t *G, int32_t ng, int32_t k0, int32_t k1, int32_t A0, int32_t A1,
                        int ctx)
{
    const topomap_i_nodemap *nm = c->nm;
    int32_t *s = c->part; /* the group part of c->part, after the nodes' */
    int can_flip = c->opt->context && k0 <= A1 && k1 <= A0, rc;
    topomap_ugraph g;
    topomap_partition_options o;
    if (ctx) {
        double best = 0;
        int have = 0;
        for (int variant = 0; variant < 2; variant++) {
            double caps[2] = {(double)k0 + (variant ? 1 : ng + 1), (double)k1 + (variant ? 1 : ng + 1)};
            g = variant ? anchored_big(c, G, ng) : anchored(c, G, ng);
            o = popts(c);
            o.hard = 1;
            rc = topomap_partition(&g, 2, caps, &o, s, NULL, NULL);
            if (rc && rc != TOPOMAP_EINVAL) return rc; /* EINVAL: no exact split found */
            int flip = s[ng];
            if (rc || s[ng + 1] == flip || (flip && !can_flip)) continue;
            double cost = objective(c, G, ng, s, flip);
            if (!have || cost < best) {
                have = 1;
                best = cost;
                for (int32_t i = 0; i < ng; i++) c->side[G[i]] = s[i] ^ flip;
            }
        }
        if (have) return TOPOMAP_OK;
    }
    double caps[2] = {(double)k0, (double)k1};
    g = induced(c, nm->xadj, nm->adj, nm->wgt, G, ng);
    o = popts(c);
    o.hard = 1;
    if ((rc = topomap_partition(&g, 2, caps, &o, s, NULL, NULL))) return rc;
    int flip = can_flip && objective(c, G, ng, s, 1) < objective(c, G, ng, s, 0);
    for (int32_t i = 0; i < ng; i++) c->side[G[i]] = s[i] ^ flip;
    return TOPOMAP_OK;
}

/* Traffic of group g to the groups on side s. */
static double to_side(const rec *c, int32_t g, int32_t s)
{
    double w = 0;
    for (int64_t e = c->nm->xadj[g]; e < c->nm->xadj[g + 1]; e++)
        if (c->side[c->nm->adj[e]] == s) w += c->nm->wgt[e];
    return w;
}

/* The group on side s with class in [lo, hi] whose move adds the least cut. */
static int32_t cheapest_move(const rec *c, const int32_t *G, int32_t ng, int32_t s, int32_t lo, int32_t hi)
{
    int32_t best = -1;
    double best_gain = 0;
    for (int32_t i = 0; i < ng; i++) {
        int32_t g = G[i], cl = c->nm->group_class[g];
        if (c->side[g] != s || cl < lo || cl > hi) continue;
        double gain = to_side(c, g, 1 - s) - to_side(c, g, s);
        if (best < 0 || gain > best_gain) {
            best = g;
            best_gain = gain;
        }
    }
    return best;
}

/* Row r of cnt summed over classes 0..cl. */
static int64_t upto(const rec *c, int32_t r, int32_t cl)
{
    int64_t s = 0;
    for (int32_t i = 0; i <= cl; i++) s += c->cnt[r * c->nm->nclass + i];
    return s;
}

/* Make both sides completable (node classes): rows 0, 1 of cnt count the
   groups per side and class, rows 2, 3 the nodes (part[i] = side of V[i]). */
static int repair(rec *c, const int32_t *G, int32_t ng, const int32_t *V, int32_t nv)
{
    int32_t nc = c->nm->nclass;
    memset(c->cnt, 0, 4 * (size_t)nc * sizeof *c->cnt);
    for (int32_t i = 0; i < ng; i++) c->cnt[c->side[G[i]] * nc + c->nm->group_class[G[i]]]++;
    for (int32_t i = 0; i < nv; i++)
        if (c->vidx[V[i]] >= 0) c->cnt[(2 + c->part[i]) * nc + c->nm->node_class[c->vidx[V[i]]]]++;
    for (int32_t cl = 0; cl < nc; cl++)
        for (int32_t s = 0; s < 2; s++)
            while (upto(c, s, cl) > upto(c, 2 + s, cl)) {
                /* a group of class cl crosses; a smaller one comes back if the other side is full */
                int32_t o = 1 - s, x = cheapest_move(c, G, ng, s, cl, cl), y;
                if (x < 0) goto fail;
                c->side[x] = o;
                c->cnt[s * nc + cl]--;
                c->cnt[o * nc + cl]++;
                if (upto(c, o, nc - 1) > upto(c, 2 + o, nc - 1)) {
                    if ((y = cheapest_move(c, G, ng, o, cl + 1, nc - 1)) < 0) goto fail;
                    c->side[y] = s;
                    c->cnt[o * nc + c->nm->group_class[y]]--;
                    c->cnt[s * nc + c->nm->group_class[y]]++;
                }
            }
    return TOPOMAP_OK;
fail:
    return topomap_i_fail(TOPOMAP_EINVAL, "cannot split %d groups of unequal sizes over the halves of %d vertices",
                          (int)ng, (int)nv);
}

static int leaf(rec *c, int32_t g, const int32_t *V, int32_t nv)
{
    topomap_i_nodemap *nm = c->nm;
    int32_t best = -1;
    double best_cost = 0;
    domain here = {.n = 1};
    for (int32_t i = 0; i < nv; i++) {
        int32_t j = c->vidx[V[i]];
        if (j < 0 || nm->group_of_node[j] >= 0 || nm->node_class[j] > nm->group_class[g]) continue;
        double cost = 0;
        here.node[0] = V[i];
        if (c->opt->context)
            for (int64_t e = nm->xadj[g]; e < nm->xadj[g + 1]; e++)
                cost += nm->wgt[e] * hops(c, c->dom[nm->adj[e]], &here);
        if (best < 0 || cost < best_cost) {
            best = j;
            best_cost = cost;
        }
    }
    if (best < 0)
        return topomap_i_fail(TOPOMAP_EINVAL, "no allocation node can take group %d of %lld processes", (int)g,
                              (long long)nm->size[g]);
    topomap_i_nodemap_place(nm, g, best);
    c->placed++;
    c->dom[g] = -1 - nm->an->node[best];
    return TOPOMAP_OK;
}

/* Split the part (groups G, network vertices V): try each candidate node
   cut (with geometry, every dimension of largest extent, at most 3, when
   some group of G talks to the outside; else the one cut), split the
   groups for it, keep the split of least cut + outside cost, recurse. */
static int split(rec *c, int32_t *G, int32_t ng, int32_t *V, int32_t nv)
{
    if (ng == 0) return TOPOMAP_OK;
    if (ng == 1) return leaf(c, G[0], V, nv);
    const topomap_recursive_options *o = c->opt;
    int32_t A = 0, dims[3], ncand = 1;
    domain best_half[2];
    int64_t starts[3] = {0, 0, 0};
    for (int32_t i = 0; i < nv; i++) A += c->vidx[V[i]] >= 0;
    int outside = 0, rc = TOPOMAP_OK, have = 0;
    mark(c, G, ng, 1);
    for (int32_t i = 0; i < ng && o->context && !outside; i++)
        for (int64_t e = c->nm->xadj[G[i]]; e < c->nm->xadj[G[i] + 1] && !outside; e++)
            outside = c->local[c->nm->adj[e]] < 0;
    mark(c, G, ng, 0);
    if (o->coords) {
        int64_t widest = -1, start;
        for (int32_t d = 0; d < o->ndims; d++) {
            int64_t e = extent_of(c, V, nv, -1, d, &start);
            if (e > widest) {
                widest = e;
                ncand = 0;
            }
            if (e == widest && ncand < 3) {
                dims[ncand] = d;
                starts[ncand++] = start;
            }
        }
        if (!outside) ncand = 1;
    }
    double best = 0;
    int32_t *best_part = c->best, *best_side = c->best + nv;
    for (int32_t q = 0; q < ncand && !rc; q++) {
        if (o->coords) bisect_geo(c, V, nv, A, dims[q], starts[q]);
        else if ((rc = bisect_graph(c, V, nv, A))) break;
        int32_t A0 = 0;
        domain half[2];
        for (int32_t i = 0; i < nv; i++) A0 += c->vidx[V[i]] >= 0 && c->part[i] == 0;
        int32_t A1 = A - A0;
        sample(c, V, nv, 0, A0, &half[0]);
        sample(c, V, nv, 1, A1, &half[1]);
        c->part += nv; /* the group sides go after the node sides */
        mark(c, G, ng, 1);
        int ctx = o->context && outside_costs(c, G, ng, half);
        int32_t k0 = A0, k1 = A1;
        if (ng < A) { /* fill one half first */
            int32_t f = topomap_i_fill_first(ctx ? c->ext : NULL, ng, A0, A1);
            int32_t af = f ? A1 : A0, kf = ng < af ? ng : af;
            k0 = f ? ng - kf : kf;
            k1 = ng - k0;
        }
        if (k0 == 0 || k1 == 0) {
            for (int32_t i = 0; i < ng; i++) c->side[G[i]] = k0 == 0;
        } else {
            rc = split_groups(c, G, ng, k0, k1, A0, A1, ctx);
        }
        for (int32_t i = 0; i < ng; i++) c->tmp[i] = c->side[G[i]];
        double cost = ncand > 1 && !rc ? objective(c, G, ng, c->tmp, 0) : 0;
        mark(c, G, ng, 0);
        c->part -= nv;
        if (!rc && (!have || cost < best)) {
            have = 1;
            best = cost;
            memcpy(best_part, c->part, (size_t)nv * sizeof *best_part);
            memcpy(best_side, c->tmp, (size_t)ng * sizeof *best_side);
            best_half[0] = half[0];
            best_half[1] = half[1];
        }
    }
    if (rc) return rc;
    for (int32_t i = 0; i < ng; i++) c->side[G[i]] = best_side[i];
    int32_t nv0 = stable_split(c, V, nv, best_part);
    for (int32_t i = 0; i < nv; i++) c->part[i] = i >= nv0; /* the node sides in the new order */
    if (c->nm->nclass > 1 && (rc = repair(c, G, ng, V, nv))) return rc;
    int32_t top = c->ndom, d0, d1;
    if ((rc = push_domain(c, &best_half[0], &d0)) || (rc = push_domain(c, &best_half[1], &d1))) return rc;
    for (int32_t i = 0; i < ng; i++) {
        int32_t s = c->side[G[i]];
        c->part[nv + i] = s;
        c->dom[G[i]] = s ? d1 : d0;
        c->side[G[i]] = -1;
    }
    int32_t ng0 = stable_split(c, G, ng, c->part + nv);
    if ((rc = topomap_i_tick(c->t, (int64_t)nv * ncand + ng, (double)c->placed / c->nm->k))) return rc;
    if ((rc = split(c, G, ng0, V, nv0))) return rc;
    c->ndom = top + 2; /* half 0 is placed: the domains of its parts are dead */
    rc = split(c, G + ng0, ng - ng0, V + nv0, nv - nv0);
    c->ndom = top;
    return rc;
}

/* The network vertices worth cutting: unallocated vertices of degree <= 1
   pruned until none is left; the *count others remain, in V (sorted). */
static int prune(const rec *c, int32_t *V, int32_t *count)
{
    const topomap_i_physgraph *pg = c->pg;
    int32_t nv = pg->nv, head = 0, tail = 0;
    int32_t *deg = malloc((size_t)nv * sizeof *deg), *queue = malloc((size_t)nv * sizeof *queue);
    if (!deg || !queue) {
        free(deg);
        free(queue);
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory pruning a network of %d vertices", (int)nv);
    }
    for (int32_t v = 0; v < nv; v++) {
        deg[v] = (int32_t)(pg->xadj[v + 1] - pg->xadj[v]);
        if (c->vidx[v] < 0 && deg[v] <= 1) queue[tail++] = v;
    }
    while (head < tail) {
        int32_t v = queue[head++];
        deg[v] = -1;
        for (int64_t e = pg->xadj[v]; e < pg->xadj[v + 1]; e++) {
            int32_t w = pg->adj[e];
            if (deg[w] < 0) continue;
            if (--deg[w] == 1 && c->vidx[w] < 0) queue[tail++] = w;
        }
    }
    int32_t n = 0;
    for (int32_t v = 0; v < nv; v++)
        if (deg[v] >= 0) V[n++] = v;
    *count = n;
    free(deg);
    free(queue);
    return TOPOMAP_OK;
}

static int check_geometry(const topomap_machine *m, const topomap_recursive_options *o, int32_t *maxring)
{
    *maxring = 1;
    if (!o->coords) return TOPOMAP_OK;
    int32_t nn = topomap_machine_nnodes(m);
    if (o->ndims < 1 || !o->ring)
        return topomap_i_fail(TOPOMAP_EINVAL, "recursive geometry needs ndims >= 1 (got %d) and the ring sizes",
                              (int)o->ndims);
    if (topomap_machine_nvertices(m) != nn)
        return topomap_i_fail(TOPOMAP_EINVAL, "recursive geometry needs a direct network (nodes only), this one has "
                                              "%d switches", (int)(topomap_machine_nvertices(m) - nn));
    for (int32_t d = 0; d < o->ndims; d++) {
        if (o->ring[d] < 0)
            return topomap_i_fail(TOPOMAP_EINVAL, "ring size of dimension %d is %d (must be >= 0)", (int)d,
                                  (int)o->ring[d]);
        *maxring = o->ring[d] > *maxring ? o->ring[d] : *maxring;
        for (int32_t v = 0; v < nn; v++) {
            int32_t x = o->coords[(int64_t)v * o->ndims + d];
            if (o->ring[d] > 0 && (x < 0 || x >= o->ring[d]))
                return topomap_i_fail(TOPOMAP_EINVAL, "node %d has coordinate %d in dimension %d, outside its ring of %d",
                                      (int)v, (int)x, (int)d, (int)o->ring[d]);
        }
    }
    return TOPOMAP_OK;
}

int topomap_map_recursive(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                          int32_t capacity, const topomap_recursive_options *opt_in, int32_t *pe_of)
{
    topomap_recursive_options opt;
    if (opt_in) opt = *opt_in;
    else topomap_recursive_options_init(&opt);
    if (opt.context != 0 && opt.context != 1)
        return topomap_i_fail(TOPOMAP_EINVAL, "recursive context must be 0 or 1, got %d", (int)opt.context);
    int32_t maxring;
    int rc = check_geometry(m, &opt, &maxring);
    if (!rc) rc = topomap_pattern_validate(p);
    if (rc) return rc;
    topomap_i_ticker t = {&opt.run, "recursive", 0.0, 0.5, 0, TOPOMAP_I_TICK};
    topomap_i_nodemap nm;
    topomap_i_physgraph pg = {0};
    rec c = {0};
    int32_t *G = NULL, *V = NULL;
    if ((rc = topomap_i_nodemap_create(m, p, alloc, nalloc, capacity, &t, &nm))) return rc;
    t.lo = 0.5;
    t.hi = 1.0;
    if ((rc = topomap_i_report(&t, 0)) || (rc = topomap_i_physgraph_build(m, &pg))) goto cleanup;
    int32_t k = nm.k, nv = pg.nv, big = (nv > k ? nv : k) + 2;
    int64_t qe = nm.xadj[k] + 4 * (int64_t)k, edges = pg.xadj[nv] > qe ? pg.xadj[nv] : qe;
    c = (rec){.m = m, .nm = &nm, .pg = &pg, .t = &t, .opt = &opt};
    c.inner = (topomap_i_ticker){&opt.run, "recursive", 0, 0, 0, TOPOMAP_I_TICK};
    c.vidx = malloc((size_t)nv * sizeof *c.vidx);
    c.local = malloc((size_t)big * sizeof *c.local);
    c.tmp = malloc((size_t)big * sizeof *c.tmp);
    c.part = malloc(((size_t)nv + k + 2) * sizeof *c.part);
    c.best = malloc(((size_t)nv + k) * sizeof *c.best);
    c.side = malloc((size_t)k * sizeof *c.side);
    c.dom = malloc((size_t)k * sizeof *c.dom);
    c.ext = malloc(2 * (size_t)k * sizeof *c.ext);
    c.cnt = malloc(4 * (size_t)nm.nclass * sizeof *c.cnt);
    c.sxadj = malloc(((size_t)big + 1) * sizeof *c.sxadj);
    c.sadj = malloc((size_t)edges * sizeof *c.sadj + 1);
    c.swgt = malloc((size_t)edges * sizeof *c.swgt + 1);
    c.svw = malloc((size_t)big * sizeof *c.svw);
    c.keys = opt.coords ? malloc((size_t)nv * sizeof *c.keys) : NULL;
    c.occ = opt.coords ? malloc((size_t)maxring) : NULL;
    G = malloc((size_t)k * sizeof *G);
    V = malloc((size_t)nv * sizeof *V);
    if (!c.vidx || !c.local || !c.tmp || !c.part || !c.best || !c.side || !c.dom || !c.ext || !c.cnt || !c.sxadj || !c.sadj ||
        !c.swgt || !c.svw || (opt.coords && (!c.keys || !c.occ)) || !G || !V) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the recursive mapping of %d groups", (int)k);
        goto cleanup;
    }
    topomap_i_nodemap_vertex_index(&nm, nv, c.vidx);
    for (int32_t i = 0; i < big; i++) c.local[i] = -1;
    for (int32_t g = 0; g < k; g++) {
        c.side[g] = -1;
        c.dom[g] = 0; /* the root domain, made below */
        G[g] = g;
    }
    int32_t nvp = 0, root;
    domain all;
    if ((rc = prune(&c, V, &nvp))) goto cleanup;
    memset(c.part, 0, (size_t)nvp * sizeof *c.part);
    sample(&c, V, nvp, 0, nm.an->nnodes, &all);
    if ((rc = push_domain(&c, &all, &root)) || (rc = split(&c, G, k, V, nvp))) goto cleanup;
    if (!(rc = topomap_i_nodemap_finish(&nm, pe_of))) rc = topomap_i_report(&t, 1);
cleanup:
    topomap_i_nodemap_free(&nm);
    topomap_i_physgraph_free(&pg);
    free(c.vidx);
    free(c.local);
    free(c.tmp);
    free(c.part);
    free(c.best);
    free(c.side);
    free(c.dom);
    free(c.doms);
    free(c.dstamp);
    free(c.dcost);
    free(c.ext);
    free(c.cnt);
    free(c.sxadj);
    free(c.sadj);
    free(c.swgt);
    free(c.svw);
    free(c.keys);
    free(c.occ);
    free(G);
    free(V);
    return rc;
}

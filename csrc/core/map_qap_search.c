/* Swap/move local search on the QAP objective J = sum of bytes x distance,
   after VieM's search in the
   communication neighbourhood N_C^d (Schulz & Träff, "Better process
   mapping and sparse quadratic assignment", SEA 2017; notes/anchors.md
   §1.4), with nodes instead of PEs as the places a process may go.

   A process u with a neighbour on another node tries (1) moves to a PE with
   room on a node of one of its neighbours and (2) swaps with the processes
   within `depth` hops of it in the traffic graph that sit on such a node
   (at most max_partners of them, breadth first).  The best improving change
   is applied at once (an improvement below 1e-12 J counts as none); a
   process that changes place activates its neighbours (label-propagation
   order; first the processes on a boundary, node by node, a node's in a
   seeded random order: by_node).  Inside a node, processes stay on
   the PE they reach; the distance between PEs of a node is part of J.

   The budget is `sweeps` x (processes first on a boundary) tries, judged
   in eighths of a sweep (at least WINDOW_MIN tries): an eighth that lowers
   J by less than MIN_GAIN of it ends the search, which is then worth less
   than 0.16 % of J per sweep.  On stencils that comes at once: the
   160x80x80 stencil onto torus:40x40x40/16 without its grid gained 0.06 %
   of J in 18 s of 101 (0.003-0.013 % per eighth), and now stops after
   its first eighth (83 s in all; with its grid, where nothing is to gain,
   21.9 -> 7.9 s); the 72x36x36 one gained 0.14 % (8 -> 7 s).  On the
   irregular delaunay_n15 and rgg_n_2_15_s0 onto torus:16x16x8/16 the
   search keeps going to its end (the same mappings, seeds 0-2 and 0-1).

   A try is judged by its change of J alone, from each process's share of J
   (its messages' bytes x distance, sent and received; recomputed for the
   processes around a change that is made) instead of through the
   evaluator's journalled try: a swap of u with v costs v's messages in
   distance lookups, and u's side is summed once per node u could go to
   (the distance to a process on another node is the nodes' distance).  On
   the 100^3 stencil onto torus:40x40x40/16 (its grid, seed 0) topdown
   without its congestion search took 50 s, 39 of them in this search
   through the evaluator's tries; 33 s with shares, 21 s with shares and
   the first queue node by node; J after the search within 0.05 %.

   Complexity: O(sum over tried processes of (candidate nodes x degree +
   candidates x their degree)) distance lookups, at most the budget's
   tries; memory O(n + messages + PEs). */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/rng.h"
#include "eval_pairs.h"
#include "map_qap_search.h"

#define CHECK_EVERY 4096
#define WINDOW_MIN 4096
#define MIN_GAIN 2e-4

typedef struct {
    const topomap_machine *m;
    const topomap_pattern *p;
    const topomap_ugraph *g;
    const topomap_alloc_nodes *an;
    const topomap_i_qap_search_options *o;
    topomap_i_pairs pairs;
    int table;       /* use the pair table */
    int32_t n;
    int32_t *pe_of;  /* n: the mapping, changed in place */
    int64_t *t_indptr; /* the pattern transposed: who sends to each process */
    int32_t *t_indices;
    double *t_bytes;
    double *share;   /* n: bytes x distance of each process's messages, sent and received */
    int32_t *node;   /* n: allocation node of each process */
    int32_t *index;  /* machine node -> allocation node, or -1 */
    int32_t *load;   /* machine PE -> processes on it */
    int64_t *nload;  /* allocation node -> processes on it */
    int32_t *nstamp; /* allocation node mark */
    int32_t *cpos;   /* allocation node -> its place in cand (valid under the mark) */
    int32_t *pstamp; /* process mark */
    int32_t *cand, *bfs, *queue;
    double *base;    /* per candidate node: u's share there, its messages to that node left out */
    /* u's messages: the other end, its PE and allocation node, bytes, 1 if received */
    int32_t *mx, *mpe, *mnode;
    double *mw;
    uint8_t *min;
    uint8_t *active;
    int32_t head, pending, stamp;
    double J, thresh;
} qs;

static int32_t fresh(qs *c)
{
    if (c->stamp == INT32_MAX) {
        memset(c->nstamp, 0, (size_t)c->an->nnodes * sizeof *c->nstamp);
        memset(c->pstamp, 0, (size_t)c->n * sizeof *c->pstamp);
        c->stamp = 0;
    }
    return ++c->stamp;
}

static void push(qs *c, int32_t u)
{
    if (c->active[u]) return;
    c->active[u] = 1;
    int64_t at = (int64_t)c->head + c->pending;
    c->queue[at >= c->n ? at - c->n : at] = u;
    c->pending++;
}

/* A PE of allocation node j with room, or -1. */
static int32_t room_on(const qs *c, int32_t j)
{
    const topomap_alloc_nodes *an = c->an;
    if (c->nload[j] >= an->slots[j]) return -1;
    for (int32_t i = an->pe_start[j]; i < an->pe_start[j + 1]; i++)
        if (c->load[an->pes[i]] < an->capacity) return an->pes[i];
    return -1;
}

/* Distance of a message from PE a to PE b.  The pair table serves
   allocations whose nodes all have a slot in it; on larger ones nearly
   every lookup misses and costs more than the network's distance. */
static inline double dist(qs *c, int32_t a, int32_t b)
{
    const topomap_machine *m = c->m;
    int32_t na = topomap_machine_node_of(m, a), nb = topomap_machine_node_of(m, b);
    if (na == nb) return topomap_machine_distance(m, a, b);
    return c->table ? topomap_i_pairs_distance(&c->pairs, m, a, b, na, nb) : topomap_machine_node_distance(m, na, nb);
}

/* Distance of a message between PE a and PE b, received by a when `in`. */
static inline double dist_dir(qs *c, int32_t a, int32_t b, int in) { return in ? dist(c, b, a) : dist(c, a, b); }

/* u's share of J as mapped now. */
static double share_of(qs *c, int32_t u)
{
    const topomap_pattern *p = c->p;
    int32_t pu = c->pe_of[u];
    double s = 0;
    for (int64_t k = p->indptr[u]; k < p->indptr[u + 1]; k++) s += p->bytes[k] * dist(c, pu, c->pe_of[p->indices[k]]);
    for (int64_t k = c->t_indptr[u]; k < c->t_indptr[u + 1]; k++)
        s += c->t_bytes[k] * dist(c, c->pe_of[c->t_indices[k]], pu);
    return s;
}

/* u's messages into c->m* (a valid pattern has no self messages); their number. */
static int32_t gather(qs *c, int32_t u)
{
    const topomap_pattern *p = c->p;
    int32_t k = 0;
    for (int side = 0; side < 2; side++) {
        const int64_t *ip = side ? c->t_indptr : p->indptr;
        const int32_t *ix = side ? c->t_indices : p->indices;
        const double *b = side ? c->t_bytes : p->bytes;
        for (int64_t e = ip[u]; e < ip[u + 1]; e++) {
            int32_t x = ix[e];
            c->mx[k] = x;
            c->mpe[k] = c->pe_of[x];
            c->mnode[k] = c->node[x];
            c->mw[k] = b[e];
            c->min[k++] = (uint8_t)side;
        }
    }
    return k;
}

/* u's share if it sat on `pe` of candidate node i (allocation node j), its
   messages with `skip` (-1: none) left out. */
static double share_at(qs *c, int32_t nm, int32_t i, int32_t j, int32_t pe, int32_t skip)
{
    double s = c->base[i];
    for (int32_t k = 0; k < nm; k++)
        if (c->mnode[k] == j && c->mx[k] != skip) s += c->mw[k] * dist_dir(c, pe, c->mpe[k], c->min[k]);
    return s;
}

/* The change of J if u (share `su`, on PE pu) and v swapped PEs. */
static double swap_delta(qs *c, int32_t u, int32_t v, double su, double new_u)
{
    const topomap_pattern *p = c->p;
    int32_t pu = c->pe_of[u], pv = c->pe_of[v];
    double new_v = 0, uv_old = 0, uv_new = 0;
    for (int64_t k = p->indptr[v]; k < p->indptr[v + 1]; k++) {
        int32_t y = p->indices[k];
        if (y == u) {
            uv_old += p->bytes[k] * dist(c, pv, pu);
            uv_new += p->bytes[k] * dist(c, pu, pv);
        } else {
            new_v += p->bytes[k] * dist(c, pu, c->pe_of[y]);
        }
    }
    for (int64_t k = c->t_indptr[v]; k < c->t_indptr[v + 1]; k++) {
        int32_t y = c->t_indices[k];
        if (y == u) {
            uv_old += c->t_bytes[k] * dist(c, pu, pv);
            uv_new += c->t_bytes[k] * dist(c, pv, pu);
        } else {
            new_v += c->t_bytes[k] * dist(c, c->pe_of[y], pu);
        }
    }
    return new_u + new_v + uv_new - (su + c->share[v] - uv_old);
}

/* Refresh the shares of u and of everyone it exchanges messages with. */
static void reshare(qs *c, int32_t u)
{
    const topomap_pattern *p = c->p;
    c->share[u] = share_of(c, u);
    for (int64_t k = p->indptr[u]; k < p->indptr[u + 1]; k++) c->share[p->indices[k]] = share_of(c, p->indices[k]);
    for (int64_t k = c->t_indptr[u]; k < c->t_indptr[u + 1]; k++)
        c->share[c->t_indices[k]] = share_of(c, c->t_indices[k]);
}

#ifndef NDEBUG
/* Debug builds (the C tests): the shares kept are the shares, and the J
   summed from the changes' deltas is J. */
static void check_shares(qs *c)
{
    double J = 0;
    for (int32_t u = 0; u < c->n; u++) {
        double s = share_of(c, u);
        assert(fabs(s - c->share[u]) <= 1e-9 * (fabs(s) + 1));
        J += s;
    }
    assert(fabs(J / 2 - c->J) <= 1e-9 * (fabs(J) + 1));
}
#endif

static void relocate(qs *c, int32_t u, int32_t to_pe, int32_t to_node)
{
    c->load[c->pe_of[u]]--;
    c->load[to_pe]++;
    c->nload[c->node[u]]--;
    c->nload[to_node]++;
    c->node[u] = to_node;
    c->pe_of[u] = to_pe;
}

/* The first queue node by node, in allocation order, keeping the order
   within a node: a try reads the processes within three hops of u, and
   when the next try is on the same or a nearby node they are still in
   cache.  The whole search ran 2.2 x faster so on the 100^3 stencil onto
   torus:40x40x40/16, to the same J, than in a random order of all
   processes. */
static int by_node(qs *c)
{
    int32_t A = c->an->nnodes, *at = calloc((size_t)A + 1, sizeof *at);
    int32_t *sorted = malloc(((size_t)c->pending + 1) * sizeof *sorted);
    if (!at || !sorted) {
        free(at);
        free(sorted);
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the local search of %d processes", (int)c->n);
    }
    for (int32_t i = 0; i < c->pending; i++) at[c->node[c->queue[i]] + 1]++;
    for (int32_t j = 0; j < A; j++) at[j + 1] += at[j];
    for (int32_t i = 0; i < c->pending; i++) sorted[at[c->node[c->queue[i]]]++] = c->queue[i];
    memcpy(c->queue, sorted, (size_t)c->pending * sizeof *sorted);
    free(at);
    free(sorted);
    return TOPOMAP_OK;
}

/* Apply u's best improving move or swap; *changed, *partner (-1: a move). */
static void improve(qs *c, int32_t u, int *changed, int32_t *partner)
{
    const topomap_ugraph *g = c->g;
    const topomap_alloc_nodes *an = c->an;
    int32_t own = c->node[u], ncand = 0, best_pe = -1, best_partner = -1;
    double best = -c->thresh;
    *changed = 0;
    int32_t mark = fresh(c);
    for (int64_t k = g->xadj[u]; k < g->xadj[u + 1]; k++) {
        int32_t j = c->node[g->adjncy[k]];
        if (j != own && c->nstamp[j] != mark) {
            c->nstamp[j] = mark;
            c->cpos[j] = ncand;
            c->cand[ncand++] = j;
        }
    }
    if (!ncand) return;
    int32_t nm = gather(c, u), pu = c->pe_of[u];
    double su = c->share[u];
    for (int32_t i = 0; i < ncand; i++) {
        int32_t j = c->cand[i], at = an->pes[an->pe_start[j]];
        double s = 0;
        for (int32_t k = 0; k < nm; k++)
            if (c->mnode[k] != j) s += c->mw[k] * dist_dir(c, at, c->mpe[k], c->min[k]);
        c->base[i] = s;
        int32_t pe = room_on(c, j);
        if (pe < 0) continue;
        double d = share_at(c, nm, i, j, pe, -1) - su;
        if (d < best) {
            best = d;
            best_pe = pe;
        }
    }
    int32_t seen = mark, head = 0, tail = 0, looked = 0;
    c->pstamp[u] = seen;
    c->bfs[tail++] = u;
    for (int32_t d = 0; d < c->o->depth && head < tail && looked < c->o->max_partners; d++) {
        int32_t end = tail;
        for (; head < end && looked < c->o->max_partners; head++) {
            int32_t x = c->bfs[head];
            for (int64_t k = g->xadj[x]; k < g->xadj[x + 1] && looked < c->o->max_partners; k++) {
                int32_t v = g->adjncy[k];
                if (c->pstamp[v] == seen) continue;
                c->pstamp[v] = seen;
                c->bfs[tail++] = v;
                int32_t jv = c->node[v];
                if (jv == own || c->nstamp[jv] != mark) continue;
                looked++;
                double delta = swap_delta(c, u, v, su, share_at(c, nm, c->cpos[jv], jv, c->pe_of[v], v));
                if (delta < best) {
                    best = delta;
                    best_pe = -1;
                    best_partner = v;
                }
            }
        }
    }
    if (best_partner >= 0) {
        int32_t pv = c->pe_of[best_partner], jv = c->node[best_partner];
        relocate(c, best_partner, pu, own);
        relocate(c, u, pv, jv);
        reshare(c, best_partner);
    } else if (best_pe >= 0) {
        relocate(c, u, best_pe, c->index[topomap_machine_node_of(c->m, best_pe)]);
    } else {
        return;
    }
    reshare(c, u);
    c->J += best;
    *changed = 1;
    *partner = best_partner;
}

int topomap_i_qap_search(const topomap_machine *m, const topomap_pattern *p, const topomap_ugraph *g,
                         const topomap_alloc_nodes *an, const topomap_i_qap_search_options *o, topomap_i_ticker *t,
                         int32_t *pe_of)
{
    int32_t n = p->n, A = an->nnodes, nn = topomap_machine_nnodes(m), npes = topomap_machine_npes(m);
    int64_t nnz = p->indptr[n], maxdeg = 0;
    qs c = {.m = m, .p = p, .g = g, .an = an, .o = o, .n = n, .pe_of = pe_of, .table = A <= TOPOMAP_I_PAIR_SLOTS};
    int rc = TOPOMAP_OK;
    c.t_indptr = malloc(((size_t)n + 1) * sizeof *c.t_indptr);
    c.t_indices = malloc((size_t)nnz * sizeof *c.t_indices + 1);
    c.t_bytes = malloc((size_t)nnz * sizeof *c.t_bytes + 1);
    c.share = malloc(((size_t)n + 1) * sizeof *c.share);
    c.node = malloc(((size_t)n + 1) * sizeof *c.node);
    c.index = malloc((size_t)nn * sizeof *c.index);
    c.load = calloc((size_t)npes, sizeof *c.load);
    c.nload = calloc((size_t)A, sizeof *c.nload);
    c.nstamp = calloc((size_t)A, sizeof *c.nstamp);
    c.cpos = malloc((size_t)A * sizeof *c.cpos);
    c.pstamp = calloc((size_t)n + 1, sizeof *c.pstamp);
    c.cand = malloc((size_t)A * sizeof *c.cand);
    c.base = malloc((size_t)A * sizeof *c.base);
    c.bfs = malloc(((size_t)n + 1) * sizeof *c.bfs);
    c.queue = malloc(((size_t)n + 1) * sizeof *c.queue);
    c.active = calloc((size_t)n + 1, 1);
    if (!c.t_indptr || !c.t_indices || !c.t_bytes || !c.share || !c.node || !c.index || !c.load || !c.nload ||
        !c.nstamp || !c.cpos || !c.pstamp || !c.cand || !c.base || !c.bfs || !c.queue || !c.active ||
        topomap_pattern_transpose(p, c.t_indptr, c.t_indices, c.t_bytes)) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the local search of %d processes", (int)n);
        goto cleanup;
    }
    for (int32_t u = 0; u < n; u++) {
        int64_t d = p->indptr[u + 1] - p->indptr[u] + c.t_indptr[u + 1] - c.t_indptr[u];
        maxdeg = d > maxdeg ? d : maxdeg;
    }
    c.mx = malloc((size_t)maxdeg * sizeof *c.mx + 1);
    c.mpe = malloc((size_t)maxdeg * sizeof *c.mpe + 1);
    c.mnode = malloc((size_t)maxdeg * sizeof *c.mnode + 1);
    c.mw = malloc((size_t)maxdeg * sizeof *c.mw + 1);
    c.min = malloc((size_t)maxdeg + 1);
    if (!c.mx || !c.mpe || !c.mnode || !c.mw || !c.min) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the local search of %d processes", (int)n);
        goto cleanup;
    }
    for (int32_t v = 0; v < nn; v++) c.index[v] = -1;
    for (int32_t j = 0; j < A; j++) c.index[an->node[j]] = j;
    for (int32_t u = 0; u < n; u++) {
        c.node[u] = c.index[topomap_machine_node_of(m, pe_of[u])];
        c.load[pe_of[u]]++;
        c.nload[c.node[u]]++;
    }
    for (int32_t u = 0; u < n; u++) {
        c.share[u] = share_of(&c, u);
        c.J += c.share[u];
    }
    c.J /= 2; /* every message counted at both its ends */
    c.thresh = 1e-12 * (fabs(c.J) + 1);
    for (int32_t u = 0; u < n; u++)
        for (int64_t k = g->xadj[u]; k < g->xadj[u + 1]; k++)
            if (c.node[g->adjncy[k]] != c.node[u]) {
                push(&c, u);
                break;
            }
    topomap_rng r;
    topomap_rng_seed(&r, o->seed ^ 0x5eedULL);
    topomap_rng_shuffle_i32(&r, c.queue, c.pending);
    if ((rc = by_node(&c))) goto cleanup;
    int64_t budget = (int64_t)o->sweeps * (c.pending > 0 ? c.pending : 1), steps = 0;
    int64_t window = c.pending / 8 > WINDOW_MIN ? c.pending / 8 : WINDOW_MIN;
    double window_J = c.J;
    while (c.pending > 0 && steps < budget) {
        if (steps > 0 && steps % window == 0) {
            if (window_J - c.J < MIN_GAIN * fabs(window_J)) break;
            window_J = c.J;
        }
        int32_t u = c.queue[c.head], partner = -1;
        c.head = c.head + 1 == n ? 0 : c.head + 1;
        c.pending--;
        c.active[u] = 0;
        int changed = 0;
        improve(&c, u, &changed, &partner);
        if (changed) {
            for (int64_t k = g->xadj[u]; k < g->xadj[u + 1]; k++) push(&c, g->adjncy[k]);
            if (partner >= 0)
                for (int64_t k = g->xadj[partner]; k < g->xadj[partner + 1]; k++) push(&c, g->adjncy[k]);
            push(&c, u);
        }
        if (++steps % CHECK_EVERY == 0 && (rc = topomap_i_tick(t, CHECK_EVERY, (double)steps / (double)budget)))
            goto cleanup;
    }
#ifndef NDEBUG
    check_shares(&c);
#endif
cleanup:
    topomap_i_pairs_free(&c.pairs);
    free(c.t_indptr);
    free(c.t_indices);
    free(c.t_bytes);
    free(c.share);
    free(c.node);
    free(c.index);
    free(c.load);
    free(c.nload);
    free(c.nstamp);
    free(c.cpos);
    free(c.pstamp);
    free(c.cand);
    free(c.base);
    free(c.bfs);
    free(c.queue);
    free(c.active);
    free(c.mx);
    free(c.mpe);
    free(c.mnode);
    free(c.mw);
    free(c.min);
    return rc;
}

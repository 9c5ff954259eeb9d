/* Swap/move local search on the QAP objective J = sum of bytes x distance,
   after VieM's search in the communication neighbourhood N_C^d (Schulz &
   Träff, "Better process mapping and sparse quadratic assignment", SEA
   2017; notes/anchors.md §1.4), with nodes instead of PEs as the places a
   process may go.

   A process u with a neighbour on another node tries (1) moves to a PE with
   room on a node of one of its neighbours and (2) swaps with the processes
   within `depth` hops of it in the traffic graph that sit on such a node
   (at most max_partners of them, breadth first).  The best improving change
   is applied at once (an improvement below 1e-12 J counts as none); a
   process that changes place activates its neighbours (label-propagation
   order; first the processes on a boundary, node by node, a node's in a
   seeded random order: topomap_i_sort_by_place).  Inside a node,
   processes stay on the PE they reach; the distance between PEs of a node
   is part of J.

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

   A try is judged by its change of J alone, from the evaluator's
   per-process shares of J (eval_shares.c; nodes are the places) instead of
   through its journalled try: a swap of u with v costs v's messages in
   distance lookups, and u's side is summed once per node u could go to.
   On the 100^3 stencil onto torus:40x40x40/16 (its grid, seed 0) topdown
   without its congestion search took 50 s, 39 of them in this search
   through the evaluator's tries; 33 s with shares, 21 s with shares and
   the first queue node by node; J after the search within 0.05 %.

   Complexity: O(sum over tried processes of (candidate nodes x degree +
   candidates x their degree)) distance lookups, at most the budget's
   tries; memory O(n + messages + PEs). */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/rng.h"
#include "topomap/eval.h"
#include "eval_deltas.h"
#include "map_qap_search.h"
#include "map_topdown.h"

#define CHECK_EVERY 4096
#define WINDOW_MIN 4096
#define MIN_GAIN 2e-4

typedef struct {
    const topomap_machine *m;
    const topomap_ugraph *g;
    const topomap_alloc_nodes *an;
    const topomap_i_qap_search_options *o;
    topomap_eval *e; /* distance-only, with shares */
    int32_t n;
    int32_t *node;   /* n: allocation node of each process */
    int32_t *index;  /* machine node -> allocation node, or -1 */
    int32_t *load;   /* machine PE -> processes on it */
    int64_t *nload;  /* allocation node -> processes on it */
    int32_t *nstamp; /* allocation node mark */
    int32_t *cpos;   /* allocation node -> its place in cand (valid under the mark) */
    int32_t *pstamp; /* process mark */
    int32_t *cand, *bfs, *queue;
    double *base;    /* per candidate node: u's share there, its messages to that node left out */
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

static void relocate(qs *c, int32_t u, int32_t from_pe, int32_t to_pe, int32_t to_node)
{
    c->load[from_pe]--;
    c->load[to_pe]++;
    c->nload[c->node[u]]--;
    c->nload[to_node]++;
    c->node[u] = to_node;
}

/* Apply u's best improving move or swap; *changed, *partner (-1: a move). */
static int improve(qs *c, int32_t u, int *changed, int32_t *partner)
{
    const topomap_ugraph *g = c->g;
    const topomap_alloc_nodes *an = c->an;
    topomap_eval *e = c->e;
    const int32_t *pe_of = topomap_eval_mapping(e);
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
    if (!ncand) return TOPOMAP_OK;
    topomap_i_eval_gather(e, u, c->node);
    double su = topomap_i_eval_share(e, u);
    for (int32_t i = 0; i < ncand; i++) {
        int32_t j = c->cand[i];
        c->base[i] = topomap_i_eval_base(e, j, an->pes[an->pe_start[j]]);
        int32_t pe = room_on(c, j);
        if (pe < 0) continue;
        double d = topomap_i_eval_at(e, c->base[i], j, pe, -1) - su;
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
                double new_u = topomap_i_eval_at(e, c->base[c->cpos[jv]], jv, pe_of[v], v);
                double delta = topomap_i_eval_swap_delta(e, u, v, new_u);
                if (delta < best) {
                    best = delta;
                    best_pe = -1;
                    best_partner = v;
                }
            }
        }
    }
    int rc;
    if (best_partner >= 0) {
        if ((rc = topomap_eval_swap(e, u, best_partner))) return rc;
        c->node[u] = c->node[best_partner];
        c->node[best_partner] = own;
    } else if (best_pe >= 0) {
        int32_t from = pe_of[u];
        if ((rc = topomap_eval_move(e, u, best_pe))) return rc;
        relocate(c, u, from, best_pe, c->index[topomap_machine_node_of(c->m, best_pe)]);
    } else {
        return TOPOMAP_OK;
    }
    c->J += best;
    *changed = 1;
    *partner = best_partner;
    return TOPOMAP_OK;
}

int topomap_i_qap_search(const topomap_machine *m, const topomap_pattern *p, const topomap_ugraph *g,
                         const topomap_alloc_nodes *an, const topomap_i_qap_search_options *o, topomap_i_ticker *t,
                         int32_t *pe_of)
{
    int32_t n = p->n, A = an->nnodes, nn = topomap_machine_nnodes(m), npes = topomap_machine_npes(m);
    qs c = {.m = m, .g = g, .an = an, .o = o, .n = n};
    int rc = topomap_eval_create_flags(m, p, pe_of, NULL, TOPOMAP_EVAL_DISTANCE_ONLY, &c.e);
    if (!rc) rc = topomap_i_eval_shares(c.e);
    if (rc) goto cleanup;
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
    if (!c.node || !c.index || !c.load || !c.nload || !c.nstamp || !c.cpos || !c.pstamp || !c.cand || !c.base ||
        !c.bfs || !c.queue || !c.active) {
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
    topomap_metrics mt;
    topomap_eval_metrics(c.e, &mt);
    c.J = mt.qap;
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
    if ((rc = topomap_i_sort_by_place(c.queue, c.pending, c.node, A))) goto cleanup;
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
        if ((rc = improve(&c, u, &changed, &partner))) goto cleanup;
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
    topomap_i_eval_shares_check(c.e);
#endif
    memcpy(pe_of, topomap_eval_mapping(c.e), (size_t)n * sizeof *pe_of);
cleanup:
    topomap_eval_destroy(c.e);
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
    return rc;
}

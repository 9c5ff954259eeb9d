/* Bounded local search on maximum link congestion, for any machine: Kumar's
   LocalOpt (Kumar 2012, ch. 7, §7.2; notes 001 §4.8; map_maxcontention.c)
   with the candidate lists bounded so that it scales to 10^6 processes,
   run on processes after a mapper has optimised hop-bytes or J.

   - Hot processes: those with a message over a link of the maximum
     congestion (load / capacity); only moving one of them can lower it.
     A sweep tries each of them, in a seeded random order.
   - Partners of a hot process a: the processes within two hops of a in the
     traffic graph (its partners' partners) and those on its partners'
     nodes, which is where a can go without lengthening its messages much,
     on another node than a; at most max_partners of them (a seeded sample
     of the first 4 x max_partners met); and a move to a PE with room on a
     partner's node.  (On the 72x36x36 stencil onto torus:18x18x18/16 the
     processes on the partners' nodes take the maximum from 0.257 to 0.230
     x block's; traffic hops alone stop at 0.257.)
   - Acceptance (topomap_i_congestion_better, judged from the links a
     change touches: map_congestion_judge.c), first improvement, as
     LocalOpt: a lower maximum, or the same maximum and a lower sum of
     squared congestions.  The maximum never increases; hop-bytes may rise
     slightly (measured +0.1 % on stencils).
   - Stop, as LocalOpt: a hot sweep that changes nothing is followed by one
     warm sweep over the processes on links loaded to >= 90 % of the
     maximum; if that changes nothing either, the search ends; at most
     `sweeps` sweeps in all.  Bounds LocalOpt lacks: a sweep tries at most
     HOT_CAP hot processes (a seeded sample), and the search ends after
     STALE sweeps in a row that leave the maximum where it was.  When
     thousands of links share the maximum (a geometric embedding: every
     boundary link), lowering the sum of squares alone cost 20 s at 10^5
     processes for no change of the maximum.  And a sweep ends once its
     tries have scanned 16 x the traffic graph's edge ends (at least 2^20;
     TOPOMAP_I_CONGESTION_SWEEP_WORK): under dense traffic nearly every
     process is hot and each try scans hundreds of messages, 100x the graph
     per sweep.  Measured with topdown's defaults (40 sweeps), random
     traffic of density d (bytes 1, 4 or 9) onto full 16-PE-node
     allocations, before -> after: 512 processes, d = 0.3, torus:4x4x2/16,
     42.6 -> 15.7 s, the search's share 31 -> 5.9 s, max congestion 7,919
     -> 7,997 (8,343 without the search); 1,024, d = 0.3, torus:4x4x4/16,
     357 -> 55 s; 2,048, d = 0.01, torus:4x4x8/16, 59 -> 14-17 s; 512,
     d = 0.1, fattree:k=8,levels=2/16, 4.2-8.8 -> 1.5-2.4 s; over 11
     runs of such cases (seeds 0-2) the maximum came out -0.2 to +4 %
     (median +1.5 %) for 1.4-6.5x less time.  On stencils a sweep scans at
     most 3.8x its graph (36x18x18 and 72x36x36 onto their tori without
     their grid, seed 0): no change there.

   Complexity per sweep: O(messages x route length) to find the hot
   processes, then O(min(hot x max_partners x degree, 16 x edges + 2^20))
   for the tries (x route length); memory O(n + PEs + links + route). */
#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/rng.h"
#include "map_congestion_search.h"

#define HOT_CAP 2048
#define STALE 3

typedef struct {
    const topomap_machine *m;
    const topomap_pattern *p;
    const topomap_ugraph *g;
    const topomap_alloc_nodes *an;
    int32_t max_partners;
    topomap_i_congestion_judge j; /* the evaluator and the acceptance rule */
    topomap_rng rng;
    int32_t *route;
    int32_t *hot;   /* n */
    int32_t *cand;  /* 4 x max_partners */
    int32_t *pstamp; /* n: process mark */
    int32_t *index; /* machine node -> allocation node, or -1 */
    int32_t *load;  /* machine PE -> processes on it */
    int64_t *off;   /* allocation node j's processes are list[off[j] .. off[j] + cnt[j]) */
    int32_t *cnt, *list, *pos; /* pos[u]: u's index in its node's list */
    uint8_t *mark;  /* n */
    int32_t stamp;
} cs;

static int32_t node_of_proc(const cs *c, int32_t u)
{
    return topomap_machine_node_of(c->m, topomap_eval_mapping(c->j.e)[u]);
}

/* The processes with a message over a link of congestion >= thresh. */
static int32_t hot_processes(cs *c, double thresh)
{
    const topomap_pattern *p = c->p;
    const double *load = topomap_eval_link_loads(c->j.e);
    memset(c->mark, 0, (size_t)p->n);
    for (int32_t u = 0; u < p->n; u++) {
        int32_t nu = node_of_proc(c, u);
        for (int64_t k = p->indptr[u]; k < p->indptr[u + 1]; k++) {
            int32_t v = p->indices[k], nv = node_of_proc(c, v);
            if (nu == nv || (c->mark[u] && c->mark[v])) continue;
            int32_t h = topomap_machine_route(c->m, nu, nv, c->route);
            for (int32_t r = 0; r < h; r++)
                if (load[c->route[r]] / topomap_machine_link_capacity(c->m, c->route[r]) >= thresh) {
                    c->mark[u] = c->mark[v] = 1;
                    break;
                }
        }
    }
    int32_t nh = 0;
    for (int32_t u = 0; u < p->n; u++)
        if (c->mark[u]) c->hot[nh++] = u;
    topomap_rng_shuffle_i32(&c->rng, c->hot, nh);
    return nh;
}

static int32_t fresh(cs *c)
{
    if (c->stamp == INT32_MAX) {
        memset(c->pstamp, 0, (size_t)c->p->n * sizeof *c->pstamp);
        c->stamp = 0;
    }
    return ++c->stamp;
}

/* Swap partners of a (see the header comment), into c->cand. */
static int32_t partners(cs *c, int32_t a)
{
    const topomap_ugraph *g = c->g;
    int32_t limit = 4 * c->max_partners, nc = 0, s = fresh(c), na = node_of_proc(c, a);
    c->pstamp[a] = s;
    for (int64_t k = g->xadj[a]; k < g->xadj[a + 1] && nc < limit; k++) {
        int32_t v = g->adjncy[k];
        if (c->pstamp[v] != s) {
            c->pstamp[v] = s;
            if (node_of_proc(c, v) != na) c->cand[nc++] = v;
        }
        for (int64_t l = g->xadj[v]; l < g->xadj[v + 1] && nc < limit; l++) {
            int32_t w = g->adjncy[l];
            if (c->pstamp[w] == s) continue;
            c->pstamp[w] = s;
            if (node_of_proc(c, w) != na) c->cand[nc++] = w;
        }
    }
    for (int64_t k = g->xadj[a]; k < g->xadj[a + 1] && nc < limit; k++) {
        int32_t j = c->index[node_of_proc(c, g->adjncy[k])];
        for (int32_t i = 0; i < c->cnt[j] && nc < limit; i++) {
            int32_t w = c->list[c->off[j] + i];
            if (c->pstamp[w] == s) continue;
            c->pstamp[w] = s;
            if (node_of_proc(c, w) != na) c->cand[nc++] = w;
        }
    }
    if (nc <= c->max_partners) return nc;
    for (int32_t i = 0; i < c->max_partners; i++) {
        int32_t j = i + (int32_t)topomap_rng_below(&c->rng, (uint64_t)(nc - i)), t = c->cand[i];
        c->cand[i] = c->cand[j];
        c->cand[j] = t;
    }
    return c->max_partners;
}

/* A PE with room on the allocation node of machine node v, or -1. */
static int32_t alloc_node(const cs *c, int32_t u) { return c->index[node_of_proc(c, u)]; }

/* Keep the node lists in step with a swap of a and b (called after it: a now
   sits on b's old node and takes b's slot there, and the other way round),
   or a move of a from node ja to node jb. */
static void swapped(cs *c, int32_t a, int32_t b)
{
    int32_t ja = alloc_node(c, a), jb = alloc_node(c, b), t = c->pos[a];
    c->list[c->off[ja] + c->pos[b]] = a;
    c->list[c->off[jb] + t] = b;
    c->pos[a] = c->pos[b];
    c->pos[b] = t;
}

static void moved_to(cs *c, int32_t a, int32_t ja, int32_t jb)
{
    int32_t last = c->list[c->off[ja] + --c->cnt[ja]];
    c->list[c->off[ja] + c->pos[a]] = last;
    c->pos[last] = c->pos[a];
    c->pos[a] = c->cnt[jb];
    c->list[c->off[jb] + c->cnt[jb]++] = a;
}

static int32_t room_near(const cs *c, int32_t v)
{
    const topomap_alloc_nodes *an = c->an;
    int32_t j = c->index[v];
    for (int32_t i = j < 0 ? 0 : an->pe_start[j]; j >= 0 && i < an->pe_start[j + 1]; i++)
        if (c->load[an->pes[i]] < an->capacity) return an->pes[i];
    return -1;
}

/* Try hot process a against its partners and its neighbours' free PEs;
   1 when something was applied. */
static int search(cs *c, int32_t a, int64_t *work, int *rc)
{
    int moved = 0;
    int32_t nc = partners(c, a);
    for (int32_t i = 0; i < nc && !*rc; i++) {
        int32_t b = c->cand[i];
        if (node_of_proc(c, b) == node_of_proc(c, a)) continue;
        *work += 1 + (c->g->xadj[a + 1] - c->g->xadj[a]) + (c->g->xadj[b + 1] - c->g->xadj[b]);
        const int32_t *pe = topomap_eval_mapping(c->j.e);
        if (!topomap_i_judge_better(&c->j, a, pe[b], b, pe[a], rc)) continue;
        if ((*rc = topomap_eval_swap(c->j.e, a, b))) break;
        swapped(c, a, b);
        topomap_i_judge_accepted(&c->j);
        moved = 1;
    }
    for (int64_t k = c->g->xadj[a]; k < c->g->xadj[a + 1] && !*rc; k++) {
        int32_t v = node_of_proc(c, c->g->adjncy[k]), pe = room_near(c, v), from = topomap_eval_mapping(c->j.e)[a],
                ja = alloc_node(c, a);
        if (pe < 0 || v == node_of_proc(c, a)) continue;
        *work += 1 + (c->g->xadj[a + 1] - c->g->xadj[a]);
        if (!topomap_i_judge_better(&c->j, a, pe, -1, -1, rc)) continue;
        if ((*rc = topomap_eval_move(c->j.e, a, pe))) break;
        moved_to(c, a, ja, c->index[v]);
        c->load[from]--;
        c->load[pe]++;
        topomap_i_judge_accepted(&c->j);
        moved = 1;
    }
    return moved;
}

int topomap_i_congestion_search(const topomap_machine *m, const topomap_pattern *p, const topomap_ugraph *g,
                                const topomap_alloc_nodes *an, const topomap_i_congestion_search_options *o,
                                topomap_i_ticker *t, int32_t *pe_of)
{
    if (o->sweeps < 1 || topomap_machine_nlinks(m) == 0 || p->n < 2) return TOPOMAP_OK;
    int32_t n = p->n, N = topomap_machine_nnodes(m), npes = topomap_machine_npes(m);
    cs c = {.m = m, .p = p, .g = g, .an = an, .max_partners = o->max_partners};
    topomap_rng_seed(&c.rng, o->seed);
    c.route = malloc(((size_t)topomap_machine_max_route(m) + 1) * sizeof *c.route);
    c.hot = malloc((size_t)n * sizeof *c.hot);
    c.cand = malloc(4 * (size_t)o->max_partners * sizeof *c.cand);
    c.pstamp = calloc((size_t)n, sizeof *c.pstamp);
    c.index = malloc((size_t)N * sizeof *c.index);
    c.load = calloc((size_t)npes, sizeof *c.load);
    c.mark = malloc((size_t)n);
    c.off = malloc(((size_t)an->nnodes + 1) * sizeof *c.off);
    c.cnt = calloc((size_t)an->nnodes, sizeof *c.cnt);
    c.pos = malloc((size_t)n * sizeof *c.pos);
    int rc = TOPOMAP_OK;
    if (c.off) {
        c.off[0] = 0;
        for (int32_t j = 0; j < an->nnodes; j++) c.off[j + 1] = c.off[j] + (an->slots[j] < n ? an->slots[j] : n);
        c.list = malloc((size_t)c.off[an->nnodes] * sizeof *c.list + 1);
    }
    if (!c.route || !c.hot || !c.cand || !c.pstamp || !c.index || !c.load || !c.mark || !c.off || !c.cnt || !c.pos ||
        !c.list) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the congestion search of %d processes", (int)n);
        goto cleanup;
    }
    for (int32_t v = 0; v < N; v++) c.index[v] = -1;
    for (int32_t j = 0; j < an->nnodes; j++) c.index[an->node[j]] = j;
    for (int32_t u = 0; u < n; u++) {
        int32_t j = c.index[topomap_machine_node_of(m, pe_of[u])];
        c.load[pe_of[u]]++;
        c.pos[u] = c.cnt[j];
        c.list[c.off[j] + c.cnt[j]++] = u;
    }
    if ((rc = topomap_i_judge_init(&c.j, m, p, pe_of))) goto cleanup;
    int warm = 0, stale = 0;
    int64_t work = 0, sweep_work = TOPOMAP_I_CONGESTION_SWEEP_WORK * g->xadj[n];
    sweep_work = sweep_work > TOPOMAP_I_CONGESTION_SWEEP_WORK_MIN ? sweep_work : TOPOMAP_I_CONGESTION_SWEEP_WORK_MIN;
    for (int32_t pass = 0; pass < o->sweeps && c.j.cur.max_congestion > 0 && stale < STALE && !rc; pass++) {
        int32_t nh = hot_processes(&c, (warm ? TOPOMAP_I_CONGESTION_WARM : 1.0) * c.j.cur.max_congestion);
        double before = c.j.cur.max_congestion;
        int improved = 0;
        nh = nh < HOT_CAP ? nh : HOT_CAP;
        int64_t spent = 0;
        for (int32_t i = 0; i < nh && spent < sweep_work && !rc; i++) {
            improved |= search(&c, c.hot[i], &work, &rc);
            spent += work;
            if (!rc) rc = topomap_i_tick(t, work, (pass + (double)i / nh) / o->sweeps);
            work = 0;
        }
        if (!improved && warm) break;
        warm = !improved;
        stale = c.j.cur.max_congestion < before ? 0 : stale + 1;
    }
#ifndef NDEBUG /* the sanitizer build checks that the node lists followed every swap and move */
    for (int32_t u = 0; u < n && !rc; u++) {
        int32_t j = alloc_node(&c, u);
        assert(c.pos[u] < c.cnt[j] && c.list[c.off[j] + c.pos[u]] == u);
    }
#endif
    if (!rc) memcpy(pe_of, topomap_eval_mapping(c.j.e), (size_t)n * sizeof *pe_of);
cleanup:
    topomap_i_judge_free(&c.j);
    free(c.route);
    free(c.hot);
    free(c.cand);
    free(c.pstamp);
    free(c.index);
    free(c.load);
    free(c.mark);
    free(c.off);
    free(c.cnt);
    free(c.list);
    free(c.pos);
    return rc;
}

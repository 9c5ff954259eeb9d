/* Internal: the routes, distances and levels between the nodes an
   evaluator meets, kept once computed (eval.c).  Dense traffic on a small
   allocation routes the same few node pairs over and over: 512 processes at
   30 % density on 32 torus nodes re-route ~300 messages per try over only
   1,024 node pairs, and computing routes and distances (coordinate
   arithmetic on a torus, a walk up and down a fat tree) took two thirds of
   topdown's time there (22.1 s; 8.7 s with the table, 5.9 s with the link
   deltas summed per pair as well, the same mapping).
   The first TOPOMAP_I_PAIR_SLOTS distinct nodes get a slot; a pair with a
   node beyond them is computed each time, as without the table.  Memory:
   24 bytes per slot pair (1.5 MB at most) plus the routes seen.  A table
   belongs to one evaluator, so one thread: no locking. */
#ifndef TOPOMAP_EVAL_PAIRS_H
#define TOPOMAP_EVAL_PAIRS_H
#include <stdint.h>
#include "topomap/machine.h"

#define TOPOMAP_I_PAIR_SLOTS 256

typedef struct {
    int64_t start; /* first link in the table's links; -1: nothing known, -2: the distance only */
    int32_t hops;  /* route length (a pair without a route is never kept) */
    int32_t level;
    double dist;
} topomap_i_pair;

typedef struct {
    int32_t *slot;   /* machine node -> slot, or -1; NULL until the first lookup */
    int32_t nslots, cap; /* slots handed out; slots `pair` holds (cap x cap) */
    topomap_i_pair *pair;
    int32_t *links;
    int64_t used, links_cap;
    int full;        /* no slot for further nodes (all handed out, or no memory to grow) */
    int off;         /* no memory for the slot array: every pair is computed */
} topomap_i_pairs;

void topomap_i_pairs_free(topomap_i_pairs *t);

/* The slow paths of the two lookups below: compute the pair, and keep it
   if it has a place. */
int32_t topomap_i_pairs_fill_route(topomap_i_pairs *t, const topomap_machine *m, int32_t a, int32_t b, int32_t *buf,
                                   const int32_t **route, double *dist, int32_t *level);
double topomap_i_pairs_fill_distance(topomap_i_pairs *t, const topomap_machine *m, int32_t a, int32_t b);

/* The index of the pair of nodes na -> nb if both have slots, else -1. */
static inline int64_t topomap_i_pairs_index(const topomap_i_pairs *t, int32_t na, int32_t nb)
{
    if (!t->slot) return -1;
    int32_t sa = t->slot[na], sb = t->slot[nb];
    return (sa | sb) < 0 ? -1 : (int64_t)sa * t->cap + sb;
}

/* topomap_machine_pair(m, a, b, ...) for PEs a, b on the different nodes
   na, nb: the route's hop count (-1: none), its links in *route (valid
   until the next call; `buf` of max_route + 1 entries serves pairs outside
   the table), the distance and the level.  Identical values, computed once
   per pair. */
static inline int32_t topomap_i_pairs_route(topomap_i_pairs *t, const topomap_machine *m, int32_t a, int32_t b,
                                            int32_t na, int32_t nb, int32_t *buf, const int32_t **route,
                                            double *dist, int32_t *level)
{
    int64_t k = topomap_i_pairs_index(t, na, nb);
    if (k < 0 && (t->full || t->off)) { /* a pair that will never have a place */
        *route = buf;
        return topomap_machine_pair(m, a, b, buf, dist, level);
    }
    if (k < 0 || t->pair[k].start < 0) return topomap_i_pairs_fill_route(t, m, a, b, buf, route, dist, level);
    const topomap_i_pair *q = &t->pair[k];
    *route = t->links + q->start;
    *dist = q->dist;
    *level = q->level;
    return q->hops;
}

/* topomap_machine_distance(m, a, b) for PEs a, b on the different nodes na, nb. */
static inline double topomap_i_pairs_distance(topomap_i_pairs *t, const topomap_machine *m, int32_t a, int32_t b,
                                              int32_t na, int32_t nb)
{
    int64_t k = topomap_i_pairs_index(t, na, nb);
    if (k >= 0 && t->pair[k].start != -1) return t->pair[k].dist;
    return k < 0 && (t->full || t->off) ? topomap_machine_distance(m, a, b) : topomap_i_pairs_fill_distance(t, m, a, b);
}

#endif

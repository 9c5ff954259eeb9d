/* The evaluator's table of node pairs (eval_pairs.h). */
#include <stdlib.h>
#include <string.h>
#include "eval_pairs.h"

#define FIRST_CAP 16

void topomap_i_pairs_free(topomap_i_pairs *t)
{
    free(t->slot);
    free(t->pair);
    free(t->links);
    memset(t, 0, sizeof *t);
}

/* Room for `cap` x `cap` slot pairs, the known pairs carried over. */
static int grow(topomap_i_pairs *t, int32_t cap)
{
    size_t n = (size_t)cap * cap;
    topomap_i_pair *pair = malloc(n * sizeof *pair);
    if (!pair) return -1;
    for (size_t i = 0; i < n; i++) pair[i].start = -1;
    for (int32_t i = 0; i < t->cap; i++)
        memcpy(pair + (size_t)i * cap, t->pair + (size_t)i * t->cap, (size_t)t->cap * sizeof *pair);
    free(t->pair);
    t->pair = pair;
    t->cap = cap;
    return 0;
}

/* The slot of machine node v, or -1 (no room, or the table is off). */
static int32_t slot_of(topomap_i_pairs *t, const topomap_machine *m, int32_t v)
{
    if (t->off) return -1;
    if (!t->slot) {
        int32_t nn = topomap_machine_nnodes(m);
        if (!(t->slot = malloc((size_t)nn * sizeof *t->slot))) {
            t->off = 1;
            return -1;
        }
        for (int32_t i = 0; i < nn; i++) t->slot[i] = -1;
    }
    if (t->slot[v] >= 0 || t->full) return t->slot[v];
    /* without memory to grow, the pairs known stay and no node gets a slot any more */
    if (t->nslots == t->cap && (t->cap == TOPOMAP_I_PAIR_SLOTS || grow(t, t->cap ? 2 * t->cap : FIRST_CAP))) {
        t->full = 1;
        return -1;
    }
    return t->slot[v] = t->nslots++;
}

/* The index of the pair of a's and b's nodes, or -1 if it has no place. */
static int64_t pair_of(topomap_i_pairs *t, const topomap_machine *m, int32_t a, int32_t b)
{
    int32_t sa = slot_of(t, m, topomap_machine_node_of(m, a));
    int32_t sb = sa < 0 ? -1 : slot_of(t, m, topomap_machine_node_of(m, b));
    return sb < 0 ? -1 : (int64_t)sa * t->cap + sb;
}

int32_t topomap_i_pairs_fill_route(topomap_i_pairs *t, const topomap_machine *m, int32_t a, int32_t b, int32_t *buf,
                                   const int32_t **route, double *dist, int32_t *level)
{
    int64_t k = pair_of(t, m, a, b);
    int32_t h = topomap_machine_pair(m, a, b, buf, dist, level);
    *route = buf;
    if (k < 0 || h < 0) return h;
    if (t->used + h > t->links_cap) {
        int64_t cap = 2 * (t->used + h) + 64;
        int32_t *links = realloc(t->links, (size_t)cap * sizeof *links);
        if (!links) return h; /* not kept: computed again next time */
        t->links = links;
        t->links_cap = cap;
    }
    memcpy(t->links + t->used, buf, (size_t)h * sizeof *buf);
    t->pair[k] = (topomap_i_pair){t->used, h, *level, *dist};
    t->used += h;
    return h;
}

double topomap_i_pairs_fill_distance(topomap_i_pairs *t, const topomap_machine *m, int32_t a, int32_t b)
{
    int64_t k = pair_of(t, m, a, b);
    double d = topomap_machine_distance(m, a, b);
    if (k >= 0) {
        t->pair[k].start = -2; /* the distance is known, the route is not */
        t->pair[k].dist = d;
    }
    return d;
}

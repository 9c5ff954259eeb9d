/* Alg. 4.1 of Mirsadeghi's thesis (notes 000 §3.2): place ranks in a
   heuristic's order (coll_order.c), each on the free core closest to its
   reference's core, ties broken uniformly at random.

   Why it is fast (the thesis: ~25 ms at 4096 ranks with a dense D): the
   distance between cores on different nodes is the distance between the
   nodes, so a step scans the free cores of the reference's node and one
   entry per other node that still has a free core (all of its free cores
   tie), weighting a node by its free cores in the random tie-break, and
   skips the nodes when a core of its own node is closer than any other
   node.  Node
   distances come from a lazily filled K x K table over the K nodes of the
   allocation (K <= 2048), else a row recomputed when the reference's node
   changes. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/collectives.h"
#include "topomap/error.h"
#include "topomap/rng.h"

#define ROW_TABLE_MAX 2048 /* a table of at most 32 MB */

typedef struct {
    const topomap_machine *m;
    const int32_t *pes;
    int32_t k;              /* nodes of the allocation */
    int32_t *node_of_rank;  /* compact node of each old rank */
    int32_t *node_id;       /* machine node of each compact node */
    int64_t *seg;           /* k + 1: each node's old ranks, free ones first */
    int32_t *slot, *members, *nfree;
    int32_t *free_nodes, *free_pos, nfree_nodes;
    double *table;          /* k x k (row c valid once row_done[c]) or one row */
    double *row_min;        /* k: least distance from a node to any other (valid with its row) */
    double *dist;           /* the distances to the free cores of one node */
    char *row_done;
    int32_t row_of;         /* the node of the single row */
} placer;

static void free_placer(placer *pl)
{
    free(pl->node_of_rank);
    free(pl->node_id);
    free(pl->seg);
    free(pl->slot);
    free(pl->members);
    free(pl->nfree);
    free(pl->free_nodes);
    free(pl->free_pos);
    free(pl->table);
    free(pl->row_min);
    free(pl->dist);
    free(pl->row_done);
}

static int setup(placer *pl, const topomap_machine *m, const int32_t *pes, int32_t p)
{
    memset(pl, 0, sizeof *pl);
    pl->m = m;
    pl->pes = pes;
    int32_t nn = topomap_machine_nnodes(m), npes = topomap_machine_npes(m);
    int32_t *compact = malloc((size_t)nn * sizeof *compact);
    char *seen = calloc((size_t)npes, 1);
    pl->node_of_rank = malloc((size_t)p * sizeof *pl->node_of_rank);
    pl->node_id = malloc((size_t)p * sizeof *pl->node_id);
    pl->slot = malloc((size_t)p * sizeof *pl->slot);
    pl->members = malloc((size_t)p * sizeof *pl->members);
    if (!compact || !seen || !pl->node_of_rank || !pl->node_id || !pl->slot || !pl->members) {
        free(compact);
        free(seen);
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %d ranks", (int)p);
    }
    for (int32_t i = 0; i < nn; i++) compact[i] = -1;
    int rc = 0;
    for (int32_t i = 0; i < p && !rc; i++) {
        if (pes[i] < 0 || pes[i] >= npes || seen[pes[i]]) {
            rc = topomap_i_fail(TOPOMAP_EINVAL, "core %d of old rank %d is %s", (int)pes[i], (int)i,
                                pes[i] < 0 || pes[i] >= npes ? "not a PE of the machine" : "given twice");
            break;
        }
        seen[pes[i]] = 1;
        int32_t nd = topomap_machine_node_of(m, pes[i]);
        if (compact[nd] < 0) {
            compact[nd] = pl->k;
            pl->node_id[pl->k++] = nd;
        }
        pl->node_of_rank[i] = compact[nd];
    }
    free(compact);
    free(seen);
    if (rc) return rc;
    int32_t k = pl->k;
    pl->seg = calloc((size_t)k + 1, sizeof *pl->seg);
    pl->nfree = calloc((size_t)k, sizeof *pl->nfree);
    pl->free_nodes = malloc((size_t)k * sizeof *pl->free_nodes);
    pl->free_pos = malloc((size_t)k * sizeof *pl->free_pos);
    int64_t cells = k <= ROW_TABLE_MAX ? (int64_t)k * k : k;
    pl->table = malloc((size_t)cells * sizeof *pl->table);
    pl->row_done = calloc((size_t)k, 1);
    pl->row_min = malloc((size_t)k * sizeof *pl->row_min);
    pl->dist = malloc((size_t)p * sizeof *pl->dist);
    if (!pl->seg || !pl->nfree || !pl->free_nodes || !pl->free_pos || !pl->table || !pl->row_done || !pl->row_min ||
        !pl->dist)
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %d nodes", (int)k);
    for (int32_t i = 0; i < p; i++) pl->seg[pl->node_of_rank[i] + 1]++;
    for (int32_t c = 0; c < k; c++) {
        pl->nfree[c] = (int32_t)pl->seg[c + 1];
        pl->seg[c + 1] += pl->seg[c];
        pl->free_nodes[c] = c;
        pl->free_pos[c] = c;
    }
    pl->nfree_nodes = k;
    for (int32_t i = 0; i < p; i++) {
        int32_t c = pl->node_of_rank[i];
        int64_t at = pl->seg[c] + (pl->nfree[c] - 1);
        /* fill each segment from its end so that old ranks keep their order */
        pl->members[at] = i;
        pl->slot[i] = (int32_t)at;
        pl->nfree[c]--;
    }
    for (int32_t c = 0; c < k; c++) pl->nfree[c] = (int32_t)(pl->seg[c + 1] - pl->seg[c]);
    pl->row_of = -1;
    return 0;
}

/* Take old rank q off its node's free cores. */
static void take(placer *pl, int32_t q)
{
    int32_t c = pl->node_of_rank[q];
    int64_t last = pl->seg[c] + --pl->nfree[c];
    int32_t other = pl->members[last], at = pl->slot[q];
    pl->members[at] = other;
    pl->slot[other] = at;
    pl->members[last] = q;
    pl->slot[q] = (int32_t)last;
    if (pl->nfree[c] == 0) { /* the node is full: off the list of nodes with free cores */
        int32_t pos = pl->free_pos[c], moved = pl->free_nodes[--pl->nfree_nodes];
        pl->free_nodes[pos] = moved;
        pl->free_pos[moved] = pos;
    }
}

static const double *row(placer *pl, int32_t c)
{
    double *r = pl->k > ROW_TABLE_MAX ? pl->table : pl->table + (int64_t)c * pl->k;
    int fresh = pl->k > ROW_TABLE_MAX ? pl->row_of != c : !pl->row_done[c];
    if (fresh) {
        int32_t pa = pl->node_id[c] * topomap_machine_pes_per_node(pl->m);
        double least = INFINITY;
        for (int32_t u = 0; u < pl->k; u++) {
            r[u] = u == c ? 0.0 : topomap_machine_distance(pl->m, pa, pl->node_id[u] * topomap_machine_pes_per_node(pl->m));
            if (u != c && r[u] < least) least = r[u];
        }
        pl->row_min[c] = least;
        pl->row_done[c] = 1;
        pl->row_of = c;
    }
    return r;
}

int topomap_coll_reorder(const topomap_machine *m, const int32_t *pes, int32_t p, int32_t heuristic, uint64_t seed,
                         int32_t *old_of_new)
{
    if (p < 1) return topomap_i_fail(TOPOMAP_EINVAL, "p = %d: reordering needs at least one rank", (int)p);
    int32_t *order = malloc(2 * (size_t)p * sizeof *order);
    if (!order) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %d ranks", (int)p);
    int32_t *ref = order + p;
    placer pl;
    int rc = topomap_coll_order(heuristic, p, order, ref);
    if (!rc) rc = setup(&pl, m, pes, p);
    else memset(&pl, 0, sizeof pl);
    topomap_rng rng;
    topomap_rng_seed(&rng, seed);
    if (!rc) {
        old_of_new[0] = 0;
        take(&pl, 0);
    }
    for (int32_t t = 1; !rc && t < p; t++) {
        int32_t host = old_of_new[ref[t]], c = pl.node_of_rank[host];
        int64_t s0 = pl.seg[c], s1 = s0 + pl.nfree[c], weight = 0;
        double best = INFINITY;
        /* pass 1: the least distance and how many free cores share it */
        for (int64_t s = s0; s < s1; s++) {
            double d = topomap_machine_distance(m, pes[host], pes[pl.members[s]]);
            pl.dist[s - s0] = d;
            if (d < best) best = d, weight = 0;
            if (d == best) weight++;
        }
        const double *r = row(&pl, c);
        int scan = !(best < pl.row_min[c]); /* another node can tie or win */
        for (int32_t j = 0; scan && j < pl.nfree_nodes; j++) {
            int32_t u = pl.free_nodes[j];
            if (u == c) continue;
            if (r[u] < best) best = r[u], weight = 0;
            if (r[u] == best) weight += pl.nfree[u];
        }
        /* pass 2: the x-th of them */
        int64_t x = (int64_t)topomap_rng_below(&rng, (uint64_t)weight);
        int32_t choice = -1;
        for (int64_t s = s0; s < s1 && choice < 0; s++)
            if (pl.dist[s - s0] == best && x-- == 0) choice = pl.members[s];
        for (int32_t j = 0; scan && choice < 0; j++) {
            int32_t u = pl.free_nodes[j];
            if (u == c || r[u] != best) continue;
            if (x < pl.nfree[u]) choice = pl.members[pl.seg[u] + x];
            x -= pl.nfree[u];
        }
        old_of_new[order[t]] = choice;
        take(&pl, choice);
    }
    free_placer(&pl);
    free(order);
    return rc;
}

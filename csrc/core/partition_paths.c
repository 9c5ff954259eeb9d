/* Balancing along paths of adjacent parts, for vertices of equal weight.

   topomap_i_balance moves a vertex out of an overweight part into an
   adjacent part with room, or failing that into the part with the most room
   anywhere, which cuts every edge the vertex has in its part.  When the
   parts around an overweight one are full (hard capacities without slack,
   n = the sum of the capacities) that fallback is the rule: refining the
   46^3 stencil and rgg_n_2_15_s0 into full nodes of 16 under one vertex of
   slack lowered the cut by 4% and 9%, and balancing back to the capacities
   gave 3% and 7% of it back.  Here an overweight part A may instead push one
   vertex along a path A = P0 -> P1 -> ... -> Pt of adjacent parts to a part
   Pt with room: each Pi passes Pi+1 its boundary vertex of best gain towards
   Pi+1, so with equal vertex weights every part in between keeps its weight
   (balancing through the quotient graph as in Sanders & Schulz 2011,
   "Engineering multilevel graph partitioning algorithms", ESA, §4.2, there
   by flows and negative cycles, here by cheapest paths).

   Choices, as made here:
   - A round first records, for every pair of adjacent parts (A, B), the
     vertex of A whose move to B gains most (cut decrease; ties: the lower
     vertex id), O(n + m).  Each overweight part, in part order, then runs
     Dijkstra over the quotient graph with hop cost max(0, -gain), settling
     at most MAX_SETTLE parts, to the cheapest part with room; the path is
     taken only if it costs less than the cheapest vertex of A moved out
     alone (the fallback above, which is left to topomap_i_balance).  Parts
     a path touched are skipped for the rest of the round (their recorded
     moves are stale); rounds repeat while some part is over its limit and
     the last round moved something, at most MAX_ROUNDS.  Measured on
     delaunay_n15 into full nodes of 8 (2,638 parts over after the slack
     pass): 16 rounds or 256 settled parts instead of 8 and 64 changed the
     cut by under 0.2% at 1.6-2.3x the time.
   - Only for k > 2 parts of equal vertex weights (the finest level of a
     process graph): with unequal weights the parts on a path would change
     weight, and a bisection has no path longer than one move.  Whatever is
     left over is left to topomap_i_balance.
   Cost per round O(n + m) plus the searches, O(MAX_SETTLE x part degree x
   log k) each. */
#include <math.h>
#include <stdlib.h>
#include "topomap/error.h"
#include "partition_internal.h"

#define MAX_SETTLE 64
#define MAX_ROUNDS 8

static int fits(double pw, double w, double limit) { return pw + w <= limit + 1e-12 * (fabs(limit) + 1); }

/* The quotient graph of one round, part A's adjacent parts being
   to[start[A] .. start[A + 1]), each with its best mover and gain, and the
   scratch of the searches. */
typedef struct {
    int64_t *start;
    int32_t *to, *mover;
    double *gain;
    int32_t *members, *mstart; /* vertices by part */
    double *conn;              /* k, zero between uses */
    int32_t *slot;             /* k: position of B in A's list, or -1 */
    int32_t *stamp;            /* k: the search that reached a part */
    int64_t *pred;             /* k: the quotient edge it came by */
    double *dist;
    int32_t search;
    char *dirty;
    topomap_i_heap h;
} quotient;

static void quotient_free(quotient *q)
{
    free(q->start);
    free(q->to);
    free(q->mover);
    free(q->gain);
    free(q->members);
    free(q->mstart);
    free(q->conn);
    free(q->slot);
    free(q->stamp);
    free(q->pred);
    free(q->dist);
    free(q->dirty);
    topomap_i_heap_free(&q->h);
    *q = (quotient){0};
}

static int quotient_init(quotient *q, const topomap_i_pgraph *g, int32_t k)
{
    size_t m = (size_t)(g->xadj[g->n] > 0 ? g->xadj[g->n] : 1), kk = (size_t)k;
    *q = (quotient){0};
    q->start = malloc((kk + 1) * sizeof *q->start);
    q->to = malloc(m * sizeof *q->to);
    q->mover = malloc(m * sizeof *q->mover);
    q->gain = malloc(m * sizeof *q->gain);
    q->members = malloc((size_t)g->n * sizeof *q->members);
    q->mstart = malloc((kk + 1) * sizeof *q->mstart);
    q->conn = calloc(kk, sizeof *q->conn);
    q->slot = malloc(kk * sizeof *q->slot);
    q->stamp = calloc(kk, sizeof *q->stamp);
    q->pred = malloc(kk * sizeof *q->pred);
    q->dist = malloc(kk * sizeof *q->dist);
    q->dirty = malloc(kk);
    if (!q->start || !q->to || !q->mover || !q->gain || !q->members || !q->mstart || !q->conn || !q->slot ||
        !q->stamp || !q->pred || !q->dist || !q->dirty) {
        quotient_free(q);
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory balancing %d parts", (int)k);
    }
    for (int32_t i = 0; i < k; i++) q->slot[i] = -1;
    int rc = topomap_i_heap_init(&q->h, k);
    if (rc) quotient_free(q);
    return rc;
}

/* Every pair of adjacent parts with its best mover. */
static void quotient_build(quotient *q, const topomap_i_pgraph *g, int32_t k, const int32_t *part)
{
    for (int32_t a = 0; a <= k; a++) q->mstart[a] = 0;
    for (int32_t v = 0; v < g->n; v++) q->mstart[part[v] + 1]++;
    for (int32_t a = 0; a < k; a++) q->mstart[a + 1] += q->mstart[a];
    for (int32_t v = 0; v < g->n; v++) q->members[q->mstart[part[v]]++] = v;
    for (int32_t a = k; a > 0; a--) q->mstart[a] = q->mstart[a - 1];
    q->mstart[0] = 0;
    int64_t len = 0;
    for (int32_t a = 0; a < k; a++) {
        int64_t row = len;
        q->start[a] = row;
        for (int32_t t = q->mstart[a]; t < q->mstart[a + 1]; t++) {
            int32_t v = q->members[t];
            double own = 0;
            for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
                int32_t b = part[g->adj[e]];
                if (b == a) {
                    own += g->ew[e];
                    continue;
                }
                if (q->slot[b] < 0) {
                    q->slot[b] = (int32_t)(len - row);
                    q->to[len] = b;
                    q->mover[len++] = -1;
                }
                q->conn[b] += g->ew[e];
            }
            /* each part v touches once: its connectivity is zeroed when read */
            for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
                int32_t b = part[g->adj[e]];
                if (b == a || q->conn[b] == 0) continue;
                int64_t s = row + q->slot[b];
                double gain = q->conn[b] - own;
                if (q->mover[s] < 0 || gain > q->gain[s]) { /* members come in vertex order */
                    q->mover[s] = v;
                    q->gain[s] = gain;
                }
                q->conn[b] = 0;
            }
        }
        for (int64_t s = row; s < len; s++) q->slot[q->to[s]] = -1;
    }
    q->start[k] = len;
}

/* The cheapest vertex of part a to move out alone: its weight inside a. */
static double alone_cost(const quotient *q, const topomap_i_pgraph *g, const int32_t *part, int32_t a)
{
    double best = INFINITY;
    for (int32_t t = q->mstart[a]; t < q->mstart[a + 1]; t++) {
        int32_t v = q->members[t];
        double own = 0;
        for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++)
            if (part[g->adj[e]] == a) own += g->ew[e];
        best = fmin(best, own);
    }
    return best;
}

/* One path from overweight part a to the cheapest clean part with room,
   if cheaper than `alone`.  Returns 1 if vertices moved. */
static int push(quotient *q, const topomap_i_pgraph *g, const double *limit, int32_t *part, double *pw, int32_t a,
                double alone, int64_t *work)
{
    int32_t search = ++q->search, target = -1, settled = 0;
    topomap_i_heap *h = &q->h;
    q->stamp[a] = search;
    q->dist[a] = 0;
    topomap_i_heap_set(h, a, 0);
    while (h->size > 0 && settled++ < MAX_SETTLE) {
        int32_t x = topomap_i_heap_pop(h);
        double dx = q->dist[x];
        if (dx >= alone) break;
        if (x != a && fits(pw[x], g->max_w, limit[x])) {
            target = x;
            break;
        }
        for (int64_t s = q->start[x]; s < q->start[x + 1]; s++) {
            int32_t y = q->to[s];
            double d = dx + fmax(0, -q->gain[s]);
            if (q->dirty[y] || y == a || (q->stamp[y] == search && !(topomap_i_heap_has(h, y) && d < q->dist[y])))
                continue;
            q->stamp[y] = search;
            q->dist[y] = d;
            q->pred[y] = s;
            topomap_i_heap_set(h, y, -d);
        }
        *work += 1 + q->start[x + 1] - q->start[x];
    }
    topomap_i_heap_clear(h);
    if (target < 0) return 0;
    /* back along the path: the mover into y lies in the part before it */
    for (int32_t y = target; y != a;) {
        int32_t v = q->mover[q->pred[y]], x = part[v];
        pw[x] -= g->vw[v];
        pw[y] += g->vw[v];
        part[v] = y;
        q->dirty[y] = 1;
        y = x;
    }
    q->dirty[a] = 1;
    return 1;
}

int topomap_i_balance_paths(const topomap_i_pgraph *g, int32_t k, const double *limit, int32_t *part, double *pw,
                            topomap_i_pctx *c)
{
    if (k <= 2 || g->n == 0 || g->min_w != g->max_w || !(g->max_w > 0)) return TOPOMAP_OK;
    int32_t over = 0;
    for (int32_t i = 0; i < k; i++) over += !fits(pw[i], 0, limit[i]);
    if (!over) return TOPOMAP_OK;
    quotient q;
    int rc = quotient_init(&q, g, k);
    for (int round = 0; !rc && round < MAX_ROUNDS && over; round++) {
        quotient_build(&q, g, k, part);
        if ((rc = topomap_i_ptick(c, g->n + g->xadj[g->n]))) break;
        for (int32_t i = 0; i < k; i++) q.dirty[i] = 0;
        int moved = 0;
        int64_t work = 0;
        for (int32_t a = 0; a < k; a++) {
            if (q.dirty[a] || fits(pw[a], 0, limit[a])) continue;
            moved |= push(&q, g, limit, part, pw, a, alone_cost(&q, g, part, a), &work);
            work += q.mstart[a + 1] - q.mstart[a];
        }
        rc = topomap_i_ptick(c, work);
        over = 0;
        for (int32_t i = 0; i < k; i++) over += !fits(pw[i], 0, limit[i]);
        if (!moved) break;
    }
    quotient_free(&q);
    return rc;
}

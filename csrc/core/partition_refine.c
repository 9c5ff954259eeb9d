/* Refinement of a k-way partition: a balancing pass, then boundary FM
   (Fiduccia & Mattheyses 1982, DAC, "A linear-time heuristic for improving
   network partitions", generalised to k parts as in Karypis & Kumar 1998,
   JPDC 48(1), "Multilevel k-way partitioning scheme for irregular graphs").

   Choices the sources leave open, as made here:
   - Gains are real (edge weights are bytes): an addressable max-heap keyed
     by gain replaces FM's integer gain buckets; ties pop the smaller vertex.
   - Two parts (every bisection): the paper's balance rule, one heap per
     side; a move may take the receiving side up to one largest vertex
     weight above its bound L, the side to move from is the overloaded one
     if any, else the one with the larger best gain, and a pass keeps only
     prefixes no more overloaded than its start.  Without that slack a
     bisection with no room (an 8 x 8 x 8 grid into 256 + 256 under a tight
     bound) cannot move at all: measured, the strict rule cut it at 68-83
     instead of the optimal 64, and a 16^3 grid into 512 full parts of 8 at
     +10% instead of the optimal 2 x 2 x 2 blocks.
   - More parts: one heap over the boundary vertices, each keyed by its best
     move, the adjacent part with room (weight + vertex weight <= L) that
     gains most; ties go to the part with more room, then the lower part id.
     Non-adjacent parts are never targets (their gain is never higher).
     Letting parts overflow here as in the two-way case was tried and made
     cuts 3-8% worse on the reference graphs: the global heap then prefers
     overflowing moves that the pass must roll back.
   - A move's stale gain (room changes as others move) is recomputed when the
     vertex reaches the top; if it dropped below the next key it goes back.
   - Negative-gain moves are made (that is FM's hill climbing); a pass stops
     after max(25, min(n/100, 100)) moves without a new best cut and rolls
     back to the best prefix.  Each vertex moves at most once per pass; at
     most 10 passes, stopping at the first pass that finds nothing better.
     The cap of 100 is METIS 5's; against 1000, measured with the skipped
     second FM of partition.c: full nodes of 8 and 16 of the reference
     graphs and 22^3, 46^3, 36x18x18 stencils (seeds 0-2) cut the same
     (geo-mean -0.02 %) in 6 % less CPU, and the 10^6-process stencil into
     nodes of 16 0.24 % more in 9 % less (28.4 -> 25.8 s).  METIS's floor
     of 15 instead of 25 lost the exact embedding of the 32 x 32 stencil on
     mesh:8x8/16 for 2 of 16 seeds.
   - Balancing (not in FM): while a part is above its limit, the vertex of an
     overweight part whose best feasible move costs least moves out; a
     feasible target is an adjacent part with room or, failing that, the part
     with the most room (a min-cost choice among all parts would cost O(k) per
     vertex).  Soft bounds (partition.h) make such a target always exist;
     hard capacities with unequal vertex weights may not, which the caller
     reports. */
#include <math.h>
#include <stdlib.h>
#include "topomap/error.h"
#include "partition_internal.h"

#define FM_MAX_PASSES 10
#define STALL_MIN 25
#define STALL_MAX 100

/* Moves without a new best cut after which an FM pass stops. */
static int32_t stall_limit_of(int32_t n) { return n / 100 < STALL_MIN ? STALL_MIN : n / 100 > STALL_MAX ? STALL_MAX : n / 100; }

/* Weight comparisons tolerate round-off in sums of non-integral weights. */
static int fits(double pw, double w, double limit) { return pw + w <= limit + 1e-12 * (fabs(limit) + 1); }

void topomap_i_part_weights(const topomap_i_pgraph *g, int32_t k, const int32_t *part, double *pw)
{
    for (int32_t i = 0; i < k; i++) pw[i] = 0;
    for (int32_t v = 0; v < g->n; v++) pw[part[v]] += g->vw[v];
}

double topomap_i_cut(const topomap_i_pgraph *g, const int32_t *part)
{
    double cut = 0;
    for (int32_t v = 0; v < g->n; v++)
        for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++)
            if (g->adj[e] > v && part[g->adj[e]] != part[v]) cut += g->ew[e];
    return cut;
}

void topomap_i_limits(const topomap_i_pgraph *g, int32_t k, const double *tgt, const double *cap,
                      double eps, double *limit)
{
    double w = g->max_w;
    int equal = g->min_w == g->max_w;
    for (int32_t i = 0; i < k; i++) {
        if (cap) {
            limit[i] = cap[i];
            continue;
        }
        /* the 1e-9 keeps a target like 8.000000001 (round-off) from needing 9 */
        double reach = equal ? (w > 0 ? w * ceil(tgt[i] / w - 1e-9) : 0) : tgt[i] + w;
        limit[i] = fmax((1 + eps) * tgt[i], reach);
    }
}

/* Scratch of one refinement call: connectivity of a vertex to each part. */
typedef struct {
    double *conn;   /* k, zero between uses */
    int32_t *parts; /* k: parts touched by the current vertex */
    int32_t nparts;
    double own;     /* connectivity to the vertex's own part */
} scan;

static int scan_init(scan *s, int32_t k)
{
    s->conn = calloc((size_t)k, sizeof *s->conn);
    s->parts = malloc((size_t)k * sizeof *s->parts);
    s->nparts = 0;
    if (!s->conn || !s->parts) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %d parts", (int)k);
    return TOPOMAP_OK;
}

static void scan_free(scan *s)
{
    free(s->conn);
    free(s->parts);
}

/* Connectivity of v to its own part and to every other part it touches;
   leaves s->conn filled (call scan_reset after). */
static void scan_vertex(scan *s, const topomap_i_pgraph *g, const int32_t *part, int32_t v)
{
    int32_t a = part[v];
    s->own = 0;
    s->nparts = 0;
    for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
        int32_t p = part[g->adj[e]];
        if (p == a) {
            s->own += g->ew[e];
            continue;
        }
        if (s->conn[p] == 0) s->parts[s->nparts++] = p;
        s->conn[p] += g->ew[e];
    }
}

static void scan_reset(scan *s)
{
    for (int32_t i = 0; i < s->nparts; i++) s->conn[s->parts[i]] = 0;
}

/* Best move of v to a part with room: adjacent parts, plus `fallback` (a
   part with the most room, or -1).  Returns the target or -1; *gain = cut
   decrease. */
static int32_t best_move(scan *s, const topomap_i_pgraph *g, const int32_t *part, const double *pw,
                         const double *limit, int32_t v, int32_t fallback, double *gain)
{
    scan_vertex(s, g, part, v);
    int32_t a = part[v], best = -1;
    double bg = 0, broom = 0;
    for (int32_t i = 0; i <= s->nparts; i++) {
        int32_t p = i < s->nparts ? s->parts[i] : fallback;
        if (p < 0 || p == a || (i == s->nparts && s->conn[p] != 0)) continue;
        if (!fits(pw[p], g->vw[v], limit[p])) continue;
        double gp = s->conn[p] - s->own, room = limit[p] - pw[p];
        if (best < 0 || gp > bg || (gp == bg && (room > broom || (room == broom && p < best)))) {
            best = p;
            bg = gp;
            broom = room;
        }
    }
    scan_reset(s);
    *gain = bg;
    return best;
}

static void move(const topomap_i_pgraph *g, int32_t *part, double *pw, int32_t v, int32_t to)
{
    pw[part[v]] -= g->vw[v];
    pw[to] += g->vw[v];
    part[v] = to;
}

static int32_t first_over(int32_t k, const double *pw, const double *limit)
{
    for (int32_t i = 0; i < k; i++)
        if (!fits(pw[i], 0, limit[i])) return i;
    return -1;
}

int topomap_i_balance(const topomap_i_pgraph *g, int32_t k, const double *limit, int32_t *part,
                      double *pw, topomap_i_pctx *c, int *ok)
{
    int rc = TOPOMAP_OK;
    scan s = {0};
    topomap_i_heap cand = {0}, room = {0};
    *ok = first_over(k, pw, limit) < 0;
    if (*ok) return TOPOMAP_OK;
    if ((rc = scan_init(&s, k)) || (rc = topomap_i_heap_init(&cand, g->n)) || (rc = topomap_i_heap_init(&room, k)))
        goto cleanup;
    for (int32_t i = 0; i < k; i++) topomap_i_heap_set(&room, i, limit[i] - pw[i]);
    /* A vertex dropped as infeasible can become movable once an overweight
       part sheds enough to gain room, hence a few rounds. */
    for (int round = 0; round < 4 && !*ok; round++) {
        int moved = 0;
        for (int32_t v = 0; v < g->n; v++) {
            if (fits(pw[part[v]], 0, limit[part[v]])) continue;
            double gain;
            if (best_move(&s, g, part, pw, limit, v, topomap_i_heap_top(&room), &gain) >= 0)
                topomap_i_heap_set(&cand, v, gain);
        }
        while (cand.size > 0) {
            double key = topomap_i_heap_top_key(&cand);
            int32_t v = topomap_i_heap_pop(&cand), a = part[v];
            if (fits(pw[a], 0, limit[a])) continue;
            double gain;
            int32_t b = best_move(&s, g, part, pw, limit, v, topomap_i_heap_top(&room), &gain);
            if (b < 0) continue;
            if (gain < key && cand.size > 0 && gain < topomap_i_heap_top_key(&cand)) {
                topomap_i_heap_set(&cand, v, gain);
                continue;
            }
            move(g, part, pw, v, b);
            moved = 1;
            topomap_i_heap_set(&room, a, limit[a] - pw[a]);
            topomap_i_heap_set(&room, b, limit[b] - pw[b]);
            for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
                int32_t u = g->adj[e];
                if (fits(pw[part[u]], 0, limit[part[u]])) continue;
                int32_t t = best_move(&s, g, part, pw, limit, u, topomap_i_heap_top(&room), &gain);
                if (t >= 0) topomap_i_heap_set(&cand, u, gain);
                else topomap_i_heap_remove(&cand, u);
            }
            if ((rc = topomap_i_ptick(c, 1 + g->xadj[v + 1] - g->xadj[v]))) goto cleanup;
        }
        *ok = first_over(k, pw, limit) < 0;
        if (!moved) break;
    }
cleanup:
    scan_free(&s);
    topomap_i_heap_free(&cand);
    topomap_i_heap_free(&room);
    return rc;
}

static int is_boundary(const topomap_i_pgraph *g, const int32_t *part, int32_t v)
{
    for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++)
        if (part[g->adj[e]] != part[v]) return 1;
    return 0;
}

static double overload(int32_t k, const double *pw, const double *limit)
{
    double over = 0;
    for (int32_t i = 0; i < k; i++) over += fmax(0, pw[i] - limit[i]);
    return over;
}

static void fmspace_free(topomap_i_fmspace *w)
{
    topomap_i_heap_free(&w->h[0]);
    topomap_i_heap_free(&w->h[1]);
    free(w->moved);
    free(w->log_v);
    free(w->log_from);
    free(w->cand);
    free(w->seen);
    *w = (topomap_i_fmspace){0};
}

void topomap_i_pctx_free(topomap_i_pctx *c)
{
    fmspace_free(&c->fm);
    topomap_i_pool_free(&c->pool);
}

/* The context's FM arrays, sized for n vertices, moved[v] and seen[v]
   below the next pass's number (each pass clears the heaps itself). */
static int fm_space(topomap_i_pctx *c, int32_t n, topomap_i_fmspace **out)
{
    topomap_i_fmspace *w = &c->fm;
    if (w->cap < n || !w->moved) {
        fmspace_free(w);
        size_t cap = n > 0 ? (size_t)n : 1;
        w->moved = malloc(cap * sizeof *w->moved);
        w->log_v = malloc(cap * sizeof *w->log_v);
        w->log_from = malloc(cap * sizeof *w->log_from);
        w->cand = malloc(cap * sizeof *w->cand);
        w->seen = malloc(cap * sizeof *w->seen);
        int rc = TOPOMAP_OK;
        if (!w->moved || !w->log_v || !w->log_from || !w->cand || !w->seen || (rc = topomap_i_heap_init(&w->h[0], n)) ||
            (rc = topomap_i_heap_init(&w->h[1], n))) {
            fmspace_free(w);
            return rc ? rc : topomap_i_fail(TOPOMAP_ENOMEM, "out of memory refining a graph of %d vertices", (int)n);
        }
        w->cap = n;
        w->pass = INT32_MAX; /* the first pass clears moved[] and seen[] */
    }
    *out = w;
    return TOPOMAP_OK;
}

/* Number of a new pass; moved[] and seen[] are cleared when the numbers
   run out. */
static int32_t next_pass(topomap_i_fmspace *w)
{
    if (w->pass == INT32_MAX) {
        for (int32_t v = 0; v < w->cap; v++) w->moved[v] = w->seen[v] = -1;
        w->pass = 0;
        return 0;
    }
    return ++w->pass;
}

/* Append u to the candidates unless this pass listed it already. */
static int32_t add_candidate(topomap_i_fmspace *w, int32_t ncand, int32_t pass, int32_t u)
{
    if (w->seen[u] == pass) return ncand;
    w->seen[u] = pass;
    w->cand[ncand] = u;
    return ncand + 1;
}

/* The vertices the next pass must look at: the nb boundary vertices at the
   start of this pass (cand[0..nb)) and the closed neighbourhoods of its
   `kept` moves (log_v[0..kept)); no other vertex changed its boundary
   status.  Returns their count, cand[] holding them. */
static int32_t next_candidates(const topomap_i_pgraph *g, topomap_i_fmspace *w, int32_t nb, int32_t kept,
                               int32_t pass)
{
    for (int32_t i = 0; i < nb; i++) w->seen[w->cand[i]] = pass;
    int32_t ncand = nb;
    for (int32_t i = 0; i < kept; i++) {
        int32_t v = w->log_v[i];
        ncand = add_candidate(w, ncand, pass, v);
        for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) ncand = add_candidate(w, ncand, pass, g->adj[e]);
    }
    return ncand;
}

/* k-way FM: one heap over all boundary vertices, moves only into parts
   with room under the bound. */
static int fm_kway(const topomap_i_pgraph *g, int32_t k, const double *limit, int32_t *part, double *pw,
                   topomap_i_pctx *c)
{
    int32_t n = g->n;
    scan s = {0};
    topomap_i_fmspace *w;
    int rc = fm_space(c, n, &w);
    if (rc || (rc = scan_init(&s, k))) goto cleanup;
    topomap_i_heap *h = &w->h[0];
    int32_t *moved = w->moved, *log_v = w->log_v, *log_from = w->log_from, *cand = w->cand;
    int32_t stall_limit = stall_limit_of(n), ncand = n;
    for (int32_t iter = 0; iter < FM_MAX_PASSES; iter++) {
        int32_t pass = next_pass(w), nb = 0;
        topomap_i_heap_clear(h);
        for (int32_t i = 0; i < ncand; i++) { /* every vertex, then next_candidates' */
            int32_t v = iter ? cand[i] : i;
            if (!is_boundary(g, part, v)) continue;
            cand[nb++] = v;
            double gain;
            if (best_move(&s, g, part, pw, limit, v, -1, &gain) >= 0) topomap_i_heap_set(h, v, gain);
        }
        if ((rc = topomap_i_ptick(c, iter ? ncand : n + g->xadj[n]))) goto cleanup;
        double cur = 0, best = 0;
        int32_t len = 0, best_len = 0, stall = 0;
        while (h->size > 0) {
            double key = topomap_i_heap_top_key(h);
            int32_t v = topomap_i_heap_pop(h);
            double gain;
            int32_t b = best_move(&s, g, part, pw, limit, v, -1, &gain);
            if (b < 0) continue;
            if (gain < key && h->size > 0 && gain < topomap_i_heap_top_key(h)) {
                topomap_i_heap_set(h, v, gain);
                continue;
            }
            log_v[len] = v;
            log_from[len++] = part[v];
            move(g, part, pw, v, b);
            moved[v] = pass;
            cur -= gain;
            if (cur < best - 1e-12 * (fabs(best) + 1)) {
                best = cur;
                best_len = len;
                stall = 0;
            } else if (++stall > stall_limit) {
                break;
            }
            for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
                int32_t u = g->adj[e];
                if (moved[u] == pass) continue;
                int32_t t = best_move(&s, g, part, pw, limit, u, -1, &gain);
                if (t >= 0) topomap_i_heap_set(h, u, gain);
                else topomap_i_heap_remove(h, u);
            }
            if ((rc = topomap_i_ptick(c, 1 + g->xadj[v + 1] - g->xadj[v]))) goto cleanup;
        }
        while (len > best_len) {
            len--;
            move(g, part, pw, log_v[len], log_from[len]);
        }
        if (best_len == 0) break;
        ncand = next_candidates(g, w, nb, best_len, pass);
    }
cleanup:
    scan_free(&s);
    return rc;
}

/* Two-way FM with the balance rule of the 1982 paper: a move may take the
   receiving side up to one largest vertex weight above its bound; the side
   to move from is the overloaded one if there is one, else the one whose
   best gain is larger (ties: the fuller side).  A pass keeps the best
   prefix among those no more overloaded than its start, so a bisection with
   no room at all (16 + 16 of 32 vertices) can still exchange vertices. */
static int fm_2way(const topomap_i_pgraph *g, const double *limit, int32_t *part, double *pw, topomap_i_pctx *c)
{
    int32_t n = g->n;
    topomap_i_fmspace *w;
    int rc = fm_space(c, n, &w);
    if (rc) return rc;
    topomap_i_heap *h = w->h;
    int32_t *moved = w->moved, *log_v = w->log_v, *cand = w->cand;
    int32_t stall_limit = stall_limit_of(n), ncand = n;
    double wtol = 1e-12 * (g->total_w + 1);
    for (int32_t iter = 0; iter < FM_MAX_PASSES; iter++) {
        int32_t pass = next_pass(w), nb = 0;
        topomap_i_heap_clear(&h[0]);
        topomap_i_heap_clear(&h[1]);
        for (int32_t i = 0; i < ncand; i++) { /* every vertex, then next_candidates' */
            int32_t v = iter ? cand[i] : i;
            if (!is_boundary(g, part, v)) continue;
            double gain = 0;
            for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++)
                gain += part[g->adj[e]] != part[v] ? g->ew[e] : -g->ew[e];
            topomap_i_heap_set(&h[part[v]], v, gain);
            cand[nb++] = v;
        }
        if ((rc = topomap_i_ptick(c, iter ? ncand : n + g->xadj[n]))) return rc;
        double cur = 0, best = 0, over = overload(2, pw, limit), best_over = over;
        int32_t len = 0, best_len = 0, stall = 0;
        for (;;) {
            int over0 = !fits(pw[0], 0, limit[0]), over1 = !fits(pw[1], 0, limit[1]), s;
            if (over0 != over1) s = over0 ? 0 : 1;
            else if (h[0].size == 0 || h[1].size == 0) s = h[0].size ? 0 : 1;
            else {
                double g0 = topomap_i_heap_top_key(&h[0]), g1 = topomap_i_heap_top_key(&h[1]);
                s = g0 > g1 ? 0 : g1 > g0 ? 1 : pw[0] - limit[0] >= pw[1] - limit[1] ? 0 : 1;
            }
            if (h[s].size == 0) break;
            double gain = topomap_i_heap_top_key(&h[s]);
            int32_t v = topomap_i_heap_pop(&h[s]), d = 1 - s;
            moved[v] = pass;
            if (!fits(pw[d], g->vw[v], limit[d] + g->max_w)) continue;
            log_v[len++] = v;
            over -= fmax(0, pw[0] - limit[0]) + fmax(0, pw[1] - limit[1]);
            move(g, part, pw, v, d);
            over += fmax(0, pw[0] - limit[0]) + fmax(0, pw[1] - limit[1]);
            cur -= gain;
            if (over < best_over - wtol || (over <= best_over + wtol && cur < best - 1e-12 * (fabs(best) + 1))) {
                best = cur;
                best_over = over;
                best_len = len;
                stall = 0;
            } else if (++stall > stall_limit) {
                break;
            }
            /* v changed sides: its edge to u now counts the other way */
            for (int64_t e = g->xadj[v]; e < g->xadj[v + 1]; e++) {
                int32_t u = g->adj[e], su = part[u];
                if (moved[u] == pass) continue;
                if (topomap_i_heap_has(&h[su], u)) {
                    topomap_i_heap_set(&h[su], u, topomap_i_heap_key(&h[su], u) + (su == d ? -2 : 2) * g->ew[e]);
                } else {
                    double gu = 0;
                    for (int64_t f = g->xadj[u]; f < g->xadj[u + 1]; f++)
                        gu += part[g->adj[f]] != su ? g->ew[f] : -g->ew[f];
                    topomap_i_heap_set(&h[su], u, gu);
                }
            }
            if ((rc = topomap_i_ptick(c, 1 + g->xadj[v + 1] - g->xadj[v]))) return rc;
        }
        while (len > best_len) {
            int32_t v = log_v[--len];
            move(g, part, pw, v, 1 - part[v]);
        }
        if (best_len == 0) break;
        ncand = next_candidates(g, w, nb, best_len, pass);
    }
    return TOPOMAP_OK;
}

int topomap_i_fm(const topomap_i_pgraph *g, int32_t k, const double *limit, int32_t *part, double *pw,
                 topomap_i_pctx *c)
{
    return k == 2 ? fm_2way(g, limit, part, pw, c) : fm_kway(g, k, limit, part, pw, c);
}

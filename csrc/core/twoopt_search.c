/* Two-opt rank placement (Cui 2024 §3.3.2) and simulated annealing over the
   same swap move; see topomap/twoopt.h for the objectives.

   Choices the thesis leaves open, made here:
   - "pick two distinct job nodes at random": two distinct ranks drawn
     uniformly (xoshiro256** of rng.c, run->seed), their PEs exchanged; a
     swap is kept only on a strict decrease ("accept only if strictly
     reduced"), so plateaus are never crossed;
   - the contention objective, which the thesis gives only in words ("the
     total number of possible contentions of the point-to-point
     communications on a link"): per stage and directed link max(0, load-1)
     with the machine's deterministic routes (notes 003 §2.4);
   - annealing (the thesis's SA competitor, schedule unspecified, after [3]):
     Metropolis acceptance exp(-delta / T), T falling geometrically from t0 to
     t1 over the iterations, the best placement seen returned.

   Cost of an iteration: the unicasts of the two ranks (2 log2 P each for the
   thesis's collectives), each one hop-table lookup before and after the swap
   (hops) or one route walk removed and one added to the stage's link loads
   (contention).  The hop table holds the hops between the placement's
   distinct nodes (uint8, k x k for k <= 8192 nodes on a machine whose routes
   are shorter than 256 links); beyond that hops come from the routing
   oracle. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/rng.h"
#include "topomap/twoopt.h"

enum { TABLE_MAX_NODES = 8192, PROGRESS_EVERY = 4096 };

typedef struct {
    const topomap_machine *m;
    const topomap_twoopt_schedule *s;
    int objective;
    int32_t *node;    /* nranks: node of the rank's PE */
    int32_t *slot;    /* nranks: index of that node in the hop table (NULL: no table) */
    uint8_t *table;   /* k x k hops between the placement's distinct nodes */
    int32_t k;
    int64_t *inc_ptr; /* nranks + 1: unicasts of each rank */
    int64_t *inc;
    int32_t *stage;   /* unicast -> stage (contention only) */
    int32_t *load;    /* nstages x nlinks messages per link (contention only) */
    int32_t nlinks, max_route;
    int32_t *route;   /* max_route scratch */
    int64_t *aff;     /* unicasts of a swapped pair */
    int64_t naff;
} state;

static int check_schedule(const topomap_machine *m, const topomap_twoopt_schedule *s, const int32_t *pe_of)
{
    if (s->nranks < 1) return topomap_i_fail(TOPOMAP_EINVAL, "two-opt needs n >= 1 ranks, got %d", (int)s->nranks);
    if (s->nstages < 0 || s->stage_ptr[0] != 0)
        return topomap_i_fail(TOPOMAP_EINVAL, "two-opt: stage offsets must start at 0");
    for (int32_t t = 0; t < s->nstages; t++)
        if (s->stage_ptr[t + 1] < s->stage_ptr[t])
            return topomap_i_fail(TOPOMAP_EINVAL, "two-opt: stage %d has a negative number of unicasts", (int)t);
    int64_t nu = s->stage_ptr[s->nstages];
    for (int64_t e = 0; e < nu; e++) {
        if (s->src[e] < 0 || s->src[e] >= s->nranks || s->dst[e] < 0 || s->dst[e] >= s->nranks ||
            s->src[e] == s->dst[e] || s->count[e] < 1)
            return topomap_i_fail(TOPOMAP_EINVAL,
                                  "two-opt: unicast %lld (%d -> %d, %d messages) needs two distinct ranks in "
                                  "[0, %d) and at least one message",
                                  (long long)e, (int)s->src[e], (int)s->dst[e], (int)s->count[e], (int)s->nranks);
    }
    int32_t npes = topomap_machine_npes(m);
    for (int32_t r = 0; r < s->nranks; r++)
        if (pe_of[r] < 0 || pe_of[r] >= npes)
            return topomap_i_fail(TOPOMAP_EINVAL, "two-opt: rank %d is placed on PE %d, outside the machine's %d PEs",
                                  (int)r, (int)pe_of[r], (int)npes);
    return 0;
}

static void state_free(state *st)
{
    free(st->node);
    free(st->slot);
    free(st->table);
    free(st->inc_ptr);
    free(st->inc);
    free(st->stage);
    free(st->load);
    free(st->route);
    free(st->aff);
}

/* The hop table over the distinct nodes of the placement, when it is small. */
static int build_table(state *st, int32_t n)
{
    int32_t nnodes = topomap_machine_nnodes(st->m);
    if (st->max_route > 255) return 0;
    int32_t *index = malloc((size_t)nnodes * sizeof *index), *nodes = malloc((size_t)n * sizeof *nodes);
    if (!index || !nodes) {
        free(index);
        free(nodes);
        return TOPOMAP_ENOMEM;
    }
    for (int32_t v = 0; v < nnodes; v++) index[v] = -1;
    int32_t k = 0;
    for (int32_t r = 0; r < n; r++)
        if (index[st->node[r]] < 0) {
            index[st->node[r]] = k;
            nodes[k++] = st->node[r];
        }
    int rc = 0;
    if (k <= TABLE_MAX_NODES) {
        st->slot = malloc((size_t)n * sizeof *st->slot);
        st->table = malloc((size_t)k * (size_t)k);
        if (!st->slot || !st->table) {
            rc = TOPOMAP_ENOMEM;
        } else {
            st->k = k;
            for (int32_t r = 0; r < n; r++) st->slot[r] = index[st->node[r]];
            for (int32_t i = 0; i < k && !rc; i++)
                for (int32_t j = 0; j < k && !rc; j++) {
                    int32_t h = topomap_machine_route_count(st->m, nodes[i], nodes[j]);
                    if (h < 0)
                        rc = topomap_i_fail(TOPOMAP_EINVAL, "two-opt: the machine has no route from node %d to node %d",
                                            (int)nodes[i], (int)nodes[j]);
                    st->table[(size_t)i * k + j] = (uint8_t)h;
                }
        }
    }
    free(index);
    free(nodes);
    return rc;
}

static int state_init(state *st, const topomap_machine *m, const topomap_twoopt_schedule *s, const int32_t *pe_of,
                      int objective)
{
    memset(st, 0, sizeof *st);
    st->m = m;
    st->s = s;
    st->objective = objective;
    if (objective != TOPOMAP_TWOOPT_HOPS && objective != TOPOMAP_TWOOPT_CONTENTION)
        return topomap_i_fail(TOPOMAP_EINVAL, "two-opt: unknown objective %d (0 = hops, 1 = contention)", objective);
    int rc = check_schedule(m, s, pe_of);
    if (rc) return rc;
    int32_t n = s->nranks;
    int64_t nu = s->stage_ptr[s->nstages];
    st->max_route = topomap_machine_max_route(m);
    st->node = malloc((size_t)n * sizeof *st->node);
    st->inc_ptr = calloc((size_t)n + 1, sizeof *st->inc_ptr);
    st->inc = malloc((size_t)(2 * nu + 1) * sizeof *st->inc);
    st->aff = malloc((size_t)((2 * nu > n ? 2 * nu : n) + 1) * sizeof *st->aff); /* also the fill offsets below */
    st->route = malloc((size_t)(st->max_route + 1) * sizeof *st->route);
    if (!st->node || !st->inc_ptr || !st->inc || !st->aff || !st->route) return TOPOMAP_ENOMEM;
    for (int32_t r = 0; r < n; r++) st->node[r] = topomap_machine_node_of(m, pe_of[r]);
    for (int64_t e = 0; e < nu; e++) {
        st->inc_ptr[s->src[e] + 1]++;
        st->inc_ptr[s->dst[e] + 1]++;
    }
    for (int32_t r = 0; r < n; r++) st->inc_ptr[r + 1] += st->inc_ptr[r];
    int64_t *fill = st->aff; /* scratch until the search uses it */
    memcpy(fill, st->inc_ptr, (size_t)n * sizeof *fill);
    for (int64_t e = 0; e < nu; e++) {
        st->inc[fill[s->src[e]]++] = e;
        st->inc[fill[s->dst[e]]++] = e;
    }
    if (objective == TOPOMAP_TWOOPT_HOPS) return build_table(st, n);
    st->nlinks = topomap_machine_nlinks(m);
    if ((double)s->nstages * st->nlinks > (double)(1u << 30))
        return topomap_i_fail(TOPOMAP_EINVAL, "two-opt: %d stages x %d links of link loads are too many",
                              (int)s->nstages, (int)st->nlinks);
    st->stage = malloc((size_t)(nu + 1) * sizeof *st->stage);
    st->load = calloc((size_t)s->nstages * (size_t)st->nlinks + 1, sizeof *st->load);
    if (!st->stage || !st->load) return TOPOMAP_ENOMEM;
    for (int32_t t = 0; t < s->nstages; t++)
        for (int64_t e = s->stage_ptr[t]; e < s->stage_ptr[t + 1]; e++) st->stage[e] = t;
    return 0;
}

static inline int64_t hops(const state *st, int64_t e)
{
    int32_t a = st->s->src[e], b = st->s->dst[e];
    if (st->table) return st->table[(size_t)st->slot[a] * st->k + st->slot[b]];
    return topomap_machine_route_count(st->m, st->node[a], st->node[b]);
}

/* Add (sign +1) or remove (-1) unicast e's messages on its route's links in
   its stage; returns the change of the contention objective. */
static int64_t route_load(state *st, int64_t e, int sign)
{
    int32_t len = topomap_machine_route(st->m, st->node[st->s->src[e]], st->node[st->s->dst[e]], st->route);
    int32_t *load = st->load + (size_t)st->stage[e] * st->nlinks;
    int64_t c = st->s->count[e], delta = 0;
    for (int32_t i = 0; i < len; i++) {
        int64_t before = load[st->route[i]], after = before + sign * c;
        load[st->route[i]] = (int32_t)after;
        delta += (after > 1 ? after - 1 : 0) - (before > 1 ? before - 1 : 0);
    }
    return delta;
}

static int64_t unicast_cost(state *st, int64_t e)
{
    return st->objective == TOPOMAP_TWOOPT_HOPS ? st->s->count[e] * hops(st, e) : route_load(st, e, +1);
}

static int64_t full_cost(state *st)
{
    int64_t cost = 0, nu = st->s->stage_ptr[st->s->nstages];
    for (int64_t e = 0; e < nu; e++) cost += unicast_cost(st, e);
    return cost;
}

/* The unicasts of ranks a and b, one between them listed once. */
static void affected(state *st, int32_t a, int32_t b)
{
    const topomap_twoopt_schedule *s = st->s;
    st->naff = 0;
    for (int64_t i = st->inc_ptr[a]; i < st->inc_ptr[a + 1]; i++) st->aff[st->naff++] = st->inc[i];
    for (int64_t i = st->inc_ptr[b]; i < st->inc_ptr[b + 1]; i++) {
        int64_t e = st->inc[i];
        if (s->src[e] != a && s->dst[e] != a) st->aff[st->naff++] = e;
    }
}

static void exchange(state *st, int32_t a, int32_t b, int32_t *pe_of)
{
    int32_t t = pe_of[a];
    pe_of[a] = pe_of[b];
    pe_of[b] = t;
    t = st->node[a];
    st->node[a] = st->node[b];
    st->node[b] = t;
    if (st->slot) {
        t = st->slot[a];
        st->slot[a] = st->slot[b];
        st->slot[b] = t;
    }
}

/* The objective's change when ranks a and b exchange PEs; the exchange is made. */
static int64_t swap_delta(state *st, int32_t a, int32_t b, int32_t *pe_of)
{
    int64_t delta = 0;
    int hop = st->objective == TOPOMAP_TWOOPT_HOPS;
    for (int64_t i = 0; i < st->naff; i++)
        delta += hop ? -st->s->count[st->aff[i]] * hops(st, st->aff[i]) : route_load(st, st->aff[i], -1);
    exchange(st, a, b, pe_of);
    for (int64_t i = 0; i < st->naff; i++) delta += unicast_cost(st, st->aff[i]);
    return delta;
}

static void swap_undo(state *st, int32_t a, int32_t b, int32_t *pe_of)
{
    int hop = st->objective == TOPOMAP_TWOOPT_HOPS;
    for (int64_t i = 0; i < st->naff && !hop; i++) route_load(st, st->aff[i], -1);
    exchange(st, a, b, pe_of);
    for (int64_t i = 0; i < st->naff && !hop; i++) route_load(st, st->aff[i], +1);
}

int topomap_twoopt_cost(const topomap_machine *m, const topomap_twoopt_schedule *s, const int32_t *pe_of,
                        int objective, int64_t *cost)
{
    state st;
    int rc = state_init(&st, m, s, pe_of, objective);
    if (!rc) *cost = full_cost(&st);
    state_free(&st);
    return rc;
}

int topomap_twoopt_search(const topomap_machine *m, const topomap_twoopt_schedule *s,
                          const topomap_twoopt_options *opt, const topomap_run_options *run, int32_t *pe_of,
                          int64_t *initial, int64_t *cost, int64_t *accepted, int64_t *trace)
{
    if (opt->iterations < 0) return topomap_i_fail(TOPOMAP_EINVAL, "two-opt: iterations must be >= 0");
    if (opt->trace_every < 0) return topomap_i_fail(TOPOMAP_EINVAL, "two-opt: trace_every must be >= 0");
    int anneal = opt->t0 > 0;
    if (anneal && !(opt->t1 > 0 && opt->t1 <= opt->t0 && isfinite(opt->t0)))
        return topomap_i_fail(TOPOMAP_EINVAL, "annealing needs temperatures t0 >= t1 > 0, got t0 = %g, t1 = %g",
                              opt->t0, opt->t1);
    state st;
    int rc = state_init(&st, m, s, pe_of, opt->objective);
    int32_t n = s->nranks, *best = NULL;
    if (!rc && anneal && !(best = malloc((size_t)n * sizeof *best))) rc = TOPOMAP_ENOMEM;
    if (rc) {
        state_free(&st);
        return rc;
    }
    topomap_rng rng;
    topomap_rng_seed(&rng, run ? run->seed : 0);
    int64_t cur = full_cost(&st), best_cost = cur, kept = 0;
    *initial = cur;
    if (best) memcpy(best, pe_of, (size_t)n * sizeof *best);
    if (trace && opt->trace_every) trace[0] = cur;
    double temp = opt->t0, cool = anneal && opt->iterations ? pow(opt->t1 / opt->t0, 1.0 / (double)opt->iterations) : 1;
    for (int64_t it = 1; it <= opt->iterations && n >= 2; it++) {
        int32_t a = (int32_t)topomap_rng_below(&rng, (uint64_t)n);
        int32_t b = (int32_t)topomap_rng_below(&rng, (uint64_t)n - 1);
        b += b >= a;
        affected(&st, a, b);
        int64_t delta = swap_delta(&st, a, b, pe_of);
        int keep = delta < 0 || (anneal && topomap_rng_uniform(&rng) < exp(-(double)delta / temp));
        if (keep) {
            cur += delta;
            kept++;
            if (best && cur < best_cost) {
                best_cost = cur;
                memcpy(best, pe_of, (size_t)n * sizeof *best);
            }
        } else {
            swap_undo(&st, a, b, pe_of);
        }
        temp *= cool;
        if (trace && opt->trace_every && it % opt->trace_every == 0) trace[it / opt->trace_every] = cur;
        if (run && run->progress && it % PROGRESS_EVERY == 0 &&
            run->progress(run->progress_ctx, (double)it / (double)opt->iterations)) {
            rc = TOPOMAP_ECANCELED;
            break;
        }
    }
    if (trace && opt->trace_every && n < 2)
        for (int64_t k = 1; k <= opt->iterations / opt->trace_every; k++) trace[k] = cur;
    if (best) {
        memcpy(pe_of, best, (size_t)n * sizeof *best);
        cur = best_cost;
    }
    *cost = cur;
    *accepted = kept;
    free(best);
    state_free(&st);
    return rc;
}

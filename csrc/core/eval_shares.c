/* The evaluator's J kept as per-process shares (eval_deltas.h): each
   process's messages' bytes x distance, sent and received.  A local search
   on J alone (map_qap_search.c over nodes, map_hierarchy.c over PEs) then
   judges a move or swap by its change of J without a journalled try, and a
   swap costs the partner's messages in distance lookups: u's side is summed
   once per place (a node, a PE) it could go to, since the distance from
   any PE of a place to a process elsewhere is the same.  Applying a change
   (topomap_eval_move / _swap) refreshes the shares around it. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "eval_deltas.h"
#include "eval_internal.h"

/* Distance of a message from PE a to PE b: the pair table while it has
   room; once it is full a lookup that misses costs more than the
   network's distance. */
static inline double dist(topomap_eval *e, int32_t a, int32_t b)
{
    const topomap_machine *m = e->m;
    int32_t na = topomap_machine_node_of(m, a), nb = topomap_machine_node_of(m, b);
    if (na == nb) return topomap_machine_distance(m, a, b);
    return e->pairs.full ? topomap_machine_node_distance(m, na, nb)
                         : topomap_i_pairs_distance(&e->pairs, m, a, b, na, nb);
}

static double share_of(topomap_eval *e, int32_t u)
{
    const topomap_pattern *p = &e->p;
    int32_t pu = e->pe_of[u];
    double sum = 0;
    for (int64_t k = p->indptr[u]; k < p->indptr[u + 1]; k++)
        sum += p->bytes[k] * dist(e, pu, e->pe_of[p->indices[k]]);
    for (int64_t k = e->t_indptr[u]; k < e->t_indptr[u + 1]; k++)
        sum += e->t_bytes[k] * dist(e, e->pe_of[e->t_indices[k]], pu);
    return sum;
}

int topomap_i_eval_shares(topomap_eval *e)
{
    const topomap_pattern *p = &e->p;
    int32_t n = p->n;
    int64_t maxdeg = 0;
    for (int32_t u = 0; u < n; u++) {
        if (e->pe_of[u] < 0)
            return topomap_i_fail(TOPOMAP_EINVAL, "shares of J need every process placed; process %d is not",
                                  (int)u);
        int64_t d = p->indptr[u + 1] - p->indptr[u] + e->t_indptr[u + 1] - e->t_indptr[u];
        maxdeg = d > maxdeg ? d : maxdeg;
    }
    topomap_i_eval_shares_free(e);
    e->share = malloc(((size_t)n + 1) * sizeof *e->share);
    e->mx = malloc((size_t)maxdeg * sizeof *e->mx + 1);
    e->mpe = malloc((size_t)maxdeg * sizeof *e->mpe + 1);
    e->mplace = malloc((size_t)maxdeg * sizeof *e->mplace + 1);
    e->mw = malloc((size_t)maxdeg * sizeof *e->mw + 1);
    e->min = malloc((size_t)maxdeg + 1);
    if (!e->share || !e->mx || !e->mpe || !e->mplace || !e->mw || !e->min) {
        topomap_i_eval_shares_free(e);
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the shares of J of %d processes", (int)n);
    }
    for (int32_t u = 0; u < n; u++) e->share[u] = share_of(e, u);
    return TOPOMAP_OK;
}

void topomap_i_eval_shares_free(topomap_eval *e)
{
    free(e->share);
    free(e->mx);
    free(e->mpe);
    free(e->mplace);
    free(e->mw);
    free(e->min);
    e->share = e->mw = NULL;
    e->mx = e->mpe = e->mplace = NULL;
    e->min = NULL;
}

double topomap_i_eval_share(const topomap_eval *e, int32_t u) { return e->share[u]; }

void topomap_i_eval_gather(topomap_eval *e, int32_t u, const int32_t *place)
{
    int32_t k = 0;
    for (int side = 0; side < 2; side++) {
        const int64_t *ip = side ? e->t_indptr : e->p.indptr;
        const int32_t *ix = side ? e->t_indices : e->p.indices;
        const double *b = side ? e->t_bytes : e->p.bytes;
        for (int64_t r = ip[u]; r < ip[u + 1]; r++) { /* a valid pattern has no self messages */
            int32_t x = ix[r];
            e->mx[k] = x;
            e->mpe[k] = e->pe_of[x];
            e->mplace[k] = place[x];
            e->mw[k] = b[r];
            e->min[k++] = (uint8_t)side;
        }
    }
    e->nm = k;
}

/* Distance of gathered message k with the gathered process on PE pe. */
static inline double gathered(topomap_eval *e, int32_t k, int32_t pe)
{
    return e->min[k] ? dist(e, e->mpe[k], pe) : dist(e, pe, e->mpe[k]);
}

double topomap_i_eval_base(topomap_eval *e, int32_t j, int32_t at)
{
    double sum = 0;
    for (int32_t k = 0; k < e->nm; k++)
        if (e->mplace[k] != j) sum += e->mw[k] * gathered(e, k, at);
    return sum;
}

double topomap_i_eval_at(topomap_eval *e, double base, int32_t j, int32_t pe, int32_t skip)
{
    for (int32_t k = 0; k < e->nm; k++)
        if (e->mplace[k] == j && e->mx[k] != skip) base += e->mw[k] * gathered(e, k, pe);
    return base;
}

double topomap_i_eval_swap_delta(topomap_eval *e, int32_t u, int32_t v, double new_u)
{
    const topomap_pattern *p = &e->p;
    int32_t pu = e->pe_of[u], pv = e->pe_of[v];
    double new_v = 0, uv_old = 0, uv_new = 0;
    for (int64_t k = p->indptr[v]; k < p->indptr[v + 1]; k++) {
        int32_t y = p->indices[k];
        if (y == u) {
            uv_old += p->bytes[k] * dist(e, pv, pu);
            uv_new += p->bytes[k] * dist(e, pu, pv);
        } else {
            new_v += p->bytes[k] * dist(e, pu, e->pe_of[y]);
        }
    }
    for (int64_t k = e->t_indptr[v]; k < e->t_indptr[v + 1]; k++) {
        int32_t y = e->t_indices[k];
        if (y == u) {
            uv_old += e->t_bytes[k] * dist(e, pu, pv);
            uv_new += e->t_bytes[k] * dist(e, pv, pu);
        } else {
            new_v += e->t_bytes[k] * dist(e, e->pe_of[y], pu);
        }
    }
    return new_u + new_v + uv_new - (e->share[u] + e->share[v] - uv_old);
}

void topomap_i_eval_reshare(topomap_eval *e, int32_t u)
{
    const topomap_pattern *p = &e->p;
    e->share[u] = share_of(e, u);
    for (int64_t k = p->indptr[u]; k < p->indptr[u + 1]; k++) e->share[p->indices[k]] = share_of(e, p->indices[k]);
    for (int64_t k = e->t_indptr[u]; k < e->t_indptr[u + 1]; k++)
        e->share[e->t_indices[k]] = share_of(e, e->t_indices[k]);
}

#ifndef NDEBUG
void topomap_i_eval_shares_check(topomap_eval *e)
{
    double J = 0;
    for (int32_t u = 0; u < e->p.n; u++) {
        double s = share_of(e, u);
        assert(fabs(s - e->share[u]) <= 1e-9 * (fabs(s) + 1));
        J += s;
    }
    assert(fabs(J / 2 - e->s.qap) <= 1e-9 * (fabs(J) + 1));
}
#endif

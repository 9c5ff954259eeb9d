/* J kept as per-process shares (qap_shares.h). */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "qap_shares.h"

static double share_of(topomap_i_shares *s, int32_t u)
{
    const topomap_pattern *p = s->p;
    int32_t pu = s->pe_of[u];
    double sum = 0;
    for (int64_t k = p->indptr[u]; k < p->indptr[u + 1]; k++)
        sum += p->bytes[k] * topomap_i_shares_dist(s, pu, s->pe_of[p->indices[k]]);
    for (int64_t k = s->t_indptr[u]; k < s->t_indptr[u + 1]; k++)
        sum += s->t_bytes[k] * topomap_i_shares_dist(s, s->pe_of[s->t_indices[k]], pu);
    return sum;
}

int topomap_i_shares_init(topomap_i_shares *s, const topomap_machine *m, const topomap_pattern *p, int32_t *pe_of)
{
    int32_t n = p->n;
    int64_t nnz = p->indptr[n], maxdeg = 0;
    *s = (topomap_i_shares){.m = m, .p = p, .pe_of = pe_of};
    s->t_indptr = malloc(((size_t)n + 1) * sizeof *s->t_indptr);
    s->t_indices = malloc((size_t)nnz * sizeof *s->t_indices + 1);
    s->t_bytes = malloc((size_t)nnz * sizeof *s->t_bytes + 1);
    s->share = malloc(((size_t)n + 1) * sizeof *s->share);
    if (!s->t_indptr || !s->t_indices || !s->t_bytes || !s->share ||
        topomap_pattern_transpose(p, s->t_indptr, s->t_indices, s->t_bytes))
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the shares of J of %d processes", (int)n);
    for (int32_t u = 0; u < n; u++) {
        int64_t d = p->indptr[u + 1] - p->indptr[u] + s->t_indptr[u + 1] - s->t_indptr[u];
        maxdeg = d > maxdeg ? d : maxdeg;
    }
    s->mx = malloc((size_t)maxdeg * sizeof *s->mx + 1);
    s->mpe = malloc((size_t)maxdeg * sizeof *s->mpe + 1);
    s->mplace = malloc((size_t)maxdeg * sizeof *s->mplace + 1);
    s->mw = malloc((size_t)maxdeg * sizeof *s->mw + 1);
    s->min = malloc((size_t)maxdeg + 1);
    if (!s->mx || !s->mpe || !s->mplace || !s->mw || !s->min)
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the shares of J of %d processes", (int)n);
    for (int32_t u = 0; u < n; u++) {
        s->share[u] = share_of(s, u);
        s->J += s->share[u];
    }
    s->J /= 2; /* every message counted at both its ends */
    return TOPOMAP_OK;
}

void topomap_i_shares_free(topomap_i_shares *s)
{
    topomap_i_pairs_free(&s->pairs);
    free(s->t_indptr);
    free(s->t_indices);
    free(s->t_bytes);
    free(s->share);
    free(s->mx);
    free(s->mpe);
    free(s->mplace);
    free(s->mw);
    free(s->min);
    memset(s, 0, sizeof *s);
}

void topomap_i_shares_gather(topomap_i_shares *s, int32_t u, const int32_t *place)
{
    int32_t k = 0;
    for (int side = 0; side < 2; side++) {
        const int64_t *ip = side ? s->t_indptr : s->p->indptr;
        const int32_t *ix = side ? s->t_indices : s->p->indices;
        const double *b = side ? s->t_bytes : s->p->bytes;
        for (int64_t e = ip[u]; e < ip[u + 1]; e++) { /* a valid pattern has no self messages */
            int32_t x = ix[e];
            s->mx[k] = x;
            s->mpe[k] = s->pe_of[x];
            s->mplace[k] = place[x];
            s->mw[k] = b[e];
            s->min[k++] = (uint8_t)side;
        }
    }
    s->nm = k;
}

/* Distance of a gathered message with one end on PE pe. */
static inline double gathered(topomap_i_shares *s, int32_t k, int32_t pe)
{
    return s->min[k] ? topomap_i_shares_dist(s, s->mpe[k], pe) : topomap_i_shares_dist(s, pe, s->mpe[k]);
}

double topomap_i_shares_base(topomap_i_shares *s, int32_t j, int32_t at)
{
    double sum = 0;
    for (int32_t k = 0; k < s->nm; k++)
        if (s->mplace[k] != j) sum += s->mw[k] * gathered(s, k, at);
    return sum;
}

double topomap_i_shares_at(topomap_i_shares *s, double base, int32_t j, int32_t pe, int32_t skip)
{
    for (int32_t k = 0; k < s->nm; k++)
        if (s->mplace[k] == j && s->mx[k] != skip) base += s->mw[k] * gathered(s, k, pe);
    return base;
}

double topomap_i_shares_swap_delta(topomap_i_shares *s, int32_t u, int32_t v, double new_u)
{
    const topomap_pattern *p = s->p;
    int32_t pu = s->pe_of[u], pv = s->pe_of[v];
    double new_v = 0, uv_old = 0, uv_new = 0;
    for (int64_t k = p->indptr[v]; k < p->indptr[v + 1]; k++) {
        int32_t y = p->indices[k];
        if (y == u) {
            uv_old += p->bytes[k] * topomap_i_shares_dist(s, pv, pu);
            uv_new += p->bytes[k] * topomap_i_shares_dist(s, pu, pv);
        } else {
            new_v += p->bytes[k] * topomap_i_shares_dist(s, pu, s->pe_of[y]);
        }
    }
    for (int64_t k = s->t_indptr[v]; k < s->t_indptr[v + 1]; k++) {
        int32_t y = s->t_indices[k];
        if (y == u) {
            uv_old += s->t_bytes[k] * topomap_i_shares_dist(s, pu, pv);
            uv_new += s->t_bytes[k] * topomap_i_shares_dist(s, pv, pu);
        } else {
            new_v += s->t_bytes[k] * topomap_i_shares_dist(s, s->pe_of[y], pu);
        }
    }
    return new_u + new_v + uv_new - (s->share[u] + s->share[v] - uv_old);
}

void topomap_i_shares_moved(topomap_i_shares *s, int32_t u)
{
    const topomap_pattern *p = s->p;
    s->share[u] = share_of(s, u);
    for (int64_t k = p->indptr[u]; k < p->indptr[u + 1]; k++) s->share[p->indices[k]] = share_of(s, p->indices[k]);
    for (int64_t k = s->t_indptr[u]; k < s->t_indptr[u + 1]; k++)
        s->share[s->t_indices[k]] = share_of(s, s->t_indices[k]);
}

int topomap_i_shares_order(int32_t *queue, int32_t len, const int32_t *place, int32_t nplaces)
{
    int32_t *at = calloc((size_t)nplaces + 1, sizeof *at), *sorted = malloc(((size_t)len + 1) * sizeof *sorted);
    if (!at || !sorted) {
        free(at);
        free(sorted);
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory ordering %d processes by place", (int)len);
    }
    for (int32_t i = 0; i < len; i++) at[place[queue[i]] + 1]++;
    for (int32_t j = 0; j < nplaces; j++) at[j + 1] += at[j];
    for (int32_t i = 0; i < len; i++) sorted[at[place[queue[i]]]++] = queue[i];
    memcpy(queue, sorted, (size_t)len * sizeof *sorted);
    free(at);
    free(sorted);
    return TOPOMAP_OK;
}

#ifndef NDEBUG
void topomap_i_shares_check(topomap_i_shares *s)
{
    double J = 0;
    for (int32_t u = 0; u < s->p->n; u++) {
        double v = share_of(s, u);
        assert(fabs(v - s->share[u]) <= 1e-9 * (fabs(v) + 1));
        J += v;
    }
    assert(fabs(J / 2 - s->J) <= 1e-9 * (fabs(J) + 1));
}
#endif

/* The acceptance rule of the searches on maximum link congestion (Kumar's
   LocalOpt, map_maxcontention.c; the bounded search, map_congestion_search.c):
   a change is better when it lowers the maximum congestion, or keeps it and
   lowers the sum of squared link congestions (relative 1e-9).

   A try is judged from the links the change touches (eval_deltas.h) and the
   number of links at the maximum, kept up to date: a touched link above the
   maximum rejects it, every link at the maximum touched and lowered accepts
   it, else the sum of squares decides.  Only accepted changes go through
   the evaluator.  Its full try (journal, max tree, rollback) took 24 % of
   the top-down mapping of the 36x18x18 stencil onto torus:9x9x9/16 (1.14 s
   of CPU, 0.87 s this way, the same mappings).

   Cost: O((deg p + deg q) x route length) per try; accepting adds the
   evaluator's update, and O(links) each time the maximum falls. */
#include <assert.h>
#include <math.h>
#include <stddef.h>
#include "topomap/error.h"
#include "map_congestion_search.h"

static double sum_of_squares(const topomap_metrics *mt)
{
    double avg = mt->nz_congestion_avg;
    return (double)mt->nz_links * (mt->nz_congestion_var + avg * avg);
}

int topomap_i_congestion_better(const topomap_metrics *a, const topomap_metrics *cur)
{
    if (a->max_congestion != cur->max_congestion) return a->max_congestion < cur->max_congestion;
    double s = sum_of_squares(cur);
    return sum_of_squares(a) < s - 1e-9 * s;
}

static double congestion(const topomap_i_congestion_judge *j, int32_t l, double load)
{
    return load / topomap_machine_link_capacity(j->m, l);
}

static int64_t count_at_max(const topomap_i_congestion_judge *j)
{
    const double *load = topomap_eval_link_loads(j->e);
    int64_t k = 0;
    for (int32_t l = 0, L = topomap_machine_nlinks(j->m); l < L; l++)
        k += congestion(j, l, load[l]) == j->cur.max_congestion;
    return k;
}

int topomap_i_judge_init(topomap_i_congestion_judge *j, const topomap_machine *m, const topomap_pattern *p,
                         const int32_t *pe_of)
{
    *j = (topomap_i_congestion_judge){.m = m};
    int rc = topomap_eval_create(m, p, pe_of, NULL, &j->e);
    if (!rc) rc = topomap_i_link_deltas_init(&j->d, topomap_machine_nlinks(m));
    if (rc) {
        topomap_i_judge_free(j);
        return rc;
    }
    topomap_eval_metrics(j->e, &j->cur);
    j->at_max = count_at_max(j);
    return TOPOMAP_OK;
}

void topomap_i_judge_free(topomap_i_congestion_judge *j)
{
    topomap_eval_destroy(j->e);
    j->e = NULL;
    topomap_i_link_deltas_free(&j->d);
}

int topomap_i_judge_better(topomap_i_congestion_judge *j, int32_t p, int32_t new_p, int32_t q, int32_t new_q, int *rc)
{
    if ((*rc = topomap_i_eval_link_deltas(j->e, p, new_p, q, new_q, &j->d))) return 0;
    const double *load = topomap_eval_link_loads(j->e);
    double mx = j->cur.max_congestion, top = 0, d2 = 0;
    int64_t lowered = 0;
    j->touched_at_max = 0;
    for (int64_t i = 0; i < j->d.n; i++) {
        int32_t l = j->d.links[i];
        double before = congestion(j, l, load[l]), after = congestion(j, l, load[l] + j->d.dw[i]);
        top = after > top ? after : top;
        j->touched_at_max += before == mx;
        lowered += before == mx && after < mx;
        d2 += after * after - before * before;
    }
    double s = sum_of_squares(&j->cur);
    int yes = top > mx ? 0 : top < mx && lowered == j->at_max ? 1 : d2 < -1e-9 * s;
#ifndef NDEBUG /* the sanitizer build checks the verdict against the evaluator's full try (round-off ties aside) */
    topomap_metrics after;
    *rc = q < 0 ? topomap_eval_try_move(j->e, p, new_p, &after) : topomap_eval_try_swap(j->e, p, q, &after);
    assert(*rc || yes == topomap_i_congestion_better(&after, &j->cur) || fabs(d2 + 1e-9 * s) <= 1e-6 * (s + 1));
#endif
    return yes;
}

void topomap_i_judge_accepted(topomap_i_congestion_judge *j)
{
    double mx = j->cur.max_congestion;
    topomap_eval_metrics(j->e, &j->cur);
    if (j->cur.max_congestion != mx) {
        j->at_max = count_at_max(j);
        return;
    }
    const double *load = topomap_eval_link_loads(j->e);
    j->at_max -= j->touched_at_max;
    for (int64_t i = 0; i < j->d.n; i++) j->at_max += congestion(j, j->d.links[i], load[j->d.links[i]]) == mx;
    assert(j->at_max == count_at_max(j));
}

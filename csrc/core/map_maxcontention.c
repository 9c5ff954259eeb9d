/* Maximum-contention mapping (Kumar 2012, ch. 7, §7.2; notes 001 §4.8): the
   EMAHD mapping chosen by maximum link load, then "LocalOpt": swap pairs of
   tasks whenever the swap lowers the metric.

   Every swap is judged from the links it touches (map_congestion_judge.c)
   and applied through the incremental evaluator on the group quotient, each
   group on one PE of its node, which gives the full mapping's link loads.

   Choices the thesis leaves open:
   - The metric is the evaluator's max_congestion: the largest load /
     capacity over directed links (with unit capacities, Kumar's largest
     link load in bytes).
   - Pivot rule, first improvement.  Only a swap that moves a "hot" task
     (one with a message over a link of maximum load) can lower the maximum,
     so sweeps go over the hot tasks a (ascending, recomputed every sweep)
     against every task b and every unused node (when there are more nodes
     than groups).  When a hot sweep changes nothing, one "warm" sweep
     follows over the tasks on links loaded to >= 90 % of the maximum; if
     that changes something, hot sweeps resume, else LocalOpt stops.  At
     most `max_passes` sweeps in all.
   - Plateaus: most swaps leave the most loaded link alone, so a swap that
     keeps the maximum and lowers the sum of squared congestions (by more
     than round-off, relative 1e-9) is accepted too; that spreads load off
     the heavy links until the maximum itself can drop.  The maximum never
     increases.  (Measured on the Mesh case of benchmarks/bench_kumar.py at
     216 nodes, maximum load: hot sweeps alone 103; sweeps over all pairs
     alone 96 in 5x the time; hot + sweeps over all pairs 91-97; hot + warm
     92 in the same time.  On topomap demo's 512 nodes hot + warm took half
     the time of hot + all pairs, with a lower maximum.)
   - n-to-1: tasks are groups (map_qap.c); a swap must leave each group on
     a node that holds it.

   Complexity: EMAHD (map_mahd.c), then per sweep O(k x (n + m)) tries for k
   hot or warm tasks (at most n), each O((deg a + deg b) x route length);
   finding those tasks costs O(E x route length). */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/eval.h"
#include "topomap/map_kumar.h"
#include "map_congestion_search.h"
#include "map_qap.h"

/* The tasks with a message over a link of congestion >= mc, ascending.  With
   mc = the maximum: only a swap that moves one of them can lower it. */
static int32_t loaded_tasks(const topomap_i_qap *q, const topomap_eval *ev, double mc, const int32_t *loc,
                            int32_t *route, char *mark, int32_t *hot)
{
    const topomap_machine *m = q->machine;
    const double *load = topomap_eval_link_loads(ev);
    memset(mark, 0, (size_t)q->n);
    for (int32_t u = 0; u < q->n && mc > 0; u++) {
        int32_t nu = topomap_machine_node_of(m, q->loc_pe[loc[u]]);
        for (int64_t e = q->flows.indptr[u]; e < q->flows.indptr[u + 1]; e++) {
            int32_t v = q->flows.indices[e], nv = topomap_machine_node_of(m, q->loc_pe[loc[v]]);
            int32_t h = nu == nv ? 0 : topomap_machine_route(m, nu, nv, route);
            for (int32_t r = 0; r < h; r++)
                if (load[route[r]] / topomap_machine_link_capacity(m, route[r]) >= mc) {
                    mark[u] = mark[v] = 1;
                    break;
                }
        }
    }
    int32_t nh = 0;
    for (int32_t u = 0; u < q->n; u++)
        if (mark[u]) hot[nh++] = u;
    return nh;
}

static int check_passes(int32_t max_passes)
{
    if (max_passes < 1) return topomap_i_fail(TOPOMAP_EINVAL, "max-contention passes = %d must be >= 1", (int)max_passes);
    return TOPOMAP_OK;
}

static int solve(const topomap_i_qap *q, const void *ctx, const topomap_run_options *run, int32_t *loc)
{
    int32_t max_passes = *(const int32_t *)ctx, n = q->n, m = q->m;
    int rc = check_passes(max_passes);
    if (rc) return rc;
    topomap_i_ticker emahd_tk = {run, "max-contention", 0.0, 0.3, 0, 0};
    topomap_run_options sub = {run ? run->seed : 0, topomap_i_ticker_cb, &emahd_tk};
    topomap_i_mahd_args emahd = {TOPOMAP_MAHD_AVERAGE, 1, TOPOMAP_OBJECTIVE_MAX_CONGESTION};
    rc = topomap_i_mahd_solve(q, &emahd, &sub, loc);
    if (rc) return rc;
    topomap_i_congestion_judge j = {0};
    int32_t *pe = malloc((size_t)n * sizeof *pe), *freel = malloc((size_t)m * sizeof *freel), nfree = 0;
    int32_t *hot = malloc((size_t)n * sizeof *hot);
    int32_t *route = malloc(((size_t)topomap_machine_max_route(q->machine) + 1) * sizeof *route);
    char *used = calloc((size_t)m, 1), *mark = malloc((size_t)n);
    if (!pe || !freel || !hot || !route || !used || !mark) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory in LocalOpt");
        goto cleanup;
    }
    for (int32_t j = 0; j < n; j++) {
        pe[j] = q->loc_pe[loc[j]];
        used[loc[j]] = 1;
    }
    for (int32_t l = 0; l < m; l++)
        if (!used[l]) freel[nfree++] = l;
    if ((rc = topomap_i_judge_init(&j, q->machine, &q->flows, pe))) goto cleanup;
    topomap_i_ticker tk = {run, "max-contention", 0.3, 1.0, 0, 0};
    /* hot sweeps while they improve; then one warm sweep, and back to hot
       sweeps if that one moved anything */
    int warm = 0;
    for (int32_t pass = 0; pass < max_passes; pass++) {
        int32_t nh = loaded_tasks(q, j.e, (warm ? TOPOMAP_I_CONGESTION_WARM : 1.0) * j.cur.max_congestion, loc, route,
                                  mark, hot);
        int improved = 0;
        for (int32_t i = 0; i < nh; i++) {
            int32_t a = hot[i];
            int64_t da = q->flows.indptr[a + 1] - q->flows.indptr[a], work = 0;
            for (int32_t b = 0; b < n; b++) {
                if (b == a || q->size[a] > q->cap[loc[b]] || q->size[b] > q->cap[loc[a]]) continue;
                work += 1 + da + q->flows.indptr[b + 1] - q->flows.indptr[b];
                const int32_t *at = topomap_eval_mapping(j.e);
                int yes = topomap_i_judge_better(&j, a, at[b], b, at[a], &rc);
                if (rc) goto cleanup;
                if (!yes) continue;
                if ((rc = topomap_eval_swap(j.e, a, b))) goto cleanup;
                topomap_i_judge_accepted(&j);
                int32_t t = loc[a];
                loc[a] = loc[b];
                loc[b] = t;
                improved = 1;
            }
            for (int32_t f = 0; f < nfree; f++) {
                int32_t l = freel[f];
                if (q->size[a] > q->cap[l]) continue;
                work += 1 + da;
                int yes = topomap_i_judge_better(&j, a, q->loc_pe[l], -1, -1, &rc);
                if (rc) goto cleanup;
                if (!yes) continue;
                if ((rc = topomap_eval_move(j.e, a, q->loc_pe[l]))) goto cleanup;
                topomap_i_judge_accepted(&j);
                freel[f] = loc[a];
                loc[a] = l;
                improved = 1;
            }
            rc = topomap_i_tick(&tk, work, (double)pass / max_passes);
            if (rc) goto cleanup;
        }
        if (!improved && warm) break;
        warm = !improved;
    }
cleanup:
    topomap_i_judge_free(&j);
    free(pe);
    free(freel);
    free(hot);
    free(route);
    free(used);
    free(mark);
    return rc;
}

int topomap_map_max_contention(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc,
                               int32_t nalloc, int32_t capacity, int32_t max_passes, const topomap_run_options *run,
                               int32_t *pe_of)
{
    int rc = check_passes(max_passes);
    if (rc) return rc;
    return topomap_i_qap_map(m, p, alloc, nalloc, capacity, run, "max-contention", solve, &max_passes, pe_of);
}

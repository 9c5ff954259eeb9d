/* MAGC's congestion-based greedy heuristic (Mirsadeghi 2017, Alg. 5.1;
   notes 000 §4.3): pick the unmapped process whose mapped neighbours carry
   the most traffic per neighbour relative to its unmapped ones, and put it
   on the free endpoint that keeps the node's maximum channel congestion
   lowest.  The per-channel sums run in a fixed order (mapped neighbours by
   increasing id, the send before the receive), so a transcription that
   follows the same order reproduces every tie decision exactly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/gpu.h"

static void add_route(const topomap_gpu_node *g, int32_t a, int32_t b, double w, double *load)
{
    int64_t r = (int64_t)a * g->nend + b;
    for (int64_t k = g->route_ptr[r]; k < g->route_ptr[r + 1]; k++) load[g->route_chan[k]] += w;
}

/* Traffic of process p at endpoint pe with every mapped neighbour, onto load. */
static void place(const topomap_gpu_node *g, int32_t n, const double *c, const unsigned char *mapped,
                  const int32_t *ep_of, int32_t p, int32_t pe, double *load)
{
    for (int32_t r = 0; r < n; r++) {
        if (!mapped[r]) continue;
        if (c[(size_t)p * n + r] > 0) add_route(g, pe, ep_of[r], c[(size_t)p * n + r], load);
        if (c[(size_t)r * n + p] > 0) add_route(g, ep_of[r], pe, c[(size_t)r * n + p], load);
    }
}

static int32_t pick_process(int32_t n, const double *c, const unsigned char *mapped)
{
    int32_t best = -1;
    double best_delta = 0;
    for (int32_t q = 0; q < n; q++) {
        if (mapped[q]) continue;
        double sm = 0, su = 0;
        int32_t nm = 0, nu = 0;
        for (int32_t r = 0; r < n; r++) {
            if (r == q) continue;
            double s = c[(size_t)q * n + r] + c[(size_t)r * n + q];
            if (mapped[r]) {
                sm += s;
                nm += s > 0;
            } else {
                su += s;
                nu += s > 0;
            }
        }
        double delta = (nm ? sm / nm : 0.0) - (nu ? su / nu : 0.0); /* 0/0 := 0 */
        if (best < 0 || delta > best_delta) {
            best = q;
            best_delta = delta;
        }
    }
    return best;
}

static double max_congestion(const topomap_gpu_node *g, const double *load)
{
    double m = 0;
    for (int32_t ch = 0; ch < g->nchan; ch++)
        if (load[ch] / g->bandwidth[ch] > m) m = load[ch] / g->bandwidth[ch];
    return m;
}

static int check_args(const topomap_gpu_node *g, int32_t n, const double *c, const int32_t *cand, int32_t ncand,
                      const double *load)
{
    int rc = topomap_gpu_node_check(g);
    if (rc) return rc;
    if (n < 0 || ncand < n)
        return topomap_i_fail(TOPOMAP_EINVAL, "magc greedy: %d processes but %d free endpoints", (int)n, (int)ncand);
    for (size_t k = 0; k < (size_t)n * (size_t)n; k++)
        if (!(c[k] >= 0) || !isfinite(c[k]))
            return topomap_i_fail(TOPOMAP_EINVAL, "magc greedy: traffic %zu -> %zu is %g, not finite >= 0",
                                  k / (size_t)n, k % (size_t)n, c[k]);
    for (int32_t k = 0; k < ncand; k++) {
        if (cand[k] < 0 || cand[k] >= g->nend)
            return topomap_i_fail(TOPOMAP_EINVAL, "magc greedy: candidate %d is endpoint %d of %d", (int)k,
                                  (int)cand[k], (int)g->nend);
        for (int32_t j = 0; j < k; j++)
            if (cand[j] == cand[k])
                return topomap_i_fail(TOPOMAP_EINVAL, "magc greedy: endpoint %d is a candidate twice", (int)cand[k]);
    }
    if (load)
        for (int32_t ch = 0; ch < g->nchan; ch++)
            if (!(load[ch] >= 0) || !isfinite(load[ch]))
                return topomap_i_fail(TOPOMAP_EINVAL, "magc greedy: start load of channel %d is %g", (int)ch,
                                      load[ch]);
    return TOPOMAP_OK;
}

int topomap_magc_greedy(const topomap_gpu_node *g, int32_t n, const double *c, const int32_t *cand, int32_t ncand,
                        const double *load, int32_t *ep_of, int32_t *order)
{
    int rc = check_args(g, n, c, cand, ncand, load);
    if (rc) return rc;
    size_t nch = (size_t)g->nchan;
    double *cong = calloc(nch + 1, sizeof *cong), *tmp = calloc(nch + 1, sizeof *tmp);
    unsigned char *mapped = calloc((size_t)n + 1, 1), *used = calloc((size_t)ncand + 1, 1);
    if (!cong || !tmp || !mapped || !used) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "magc greedy: out of memory");
        goto out;
    }
    if (load) memcpy(cong, load, nch * sizeof *cong);
    for (int32_t step = 0; step < n; step++) {
        int32_t p = pick_process(n, c, mapped);
        int32_t best = -1;
        double best_cost = 0;
        for (int32_t k = 0; k < ncand; k++) {
            if (used[k]) continue;
            memcpy(tmp, cong, nch * sizeof *tmp);
            place(g, n, c, mapped, ep_of, p, cand[k], tmp);
            double cost = max_congestion(g, tmp);
            if (best < 0 || cost < best_cost) {
                best = k;
                best_cost = cost;
            }
        }
        place(g, n, c, mapped, ep_of, p, cand[best], cong);
        ep_of[p] = cand[best];
        mapped[p] = 1;
        used[best] = 1;
        if (order) order[step] = p;
    }
out:
    free(cong);
    free(tmp);
    free(mapped);
    free(used);
    return rc;
}

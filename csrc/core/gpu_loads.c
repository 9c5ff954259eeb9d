/* Channel loads inside GPU nodes (gpu.h): one pass over the messages, each
   adding its bytes to the channels of its route(s) in its node(s). */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/gpu.h"

int topomap_gpu_node_check(const topomap_gpu_node *g)
{
    if (!g || g->nend < 1 || g->nchan < 0 || !g->route_ptr || (g->nchan && (!g->bandwidth || !g->route_chan)))
        return topomap_i_fail(TOPOMAP_EINVAL, "gpu node: missing endpoints, channels or routes");
    for (int32_t c = 0; c < g->nchan; c++)
        if (!(g->bandwidth[c] > 0) || g->bandwidth[c] > 1e300)
            return topomap_i_fail(TOPOMAP_EINVAL, "gpu node: channel %d has bandwidth %g, not finite > 0", (int)c,
                                  g->bandwidth[c]);
    int64_t pairs = (int64_t)g->nend * g->nend;
    if (g->route_ptr[0] != 0)
        return topomap_i_fail(TOPOMAP_EINVAL, "gpu node: route_ptr[0] is %lld, not 0", (long long)g->route_ptr[0]);
    for (int64_t r = 0; r < pairs; r++) {
        if (g->route_ptr[r + 1] < g->route_ptr[r])
            return topomap_i_fail(TOPOMAP_EINVAL, "gpu node: route_ptr decreases at pair %lld", (long long)r);
        for (int64_t k = g->route_ptr[r]; k < g->route_ptr[r + 1]; k++)
            if (g->route_chan[k] < 0 || g->route_chan[k] >= g->nchan)
                return topomap_i_fail(TOPOMAP_EINVAL, "gpu node: route of pair %lld uses channel %d of %d",
                                      (long long)r, (int)g->route_chan[k], (int)g->nchan);
    }
    return TOPOMAP_OK;
}

static void add_route(const topomap_gpu_node *g, int32_t a, int32_t b, double w, double *load)
{
    int64_t r = (int64_t)a * g->nend + b;
    for (int64_t k = g->route_ptr[r]; k < g->route_ptr[r + 1]; k++) load[g->route_chan[k]] += w;
}

int topomap_gpu_loads(const topomap_gpu_node *g, int32_t nic, const topomap_pattern *p, const int32_t *node_of,
                      const int32_t *ep_of, int32_t nnodes, double *load)
{
    int rc = topomap_gpu_node_check(g);
    if (rc) return rc;
    if (nic < 0 || nic >= g->nend)
        return topomap_i_fail(TOPOMAP_EINVAL, "gpu node: the network adapter %d is not an endpoint", (int)nic);
    if (nnodes < 1) return topomap_i_fail(TOPOMAP_EINVAL, "gpu loads: %d nodes", (int)nnodes);
    for (int32_t i = 0; i < p->n; i++) {
        if (node_of[i] < 0 || node_of[i] >= nnodes)
            return topomap_i_fail(TOPOMAP_EINVAL, "process %d is on node %d of %d", (int)i, (int)node_of[i],
                                  (int)nnodes);
        if (ep_of[i] < 0 || ep_of[i] >= g->nend)
            return topomap_i_fail(TOPOMAP_EINVAL, "process %d is on endpoint %d of %d", (int)i, (int)ep_of[i],
                                  (int)g->nend);
    }
    memset(load, 0, (size_t)nnodes * (size_t)g->nchan * sizeof *load);
    for (int32_t i = 0; i < p->n; i++) {
        double *mine = load + (size_t)node_of[i] * (size_t)g->nchan;
        for (int64_t k = p->indptr[i]; k < p->indptr[i + 1]; k++) {
            int32_t j = p->indices[k];
            double w = p->bytes[k];
            if (node_of[j] == node_of[i]) {
                add_route(g, ep_of[i], ep_of[j], w, mine);
            } else {
                add_route(g, ep_of[i], nic, w, mine);
                add_route(g, nic, ep_of[j], w, load + (size_t)node_of[j] * (size_t)g->nchan);
            }
        }
    }
    return TOPOMAP_OK;
}

/* Routing tables of the graph kind: destination-based forwarding tables
   by BFS, and the validated index of explicit per-pair routes.

   Model: InfiniBand static routing, where each switch holds a linear
   forwarding table (destination -> output port) computed by the subnet
   manager; OpenSM's min-hop engine takes minimum-hop paths and spreads
   destinations over the equal-cost ports (DESIGN.md §2 "graph" kind;
   Mirsadeghi thesis §3.3.4 feeds such static routes to the mapper as an
   N^2-line route file, which is the explicit-route form).

   Choices the sources leave open (see topomap/graph.h for the rules):
   - ties among minimum-hop links: lowest link id (SHORTEST) or the
     (dst mod count)-th by link id (DMODK), so routes depend on the graph
     and its link numbering only;
   - compute nodes relay traffic only in switchless graphs;
   - one table row per destination *node*: switches are never destinations;
   - explicit routes may revisit vertices and may pass through compute
     nodes (the file is trusted as the fabric's real routing), but must be a
     connected walk from the source node to the destination node; a node's
     route to itself may be listed only as the empty route. */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/graph.h"
#ifdef _OPENMP
#include <omp.h>
#endif

int topomap_graph_check(const topomap_graph_desc *g)
{
    if (g->nnodes < 1) return topomap_i_fail(TOPOMAP_EINVAL, "a graph network needs at least one node, got %d", (int)g->nnodes);
    if (g->nswitches < 0 || g->nlinks < 0)
        return topomap_i_fail(TOPOMAP_EINVAL, "a graph network cannot have %d switches and %d links", (int)g->nswitches,
                              (int)g->nlinks);
    if ((int64_t)g->nnodes + g->nswitches > INT32_MAX)
        return topomap_i_fail(TOPOMAP_EINVAL, "%d nodes + %d switches exceed the int32 vertex id range", (int)g->nnodes,
                              (int)g->nswitches);
    if (g->routing < TOPOMAP_ROUTING_SHORTEST || g->routing > TOPOMAP_ROUTING_TABLE)
        return topomap_i_fail(TOPOMAP_EINVAL, "unknown graph routing %d", (int)g->routing);
    int32_t V = g->nnodes + g->nswitches;
    for (int32_t l = 0; l < g->nlinks; l++) {
        if (g->src[l] < 0 || g->src[l] >= V || g->dst[l] < 0 || g->dst[l] >= V)
            return topomap_i_fail(TOPOMAP_EINVAL, "link %d joins vertex %d to vertex %d, outside [0, %d)", (int)l,
                                  (int)g->src[l], (int)g->dst[l], (int)V);
        if (g->src[l] == g->dst[l])
            return topomap_i_fail(TOPOMAP_EINVAL, "link %d is a loop at vertex %d", (int)l, (int)g->src[l]);
    }
    return TOPOMAP_OK;
}

/* Links grouped by the vertex key[l], in increasing link id within a
   group: ids[k] = the link, far[k] = its other end (either may be NULL; the
   BFS wants only the ends, in one array).  E <= INT32_MAX: int32 offsets. */
static void group_links(int32_t V, int32_t E, const int32_t *key, const int32_t *other, int32_t *ptr, int32_t *ids,
                        int32_t *far)
{
    memset(ptr, 0, ((size_t)V + 1) * sizeof *ptr);
    for (int32_t l = 0; l < E; l++) ptr[key[l] + 1]++;
    for (int32_t v = 0; v < V; v++) ptr[v + 1] += ptr[v];
    for (int32_t l = 0; l < E; l++) {
        int32_t k = ptr[key[l]]++;
        if (ids) ids[k] = l;
        if (far) far[k] = other[l];
    }
    for (int32_t v = V; v > 0; v--) ptr[v] = ptr[v - 1];
    ptr[0] = 0;
}

void topomap_graph_out_links(const topomap_graph_desc *g, int32_t *out_ptr, int32_t *out_link)
{
    group_links(g->nnodes + g->nswitches, g->nlinks, g->src, g->dst, out_ptr, out_link, NULL);
}

int topomap_graph_port_bytes(const topomap_graph_desc *g, int *bytes)
{
    int32_t V = g->nnodes + g->nswitches, *deg = calloc((size_t)V + 1, sizeof *deg), worst = 0, at = 0;
    if (!deg) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory counting the ports of %d vertices", (int)V);
    for (int32_t l = 0; l < g->nlinks; l++)
        if (++deg[g->src[l]] > worst) worst = deg[g->src[l]], at = g->src[l];
    free(deg);
    /* ports run 0..degree-1, so all ones stays free to mark "cannot reach" */
    *bytes = worst <= UINT8_MAX ? 1 : 2;
    if (worst > UINT16_MAX)
        return topomap_i_fail(TOPOMAP_EINVAL, "vertex %d has %d outgoing links; forwarding tables allow %d", (int)at,
                              (int)worst, UINT16_MAX);
    return TOPOMAP_OK;
}

typedef struct {
    const topomap_graph_desc *g;
    int32_t V;
    int nodes_relay, bytes;
    const int32_t *out_ptr, *in_ptr, *out_to, *in_from;
} bfs_graph;

static inline int relays(const bfs_graph *c, int32_t v) { return v >= c->g->nnodes || c->nodes_relay; }

static inline void put(const bfs_graph *c, void *row, int32_t v, int32_t port)
{
    if (c->bytes == 1) ((uint8_t *)row)[v] = (uint8_t)port;
    else ((uint16_t *)row)[v] = (uint16_t)port;
}

/* Table row of destination node `dst`; returns the lowest node that cannot
   reach dst (or -1) and sets *far to the longest route into dst. */
static int32_t table_row(const bfs_graph *c, int32_t dst, int32_t *dist, int32_t *queue, void *row, int32_t *far)
{
    const topomap_graph_desc *g = c->g;
    int32_t V = c->V, head = 0, tail = 0;
    for (int32_t v = 0; v < V; v++) dist[v] = -1;
    dist[dst] = 0;
    queue[tail++] = dst;
    while (head < tail) {
        int32_t u = queue[head++];
        if (u != dst && !relays(c, u)) continue; /* reachable, but nobody passes through it */
        for (int32_t k = c->in_ptr[u]; k < c->in_ptr[u + 1]; k++) {
            int32_t w = c->in_from[k];
            if (dist[w] < 0) {
                dist[w] = dist[u] + 1;
                queue[tail++] = w;
            }
        }
    }
    int32_t unreached = -1, longest = 0, none = c->bytes == 1 ? UINT8_MAX : UINT16_MAX;
    for (int32_t v = 0; v < V; v++) {
        put(c, row, v, none);
        if (v == dst || dist[v] < 0) {
            if (v < g->nnodes && v != dst && unreached < 0) unreached = v;
            continue;
        }
        if (v < g->nnodes && dist[v] > longest) longest = dist[v];
        /* ports leading one hop closer, in link-id order: the first, or the (dst mod count)-th */
        int32_t count = 0, first = c->out_ptr[v];
        for (int32_t k = first; k < c->out_ptr[v + 1]; k++) {
            int32_t t = c->out_to[k];
            count += dist[t] == dist[v] - 1 && (t == dst || relays(c, t));
        }
        int32_t pick = g->routing == TOPOMAP_ROUTING_DMODK ? dst % count : 0;
        for (int32_t k = first; k < c->out_ptr[v + 1]; k++) {
            int32_t t = c->out_to[k];
            if (dist[t] == dist[v] - 1 && (t == dst || relays(c, t)) && pick-- == 0) {
                put(c, row, v, k - first);
                break;
            }
        }
    }
    *far = longest;
    return unreached;
}

int topomap_graph_forwarding(const topomap_graph_desc *g, void *table, int port_bytes, int32_t *max_route)
{
    int rc = topomap_graph_check(g);
    if (rc) return rc;
    if (g->routing == TOPOMAP_ROUTING_TABLE)
        return topomap_i_fail(TOPOMAP_EINVAL, "explicit-route (table) graphs have no forwarding tables");
    if (port_bytes != 1 && port_bytes != 2)
        return topomap_i_fail(TOPOMAP_EINVAL, "forwarding table entries are 1 or 2 bytes, not %d", port_bytes);
    int32_t V = g->nnodes + g->nswitches, E = g->nlinks, N = g->nnodes;
    if ((int64_t)V * N * port_bytes > TOPOMAP_GRAPH_MAX_TABLE)
        return topomap_i_fail(TOPOMAP_EINVAL,
                              "forwarding tables of %d vertices x %d nodes need %lld MiB, above the %lld MiB limit "
                              "(use explicit routes for the pairs you need)",
                              (int)V, (int)N, (long long)((int64_t)V * N * port_bytes >> 20),
                              (long long)(TOPOMAP_GRAPH_MAX_TABLE >> 20));
    int T = 1;
#ifdef _OPENMP
    T = omp_get_max_threads();
    if (T > 64) T = 64;
    if ((int64_t)N * ((int64_t)V + E) < (1 << 20)) T = 1; /* not worth waking threads */
#endif
    int32_t *out_ptr = malloc(((size_t)V + 1) * sizeof *out_ptr), *in_ptr = malloc(((size_t)V + 1) * sizeof *in_ptr);
    int32_t *out_to = malloc((size_t)E * sizeof *out_to + 1), *in_from = malloc((size_t)E * sizeof *in_from + 1);
    int32_t *work = malloc((size_t)T * 2 * (size_t)V * sizeof *work);
    int32_t fail_dst[64], fail_src[64], far[64];
    if (!out_ptr || !in_ptr || !out_to || !in_from || !work) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory building forwarding tables for %d vertices", (int)V);
        goto cleanup;
    }
    group_links(V, E, g->src, g->dst, out_ptr, NULL, out_to);
    group_links(V, E, g->dst, g->src, in_ptr, NULL, in_from);
    bfs_graph c = {g, V, g->nswitches == 0, port_bytes, out_ptr, in_ptr, out_to, in_from};
    for (int t = 0; t < T; t++) fail_dst[t] = fail_src[t] = -1, far[t] = 0;
    /* Every thread finishes its destinations, so the pair named in an error
       (the lowest failing destination) does not depend on the thread count. */
#ifdef _OPENMP
#pragma omp parallel for num_threads(T) schedule(dynamic, 8)
#endif
    for (int32_t dst = 0; dst < N; dst++) {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        int32_t *dist = work + (size_t)t * 2 * V, f = 0;
        int32_t bad = table_row(&c, dst, dist, dist + V, (char *)table + (size_t)dst * V * port_bytes, &f);
        if (f > far[t]) far[t] = f;
        if (bad >= 0 && (fail_dst[t] < 0 || dst < fail_dst[t])) {
            fail_dst[t] = dst;
            fail_src[t] = bad;
        }
    }
    int32_t worst = -1, longest = 0;
    for (int t = 0; t < T; t++) {
        if (fail_dst[t] >= 0 && (worst < 0 || fail_dst[t] < fail_dst[worst])) worst = t;
        if (far[t] > longest) longest = far[t];
    }
    if (worst >= 0) {
        rc = topomap_i_fail(TOPOMAP_EINVAL, "graph network is disconnected: node %d cannot reach node %d%s",
                            (int)fail_src[worst], (int)fail_dst[worst],
                            g->nswitches ? " (with switches present, compute nodes do not relay traffic)" : "");
        goto cleanup;
    }
    *max_route = longest;
cleanup:
    free(out_ptr);
    free(in_ptr);
    free(out_to);
    free(in_from);
    free(work);
    return rc;
}

int64_t topomap_graph_index_size(int64_t npairs)
{
    int64_t s = 2;
    while (s < 2 * npairs) s <<= 1;
    return s;
}

/* One explicit route: nodes in range, known links, a connected walk. */
static int check_route(const topomap_graph_desc *g, int64_t k)
{
    int32_t a = g->pair_src[k], b = g->pair_dst[k], N = g->nnodes;
    int64_t lo = g->route_ptr[k], hi = g->route_ptr[k + 1];
    if (a < 0 || a >= N || b < 0 || b >= N)
        return topomap_i_fail(TOPOMAP_EINVAL, "route %d -> %d (entry %lld) leaves the compute nodes, which are 0..%d",
                              (int)a, (int)b, (long long)k, (int)N - 1);
    if (hi - lo > INT32_MAX) return topomap_i_fail(TOPOMAP_EINVAL, "route %d -> %d is longer than 2^31 links", (int)a, (int)b);
    if (a == b) {
        if (hi > lo) return topomap_i_fail(TOPOMAP_EINVAL, "route %d -> %d must be empty (same node)", (int)a, (int)b);
        return TOPOMAP_OK;
    }
    if (hi == lo) return topomap_i_fail(TOPOMAP_EINVAL, "route %d -> %d is empty", (int)a, (int)b);
    int32_t at = a;
    for (int64_t i = lo; i < hi; i++) {
        int32_t l = g->route_links[i];
        if (l < 0 || l >= g->nlinks)
            return topomap_i_fail(TOPOMAP_EINVAL, "route %d -> %d: link %d (hop %lld) does not exist (links are 0..%d)",
                                  (int)a, (int)b, (int)l, (long long)(i - lo + 1), (int)g->nlinks - 1);
        if (g->src[l] != at) {
            if (i == lo)
                return topomap_i_fail(TOPOMAP_EINVAL, "route %d -> %d starts with link %d, which leaves vertex %d, not node %d",
                                      (int)a, (int)b, (int)l, (int)g->src[l], (int)a);
            return topomap_i_fail(TOPOMAP_EINVAL,
                                  "route %d -> %d is broken at hop %lld: link %d leaves vertex %d, but link %d arrived at vertex %d",
                                  (int)a, (int)b, (long long)(i - lo + 1), (int)l, (int)g->src[l],
                                  (int)g->route_links[i - 1], (int)at);
        }
        at = g->dst[l];
    }
    if (at != b)
        return topomap_i_fail(TOPOMAP_EINVAL, "route %d -> %d ends at vertex %d, not node %d", (int)a, (int)b, (int)at, (int)b);
    return TOPOMAP_OK;
}

int topomap_graph_route_index(const topomap_graph_desc *g, int64_t *slots, int64_t nslots, int32_t *max_route)
{
    int rc = topomap_graph_check(g);
    if (rc) return rc;
    if (g->npairs < 0) return topomap_i_fail(TOPOMAP_EINVAL, "%lld explicit routes", (long long)g->npairs);
    if (g->route_ptr[0] != 0) return topomap_i_fail(TOPOMAP_EINVAL, "route offsets must start at 0");
    for (int64_t k = 0; k < g->npairs; k++)
        if (g->route_ptr[k + 1] < g->route_ptr[k])
            return topomap_i_fail(TOPOMAP_EINVAL, "route offsets decrease at route %lld", (long long)k);
    for (int64_t i = 0; i < nslots; i++) slots[i] = -1;
    int32_t longest = 0;
    for (int64_t k = 0; k < g->npairs; k++) {
        rc = check_route(g, k);
        if (rc) return rc;
        int64_t at = topomap_graph_route_find(slots, nslots, g->pair_src, g->pair_dst, g->pair_src[k], g->pair_dst[k]);
        if (at >= 0)
            return topomap_i_fail(TOPOMAP_EINVAL, "route %d -> %d is given twice (routes %lld and %lld)",
                                  (int)g->pair_src[k], (int)g->pair_dst[k], (long long)at, (long long)k);
        slots[-at - 1] = k;
        int32_t len = (int32_t)(g->route_ptr[k + 1] - g->route_ptr[k]);
        if (len > longest) longest = len;
    }
    *max_route = longest;
    return TOPOMAP_OK;
}

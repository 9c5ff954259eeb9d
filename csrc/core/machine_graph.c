/* Arbitrary switch graphs (kind "graph"): the routing oracle over tables.

   Vertices 0..nnodes-1 are the compute nodes, the switches follow; link i
   goes from src[i] to dst[i].  Two ways to route (topomap/graph.h):
   - forwarding tables (SHORTEST, DMODK): port[dst * nvertices + v], 1 or 2
     bytes; a route is the walk from the source that follows the
     destination's row, so route_count walks it too (O(hops), no N x N hop
     table);
   - explicit routes (TABLE): a hash index from (src, dst) to the route's
     links; a pair without a route answers -1.
   Distance = hops; every inter-node pair is at network level 1, because an
   arbitrary graph has no levels the way a tree has (choice: the caller who
   wants switch levels uses the fat-tree kind). */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/graph.h"
#include "machine_internal.h"

typedef struct {
    int32_t nvertices;
    int32_t *from, *to;                  /* link ends */
    void *port;                          /* tables: nnodes x nvertices ports */
    int32_t *out_ptr, *out_link, *out_to; /* port p of v: link out_link[out_ptr[v] + p] to vertex out_to[...] */
    int64_t npairs, nslots;              /* explicit routes */
    int32_t *pair_src, *pair_dst, *links;
    int64_t *ptr, *slots;
} graph_net;

/* The walk a -> b (links into out unless NULL); `wide` is a constant at
   every call, so each entry width gets its own loop. */
static inline int32_t walk(const graph_net *g, int32_t a, int32_t b, int32_t *out, int wide)
{
    size_t row = (size_t)b * (size_t)g->nvertices;
    int32_t n = 0;
    for (int32_t v = a; v != b; n++) {
        size_t at = row + (size_t)v;
        int32_t k = g->out_ptr[v] + (wide ? ((const uint16_t *)g->port)[at] : ((const uint8_t *)g->port)[at]);
        if (out) out[n] = g->out_link[k];
        v = g->out_to[k];
    }
    return n;
}

static int32_t lft8_route(const topomap_machine *m, int32_t a, int32_t b, int32_t *out) { return walk(m->net, a, b, out, 0); }
static int32_t lft16_route(const topomap_machine *m, int32_t a, int32_t b, int32_t *out) { return walk(m->net, a, b, out, 1); }
static int32_t lft8_count(const topomap_machine *m, int32_t a, int32_t b) { return walk(m->net, a, b, NULL, 0); }
static int32_t lft16_count(const topomap_machine *m, int32_t a, int32_t b) { return walk(m->net, a, b, NULL, 1); }

static int64_t find(const graph_net *g, int32_t a, int32_t b)
{
    return topomap_graph_route_find(g->slots, g->nslots, g->pair_src, g->pair_dst, a, b);
}

static int32_t table_route(const topomap_machine *m, int32_t a, int32_t b, int32_t *out)
{
    const graph_net *g = m->net;
    int64_t k = find(g, a, b);
    if (k < 0) return -1;
    int32_t n = (int32_t)(g->ptr[k + 1] - g->ptr[k]);
    memcpy(out, g->links + g->ptr[k], (size_t)n * sizeof *out);
    return n;
}

static int32_t table_count(const topomap_machine *m, int32_t a, int32_t b)
{
    const graph_net *g = m->net;
    int64_t k = find(g, a, b);
    return k < 0 ? -1 : (int32_t)(g->ptr[k + 1] - g->ptr[k]);
}

static double lft8_distance(const topomap_machine *m, int32_t a, int32_t b) { return (double)lft8_count(m, a, b); }
static double lft16_distance(const topomap_machine *m, int32_t a, int32_t b) { return (double)lft16_count(m, a, b); }
static double table_distance(const topomap_machine *m, int32_t a, int32_t b) { return (double)table_count(m, a, b); }

static int32_t graph_level(const topomap_machine *m, int32_t a, int32_t b)
{
    (void)m; (void)a; (void)b;
    return 1;
}

static void graph_link_ends(const topomap_machine *m, int32_t link, int32_t *from, int32_t *to)
{
    const graph_net *g = m->net;
    *from = g->from[link];
    *to = g->to[link];
}

static void graph_destroy(void *net)
{
    graph_net *g = net;
    if (!g) return;
    free(g->from);
    free(g->to);
    free(g->port);
    free(g->out_ptr);
    free(g->out_link);
    free(g->out_to);
    free(g->pair_src);
    free(g->pair_dst);
    free(g->links);
    free(g->ptr);
    free(g->slots);
    free(g);
}

static const struct topomap_i_net_ops lft8_ops = {
    "graph", lft8_route, lft8_count, lft8_distance, graph_level, NULL, graph_link_ends, 1, graph_destroy,
};
static const struct topomap_i_net_ops lft16_ops = {
    "graph", lft16_route, lft16_count, lft16_distance, graph_level, NULL, graph_link_ends, 1, graph_destroy,
};
static const struct topomap_i_net_ops table_ops = {
    "graph", table_route, table_count, table_distance, graph_level, NULL, graph_link_ends, 1, graph_destroy,
};

/* Copies of the explicit routes and their index. */
static int build_table(graph_net *net, const topomap_graph_desc *g, int32_t *max_route)
{
    int64_t P = g->npairs;
    if (P < 0 || P > (INT64_C(1) << 40)) return topomap_i_fail(TOPOMAP_EINVAL, "%lld explicit routes", (long long)P);
    int64_t total = g->route_ptr[P];
    if (total < 0) return topomap_i_fail(TOPOMAP_EINVAL, "explicit routes hold %lld links", (long long)total);
    net->npairs = P;
    net->nslots = topomap_graph_index_size(P);
    net->pair_src = malloc((size_t)P * sizeof *net->pair_src + 1);
    net->pair_dst = malloc((size_t)P * sizeof *net->pair_dst + 1);
    net->ptr = malloc(((size_t)P + 1) * sizeof *net->ptr);
    net->links = malloc((size_t)total * sizeof *net->links + 1);
    net->slots = malloc((size_t)net->nslots * sizeof *net->slots);
    if (!net->pair_src || !net->pair_dst || !net->ptr || !net->links || !net->slots)
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory storing %lld explicit routes", (long long)P);
    int rc = topomap_graph_route_index(g, net->slots, net->nslots, max_route);
    if (rc) return rc;
    memcpy(net->ptr, g->route_ptr, ((size_t)P + 1) * sizeof *net->ptr);
    if (P) {
        memcpy(net->pair_src, g->pair_src, (size_t)P * sizeof *net->pair_src);
        memcpy(net->pair_dst, g->pair_dst, (size_t)P * sizeof *net->pair_dst);
    }
    if (total) memcpy(net->links, g->route_links, (size_t)total * sizeof *net->links);
    return TOPOMAP_OK;
}

/* Port tables and the out-link lists they index. */
static int build_lft(graph_net *net, const topomap_graph_desc *g, int *bytes, int32_t *max_route)
{
    int32_t V = net->nvertices, E = g->nlinks;
    int rc = topomap_graph_port_bytes(g, bytes);
    if (rc) return rc;
    if ((int64_t)V * g->nnodes * *bytes > TOPOMAP_GRAPH_MAX_TABLE)
        return topomap_graph_forwarding(g, NULL, *bytes, max_route); /* fails with the size message */
    net->out_ptr = malloc(((size_t)V + 1) * sizeof *net->out_ptr);
    net->out_link = malloc((size_t)E * sizeof *net->out_link + 1);
    net->out_to = malloc((size_t)E * sizeof *net->out_to + 1);
    net->port = malloc((size_t)V * (size_t)g->nnodes * (size_t)*bytes);
    if (!net->out_ptr || !net->out_link || !net->out_to || !net->port)
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %d x %d forwarding tables", (int)g->nnodes, (int)V);
    topomap_graph_out_links(g, net->out_ptr, net->out_link);
    for (int32_t k = 0; k < E; k++) net->out_to[k] = g->dst[net->out_link[k]];
    return topomap_graph_forwarding(g, net->port, *bytes, max_route);
}

int topomap_machine_create_graph(const topomap_node_tree *tree, const topomap_graph_desc *g, topomap_machine **out)
{
    *out = NULL;
    int rc = topomap_graph_check(g);
    if (rc) return rc;
    int32_t V = g->nnodes + g->nswitches, max_route = 0;
    topomap_machine *m = NULL;
    rc = topomap_i_machine_new(tree, g->nnodes, &m); /* checks the node tree before the BFS work */
    if (rc) return rc;
    graph_net *net = calloc(1, sizeof *net);
    if (!net) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    net->nvertices = V;
    net->from = malloc((size_t)g->nlinks * sizeof *net->from + 1);
    net->to = malloc((size_t)g->nlinks * sizeof *net->to + 1);
    if (!net->from || !net->to) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory storing %d links", (int)g->nlinks);
        goto cleanup;
    }
    if (g->nlinks) { /* memcpy from NULL is undefined even for 0 bytes */
        memcpy(net->from, g->src, (size_t)g->nlinks * sizeof *net->from);
        memcpy(net->to, g->dst, (size_t)g->nlinks * sizeof *net->to);
    }
    int bytes = 0;
    if (g->routing == TOPOMAP_ROUTING_TABLE)
        rc = build_table(net, g, &max_route);
    else
        rc = build_lft(net, g, &bytes, &max_route);
    if (rc) goto cleanup;
    m->ops = g->routing == TOPOMAP_ROUTING_TABLE ? &table_ops : bytes == 1 ? &lft8_ops : &lft16_ops;
    m->net = net;
    net = NULL;
    m->nlinks = g->nlinks;
    m->nvertices = V;
    m->max_route = max_route;
    m->net_levels = 1;
    if (g->capacity) rc = topomap_machine_set_capacities(m, g->capacity);
    if (rc) goto cleanup;
    *out = m;
    m = NULL;
cleanup:
    graph_destroy(net);
    topomap_machine_destroy(m);
    return rc;
}

/* The machine and its routing oracle (DESIGN.md §2).

   A machine is a network of `nnodes` compute nodes, each holding the same node
   tree of `pes_per_node` processing elements (PEs).  PE id = node id *
   pes_per_node + local index.  Every mapper and metric talks to the machine
   only through the functions below; only csrc/core/machine*.c know which kind
   of network it is.  Structured kinds compute routes on the fly. */
#ifndef TOPOMAP_MACHINE_H
#define TOPOMAP_MACHINE_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct topomap_machine topomap_machine;

/* Node tree: `nlevels` grouping levels above the PEs, bottom-up; the last is
   the node root.  groups[k * pes_per_node + i] = id of local PE i's ancestor
   at level k (groups of level nlevels-1 are all 0).  costs[k] = distance
   between two PEs whose lowest common ancestor is at level k.  Copied. */
typedef struct {
    int32_t pes_per_node;
    int32_t nlevels;
    const int32_t *groups;
    const double *costs;
} topomap_node_tree;

/* One compute node, no network. */
int topomap_machine_create_single(const topomap_node_tree *tree, topomap_machine **out);

/* n-D torus (wrap[d] != 0) or mesh (wrap[d] == 0) with dimension-order
   routing.  Node id = x0 + d0*(x1 + d1*(x2 + ...)).  Link id =
   (node*ndims + dim)*2 + dir, dir 0 = towards +1, 1 = towards -1.  On a tie
   (delta == size/2) the route goes +.  Distance between nodes = hops. */
int topomap_machine_create_torus(const topomap_node_tree *tree, int32_t ndims,
                                 const int32_t *dims, const uint8_t *wrap,
                                 topomap_machine **out);

/* Tree network above the nodes: arities bottom-up (arity[0] nodes per
   level-1 switch, ..., level `nlevels` is the root).  Distance between nodes
   whose ancestors meet at level h is costs[h-1].  Link ids: the edge of
   entity e at level l to its parent is offset[l] + e; up link 2*edge, down
   link 2*edge + 1. */
int topomap_machine_create_tree(const topomap_node_tree *tree, int32_t nlevels,
                                const int32_t *arity, const double *costs,
                                topomap_machine **out);

/* Dragonfly (Kim et al. 2008): g groups of a all-to-all routers, h global
   links and p nodes per router, global links by `arrangement`, minimal
   routing.  Node n is on router n / p; routers are vertices nnodes + id.
   Link ids, arrangements and the parallel-link rule: machine_dragonfly.c. */
enum { TOPOMAP_DRAGONFLY_ABSOLUTE = 0, TOPOMAP_DRAGONFLY_RELATIVE = 1, TOPOMAP_DRAGONFLY_CIRCULANT = 2 };
int topomap_machine_create_dragonfly(const topomap_node_tree *tree, int32_t g, int32_t a, int32_t h, int32_t p,
                                     int32_t arrangement, topomap_machine **out);

/* Binary hypercube of dimension 1..26, e-cube routing (lowest differing bit
   first).  Link id = node*dim + bit. */
int topomap_machine_create_hypercube(const topomap_node_tree *tree, int32_t dim, topomap_machine **out);

/* Extended generalized fat tree XGFT(h; m; w) with p[i] parallel cables per
   child-parent pair (arrays bottom-up, level 1 = leaf switches), routed up
   to the lowest common ancestor and down; the up port is chosen by
   destination (D-mod-k) or is always the lowest (shortest).  capacity[i]
   (NULL = all 1) applies to every cable of level i+1.  Nodes are vertices
   0..N-1, switches follow level by level.  Link ids and the routing rule:
   machine_fattree.c. */
enum { TOPOMAP_FATTREE_DMODK = 0, TOPOMAP_FATTREE_SHORTEST = 1 };
int topomap_machine_create_fattree(const topomap_node_tree *tree, int32_t nlevels, const int32_t *m, const int32_t *w,
                                   const int32_t *p, const double *capacity, int32_t routing, topomap_machine **out);

/* Arbitrary graph (kind "graph", machine_graph.c): vertices 0..nnodes-1 are
   the compute nodes, nnodes..nnodes+nswitches-1 the switches; directed link
   i goes from src[i] to dst[i] with capacity[i] (NULL = all 1).  Routing:
   SHORTEST and DMODK build destination-based forwarding tables by one BFS
   per destination node (route_build.c; topomap/graph.h has the tie-break
   rules and the size limit); TABLE uses the npairs explicit routes
   route_links[route_ptr[k] .. route_ptr[k+1]) from node pair_src[k] to
   node pair_dst[k] and nothing else: a pair without a route has route and
   route_count -1, which the evaluator reports as an error. */
enum { TOPOMAP_ROUTING_SHORTEST = 0, TOPOMAP_ROUTING_DMODK = 1, TOPOMAP_ROUTING_TABLE = 2 };
typedef struct {
    int32_t nnodes, nswitches, nlinks;
    const int32_t *src, *dst;
    const double *capacity;
    int32_t routing;
    int64_t npairs;
    const int32_t *pair_src, *pair_dst;
    const int64_t *route_ptr;
    const int32_t *route_links;
} topomap_graph_desc;
int topomap_machine_create_graph(const topomap_node_tree *tree, const topomap_graph_desc *g, topomap_machine **out);

void topomap_machine_destroy(topomap_machine *m);

int32_t topomap_machine_nnodes(const topomap_machine *m);
int32_t topomap_machine_npes(const topomap_machine *m);
int32_t topomap_machine_pes_per_node(const topomap_machine *m);
int32_t topomap_machine_nlinks(const topomap_machine *m);
/* Upper bound of route_count over all node pairs (the network diameter for
   the structured kinds). */
int32_t topomap_machine_max_route(const topomap_machine *m);
/* Number of distinct values level_of can return: node tree levels + network
   levels + 1 (level 0 = same PE). */
int32_t topomap_machine_nlevels(const topomap_machine *m);

/* The network as a graph: vertices 0..nnodes-1 are the compute nodes, the
   kind's switches (if any) follow.  Every real link joins two vertices. */
int32_t topomap_machine_nvertices(const topomap_machine *m);
/* Endpoints of a directed link; returns 0, or TOPOMAP_EINVAL if the id is
   not a real link (see link_exists). */
int topomap_machine_link_ends(const topomap_machine *m, int32_t link, int32_t *from, int32_t *to);

/* Link capacities (bytes/s or relative units), length nlinks, all > 0.
   Defaults to 1.  Copied. */
int topomap_machine_set_capacities(topomap_machine *m, const double *cap);
double topomap_machine_link_capacity(const topomap_machine *m, int32_t link);
/* 1 if the link exists (mesh boundary and size-1 dimension ids do not). */
int topomap_machine_link_exists(const topomap_machine *m, int32_t link);

static inline int32_t topomap_machine_node_of(const topomap_machine *m, int32_t pe);
/* Number of links on the route between two nodes (0 if equal). */
int32_t topomap_machine_route_count(const topomap_machine *m, int32_t node_a, int32_t node_b);
/* Directed link ids of the route, in order; returns the count.  `out` must
   hold max_route entries. */
int32_t topomap_machine_route(const topomap_machine *m, int32_t node_a, int32_t node_b,
                              int32_t *out);
/* QAP distance between two PEs (0 if equal). */
double topomap_machine_distance(const topomap_machine *m, int32_t pe_a, int32_t pe_b);
/* QAP distance between PEs of the nodes node_a and node_b: the network's
   distance between the nodes (0 if equal). */
double topomap_machine_node_distance(const topomap_machine *m, int32_t node_a, int32_t node_b);
/* Level of the lowest common ancestor: 0 same PE, 1..L node tree levels,
   L+1.. network levels. */
int32_t topomap_machine_level_of(const topomap_machine *m, int32_t pe_a, int32_t pe_b);

/* Everything the evaluator needs about one PE pair in one call: the route
   between their nodes (into `out`, max_route entries), its hop count (the
   return value), the QAP distance and the LCA level. */
int32_t topomap_machine_pair(const topomap_machine *m, int32_t pe_a, int32_t pe_b, int32_t *out,
                             double *distance, int32_t *level);

/* ---- inline part: hot, identical for every kind ---- */
struct topomap_i_machine_head {
    int32_t pes_per_node;
    uint64_t pes_magic; /* UINT64_MAX / pes_per_node + 1: division by multiplication */
};
static inline int32_t topomap_machine_node_of(const topomap_machine *m, int32_t pe)
{
    const struct topomap_i_machine_head *h = (const struct topomap_i_machine_head *)(const void *)m;
    return h->pes_per_node == 1 ? pe : (int32_t)(((__uint128_t)h->pes_magic * (uint32_t)pe) >> 64);
}

#ifdef __cplusplus
}
#endif
#endif

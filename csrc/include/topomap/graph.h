/* Routing tables of the graph machine kind (csrc/core/route_build.c).

   The graph is described by topomap_graph_desc (topomap/machine.h).  Two
   rules hold for every routing:

   - Who relays: switches always forward traffic; compute nodes forward only
     in a switchless graph (a direct network such as a circulant or a ring).
     With switches present, a node is a host (an InfiniBand HCA does not
     forward), so no route passes through a node it does not start or end at.
   - Forwarding is destination-based (the InfiniBand linear forwarding table
     model): entry [dst * nvertices + v] of the table is the port a message
     for node dst leaves vertex v by, and the route a -> b follows the table
     of b from a.  Port p of v is v's p-th outgoing link in increasing link
     id (topomap_graph_out_links); entries are 1 byte when no vertex has
     more than 255 outgoing links, else 2 bytes (a 4x / 2x saving over link
     ids that keeps tables of a few thousand nodes in cache).

   TOPOMAP_ROUTING_SHORTEST: among the links of v that start a minimum-hop
   path to dst, the lowest link id.
   TOPOMAP_ROUTING_DMODK: among those links, sorted by link id, the
   (dst mod count)-th, count being their number (destination-based spreading
   over equal-cost paths, as OpenSM's min-hop engine spreads LIDs over
   ports; unlike OpenSM it balances by destination id, not by port usage
   counters, so the result depends only on the graph).
   Both build the tables with one BFS per destination node over the reversed
   links: O(nnodes * (nvertices + nlinks)) time, nvertices x nnodes entries
   of memory, refused above TOPOMAP_GRAPH_MAX_TABLE bytes (1 GiB). */
#ifndef TOPOMAP_GRAPH_H
#define TOPOMAP_GRAPH_H
#include <stdint.h>
#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

#define TOPOMAP_GRAPH_MAX_TABLE (INT64_C(1) << 30)

/* Counts, vertex ids of every link, no self-loops, routing kind; names the
   first bad link. */
int topomap_graph_check(const topomap_graph_desc *g);

/* Outgoing links of every vertex in link-id order: port p of vertex v is
   out_link[out_ptr[v] + p] (out_ptr: nvertices + 1, out_link: nlinks). */
void topomap_graph_out_links(const topomap_graph_desc *g, int32_t *out_ptr, int32_t *out_link);

/* Bytes per table entry (1 or 2, see above); fails when a vertex has more
   than 65535 outgoing links. */
int topomap_graph_port_bytes(const topomap_graph_desc *g, int *bytes);

/* Forwarding tables (SHORTEST or DMODK) into `table` (nnodes * nvertices
   entries of port_bytes, all ones where a vertex cannot reach dst) and the
   longest route between two nodes into *max_route.  Fails naming a pair of
   nodes when one cannot reach the other. */
int topomap_graph_forwarding(const topomap_graph_desc *g, void *table, int port_bytes, int32_t *max_route);

/* Open-addressing index of the explicit routes (TABLE): slots (nslots =
   topomap_graph_index_size(npairs) entries) receive route numbers, -1 for
   empty slots.  Validates every route (nodes in range, known links, a
   connected walk from its source node to its destination node, each pair
   once) and sets *max_route to the longest. */
int64_t topomap_graph_index_size(int64_t npairs);
int topomap_graph_route_index(const topomap_graph_desc *g, int64_t *slots, int64_t nslots, int32_t *max_route);

/* Route number of the pair (a, b) in an index; when absent, -(s + 1) for
   the free slot s where it would be inserted. */
static inline int64_t topomap_graph_route_find(const int64_t *slots, int64_t nslots, const int32_t *pair_src,
                                               const int32_t *pair_dst, int32_t a, int32_t b)
{
    uint64_t x = (((uint64_t)(uint32_t)a << 32) | (uint32_t)b) * UINT64_C(0x9E3779B97F4A7C15);
    uint64_t mask = (uint64_t)nslots - 1, i = (x ^ (x >> 29)) & mask;
    for (int64_t k; (k = slots[i]) >= 0; i = (i + 1) & mask)
        if (pair_src[k] == a && pair_dst[k] == b) return k;
    return -(int64_t)i - 1;
}

#ifdef __cplusplus
}
#endif
#endif

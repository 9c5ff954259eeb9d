/* What machine.c shares with the network kinds (machine_*.c) and nobody else. */
#ifndef TOPOMAP_MACHINE_INTERNAL_H
#define TOPOMAP_MACHINE_INTERNAL_H
#include "topomap/machine.h"

struct topomap_i_net_ops {
    const char *name;
    int32_t (*route)(const topomap_machine *m, int32_t a, int32_t b, int32_t *out);
    int32_t (*route_count)(const topomap_machine *m, int32_t a, int32_t b);
    /* Network distance and level (1..net_levels) of two different nodes. */
    double (*distance)(const topomap_machine *m, int32_t a, int32_t b);
    int32_t (*level)(const topomap_machine *m, int32_t a, int32_t b);
    int (*link_exists)(const topomap_machine *m, int32_t link);
    /* Endpoints (vertex ids) of an existing link. */
    void (*link_ends)(const topomap_machine *m, int32_t link, int32_t *from, int32_t *to);
    /* Non-zero when the network distance is the hop count (no distance call needed). */
    int distance_is_hops;
    void (*destroy)(void *net);
};

struct topomap_machine {
    struct topomap_i_machine_head head; /* must stay first: node_of reads it */
    int32_t nnodes, npes, nlinks, max_route, net_levels;
    int32_t nvertices; /* nnodes + switches; set by the kind */
    int32_t tree_levels;
    int32_t *groups; /* tree_levels * pes_per_node */
    double *costs;   /* tree_levels */
    double *capacity; /* nlinks, or NULL for all 1 */
    const struct topomap_i_net_ops *ops;
    void *net;
};

/* Allocate a machine with a copy of the node tree; the kind fills the rest. */
int topomap_i_machine_new(const topomap_node_tree *tree, int32_t nnodes, topomap_machine **out);

#endif

/* Internal: what the three LibTopoMap mappers (map_greedy.c,
   map_recursive.c, map_rcm.c; Hoefler & Snir, ICS 2011) share.

   - The physical graph: the machine's network as a graph over its vertices
     (compute nodes 0..nnodes-1, then switches), built from the links
     through topomap_machine_link_ends, so that every machine kind works
     through the routing oracle.
   - The node-level problem after the multicore step ("as in LibTopoMap":
     topomap_group_by_node, then the nodal pattern between the groups), with
     the bookkeeping that keeps every partial group -> node assignment
     completable when the allocation's nodes offer different slot counts.
   - Progress in phases, with a cancel check every TOPOMAP_I_TICK units of
     work. */
#ifndef TOPOMAP_MAP_PHYSGRAPH_H
#define TOPOMAP_MAP_PHYSGRAPH_H
#include <stdint.h>
#include "topomap/machine.h"
#include "topomap/map.h"
#include "topomap/partition.h"
#include "topomap/pattern.h"

/* The network as a graph.  Undirected CSR (rows sorted, no duplicates or
   self loops; a topomap_ugraph with vwgt NULL): edge {u, v} weighs the summed
   capacity of every link between u and v, both directions.  Directed view:
   the links leaving vertex v are olink[ostart[v] .. ostart[v+1]) (by link
   id), reaching oto[]. */
typedef struct {
    int32_t nv;
    int64_t *xadj;
    int32_t *adj;
    double *wgt;
    int64_t *ostart;
    int32_t *olink;
    int32_t *oto;
} topomap_i_physgraph;

int topomap_i_physgraph_build(const topomap_machine *m, topomap_i_physgraph *g);
void topomap_i_physgraph_free(topomap_i_physgraph *g);
static inline topomap_ugraph topomap_i_physgraph_view(const topomap_i_physgraph *g)
{
    topomap_ugraph u = {g->nv, g->xadj, g->adj, g->wgt, NULL};
    return u;
}

/* Progress of one mapper call: the current phase maps its own fraction
   0..1 onto lo..hi of the whole call. */
#define TOPOMAP_I_TICK ((int64_t)1 << 16)
typedef struct {
    const topomap_run_options *run;
    const char *what; /* mapper name, for the cancel message */
    double lo, hi;
    int64_t work, next;
} topomap_i_ticker;

/* Call the progress callback now; TOPOMAP_ECANCELED if it asks to stop. */
int topomap_i_report(topomap_i_ticker *t, double fraction);
/* Count `units` of work; report only once TOPOMAP_I_TICK units have passed. */
int topomap_i_tick(topomap_i_ticker *t, int64_t units, double fraction);
/* A progress callback for inner calls (the partitioner): ctx is a ticker. */
int topomap_i_ticker_cb(void *ctx, double fraction);

/* The node-level problem.  Groups g in [0, k) hold size[g] processes; the
   nodal pattern q (directed, topomap_pattern_quotient) and its C + C^T
   (xadj/adj/wgt, a topomap_ugraph over the k groups).  Slot classes: the
   distinct slot counts of the allocation's nodes, largest first; a node of
   class c can hold any group of class >= c (group_class[g] = the last
   class whose slots hold size[g]).  slack[c] = free nodes minus unplaced
   groups among classes 0..c; an assignment stays completable exactly
   while every slack[c] >= 0 (Hall's condition for these nested sets). */
typedef struct {
    topomap_alloc_nodes *an;
    int32_t n, k;
    int32_t *group; /* n */
    int64_t *size;  /* k */
    int64_t *qindptr;
    int32_t *qindices;
    double *qbytes;
    int64_t *xadj;
    int32_t *adj;
    double *wgt;
    int32_t nclass;
    int64_t *class_slots;   /* nclass, decreasing */
    int32_t *node_class;    /* an->nnodes */
    int32_t *group_class;   /* k */
    int64_t *slack;         /* nclass */
    int32_t *node_of_group; /* k: allocation node, -1 while unplaced */
    int32_t *group_of_node; /* an->nnodes: -1 while free */
} topomap_i_nodemap;

/* Allocation nodes, the multicore step and the nodal pattern.  When every
   node holds one process the groups are the processes themselves (the
   partitioner would only relabel them).  The ticker's lo..hi covers the
   grouping. */
int topomap_i_nodemap_create(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc,
                             int32_t nalloc, int32_t capacity, topomap_i_ticker *t, topomap_i_nodemap *nm);
void topomap_i_nodemap_free(topomap_i_nodemap *nm);
static inline topomap_pattern topomap_i_nodemap_quotient(const topomap_i_nodemap *nm)
{
    topomap_pattern q = {nm->k, nm->qindptr, nm->qindices, nm->qbytes};
    return q;
}
static inline topomap_ugraph topomap_i_nodemap_graph(const topomap_i_nodemap *nm)
{
    topomap_ugraph u = {nm->k, nm->xadj, nm->adj, nm->wgt, NULL};
    return u;
}
/* Unplace every group. */
void topomap_i_nodemap_reset(topomap_i_nodemap *nm);
/* 1 if allocation node j is free, can hold group g and placing g there
   leaves the unplaced groups placeable. */
int topomap_i_nodemap_fits(const topomap_i_nodemap *nm, int32_t g, int32_t j);
void topomap_i_nodemap_place(topomap_i_nodemap *nm, int32_t g, int32_t j);
/* Every group placed: processes onto their node's PEs in rank order. */
int topomap_i_nodemap_finish(const topomap_i_nodemap *nm, int32_t *pe_of);

/* vidx[v] = allocation node index of network vertex v, or -1 (caller-owned, nv). */
void topomap_i_nodemap_vertex_index(const topomap_i_nodemap *nm, int32_t nv, int32_t *vidx);

#endif

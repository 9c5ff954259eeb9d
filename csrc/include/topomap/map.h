/* Mappers.  Each writes pe_of[0..n) (caller-owned) for the PEs of an
   allocation `alloc[0..nalloc)`, in allocation order, with at most
   `capacity` processes per PE. */
#ifndef TOPOMAP_MAP_H
#define TOPOMAP_MAP_H
#include <stdint.h>
#include "machine.h"
#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* block: process i -> alloc[i / capacity] (fills each PE, in allocation order). */
int topomap_map_block(int32_t n, const int32_t *alloc, int32_t nalloc, int32_t capacity,
                      int32_t *pe_of);
/* cyclic: round robin over the allocation's nodes (in order of first
   appearance), taking each node's allocated PEs in allocation order. */
int topomap_map_cyclic(const topomap_machine *m, int32_t n, const int32_t *alloc,
                       int32_t nalloc, int32_t capacity, int32_t *pe_of);
/* random: block mapping onto a seeded random permutation of the slots. */
int topomap_map_random(int32_t n, const int32_t *alloc, int32_t nalloc, int32_t capacity,
                       uint64_t seed, int32_t *pe_of);

/* ------------------------------------------------------------------ */
/* What every searching mapper shares.                                 */

/* Options common to every long-running mapper (DESIGN.md §5). */
typedef struct {
    uint64_t seed; /* same seed, same mapping */
    /* Called now and then with the fraction done; non-zero cancels the
       call, which then returns TOPOMAP_ECANCELED.  NULL: never called. */
    int (*progress)(void *ctx, double fraction);
    void *progress_ctx;
} topomap_run_options;

/* The allocation seen node by node: the distinct nodes of the allocation
   in order of first appearance; node j offers slots[j] = capacity x (its
   allocated PEs) process slots.  Node-level mappers (PTRAM, LibTopoMap,
   Kumar's hybrid, APHiD) map groups of processes onto these nodes; a node
   stands for itself in node-level evaluations through first_pe[j]. */
typedef struct {
    int32_t nnodes;
    int32_t capacity;
    int32_t *node;     /* nnodes: machine node ids */
    int32_t *first_pe; /* nnodes: the node's first PE in allocation order */
    int64_t *slots;    /* nnodes */
    int32_t *pe_start; /* nnodes + 1: offsets into pes */
    int32_t *pes;      /* nalloc: the allocation's PEs grouped by node, allocation order inside */
} topomap_alloc_nodes;

int topomap_alloc_nodes_create(const topomap_machine *m, const int32_t *alloc, int32_t nalloc,
                               int32_t capacity, topomap_alloc_nodes **out);
void topomap_alloc_nodes_destroy(topomap_alloc_nodes *an);

/* Group the processes for the allocation's nodes (the multicore step of
   LibTopoMap and PTRAM step 1): as few groups as the largest nodes can hold
   (k = *ngroups, group j of at most group_slots[j] = the j-th largest
   slots, ties in allocation order), little traffic between groups
   (multilevel partitioning of C + C^T in hard-capacity mode, group sizes
   proportional to the slots).  A pattern with grid coordinates (p->coords)
   is grouped by boxes of its grid instead where they tile it
   (map_nodes_grid.c).  When n
   fills the allocation, k = nnodes.  group[p] in [0, k); group_slots has
   nnodes entries (k used).  Fails with TOPOMAP_EINVAL when the processes
   do not fit, or a coordinate is outside [0, 2^20). */
int topomap_group_by_node(const topomap_pattern *p, const topomap_alloc_nodes *an,
                          const topomap_run_options *run, int32_t *group, int64_t *group_slots,
                          int32_t *ngroups);

/* Partition the processes into k groups of at most slots[j] processes each
   with little traffic between them: multilevel partitioning of C + C^T in
   hard-capacity mode (group sizes proportional to the slots), with run's
   seed and progress (run may be NULL).  The partitioner of
   topomap_group_by_node, for mappers that split processes to other sizes. */
int topomap_partition_processes(const topomap_pattern *p, int32_t k, const int64_t *slots,
                                const topomap_run_options *run, int32_t *part);

/* The grid grouping of topomap_group_by_node (map_nodes_grid.c): with
   p->coords and p->ndims set and k groups of slots[j] processes, *done = 1
   and group[] = boxes of the grid when they tile it, else *done = 0. */
int topomap_i_group_by_grid(const topomap_pattern *p, int32_t k, const int64_t *slots, int32_t *group, int *done);

/* The pattern between groups (Mirsadeghi 2017 §3.3.1 "nodal pattern"):
   q[a][b] = sum of bytes p -> p' with group a -> group b, a != b (traffic
   inside a group is dropped).  Caller-owned outputs: indptr (k + 1),
   indices and bytes (at least p->indptr[p->n] entries); rows sorted. */
int topomap_pattern_quotient(const topomap_pattern *p, const int32_t *group, int32_t k,
                             int64_t *indptr, int32_t *indices, double *bytes);

/* Expand a group -> node assignment to PEs: the processes of group j go onto
   the PEs of allocation node node_of_group[j] in process order, `capacity`
   per PE (Mirsadeghi 2017 §3.3.1: inside a node, in MPI-rank order).
   node_of_group NULL = identity.  Fails when a node gets more processes
   than its slots. */
int topomap_place_groups(const topomap_alloc_nodes *an, int32_t n, const int32_t *group,
                         const int32_t *node_of_group, int32_t *pe_of);

/* Allocations: write `count` PE ids of whole nodes chosen by a policy.
   contiguous: nodes first..first+k-1; random: k distinct random nodes in
   random order; fragmented: k nodes in `runs` runs of consecutive nodes at
   random offsets (in increasing order).  PEs of a node in local order. */
int topomap_allocate_nodes(const topomap_machine *m, int32_t nnodes_wanted, int policy,
                           int32_t runs, uint64_t seed, int32_t *nodes_out);
enum { TOPOMAP_ALLOC_CONTIGUOUS = 0, TOPOMAP_ALLOC_RANDOM = 1, TOPOMAP_ALLOC_FRAGMENTED = 2 };

#ifdef __cplusplus
}
#endif
#endif

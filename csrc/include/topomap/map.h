/* Mappers.  Each writes pe_of[0..n) (caller-owned) for the PEs of an
   allocation `alloc[0..nalloc)`, in allocation order, with at most
   `capacity` processes per PE. */
#ifndef TOPOMAP_MAP_H
#define TOPOMAP_MAP_H
#include <stdint.h>
#include "machine.h"

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

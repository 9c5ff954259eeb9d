/* Collective operations as schedules of unicasts, built the way MPICH runs them
   (notes 000 §3.1, 003 §2.1; MPICH 4 src/mpi/coll/<op>/<op>_intra_<algorithm>.c).

   A schedule is stages of messages (src -> dst) in order; message k carries
   count[k] items of item_unit each (a block of one rank for gather/allgather,
   one (origin, destination) block origin * n + destination for alltoall, the
   whole vector for bcast, 1/nchunks of the vector for allreduce).  With
   want_items the items themselves are listed too (items[item_ptr[k] ..
   item_ptr[k + 1]]), so a simulation of the data movement can check what each
   rank ends with.  No stage is empty and no (src, dst) pair repeats in a stage. */
#ifndef TOPOMAP_COLLECTIVES_H
#define TOPOMAP_COLLECTIVES_H
#include <stdint.h>
#include "machine.h"

#ifdef __cplusplus
extern "C" {
#endif

enum { TOPOMAP_COLL_BCAST, TOPOMAP_COLL_GATHER, TOPOMAP_COLL_ALLGATHER, TOPOMAP_COLL_ALLREDUCE, TOPOMAP_COLL_ALLTOALL };
enum {
    TOPOMAP_COLL_BINOMIAL,     /* bcast, gather */
    TOPOMAP_COLL_RD,           /* allgather, allreduce: recursive doubling */
    TOPOMAP_COLL_RING,         /* allgather */
    TOPOMAP_COLL_BRUCK,        /* allgather, alltoall */
    TOPOMAP_COLL_HIERARCHICAL, /* allgather: node gather, leader allgather, node bcast */
    TOPOMAP_COLL_RABENSEIFNER, /* allreduce: reduce-scatter by recursive halving + allgather by RD */
    TOPOMAP_COLL_PAIRWISE      /* alltoall */
};

typedef struct {
    int32_t op, algorithm, n;
    int32_t root;           /* bcast, gather */
    int32_t ppn;            /* hierarchical: ranks per node (node i holds ranks [i*ppn, (i+1)*ppn)) */
    int32_t intra_binomial; /* hierarchical: 0 linear ("L") node phases, 1 binomial ("NL") */
    int32_t leaders_ring;   /* hierarchical: 0 leaders by recursive doubling, 1 by ring */
    int32_t want_items;
} topomap_coll_spec;

typedef struct {
    int32_t n, nstages;
    int64_t nmsgs, nitems;
    double item_unit;
    int64_t *stage_ptr; /* nstages + 1 */
    int32_t *src, *dst; /* nmsgs */
    int64_t *count;     /* nmsgs */
    int64_t *item_ptr;  /* nmsgs + 1, NULL without want_items */
    int64_t *items;     /* nitems, NULL without want_items */
} topomap_coll_schedule;

/* The most messages (and listed items) one schedule may hold. */
#define TOPOMAP_COLL_MAX_MSGS ((int64_t)1 << 27)

/* Build the schedule of `spec` into *out (freed with topomap_coll_free, also
   after a failure).  TOPOMAP_EINVAL names a bad argument or a schedule above
   TOPOMAP_COLL_MAX_MSGS. */
int topomap_coll_build(const topomap_coll_spec *spec, topomap_coll_schedule *out);
void topomap_coll_free(topomap_coll_schedule *s);

/* ---- collective-aware rank reordering (notes 000 §3.2-3.6, Alg. 4.1) ---- */
enum { TOPOMAP_COLL_RDMH, TOPOMAP_COLL_RMH, TOPOMAP_COLL_BBMH, TOPOMAP_COLL_BGMH,
       /* topomap's extension (coll_more_order.c): Bruck allgather / alltoall, allreduce, pairwise alltoall */
       TOPOMAP_COLL_BKMH, TOPOMAP_COLL_ARMH, TOPOMAP_COLL_PWMH };

/* The order in which a heuristic places p ranks: order[0] = 0, and rank
   order[t] goes to the free core closest to the core of rank ref[t] (placed
   earlier); ref[0] = -1. */
int topomap_coll_order(int32_t heuristic, int32_t p, int32_t *order, int32_t *ref);
/* The same for the heuristics from TOPOMAP_COLL_BKMH on (topomap_coll_order hands them over). */
int topomap_coll_order_more(int32_t heuristic, int32_t p, int32_t *order, int32_t *ref);

/* Alg. 4.1 over the machine's PE distance: pes[i] is the core of old rank i
   (the initial layout, p distinct PEs).  old_of_new[j]: the old rank whose
   core new rank j takes; new rank 0 keeps old rank 0's core; ties between
   equally close free cores are broken uniformly at random from `seed`. */
int topomap_coll_reorder(const topomap_machine *m, const int32_t *pes, int32_t p, int32_t heuristic, uint64_t seed,
                         int32_t *old_of_new);

#ifdef __cplusplus
}
#endif
#endif

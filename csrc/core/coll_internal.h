/* Shared by coll_build.c and coll_algorithms.c: the message emitter. */
#ifndef TOPOMAP_COLL_INTERNAL_H
#define TOPOMAP_COLL_INTERNAL_H
#include "topomap/collectives.h"

/* Appends to a schedule; after the first failure every call is a no-op and
   rc keeps the error, so the algorithms need not check each call. */
typedef struct {
    topomap_coll_schedule *s;
    int64_t cap_msgs, cap_items, cap_stages;
    int want;
    int rc;
} coll_emit;

/* Start a message src -> dst with no items yet. */
void coll_msg(coll_emit *e, int32_t src, int32_t dst);
/* Add items lo, lo + 1, ..., lo + cnt - 1 (mod `mod`) to the current message. */
void coll_range(coll_emit *e, int64_t lo, int64_t cnt, int64_t mod);
/* Add one item. */
void coll_item(coll_emit *e, int64_t id);
/* Close the current stage (nothing happens when it holds no message). */
void coll_stage_end(coll_emit *e);

/* The algorithms (coll_algorithms.c); spec already validated. */
void coll_binomial_bcast(coll_emit *e, int32_t n, int32_t root);
void coll_binomial_gather(coll_emit *e, int32_t n, int32_t root);
void coll_rd(coll_emit *e, int32_t n, int whole);
void coll_rabenseifner(coll_emit *e, int32_t n);
void coll_ring_allgather(coll_emit *e, int32_t n);
void coll_bruck_allgather(coll_emit *e, int32_t n);
void coll_bruck_alltoall(coll_emit *e, int32_t n);
void coll_pairwise_alltoall(coll_emit *e, int32_t n);
void coll_hierarchical_allgather(coll_emit *e, int32_t n, int32_t ppn, int binomial, int ring);
#endif

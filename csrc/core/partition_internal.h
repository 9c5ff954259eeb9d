/* Internals shared by partition*.c: the working graph of one level, the call
   context (rng, progress, options), an addressable heap, and the three
   phases of the multilevel scheme. */
#ifndef TOPOMAP_PARTITION_INTERNAL_H
#define TOPOMAP_PARTITION_INTERNAL_H
#include <stddef.h>
#include <stdint.h>
#include "topomap/partition.h"
#include "topomap/rng.h"

/* Freed large blocks kept for the rest of a partitioning call
   (partition_pool.c). */
#define POOL_SLOTS 64
typedef struct {
    void *block[POOL_SLOTS];
    size_t cap[POOL_SLOTS];
    int32_t count;
} topomap_i_pool;

/* A block of `bytes` (NULL when out of memory), the pool's smallest that
   holds it if any; topomap_i_pfree gives it back, to the pool if it has
   64 KiB to 16 MiB, else to free() (p may be NULL: plain malloc and free
   behind the same header). */
void *topomap_i_palloc(topomap_i_pool *p, size_t bytes);
void topomap_i_pfree(topomap_i_pool *p, void *ptr);
void topomap_i_pool_free(topomap_i_pool *p);

/* One level of the hierarchy.  The finest level borrows the caller's arrays;
   coarser levels and subgraphs own theirs (`owned`, topomap_i_palloc'd
   from `pool`). */
typedef struct {
    int32_t n;
    const int64_t *xadj;
    const int32_t *adj;
    const double *ew;
    const double *vw;
    double total_w, min_w, max_w; /* vertex weights */
    void *owned[4];
    topomap_i_pool *pool;
} topomap_i_pgraph;

void topomap_i_pgraph_free(topomap_i_pgraph *g);
/* Fill total_w, min_w and max_w from vw. */
void topomap_i_pgraph_weigh(topomap_i_pgraph *g);

/* Addressable 4-ary max-heap of ids in [0, cap) keyed by doubles; equal
   keys pop the smaller id first, so the order never depends on history.
   Each slot holds its key beside its id, so a sift compares slots without
   a load from elsewhere per child. */
typedef struct {
    double key;
    int32_t id;
} topomap_i_slot;

typedef struct {
    topomap_i_slot *slot;
    int32_t *pos;
    int32_t size, cap;
} topomap_i_heap;

int topomap_i_heap_init(topomap_i_heap *h, int32_t cap);
void topomap_i_heap_free(topomap_i_heap *h);
void topomap_i_heap_clear(topomap_i_heap *h);
/* Insert, or change the key of an id already in the heap. */
void topomap_i_heap_set(topomap_i_heap *h, int32_t id, double key);
void topomap_i_heap_remove(topomap_i_heap *h, int32_t id);
/* Remove and return the top id (heap must not be empty). */
int32_t topomap_i_heap_pop(topomap_i_heap *h);
/* The top id's key (heap must not be empty); the key of an id in the heap. */
static inline double topomap_i_heap_top_key(const topomap_i_heap *h) { return h->slot[0].key; }
static inline double topomap_i_heap_key(const topomap_i_heap *h, int32_t id) { return h->slot[h->pos[id]].key; }
static inline int32_t topomap_i_heap_top(const topomap_i_heap *h) { return h->slot[0].id; }
static inline int topomap_i_heap_has(const topomap_i_heap *h, int32_t id) { return h->pos[id] >= 0; }

/* FM's arrays, kept from one refinement to the next within a partitioning
   call: the first (largest) level sizes them, so later levels neither
   allocate nor touch fresh pages.  moved[v] and seen[v] hold the number of
   the pass that moved v or listed it as a candidate; passes are numbered
   across calls. */
typedef struct {
    topomap_i_heap h[2];
    int32_t *moved, *log_v, *log_from, *cand, *seen;
    int32_t cap, pass;
} topomap_i_fmspace;

/* One partitioning call. */
typedef struct {
    topomap_rng rng;
    int32_t ntries;
    int flows;    /* max-flow refinement of every 2-way level (partition_flow.c) */
    double slack; /* hard mode: room the finest level gets before it is made exact */
    int (*progress)(void *ctx, double fraction);
    void *progress_ctx;
    double fraction;           /* last reported */
    int64_t work, next_check;  /* cancellation is checked every so much work */
    /* recursive bisection that drives the fraction: parts finished so far
       move it from rb_lo to rb_hi */
    int32_t rb_done, rb_total;
    double rb_lo, rb_hi;
    topomap_i_fmspace fm;
    topomap_i_pool pool;
} topomap_i_pctx;

/* Free what a call context holds (its FM arrays and pool). */
void topomap_i_pctx_free(topomap_i_pctx *c);

/* Count `units` of work; every 2^16 units ask the callback (with the last
   fraction) whether to go on.  Returns 0 or TOPOMAP_ECANCELED. */
int topomap_i_ptick(topomap_i_pctx *c, int64_t units);
/* Report a new fraction (never going backwards) and ask whether to go on. */
int topomap_i_preport(topomap_i_pctx *c, double fraction);

/* topomap_partition_stats of a graph and parts known to be valid. */
int topomap_i_partition_stats(const topomap_ugraph *gr, int32_t k, const int32_t *part, double *part_weights,
                              double *edge_cut);

/* Balance bounds L_i of one level (see partition.h) for absolute targets
   `tgt`; `cap` (hard mode, finest level only) overrides them. */
void topomap_i_limits(const topomap_i_pgraph *g, int32_t k, const double *tgt, const double *cap,
                      double eps, double *limit);

/* Coarsening: heavy-edge matching in a seeded random order, then
   contraction.  cmap[v] = coarse vertex of v.  `coarse` owns its arrays. */
int topomap_i_coarsen(const topomap_i_pgraph *g, double max_vw, topomap_i_pctx *c, int32_t *cmap,
                      topomap_i_pgraph *coarse);

/* Part weights of a partition. */
void topomap_i_part_weights(const topomap_i_pgraph *g, int32_t k, const int32_t *part, double *pw);
/* Cut of a partition, each undirected edge once. */
double topomap_i_cut(const topomap_i_pgraph *g, const int32_t *part);

/* Move vertices out of parts above their limit, best cut change first.
   *fits = 1 if every part ends within its limit. */
int topomap_i_balance(const topomap_i_pgraph *g, int32_t k, const double *limit, int32_t *part,
                      double *pw, topomap_i_pctx *c, int *fits);
/* Equal vertex weights and k > 2: move vertices out of parts above their
   limit along paths of adjacent parts to parts with room, where that cuts
   less than moving one vertex out alone (partition_paths.c); what is left
   over is topomap_i_balance's. */
int topomap_i_balance_paths(const topomap_i_pgraph *g, int32_t k, const double *limit, int32_t *part,
                            double *pw, topomap_i_pctx *c);
/* Boundary k-way FM passes under the limits (parts already within them
   stay within them). */
int topomap_i_fm(const topomap_i_pgraph *g, int32_t k, const double *limit, int32_t *part, double *pw,
                 topomap_i_pctx *c);

/* Max-flow refinement of a bisection under the limits (partition_flow.c):
   the cut never grows and parts within their limits stay within them;
   *changed (may be NULL) = 1 if it cut less. */
int topomap_i_flow_refine(const topomap_i_pgraph *g, const double *limit, int32_t *part, double *pw,
                          topomap_i_pctx *c, int *changed);

/* Multilevel partition of g into k parts with absolute targets tgt (sum =
   g->total_w); cap = hard capacities enforced at the finest level (of the
   whole graph only), or NULL.  `recursive` selects recursive bisection; `report` makes this call
   drive the progress fraction.  *fits as for balance. */
int topomap_i_multilevel(const topomap_i_pgraph *g, int32_t k, const double *tgt, const double *cap,
                         double eps, int recursive, int report, topomap_i_pctx *c, int32_t *part,
                         int *fits);
/* Greedy graph growing bisection of a (small) graph, best of a few
   growths, each refined by FM: part 0 grows to weight tgt[0]. */
int topomap_i_grow_bisection(const topomap_i_pgraph *g, const double tgt[2], double eps,
                             topomap_i_pctx *c, int32_t *part);
/* Recursive bisection into k parts; each step keeps the best of
   c->ntries multilevel bisections. */
int topomap_i_recursive_bisection(const topomap_i_pgraph *g, int32_t k, const double *tgt,
                                  double eps, int report, topomap_i_pctx *c, int32_t *part);
#endif

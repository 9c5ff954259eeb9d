/* Internal: the node-level quadratic assignment problem shared by Kumar's
   mappers (map_grasp.c, map_mahd.c, map_maxcontention.c,
   map_kumar_hybrid.c).  Implementation in map_qap.c. */
#ifndef TOPOMAP_MAP_QAP_H
#define TOPOMAP_MAP_QAP_H
#include <stdint.h>
#include "topomap/eval.h"
#include "topomap/map.h"
#include "topomap/map_kumar.h"
#include "map_physgraph.h"

/* n facilities (groups of processes) onto m >= n locations (allocation
   nodes).  Flows are symmetric: w{i,j} = bytes i->j + bytes j->i, stored in
   both rows, so cost = sum over unordered pairs of w * d = hop-bytes.
   Facility j fits location l when size[j] <= cap[l]. */
typedef struct {
    int32_t n, m;
    int64_t *xadj;   /* n + 1 */
    int32_t *adj;    /* xadj[n] */
    double *w;       /* xadj[n] */
    double *d;       /* m * m distances, d[a * m + b] */
    int64_t *size;   /* n */
    int64_t *cap;    /* m */
    /* When locations are machine nodes (NULL machine otherwise): the directed
       flows and a PE of each location, to evaluate with the evaluator. */
    const topomap_machine *machine;
    topomap_pattern flows;
    const int32_t *loc_pe;
} topomap_i_qap;

/* Sum over unordered pairs of placed facilities (loc >= 0) of w * d. */
double topomap_i_qap_cost(const topomap_i_qap *q, const int32_t *loc);
/* Change of the cost if facilities a and b (both placed) swapped locations. */
double topomap_i_qap_swap_delta(const topomap_i_qap *q, const int32_t *loc, int32_t a, int32_t b);
/* Change of the cost if placed facility a moved to location l. */
double topomap_i_qap_move_delta(const topomap_i_qap *q, const int32_t *loc, int32_t a, int32_t l);
/* A tolerance below which a cost change counts as none (round-off). */
double topomap_i_qap_tolerance(const topomap_i_qap *q);

/* Which placements keep a complete assignment possible.  Locations nest
   (a location fits every facility of its size or smaller), so one exists
   iff for every facility size v: free locations of cap >= v >= unplaced
   facilities of size >= v.  slack[i] is that margin at the i-th smallest
   distinct size. */
typedef struct {
    int32_t nv;
    int64_t *value;
    int64_t *slack;
} topomap_i_fit;

/* Everything unplaced; fails (EINVAL) if the facilities cannot fit at all. */
int topomap_i_fit_init(topomap_i_fit *f, const topomap_i_qap *q);
/* Back to everything unplaced (after init). */
void topomap_i_fit_reset(topomap_i_fit *f, const topomap_i_qap *q);
void topomap_i_fit_free(topomap_i_fit *f);
/* May unplaced facility j go to free location l? */
int topomap_i_fit_ok(const topomap_i_fit *f, const topomap_i_qap *q, int32_t j, int32_t l);
/* The same for any facility of size s and location of capacity c. */
int topomap_i_fit_ok_size(const topomap_i_fit *f, int64_t s, int64_t c);
/* Record that j went to l. */
void topomap_i_fit_place(topomap_i_fit *f, const topomap_i_qap *q, int32_t j, int32_t l);

/* Progress: the ticker of map_physgraph.h (phases mapped onto lo..hi, a
   check every TOPOMAP_I_TICK units).  A unit here is about 16 distance
   lookups or one evaluator try. */
#define TOPOMAP_I_QAP_UNITS(lookups) ((lookups) / 16 + 1)

/* A node-level solver: loc[j] = location of facility j, a complete
   assignment respecting the fits. */
typedef int (*topomap_i_qap_solver)(const topomap_i_qap *q, const void *ctx, const topomap_run_options *run,
                                    int32_t *loc);

/* The pipeline of every Kumar mapper: group the processes by node (the
   node-level problem of map_physgraph.h), build the QAP (distance = hops
   between nodes), solve, place.  `what` names the mapper in messages. */
int topomap_i_qap_map(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                      int32_t capacity, const topomap_run_options *run, const char *what, topomap_i_qap_solver solve,
                      const void *ctx, int32_t *pe_of);

/* Solvers, for the hybrid and the tests of the C core. */
/* ctx: a topomap_grasp_options (checked by topomap_i_grasp_check). */
int topomap_i_grasp_check(const topomap_grasp_options *opt);
int topomap_i_grasp_solve(const topomap_i_qap *q, const void *ctx, const topomap_run_options *run, int32_t *loc);
/* ctx: a topomap_i_mahd_args. */
typedef struct {
    int rule;
    int exhaustive;
    int objective;
} topomap_i_mahd_args;
int topomap_i_mahd_solve(const topomap_i_qap *q, const void *ctx, const topomap_run_options *run, int32_t *loc);

#endif

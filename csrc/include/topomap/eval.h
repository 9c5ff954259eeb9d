/* The one evaluator of every metric and every local search (DESIGN.md §3).

   Metrics are counted per directed message p -> q with weight bytes[p,q]:
   hops = links on the route between the nodes of pe_of[p] and pe_of[q];
   qap (the hierarchy QAP objective J) = sum over directed messages of
   bytes * distance, so a symmetric pattern counts each undirected pair twice;
   link congestion = load / capacity; the non-zero statistics run over links
   that carry at least one message; variance is the population variance. */
#ifndef TOPOMAP_EVAL_H
#define TOPOMAP_EVAL_H
#include <stdint.h>
#include "machine.h"
#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

/* pe_of[p] == TOPOMAP_UNPLACED: process p is not placed yet; its messages
   are left out of every metric (messages, total_bytes included).  Greedy
   mappers grow a partial mapping by moving processes from here to a PE. */
#define TOPOMAP_UNPLACED (-1)

typedef struct {
    double hop_bytes;
    double dilation;       /* total hops over all messages */
    int32_t max_dilation;  /* largest hop count of a message */
    int64_t messages;      /* number of (p, q) pairs that communicate */
    double total_bytes;
    double qap;
    double max_congestion;
    int64_t nz_links;
    double nz_congestion_avg;
    double nz_congestion_var;
    double hybrid;         /* w0*HB + w1*MC + w2*NZCA + w3*NZCV */
    double edge_cut;       /* bytes between different nodes */
    int64_t edge_cut_messages; /* pairs between different nodes */
    double msgs;           /* messages: the pattern's message counts summed (see topomap_evaluate_msgs),
                              else one per pair, as `messages` */
    double cut_msgs;       /* the same between different nodes */
} topomap_metrics;

/* Optional outputs of a full evaluation (any may be NULL). */
typedef struct {
    double *link_load;   /* nlinks: bytes through each link */
    double *level_bytes; /* topomap_machine_nlevels(): bytes by LCA level */
} topomap_eval_detail;

/* Full evaluation, one pass over the pattern, no incremental state.
   `weights` are the 4 hybrid weights (NULL = 1,1,1,1).  Every pe_of entry
   must be a PE of the machine or TOPOMAP_UNPLACED. */
int topomap_evaluate(const topomap_machine *m, const topomap_pattern *p,
                     const int32_t *pe_of, const double *weights,
                     topomap_metrics *out, topomap_eval_detail *detail);

/* topomap_evaluate for a pattern that counts its messages: msgs[k] messages
   travel with entry k (indptr[n] values, finite, >= 0), summed in `msgs` and
   `cut_msgs`; msgs == NULL counts one per entry. */
int topomap_evaluate_msgs(const topomap_machine *m, const topomap_pattern *p, const double *msgs,
                          const int32_t *pe_of, const double *weights, topomap_metrics *out,
                          topomap_eval_detail *detail);

/* Incremental evaluator: owns a copy of the mapping and the running sums
   (link loads and message counts, sum, sum of squares, non-zero count, a max
   tree over congestion, a histogram of hop counts).  Moves and swaps are
   evaluated from the moved processes' edges only. */
typedef struct topomap_eval topomap_eval;

int topomap_eval_create(const topomap_machine *m, const topomap_pattern *p,
                        const int32_t *pe_of, const double *weights, topomap_eval **out);

/* Flags of topomap_eval_create_flags. */
enum {
    /* Keep only the distance sums: qap, total_bytes, messages, edge_cut and
       edge_cut_messages.  A move or swap then costs O(degree) distance
       lookups (no routes, link loads, max tree or journal), for searches on
       the QAP objective alone.  The other metrics read as NaN (max_dilation
       and nz_links as -1); link_loads and level_bytes return NULL; routes
       are never asked for, so a pair without one is not an error here. */
    TOPOMAP_EVAL_DISTANCE_ONLY = 1
};
/* topomap_eval_create with flags (0 = every metric, as topomap_eval_create). */
int topomap_eval_create_flags(const topomap_machine *m, const topomap_pattern *p, const int32_t *pe_of,
                              const double *weights, unsigned flags, topomap_eval **out);
void topomap_eval_destroy(topomap_eval *e);

/* Count msgs[k] messages for entry k from now on (the array stays the
   caller's and must outlive the evaluator), as topomap_evaluate_msgs does. */
int topomap_eval_set_msgs(topomap_eval *e, const double *msgs);

void topomap_eval_metrics(const topomap_eval *e, topomap_metrics *out);
const int32_t *topomap_eval_mapping(const topomap_eval *e);
const double *topomap_eval_link_loads(const topomap_eval *e);
const double *topomap_eval_level_bytes(const topomap_eval *e);

/* Metrics as they would be after moving process p to `pe` (a PE or
   TOPOMAP_UNPLACED) / swapping the PEs of p and q.  The state is unchanged
   on return. */
int topomap_eval_try_move(topomap_eval *e, int32_t p, int32_t pe, topomap_metrics *after);
int topomap_eval_try_swap(topomap_eval *e, int32_t p, int32_t q, topomap_metrics *after);
/* Carry the move / swap out. */
int topomap_eval_move(topomap_eval *e, int32_t p, int32_t pe);
int topomap_eval_swap(topomap_eval *e, int32_t p, int32_t q);

#ifdef __cplusplus
}
#endif
#endif

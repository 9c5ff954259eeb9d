/* Internal: the evaluator's state (eval.c), shared with the files that
   extend it: eval_shares.c (J kept as per-process shares). */
#ifndef TOPOMAP_EVAL_INTERNAL_H
#define TOPOMAP_EVAL_INTERNAL_H
#include <stdint.h>
#include "topomap/eval.h"
#include "eval_deltas.h"
#include "eval_pairs.h"

typedef struct {
    double hop_bytes, dilation, qap, total_bytes, edge_cut;
    int64_t messages, cut_messages;
    double msgs, cut_msgs; /* message counts: msgs[k] per entry, or 1 */
    int64_t unrouted;      /* messages between nodes the machine has no route for */
    int32_t bad_p, bad_q;  /* the first of them */
} sums;

typedef struct {
    int32_t kind; /* 0 link, 1 hop histogram, 2 level bytes */
    int32_t index;
    double value;
    int64_t count;
} journal_entry;

struct topomap_eval {
    const topomap_machine *m;
    topomap_pattern p; /* borrowed: the caller keeps the arrays alive */
    const double *msgs; /* borrowed too; NULL: one message per entry */
    int64_t *t_indptr;
    int32_t *t_indices;
    double *t_bytes;
    double *t_msgs;     /* msgs in the transposed order */
    int32_t *pe_of;
    int distance_only;
    double w[4];
    int32_t nlinks, nlevels, max_route, seg_size;
    double *load;
    int64_t *count;
    double *seg; /* max tree over congestion, leaves at seg_size.. */
    int64_t *hist; /* messages by hop count, 0..max_route */
    double *level_bytes;
    int32_t *route_buf;
    topomap_i_pairs pairs;
    sums s;
    double s1, s2;
    int64_t nz;
    journal_entry *journal;
    int64_t jlen, jcap;
    topomap_i_link_deltas placing; /* try_place's loads (eval.c); where == NULL until first used */
    /* With shares (eval_shares.c; NULL without): each process's share of J,
       and the gathered messages of one process: other end, its PE and
       place, bytes, 1 if received. */
    double *share;
    int32_t nm, *mx, *mpe, *mplace;
    double *mw;
    uint8_t *min;
};

/* Shares: refresh those of p and of everyone it exchanges messages with
   (after p moved); free them. */
void topomap_i_eval_reshare(topomap_eval *e, int32_t p);
void topomap_i_eval_shares_free(topomap_eval *e);

#endif

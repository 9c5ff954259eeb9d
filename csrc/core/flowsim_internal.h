/* What the flow simulator's event loop (flowsim.c) shares with its rate
   allocation (flowsim_share.c). */
#ifndef TOPOMAP_FLOWSIM_INTERNAL_H
#define TOPOMAP_FLOWSIM_INTERNAL_H
#include <stdint.h>

/* Flows' routes as CSR: flow f crosses links[ptr[f] .. ptr[f+1]). */
typedef struct {
    int32_t nflows, nlinks;
    const int64_t *ptr;
    const int32_t *links;
    const double *cap; /* per flow, +inf: none */
    const double *bw;  /* per link */
} topomap_i_routes;

/* The max-min fair allocation over the flows that are transferring.  A flow
   with mult[f] > 0 instances transferring gets rate[f] per instance (equal
   flows get equal max-min rates, so instances need not be told apart);
   load[l] = sum of mult * rate over the flows crossing link l. */
typedef struct {
    const topomap_i_routes *r;
    int32_t *mult;  /* per flow; kept by the caller */
    double *rate;   /* per flow */
    double *load;   /* per link; the caller subtracts a departing instance's rate */
    /* scratch of one allocation */
    double *resid;  /* per link: capacity left to the flows not frozen yet */
    int64_t *cnt;   /* per link: instances not frozen yet */
    int64_t *start; /* per link: its flows in lflows[start[l] .. start[l] + deg[l]) */
    int32_t *deg;
    int32_t *lflows;
    int32_t *touched;
    uint32_t *link_mark, *flow_mark, *frozen_mark;
    uint32_t epoch;
    struct topomap_i_fs_entry *heap;
    int64_t heap_cap;
} topomap_i_share;

int topomap_i_share_init(topomap_i_share *s, const topomap_i_routes *r);
void topomap_i_share_free(topomap_i_share *s);
/* Mark flow f as a member of the set being allocated; returns 1 the first
   time in this allocation. */
int topomap_i_share_take(topomap_i_share *s, int32_t f);
/* 1 if flow f is in the set of this allocation. */
static inline int topomap_i_share_taken(const topomap_i_share *s, int32_t f) { return s->flow_mark[f] == s->epoch; }
/* Start collecting a new set (forgets the marks of the last one). */
void topomap_i_share_begin(topomap_i_share *s);
/* Give the nu flows u[] their max-min fair rates.  full: u holds every
   transferring flow and loads start from zero; else the flows outside u
   keep their rates and load (u must then hold every transferring flow whose
   rate is >= some level that no flow outside u reaches; see flowsim.c). */
void topomap_i_share_fill(topomap_i_share *s, const int32_t *u, int32_t nu, int full);

#endif

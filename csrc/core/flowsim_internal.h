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
    double *load;   /* per link; the caller adds an arriving instance's rate and subtracts a departing one's */
    /* scratch of one allocation */
    double *resid;  /* per link: capacity left to the flows not frozen yet */
    int64_t *cnt;   /* per link: instances not frozen yet */
    int64_t *start; /* per link: its flows in lflows[start[l] .. start[l] + deg[l]) */
    int32_t *deg;
    int32_t *lflows;
    int32_t *touched, ntouched; /* the links of the last allocation's flows */
    uint32_t *link_mark, *frozen_mark;
    /* every flow of each link (CSR), for the bottleneck check */
    int64_t *lptr;
    int32_t *lfl;
    double *lmax;               /* per link: the fastest rate on it, when lmax_mark is current */
    uint32_t *lmax_mark, *checked_mark;
    int32_t *blink;             /* per flow: the link that froze it last, -1 its cap */
    uint32_t epoch;
    struct topomap_i_fs_entry *heap;
    int64_t heap_cap;
} topomap_i_share;

int topomap_i_share_init(topomap_i_share *s, const topomap_i_routes *r);
void topomap_i_share_free(topomap_i_share *s);
/* Start a new allocation (forgets the marks of the last one). */
void topomap_i_share_begin(topomap_i_share *s);
/* Give the nu flows u[] the max-min fair rates of what the other flows
   leave them (progressive filling of u alone).  full: u holds every
   transferring flow and loads start from zero; else the flows outside u
   keep their rates and load.  When that is the max-min allocation of all
   of them: flowsim.c. */
void topomap_i_share_fill(topomap_i_share *s, const int32_t *u, int32_t nu, int full);
/* After a fill of u[0..nu) with the other flows kept, check Bertsekas &
   Gallager's condition (every flow has a full link where no flow is faster,
   or runs at its cap) for the flows crossing the filled links.  Each flow
   that fails joins u, with the faster flows on its links (u[nu..], marked
   umark[f] = uepoch; members of u are those so marked).  Returns the new
   nu; *failed counts the flows that failed. */
int32_t topomap_i_share_check(topomap_i_share *s, uint32_t *umark, uint32_t uepoch, int32_t *u, int32_t nu,
                              int64_t *failed);

/* Indexed binary heap (flowsim_heap.c): ids 0..cap-1 ordered by key[id],
   smallest first (max = 0) or largest first; pos[id] = -1 when absent.  The
   key array is passed to each call, as the caller may move it. */
typedef struct {
    int64_t n, cap;
    int64_t *ids, *pos;
    int max;
} topomap_i_iheap;

/* Room for ids 0..ids-1. */
int topomap_i_iheap_reserve(topomap_i_iheap *h, int64_t ids);
void topomap_i_iheap_free(topomap_i_iheap *h);
void topomap_i_iheap_push(topomap_i_iheap *h, const double *key, int64_t id);
void topomap_i_iheap_remove(topomap_i_iheap *h, const double *key, int64_t id);
/* Restore the order after key[id] changed. */
void topomap_i_iheap_update(topomap_i_iheap *h, const double *key, int64_t id);
/* Restore the order after any number of keys changed. */
void topomap_i_iheap_heapify(topomap_i_iheap *h, const double *key);

#endif

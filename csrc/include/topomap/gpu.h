/* Links inside a GPU node: the per-channel loads a placement puts on them,
   and MAGC's congestion-based greedy assignment (Mirsadeghi 2017, ch. 5,
   Alg. 5.1; notes 000 §4.3).

   A node is described by its endpoints (cores, GPUs, the network adapter)
   and directed channels (each physical link gives one channel per
   direction) with a bandwidth each; route(a, b) is the list of channels a
   message from endpoint a to endpoint b crosses, in a CSR table over the
   nend * nend ordered pairs.  Every node of a machine shares one
   description. */
#ifndef TOPOMAP_GPU_H
#define TOPOMAP_GPU_H
#include <stdint.h>
#include "pattern.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int32_t nend;             /* endpoints */
    int32_t nchan;            /* directed channels */
    const double *bandwidth;  /* [nchan], > 0 */
    const int64_t *route_ptr; /* [nend * nend + 1], route_ptr[0] = 0, non-decreasing */
    const int32_t *route_chan;/* channel ids in [0, nchan) */
} topomap_gpu_node;

/* Check the description; TOPOMAP_EINVAL naming the fault. */
int topomap_gpu_node_check(const topomap_gpu_node *g);

/* Bytes on every channel of every node: load[node * nchan + c] (zeroed first).
   Process p sits on node node_of[p] at endpoint ep_of[p].  A message between
   processes of one node crosses route(ep_src, ep_dst) there; one between
   nodes crosses route(ep_src, nic) on the sender's node and route(nic,
   ep_dst) on the receiver's (the network part is the evaluator's). */
int topomap_gpu_loads(const topomap_gpu_node *g, int32_t nic, const topomap_pattern *p, const int32_t *node_of,
                      const int32_t *ep_of, int32_t nnodes, double *load);

/* Alg. 5.1 on one node: n processes with dense traffic c[i * n + j] (bytes
   i -> j, finite, >= 0) onto distinct endpoints of cand[0..ncand), ncand >=
   n.  Ties go to the lowest process id and the first candidate; 0/0 := 0 in
   delta; neighbours are counted on the symmetrised pattern.  Writes ep_of[i]
   and, when order is not NULL, the process placed at each step; load
   [nchan] (NULL: zeros) is the congestion start, bytes per channel. */
int topomap_magc_greedy(const topomap_gpu_node *g, int32_t n, const double *c, const int32_t *cand, int32_t ncand,
                        const double *load, int32_t *ep_of, int32_t *order);

#ifdef __cplusplus
}
#endif
#endif

/* Dynamic load balancing of identical independent tasks (Kumar 2012, ch. 5;
   notes 001 §4.2): the alias-method flow and a unit-transfer baseline. */
#ifndef TOPOMAP_LOADBALANCE_H
#define TOPOMAP_LOADBALANCE_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Alias-method flow, Kumar's Algorithm 1 with phantom tasks, O(P) time.

   counts[p] >= 0 tasks on process p (0 <= p < nproc, nproc >= 1); the total
   must fit in int64.  order: NULL (rank order) or a permutation of
   0..nproc-1, the order in which processes enter the stable partition around
   k = ceil(T / nproc) (the SFC variant passes the Hilbert order).
   refill_next: 0 runs Algorithm 1 as printed (a donor that falls below k is
   refilled after every original deficit process); 1 refills it at once from
   the next excess process, so donors and receivers stay neighbours in
   `order` (our reading of the SFC variant's unspecified "slight changes").
   Output, per process p: src[p] the one process p receives from (-1: none)
   and tasks[p] how many real tasks it receives (0 when src[p] is -1).
   Every process ends with at most k tasks (k - 2 .. k when T is not a
   multiple of nproc).  Phantoms (k * nproc - T of them) go, in `order`, to
   processes with k - 1 tasks first, then to the other deficit processes,
   then to the rest; each process gets at most one.  Returns 0, ENOMEM or
   EINVAL (the message names the process). */
int topomap_lb_alias(int32_t nproc, const int64_t *counts, const int32_t *order, int refill_next, int32_t *src,
                     int64_t *tasks);

/* The QWalk-like baseline: every surplus task goes to the next free deficit
   slot (two pointers over `order`), consecutive tasks between the same pair
   merged into one message; O(nproc).  Targets: floor(T / nproc), plus one
   for the T mod nproc largest processes (ties in `order`), so the total and
   the maximum of the tasks sent are both optimal.  Expected O(nproc).  Messages go to
   msg_src/msg_dst/msg_tasks (room for nproc - 1 each), their count to
   *nmsg.  Returns 0, ENOMEM or EINVAL. */
int topomap_lb_unit(int32_t nproc, const int64_t *counts, const int32_t *order, int32_t *msg_src, int32_t *msg_dst,
                    int64_t *msg_tasks, int32_t *nmsg);

#ifdef __cplusplus
}
#endif
#endif

/* The alias-method flow (Kumar, PhD thesis 2012, ch. 5, Algorithm 1 and the
   phantom tasks of §5.3; notes 001 §4.2).  Donors sit after every deficit
   process (stable partition around k); donor l fills deficit s completely,
   and when l drops below k it becomes the next deficit to fill, so every
   process receives from at most one donor and the sweep is O(P).  The
   algorithm works in place on the partitioned loads; as the caller's counts
   are read-only, those loads are a copy, beside the permutation and one
   phantom flag per process. */
#include <stdlib.h>

#include "lb_internal.h"
#include "topomap/error.h"
#include "topomap/loadbalance.h"

/* Marks `left` phantom tasks, one per process, in `order`: processes one
   short of k first (the phantom balances them, so they drop out), then the
   other deficit processes, then the rest (only when fewer processes than
   phantoms are short of k).  The thesis leaves this choice open. */
static void place_phantoms(int32_t nproc, const int64_t *counts, const int32_t *order, int64_t k, int64_t left,
                           unsigned char *phantom)
{
    for (int pass = 0; pass < 3 && left > 0; pass++) {
        for (int32_t i = 0; i < nproc && left > 0; i++) {
            int32_t p = topomap_i_lb_at(order, i);
            int take = pass == 0 ? counts[p] == k - 1 : pass == 1 ? counts[p] < k - 1 : 1;
            if (take && !phantom[p]) {
                phantom[p] = 1;
                left--;
            }
        }
    }
}

typedef struct {
    const int32_t *perm;
    int64_t *a;
    const unsigned char *phantom;
    int64_t k;
    int32_t last_donor;
    int32_t *src;
    int64_t *tasks;
} sweep;

/* Donor l fills position r up to k (one message, the only one r receives). */
static void fill(sweep *w, int32_t r, int32_t l)
{
    int64_t give = w->k - w->a[r], real = give;
    w->a[l] -= give;
    w->a[r] = w->k;
    if (l != w->last_donor) {
        /* a donor's phantom leaves in its first message and is dropped there */
        w->last_donor = l;
        real -= w->phantom[w->perm[l]];
    }
    if (real > 0) {
        w->src[w->perm[r]] = w->perm[l];
        w->tasks[w->perm[r]] = real;
    }
}

int topomap_lb_alias(int32_t nproc, const int64_t *counts, const int32_t *order, int refill_next, int32_t *src,
                     int64_t *tasks)
{
    int64_t total;
    int rc = topomap_i_lb_check(nproc, counts, order, &total);
    if (rc) return rc;
    for (int32_t p = 0; p < nproc; p++) {
        src[p] = -1;
        tasks[p] = 0;
    }
    if (total == 0) return 0;
    int64_t k = total / nproc + (total % nproc != 0);
    int32_t *perm = malloc(sizeof *perm * (size_t)nproc);
    int64_t *a = malloc(sizeof *a * (size_t)nproc);
    unsigned char *phantom = calloc((size_t)nproc, 1);
    if (!perm || !a || !phantom) {
        free(perm);
        free(a);
        free(phantom);
        return TOPOMAP_ENOMEM;
    }
    place_phantoms(nproc, counts, order, k, k * nproc - total, phantom);
    /* Stable partition: deficit processes, then excess ones, each side in
       `order`; balanced ones take no part.  a[i] is the load of perm[i]. */
    int32_t m = 0, ndeficit = 0;
    for (int side = 0; side < 2; side++) {
        if (side == 1) ndeficit = m;
        for (int32_t i = 0; i < nproc; i++) {
            int32_t p = topomap_i_lb_at(order, i);
            int64_t load = counts[p] + phantom[p];
            if (side == 0 ? load < k : load > k) {
                perm[m] = p;
                a[m++] = load;
            }
        }
    }
    sweep sw = {perm, a, phantom, k, -1, src, tasks};
    int32_t l = ndeficit;
    if (!refill_next) {
        /* Invariants (thesis): a[i] >= k for i >= l; 0 <= a[i] < k for s <= i < l;
           i < s filled to k.  Balance of the sums ends the loop before l passes m. */
        for (int32_t s = 0; l > s; s++) {
            fill(&sw, s, l);
            if (a[l] < k) l++;
        }
    } else {
        /* A donor that falls below k is refilled at once by the next excess
           process, its neighbour in `order`, instead of after every original
           deficit; the same balance keeps l + 1 inside the excess side. */
        for (int32_t s = 0; s < ndeficit; s++) {
            while (a[l] == k) l++;
            fill(&sw, s, l);
            for (; a[l] < k; l++) fill(&sw, l, l + 1);
        }
    }
    free(perm);
    free(a);
    free(phantom);
    return 0;
}

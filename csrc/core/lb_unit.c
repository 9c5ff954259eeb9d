/* The QWalk-like baseline of Kumar's comparison (thesis 2012, §5.4; the
   thesis does not describe QWalk's algorithm, notes 001 §4.2 [R]): surplus
   tasks are matched one by one to the next free deficit slot with two
   pointers, and consecutive tasks between the same pair form one message.
   Walking whole runs instead of single tasks gives the same messages in
   O(P) rather than O(P + T). */
#include <stdlib.h>

#include "lb_internal.h"
#include "topomap/error.h"
#include "topomap/loadbalance.h"

/* The k-th largest of a[0..n-1] (1 <= k <= n), reordering a: quickselect
   (Hoare 1961) with the middle element as pivot, expected O(n). */
static int64_t kth_largest(int64_t *a, int32_t n, int32_t k)
{
    int32_t lo = 0, hi = n - 1, want = k - 1;
    while (lo < hi) {
        int64_t pivot = a[lo + (hi - lo) / 2];
        int32_t i = lo, j = hi;
        while (i <= j) {
            while (a[i] > pivot) i++;
            while (a[j] < pivot) j--;
            if (i <= j) {
                int64_t t = a[i];
                a[i++] = a[j];
                a[j--] = t;
            }
        }
        if (want <= j) hi = j;
        else if (want >= i) lo = i;
        else return a[want];
    }
    return a[want];
}

int topomap_lb_unit(int32_t nproc, const int64_t *counts, const int32_t *order, int32_t *msg_src, int32_t *msg_dst,
                    int64_t *msg_tasks, int32_t *nmsg)
{
    int64_t total;
    int rc = topomap_i_lb_check(nproc, counts, order, &total);
    if (rc) return rc;
    *nmsg = 0;
    int64_t base = total / nproc, extra_left = total % nproc;
    unsigned char *extra = calloc((size_t)nproc, 1);
    if (!extra) return TOPOMAP_ENOMEM;
    /* The "+1" targets go to the T mod P largest processes (ties in `order`):
       then both the total and the maximum of the tasks sent are optimal. */
    if (extra_left > 0) {
        int64_t *copy = malloc(sizeof *copy * (size_t)nproc);
        if (!copy) {
            free(extra);
            return TOPOMAP_ENOMEM;
        }
        for (int32_t p = 0; p < nproc; p++) copy[p] = counts[p];
        int64_t cut = kth_largest(copy, nproc, (int32_t)extra_left);
        free(copy);
        for (int pass = 0; pass < 2; pass++) {
            for (int32_t i = 0; i < nproc && extra_left > 0; i++) {
                int32_t p = topomap_i_lb_at(order, i);
                if (pass == 0 ? counts[p] > cut : counts[p] == cut) {
                    extra[p] = 1;
                    extra_left--;
                }
            }
        }
    }
    int32_t i = 0, j = 0, n = 0;
    int64_t surplus = 0, deficit = 0;
    for (;;) {
        while (surplus == 0 && i < nproc) {
            int32_t p = topomap_i_lb_at(order, i++);
            surplus = counts[p] - base - extra[p];
            if (surplus < 0) surplus = 0;
        }
        while (deficit == 0 && j < nproc) {
            int32_t q = topomap_i_lb_at(order, j++);
            deficit = base + extra[q] - counts[q];
            if (deficit < 0) deficit = 0;
        }
        if (surplus == 0 || deficit == 0) break;
        int64_t w = surplus < deficit ? surplus : deficit;
        msg_src[n] = topomap_i_lb_at(order, i - 1);
        msg_dst[n] = topomap_i_lb_at(order, j - 1);
        msg_tasks[n++] = w;
        surplus -= w;
        deficit -= w;
    }
    *nmsg = n;
    free(extra);
    return 0;
}

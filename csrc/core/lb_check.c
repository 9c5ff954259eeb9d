/* Input checks shared by the load balancers (lb_internal.h). */
#include <stdlib.h>

#include "lb_internal.h"
#include "topomap/error.h"

int topomap_i_lb_check(int32_t nproc, const int64_t *counts, const int32_t *order, int64_t *total)
{
    if (nproc < 1) return topomap_i_fail(TOPOMAP_EINVAL, "load balancing needs at least one process, got %d", nproc);
    int64_t sum = 0;
    for (int32_t p = 0; p < nproc; p++) {
        if (counts[p] < 0)
            return topomap_i_fail(TOPOMAP_EINVAL, "process %d has a negative task count (%lld)", p,
                                  (long long)counts[p]);
        if (counts[p] > INT64_MAX - nproc - sum)
            return topomap_i_fail(TOPOMAP_EINVAL, "the task counts overflow 64 bits at process %d", p);
        sum += counts[p];
    }
    *total = sum;
    if (!order) return 0;
    unsigned char *seen = calloc((size_t)nproc, 1);
    if (!seen) return TOPOMAP_ENOMEM;
    int rc = 0;
    for (int32_t i = 0; i < nproc && !rc; i++) {
        if (order[i] < 0 || order[i] >= nproc)
            rc = topomap_i_fail(TOPOMAP_EINVAL, "order[%d] = %d is not a process (0..%d)", i, order[i], nproc - 1);
        else if (seen[order[i]]++)
            rc = topomap_i_fail(TOPOMAP_EINVAL, "order lists process %d twice", order[i]);
    }
    free(seen);
    return rc;
}

/* Allocations of whole nodes: contiguous, random, and fragmented (a few long
   runs of consecutive nodes, as batch systems hand out on Cray machines). */
#include <stdlib.h>
#include "topomap/error.h"
#include "topomap/map.h"
#include "topomap/rng.h"

/* Split `total` into `parts` random sizes, each >= minimum, summing to total. */
static int random_split(topomap_rng *r, int64_t total, int32_t parts, int64_t minimum, int64_t *out)
{
    int64_t free_units = total - (int64_t)parts * minimum;
    int64_t *cuts = malloc(((size_t)parts + 1) * sizeof *cuts);
    if (!cuts) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    cuts[0] = 0;
    for (int32_t i = 1; i < parts; i++) cuts[i] = (int64_t)topomap_rng_below(r, (uint64_t)free_units + 1);
    cuts[parts] = free_units;
    /* insertion sort: `parts` is small */
    for (int32_t i = 1; i < parts; i++)
        for (int32_t j = i; j > 0 && cuts[j - 1] > cuts[j]; j--) {
            int64_t t = cuts[j];
            cuts[j] = cuts[j - 1];
            cuts[j - 1] = t;
        }
    for (int32_t i = 0; i < parts; i++) out[i] = minimum + cuts[i + 1] - cuts[i];
    free(cuts);
    return TOPOMAP_OK;
}

int topomap_allocate_nodes(const topomap_machine *m, int32_t k, int policy, int32_t runs, uint64_t seed,
                           int32_t *nodes_out)
{
    int32_t nn = topomap_machine_nnodes(m);
    if (k < 1 || k > nn)
        return topomap_i_fail(TOPOMAP_EINVAL, "cannot allocate %d nodes of a machine with %d", (int)k, (int)nn);
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    if (policy == TOPOMAP_ALLOC_CONTIGUOUS) {
        for (int32_t i = 0; i < k; i++) nodes_out[i] = i;
        return TOPOMAP_OK;
    }
    if (policy == TOPOMAP_ALLOC_RANDOM) {
        int32_t *all = malloc((size_t)nn * sizeof *all);
        if (!all) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        for (int32_t i = 0; i < nn; i++) all[i] = i;
        /* partial Fisher-Yates: the first k are a uniform random ordered sample */
        for (int32_t i = 0; i < k; i++) {
            int32_t j = i + (int32_t)topomap_rng_below(&r, (uint64_t)(nn - i));
            int32_t t = all[i];
            all[i] = all[j];
            all[j] = t;
            nodes_out[i] = all[i];
        }
        free(all);
        return TOPOMAP_OK;
    }
    if (policy != TOPOMAP_ALLOC_FRAGMENTED)
        return topomap_i_fail(TOPOMAP_EINVAL, "unknown allocation policy %d", policy);
    if (runs < 1) return topomap_i_fail(TOPOMAP_EINVAL, "a fragmented allocation needs runs >= 1, got %d", (int)runs);
    /* Runs are separated by at least one free node so they stay distinct; with
       less room, as many runs as fit (one when the job takes every node). */
    if (runs > k) runs = k;
    if (runs > nn - k + 1) runs = nn - k + 1;
    int64_t *len = malloc((size_t)runs * sizeof *len);
    int64_t *gap = malloc(((size_t)runs + 1) * sizeof *gap);
    int rc = TOPOMAP_OK;
    if (!len || !gap) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    rc = random_split(&r, k, runs, 1, len);
    /* runs+1 gaps: the inner ones get one node each first, the rest is spread */
    if (!rc) rc = random_split(&r, nn - k - (runs - 1), runs + 1, 0, gap);
    if (rc) goto cleanup;
    int64_t at = 0, out = 0;
    for (int32_t i = 0; i < runs; i++) {
        at += gap[i] + (i > 0 ? 1 : 0);
        for (int64_t j = 0; j < len[i]; j++) nodes_out[out++] = (int32_t)(at + j);
        at += len[i];
    }
cleanup:
    free(len);
    free(gap);
    return rc;
}

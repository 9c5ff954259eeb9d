/* Baseline mappers: block (the launcher's in-order placement), cyclic
   (round robin over nodes) and random.  Each fills the allocation's PEs up
   to `capacity` processes per PE. */
#include <stdlib.h>
#include "topomap/error.h"
#include "topomap/map.h"
#include "topomap/rng.h"

static int check_room(int32_t n, int32_t nalloc, int32_t capacity)
{
    if (capacity < 1) return topomap_i_fail(TOPOMAP_EINVAL, "capacity must be >= 1, got %d", (int)capacity);
    if ((int64_t)nalloc * capacity < n)
        return topomap_i_fail(TOPOMAP_EINVAL, "%d processes do not fit on %d PEs x capacity %d",
                              (int)n, (int)nalloc, (int)capacity);
    return TOPOMAP_OK;
}

int topomap_map_block(int32_t n, const int32_t *alloc, int32_t nalloc, int32_t capacity, int32_t *pe_of)
{
    int rc = check_room(n, nalloc, capacity);
    if (rc) return rc;
    for (int32_t i = 0; i < n; i++) pe_of[i] = alloc[i / capacity];
    return TOPOMAP_OK;
}

int topomap_map_cyclic(const topomap_machine *m, int32_t n, const int32_t *alloc, int32_t nalloc,
                       int32_t capacity, int32_t *pe_of)
{
    int rc = check_room(n, nalloc, capacity);
    if (rc) return rc;
    int32_t nn = topomap_machine_nnodes(m);
    /* Bucket the allocation's slots by node, nodes in order of first appearance. */
    int32_t *rank_of_node = malloc((size_t)nn * sizeof *rank_of_node);
    int32_t *node_start = calloc((size_t)nalloc + 2, sizeof *node_start);
    int32_t *slots = malloc((size_t)nalloc * sizeof *slots);
    int32_t *taken = calloc((size_t)nalloc + 1, sizeof *taken);
    if (!rank_of_node || !node_start || !slots || !taken) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (int32_t v = 0; v < nn; v++) rank_of_node[v] = -1;
    int32_t k = 0;
    for (int32_t i = 0; i < nalloc; i++) {
        int32_t v = topomap_machine_node_of(m, alloc[i]);
        if (rank_of_node[v] < 0) rank_of_node[v] = k++;
        node_start[rank_of_node[v] + 1]++;
    }
    for (int32_t r = 0; r < k; r++) node_start[r + 1] += node_start[r];
    int32_t *fill = taken; /* reuse as a cursor first, then reset */
    for (int32_t i = 0; i < nalloc; i++) {
        int32_t r = rank_of_node[topomap_machine_node_of(m, alloc[i])];
        slots[node_start[r] + fill[r]++] = alloc[i];
    }
    for (int32_t r = 0; r < k; r++) taken[r] = 0;
    /* Deal processes to nodes in turn; a full node is skipped. */
    int32_t r = 0;
    for (int32_t i = 0; i < n; i++) {
        while ((int64_t)taken[r] >= (int64_t)(node_start[r + 1] - node_start[r]) * capacity) r = (r + 1) % k;
        int32_t t = taken[r]++;
        int32_t size = node_start[r + 1] - node_start[r];
        /* fill each PE of the node once before using its capacity again */
        pe_of[i] = slots[node_start[r] + t % size];
        r = (r + 1) % k;
    }
cleanup:
    free(rank_of_node);
    free(node_start);
    free(slots);
    free(taken);
    return rc;
}

int topomap_map_random(int32_t n, const int32_t *alloc, int32_t nalloc, int32_t capacity, uint64_t seed,
                       int32_t *pe_of)
{
    int rc = check_room(n, nalloc, capacity);
    if (rc) return rc;
    int64_t nslots = (int64_t)nalloc * capacity;
    int32_t *slot = malloc((size_t)nslots * sizeof *slot);
    if (!slot) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    for (int64_t s = 0; s < nslots; s++) slot[s] = alloc[s / capacity];
    topomap_rng r;
    topomap_rng_seed(&r, seed);
    topomap_rng_shuffle_i32(&r, slot, nslots);
    for (int32_t i = 0; i < n; i++) pe_of[i] = slot[i];
    free(slot);
    return TOPOMAP_OK;
}

/* Large blocks kept for reuse within one partitioning call.

   Recursive bisection allocates a subgraph, its coarse levels and their
   maps for every bisection and frees them before the next one.  Fresh
   large blocks come from the kernel as zeroed pages, and glibc gives
   freed ones back to it: under MALLOC_MMAP_THRESHOLD_ =
   MALLOC_TRIM_THRESHOLD_ = 65536 (how benchmarks/bench_mappers_scaling.py
   runs its children, so that peak RSS is seen) page faults and clearing
   took 8 % of the hierarchy mapper's CPU on the 100^3 stencil.  A freed
   block of POOL_MIN to POOL_MAX bytes goes to the call's pool instead; the
   next request takes the smallest pooled block that holds it.  The pool
   keeps at most POOL_SLOTS blocks, dropping its smallest when full; all go
   back when the call ends.  Blocks above POOL_MAX (the first levels of a
   10^6-vertex graph) are few and are not kept: keeping them too raised
   the grouping's peak RSS by 17 % instead of 3.5 %. */
#include <stdlib.h>
#include "partition_internal.h"

#define POOL_MIN ((size_t)1 << 16)
#define POOL_MAX ((size_t)1 << 24)

/* Every block starts with its capacity; 16 bytes keep the payload aligned
   for any scalar. */
typedef union {
    size_t cap;
    max_align_t align;
} header;

void *topomap_i_palloc(topomap_i_pool *p, size_t bytes)
{
    if (!bytes) bytes = 1;
    if (p && bytes >= POOL_MIN) {
        int32_t best = -1;
        for (int32_t i = 0; i < p->count; i++)
            if (p->cap[i] >= bytes && (best < 0 || p->cap[i] < p->cap[best])) best = i;
        if (best >= 0) {
            header *h = p->block[best];
            p->block[best] = p->block[--p->count];
            p->cap[best] = p->cap[p->count];
            return h + 1;
        }
    }
    header *h = malloc(sizeof *h + bytes);
    if (!h) return NULL;
    h->cap = bytes;
    return h + 1;
}

void topomap_i_pfree(topomap_i_pool *p, void *ptr)
{
    if (!ptr) return;
    header *h = (header *)ptr - 1;
    if (!p || h->cap < POOL_MIN || h->cap > POOL_MAX) {
        free(h);
        return;
    }
    if (p->count == POOL_SLOTS) {
        int32_t least = 0;
        for (int32_t i = 1; i < p->count; i++)
            if (p->cap[i] < p->cap[least]) least = i;
        if (p->cap[least] >= h->cap) {
            free(h);
            return;
        }
        free(p->block[least]);
        p->block[least] = p->block[--p->count];
        p->cap[least] = p->cap[p->count];
    }
    p->block[p->count] = h;
    p->cap[p->count++] = h->cap;
}

void topomap_i_pool_free(topomap_i_pool *p)
{
    for (int32_t i = 0; i < p->count; i++) free(p->block[i]);
    p->count = 0;
}

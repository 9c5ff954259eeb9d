/* Addressable 4-ary max-heap used by graph growing, FM and balancing.
   FM's gain buckets (Fiduccia & Mattheyses 1982) need integer gains; edge
   weights here are bytes (doubles), so a heap with O(log n) updates stands
   in for the buckets.  Equal keys pop the smaller id first: keys and ids
   order the entries totally, so the pops are those of any correct heap.
   Four children instead of two halve the levels a sift crosses, and the
   ids of the siblings a sift compares lie side by side; measured on the
   10^6-process stencil grouped into nodes of 16 (map_nodes.c), the same
   partition in 3 % less CPU (25.4 -> 24.6-24.8 s; eight children: 24.6). */
#include <stdlib.h>
#include "topomap/error.h"
#include "partition_internal.h"

#define ARITY 4

static int above(const topomap_i_heap *h, int32_t a, int32_t b)
{
    double ka = h->key[a], kb = h->key[b];
    return ka > kb || (ka == kb && a < b);
}

static void place(topomap_i_heap *h, int32_t i, int32_t id)
{
    h->heap[i] = id;
    h->pos[id] = i;
}

static void sift_up(topomap_i_heap *h, int32_t i)
{
    int32_t id = h->heap[i];
    while (i > 0) {
        int32_t parent = (i - 1) / ARITY;
        if (!above(h, id, h->heap[parent])) break;
        place(h, i, h->heap[parent]);
        i = parent;
    }
    place(h, i, id);
}

static void sift_down(topomap_i_heap *h, int32_t i)
{
    int32_t id = h->heap[i];
    for (;;) {
        int32_t first = ARITY * i + 1, child = first;
        if (first >= h->size) break;
        int32_t last = first + ARITY < h->size ? first + ARITY : h->size;
        for (int32_t j = first + 1; j < last; j++)
            if (above(h, h->heap[j], h->heap[child])) child = j;
        if (!above(h, h->heap[child], id)) break;
        place(h, i, h->heap[child]);
        i = child;
    }
    place(h, i, id);
}

int topomap_i_heap_init(topomap_i_heap *h, int32_t cap)
{
    size_t c = cap > 0 ? (size_t)cap : 1;
    h->heap = malloc(c * sizeof *h->heap);
    h->pos = malloc(c * sizeof *h->pos);
    h->key = malloc(c * sizeof *h->key);
    h->size = 0;
    h->cap = cap;
    if (!h->heap || !h->pos || !h->key) {
        topomap_i_heap_free(h);
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for a heap of %d entries", (int)cap);
    }
    for (int32_t i = 0; i < cap; i++) h->pos[i] = -1;
    return TOPOMAP_OK;
}

void topomap_i_heap_free(topomap_i_heap *h)
{
    free(h->heap);
    free(h->pos);
    free(h->key);
    h->heap = h->pos = NULL;
    h->key = NULL;
    h->size = 0;
}

void topomap_i_heap_clear(topomap_i_heap *h)
{
    for (int32_t i = 0; i < h->size; i++) h->pos[h->heap[i]] = -1;
    h->size = 0;
}

void topomap_i_heap_set(topomap_i_heap *h, int32_t id, double key)
{
    int32_t i = h->pos[id];
    if (i < 0) {
        h->key[id] = key;
        place(h, h->size++, id);
        sift_up(h, h->size - 1);
        return;
    }
    double old = h->key[id];
    h->key[id] = key;
    if (key > old) sift_up(h, i);
    else sift_down(h, i);
}

void topomap_i_heap_remove(topomap_i_heap *h, int32_t id)
{
    int32_t i = h->pos[id];
    if (i < 0) return;
    h->pos[id] = -1;
    int32_t last = h->heap[--h->size];
    if (i == h->size) return;
    place(h, i, last);
    sift_up(h, i);
    sift_down(h, h->pos[last]);
}

int32_t topomap_i_heap_pop(topomap_i_heap *h)
{
    int32_t top = h->heap[0];
    topomap_i_heap_remove(h, top);
    return top;
}

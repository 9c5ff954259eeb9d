/* Addressable 4-ary max-heap used by graph growing, FM and balancing.
   FM's gain buckets (Fiduccia & Mattheyses 1982) need integer gains; edge
   weights here are bytes (doubles), so a heap with O(log n) updates stands
   in for the buckets.  Equal keys pop the smaller id first: keys and ids
   order the entries totally, so the pops are those of any correct heap.
   Four children instead of two halve the levels a sift crosses, and the
   ids of the siblings a sift compares lie side by side; measured on the
   10^6-process stencil grouped into nodes of 16 (map_nodes.c), the same
   partition in 3 % less CPU (25.4 -> 24.6-24.8 s; eight children: 24.6).
   Slots of (key, id) instead of ids with keys in a separate array indexed
   by id: a sift reads the children's keys from the lines it reads their
   ids from; the same grouping in 21.3 instead of 21.9 s (means of 3). */
#include <stdlib.h>
#include "topomap/error.h"
#include "partition_internal.h"

#define ARITY 4

static int above(topomap_i_slot a, topomap_i_slot b) { return a.key > b.key || (a.key == b.key && a.id < b.id); }

static void place(topomap_i_heap *h, int32_t i, topomap_i_slot s)
{
    h->slot[i] = s;
    h->pos[s.id] = i;
}

static void sift_up(topomap_i_heap *h, int32_t i)
{
    topomap_i_slot s = h->slot[i];
    while (i > 0) {
        int32_t parent = (i - 1) / ARITY;
        if (!above(s, h->slot[parent])) break;
        place(h, i, h->slot[parent]);
        i = parent;
    }
    place(h, i, s);
}

static void sift_down(topomap_i_heap *h, int32_t i)
{
    topomap_i_slot s = h->slot[i];
    for (;;) {
        int32_t first = ARITY * i + 1, child = first;
        if (first >= h->size) break;
        int32_t last = first + ARITY < h->size ? first + ARITY : h->size;
        for (int32_t j = first + 1; j < last; j++)
            if (above(h->slot[j], h->slot[child])) child = j;
        if (!above(h->slot[child], s)) break;
        place(h, i, h->slot[child]);
        i = child;
    }
    place(h, i, s);
}

int topomap_i_heap_init(topomap_i_heap *h, int32_t cap)
{
    size_t c = cap > 0 ? (size_t)cap : 1;
    h->slot = malloc(c * sizeof *h->slot);
    h->pos = malloc(c * sizeof *h->pos);
    h->size = 0;
    h->cap = cap;
    if (!h->slot || !h->pos) {
        topomap_i_heap_free(h);
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for a heap of %d entries", (int)cap);
    }
    for (int32_t i = 0; i < cap; i++) h->pos[i] = -1;
    return TOPOMAP_OK;
}

void topomap_i_heap_free(topomap_i_heap *h)
{
    free(h->slot);
    free(h->pos);
    h->slot = NULL;
    h->pos = NULL;
    h->size = 0;
}

void topomap_i_heap_clear(topomap_i_heap *h)
{
    for (int32_t i = 0; i < h->size; i++) h->pos[h->slot[i].id] = -1;
    h->size = 0;
}

void topomap_i_heap_set(topomap_i_heap *h, int32_t id, double key)
{
    int32_t i = h->pos[id];
    if (i < 0) {
        place(h, h->size++, (topomap_i_slot){key, id});
        sift_up(h, h->size - 1);
        return;
    }
    double old = h->slot[i].key;
    h->slot[i].key = key;
    if (key > old) sift_up(h, i);
    else sift_down(h, i);
}

void topomap_i_heap_remove(topomap_i_heap *h, int32_t id)
{
    int32_t i = h->pos[id];
    if (i < 0) return;
    h->pos[id] = -1;
    topomap_i_slot last = h->slot[--h->size];
    if (i == h->size) return;
    place(h, i, last);
    sift_up(h, i);
    sift_down(h, h->pos[last.id]);
}

int32_t topomap_i_heap_pop(topomap_i_heap *h)
{
    int32_t top = h->slot[0].id;
    topomap_i_heap_remove(h, top);
    return top;
}

/* Indexed binary heap of the flow simulator: ids ordered by key[id], with
   each id's position kept so a key can change or an id leave in O(log n). */
#include <stdlib.h>
#include "flowsim_internal.h"
#include "topomap/error.h"

static int before(const topomap_i_iheap *h, const double *key, int64_t a, int64_t b)
{
    return h->max ? key[a] > key[b] : key[a] < key[b];
}

static void place(topomap_i_iheap *h, int64_t i, int64_t id)
{
    h->ids[i] = id;
    h->pos[id] = i;
}

static void sift_up(topomap_i_iheap *h, const double *key, int64_t i)
{
    int64_t id = h->ids[i];
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (!before(h, key, id, h->ids[p])) break;
        place(h, i, h->ids[p]);
        i = p;
    }
    place(h, i, id);
}

static void sift_down(topomap_i_iheap *h, const double *key, int64_t i)
{
    int64_t id = h->ids[i];
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= h->n) break;
        if (c + 1 < h->n && before(h, key, h->ids[c + 1], h->ids[c])) c++;
        if (!before(h, key, h->ids[c], id)) break;
        place(h, i, h->ids[c]);
        i = c;
    }
    place(h, i, id);
}

int topomap_i_iheap_reserve(topomap_i_iheap *h, int64_t ids)
{
    if (ids <= h->cap) return TOPOMAP_OK;
    int64_t cap = h->cap ? h->cap : 1024;
    while (cap < ids) cap *= 2;
    int64_t *a = realloc(h->ids, (size_t)cap * sizeof *a);
    if (a) h->ids = a;
    int64_t *p = realloc(h->pos, (size_t)cap * sizeof *p);
    if (p) h->pos = p;
    if (!a || !p) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the flow simulator's heaps");
    for (int64_t i = h->cap; i < cap; i++) h->pos[i] = -1;
    h->cap = cap;
    return TOPOMAP_OK;
}

void topomap_i_iheap_free(topomap_i_iheap *h)
{
    free(h->ids);
    free(h->pos);
    h->ids = h->pos = NULL;
    h->n = h->cap = 0;
}

void topomap_i_iheap_push(topomap_i_iheap *h, const double *key, int64_t id)
{
    h->ids[h->n] = id;
    h->pos[id] = h->n;
    sift_up(h, key, h->n++);
}

void topomap_i_iheap_remove(topomap_i_iheap *h, const double *key, int64_t id)
{
    int64_t i = h->pos[id], last = h->ids[--h->n];
    h->pos[id] = -1;
    if (i == h->n) return;
    place(h, i, last);
    topomap_i_iheap_update(h, key, last);
}

void topomap_i_iheap_update(topomap_i_iheap *h, const double *key, int64_t id)
{
    int64_t i = h->pos[id];
    if (i > 0 && before(h, key, id, h->ids[(i - 1) / 2])) sift_up(h, key, i);
    else sift_down(h, key, i);
}

void topomap_i_iheap_heapify(topomap_i_iheap *h, const double *key)
{
    for (int64_t i = h->n / 2; i-- > 0;) sift_down(h, key, i);
}

/* Steps shared by the top-down mappers (map_topdown.h). */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "map_topdown.h"
#include "sorted.h"

int topomap_i_sorted_pes(const topomap_machine *m, const int32_t *alloc, int32_t nalloc, int32_t *pes)
{
    int32_t npes = topomap_machine_npes(m);
    for (int32_t i = 0; i < nalloc; i++)
        if (alloc[i] < 0 || alloc[i] >= npes)
            return topomap_i_fail(TOPOMAP_EINVAL, "allocation entry %d is PE %d, outside [0, %d)", (int)i,
                                  (int)alloc[i], (int)npes);
    memcpy(pes, alloc, (size_t)nalloc * sizeof *alloc);
    qsort(pes, (size_t)nalloc, sizeof *pes, topomap_i_cmp_i32);
    for (int32_t i = 1; i < nalloc; i++)
        if (pes[i] == pes[i - 1])
            return topomap_i_fail(TOPOMAP_EINVAL, "PE %d appears twice in the allocation", (int)pes[i]);
    return TOPOMAP_OK;
}

topomap_ugraph topomap_i_induced_subgraph(const topomap_ugraph *g, const int32_t *verts, int32_t w, int32_t *loc,
                                          int64_t *sxadj, int32_t *sadj, double *swgt)
{
    for (int32_t i = 0; i < w; i++) loc[verts[i]] = i;
    int64_t e = 0;
    sxadj[0] = 0;
    for (int32_t i = 0; i < w; i++) {
        int32_t u = verts[i];
        for (int64_t k = g->xadj[u]; k < g->xadj[u + 1]; k++) {
            int32_t v = loc[g->adjncy[k]];
            if (v >= 0) {
                sadj[e] = v;
                swgt[e++] = g->adjwgt[k];
            }
        }
        sxadj[i + 1] = e;
    }
    for (int32_t i = 0; i < w; i++) loc[verts[i]] = -1;
    return (topomap_ugraph){w, sxadj, sadj, swgt, NULL};
}

void topomap_i_sort_by_part(int32_t *items, int32_t w, const int32_t *part, int32_t k, int32_t *count,
                            int32_t *tmp)
{
    memset(count, 0, ((size_t)k + 1) * sizeof *count);
    for (int32_t i = 0; i < w; i++) count[part[i] + 1]++;
    for (int32_t j = 0; j < k; j++) count[j + 1] += count[j];
    for (int32_t i = 0; i < w; i++) tmp[count[part[i]]++] = items[i];
    /* count[j] now ends part j: shift it back to where part j starts */
    memmove(count + 1, count, (size_t)k * sizeof *count);
    count[0] = 0;
    memcpy(items, tmp, (size_t)w * sizeof *tmp);
}

int topomap_i_sort_by_place(int32_t *items, int32_t w, const int32_t *place, int32_t k)
{
    int32_t *part = malloc(((size_t)w + 1) * sizeof *part), *tmp = malloc(((size_t)w + 1) * sizeof *tmp);
    int32_t *count = malloc(((size_t)k + 1) * sizeof *count);
    int rc = part && tmp && count ? TOPOMAP_OK
                                  : topomap_i_fail(TOPOMAP_ENOMEM, "out of memory ordering %d processes", (int)w);
    if (!rc) {
        for (int32_t i = 0; i < w; i++) part[i] = place[items[i]];
        topomap_i_sort_by_part(items, w, part, k, count, tmp);
    }
    free(part);
    free(tmp);
    free(count);
    return rc;
}

int topomap_i_fill_first(const double *ext, int32_t n, int64_t room0, int64_t room1)
{
    double p0 = 0, p1 = 0;
    for (int32_t i = 0; ext && i < n; i++) {
        p0 += ext[2 * i];
        p1 += ext[2 * i + 1];
    }
    return p0 != p1 ? p1 < p0 : room1 > room0;
}

int64_t topomap_i_ring_arc(const uint8_t *occ, int64_t r, int64_t *start)
{
    int64_t first = -1, last = -1, gap = 0;
    *start = 0;
    for (int64_t x = 0; x < r; x++) {
        if (!occ[x]) continue;
        if (first < 0) {
            first = x;
        } else if (x - last - 1 > gap) {
            gap = x - last - 1;
            *start = x;
        }
        last = x;
    }
    if (r - 1 - last + first > gap) { /* the run that wraps around */
        gap = r - 1 - last + first;
        *start = first;
    }
    return r - gap;
}

int64_t topomap_i_interval_hops(int64_t s1, int64_t e1, int64_t s2, int64_t e2, int64_t r)
{
    if (r > 0) {
        int64_t d1 = ((s2 - s1) % r + r) % r, d2 = ((s1 - s2) % r + r) % r;
        if (d1 < e1 || d2 < e2) return 0;
        return d1 - e1 + 1 < d2 - e2 + 1 ? d1 - e1 + 1 : d2 - e2 + 1;
    }
    int64_t gap = s2 - (s1 + e1 - 1) > s1 - (s2 + e2 - 1) ? s2 - (s1 + e1 - 1) : s1 - (s2 + e2 - 1);
    return gap > 0 ? gap : 0;
}

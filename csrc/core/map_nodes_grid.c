/* Node grouping of a stencil pattern by boxes of its grid (map_nodes.c
   calls it when the pattern carries coordinates).  A halo exchange on a
   Cartesian grid cuts least when every node holds a box of cells: of all
   shapes of c cells a box of least surface sends the least out.  The
   multilevel partitioner only approaches that, at about 27 s of CPU for
   10^6 processes (recursive bisection into 62,500 nodes of 16); the boxes
   cost O(n).

   The tiling applies when every group has the same c slots, the
   coordinates fill the box d_0 x ... x d_{D-1} (d_i = largest coordinate
   + 1) once each, and a box b with b_0 ... b_{D-1} = c and every b_i
   dividing d_i exists.  Of those boxes the one of least surface (the sum
   over i of c / b_i) is taken, the first in the order of b_0, then b_1, on
   a tie; groups are the boxes in grid order (axis 0 fastest): the
   geometric embedding's grouping.  Otherwise the caller partitions.
   Measured against the partitioner (seed 0), 7-point stencils: 36x18x18
   into nodes of 16 / 8 / 12 cut 25,920 / 31,752 / 27,864 bytes against
   27,528 / 34,822 / 29,040, 72x36x36 220,320 / 266,976 / 235,872 against
   235,878 / 293,966 / 251,778.  Where no box tiles the grid (46^3 into
   nodes of 16), recursive coordinate bisection with exact counts was
   tried: 5-10% more cut than the partitioner, and 0.5-4% more after the
   partitioner's k-way refinement, so those grids keep the partitioner. */
#include <stdlib.h>
#include "topomap/error.h"
#include "topomap/map.h"

#define AXIS_BITS 20

/* The least-surface box of c cells whose sides divide dims[0, d); 0 if none. */
static int find_box(const int64_t *dims, int32_t d, int64_t c, int32_t a, int64_t *b, int64_t *best, double *best_s)
{
    if (a == d - 1) {
        if (dims[a] % c) return 0;
        b[a] = c;
        double s = 0;
        int64_t vol = 1;
        for (int32_t i = 0; i < d; i++) vol *= b[i];
        for (int32_t i = 0; i < d; i++) s += (double)vol / (double)b[i];
        if (*best_s < 0 || s < *best_s) {
            *best_s = s;
            for (int32_t i = 0; i < d; i++) best[i] = b[i];
        }
        return 1;
    }
    int found = 0;
    for (int64_t f = 1; f <= c && f <= dims[a]; f++)
        if (c % f == 0 && dims[a] % f == 0) {
            b[a] = f;
            found |= find_box(dims, d, c / f, a + 1, b, best, best_s);
        }
    return found;
}

/* Groups as boxes tiling the grid, if the case allows (see the header); *done says if it did. */
static int tile(const topomap_pattern *p, int32_t k, const int64_t *slots, int32_t *group, int *done)
{
    int32_t n = p->n, d = p->ndims;
    int64_t dims[3] = {1, 1, 1}, b[3], box[3], cells = 1;
    double best_s = -1;
    *done = 0;
    for (int32_t j = 1; j < k; j++)
        if (slots[j] != slots[0]) return TOPOMAP_OK;
    if ((int64_t)k * slots[0] != n) return TOPOMAP_OK;
    for (int64_t i = 0; i < (int64_t)n * d; i++)
        if (p->coords[i] + 1 > dims[i % d]) dims[i % d] = p->coords[i] + 1;
    for (int32_t a = 0; a < d; a++) cells *= dims[a];
    if (cells != n || !find_box(dims, d, slots[0], 0, b, box, &best_s)) return TOPOMAP_OK;
    char *seen = calloc((size_t)n, 1);
    if (!seen) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory grouping %d processes", (int)n);
    int bijective = 1;
    for (int32_t i = 0; i < n && bijective; i++) {
        int64_t cell = 0, g = 0;
        for (int32_t a = d - 1; a >= 0; a--) {
            int64_t x = p->coords[(int64_t)i * d + a];
            cell = cell * dims[a] + x;
            g = g * (dims[a] / box[a]) + x / box[a];
        }
        bijective = !seen[cell];
        seen[cell] = 1;
        group[i] = (int32_t)g;
    }
    free(seen);
    *done = bijective;
    return TOPOMAP_OK;
}

int topomap_i_group_by_grid(const topomap_pattern *p, int32_t k, const int64_t *slots, int32_t *group, int *done)
{
    int32_t n = p->n, d = p->ndims;
    *done = 0;
    if (d < 1 || d > 3) return topomap_i_fail(TOPOMAP_EINVAL, "a process grid has 1 to 3 axes, got %d", (int)d);
    for (int64_t i = 0; i < (int64_t)n * d; i++)
        if (p->coords[i] < 0 || p->coords[i] >= 1 << AXIS_BITS)
            return topomap_i_fail(TOPOMAP_EINVAL, "process %lld has grid coordinate %d on axis %d, outside [0, 2^%d)",
                                  (long long)(i / d), (int)p->coords[i], (int)(i % d), AXIS_BITS);
    return tile(p, k, slots, group, done);
}

/* The node-level view shared by the mappers that first group processes
   into nodes (Hoefler & Snir 2011 §4 "multicore"; Mirsadeghi 2017 §3.3.1,
   PTRAM step 1) and then map groups onto nodes.

   Choices the sources leave open: when the processes do not fill the
   allocation, we use as few nodes as can hold them (the largest first) so
   that as much traffic as possible stays inside nodes; which of the
   allocation's nodes they go to is the node-level mapper's decision.
   Inside a node, processes take the node's PEs in rank order.

   The grouping is topomap_partition (multilevel k-way, hard capacities)
   with one multilevel run per bisection (ntries 1, not the default 4):
   with k near n / 16 the k-way scheme cannot coarsen (it stops at 30 k
   vertices), so the whole cost is the recursive bisection of the full
   graph, ntries runs per step.  Measured (mean cut over seeds 0-2, full
   nodes of 16 and 8 on 3elt, rgg_n_2_15_s0, delaunay_n15, 3-D 7-point
   stencils 22^3 and 46^3): ntries 1 cuts 0.1-1.3% more than 4 on the
   irregular graphs and 0.1-0.2% less on the stencils, at 1/3 of the time;
   either is below what ntries 4 gave before the path balancing of
   partition_paths.c.  Up to SMALL_GROUPING processes, where the grouping
   costs little, it keeps 4 runs: with 1, MAGC's phase 1 on the 2D-3D pair
   of its notebook (64 processes) grouped worse and lost its edge over
   Strategy 1 (network MC 1.0 vs 0.83 x default; 0.67 with 4 runs).
   With one run the finest level is refined and balanced once, not twice
   (partition.c): 22.0 instead of 25.3 s on the 100^3 stencil into nodes
   of 16, for a 0.33% higher cut.
   A stencil pattern whose grid the nodes tile by boxes (p->coords set by
   the Python layer) is grouped by those boxes instead: map_nodes_grid.c.
   Complexity: O((n + m) log k) for the bisections plus O(n + m) per
   refinement pass of the finest level; O(n) for boxes. */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/map.h"
#include "topomap/partition.h"

#define SMALL_GROUPING 32768 /* processes up to which the grouping keeps 4 multilevel runs */

void topomap_alloc_nodes_destroy(topomap_alloc_nodes *an)
{
    if (!an) return;
    free(an->node);
    free(an->first_pe);
    free(an->slots);
    free(an->pe_start);
    free(an->pes);
    free(an);
}

int topomap_alloc_nodes_create(const topomap_machine *m, const int32_t *alloc, int32_t nalloc,
                               int32_t capacity, topomap_alloc_nodes **out)
{
    int32_t npes = topomap_machine_npes(m), nn = topomap_machine_nnodes(m);
    if (nalloc < 1 || capacity < 1)
        return topomap_i_fail(TOPOMAP_EINVAL, "an allocation needs >= 1 PE and capacity >= 1 (got %d PEs, capacity %d)",
                              (int)nalloc, (int)capacity);
    int rc = TOPOMAP_OK;
    topomap_alloc_nodes *an = calloc(1, sizeof *an);
    int32_t *index = malloc((size_t)nn * sizeof *index); /* machine node -> allocation node or -1 */
    int32_t *fill = NULL;
    if (!an || !index) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    an->capacity = capacity;
    an->node = malloc((size_t)nalloc * sizeof *an->node);
    an->first_pe = malloc((size_t)nalloc * sizeof *an->first_pe);
    an->slots = calloc((size_t)nalloc, sizeof *an->slots);
    an->pe_start = calloc((size_t)nalloc + 1, sizeof *an->pe_start);
    an->pes = malloc((size_t)nalloc * sizeof *an->pes);
    fill = calloc((size_t)nalloc, sizeof *fill);
    if (!an->node || !an->first_pe || !an->slots || !an->pe_start || !an->pes || !fill) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (int32_t i = 0; i < nn; i++) index[i] = -1;
    for (int32_t i = 0; i < nalloc; i++) {
        int32_t pe = alloc[i];
        if (pe < 0 || pe >= npes) {
            rc = topomap_i_fail(TOPOMAP_EINVAL, "allocation entry %d is PE %d, outside [0, %d)", (int)i, (int)pe, (int)npes);
            goto cleanup;
        }
        int32_t nd = topomap_machine_node_of(m, pe);
        if (index[nd] < 0) {
            index[nd] = an->nnodes;
            an->node[an->nnodes] = nd;
            an->first_pe[an->nnodes++] = pe;
        }
        an->pe_start[index[nd] + 1]++;
        an->slots[index[nd]] += capacity;
    }
    for (int32_t j = 0; j < an->nnodes; j++) an->pe_start[j + 1] += an->pe_start[j];
    for (int32_t i = 0; i < nalloc; i++) {
        int32_t j = index[topomap_machine_node_of(m, alloc[i])];
        an->pes[an->pe_start[j] + fill[j]++] = alloc[i];
    }
    *out = an;
    an = NULL;
cleanup:
    topomap_alloc_nodes_destroy(an);
    free(index);
    free(fill);
    return rc;
}

/* Does allocation node x come after y: fewer slots, or as many and later? */
static int after(int32_t x, int32_t y, const int64_t *slots) { return slots[x] != slots[y] ? slots[x] < slots[y] : x > y; }

int topomap_group_by_node(const topomap_pattern *p, const topomap_alloc_nodes *an,
                          const topomap_run_options *run, int32_t *group, int64_t *group_slots,
                          int32_t *ngroups)
{
    int32_t nn = an->nnodes;
    /* the largest nodes first, ties in allocation order (insertion sort: nn is small next to n) */
    int32_t *order = malloc((size_t)nn * sizeof *order);
    if (!order) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    for (int32_t j = 0; j < nn; j++) {
        int32_t i = j;
        order[j] = j;
        while (i > 0 && after(order[i - 1], order[i], an->slots)) {
            int32_t t = order[i - 1];
            order[i - 1] = order[i];
            order[i] = t;
            i--;
        }
    }
    int64_t total = 0;
    int32_t k = 0;
    while (k < nn && total < p->n) {
        group_slots[k] = an->slots[order[k]];
        total += group_slots[k++];
    }
    free(order);
    if (total < p->n)
        return topomap_i_fail(TOPOMAP_EINVAL, "%d processes do not fit in the allocation's %lld slots", (int)p->n,
                              (long long)total);
    *ngroups = k;
    if (k == 1) {
        memset(group, 0, (size_t)p->n * sizeof *group);
        return TOPOMAP_OK;
    }
    int tiled = 0;
    if (p->coords) {
        int rc = topomap_i_group_by_grid(p, k, group_slots, group, &tiled);
        if (rc || tiled) return rc;
    }
    return topomap_partition_processes(p, k, group_slots, run, group);
}

int topomap_partition_processes(const topomap_pattern *p, int32_t k, const int64_t *slots,
                                const topomap_run_options *run, int32_t *part)
{
    int64_t nnz = p->indptr[p->n];
    int64_t *xadj = malloc(((size_t)p->n + 1) * sizeof *xadj);
    int32_t *adj = malloc(2 * (size_t)nnz * sizeof *adj + 1);
    double *wgt = malloc(2 * (size_t)nnz * sizeof *wgt + 1);
    double *targets = malloc((size_t)k * sizeof *targets);
    int rc = TOPOMAP_OK;
    if (!xadj || !adj || !wgt || !targets) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory partitioning %d processes", (int)p->n);
        goto cleanup;
    }
    rc = topomap_ugraph_from_pattern(p, xadj, adj, wgt);
    if (rc) goto cleanup;
    for (int32_t j = 0; j < k; j++) targets[j] = (double)slots[j];
    topomap_ugraph g = {p->n, xadj, adj, wgt, NULL};
    topomap_partition_options opt;
    topomap_partition_options_init(&opt);
    opt.trusted = 1;
    opt.hard = 1;
    opt.ntries = p->n <= SMALL_GROUPING ? 4 : 1;
    if (run) {
        opt.seed = run->seed;
        opt.progress = run->progress;
        opt.progress_ctx = run->progress_ctx;
    }
    rc = topomap_partition(&g, k, targets, &opt, part, NULL, NULL);
cleanup:
    free(xadj);
    free(adj);
    free(wgt);
    free(targets);
    return rc;
}

int topomap_pattern_quotient(const topomap_pattern *p, const int32_t *group, int32_t k, int64_t *indptr,
                             int32_t *indices, double *bytes)
{
    int32_t n = p->n;
    for (int32_t i = 0; i < n; i++)
        if (group[i] < 0 || group[i] >= k)
            return topomap_i_fail(TOPOMAP_EINVAL, "process %d is in group %d, outside [0, %d)", (int)i, (int)group[i], (int)k);
    /* bucket the processes by group, then merge each group's rows through a dense accumulator */
    int64_t *start = calloc((size_t)k + 1, sizeof *start);
    int32_t *members = malloc((size_t)n * sizeof *members + 1);
    double *acc = calloc((size_t)k, sizeof *acc);
    int32_t *mark = malloc((size_t)k * sizeof *mark);
    int rc = TOPOMAP_OK;
    if (!start || !members || !acc || !mark) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (int32_t i = 0; i < n; i++) start[group[i] + 1]++;
    for (int32_t a = 0; a < k; a++) start[a + 1] += start[a];
    for (int32_t i = 0; i < n; i++) members[start[group[i]]++] = i;
    for (int32_t a = k; a > 0; a--) start[a] = start[a - 1];
    start[0] = 0;
    for (int32_t a = 0; a < k; a++) mark[a] = -1;
    int64_t nz = 0;
    indptr[0] = 0;
    for (int32_t a = 0; a < k; a++) {
        int64_t row = nz;
        for (int64_t t = start[a]; t < start[a + 1]; t++) {
            int32_t i = members[t];
            for (int64_t e = p->indptr[i]; e < p->indptr[i + 1]; e++) {
                int32_t b = group[p->indices[e]];
                if (b == a) continue;
                if (mark[b] != a) {
                    mark[b] = a;
                    indices[nz++] = b;
                }
                acc[b] += p->bytes[e];
            }
        }
        /* sort the row's columns (insertion sort on the usual few entries, shell gaps for long rows) */
        int64_t len = nz - row;
        for (int64_t gap = len / 2; gap > 0; gap /= 2)
            for (int64_t x = row + gap; x < nz; x++)
                for (int64_t y = x; y >= row + gap && indices[y - gap] > indices[y]; y -= gap) {
                    int32_t t = indices[y];
                    indices[y] = indices[y - gap];
                    indices[y - gap] = t;
                }
        for (int64_t x = row; x < nz; x++) {
            bytes[x] = acc[indices[x]];
            acc[indices[x]] = 0;
        }
        indptr[a + 1] = nz;
    }
cleanup:
    free(start);
    free(members);
    free(acc);
    free(mark);
    return rc;
}

int topomap_place_groups(const topomap_alloc_nodes *an, int32_t n, const int32_t *group,
                         const int32_t *node_of_group, int32_t *pe_of)
{
    int64_t *used = calloc((size_t)an->nnodes, sizeof *used);
    if (!used) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    int rc = TOPOMAP_OK;
    for (int32_t i = 0; i < n && !rc; i++) {
        int32_t g = group[i], j = node_of_group ? (g >= 0 ? node_of_group[g] : -1) : g;
        if (j < 0 || j >= an->nnodes) {
            rc = topomap_i_fail(TOPOMAP_EINVAL, "process %d (group %d) goes to allocation node %d, outside [0, %d)", (int)i,
                                (int)g, (int)j, (int)an->nnodes);
        } else if (used[j] >= an->slots[j]) {
            rc = topomap_i_fail(TOPOMAP_EINVAL, "allocation node %d (machine node %d) is full: %lld slots, process %d is one too many",
                                (int)j, (int)an->node[j], (long long)an->slots[j], (int)i);
        } else {
            pe_of[i] = an->pes[an->pe_start[j] + used[j] / an->capacity];
            used[j]++;
        }
    }
    free(used);
    return rc;
}

/* Kumar's hybrid heuristic with graph partitioning (Kumar 2012, §6.2.3;
   notes 001 §4.7): when the problem is too large for GRASP, partition both
   the node graph G and the task graph G' into parts of p nodes, map the
   part quotient H' (edge weight = total bytes between parts) onto H (edge
   weight = average hops between the parts' nodes) with GRASP, then map
   each matched pair of parts with GRASP on the induced subgraphs.  The
   thesis used p = 125 (1,000 nodes -> 8 parts).

   Choices the thesis leaves open:
   - Partitioning the allocation (the thesis says ParMETIS on G, whose
     edges are distances, not affinities): each allocated node is joined to
     its 6 nearest allocated nodes (hops over the whole machine, ties to the
     lower allocation index; 6 = a 3-D torus node's degree), edge weight
     1 / hops, and the multilevel partitioner (partition.h, hard mode) cuts
     that graph into K = ceil(nodes / p) parts whose sizes differ by at most
     one node.
   - Partitioning the tasks: the processes (C + C^T) into K parts, hard
     capacity = the slots of one node part each; n-to-1 is then handled
     inside each pair by the usual grouping (map_qap.c).  A task part fits
     a node part with at least as many slots.
   - H's distance between two parts is the mean hop count over all pairs
     of their nodes (both directions averaged).
   - Inside a pair only the pair's own messages count (the thesis's
     "corresponding subgraphs"); messages to other parts were already
     weighed at the quotient level.
   - Each GRASP run gets its own seed from the mapper's seed (one random
     stream, one draw per part in part order); the same GRASP options
     everywhere.  One part (nodes <= p): plain GRASP.

   Complexity, M allocated nodes, K parts: O(M^2 x route) for the nearest
   neighbours and H, two partitionings, one GRASP on K parts and K GRASPs
   on p nodes; memory O(M + nnz + p^2). */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/map_kumar.h"
#include "topomap/partition.h"
#include "topomap/rng.h"
#include "map_qap.h"

#define NEAREST 6

typedef struct {
    int32_t a, b;
    double w;
} edge;

static int cmp_edge(const void *x, const void *y)
{
    const edge *e = x, *f = y;
    if (e->a != f->a) return e->a < f->a ? -1 : 1;
    return (e->b > f->b) - (e->b < f->b);
}

static double mean_hops(const topomap_machine *m, int32_t a, int32_t b, int *bad)
{
    int32_t h = topomap_machine_route_count(m, a, b), h2 = topomap_machine_route_count(m, b, a);
    if (h < 0 || h2 < 0) *bad = 1;
    return 0.5 * (h + h2);
}

/* Node part of each allocation node: the nearest-neighbour graph, cut by the partitioner. */
static int part_nodes(const topomap_machine *m, const topomap_alloc_nodes *an, int32_t K,
                      const topomap_run_options *run, int32_t *npart)
{
    int32_t M = an->nnodes, R = M - 1 < NEAREST ? M - 1 : NEAREST;
    edge *e = malloc(2 * (size_t)M * (size_t)R * sizeof *e + 1);
    int32_t *near = malloc((size_t)R * sizeof *near + 1);
    double *nh = malloc((size_t)R * sizeof *nh + 1), *targets = malloc((size_t)K * sizeof *targets);
    int64_t *xadj = calloc((size_t)M + 1, sizeof *xadj);
    int32_t *adj = malloc(2 * (size_t)M * (size_t)R * sizeof *adj + 1);
    double *w = malloc(2 * (size_t)M * (size_t)R * sizeof *w + 1);
    int rc = TOPOMAP_OK, bad = 0;
    if (!e || !near || !nh || !targets || !xadj || !adj || !w) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory partitioning %d nodes", (int)M);
        goto cleanup;
    }
    int64_t ne = 0;
    topomap_i_ticker tk = {run, "kumar-hybrid", 0.0, 1.0, 0, 0};
    for (int32_t a = 0; a < M; a++) {
        int32_t k = 0;
        for (int32_t b = 0; b < M; b++) {
            if (b == a) continue;
            double h = mean_hops(m, an->node[a], an->node[b], &bad);
            if (k == R && h >= nh[k - 1]) continue; /* ties keep the lower index already in */
            int32_t i = k < R ? k++ : k - 1;
            for (; i > 0 && nh[i - 1] > h; i--) {
                nh[i] = nh[i - 1];
                near[i] = near[i - 1];
            }
            nh[i] = h;
            near[i] = b;
        }
        for (int32_t i = 0; i < k; i++) {
            int32_t b = near[i];
            e[ne++] = (edge){a < b ? a : b, a < b ? b : a, 1.0 / (nh[i] > 0 ? nh[i] : 1.0)};
        }
        rc = topomap_i_tick(&tk, TOPOMAP_I_QAP_UNITS(16 * (int64_t)M), (double)a / M);
        if (rc) goto cleanup;
    }
    if (bad) {
        rc = topomap_i_fail(TOPOMAP_EINVAL, "the machine lacks a route between two nodes of the allocation");
        goto cleanup;
    }
    qsort(e, (size_t)ne, sizeof *e, cmp_edge);
    int64_t u = 0;
    for (int64_t i = 0; i < ne; i++)
        if (u == 0 || e[i].a != e[u - 1].a || e[i].b != e[u - 1].b) e[u++] = e[i];
    for (int64_t i = 0; i < u; i++) {
        xadj[e[i].a + 1]++;
        xadj[e[i].b + 1]++;
    }
    for (int32_t a = 0; a < M; a++) xadj[a + 1] += xadj[a];
    /* sorted rows: edges are sorted by (a, b), so the b-side entries of a row
       (neighbours below it) arrive in order before its a-side entries */
    int64_t *fill = malloc(((size_t)M + 1) * sizeof *fill);
    if (!fill) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    memcpy(fill, xadj, ((size_t)M + 1) * sizeof *fill);
    for (int64_t i = 0; i < u; i++) {
        adj[fill[e[i].b]] = e[i].a;
        w[fill[e[i].b]++] = e[i].w;
    }
    for (int64_t i = 0; i < u; i++) {
        adj[fill[e[i].a]] = e[i].b;
        w[fill[e[i].a]++] = e[i].w;
    }
    free(fill);
    for (int32_t j = 0; j < K; j++) targets[j] = (double)(M / K + (j < M % K));
    topomap_ugraph g = {M, xadj, adj, w, NULL};
    topomap_partition_options popt;
    topomap_partition_options_init(&popt);
    popt.trusted = 1;
    popt.hard = 1;
    popt.seed = run->seed;
    popt.progress = run->progress;
    popt.progress_ctx = run->progress_ctx;
    rc = topomap_partition(&g, K, targets, &popt, npart, NULL, NULL);
cleanup:
    free(e);
    free(near);
    free(nh);
    free(targets);
    free(xadj);
    free(adj);
    free(w);
    return rc;
}

/* GRASP of the part quotient: task part i -> node part part_loc[i]. */
static int map_parts(const topomap_machine *m, const topomap_alloc_nodes *an, const topomap_pattern *p, int32_t K,
                     const int32_t *npart, const int32_t *tpart, const int64_t *slots,
                     const topomap_grasp_options *opt, const topomap_run_options *run, int32_t *part_loc)
{
    int32_t M = an->nnodes;
    int64_t nnz = p->indptr[p->n];
    topomap_i_qap q = {0};
    int64_t *qptr = malloc(((size_t)K + 1) * sizeof *qptr);
    int32_t *qidx = malloc((size_t)nnz * sizeof *qidx + 1);
    double *qb = malloc((size_t)nnz * sizeof *qb + 1), *cnt = calloc((size_t)K * K, sizeof *cnt);
    q.d = calloc((size_t)K * K, sizeof *q.d);
    q.size = calloc((size_t)K, sizeof *q.size);
    q.cap = malloc((size_t)K * sizeof *q.cap);
    int rc = TOPOMAP_OK, bad = 0;
    if (!qptr || !qidx || !qb || !cnt || !q.d || !q.size || !q.cap) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory mapping %d parts", (int)K);
        goto cleanup;
    }
    rc = topomap_pattern_quotient(p, tpart, K, qptr, qidx, qb);
    if (rc) goto cleanup;
    topomap_pattern flows = {K, qptr, qidx, qb};
    q.xadj = malloc(((size_t)K + 1) * sizeof *q.xadj);
    q.adj = malloc(2 * (size_t)qptr[K] * sizeof *q.adj + 1);
    q.w = malloc(2 * (size_t)qptr[K] * sizeof *q.w + 1);
    if (!q.xadj || !q.adj || !q.w) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory mapping %d parts", (int)K);
        goto cleanup;
    }
    rc = topomap_ugraph_from_pattern(&flows, q.xadj, q.adj, q.w);
    if (rc) goto cleanup;
    topomap_i_ticker tk = {run, "kumar-hybrid", 0.0, 0.5, 0, 0};
    for (int32_t a = 0; a < M; a++) {
        for (int32_t b = a + 1; b < M; b++) {
            double h = mean_hops(m, an->node[a], an->node[b], &bad);
            int64_t x = (int64_t)npart[a] * K + npart[b], y = (int64_t)npart[b] * K + npart[a];
            q.d[x] += h;
            cnt[x]++;
            if (y != x) {
                q.d[y] += h;
                cnt[y]++;
            }
        }
        rc = topomap_i_tick(&tk, TOPOMAP_I_QAP_UNITS(16 * (int64_t)(M - a)), (double)a / M);
        if (rc) goto cleanup;
    }
    if (bad) {
        rc = topomap_i_fail(TOPOMAP_EINVAL, "the machine lacks a route between two nodes of the allocation");
        goto cleanup;
    }
    for (int64_t x = 0; x < (int64_t)K * K; x++) q.d[x] = cnt[x] > 0 ? q.d[x] / cnt[x] : 0.0;
    for (int32_t i = 0; i < p->n; i++) q.size[tpart[i]]++;
    memcpy(q.cap, slots, (size_t)K * sizeof *q.cap);
    q.n = q.m = K;
    topomap_i_ticker gtk = {run, "kumar-hybrid", 0.5, 1.0, 0, 0};
    topomap_run_options sub = {run->seed, topomap_i_ticker_cb, &gtk};
    rc = topomap_i_grasp_solve(&q, opt, &sub, part_loc);
cleanup:
    free(qptr);
    free(qidx);
    free(qb);
    free(cnt);
    free(q.xadj);
    free(q.adj);
    free(q.w);
    free(q.d);
    free(q.size);
    free(q.cap);
    return rc;
}

/* GRASP inside each matched pair: the part's processes onto its node part's PEs. */
static int map_pairs(const topomap_machine *m, const topomap_alloc_nodes *an, const topomap_pattern *p,
                     int32_t capacity, int32_t K, const int32_t *npart, const int32_t *tpart, const int32_t *part_loc,
                     const topomap_grasp_options *opt, const topomap_run_options *run, int32_t *pe_of)
{
    int32_t n = p->n, M = an->nnodes;
    int64_t nnz = p->indptr[n];
    int32_t *lid = malloc((size_t)n * sizeof *lid), *members = malloc((size_t)n * sizeof *members);
    int32_t *sub_alloc = malloc(((size_t)an->pe_start[M]) * sizeof *sub_alloc), *sub_pe = malloc((size_t)n * sizeof *sub_pe);
    int64_t *sptr = malloc(((size_t)n + 1) * sizeof *sptr);
    int32_t *sidx = malloc((size_t)nnz * sizeof *sidx + 1);
    double *sb = malloc((size_t)nnz * sizeof *sb + 1);
    int rc = TOPOMAP_OK;
    if (!lid || !members || !sub_alloc || !sub_pe || !sptr || !sidx || !sb) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory mapping the parts");
        goto cleanup;
    }
    topomap_rng rng;
    topomap_rng_seed(&rng, run->seed);
    for (int32_t i = 0; i < K; i++) {
        uint64_t seed = topomap_rng_next(&rng);
        int32_t cnt = 0, na = 0;
        for (int32_t x = 0; x < n; x++)
            if (tpart[x] == i) {
                lid[x] = cnt;
                members[cnt++] = x;
            }
        if (cnt == 0) continue;
        int64_t k = 0;
        sptr[0] = 0;
        for (int32_t t = 0; t < cnt; t++) {
            int32_t x = members[t];
            for (int64_t e = p->indptr[x]; e < p->indptr[x + 1]; e++)
                if (tpart[p->indices[e]] == i) {
                    sidx[k] = lid[p->indices[e]];
                    sb[k++] = p->bytes[e];
                }
            sptr[t + 1] = k;
        }
        for (int32_t a = 0; a < M; a++)
            if (npart[a] == part_loc[i])
                for (int32_t r = an->pe_start[a]; r < an->pe_start[a + 1]; r++) sub_alloc[na++] = an->pes[r];
        topomap_pattern sp = {cnt, sptr, sidx, sb};
        topomap_i_ticker tk = {run, "kumar-hybrid", (double)i / K, (double)(i + 1) / K, 0, 0};
        topomap_run_options sub = {seed, topomap_i_ticker_cb, &tk};
        rc = topomap_i_qap_map(m, &sp, sub_alloc, na, capacity, &sub, "kumar-hybrid", topomap_i_grasp_solve, opt, sub_pe);
        if (rc) goto cleanup;
        for (int32_t t = 0; t < cnt; t++) pe_of[members[t]] = sub_pe[t];
    }
cleanup:
    free(lid);
    free(members);
    free(sub_alloc);
    free(sub_pe);
    free(sptr);
    free(sidx);
    free(sb);
    return rc;
}

int topomap_map_kumar_hybrid(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc,
                             int32_t nalloc, int32_t capacity, int32_t part_size, const topomap_grasp_options *opt,
                             const topomap_run_options *run, int32_t *pe_of)
{
    topomap_grasp_options def;
    if (!opt) {
        topomap_grasp_options_init(&def);
        opt = &def;
    }
    if (part_size < 1) return topomap_i_fail(TOPOMAP_EINVAL, "kumar-hybrid part_size = %d must be >= 1", (int)part_size);
    int rc = topomap_i_grasp_check(opt);
    if (!rc) rc = topomap_pattern_validate(p);
    if (rc) return rc;
    topomap_run_options plain = {0, NULL, NULL};
    if (!run) run = &plain;
    topomap_alloc_nodes *an = NULL;
    int32_t *npart = NULL, *tpart = NULL, *part_loc = NULL;
    int64_t *slots = NULL;
    rc = topomap_alloc_nodes_create(m, alloc, nalloc, capacity, &an);
    if (rc) goto cleanup;
    int32_t M = an->nnodes, K = (int32_t)(((int64_t)M + part_size - 1) / part_size);
    if (K <= 1) {
        rc = topomap_i_qap_map(m, p, alloc, nalloc, capacity, run, "kumar-hybrid", topomap_i_grasp_solve, opt, pe_of);
        goto cleanup;
    }
    if ((int64_t)nalloc * capacity < p->n) {
        rc = topomap_i_fail(TOPOMAP_EINVAL, "%d processes do not fit on %d PEs x capacity %d", (int)p->n, (int)nalloc,
                            (int)capacity);
        goto cleanup;
    }
    npart = malloc((size_t)M * sizeof *npart);
    tpart = malloc((size_t)p->n * sizeof *tpart);
    part_loc = malloc((size_t)K * sizeof *part_loc);
    slots = calloc((size_t)K, sizeof *slots);
    if (!npart || !tpart || !part_loc || !slots) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory in kumar-hybrid");
        goto cleanup;
    }
    /* the phases: node parts, task parts, the part quotient, the pairs */
    static const double edge[5] = {0.0, 0.05, 0.1, 0.2, 1.0};
    topomap_i_ticker tk[4];
    topomap_run_options sub[4];
    for (int i = 0; i < 4; i++) {
        tk[i] = (topomap_i_ticker){run, "kumar-hybrid", edge[i], edge[i + 1], 0, 0};
        sub[i] = (topomap_run_options){run->seed, topomap_i_ticker_cb, &tk[i]};
    }
    rc = part_nodes(m, an, K, &sub[0], npart);
    if (rc) goto cleanup;
    for (int32_t a = 0; a < M; a++) slots[npart[a]] += an->slots[a];
    rc = topomap_partition_processes(p, K, slots, &sub[1], tpart);
    if (!rc) rc = map_parts(m, an, p, K, npart, tpart, slots, opt, &sub[2], part_loc);
    if (!rc) rc = map_pairs(m, an, p, capacity, K, npart, tpart, part_loc, opt, &sub[3], pe_of);
cleanup:
    topomap_alloc_nodes_destroy(an);
    free(npart);
    free(tpart);
    free(part_loc);
    free(slots);
    return rc;
}

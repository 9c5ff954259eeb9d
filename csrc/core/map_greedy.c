/* Greedy graph embedding: Hoefler & Snir, "Generic Topology Mapping
   Strategies for Large-scale Parallel Architectures", ICS 2011: the "greedy"
   strategy of LibTopoMap (TPM_STRATEGY=greedy), the GGE baseline of Kumar's
   thesis (§6.2.2) and a baseline of Mirsadeghi's (§6.3), after LibTopoMap's
   multicore step.

   From the paper and LibTopoMap's reference code: the vertex of the process
   (here: group) graph with the heaviest edges goes to a start node; then, one
   at a time, the unmapped vertex most heavily connected to the mapped ones
   goes to the closest node with room.  "Closest" is congestion-aware:
   LibTopoMap searches shortest paths in the physical graph whose link weights
   start so large that hops always dominate and grow by each mapped edge's
   weight / capacity along its path, so candidates compare by hops first and
   by the traffic already on the way second.  Several start nodes may be tried
   and the best mapping kept (LibTopoMap lets every rank start at its own node
   and keeps the best).

   Choices the paper leaves open, and ours:
   - Paths are the machine's own routes, not shortest paths: a candidate
     node costs (hops of the route from the source node, then the traffic /
     capacity already on the links of the routes source -> node and node ->
     source, then its id); with congestion off, hops then id.  The traffic
     is the routed traffic of the partial mapping, read from the
     incremental evaluator over the nodal pattern (a group sits on its
     node's first PE).  The search is a breadth-first search over the
     network that stops once its level exceeds the best hop count found (a
     route is a walk, so nothing farther can win); once it has looked at
     more vertices and links than twice the free nodes, it scans the free
     nodes instead.
   - Only the first `candidates` (default 64) free nodes at the fewest hops
     that the search discovers are priced (LibTopoMap prices every one): on
     a full pod of a k=40 fat tree that is up to 60,000 nodes and two routes
     each, 20 s of the 45 s at 10^6 processes.  The nearest in the network
     graph come first, and the hop count stays exact.
   - "Heaviest" and "most heavily connected" count both directions (the
     graph C + C^T of the nodal pattern).  The priority of an unmapped group
     is its total traffic to the mapped groups, updated as they are mapped
     (LibTopoMap keys its queue on the weight of the edge that discovered
     the vertex; the two agree for a vertex with one mapped neighbour).
   - The source is the node of the group's heaviest mapped neighbour
     (LibTopoMap searches from its start node every time; Kumar's GGE from
     the most recently mapped neighbour).  When no unmapped group touches a
     mapped one (the first group, or a new connected component), the
     heaviest unmapped group goes next, from the start node (first group)
     or from the node used last.
   - A node "has room" when it holds no group yet and its slots hold the
     group without leaving a later group without a node large enough
     (map_physgraph.c).
   - Ties: the group queue prefers the lower group id; the heaviest mapped
     neighbour is the first in group-id order.  With tries > 1 the best is
     the lowest maximum congestion, then the lowest hop-bytes, then the
     earliest try.

   Complexity, with U groups, E_U edges between them, A allocation nodes,
   V vertices and L links of the network, r the longest route: O(E_U log
   E_U) for the group queue, O(E_U r) for the evaluator moves, and per
   placement a search of O(min(R + L_R, A) + C r), R the vertices (L_R
   their links) nearer than the chosen node and C <= candidates the nodes
   priced at its hop count.  Worst case O(U (A + C) r) per try. */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "topomap/eval.h"
#include "topomap/map_libtopomap.h"
#include "topomap/rng.h"
#include "map_physgraph.h"

void topomap_greedy_options_init(topomap_greedy_options *opt)
{
    memset(opt, 0, sizeof *opt);
    opt->start = TOPOMAP_GREEDY_START_FIRST;
    opt->congestion = 1;
    opt->tries = 1;
    opt->candidates = 64;
}

/* The group queue: a binary min-heap by (-connection, group). */
typedef struct {
    double key;
    int32_t g;
} item;
typedef struct {
    item *a;
    int64_t len, cap;
} heap;

static int before(item x, item y) { return x.key != y.key ? x.key < y.key : x.g < y.g; }

static int heap_push(heap *q, item x)
{
    if (q->len == q->cap) {
        int64_t cap = q->cap ? 2 * q->cap : 256;
        item *a = realloc(q->a, (size_t)cap * sizeof *a);
        if (!a) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for a queue of %lld groups", (long long)cap);
        q->a = a;
        q->cap = cap;
    }
    int64_t i = q->len++;
    while (i > 0 && before(x, q->a[(i - 1) / 2])) {
        q->a[i] = q->a[(i - 1) / 2];
        i = (i - 1) / 2;
    }
    q->a[i] = x;
    return TOPOMAP_OK;
}

static item heap_pop(heap *q)
{
    item top = q->a[0], x = q->a[--q->len];
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= q->len) break;
        if (c + 1 < q->len && before(q->a[c + 1], q->a[c])) c++;
        if (!before(q->a[c], x)) break;
        q->a[i] = q->a[c];
        i = c;
    }
    if (q->len) q->a[i] = x;
    return top;
}

typedef struct {
    const topomap_machine *m;
    topomap_i_nodemap *nm;
    const topomap_i_physgraph *pg;
    int32_t *vidx;
    int congestion;
    int32_t candidates; /* price at most this many nodes at the fewest hops; 0: all */
    int32_t stamp;
    int32_t *seen;  /* search marks, by stamp, per vertex */
    int32_t *queue; /* breadth-first search order */
    int32_t *route; /* max_route links */
    int32_t *free_nodes, nfree, *free_pos; /* the free allocation nodes, and where each sits in the list */
    heap gq;
    double *conn;   /* traffic of each group to the placed groups */
    int32_t *seeds; /* groups by decreasing total traffic */
    topomap_eval *e;
} greedy;

/* Traffic / capacity already on the links of the route a -> b. */
static double route_load(greedy *gr, int32_t a, int32_t b)
{
    const double *load = topomap_eval_link_loads(gr->e);
    int32_t n = topomap_machine_route(gr->m, a, b, gr->route);
    double c = 0;
    for (int32_t i = 0; i < n; i++) c += load[gr->route[i]] / topomap_machine_link_capacity(gr->m, gr->route[i]);
    return c;
}

typedef struct {
    int32_t node; /* allocation node, -1 = none yet */
    int32_t hops;
    double load;
    int32_t vertex;
    int32_t priced; /* candidates priced at `hops` hops */
} choice;

/* Offer allocation node j, h route hops from machine node src (h < 0: it
   cannot take the group). */
static void offer(greedy *gr, int32_t src, int32_t j, int32_t h, choice *best)
{
    if (h < 0 || (best->node >= 0 && h > best->hops)) return;
    int32_t v = gr->nm->an->node[j], priced = best->node >= 0 && h == best->hops ? best->priced + 1 : 1;
    double c = gr->congestion ? route_load(gr, src, v) + route_load(gr, v, src) : 0.0;
    if (best->node < 0 || h < best->hops || c < best->load || (c == best->load && v < best->vertex))
        *best = (choice){j, h, c, v, priced};
    else
        best->priced = priced;
}

static int32_t hops_to(greedy *gr, int32_t g, int32_t src, int32_t j)
{
    return topomap_i_nodemap_fits(gr->nm, g, j) ? topomap_machine_route_count(gr->m, src, gr->nm->an->node[j]) : -1;
}

/* Enough candidates priced: nothing found later has fewer hops than `level`. */
static int enough(const greedy *gr, const choice *best, int32_t level)
{
    return gr->candidates && best->node >= 0 && best->hops <= level && best->priced >= gr->candidates;
}

/* The free node that may take group g with the fewest route hops from
   machine node src, then the least traffic on the routes both ways, then
   the lowest id, among the first `candidates` nodes at those hops that a
   breadth-first search over the network discovers (all with 0).  Nodes are
   offered when discovered: a route is a walk, so no vertex discovered at
   level l or later has fewer than l hops, and the search stops at level
   best.hops + 1, or within a level once enough candidates are priced.  When
   it has looked at more vertices and links than twice the free nodes
   without a candidate, scanning the free nodes is cheaper: first for the
   fewest hops, then pricing the first candidates at those hops. */
static void nearest(greedy *gr, int32_t g, int32_t src, int32_t *node, int64_t *work)
{
    const topomap_i_physgraph *pg = gr->pg;
    choice best = {-1, 0, 0.0, 0, 0};
    if (++gr->stamp == INT32_MAX) {
        memset(gr->seen, 0, (size_t)pg->nv * sizeof *gr->seen);
        gr->stamp = 1;
    }
    int32_t s = gr->stamp, head = 0, tail = 0, level = 0;
    int64_t looked = 1;
    gr->queue[tail++] = src;
    gr->seen[src] = s;
    if (gr->vidx[src] >= 0 && gr->nm->group_of_node[gr->vidx[src]] < 0)
        offer(gr, src, gr->vidx[src], hops_to(gr, g, src, gr->vidx[src]), &best);
    while (head < tail && (best.node < 0 || level < best.hops) && !enough(gr, &best, level)) {
        if (best.node < 0 && looked > 2 * (int64_t)gr->nfree + 64) break;
        level++;
        for (int32_t end = tail; head < end && !enough(gr, &best, level); head++) {
            int32_t v = gr->queue[head];
            for (int64_t x = pg->ostart[v]; x < pg->ostart[v + 1] && !enough(gr, &best, level); x++) {
                int32_t w = pg->oto[x], j = gr->vidx[w];
                if (gr->seen[w] == s) continue;
                gr->seen[w] = s;
                gr->queue[tail++] = w;
                if (j >= 0 && gr->nm->group_of_node[j] < 0) offer(gr, src, j, hops_to(gr, g, src, j), &best);
            }
            looked += pg->ostart[v + 1] - pg->ostart[v] + 1;
        }
    }
    *work += looked;
    if (best.node < 0) {
        int32_t fewest = -1, *hops = gr->queue; /* the search is over */
        for (int32_t i = 0; i < gr->nfree; i++) {
            hops[i] = hops_to(gr, g, src, gr->free_nodes[i]);
            if (hops[i] >= 0 && (fewest < 0 || hops[i] < fewest)) fewest = hops[i];
        }
        for (int32_t i = 0; fewest >= 0 && i < gr->nfree && !enough(gr, &best, fewest); i++)
            if (hops[i] == fewest) offer(gr, src, gr->free_nodes[i], fewest, &best);
        *work += 2 * (int64_t)gr->nfree;
    }
    *node = best.node;
}

static void take(greedy *gr, int32_t j)
{
    int32_t i = gr->free_pos[j], last = gr->free_nodes[--gr->nfree];
    gr->free_nodes[i] = last;
    gr->free_pos[last] = i;
}

/* One greedy embedding from allocation node `start`, into nm->node_of_group. */
static int embed(greedy *gr, int32_t start, topomap_i_ticker *t, double f0, double f1)
{
    topomap_i_nodemap *nm = gr->nm;
    int32_t k = nm->k;
    topomap_i_nodemap_reset(nm);
    for (int32_t g = 0; g < k; g++) gr->conn[g] = 0;
    /* every group unplaced: node_of_group is all -1 = TOPOMAP_UNPLACED */
    topomap_pattern q = topomap_i_nodemap_quotient(nm);
    int rc = topomap_eval_create(gr->m, &q, nm->node_of_group, NULL, &gr->e);
    if (rc) return rc;
    gr->gq.len = 0;
    gr->nfree = nm->an->nnodes;
    for (int32_t j = 0; j < gr->nfree; j++) gr->free_nodes[j] = gr->free_pos[j] = j;
    int32_t next_seed = 0, last = start;
    for (int32_t placed = 0; placed < k && !rc; placed++) {
        int32_t g = -1, src = last;
        while (gr->gq.len) {
            item it = heap_pop(&gr->gq);
            if (nm->node_of_group[it.g] < 0 && -it.key == gr->conn[it.g]) {
                g = it.g;
                break;
            }
        }
        if (g < 0) {
            while (nm->node_of_group[gr->seeds[next_seed]] >= 0) next_seed++;
            g = gr->seeds[next_seed];
        } else {
            double heaviest = -1;
            for (int64_t x = nm->xadj[g]; x < nm->xadj[g + 1]; x++) {
                int32_t h = nm->adj[x];
                if (nm->node_of_group[h] >= 0 && nm->wgt[x] > heaviest) {
                    heaviest = nm->wgt[x];
                    src = nm->node_of_group[h];
                }
            }
        }
        int32_t j = -1;
        int64_t work = nm->xadj[g + 1] - nm->xadj[g];
        nearest(gr, g, nm->an->node[src], &j, &work);
        if (j < 0) {
            rc = topomap_i_fail(TOPOMAP_EINVAL, "no allocation node can take group %d of %lld processes", (int)g,
                                (long long)nm->size[g]);
            break;
        }
        topomap_i_nodemap_place(nm, g, j);
        take(gr, j);
        if ((rc = topomap_eval_move(gr->e, g, nm->an->first_pe[j]))) break;
        for (int64_t x = nm->xadj[g]; x < nm->xadj[g + 1] && !rc; x++) {
            int32_t h = nm->adj[x];
            if (nm->node_of_group[h] >= 0) continue;
            gr->conn[h] += nm->wgt[x];
            rc = heap_push(&gr->gq, (item){-gr->conn[h], h});
        }
        last = j;
        if (!rc) rc = topomap_i_tick(t, work, f0 + (f1 - f0) * (placed + 1) / k);
    }
    return rc;
}

static int by_key(const void *a, const void *b)
{
    item x = *(const item *)a, y = *(const item *)b;
    return before(x, y) ? -1 : before(y, x);
}

int topomap_map_greedy(const topomap_machine *m, const topomap_pattern *p, const int32_t *alloc, int32_t nalloc,
                       int32_t capacity, const topomap_greedy_options *opt_in, int32_t *pe_of)
{
    topomap_greedy_options opt;
    if (opt_in) opt = *opt_in;
    else topomap_greedy_options_init(&opt);
    if (opt.start != TOPOMAP_GREEDY_START_FIRST && opt.start != TOPOMAP_GREEDY_START_RANDOM)
        return topomap_i_fail(TOPOMAP_EINVAL, "greedy start must be 0 (first node) or 1 (random node), got %d",
                              (int)opt.start);
    if (opt.congestion != 0 && opt.congestion != 1)
        return topomap_i_fail(TOPOMAP_EINVAL, "greedy congestion must be 0 or 1, got %d", (int)opt.congestion);
    if (opt.tries < 1) return topomap_i_fail(TOPOMAP_EINVAL, "greedy tries must be >= 1, got %d", (int)opt.tries);
    if (opt.candidates < 0)
        return topomap_i_fail(TOPOMAP_EINVAL, "greedy candidates must be >= 0, got %d", (int)opt.candidates);
    int rc = topomap_pattern_validate(p);
    if (rc) return rc;
    topomap_i_ticker t = {&opt.run, "greedy", 0.0, 0.5, 0, TOPOMAP_I_TICK};
    topomap_i_nodemap nm;
    topomap_i_physgraph pg = {0};
    greedy gr = {0};
    item *order = NULL;
    int32_t *best = NULL;
    if ((rc = topomap_i_nodemap_create(m, p, alloc, nalloc, capacity, &t, &nm))) return rc;
    if ((rc = topomap_i_physgraph_build(m, &pg))) goto cleanup;
    int32_t k = nm.k, nv = pg.nv;
    gr = (greedy){.m = m, .nm = &nm, .pg = &pg, .congestion = opt.congestion, .candidates = opt.candidates};
    gr.vidx = malloc((size_t)nv * sizeof *gr.vidx);
    gr.seen = calloc((size_t)nv, sizeof *gr.seen);
    gr.queue = malloc((size_t)nv * sizeof *gr.queue);
    gr.route = malloc(((size_t)topomap_machine_max_route(m) + 1) * sizeof *gr.route);
    gr.free_nodes = malloc((size_t)nm.an->nnodes * sizeof *gr.free_nodes);
    gr.free_pos = malloc((size_t)nm.an->nnodes * sizeof *gr.free_pos);
    gr.conn = malloc((size_t)k * sizeof *gr.conn);
    gr.seeds = malloc((size_t)k * sizeof *gr.seeds);
    order = malloc((size_t)k * sizeof *order);
    best = malloc((size_t)k * sizeof *best);
    if (!gr.vidx || !gr.seen || !gr.queue || !gr.route || !gr.free_nodes || !gr.free_pos || !gr.conn || !gr.seeds ||
        !order || !best) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the greedy mapping of %d groups", (int)k);
        goto cleanup;
    }
    topomap_i_nodemap_vertex_index(&nm, nv, gr.vidx);
    for (int32_t g = 0; g < k; g++) {
        double w = 0;
        for (int64_t x = nm.xadj[g]; x < nm.xadj[g + 1]; x++) w += nm.wgt[x];
        order[g] = (item){-w, g};
    }
    qsort(order, (size_t)k, sizeof *order, by_key);
    for (int32_t g = 0; g < k; g++) gr.seeds[g] = order[g].g;

    t.lo = 0.5;
    t.hi = 1.0;
    if ((rc = topomap_i_report(&t, 0))) goto cleanup;
    topomap_rng rng;
    topomap_rng_seed(&rng, opt.run.seed);
    double best_mc = 0, best_hb = 0;
    for (int32_t try = 0; try < opt.tries && !rc; try++) {
        int32_t start = try == 0 && opt.start == TOPOMAP_GREEDY_START_FIRST
                            ? 0
                            : (int32_t)topomap_rng_below(&rng, (uint64_t)nm.an->nnodes);
        rc = embed(&gr, start, &t, (double)try / opt.tries, (double)(try + 1) / opt.tries);
        if (!rc) {
            topomap_metrics mt;
            topomap_eval_metrics(gr.e, &mt);
            if (try == 0 || mt.max_congestion < best_mc || (mt.max_congestion == best_mc && mt.hop_bytes < best_hb)) {
                best_mc = mt.max_congestion;
                best_hb = mt.hop_bytes;
                memcpy(best, nm.node_of_group, (size_t)k * sizeof *best);
            }
        }
        topomap_eval_destroy(gr.e);
        gr.e = NULL;
    }
    if (rc) goto cleanup;
    memcpy(nm.node_of_group, best, (size_t)k * sizeof *best);
    if (!(rc = topomap_i_nodemap_finish(&nm, pe_of))) rc = topomap_i_report(&t, 1);
cleanup:
    topomap_i_nodemap_free(&nm);
    topomap_i_physgraph_free(&pg);
    free(gr.vidx);
    free(gr.seen);
    free(gr.queue);
    free(gr.route);
    free(gr.free_nodes);
    free(gr.free_pos);
    free(gr.gq.a);
    free(gr.conn);
    free(gr.seeds);
    free(order);
    free(best);
    return rc;
}

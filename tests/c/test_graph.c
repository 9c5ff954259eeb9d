/* The graph machine kind under the sanitizers: hand-worked routes on a small
   two-level fabric, tie-break rules checked against an independent
   Floyd-Warshall on random graphs, explicit-route validation, disconnected
   fabrics, the table size limit, and the evaluator's "no route" errors. */
#include <stdlib.h>
#include <string.h>
#include "topomap/topomap.h"
#include "topomap/graph.h"
#include "check.h"
#ifdef _OPENMP
#include <omp.h>
#endif

static const int32_t flat1_groups[1] = {0};
static const double zero_cost[1] = {0};
static const topomap_node_tree flat1 = {1, 1, flat1_groups, zero_cost};

/* Mirsadeghi thesis Fig. 3.6 shape: nodes 0,1 on leaf 4, nodes 2,3 on leaf 5,
   spines 6 and 7; every cable is two links, the up link first. */
static const int32_t fab_src[16] = {0, 4, 1, 4, 2, 5, 3, 5, 4, 6, 4, 7, 5, 6, 5, 7};
static const int32_t fab_dst[16] = {4, 0, 4, 1, 5, 2, 5, 3, 6, 4, 7, 4, 6, 5, 7, 5};

static topomap_graph_desc fabric(int32_t routing)
{
    topomap_graph_desc g = {4, 4, 16, fab_src, fab_dst, NULL, routing, 0, NULL, NULL, NULL, NULL};
    return g;
}

static int route_is(const topomap_machine *m, int32_t a, int32_t b, int32_t n, const int32_t *want)
{
    int32_t r[16];
    if (topomap_machine_route(m, a, b, r) != n || topomap_machine_route_count(m, a, b) != n) return 0;
    for (int32_t i = 0; i < n; i++)
        if (r[i] != want[i]) return 0;
    return 1;
}

static void test_fabric_routes(void)
{
    topomap_machine *m = NULL;
    topomap_graph_desc g = fabric(TOPOMAP_ROUTING_SHORTEST);
    CHECK(topomap_machine_create_graph(&flat1, &g, &m) == TOPOMAP_OK);
    if (!m) return;
    /* leaf 4 reaches node 3 through spine 6 (link 8) or 7 (link 10): lowest id */
    CHECK(route_is(m, 0, 3, 4, (const int32_t[]){0, 8, 13, 7}));
    CHECK(route_is(m, 0, 2, 4, (const int32_t[]){0, 8, 13, 5}));
    CHECK(route_is(m, 0, 1, 2, (const int32_t[]){0, 3}));
    CHECK(topomap_machine_max_route(m) == 4 && topomap_machine_nvertices(m) == 8 && topomap_machine_nlinks(m) == 16);
    CHECK(topomap_machine_distance(m, 0, 3) == 4.0 && topomap_machine_level_of(m, 0, 3) == 2);
    int32_t f, t;
    CHECK(topomap_machine_link_ends(m, 13, &f, &t) == TOPOMAP_OK && f == 6 && t == 5);
    CHECK(topomap_machine_link_ends(m, 16, &f, &t) == TOPOMAP_EINVAL);
    topomap_machine_destroy(m);

    /* D-mod-k: destination 3 takes candidate 3 mod 2 = 1 (spine 7), 2 takes spine 6 */
    g = fabric(TOPOMAP_ROUTING_DMODK);
    CHECK(topomap_machine_create_graph(&flat1, &g, &m) == TOPOMAP_OK);
    if (!m) return;
    CHECK(route_is(m, 0, 3, 4, (const int32_t[]){0, 10, 15, 7}));
    CHECK(route_is(m, 1, 2, 4, (const int32_t[]){2, 8, 13, 5}));
    CHECK(route_is(m, 2, 0, 4, (const int32_t[]){4, 12, 9, 1}));
    CHECK(route_is(m, 3, 1, 4, (const int32_t[]){6, 14, 11, 3}));
    topomap_machine_destroy(m);
}

static void test_capacities_and_limits(void)
{
    double cap[16];
    for (int i = 0; i < 16; i++) cap[i] = i < 8 ? 2.0 : 1.0;
    topomap_graph_desc g = fabric(TOPOMAP_ROUTING_SHORTEST);
    g.capacity = cap;
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_graph(&flat1, &g, &m) == TOPOMAP_OK);
    CHECK(m && topomap_machine_link_capacity(m, 3) == 2.0 && topomap_machine_link_capacity(m, 9) == 1.0);
    topomap_machine_destroy(m);
    cap[5] = 0;
    CHECK(topomap_machine_create_graph(&flat1, &g, &m) == TOPOMAP_EINVAL && m == NULL);
    CHECK(strstr(topomap_last_error(), "link 5") != NULL);

    /* 40000 nodes need 40000^2 one-byte entries: refused before any allocation */
    topomap_graph_desc big = {40000, 0, 0, NULL, NULL, NULL, TOPOMAP_ROUTING_SHORTEST, 0, NULL, NULL, NULL, NULL};
    CHECK(topomap_machine_create_graph(&flat1, &big, &m) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "need 1525 MiB, above the 1024 MiB limit") != NULL);

    int32_t s1[1] = {1}, d1[1] = {1};
    topomap_graph_desc loop = {2, 0, 1, s1, d1, NULL, TOPOMAP_ROUTING_SHORTEST, 0, NULL, NULL, NULL, NULL};
    CHECK(topomap_machine_create_graph(&flat1, &loop, &m) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "loop at vertex 1") != NULL);
    d1[0] = 2;
    CHECK(topomap_machine_create_graph(&flat1, &loop, &m) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "link 0") != NULL);
    loop.routing = 7;
    CHECK(topomap_machine_create_graph(&flat1, &loop, &m) == TOPOMAP_EINVAL);
}

/* A switch with 300 ports needs 2-byte table entries; 70000 ports are refused. */
static void test_wide_ports(void)
{
    enum { N = 300 };
    static int32_t src[2 * N], dst[2 * N];
    for (int32_t v = 0; v < N; v++) {
        src[2 * v] = v, dst[2 * v] = N;     /* node -> switch: link 2v */
        src[2 * v + 1] = N, dst[2 * v + 1] = v; /* switch -> node: link 2v + 1 */
    }
    topomap_graph_desc g = {N, 1, 2 * N, src, dst, NULL, TOPOMAP_ROUTING_DMODK, 0, NULL, NULL, NULL, NULL};
    int bytes = 0;
    CHECK(topomap_graph_port_bytes(&g, &bytes) == TOPOMAP_OK && bytes == 2);
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_graph(&flat1, &g, &m) == TOPOMAP_OK);
    if (m) {
        CHECK(route_is(m, 3, 299, 2, (const int32_t[]){6, 599}));
        CHECK(route_is(m, 298, 0, 2, (const int32_t[]){596, 1}));
        topomap_machine_destroy(m);
    }
    static int32_t s2[70000], d2[70000];
    for (int32_t l = 0; l < 70000; l++) s2[l] = 0, d2[l] = 1;
    topomap_graph_desc h = {2, 0, 70000, s2, d2, NULL, TOPOMAP_ROUTING_SHORTEST, 0, NULL, NULL, NULL, NULL};
    CHECK(topomap_graph_port_bytes(&h, &bytes) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "vertex 0 has 70000 outgoing links") != NULL);
    CHECK(topomap_machine_create_graph(&flat1, &h, &m) == TOPOMAP_EINVAL);
}

static void test_disconnected(void)
{
    topomap_machine *m = NULL;
    /* one-way link 0 -> 1 and nothing back: 1 cannot reach 0 */
    int32_t s[3] = {0, 1, 2}, d[3] = {1, 2, 1};
    topomap_graph_desc g = {3, 0, 3, s, d, NULL, TOPOMAP_ROUTING_SHORTEST, 0, NULL, NULL, NULL, NULL};
    CHECK(topomap_machine_create_graph(&flat1, &g, &m) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "node 1 cannot reach node 0") != NULL);
    /* with a switch, node 1 may not relay: 2 -> switch 3 -> 1 -> 0 is not a route */
    int32_t s2[6] = {0, 1, 1, 3, 2, 3}, d2[6] = {1, 0, 3, 2, 3, 1};
    topomap_graph_desc h = {3, 1, 6, s2, d2, NULL, TOPOMAP_ROUTING_DMODK, 0, NULL, NULL, NULL, NULL};
    CHECK(topomap_machine_create_graph(&flat1, &h, &m) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "node 2 cannot reach node 0") != NULL);
    CHECK(strstr(topomap_last_error(), "do not relay") != NULL);
}

/* ---- explicit routes ---- */

typedef struct {
    int64_t n;
    int32_t src[8], dst[8], links[32];
    int64_t ptr[9];
} route_list;

static void add_route(route_list *r, int32_t a, int32_t b, int32_t len, const int32_t *links)
{
    r->src[r->n] = a;
    r->dst[r->n] = b;
    if (len) memcpy(r->links + r->ptr[r->n], links, (size_t)len * sizeof *links);
    r->ptr[r->n + 1] = r->ptr[r->n] + len;
    r->n++;
}

static int table_fails(route_list *r, const char *needle)
{
    topomap_graph_desc g = fabric(TOPOMAP_ROUTING_TABLE);
    g.npairs = r->n;
    g.pair_src = r->src;
    g.pair_dst = r->dst;
    g.route_ptr = r->ptr;
    g.route_links = r->links;
    topomap_machine *m = NULL;
    int rc = topomap_machine_create_graph(&flat1, &g, &m);
    topomap_machine_destroy(m);
    if (rc != TOPOMAP_EINVAL || !strstr(topomap_last_error(), needle)) {
        fprintf(stderr, "  got rc %d, message: %s\n", rc, topomap_last_error());
        return 0;
    }
    return 1;
}

static void test_route_validation(void)
{
    route_list r = {0};
    add_route(&r, 0, 3, 4, (const int32_t[]){0, 8, 12, 7}); /* link 12 leaves leaf 5, not spine 6 */
    CHECK(table_fails(&r, "route 0 -> 3 is broken at hop 3: link 12 leaves vertex 5, but link 8 arrived at vertex 6"));
    memset(&r, 0, sizeof r);
    add_route(&r, 0, 3, 4, (const int32_t[]){2, 8, 13, 7});
    CHECK(table_fails(&r, "starts with link 2, which leaves vertex 1, not node 0"));
    memset(&r, 0, sizeof r);
    add_route(&r, 0, 3, 4, (const int32_t[]){0, 8, 13, 5});
    CHECK(table_fails(&r, "route 0 -> 3 ends at vertex 2, not node 3"));
    memset(&r, 0, sizeof r);
    add_route(&r, 0, 3, 2, (const int32_t[]){0, 99});
    CHECK(table_fails(&r, "link 99 (hop 2) does not exist"));
    memset(&r, 0, sizeof r);
    add_route(&r, 0, 1, 2, (const int32_t[]){0, 3});
    add_route(&r, 0, 3, 4, (const int32_t[]){0, 8, 13, 7});
    add_route(&r, 0, 1, 2, (const int32_t[]){0, 3});
    CHECK(table_fails(&r, "route 0 -> 1 is given twice (routes 0 and 2)"));
    memset(&r, 0, sizeof r);
    add_route(&r, 0, 6, 1, (const int32_t[]){0});
    CHECK(table_fails(&r, "route 0 -> 6 (entry 0) leaves the compute nodes, which are 0..3"));
    memset(&r, 0, sizeof r);
    add_route(&r, 1, 0, 0, NULL);
    CHECK(table_fails(&r, "route 1 -> 0 is empty"));
    memset(&r, 0, sizeof r);
    add_route(&r, 2, 2, 2, (const int32_t[]){4, 5});
    CHECK(table_fails(&r, "route 2 -> 2 must be empty"));
}

static void test_table_machine_and_evaluator(void)
{
    route_list r = {0};
    add_route(&r, 0, 3, 4, (const int32_t[]){0, 10, 15, 7});
    add_route(&r, 3, 0, 4, (const int32_t[]){6, 12, 9, 1});
    add_route(&r, 0, 1, 2, (const int32_t[]){0, 3});
    add_route(&r, 2, 2, 0, NULL);
    topomap_graph_desc g = fabric(TOPOMAP_ROUTING_TABLE);
    g.npairs = r.n;
    g.pair_src = r.src;
    g.pair_dst = r.dst;
    g.route_ptr = r.ptr;
    g.route_links = r.links;
    int32_t groups[2] = {0, 0};
    double costs[1] = {0};
    topomap_node_tree two = {2, 1, groups, costs};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_graph(&two, &g, &m) == TOPOMAP_OK);
    if (!m) return;
    int32_t out[8];
    CHECK(route_is(m, 0, 3, 4, (const int32_t[]){0, 10, 15, 7}));
    CHECK(topomap_machine_route(m, 1, 0, out) == -1 && topomap_machine_route_count(m, 1, 0) == -1);
    CHECK(topomap_machine_route_count(m, 2, 2) == 0 && topomap_machine_max_route(m) == 4);

    /* processes 0 <-> 1 <-> 2 on PEs 0, 6, 1 (nodes 0, 3, 0): every pair
       routed; process 3, silent, on PE 3 (node 1) */
    int64_t indptr[5] = {0, 1, 3, 4, 4};
    int32_t idx[4] = {1, 0, 2, 1};
    double by[4] = {1, 1, 1, 1};
    topomap_pattern p = {4, indptr, idx, by};
    int32_t pe_of[4] = {0, 6, 1, 3};
    topomap_metrics full, before, after, tried;
    CHECK(topomap_evaluate(m, &p, pe_of, NULL, &full, NULL) == TOPOMAP_OK);
    CHECK(full.hop_bytes == 16 && full.max_congestion == 2); /* link 0 carries 0->1 and 2->1 */
    topomap_eval *e = NULL;
    CHECK(topomap_eval_create(m, &p, pe_of, NULL, &e) == TOPOMAP_OK);
    if (!e) goto done;
    topomap_eval_metrics(e, &before);
    /* process 2 to PE 2 (node 1): its message to process 1 would need node 1 -> node 3 */
    CHECK(topomap_eval_try_move(e, 2, 2, &tried) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "no route from node 1 to node 3 (PE 2 -> PE 6)") != NULL);
    CHECK(topomap_eval_move(e, 2, 2) == TOPOMAP_EINVAL);
    CHECK(topomap_eval_swap(e, 0, 3) == TOPOMAP_EINVAL); /* 0 -> 1 would run node 1 -> node 3 */
    CHECK(topomap_eval_try_swap(e, 3, 0, &tried) == TOPOMAP_EINVAL);
    CHECK(topomap_eval_swap(e, 1, 2) == TOPOMAP_OK && topomap_eval_swap(e, 2, 1) == TOPOMAP_OK);
    topomap_eval_metrics(e, &after);
    CHECK(before.hop_bytes == after.hop_bytes && before.max_congestion == after.max_congestion &&
          before.nz_links == after.nz_links && close_to(before.nz_congestion_var, after.nz_congestion_var) &&
          before.qap == after.qap && before.max_dilation == after.max_dilation);
    CHECK(topomap_eval_mapping(e)[2] == 1 && topomap_eval_mapping(e)[0] == 0);
    CHECK(topomap_eval_move(e, 2, 7) == TOPOMAP_OK); /* same node as process 1: no network */
    topomap_eval_metrics(e, &after);
    CHECK(after.hop_bytes == 8 && after.max_congestion == 1);
    topomap_eval_destroy(e);

    pe_of[2] = 2;
    CHECK(topomap_evaluate(m, &p, pe_of, NULL, &full, NULL) == TOPOMAP_EINVAL);
    CHECK(strstr(topomap_last_error(), "no route from node 3 to node 1 (process 1 on PE 6 -> process 2 on PE 2") != NULL);
    e = NULL;
    CHECK(topomap_eval_create(m, &p, pe_of, NULL, &e) == TOPOMAP_EINVAL && e == NULL);
done:
    topomap_machine_destroy(m);
}

/* ---- random graphs against Floyd-Warshall ---- */

#define MAXV 24
#define INF 1000000

/* Random graph: direct (every vertex a node, a random strongly connected
   digraph through a ring) or with switches (random connected switch graph,
   each node cabled to one or two switches). */
static int32_t random_graph(topomap_rng *r, int direct, int32_t *nn, int32_t *ns, int32_t *src, int32_t *dst)
{
    int32_t E = 0;
    if (direct) {
        int32_t N = 2 + (int32_t)topomap_rng_below(r, 10);
        *nn = N, *ns = 0;
        for (int32_t v = 0; v < N; v++) src[E] = v, dst[E++] = (v + 1) % N;
        for (int32_t k = (int32_t)topomap_rng_below(r, 3 * (uint64_t)N); k > 0; k--) {
            int32_t a = (int32_t)topomap_rng_below(r, (uint64_t)N), b = (int32_t)topomap_rng_below(r, (uint64_t)N);
            if (a != b) src[E] = a, dst[E++] = b;
        }
        return E;
    }
    int32_t N = 1 + (int32_t)topomap_rng_below(r, 8), S = 1 + (int32_t)topomap_rng_below(r, 6);
    *nn = N, *ns = S;
    for (int32_t s = 1; s < S; s++) { /* spanning tree, then extra (possibly parallel) cables */
        int32_t p = N + (int32_t)topomap_rng_below(r, (uint64_t)s);
        src[E] = N + s, dst[E++] = p;
        src[E] = p, dst[E++] = N + s;
    }
    for (int32_t k = (int32_t)topomap_rng_below(r, 2 * (uint64_t)S); k > 0; k--) {
        int32_t a = N + (int32_t)topomap_rng_below(r, (uint64_t)S), b = N + (int32_t)topomap_rng_below(r, (uint64_t)S);
        if (a != b) src[E] = a, dst[E++] = b, src[E] = b, dst[E++] = a;
    }
    for (int32_t v = 0; v < N; v++)
        for (int32_t c = 1 + (int32_t)topomap_rng_below(r, 2); c > 0; c--) {
            int32_t sw = N + (int32_t)topomap_rng_below(r, (uint64_t)S);
            src[E] = v, dst[E++] = sw;
            src[E] = sw, dst[E++] = v;
        }
    return E;
}

static void test_random_graphs_against_floyd(void)
{
    topomap_rng r;
    topomap_rng_seed(&r, 2024);
    static int32_t src[512], dst[512], dist[MAXV][MAXV];
    int32_t route[64];
    for (int trial = 0; trial < 300; trial++) {
        int32_t N, S, direct = trial % 2, routing = trial % 4 < 2 ? TOPOMAP_ROUTING_SHORTEST : TOPOMAP_ROUTING_DMODK;
        int32_t E = random_graph(&r, direct, &N, &S, src, dst), V = N + S;
        /* shortest paths whose inner vertices relay (switches, or nodes when there are none) */
        for (int32_t i = 0; i < V; i++)
            for (int32_t j = 0; j < V; j++) dist[i][j] = i == j ? 0 : INF;
        for (int32_t l = 0; l < E; l++) dist[src[l]][dst[l]] = 1;
        for (int32_t k = S ? N : 0; k < V; k++)
            for (int32_t i = 0; i < V; i++)
                for (int32_t j = 0; j < V; j++)
                    if (dist[i][k] + dist[k][j] < dist[i][j]) dist[i][j] = dist[i][k] + dist[k][j];
        topomap_graph_desc g = {N, S, E, src, dst, NULL, routing, 0, NULL, NULL, NULL, NULL};
        topomap_machine *m = NULL;
        int rc = topomap_machine_create_graph(&flat1, &g, &m);
        CHECK(rc == TOPOMAP_OK);
        if (rc) continue;
        int32_t longest = 0;
        for (int32_t a = 0; a < N; a++)
            for (int32_t b = 0; b < N; b++) {
                if (a == b) continue;
                int32_t h = topomap_machine_route(m, a, b, route);
                CHECK(h == dist[a][b] && topomap_machine_route_count(m, a, b) == h);
                if (h > longest) longest = h;
                int32_t at = a;
                for (int32_t i = 0; i < h; i++) {
                    /* the candidates at `at`, in link order, and the one the rule picks */
                    int32_t count = 0, want = -1;
                    for (int32_t l = 0; l < E; l++) {
                        int32_t t = dst[l];
                        if (src[l] == at && (t == b || t >= N || S == 0) && 1 + dist[t][b] == dist[at][b]) count++;
                    }
                    int32_t pick = routing == TOPOMAP_ROUTING_SHORTEST ? 0 : b % count;
                    for (int32_t l = 0; l < E && want < 0; l++) {
                        int32_t t = dst[l];
                        if (src[l] == at && (t == b || t >= N || S == 0) && 1 + dist[t][b] == dist[at][b] && pick-- == 0)
                            want = l;
                    }
                    CHECK(route[i] == want);
                    at = dst[route[i]];
                }
                CHECK(at == b);
            }
        CHECK(topomap_machine_max_route(m) == longest);
        topomap_machine_destroy(m);
    }
}

/* try_move == full evaluation of the moved mapping, for every target PE. */
static void test_moves_on_graph(void)
{
    topomap_rng r;
    topomap_rng_seed(&r, 7);
    int32_t src[512], dst[512], N, S;
    int32_t E = random_graph(&r, 0, &N, &S, src, dst);
    double cap[512];
    for (int32_t l = 0; l < E; l++) cap[l] = 1 + l % 3;
    topomap_graph_desc g = {N, S, E, src, dst, cap, TOPOMAP_ROUTING_DMODK, 0, NULL, NULL, NULL, NULL};
    topomap_machine *m = NULL;
    CHECK(topomap_machine_create_graph(&flat1, &g, &m) == TOPOMAP_OK);
    if (!m) return;
    int64_t indptr[5] = {0, 2, 3, 5, 6};
    int32_t idx[6] = {1, 3, 2, 0, 3, 0};
    double by[6] = {3, 1, 4, 1, 5, 9};
    topomap_pattern p = {4, indptr, idx, by};
    int32_t pe_of[4] = {0, (N - 1) / 2, N - 1, 0};
    topomap_eval *e = NULL;
    CHECK(topomap_eval_create(m, &p, pe_of, NULL, &e) == TOPOMAP_OK);
    if (!e) goto done;
    for (int32_t pe = 0; pe < N; pe++) {
        topomap_metrics tried, full;
        int32_t moved[4] = {pe_of[0], pe_of[1], pe_of[2], pe};
        CHECK(topomap_eval_try_move(e, 3, pe, &tried) == TOPOMAP_OK);
        CHECK(topomap_evaluate(m, &p, moved, NULL, &full, NULL) == TOPOMAP_OK);
        CHECK(close_to(tried.hop_bytes, full.hop_bytes) && close_to(tried.max_congestion, full.max_congestion));
        CHECK(close_to(tried.nz_congestion_var, full.nz_congestion_var) && tried.nz_links == full.nz_links);
    }
    topomap_eval_destroy(e);
done:
    topomap_machine_destroy(m);
}

/* Above 2^20 units of BFS work the tables are built by several threads: the
   tables and the pair named by an error must not depend on how many. */
static void test_threaded_tables(void)
{
    enum { N = 1200, D = 3 };
    static int32_t src[N * 2 * D], dst[N * 2 * D];
    static const int32_t jumps[D] = {1, 17, 301};
    int32_t E = 0;
    for (int32_t v = 0; v < N; v++)
        for (int j = 0; j < D; j++) {
            src[E] = v, dst[E++] = (v + jumps[j]) % N;
            src[E] = v, dst[E++] = (v + N - jumps[j]) % N;
        }
    topomap_graph_desc g = {N, 0, E, src, dst, NULL, TOPOMAP_ROUTING_DMODK, 0, NULL, NULL, NULL, NULL};
    uint8_t *one = malloc((size_t)N * N), *many = malloc((size_t)N * N);
    int32_t r1 = 0, r2 = 0;
    int bytes = 0;
    char msg1[512] = "", msg2[512] = "";
    CHECK(topomap_graph_port_bytes(&g, &bytes) == TOPOMAP_OK && bytes == 1);
    if (!one || !many) goto done;
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    CHECK(topomap_graph_forwarding(&g, one, 1, &r1) == TOPOMAP_OK);
#ifdef _OPENMP
    omp_set_num_threads(4);
#endif
    CHECK(topomap_graph_forwarding(&g, many, 1, &r2) == TOPOMAP_OK);
    CHECK(r1 == r2 && r1 > 1 && memcmp(one, many, (size_t)N * N) == 0);
    /* cut every link into nodes 5 and 900 (point them at a third vertex): both unreachable */
    for (int32_t l = 0; l < E; l++)
        if (dst[l] == 5 || dst[l] == 900) dst[l] = src[l] == 7 ? 8 : 7;
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    CHECK(topomap_graph_forwarding(&g, one, 1, &r1) == TOPOMAP_EINVAL);
    snprintf(msg1, sizeof msg1, "%s", topomap_last_error());
#ifdef _OPENMP
    omp_set_num_threads(4);
#endif
    CHECK(topomap_graph_forwarding(&g, many, 1, &r2) == TOPOMAP_EINVAL);
    snprintf(msg2, sizeof msg2, "%s", topomap_last_error());
    CHECK(strcmp(msg1, msg2) == 0 && strstr(msg1, "node 0 cannot reach node 5") != NULL);
done:
    free(one);
    free(many);
}

int main(void)
{
    test_fabric_routes();
    test_capacities_and_limits();
    test_wide_ports();
    test_disconnected();
    test_route_validation();
    test_table_machine_and_evaluator();
    test_random_graphs_against_floyd();
    test_moves_on_graph();
    test_threaded_tables();
    return check_report();
}

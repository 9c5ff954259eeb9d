/* The machine handle: node tree, capacities, and dispatch of the routing
   oracle to the network kind.  Nothing outside machine*.c knows the kind. */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "topomap/error.h"
#include "machine_internal.h"

static int check_tree(const topomap_node_tree *t)
{
    if (t->pes_per_node < 1)
        return topomap_i_fail(TOPOMAP_EINVAL, "a node needs at least one PE, got %d", (int)t->pes_per_node);
    if (t->nlevels < 1)
        return topomap_i_fail(TOPOMAP_EINVAL, "a node tree needs at least one level (the node)");
    int32_t P = t->pes_per_node;
    for (int32_t k = 0; k < t->nlevels; k++) {
        if (!(t->costs[k] >= 0) || !isfinite(t->costs[k]))
            return topomap_i_fail(TOPOMAP_EINVAL, "node tree level %d has cost %g", (int)k, t->costs[k]);
        for (int32_t i = 0; i < P; i++) {
            int32_t g = t->groups[(int64_t)k * P + i];
            if (g < 0 || g >= P)
                return topomap_i_fail(TOPOMAP_EINVAL, "node tree level %d: PE %d has group %d", (int)k, (int)i, (int)g);
        }
    }
    for (int32_t i = 0; i < P; i++)
        if (t->groups[(int64_t)(t->nlevels - 1) * P + i] != t->groups[(int64_t)(t->nlevels - 1) * P])
            return topomap_i_fail(TOPOMAP_EINVAL, "the top node tree level must be one group (the node)");
    return TOPOMAP_OK;
}

int topomap_i_machine_new(const topomap_node_tree *tree, int32_t nnodes, topomap_machine **out)
{
    int rc = check_tree(tree);
    if (rc) return rc;
    if (nnodes < 1) return topomap_i_fail(TOPOMAP_EINVAL, "a machine needs at least one node");
    if ((int64_t)nnodes * tree->pes_per_node > INT32_MAX)
        return topomap_i_fail(TOPOMAP_EINVAL, "%d nodes x %d PEs exceeds the int32 PE id range",
                              (int)nnodes, (int)tree->pes_per_node);
    topomap_machine *m = calloc(1, sizeof *m);
    if (!m) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    size_t ng = (size_t)tree->nlevels * (size_t)tree->pes_per_node;
    m->groups = malloc(ng * sizeof *m->groups);
    m->costs = malloc((size_t)tree->nlevels * sizeof *m->costs);
    if (!m->groups || !m->costs) {
        topomap_machine_destroy(m);
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    }
    memcpy(m->groups, tree->groups, ng * sizeof *m->groups);
    memcpy(m->costs, tree->costs, (size_t)tree->nlevels * sizeof *m->costs);
    m->head.pes_per_node = tree->pes_per_node;
    m->head.pes_magic = UINT64_MAX / (uint64_t)tree->pes_per_node + 1;
    m->tree_levels = tree->nlevels;
    m->nnodes = nnodes;
    m->nvertices = nnodes;
    m->npes = nnodes * tree->pes_per_node;
    *out = m;
    return TOPOMAP_OK;
}

void topomap_machine_destroy(topomap_machine *m)
{
    if (!m) return;
    if (m->ops && m->ops->destroy) m->ops->destroy(m->net);
    free(m->groups);
    free(m->costs);
    free(m->capacity);
    free(m);
}

int32_t topomap_machine_nnodes(const topomap_machine *m) { return m->nnodes; }
int32_t topomap_machine_npes(const topomap_machine *m) { return m->npes; }
int32_t topomap_machine_pes_per_node(const topomap_machine *m) { return m->head.pes_per_node; }
int32_t topomap_machine_nlinks(const topomap_machine *m) { return m->nlinks; }
int32_t topomap_machine_max_route(const topomap_machine *m) { return m->max_route; }
int32_t topomap_machine_nlevels(const topomap_machine *m) { return 1 + m->tree_levels + m->net_levels; }

int topomap_machine_set_capacities(topomap_machine *m, const double *cap)
{
    for (int32_t l = 0; l < m->nlinks; l++)
        if (!(cap[l] > 0) || !isfinite(cap[l]))
            return topomap_i_fail(TOPOMAP_EINVAL, "link %d has capacity %g (must be > 0 and finite)", (int)l, cap[l]);
    if (!m->capacity) {
        m->capacity = malloc((size_t)m->nlinks * sizeof *m->capacity + 1);
        if (!m->capacity) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    }
    memcpy(m->capacity, cap, (size_t)m->nlinks * sizeof *cap);
    return TOPOMAP_OK;
}

double topomap_machine_link_capacity(const topomap_machine *m, int32_t link)
{
    return m->capacity ? m->capacity[link] : 1.0;
}

int32_t topomap_machine_nvertices(const topomap_machine *m) { return m->nvertices; }

int topomap_machine_link_ends(const topomap_machine *m, int32_t link, int32_t *from, int32_t *to)
{
    if (!topomap_machine_link_exists(m, link))
        return topomap_i_fail(TOPOMAP_EINVAL, "link %d does not exist (the machine has %d link ids)", (int)link,
                              (int)m->nlinks);
    m->ops->link_ends(m, link, from, to);
    return TOPOMAP_OK;
}

int topomap_machine_link_exists(const topomap_machine *m, int32_t link)
{
    if (link < 0 || link >= m->nlinks) return 0;
    return m->ops->link_exists ? m->ops->link_exists(m, link) : 1;
}

int32_t topomap_machine_route_count(const topomap_machine *m, int32_t a, int32_t b)
{
    return a == b ? 0 : m->ops->route_count(m, a, b);
}

int32_t topomap_machine_route(const topomap_machine *m, int32_t a, int32_t b, int32_t *out)
{
    return a == b ? 0 : m->ops->route(m, a, b, out);
}

/* Level (1..tree_levels) of the lowest common ancestor of two distinct local PEs. */
static int32_t node_lca(const topomap_machine *m, int32_t i, int32_t j)
{
    int32_t P = m->head.pes_per_node;
    for (int32_t k = 0; k < m->tree_levels - 1; k++)
        if (m->groups[(int64_t)k * P + i] == m->groups[(int64_t)k * P + j]) return k + 1;
    return m->tree_levels;
}

double topomap_machine_distance(const topomap_machine *m, int32_t a, int32_t b)
{
    if (a == b) return 0.0;
    int32_t P = m->head.pes_per_node, na = topomap_machine_node_of(m, a), nb = topomap_machine_node_of(m, b);
    if (na == nb) return m->costs[node_lca(m, a - na * P, b - nb * P) - 1];
    return m->ops->distance(m, na, nb);
}

double topomap_machine_node_distance(const topomap_machine *m, int32_t na, int32_t nb)
{
    return na == nb ? 0.0 : m->ops->distance(m, na, nb);
}

int32_t topomap_machine_level_of(const topomap_machine *m, int32_t a, int32_t b)
{
    if (a == b) return 0;
    int32_t P = m->head.pes_per_node, na = a / P, nb = b / P;
    if (na == nb) return node_lca(m, a % P, b % P);
    return m->tree_levels + m->ops->level(m, na, nb);
}

int32_t topomap_machine_pair(const topomap_machine *m, int32_t a, int32_t b, int32_t *out, double *distance,
                             int32_t *level)
{
    int32_t P = m->head.pes_per_node, na = topomap_machine_node_of(m, a), nb = topomap_machine_node_of(m, b);
    if (na == nb) {
        int32_t lv = a == b ? 0 : node_lca(m, a - na * P, b - nb * P);
        *level = lv;
        *distance = lv ? m->costs[lv - 1] : 0.0;
        return 0;
    }
    int32_t h = m->ops->route(m, na, nb, out);
    *level = m->tree_levels + m->ops->level(m, na, nb);
    *distance = m->ops->distance_is_hops ? (double)h : m->ops->distance(m, na, nb);
    return h;
}

/* ---- the single-node kind: no network at all ---- */
static int32_t none_route(const topomap_machine *m, int32_t a, int32_t b, int32_t *out)
{
    (void)m; (void)a; (void)b; (void)out;
    return 0;
}
static int32_t none_count(const topomap_machine *m, int32_t a, int32_t b) { (void)m; (void)a; (void)b; return 0; }
static double none_distance(const topomap_machine *m, int32_t a, int32_t b) { (void)m; (void)a; (void)b; return 0.0; }
static int32_t none_level(const topomap_machine *m, int32_t a, int32_t b) { (void)m; (void)a; (void)b; return 0; }

static const struct topomap_i_net_ops none_ops = {
    "single", none_route, none_count, none_distance, none_level, NULL, NULL, 0, NULL,
};

int topomap_machine_create_single(const topomap_node_tree *tree, topomap_machine **out)
{
    int rc = topomap_i_machine_new(tree, 1, out);
    if (rc) return rc;
    (*out)->ops = &none_ops;
    return TOPOMAP_OK;
}

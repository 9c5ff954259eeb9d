/* Tree network above the nodes: the upper levels of a KaHIP/VieM/Scotch
   `tleaf` hierarchy, with one up and one down link per tree edge so that
   traffic through each switch level can be counted.

   Entities: level 0 = nodes, level l = switches; the parent of entity e at
   level l is e / arity[l].  Edge of entity e at level l: offset[l] + e; its
   up link is 2*edge, its down link 2*edge + 1.  A route climbs from the
   source to the lowest common ancestor (level h) and descends to the
   target; the distance is costs[h-1]. */
#include <stdlib.h>
#include <math.h>
#include "topomap/error.h"
#include "machine_internal.h"

typedef struct {
    int32_t nlevels;
    int32_t arity[32];
    double costs[32];
    int64_t offset[33];
} tree_net;

static inline int32_t meet_level(const tree_net *t, int32_t a, int32_t b)
{
    int32_t h = 0;
    while (a != b) {
        a /= t->arity[h];
        b /= t->arity[h];
        h++;
    }
    return h;
}

static int32_t tree_route(const topomap_machine *m, int32_t a, int32_t b, int32_t *out)
{
    const tree_net *t = m->net;
    int32_t h = meet_level(t, a, b), n = 0;
    int32_t ea = a;
    for (int32_t l = 0; l < h; l++) {
        out[n++] = (int32_t)(2 * (t->offset[l] + ea));
        ea /= t->arity[l];
    }
    /* b's down links, from level h-1 down to 0 */
    int32_t eb[32];
    int32_t e = b;
    for (int32_t l = 0; l < h; l++) {
        eb[l] = e;
        e /= t->arity[l];
    }
    for (int32_t l = h - 1; l >= 0; l--) out[n++] = (int32_t)(2 * (t->offset[l] + eb[l]) + 1);
    return n;
}

static int32_t tree_count(const topomap_machine *m, int32_t a, int32_t b)
{
    return 2 * meet_level(m->net, a, b);
}

static double tree_distance(const topomap_machine *m, int32_t a, int32_t b)
{
    const tree_net *t = m->net;
    return t->costs[meet_level(t, a, b) - 1];
}

static int32_t tree_level(const topomap_machine *m, int32_t a, int32_t b)
{
    return meet_level(m->net, a, b);
}

/* Switch vertices follow the nodes level by level: the entity e at level l
   (l >= 1) is vertex offset[l] + e, so an edge's id is its child's vertex. */
static void tree_link_ends(const topomap_machine *m, int32_t link, int32_t *from, int32_t *to)
{
    const tree_net *t = m->net;
    int32_t edge = link >> 1, l = 0;
    while (t->offset[l + 1] <= edge) l++;
    int32_t child = edge, parent = (int32_t)(t->offset[l + 1] + (edge - t->offset[l]) / t->arity[l]);
    *from = link & 1 ? parent : child;
    *to = link & 1 ? child : parent;
}

static void tree_destroy(void *net) { free(net); }

static const struct topomap_i_net_ops tree_ops = {
    "tree", tree_route, tree_count, tree_distance, tree_level, NULL, tree_link_ends, 0, tree_destroy,
};

int topomap_machine_create_tree(const topomap_node_tree *tree, int32_t nlevels, const int32_t *arity,
                                const double *costs, topomap_machine **out)
{
    if (nlevels < 1 || nlevels > 32)
        return topomap_i_fail(TOPOMAP_EINVAL, "a tree network needs 1 to 32 levels, got %d", (int)nlevels);
    tree_net *t = calloc(1, sizeof *t);
    if (!t) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    int64_t nnodes = 1;
    for (int32_t l = 0; l < nlevels; l++) {
        if (arity[l] < 1 || !(costs[l] >= 0) || !isfinite(costs[l])) {
            free(t);
            return topomap_i_fail(TOPOMAP_EINVAL, "tree level %d has arity %d and cost %g",
                                  (int)(l + 1), (int)arity[l], costs[l]);
        }
        nnodes *= arity[l];
        if (nnodes > INT32_MAX) {
            free(t);
            return topomap_i_fail(TOPOMAP_EINVAL, "tree network has more than 2^31 nodes");
        }
        t->arity[l] = arity[l];
        t->costs[l] = costs[l];
    }
    t->nlevels = nlevels;
    int64_t count = nnodes;
    t->offset[0] = 0;
    for (int32_t l = 0; l < nlevels; l++) {
        t->offset[l + 1] = t->offset[l] + count;
        count /= arity[l];
    }
    if (2 * t->offset[nlevels] > INT32_MAX) {
        free(t);
        return topomap_i_fail(TOPOMAP_EINVAL, "tree network has more than 2^31 links");
    }
    int rc = topomap_i_machine_new(tree, (int32_t)nnodes, out);
    if (rc) {
        free(t);
        return rc;
    }
    topomap_machine *m = *out;
    m->ops = &tree_ops;
    m->net = t;
    m->nlinks = (int32_t)(2 * t->offset[nlevels]);
    m->nvertices = (int32_t)(t->offset[nlevels] + 1); /* + the root */
    /* Levels of arity 1 above the last real split join nothing new. */
    int32_t top = 0;
    for (int32_t l = 0; l < nlevels; l++)
        if (arity[l] > 1) top = l + 1;
    m->max_route = 2 * top;
    m->net_levels = nlevels;
    return TOPOMAP_OK;
}

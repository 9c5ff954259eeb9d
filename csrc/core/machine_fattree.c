/* Fat trees: extended generalized fat trees (XGFT) with parallel cables
   (PGFT), routed up to the lowest common ancestor and down, with D-mod-k or
   lowest-port up-port selection.

   Sources
   - Öhring, Ibel, Das & Kumar, "On generalized fat trees", IPPS 1995, §2:
     XGFT(h; m_1..m_h; w_1..w_h), vertex labels and edges.
   - Zahavi, "D-Mod-K routing providing non-blocking traffic for shift
     permutations on real life fat trees", CCIT Report 776, Technion 2010:
     parallel ports p_i (PGFT) and the D-mod-K rule, the up port of a
     level-(i-1) vertex towards destination b being
     floor(b / (w_1 ... w_{i-1})) mod (w_i p_i).
   - Gómez, Gilabert, Flich, Duato & López, "Deterministic versus adaptive
     routing in fat-trees", IPDPS 2007 workshops: the same rule on k-ary
     n-trees, and why destination-based selection balances links.
   - Rodríguez, Minkenberg, Beivide, Luijten, Labarta & Valero, "Oblivious
     routing schemes in extended generalized fat tree networks", CLUSTER
     2009: D-mod-k on slimmed (tapered) XGFTs.

   Structure.  Level 0 holds the N = m_1 ... m_h nodes, level i (1..h) the
   switches.  A level-i vertex is labelled (x_h..x_{i+1}, y_i..y_1) with
   x_j < m_j, y_j < w_j; it is joined to each level-(i+1) vertex whose label
   differs only in digit i+1 (x_{i+1} in the child, y_{i+1} in the parent),
   by p_{i+1} parallel cables.

   Numbering, closed form (O(h) constants, no tables):
     M_i = m_1..m_i, W_i = w_1..w_i (M_0 = W_0 = 1); S_i = (N / M_i) W_i
     vertices at level i.  Node id = x_1 + m_1 (x_2 + m_2 (x_3 + ...)), the
     top digit most significant (the hierarchy PE-id convention).
     Index of a level-i vertex = X W_i + Y with X = (any node below it) / M_i
     and Y = y_1 + w_1 (y_2 + w_2 (...)); vertex id = V_i + index, V_0 = 0,
     V_{i+1} = V_i + S_i: nodes first, then level 1, level 2, ...
     Up port q < w_i p_i of a level-(i-1) vertex: parent digit y_i = q mod w_i,
     cable q / w_i (switches vary fastest, then the parallel cable, as
     SimGrid's FatTreeZone numbers PGFT ports).  Cable id = C_i + u w_i p_i + q
     for the child of index u, C_1 = 0, C_{i+1} = C_i + S_{i-1} w_i p_i.
     Link 2 cable goes up (child to parent), 2 cable + 1 down.

   Routing.  a -> b climbs to the lowest level L with a / M_L == b / M_L and
   descends.  Leaving a level-(i-1) vertex upwards it takes port
     dmodk:    q_i = floor(b / W_{i-1}) mod (w_i p_i)
     shortest: q_i = 0 (lowest port: parent 0, cable 0)
   Going down, the switch is forced (the child above b); the parallel cable
   is the one q_i names.  So every route to b runs on b's tree: the vertex at
   level i-1 is (a / M_{i-1}) W_{i-1} + Y_{i-1} going up and
   (b / M_{i-1}) W_{i-1} + Y_{i-1} going down, Y_{i-1} = sum of
   (q_j mod w_j) W_{j-1} over j < i; for dmodk Y_{i-1} = b mod W_{i-1}.
   Distance = hops = 2L; level = L.

   Choices the sources leave open
   - Divisor W_{i-1} = w_1..w_{i-1}, not w_1 p_1 .. w_{i-1} p_{i-1} (the
     SimGrid variant).  With the chosen one the pair (down vertex, port) seen
     by b is b mod (W_i p_i): the destinations behind one down link of level
     i are one residue class, M_{i-1} / (W_i p_i) of them in a balanced tree,
     so all down links of a level carry equal all-to-all loads.  Dividing by
     w_j p_j makes consecutive destinations share ports whenever some p_j > 1
     (half the down links idle, half doubled, for p_1 = 2).  For p = 1 the two
     agree, and both reduce to Gómez's rule on k-ary n-trees.
   - The down cable is chosen by the destination (as an InfiniBand forwarding
     table must: one output port per switch and destination), with the same
     q_i; SimGrid picks it by source.
   - shortest = lowest port everywhere: minimal but unbalanced, to show what
     destination-based spreading buys.
   - Links of capacity other than 1 are set per level; only then does the
     machine hold a per-link capacity array (O(links) memory); otherwise
     memory is O(levels) whatever the size. */
#include <stdlib.h>
#include <math.h>
#include "topomap/error.h"
#include "machine_internal.h"
#include "fastdiv.h"

#define MAX_LEVELS 32

typedef struct {
    int32_t h, routing;
    int32_t m[MAX_LEVELS + 1], w[MAX_LEVELS + 1], wp[MAX_LEVELS + 1]; /* index = level 1..h */
    int64_t M[MAX_LEVELS + 1], W[MAX_LEVELS + 1];                     /* prefix products, [0] = 1 */
    int64_t vert[MAX_LEVELS + 2];  /* first vertex id of level 0..h, [h+1] = nvertices */
    int64_t cable[MAX_LEVELS + 2]; /* first cable id of level 1..h, [h+1] = cables */
    topomap_i_fastdiv div_m[MAX_LEVELS + 1], div_w[MAX_LEVELS + 1], div_wp[MAX_LEVELS + 1];
} fattree_net;

static int32_t fattree_route(const topomap_machine *m, int32_t a, int32_t b, int32_t *out)
{
    const fattree_net *t = m->net;
    uint32_t A = (uint32_t)a, B = (uint32_t)b, dest = (uint32_t)b; /* dest = b / W_{i-1} */
    int64_t Y = 0;
    int32_t down[MAX_LEVELS];
    int32_t L = 0;
    while (A != B) {
        int32_t i = L + 1;
        int64_t Wprev = t->W[i - 1], wp = t->wp[i];
        uint32_t q = 0;
        if (t->routing == TOPOMAP_FATTREE_DMODK) {
            q = topomap_i_mod(t->div_wp[i], dest);
            dest = topomap_i_div(t->div_w[i], dest);
        }
        int64_t up = t->cable[i] + ((int64_t)A * Wprev + Y) * wp + q;
        out[L] = (int32_t)(2 * up);
        down[L] = (int32_t)(2 * (up + ((int64_t)B - (int64_t)A) * Wprev * wp) + 1);
        Y += Wprev * (int64_t)topomap_i_mod(t->div_w[i], q);
        A = topomap_i_div(t->div_m[i], A);
        B = topomap_i_div(t->div_m[i], B);
        L = i;
    }
    for (int32_t i = 0; i < L; i++) out[L + i] = down[L - 1 - i];
    return 2 * L;
}

static int32_t fattree_level(const topomap_machine *m, int32_t a, int32_t b)
{
    const fattree_net *t = m->net;
    uint32_t A = (uint32_t)a, B = (uint32_t)b;
    int32_t L = 0;
    while (A != B) {
        L++;
        A = topomap_i_div(t->div_m[L], A);
        B = topomap_i_div(t->div_m[L], B);
    }
    return L;
}

static int32_t fattree_count(const topomap_machine *m, int32_t a, int32_t b)
{
    return 2 * fattree_level(m, a, b);
}

static double fattree_distance(const topomap_machine *m, int32_t a, int32_t b)
{
    return (double)fattree_count(m, a, b);
}

static void fattree_link_ends(const topomap_machine *m, int32_t link, int32_t *from, int32_t *to)
{
    const fattree_net *t = m->net;
    int64_t cable = link >> 1;
    int32_t i = 1;
    while (t->cable[i + 1] <= cable) i++;
    int64_t r = cable - t->cable[i], u = r / t->wp[i], q = r % t->wp[i];
    int64_t X = u / t->W[i - 1], Y = u % t->W[i - 1];
    int64_t parent = (X / t->m[i]) * t->W[i] + Y + t->W[i - 1] * (q % t->w[i]);
    int32_t child_v = (int32_t)(t->vert[i - 1] + u), parent_v = (int32_t)(t->vert[i] + parent);
    *from = link & 1 ? parent_v : child_v;
    *to = link & 1 ? child_v : parent_v;
}

static void fattree_destroy(void *net) { free(net); }

static const struct topomap_i_net_ops fattree_ops = {
    "fattree", fattree_route, fattree_count, fattree_distance, fattree_level, NULL, fattree_link_ends, 1,
    fattree_destroy,
};

/* Shape checks and the O(h) constants; sizes must fit the int32 ids. */
static int fattree_layout(fattree_net *t, int32_t h, const int32_t *m, const int32_t *w, const int32_t *p)
{
    int rc = TOPOMAP_OK;
    if (h < 1 || h > MAX_LEVELS) {
        rc = topomap_i_fail(TOPOMAP_EINVAL, "a fat tree needs 1 to %d levels, got %d", MAX_LEVELS, (int)h);
        goto cleanup;
    }
    t->h = h;
    t->M[0] = t->W[0] = 1;
    for (int32_t i = 1; i <= h; i++) {
        int32_t mi = m[i - 1], wi = w[i - 1], pi = p[i - 1];
        if (mi < 1 || wi < 1 || pi < 1) {
            rc = topomap_i_fail(TOPOMAP_EINVAL, "fat tree level %d has m=%d, w=%d, p=%d (all must be >= 1)", (int)i,
                                (int)mi, (int)wi, (int)pi);
            goto cleanup;
        }
        t->M[i] = t->M[i - 1] * mi;
        t->W[i] = t->W[i - 1] * wi;
        if (t->M[i] > INT32_MAX) {
            rc = topomap_i_fail(TOPOMAP_EINVAL, "fat tree has more than 2^31 nodes (m_1..m_%d = %lld)", (int)i,
                                (long long)t->M[i]);
            goto cleanup;
        }
        if (t->W[i] > INT32_MAX || (int64_t)wi * pi > INT32_MAX) {
            rc = topomap_i_fail(TOPOMAP_EINVAL, "fat tree level %d has more than 2^31 switches or up ports "
                                "(w_1..w_%d = %lld, w_%d p_%d = %lld)", (int)i, (int)i, (long long)t->W[i], (int)i,
                                (int)i, (long long)wi * pi);
            goto cleanup;
        }
        t->m[i] = mi;
        t->w[i] = wi;
        t->wp[i] = wi * pi;
        t->div_m[i] = topomap_i_fastdiv_make((uint32_t)mi);
        t->div_w[i] = topomap_i_fastdiv_make((uint32_t)wi);
        t->div_wp[i] = topomap_i_fastdiv_make((uint32_t)(wi * pi));
    }
    int64_t N = t->M[h];
    t->vert[0] = 0;
    t->cable[1] = 0;
    for (int32_t i = 0; i <= h; i++) {
        int64_t level_size = N / t->M[i] * t->W[i];
        t->vert[i + 1] = t->vert[i] + level_size;
        if (t->vert[i + 1] > INT32_MAX) {
            rc = topomap_i_fail(TOPOMAP_EINVAL, "fat tree has more than 2^31 vertices (level %d reaches %lld)",
                                (int)i, (long long)t->vert[i + 1]);
            goto cleanup;
        }
        if (i < h) {
            t->cable[i + 2] = t->cable[i + 1] + level_size * t->wp[i + 1];
            if (2 * t->cable[i + 2] > INT32_MAX) {
                rc = topomap_i_fail(TOPOMAP_EINVAL, "fat tree has more than 2^31 links (level %d reaches %lld)",
                                    (int)(i + 1), (long long)(2 * t->cable[i + 2]));
                goto cleanup;
            }
        }
    }
cleanup:
    return rc;
}

/* Per-level cable capacities as a per-link array, only when one differs from 1. */
static int fattree_capacities(topomap_machine *mach, const fattree_net *t, const double *capacity)
{
    int rc = TOPOMAP_OK;
    double *cap = NULL;
    int uniform = 1;
    for (int32_t i = 1; i <= t->h; i++) {
        if (!(capacity[i - 1] > 0) || !isfinite(capacity[i - 1])) {
            rc = topomap_i_fail(TOPOMAP_EINVAL, "fat tree level %d has link capacity %g (must be > 0 and finite)", (int)i,
                                capacity[i - 1]);
            goto cleanup;
        }
        if (capacity[i - 1] != 1.0) uniform = 0;
    }
    if (uniform) goto cleanup;
    cap = malloc((size_t)mach->nlinks * sizeof *cap + 1);
    if (!cap) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %d link capacities", (int)mach->nlinks);
        goto cleanup;
    }
    for (int32_t i = 1; i <= t->h; i++)
        for (int64_t l = 2 * t->cable[i]; l < 2 * t->cable[i + 1]; l++) cap[l] = capacity[i - 1];
    rc = topomap_machine_set_capacities(mach, cap);
cleanup:
    free(cap);
    return rc;
}

int topomap_machine_create_fattree(const topomap_node_tree *tree, int32_t nlevels, const int32_t *m, const int32_t *w,
                                   const int32_t *p, const double *capacity, int32_t routing, topomap_machine **out)
{
    int rc = TOPOMAP_OK;
    topomap_machine *mach = NULL;
    fattree_net *t = calloc(1, sizeof *t);
    *out = NULL;
    if (!t) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    if (routing != TOPOMAP_FATTREE_DMODK && routing != TOPOMAP_FATTREE_SHORTEST) {
        rc = topomap_i_fail(TOPOMAP_EINVAL, "unknown fat tree routing %d (0 = D-mod-k, 1 = shortest)", (int)routing);
        goto cleanup;
    }
    t->routing = routing;
    rc = fattree_layout(t, nlevels, m, w, p);
    if (rc) goto cleanup;
    rc = topomap_i_machine_new(tree, (int32_t)t->M[nlevels], &mach);
    if (rc) goto cleanup;
    mach->ops = &fattree_ops;
    mach->net = t;
    t = NULL; /* owned by the machine now */
    const fattree_net *net = mach->net;
    mach->nlinks = (int32_t)(2 * net->cable[nlevels + 1]);
    mach->nvertices = (int32_t)net->vert[nlevels + 1];
    mach->net_levels = nlevels;
    /* Two nodes always meet by the highest level that splits them. */
    int32_t top = 0;
    for (int32_t i = 1; i <= nlevels; i++)
        if (net->m[i] > 1) top = i;
    mach->max_route = 2 * top;
    if (capacity) rc = fattree_capacities(mach, net, capacity);
    if (rc) goto cleanup;
    *out = mach;
    mach = NULL;
cleanup:
    topomap_machine_destroy(mach);
    free(t);
    return rc;
}

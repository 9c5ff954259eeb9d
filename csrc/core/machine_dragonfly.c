/* Dragonfly network with minimal routing (Kim, Dally, Scott & Abts,
   "Technology-Driven, Highly-Scalable Dragonfly Topology", ISCA 2008, §3.1
   topology and §4 minimal routing "MIN").

   g groups of a routers; the routers of a group are joined all-to-all by
   local links; each router has h global links and p compute nodes.  Node
   n sits on router n / p (router R = group * a + local index); vertices:
   nodes 0..N-1, then router R is vertex N + R.

   Global ports.  Group i has P = a*h global ports k = 0..P-1, port k on
   router k / h (the "per-router arrangement" that Alzaid, Bhowmik, Yuan &
   Lang, ICS 2020, note the named schemes leave open; consecutive ports per
   router as in SST/merlin's default global_link_map).  With m = g - 1 other
   groups the ports form c = P / m full "rounds" (port k: round k / m,
   offset t = k % m) and R = P % m spare ports.  Within a round, offset t of
   group i reaches group target(i, t) by the arrangement (names of Hastings
   et al., "Comparing Global Link Arrangements for Dragonfly Networks",
   IEEE Cluster 2015; formulas as SST implements them):
     absolute  target = t < i ? t : t + 1            (SST/merlin "absolute")
     relative  target = (i + t + 1) mod g            (SST/merlin "relative")
     circulant offset 2s -> i + (s+1), 2s+1 -> i - (s+1), and for even g
               the last offset m-1 -> i + g/2        (SST/macro "circulant"
               inter_group wiring: the group graph is a circulant)
   and pairs with the offset of the same round in the target group that
   points back to i.  So g = a*h + 1 (c = 1, R = 0) is Kim's largest group
   count, with one link per group pair, and smaller g gives c or c + 1
   parallel links per pair.  Spare ports (Kim leaves them open): spare q
   joins group i to i + (s+1) for q = 2s, i - (s+1) for q = 2s + 1, and, when
   R is odd, the last spare joins i to i + g/2 (g must then be even; an odd
   number of spare port ends cannot be paired and is refused).  This
   reproduces the "port 63 pairs group i with i+32" instance of the Cui
   thesis baseline (notes 003 §1.3: g = 64, a = 16, h = 4).

   Minimal routing: node -> its router, a local hop to the router owning
   the chosen global link to the destination group (skipped when it is the
   source router), the global hop, a local hop to the destination router
   (skipped when the link lands there), -> node.  Among parallel global
   links between the two groups (choice left open by Kim) the rule is: the
   one joining the source and destination routers directly, else one owned
   by the source router (Kim's step 1 leaves the source router only when it
   has no channel to the destination group), else one landing on the
   destination router, else any; ties go to the lowest source-group port.
   So the route is the shortest among the direct group-to-group paths; a
   path through a third group can still be shorter, which minimal routing
   never takes.

   Link ids (directed): node n's up link 2n, down link 2n + 1; local link
   from router R to router r' of its group: N2 + R*(a-1) + (r' < r ? r' :
   r'-1) with r = R % a and N2 = 2N; global link from port k of group i:
   N2 + g*a*(a-1) + i*P + k.  Distance = hops; levels: 1 same router, 2 same
   group, 3 other group.

   Choices the sources leave open, made here: the order of global ports
   over the routers of a group, the wiring of spare ports, the choice among
   parallel links, and the numbering of routers and links (all above). */
#include <stdlib.h>
#include <string.h>
#include "topomap/error.h"
#include "machine_internal.h"
#include "fastdiv.h"

typedef struct {
    int32_t g, a, h, p, arrangement;
    int32_t m, rounds, spare, ports; /* g - 1, P / m, P % m, P = a*h */
    int32_t nnodes;
    int32_t local_base, global_base;
    topomap_i_fastdiv div_p, div_a, div_h, div_m;
} dfly_net;

typedef struct {
    int32_t port, owner, land; /* source-group port, its router, landing router */
} dfly_hop;

static inline int32_t mod_g(const dfly_net *d, int32_t x)
{
    x %= d->g;
    return x < 0 ? x + d->g : x;
}

/* Group reached by round offset t of group i. */
static int32_t round_target(const dfly_net *d, int32_t i, int32_t t)
{
    switch (d->arrangement) {
    case TOPOMAP_DRAGONFLY_ABSOLUTE:
        return t < i ? t : t + 1;
    case TOPOMAP_DRAGONFLY_RELATIVE:
        return mod_g(d, i + t + 1);
    default:
        if (d->g % 2 == 0 && t == d->m - 1) return mod_g(d, i + d->g / 2);
        return mod_g(d, t % 2 ? i - (t / 2 + 1) : i + (t / 2 + 1));
    }
}

/* Round offset of group i that leads to group j != i (inverse of round_target). */
static int32_t round_offset(const dfly_net *d, int32_t i, int32_t j)
{
    switch (d->arrangement) {
    case TOPOMAP_DRAGONFLY_ABSOLUTE:
        return j < i ? j : j - 1;
    case TOPOMAP_DRAGONFLY_RELATIVE:
        return mod_g(d, j - i - 1);
    default: {
        int32_t jump = mod_g(d, j - i);
        if (2 * jump == d->g) return d->m - 1;
        return jump < d->g - jump ? 2 * (jump - 1) : 2 * (d->g - jump - 1) + 1;
    }
    }
}

/* Spare port of group i towards group j and its partner in j, or -1. */
static int32_t spare_offset(const dfly_net *d, int32_t i, int32_t j, int32_t *partner)
{
    int32_t jump = mod_g(d, j - i), pairs = d->spare / 2;
    if (d->spare % 2 && 2 * jump == d->g) {
        *partner = d->spare - 1;
        return d->spare - 1;
    }
    if (jump <= pairs) {
        *partner = 2 * (jump - 1) + 1;
        return 2 * (jump - 1);
    }
    if (d->g - jump <= pairs) {
        *partner = 2 * (d->g - jump - 1);
        return 2 * (d->g - jump - 1) + 1;
    }
    return -1;
}

/* The other end of global port k of group i: its group and port. */
static void port_partner(const dfly_net *d, int32_t i, int32_t k, int32_t *j, int32_t *k2)
{
    int32_t full = d->rounds * d->m;
    if (k < full) {
        int32_t r = (int32_t)topomap_i_div(d->div_m, (uint32_t)k), t = k - r * d->m;
        *j = round_target(d, i, t);
        *k2 = r * d->m + round_offset(d, *j, i);
        return;
    }
    int32_t q = k - full, jump;
    if (d->spare % 2 && q == d->spare - 1) {
        jump = d->g / 2;
        *k2 = k;
    } else {
        jump = q % 2 ? -(q / 2 + 1) : q / 2 + 1;
        *k2 = full + (q ^ 1);
    }
    *j = mod_g(d, i + jump);
}

static inline int32_t owner_of(const dfly_net *d, int32_t port)
{
    return (int32_t)topomap_i_div(d->div_h, (uint32_t)port);
}

/* First round r >= 0, r < rounds, with r*m + t in [lo, lo + h), or -1. */
static int32_t first_round_in(const dfly_net *d, int32_t t, int32_t lo)
{
    int32_t r = lo <= t ? 0 : (lo - t + d->m - 1) / d->m;
    if (r >= d->rounds || (int64_t)r * d->m + t >= (int64_t)lo + d->h) return -1;
    return r;
}

/* The global link a minimal route from router rs of group gs to router rd
   of group gd takes (gs != gd); see the rule in the header comment. */
static dfly_hop choose_global(const dfly_net *d, int32_t gs, int32_t rs, int32_t gd, int32_t rd)
{
    int32_t t = round_offset(d, gs, gd), t2 = round_offset(d, gd, gs), m = d->m, h = d->h;
    int32_t full = d->rounds * m, sq2 = -1, sq = spare_offset(d, gs, gd, &sq2);
    dfly_hop best = {-1, -1, -1};
    /* Class 1 and 2: ports owned by rs, in increasing port order, spare last. */
    int32_t r = first_round_in(d, t, rs * h);
    if (r >= 0) {
        for (; r < d->rounds && r * m + t < rs * h + h; r++) {
            int32_t land = owner_of(d, r * m + t2);
            if (land == rd) return (dfly_hop){r * m + t, rs, rd};
            if (best.port < 0) best = (dfly_hop){r * m + t, rs, land};
        }
    }
    if (sq >= 0 && owner_of(d, full + sq) == rs) {
        int32_t land = owner_of(d, full + sq2);
        if (land == rd || best.port < 0) return (dfly_hop){full + sq, rs, land};
    }
    if (best.port >= 0) return best;
    /* Class 3: the lowest port landing on rd. */
    r = first_round_in(d, t2, rd * h);
    if (r >= 0) return (dfly_hop){r * m + t, owner_of(d, r * m + t), rd};
    if (sq >= 0 && owner_of(d, full + sq2) == rd) return (dfly_hop){full + sq, owner_of(d, full + sq), rd};
    /* Class 4: round 0 always exists (rounds >= 1). */
    return (dfly_hop){t, owner_of(d, t), owner_of(d, t2)};
}

static inline int32_t local_link(const dfly_net *d, int32_t router, int32_t from_local, int32_t to_local)
{
    return d->local_base + router * (d->a - 1) + (to_local < from_local ? to_local : to_local - 1);
}

static int32_t dfly_route(const topomap_machine *m, int32_t na, int32_t nb, int32_t *out)
{
    const dfly_net *d = m->net;
    int32_t ra = (int32_t)topomap_i_div(d->div_p, (uint32_t)na), rb = (int32_t)topomap_i_div(d->div_p, (uint32_t)nb);
    int32_t n = 0;
    out[n++] = 2 * na;
    if (ra != rb) {
        int32_t ga = (int32_t)topomap_i_div(d->div_a, (uint32_t)ra), gb = (int32_t)topomap_i_div(d->div_a, (uint32_t)rb);
        int32_t la = ra - ga * d->a, lb = rb - gb * d->a;
        if (ga == gb) {
            out[n++] = local_link(d, ra, la, lb);
        } else {
            dfly_hop hop = choose_global(d, ga, la, gb, lb);
            if (hop.owner != la) out[n++] = local_link(d, ra, la, hop.owner);
            out[n++] = d->global_base + ga * d->ports + hop.port;
            if (hop.land != lb) out[n++] = local_link(d, gb * d->a + hop.land, hop.land, lb);
        }
    }
    out[n++] = 2 * nb + 1;
    return n;
}

static int32_t dfly_count(const topomap_machine *m, int32_t na, int32_t nb)
{
    const dfly_net *d = m->net;
    int32_t ra = (int32_t)topomap_i_div(d->div_p, (uint32_t)na), rb = (int32_t)topomap_i_div(d->div_p, (uint32_t)nb);
    if (ra == rb) return 2;
    int32_t ga = (int32_t)topomap_i_div(d->div_a, (uint32_t)ra), gb = (int32_t)topomap_i_div(d->div_a, (uint32_t)rb);
    if (ga == gb) return 3;
    int32_t la = ra - ga * d->a, lb = rb - gb * d->a;
    dfly_hop hop = choose_global(d, ga, la, gb, lb);
    return 3 + (hop.owner != la) + (hop.land != lb);
}

static double dfly_distance(const topomap_machine *m, int32_t a, int32_t b) { return (double)dfly_count(m, a, b); }

static int32_t dfly_level(const topomap_machine *m, int32_t na, int32_t nb)
{
    const dfly_net *d = m->net;
    int32_t ra = (int32_t)topomap_i_div(d->div_p, (uint32_t)na), rb = (int32_t)topomap_i_div(d->div_p, (uint32_t)nb);
    if (ra == rb) return 1;
    return topomap_i_div(d->div_a, (uint32_t)ra) == topomap_i_div(d->div_a, (uint32_t)rb) ? 2 : 3;
}

static void dfly_link_ends(const topomap_machine *m, int32_t link, int32_t *from, int32_t *to)
{
    const dfly_net *d = m->net;
    int32_t N = d->nnodes;
    if (link < d->local_base) {
        int32_t node = link / 2, router = N + node / d->p;
        *from = link & 1 ? router : node;
        *to = link & 1 ? node : router;
    } else if (link < d->global_base) {
        int32_t idx = link - d->local_base, R = idx / (d->a - 1), j = idx % (d->a - 1), r = R % d->a;
        *from = N + R;
        *to = N + R - r + (j < r ? j : j + 1);
    } else {
        int32_t idx = link - d->global_base, i = idx / d->ports, k = idx % d->ports, j, k2;
        port_partner(d, i, k, &j, &k2);
        *from = N + i * d->a + owner_of(d, k);
        *to = N + j * d->a + owner_of(d, k2);
    }
}

/* Exact longest route: 2 + 1 + the most local hops any group pair needs
   (0..2).  A pair needs 2 for some router pair unless the routers owning its
   links or the routers they land on cover the whole group, which needs at
   least a parallel links; only then are the pairs enumerated. */
static int32_t longest_route(const dfly_net *d, uint8_t *own, uint8_t *land, uint8_t *direct)
{
    int32_t a = d->a, most = 0;
    if (a == 1) return 3;
    if (d->rounds + 1 < a) return 5;
    int32_t full = d->rounds * d->m;
    for (int32_t gs = 0; gs < d->g; gs++) {
        for (int32_t gd = 0; gd < d->g; gd++) {
            if (gs == gd) continue;
            memset(own, 0, (size_t)a);
            memset(land, 0, (size_t)a);
            memset(direct, 0, (size_t)a * (size_t)a);
            int32_t t = round_offset(d, gs, gd), t2 = round_offset(d, gd, gs), q2, nown = 0, nland = 0, ndirect = 0;
            int32_t q = spare_offset(d, gs, gd, &q2);
            for (int32_t r = 0; r <= d->rounds; r++) {
                int32_t ks, kd;
                if (r < d->rounds) {
                    ks = r * d->m + t;
                    kd = r * d->m + t2;
                } else if (q >= 0) {
                    ks = full + q;
                    kd = full + q2;
                } else {
                    break;
                }
                int32_t os = owner_of(d, ks), od = owner_of(d, kd);
                nown += !own[os];
                nland += !land[od];
                ndirect += !direct[os * a + od];
                own[os] = land[od] = direct[os * a + od] = 1;
            }
            if (nown < a && nland < a) return 5;
            if (ndirect < a * a) most = 1;
        }
    }
    return 3 + most;
}

static void dfly_destroy(void *net) { free(net); }

static const struct topomap_i_net_ops dfly_ops = {
    "dragonfly", dfly_route, dfly_count, dfly_distance, dfly_level, NULL, dfly_link_ends, 1, dfly_destroy,
};

int topomap_machine_create_dragonfly(const topomap_node_tree *tree, int32_t g, int32_t a, int32_t h, int32_t p,
                                     int32_t arrangement, topomap_machine **out)
{
    int rc = TOPOMAP_OK;
    dfly_net *d = NULL;
    uint8_t *scratch = NULL;
    *out = NULL;
    if (g < 2 || a < 1 || h < 1 || p < 1) {
        rc = topomap_i_fail(TOPOMAP_EINVAL, "a dragonfly needs g >= 2 groups and a, h, p >= 1, got g=%d a=%d h=%d p=%d",
                            (int)g, (int)a, (int)h, (int)p);
        goto cleanup;
    }
    if (arrangement < TOPOMAP_DRAGONFLY_ABSOLUTE || arrangement > TOPOMAP_DRAGONFLY_CIRCULANT) {
        rc = topomap_i_fail(TOPOMAP_EINVAL, "unknown dragonfly global-link arrangement %d", (int)arrangement);
        goto cleanup;
    }
    int64_t ports = (int64_t)a * h, routers = (int64_t)g * a, nnodes = routers * p;
    if (g - 1 > ports) {
        rc = topomap_i_fail(TOPOMAP_EINVAL,
                            "dragonfly g=%d exceeds a*h+1 = %lld: %lld global ports per group cannot reach %d other groups",
                            (int)g, (long long)(ports + 1), (long long)ports, (int)(g - 1));
        goto cleanup;
    }
    int64_t spare = ports % (g - 1);
    if (spare % 2 && g % 2) {
        rc = topomap_i_fail(TOPOMAP_EINVAL,
                            "dragonfly g=%d a=%d h=%d leaves %lld spare global ports in each of an odd number of groups; "
                            "they cannot be paired", (int)g, (int)a, (int)h, (long long)spare);
        goto cleanup;
    }
    int64_t nlinks = 2 * nnodes + routers * (a - 1) + routers * h;
    if (nnodes > INT32_MAX || nlinks > INT32_MAX || nnodes + routers > INT32_MAX) {
        rc = topomap_i_fail(TOPOMAP_EINVAL, "dragonfly g=%d a=%d h=%d p=%d has %lld nodes and %lld links (limit 2^31)",
                            (int)g, (int)a, (int)h, (int)p, (long long)nnodes, (long long)nlinks);
        goto cleanup;
    }
    d = calloc(1, sizeof *d);
    scratch = malloc((size_t)a * ((size_t)a + 2));
    if (!d || !scratch) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    d->g = g;
    d->a = a;
    d->h = h;
    d->p = p;
    d->arrangement = arrangement;
    d->m = g - 1;
    d->ports = (int32_t)ports;
    d->rounds = (int32_t)(ports / (g - 1));
    d->spare = (int32_t)spare;
    d->nnodes = (int32_t)nnodes;
    d->local_base = (int32_t)(2 * nnodes);
    d->global_base = (int32_t)(2 * nnodes + routers * (a - 1));
    d->div_p = topomap_i_fastdiv_make((uint32_t)p);
    d->div_a = topomap_i_fastdiv_make((uint32_t)a);
    d->div_h = topomap_i_fastdiv_make((uint32_t)h);
    d->div_m = topomap_i_fastdiv_make((uint32_t)(g - 1));
    int32_t longest = longest_route(d, scratch, scratch + a, scratch + 2 * a);
    rc = topomap_i_machine_new(tree, (int32_t)nnodes, out);
    if (rc) goto cleanup;
    (*out)->ops = &dfly_ops;
    (*out)->net = d;
    (*out)->nlinks = (int32_t)nlinks;
    (*out)->nvertices = (int32_t)(nnodes + routers);
    (*out)->max_route = longest;
    (*out)->net_levels = 3;
    d = NULL;
cleanup:
    free(d);
    free(scratch);
    return rc;
}

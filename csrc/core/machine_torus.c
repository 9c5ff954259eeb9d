/* n-D torus and mesh with dimension-order routing (DOR).

   Node id = x0 + d0*(x1 + d1*(x2 + ...)), first coordinate fastest, as Scotch
   numbers torusXD terminals.  Each node owns 2 directed links per dimension,
   id (node*ndims + dim)*2 + dir (dir 0 steps +1, dir 1 steps -1); a message
   uses the links of the nodes it leaves.  DOR corrects dimension 0 first,
   then 1, ...; on a torus it takes the shorter way round and, on a tie
   (delta == size/2), the + direction, so routes are deterministic. */
#include <stdlib.h>
#include "topomap/error.h"
#include "machine_internal.h"
#include "fastdiv.h"

typedef struct {
    int32_t ndims;
    int32_t dims[32];
    int64_t stride[32];
    uint8_t wrap[32];
    topomap_i_fastdiv div[32]; /* by dims[d] */
} torus_net;

/* Signed step count in one dimension: > 0 means + direction. */
static inline int32_t dim_delta(const torus_net *t, int32_t d, int32_t ca, int32_t cb)
{
    int32_t size = t->dims[d];
    if (!t->wrap[d]) return cb - ca;
    int32_t delta = cb - ca;
    if (delta < 0) delta += size;
    if (delta == 0) return 0;
    return 2 * delta <= size ? delta : delta - size;
}

static int32_t torus_route(const topomap_machine *m, int32_t a, int32_t b, int32_t *out)
{
    const torus_net *t = m->net;
    int32_t n = 0, nd = t->ndims;
    int64_t cur = a;
    uint32_t ra = (uint32_t)a, rb = (uint32_t)b;
    for (int32_t d = 0; d < nd; d++) {
        int32_t size = t->dims[d];
        int64_t st = t->stride[d];
        uint32_t qa = topomap_i_div(t->div[d], ra), qb = topomap_i_div(t->div[d], rb);
        int32_t ca = (int32_t)(ra - qa * (uint32_t)size), cb = (int32_t)(rb - qb * (uint32_t)size);
        ra = qa;
        rb = qb;
        int32_t delta = dim_delta(t, d, ca, cb);
        if (delta == 0) continue;
        /* The link of node `cur` is (cur*nd + d)*2 + dir and a step moves it by
           lstep; at most one wrap-around splits the run into two strides. */
        int64_t lstep = st * nd * 2, link = (cur * nd + d) * 2;
        int32_t steps, first;
        if (delta > 0) {
            steps = delta;
            first = steps < size - ca ? steps : size - ca;
            for (int32_t s = 0; s < first; s++) out[n++] = (int32_t)(link + s * lstep);
            link -= (int64_t)ca * lstep; /* coordinate 0 */
            for (int32_t s = 0; s < steps - first; s++) out[n++] = (int32_t)(link + s * lstep);
        } else {
            steps = -delta;
            link += 1;
            first = steps < ca + 1 ? steps : ca + 1;
            for (int32_t s = 0; s < first; s++) out[n++] = (int32_t)(link - s * lstep);
            link += (int64_t)(size - 1 - ca) * lstep; /* coordinate size-1 */
            for (int32_t s = 0; s < steps - first; s++) out[n++] = (int32_t)(link - s * lstep);
        }
        cur += (int64_t)(cb - ca) * st;
    }
    return n;
}

static int32_t torus_count(const topomap_machine *m, int32_t a, int32_t b)
{
    const torus_net *t = m->net;
    int32_t hops = 0;
    uint32_t ra = (uint32_t)a, rb = (uint32_t)b;
    for (int32_t d = 0; d < t->ndims; d++) {
        uint32_t size = (uint32_t)t->dims[d];
        uint32_t qa = topomap_i_div(t->div[d], ra), qb = topomap_i_div(t->div[d], rb);
        int32_t delta = dim_delta(t, d, (int32_t)(ra - qa * size), (int32_t)(rb - qb * size));
        ra = qa;
        rb = qb;
        hops += delta < 0 ? -delta : delta;
    }
    return hops;
}

static double torus_distance(const topomap_machine *m, int32_t a, int32_t b)
{
    return (double)torus_count(m, a, b);
}

static int32_t torus_level(const topomap_machine *m, int32_t a, int32_t b)
{
    (void)m; (void)a; (void)b;
    return 1;
}

static int torus_link_exists(const topomap_machine *m, int32_t link)
{
    const torus_net *t = m->net;
    int32_t dir = link & 1, d = (link >> 1) % t->ndims, node = (link >> 1) / t->ndims;
    int32_t size = t->dims[d], c = (int32_t)((node / t->stride[d]) % size);
    if (size == 1) return 0;
    if (t->wrap[d]) return 1;
    return dir == 0 ? c + 1 < size : c > 0;
}

static void torus_link_ends(const topomap_machine *m, int32_t link, int32_t *from, int32_t *to)
{
    const torus_net *t = m->net;
    int32_t dir = link & 1, d = (link >> 1) % t->ndims, node = (link >> 1) / t->ndims;
    int32_t size = t->dims[d], c = (int32_t)((node / t->stride[d]) % size);
    int32_t next = dir == 0 ? (c + 1 == size ? 0 : c + 1) : (c == 0 ? size - 1 : c - 1);
    *from = node;
    *to = (int32_t)(node + (int64_t)(next - c) * t->stride[d]);
}

static void torus_destroy(void *net) { free(net); }

static const struct topomap_i_net_ops torus_ops = {
    "torus", torus_route, torus_count, torus_distance, torus_level, torus_link_exists, torus_link_ends, 1, torus_destroy,
};

int topomap_machine_create_torus(const topomap_node_tree *tree, int32_t ndims, const int32_t *dims,
                                 const uint8_t *wrap, topomap_machine **out)
{
    if (ndims < 1 || ndims > 32)
        return topomap_i_fail(TOPOMAP_EINVAL, "a torus needs 1 to 32 dimensions, got %d", (int)ndims);
    int64_t nnodes = 1, max_route = 0;
    for (int32_t d = 0; d < ndims; d++) {
        if (dims[d] < 1) return topomap_i_fail(TOPOMAP_EINVAL, "torus dimension %d has size %d", (int)d, (int)dims[d]);
        nnodes *= dims[d];
        if (nnodes > INT32_MAX) return topomap_i_fail(TOPOMAP_EINVAL, "torus has more than 2^31 nodes");
        max_route += wrap[d] ? dims[d] / 2 : dims[d] - 1;
    }
    if (nnodes * ndims * 2 > INT32_MAX)
        return topomap_i_fail(TOPOMAP_EINVAL, "torus has more than 2^31 links");
    torus_net *t = calloc(1, sizeof *t);
    if (!t) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    t->ndims = ndims;
    int64_t st = 1;
    for (int32_t d = 0; d < ndims; d++) {
        t->dims[d] = dims[d];
        t->wrap[d] = wrap[d] ? 1 : 0;
        t->stride[d] = st;
        t->div[d] = topomap_i_fastdiv_make((uint32_t)dims[d]);
        st *= dims[d];
    }
    int rc = topomap_i_machine_new(tree, (int32_t)nnodes, out);
    if (rc) {
        free(t);
        return rc;
    }
    topomap_machine *m = *out;
    m->ops = &torus_ops;
    m->net = t;
    m->nlinks = (int32_t)(nnodes * ndims * 2);
    m->max_route = (int32_t)max_route;
    m->net_levels = 1;
    return TOPOMAP_OK;
}

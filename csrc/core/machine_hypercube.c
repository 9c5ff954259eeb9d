/* Binary hypercube of dimension D with e-cube routing (Sullivan & Bashkow
   1977; Dally & Towles, "Principles and Practices of Interconnection
   Networks", §14.2 dimension-order routing on the binary n-cube; the
   shortcut-topology thesis, notes 003 §1.3: 2^n nodes, degree n, adjacent iff
   the ids differ in one bit).

   Node ids are the D-bit addresses.  Node x owns one directed link per
   dimension, id x*D + i, towards x ^ (1 << i).  E-cube routing corrects the
   differing bits from the lowest to the highest, so the route from a to b
   has popcount(a ^ b) links and is deterministic; distance = hops; one
   network level. */
#include <stdlib.h>
#include "topomap/error.h"
#include "machine_internal.h"

typedef struct {
    int32_t dim;
} cube_net;

static int32_t cube_route(const topomap_machine *m, int32_t a, int32_t b, int32_t *out)
{
    int32_t dim = ((const cube_net *)m->net)->dim, n = 0, cur = a;
    uint32_t diff = (uint32_t)(a ^ b);
    while (diff) {
        int32_t i = __builtin_ctz(diff);
        out[n++] = cur * dim + i;
        cur ^= (int32_t)1 << i;
        diff &= diff - 1;
    }
    return n;
}

static int32_t cube_count(const topomap_machine *m, int32_t a, int32_t b)
{
    (void)m;
    return __builtin_popcount((uint32_t)(a ^ b));
}

static double cube_distance(const topomap_machine *m, int32_t a, int32_t b) { return (double)cube_count(m, a, b); }

static int32_t cube_level(const topomap_machine *m, int32_t a, int32_t b)
{
    (void)m; (void)a; (void)b;
    return 1;
}

static void cube_link_ends(const topomap_machine *m, int32_t link, int32_t *from, int32_t *to)
{
    int32_t dim = ((const cube_net *)m->net)->dim;
    *from = link / dim;
    *to = *from ^ ((int32_t)1 << (link % dim));
}

static void cube_destroy(void *net) { free(net); }

static const struct topomap_i_net_ops cube_ops = {
    "hypercube", cube_route, cube_count, cube_distance, cube_level, NULL, cube_link_ends, 1, cube_destroy,
};

int topomap_machine_create_hypercube(const topomap_node_tree *tree, int32_t dim, topomap_machine **out)
{
    int rc = TOPOMAP_OK;
    cube_net *c = NULL;
    *out = NULL;
    /* 2^26 nodes x 26 links is the largest cube whose link ids fit in int32. */
    if (dim < 1 || dim > 26) {
        rc = topomap_i_fail(TOPOMAP_EINVAL, "hypercube dimension must be 1..26, got %d", (int)dim);
        goto cleanup;
    }
    c = malloc(sizeof *c);
    if (!c) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    c->dim = dim;
    rc = topomap_i_machine_new(tree, (int32_t)1 << dim, out);
    if (rc) goto cleanup;
    (*out)->ops = &cube_ops;
    (*out)->net = c;
    (*out)->nlinks = ((int32_t)1 << dim) * dim;
    (*out)->max_route = dim;
    (*out)->net_levels = 1;
    c = NULL;
cleanup:
    free(c);
    return rc;
}

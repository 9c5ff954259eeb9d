/* topomap_coll_build: validates a collective's spec, picks the algorithm and
   owns the growing arrays of the schedule (coll_internal.h's emitter). */
#include <stdlib.h>
#include <string.h>
#include "coll_internal.h"
#include "topomap/error.h"

static int grow(void **p, int64_t *cap, int64_t need, size_t size)
{
    if (need <= *cap) return 0;
    int64_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void *q = realloc(*p, (size_t)c * size);
    if (!q) return -1;
    *p = q;
    *cap = c;
    return 0;
}

void coll_msg(coll_emit *e, int32_t src, int32_t dst)
{
    topomap_coll_schedule *s = e->s;
    if (e->rc) return;
    if (s->nmsgs >= TOPOMAP_COLL_MAX_MSGS) {
        e->rc = topomap_i_fail(TOPOMAP_EINVAL, "the schedule would hold more than %lld messages",
                               (long long)TOPOMAP_COLL_MAX_MSGS);
        return;
    }
    int64_t cap = e->cap_msgs, need = s->nmsgs + 2; /* item_ptr needs one more */
    int bad = grow((void **)&s->src, &cap, need, sizeof *s->src);
    cap = e->cap_msgs;
    bad = bad || grow((void **)&s->dst, &cap, need, sizeof *s->dst);
    cap = e->cap_msgs;
    bad = bad || grow((void **)&s->count, &cap, need, sizeof *s->count);
    if (e->want) {
        cap = e->cap_msgs;
        bad = bad || grow((void **)&s->item_ptr, &cap, need, sizeof *s->item_ptr);
    }
    if (bad) {
        e->rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %lld messages", (long long)need);
        return;
    }
    e->cap_msgs = cap;
    s->src[s->nmsgs] = src;
    s->dst[s->nmsgs] = dst;
    s->count[s->nmsgs] = 0;
    if (e->want) s->item_ptr[s->nmsgs] = s->nitems;
    s->nmsgs++;
}

static void add_items(coll_emit *e, int64_t lo, int64_t cnt, int64_t mod)
{
    topomap_coll_schedule *s = e->s;
    if (s->nitems + cnt > TOPOMAP_COLL_MAX_MSGS) {
        e->rc = topomap_i_fail(TOPOMAP_EINVAL, "the schedule would list more than %lld items",
                               (long long)TOPOMAP_COLL_MAX_MSGS);
        return;
    }
    if (grow((void **)&s->items, &e->cap_items, s->nitems + cnt, sizeof *s->items)) {
        e->rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %lld items", (long long)(s->nitems + cnt));
        return;
    }
    for (int64_t i = 0; i < cnt; i++) s->items[s->nitems++] = (lo + i) % mod;
}

void coll_range(coll_emit *e, int64_t lo, int64_t cnt, int64_t mod)
{
    if (e->rc) return;
    e->s->count[e->s->nmsgs - 1] += cnt;
    if (e->want) add_items(e, lo, cnt, mod);
}

void coll_item(coll_emit *e, int64_t id) { coll_range(e, id, 1, id + 1); }

void coll_stage_end(coll_emit *e)
{
    topomap_coll_schedule *s = e->s;
    if (e->rc || s->nmsgs == s->stage_ptr[s->nstages]) return;
    if (grow((void **)&s->stage_ptr, &e->cap_stages, (int64_t)s->nstages + 2, sizeof *s->stage_ptr)) {
        e->rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %d stages", (int)s->nstages + 2);
        return;
    }
    s->stage_ptr[++s->nstages] = s->nmsgs;
}

void topomap_coll_free(topomap_coll_schedule *s)
{
    if (!s) return;
    free(s->stage_ptr);
    free(s->src);
    free(s->dst);
    free(s->count);
    free(s->item_ptr);
    free(s->items);
    memset(s, 0, sizeof *s);
}

static const char *const OPS[] = {"bcast", "gather", "allgather", "allreduce", "alltoall"};

/* Which algorithms serve which operation (bit per algorithm). */
static const unsigned SERVES[] = {
    1u << TOPOMAP_COLL_BINOMIAL,
    1u << TOPOMAP_COLL_BINOMIAL,
    1u << TOPOMAP_COLL_RD | 1u << TOPOMAP_COLL_RING | 1u << TOPOMAP_COLL_BRUCK | 1u << TOPOMAP_COLL_HIERARCHICAL,
    1u << TOPOMAP_COLL_RD | 1u << TOPOMAP_COLL_RABENSEIFNER,
    1u << TOPOMAP_COLL_BRUCK | 1u << TOPOMAP_COLL_PAIRWISE,
};

static int check(const topomap_coll_spec *sp)
{
    if (sp->op < 0 || sp->op > TOPOMAP_COLL_ALLTOALL)
        return topomap_i_fail(TOPOMAP_EINVAL, "unknown collective operation %d", (int)sp->op);
    if (sp->algorithm < 0 || sp->algorithm > TOPOMAP_COLL_PAIRWISE || !(SERVES[sp->op] >> sp->algorithm & 1u))
        return topomap_i_fail(TOPOMAP_EINVAL, "algorithm %d does not implement %s", (int)sp->algorithm, OPS[sp->op]);
    if (sp->n < 1) return topomap_i_fail(TOPOMAP_EINVAL, "n = %d: a collective needs at least one rank", (int)sp->n);
    if ((sp->op == TOPOMAP_COLL_BCAST || sp->op == TOPOMAP_COLL_GATHER) && (sp->root < 0 || sp->root >= sp->n))
        return topomap_i_fail(TOPOMAP_EINVAL, "root = %d is not a rank in [0, %d)", (int)sp->root, (int)sp->n);
    if (sp->algorithm == TOPOMAP_COLL_HIERARCHICAL && sp->ppn < 1)
        return topomap_i_fail(TOPOMAP_EINVAL, "ppn = %d: a node holds at least one rank", (int)sp->ppn);
    int quadratic = sp->algorithm == TOPOMAP_COLL_RING || sp->algorithm == TOPOMAP_COLL_PAIRWISE;
    if (quadratic && (int64_t)sp->n * (sp->n - 1) > TOPOMAP_COLL_MAX_MSGS)
        return topomap_i_fail(TOPOMAP_EINVAL, "n = %d: n(n-1) = %lld messages is above the limit of %lld", (int)sp->n,
                              (long long)sp->n * (sp->n - 1), (long long)TOPOMAP_COLL_MAX_MSGS);
    return 0;
}

static int32_t floor_pof2(int32_t n)
{
    int32_t p = 1;
    while (p <= n / 2) p <<= 1;
    return p;
}

int topomap_coll_build(const topomap_coll_spec *sp, topomap_coll_schedule *out)
{
    memset(out, 0, sizeof *out);
    int rc = check(sp);
    if (rc) return rc;
    coll_emit e = {out, 0, 0, 0, sp->want_items != 0, 0};
    out->n = sp->n;
    out->item_unit = sp->algorithm == TOPOMAP_COLL_RABENSEIFNER ? 1.0 / floor_pof2(sp->n) : 1.0;
    out->stage_ptr = calloc(2, sizeof *out->stage_ptr);
    if (!out->stage_ptr) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    e.cap_stages = 2;
    int32_t n = sp->n;
    switch (sp->algorithm) {
    case TOPOMAP_COLL_BINOMIAL:
        if (sp->op == TOPOMAP_COLL_BCAST) coll_binomial_bcast(&e, n, sp->root);
        else coll_binomial_gather(&e, n, sp->root);
        break;
    case TOPOMAP_COLL_RD: coll_rd(&e, n, sp->op == TOPOMAP_COLL_ALLREDUCE); break;
    case TOPOMAP_COLL_RABENSEIFNER: coll_rabenseifner(&e, n); break;
    case TOPOMAP_COLL_RING: coll_ring_allgather(&e, n); break;
    case TOPOMAP_COLL_BRUCK:
        if (sp->op == TOPOMAP_COLL_ALLGATHER) coll_bruck_allgather(&e, n);
        else coll_bruck_alltoall(&e, n);
        break;
    case TOPOMAP_COLL_PAIRWISE: coll_pairwise_alltoall(&e, n); break;
    default: coll_hierarchical_allgather(&e, n, sp->ppn, sp->intra_binomial != 0, sp->leaders_ring != 0);
    }
    if (!e.rc && e.want && !out->item_ptr) { /* no message at all (n = 1) */
        out->item_ptr = calloc(1, sizeof *out->item_ptr);
        if (!out->item_ptr) e.rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    }
    if (!e.rc && e.want) out->item_ptr[out->nmsgs] = out->nitems;
    if (e.rc) topomap_coll_free(out);
    return e.rc;
}

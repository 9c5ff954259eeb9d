/* Max-min fair rates by progressive filling (Bertsekas & Gallager, Data
   Networks, 2nd ed. 1992, §6.5.2): every flow's rate rises at the same pace
   until a link is full or the flow reaches its cap; the flows of a full link
   freeze at that level, the rest go on.

   The next link to fill is the one of least resid/cnt (capacity left per
   unfrozen instance).  Freezing a flow at level x <= resid/cnt of any of its
   links only raises that link's share ((R - m x) / (c - m) >= R / c), so a
   lazy min-heap works: a link's entry keeps the key it was pushed with, a
   lower bound of its share; popped, an entry below the link's share goes
   back with the share, and one that matches is the true minimum.  A cap is
   a link of its own flow, as a heap entry of its own (id -1 - f).  The
   cost is O(H + P log L) for H route entries of the flows being filled, L
   links and caps and P pops.

   topomap_i_share_check tests the result against the bottleneck
   characterization (ibid.): an allocation is max-min fair if and only if
   every flow crosses a full link on which no flow is faster (or runs at its
   cap). */
#include <math.h>
#include <stdlib.h>
#include "flowsim_internal.h"
#include "topomap/error.h"

struct topomap_i_fs_entry {
    double key;
    int32_t id;
};

static void push(struct topomap_i_fs_entry *h, int64_t *n, double key, int32_t id)
{
    int64_t i = (*n)++;
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (h[p].key <= key) break;
        h[i] = h[p];
        i = p;
    }
    h[i].key = key;
    h[i].id = id;
}

static struct topomap_i_fs_entry pop(struct topomap_i_fs_entry *h, int64_t *n)
{
    struct topomap_i_fs_entry top = h[0], last = h[--*n];
    int64_t i = 0;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= *n) break;
        if (c + 1 < *n && h[c + 1].key < h[c].key) c++;
        if (last.key <= h[c].key) break;
        h[i] = h[c];
        i = c;
    }
    if (*n > 0) h[i] = last;
    return top;
}

int topomap_i_share_init(topomap_i_share *s, const topomap_i_routes *r)
{
    size_t nl = (size_t)r->nlinks + 1, nf = (size_t)r->nflows + 1;
    s->r = r;
    s->epoch = 0;
    /* an entry per link and per cap at most: a link is pushed back only once popped */
    s->heap_cap = (int64_t)nl + (int64_t)nf;
    s->mult = calloc(nf, sizeof *s->mult);
    s->rate = calloc(nf, sizeof *s->rate);
    s->load = calloc(nl, sizeof *s->load);
    s->resid = malloc(nl * sizeof *s->resid);
    s->cnt = malloc(nl * sizeof *s->cnt);
    s->start = malloc(nl * sizeof *s->start);
    s->deg = malloc(nl * sizeof *s->deg);
    s->lflows = malloc(((size_t)r->ptr[r->nflows] + 1) * sizeof *s->lflows);
    s->touched = malloc(nl * sizeof *s->touched);
    s->link_mark = calloc(nl, sizeof *s->link_mark);
    s->frozen_mark = calloc(nf, sizeof *s->frozen_mark);
    s->heap = malloc((size_t)s->heap_cap * sizeof *s->heap);
    s->lptr = calloc(nl + 1, sizeof *s->lptr);
    s->lfl = malloc(((size_t)r->ptr[r->nflows] + 1) * sizeof *s->lfl);
    s->lmax = malloc(nl * sizeof *s->lmax);
    s->lmax_mark = calloc(nl, sizeof *s->lmax_mark);
    s->checked_mark = calloc(nf, sizeof *s->checked_mark);
    s->blink = malloc(nf * sizeof *s->blink);
    if (!s->mult || !s->rate || !s->load || !s->resid || !s->cnt || !s->start || !s->deg || !s->lflows ||
        !s->touched || !s->link_mark || !s->frozen_mark || !s->heap || !s->lptr || !s->lfl || !s->lmax ||
        !s->lmax_mark || !s->checked_mark || !s->blink) {
        topomap_i_share_free(s);
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the flow simulator's rates");
    }
    for (int32_t f = 0; f < r->nflows; f++) s->blink[f] = -1;
    for (int64_t k = 0; k < r->ptr[r->nflows]; k++) s->lptr[r->links[k] + 1]++;
    for (int32_t l = 0; l < r->nlinks; l++) s->lptr[l + 1] += s->lptr[l];
    for (int32_t f = 0; f < r->nflows; f++)
        for (int64_t k = r->ptr[f]; k < r->ptr[f + 1]; k++) s->lfl[s->lptr[r->links[k]]++] = f;
    for (int32_t l = r->nlinks; l > 0; l--) s->lptr[l] = s->lptr[l - 1];
    s->lptr[0] = 0;
    return TOPOMAP_OK;
}

void topomap_i_share_free(topomap_i_share *s)
{
    free(s->mult);
    free(s->rate);
    free(s->load);
    free(s->resid);
    free(s->cnt);
    free(s->start);
    free(s->deg);
    free(s->lflows);
    free(s->touched);
    free(s->link_mark);
    free(s->frozen_mark);
    free(s->heap);
    free(s->lptr);
    free(s->lfl);
    free(s->lmax);
    free(s->lmax_mark);
    free(s->checked_mark);
    free(s->blink);
    *s = (topomap_i_share){0};
}

void topomap_i_share_begin(topomap_i_share *s)
{
    if (++s->epoch == 0) { /* wrapped: old marks could look current */
        for (int32_t l = 0; l <= s->r->nlinks; l++) s->link_mark[l] = s->lmax_mark[l] = 0;
        for (int32_t f = 0; f <= s->r->nflows; f++) s->frozen_mark[f] = s->checked_mark[f] = 0;
        s->epoch = 1;
    }
}

/* Flow f freezes at level x: its instances take m * x on each of its links. */
static void freeze(topomap_i_share *s, int32_t f, double x, int32_t by)
{
    const topomap_i_routes *r = s->r;
    double m = s->mult[f];
    s->frozen_mark[f] = s->epoch;
    s->rate[f] = x;
    s->blink[f] = by;
    for (int64_t k = r->ptr[f]; k < r->ptr[f + 1]; k++) {
        int32_t l = r->links[k];
        s->load[l] += m * x;
        s->resid[l] = fmax(s->resid[l] - m * x, 0);
        s->cnt[l] -= s->mult[f];
    }
}

void topomap_i_share_fill(topomap_i_share *s, const int32_t *u, int32_t nu, int full)
{
    const topomap_i_routes *r = s->r;
    int32_t nt = 0;
    /* the links of u, their unfrozen instances and the load of the flows outside u */
    for (int32_t i = 0; i < nu; i++) {
        int32_t f = u[i];
        for (int64_t k = r->ptr[f]; k < r->ptr[f + 1]; k++) {
            int32_t l = r->links[k];
            if (s->link_mark[l] != s->epoch) {
                s->link_mark[l] = s->epoch;
                s->touched[nt++] = l;
                s->cnt[l] = 0;
                s->deg[l] = 0;
                if (full) s->load[l] = 0;
            }
            s->cnt[l] += s->mult[f];
            s->deg[l]++;
            if (!full) s->load[l] -= s->mult[f] * s->rate[f];
        }
    }
    s->ntouched = nt;
    int64_t pos = 0, nh = 0;
    for (int32_t i = 0; i < nt; i++) {
        int32_t l = s->touched[i];
        s->start[l] = pos;
        pos += s->deg[l];
        s->deg[l] = 0;
        s->resid[l] = fmax(r->bw[l] - s->load[l], 0);
        push(s->heap, &nh, s->resid[l] / (double)s->cnt[l], l);
    }
    for (int32_t i = 0; i < nu; i++) {
        int32_t f = u[i];
        double most = INFINITY; /* no rate above what its links have left */
        for (int64_t k = r->ptr[f]; k < r->ptr[f + 1]; k++) {
            int32_t l = r->links[k];
            s->lflows[s->start[l] + s->deg[l]++] = f;
            most = fmin(most, s->resid[l]);
        }
        /* a cap above that never binds: its entry would only cost heap work */
        if (r->cap[f] < most) push(s->heap, &nh, r->cap[f], -1 - f);
    }
    double level = 0;
    while (nh > 0) {
        struct topomap_i_fs_entry e = pop(s->heap, &nh);
        if (e.id < 0) {
            int32_t f = -1 - e.id;
            if (s->frozen_mark[f] == s->epoch) continue;
            level = e.key;
            freeze(s, f, level, -1);
            continue;
        }
        int32_t l = e.id;
        if (s->cnt[l] == 0) continue;
        double share = s->resid[l] / (double)s->cnt[l];
        if (share > e.key) {
            push(s->heap, &nh, share, l);
            continue;
        }
        /* rounding in resid must not let the level fall back */
        level = fmax(e.key, level);
        for (int64_t k = s->start[l]; k < s->start[l] + s->deg[l]; k++) {
            int32_t f = s->lflows[k];
            if (s->frozen_mark[f] != s->epoch) freeze(s, f, level, l);
        }
    }
}

/* Relative slack of the check: rates and loads carry rounding. */
#define CHECK_TOL 1e-9

static double link_max(topomap_i_share *s, int32_t l)
{
    if (s->lmax_mark[l] == s->epoch) return s->lmax[l];
    double mx = 0;
    for (int64_t k = s->lptr[l]; k < s->lptr[l + 1]; k++)
        if (s->mult[s->lfl[k]] > 0) mx = fmax(mx, s->rate[s->lfl[k]]);
    s->lmax_mark[l] = s->epoch;
    return s->lmax[l] = mx;
}

static int bottleneck_of(topomap_i_share *s, int32_t f, int32_t l)
{
    return s->load[l] >= s->r->bw[l] * (1 - CHECK_TOL) && s->rate[f] >= link_max(s, l) * (1 - CHECK_TOL);
}

/* The link that froze the flow last is tried first: it is most often still
   its bottleneck. */
static int bottlenecked(topomap_i_share *s, int32_t f)
{
    const topomap_i_routes *r = s->r;
    if (s->rate[f] >= r->cap[f] * (1 - CHECK_TOL)) return 1;
    if (s->blink[f] >= 0 && bottleneck_of(s, f, s->blink[f])) return 1;
    for (int64_t k = r->ptr[f]; k < r->ptr[f + 1]; k++)
        if (bottleneck_of(s, f, r->links[k])) {
            s->blink[f] = r->links[k];
            return 1;
        }
    return 0;
}

static void join(uint32_t *umark, uint32_t uepoch, int32_t *u, int32_t *nu, int32_t f)
{
    if (umark[f] == uepoch) return;
    umark[f] = uepoch;
    u[(*nu)++] = f;
}

int32_t topomap_i_share_check(topomap_i_share *s, uint32_t *umark, uint32_t uepoch, int32_t *u, int32_t nu,
                              int64_t *failed)
{
    const topomap_i_routes *r = s->r;
    *failed = 0;
    for (int32_t i = 0; i < s->ntouched; i++) {
        int32_t l = s->touched[i];
        for (int64_t k = s->lptr[l]; k < s->lptr[l + 1]; k++) {
            int32_t f = s->lfl[k];
            if (s->mult[f] == 0 || s->checked_mark[f] == s->epoch) continue;
            s->checked_mark[f] = s->epoch;
            if (bottlenecked(s, f)) continue;
            (*failed)++;
            join(umark, uepoch, u, &nu, f);
            for (int64_t e = r->ptr[f]; e < r->ptr[f + 1]; e++) {
                int32_t m = r->links[e];
                for (int64_t j = s->lptr[m]; j < s->lptr[m + 1]; j++) {
                    int32_t g = s->lfl[j];
                    if (s->mult[g] > 0 && s->rate[g] > s->rate[f]) join(umark, uepoch, u, &nu, g);
                }
            }
        }
    }
    return nu;
}

/* The flow simulator's event loop (semantics: topomap/flowsim.h).

   Time jumps from event to event: the next transfer to finish or the next
   transfer start (release + latency), each from a min-heap.  A transfer
   keeps its bytes left at the time its rate last changed and its finish
   time, so an event touches only the transfers that finish, start or change
   rate: it retires the finished ones, lets the schedule release what they
   unblock, starts the transfers due, then re-shares the links
   (flowsim_share.c) and moves the changed transfers in the heap.

   A re-share fills again only some flows, the others keeping their rates.
   Leaving: with x the least rate of the flows that leave, progressive
   filling below level x sees the same links fill at the same levels, as no
   leaving flow was frozen below x, so the flows slower than x keep their
   rates; the flows of rate >= x are filled again.  For equal message sizes
   the fastest flows leave first, so most re-shares touch few flows.
   Arriving: the arrivals (and flows of rate >= x) are filled, then every
   flow crossing their links is checked against the bottleneck condition of
   max-min fairness (flowsim_share.c); those that fail join with the faster
   flows beside them and the fill runs again, until all pass, which proves
   the allocation max-min fair, or LOCAL_ROUNDS pass and every flow is
   filled.  Where the flows of rate >= x outnumber those sharing a link with
   a flow that left (flows that started at different times do not leave
   fastest first), only the latter of rate >= x are filled, then checked
   the same way: flows below x keep their rates, and other flows can only
   fail on the links of those filled. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "flowsim_internal.h"
#include "topomap/error.h"
#include "topomap/flowsim.h"

/* Finishes and starts this close (relative) to the event time join it. */
#define BATCH_TOL 1e-11
/* Checked local re-shares after arrivals before one of every flow. */
#define LOCAL_ROUNDS 6

typedef struct {
    double t;
    int64_t inst;
} start_entry;

/* A transfer under way: rem bytes were left at time t0 (when its rate last
   changed); at its current rate it ends at tfin[slot]. */
typedef struct {
    int64_t inst;
    double rem, t0;
    int32_t f;
} transfer;

typedef struct {
    const topomap_flows *fl;
    const topomap_flowsim_options *opt;
    topomap_i_routes routes;
    topomap_i_share sh;
    int64_t *rptr;
    int32_t *rlinks;
    double *bound; /* min(cap, least bandwidth on the route) */
    int32_t F, S, G; /* G = iterations * S */
    double *finish;
    /* transfers under way, in slots; snext chains a flow's slots, or the free ones */
    int64_t act_cap, free_slot;
    transfer *act;
    double *tfin;            /* per slot */
    int64_t *snext, *sprev;  /* per slot */
    int64_t *fhead;          /* per flow: its first slot, -1 if none */
    topomap_i_iheap tq;      /* slots by tfin, soonest first */
    topomap_i_iheap fq;      /* transferring flows by rate, fastest first */
    double *fq_key;          /* per flow: the rate fq orders it by; a fill changes many rates at once,
                                so the heap keeps its own copy and takes the new ones one by one */
    double *old_rate;        /* per flow: its rate before a re-share */
    int64_t *fin_inst;       /* scratch of one event: the instances that finish */
    int64_t *dfs;            /* scratch: heap positions still to visit */
    int32_t *arr_f;          /* scratch of one event: the flows of the transfers that start */
    int64_t narr;
    uint32_t *umark, uepoch; /* per flow: taken into the re-share of epoch uepoch */
    /* releases waiting for their latency */
    start_entry *starts;
    int64_t nstarts, starts_cap;
    /* flows grouped: by stage (BARRIER), or by rank then stage (RANKS) */
    int64_t *gptr, *inptr;
    int32_t *gflows, *inflows;
    /* BARRIER: the current global stage and its unfinished flows */
    int32_t g;
    int64_t left;
    /* RANKS: each rank's global stage, unfinished incoming flows, cursors */
    int32_t *rstage;
    int64_t *rleft, *out_pos, *in_pos;
    int32_t *ubuf; /* the flows being re-shared */
    int64_t done, total;
    int64_t events, recomputes;
} sim;

/* ---- validation and routes ---- */

static int validate(const topomap_machine *m, const topomap_flows *fl, const topomap_flowsim_options *o)
{
    int32_t npes = topomap_machine_npes(m);
    if (fl->nflows < 0 || fl->nflows > INT32_MAX - 1)
        return topomap_i_fail(TOPOMAP_EINVAL, "number of flows %lld outside 0..%d", (long long)fl->nflows,
                              INT32_MAX - 1);
    if (fl->nstages < 1) return topomap_i_fail(TOPOMAP_EINVAL, "nstages %d < 1", (int)fl->nstages);
    if (fl->nranks < 1) return topomap_i_fail(TOPOMAP_EINVAL, "nranks %d < 1", (int)fl->nranks);
    if (o->iterations < 1) return topomap_i_fail(TOPOMAP_EINVAL, "iterations %d < 1", (int)o->iterations);
    if ((int64_t)o->iterations * fl->nstages > INT32_MAX)
        return topomap_i_fail(TOPOMAP_EINVAL, "iterations x nstages over 2^31 - 1");
    if (o->sync != TOPOMAP_FLOWSIM_BARRIER && o->sync != TOPOMAP_FLOWSIM_RANKS)
        return topomap_i_fail(TOPOMAP_EINVAL, "sync %d is neither 0 (barrier) nor 1 (ranks)", (int)o->sync);
    for (int64_t f = 0; f < fl->nflows; f++) {
        int32_t a = fl->src_pe[f], b = fl->dst_pe[f];
        if (a < 0 || a >= npes) return topomap_i_fail(TOPOMAP_EINVAL, "flow %lld: PE %d outside 0..%d", (long long)f, (int)a, (int)npes - 1);
        if (b < 0 || b >= npes) return topomap_i_fail(TOPOMAP_EINVAL, "flow %lld: PE %d outside 0..%d", (long long)f, (int)b, (int)npes - 1);
        if (!(fl->bytes[f] >= 0) || isinf(fl->bytes[f]))
            return topomap_i_fail(TOPOMAP_EINVAL, "flow %lld: bytes %g", (long long)f, fl->bytes[f]);
        if (!(fl->latency[f] >= 0) || isinf(fl->latency[f]))
            return topomap_i_fail(TOPOMAP_EINVAL, "flow %lld: latency %g", (long long)f, fl->latency[f]);
        if (!(fl->cap[f] > 0)) return topomap_i_fail(TOPOMAP_EINVAL, "flow %lld: cap %g", (long long)f, fl->cap[f]);
        if (fl->stage[f] < 0 || fl->stage[f] >= fl->nstages)
            return topomap_i_fail(TOPOMAP_EINVAL, "flow %lld: stage %d outside 0..%d", (long long)f, (int)fl->stage[f],
                                  (int)fl->nstages - 1);
        if (fl->src_rank[f] < 0 || fl->src_rank[f] >= fl->nranks)
            return topomap_i_fail(TOPOMAP_EINVAL, "flow %lld: source rank %d outside 0..%d", (long long)f,
                                  (int)fl->src_rank[f], (int)fl->nranks - 1);
        if (fl->dst_rank[f] < 0 || fl->dst_rank[f] >= fl->nranks)
            return topomap_i_fail(TOPOMAP_EINVAL, "flow %lld: destination rank %d outside 0..%d", (long long)f,
                                  (int)fl->dst_rank[f], (int)fl->nranks - 1);
    }
    return TOPOMAP_OK;
}

/* Routes as CSR, each flow's bound, and the bytes per link. */
static int build_routes(sim *s, const topomap_machine *m, double *link_bytes)
{
    const topomap_flows *fl = s->fl;
    const double *bw = s->opt->bandwidth;
    int32_t F = s->F, nl = topomap_machine_nlinks(m), mr = topomap_machine_max_route(m);
    int64_t total = 0;
    s->rptr = malloc(((size_t)F + 1) * sizeof *s->rptr);
    s->bound = malloc(((size_t)F + 1) * sizeof *s->bound);
    if (!s->rptr || !s->bound) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the flows' routes");
    for (int32_t f = 0; f < F; f++) {
        s->rptr[f] = total;
        total += topomap_machine_route_count(m, topomap_machine_node_of(m, fl->src_pe[f]),
                                             topomap_machine_node_of(m, fl->dst_pe[f]));
    }
    s->rptr[F] = total;
    s->rlinks = malloc(((size_t)total + (size_t)mr + 1) * sizeof *s->rlinks);
    if (!s->rlinks) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the flows' routes");
    if (link_bytes) memset(link_bytes, 0, (size_t)nl * sizeof *link_bytes);
    for (int32_t f = 0; f < F; f++) {
        int32_t *r = s->rlinks + s->rptr[f];
        int32_t n = topomap_machine_route(m, topomap_machine_node_of(m, fl->src_pe[f]),
                                          topomap_machine_node_of(m, fl->dst_pe[f]), r);
        double b = fl->cap[f];
        for (int32_t k = 0; k < n; k++) {
            if (!(bw[r[k]] > 0) || isinf(bw[r[k]]))
                return topomap_i_fail(TOPOMAP_EINVAL, "link %d on the route of flow %d has bandwidth %g", (int)r[k],
                                      (int)f, bw[r[k]]);
            b = fmin(b, bw[r[k]]);
            if (link_bytes) link_bytes[r[k]] += fl->bytes[f];
        }
        if (isinf(b) && fl->bytes[f] > 0)
            return topomap_i_fail(TOPOMAP_EINVAL,
                                  "flow %d: %g bytes inside node %d with no rate cap would take no time", (int)f,
                                  fl->bytes[f], (int)topomap_machine_node_of(m, fl->src_pe[f]));
        s->bound[f] = b;
    }
    s->routes = (topomap_i_routes){F, nl, s->rptr, s->rlinks, fl->cap, bw};
    return TOPOMAP_OK;
}

/* Stable counting sort of the flows by key[f] in 0..k-1: ptr (k + 1), out (F). */
static void group_by(const int32_t *key, int32_t F, int32_t k, int64_t *ptr, const int32_t *in, int32_t *out)
{
    memset(ptr, 0, ((size_t)k + 1) * sizeof *ptr);
    for (int32_t i = 0; i < F; i++) ptr[key[in ? in[i] : i] + 1]++;
    for (int32_t j = 0; j < k; j++) ptr[j + 1] += ptr[j];
    for (int32_t i = 0; i < F; i++) {
        int32_t f = in ? in[i] : i;
        out[ptr[key[f]]++] = f;
    }
    for (int32_t j = k; j > 0; j--) ptr[j] = ptr[j - 1];
    ptr[0] = 0;
}

static int build_groups(sim *s)
{
    const topomap_flows *fl = s->fl;
    int32_t F = s->F, R = fl->nranks;
    s->gflows = malloc(((size_t)F + 1) * sizeof *s->gflows);
    if (s->opt->sync == TOPOMAP_FLOWSIM_BARRIER) {
        s->gptr = malloc(((size_t)s->S + 1) * sizeof *s->gptr);
        if (!s->gptr || !s->gflows) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the schedule");
        group_by(fl->stage, F, s->S, s->gptr, NULL, s->gflows);
        return TOPOMAP_OK;
    }
    /* by rank, stage order inside: sort by stage, then stably by rank */
    int32_t *tmp = malloc(((size_t)F + 1) * sizeof *tmp);
    int64_t *sptr = malloc(((size_t)s->S + 1) * sizeof *sptr);
    s->gptr = malloc(((size_t)R + 1) * sizeof *s->gptr);
    s->inptr = malloc(((size_t)R + 1) * sizeof *s->inptr);
    s->inflows = malloc(((size_t)F + 1) * sizeof *s->inflows);
    s->rstage = malloc((size_t)R * sizeof *s->rstage);
    s->rleft = malloc((size_t)R * sizeof *s->rleft);
    s->out_pos = malloc((size_t)R * sizeof *s->out_pos);
    s->in_pos = malloc((size_t)R * sizeof *s->in_pos);
    int ok = tmp && sptr && s->gptr && s->inptr && s->inflows && s->gflows && s->rstage && s->rleft && s->out_pos &&
             s->in_pos;
    if (ok) {
        group_by(fl->stage, F, s->S, sptr, NULL, tmp);
        group_by(fl->src_rank, F, R, s->gptr, tmp, s->gflows);
        group_by(fl->dst_rank, F, R, s->inptr, tmp, s->inflows);
    }
    free(tmp);
    free(sptr);
    return ok ? TOPOMAP_OK : topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the schedule");
}

/* ---- the schedule ---- */

static int release(sim *s, int32_t it, int32_t f, double now)
{
    if (s->nstarts == s->starts_cap) {
        int64_t cap = s->starts_cap ? 2 * s->starts_cap : 1024;
        start_entry *p = realloc(s->starts, (size_t)cap * sizeof *p);
        if (!p) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the flow simulator's releases");
        s->starts = p;
        s->starts_cap = cap;
    }
    start_entry e = {now + s->fl->latency[f], (int64_t)it * s->F + f};
    int64_t i = s->nstarts++;
    while (i > 0) {
        int64_t p = (i - 1) / 2;
        if (s->starts[p].t < e.t || (s->starts[p].t == e.t && s->starts[p].inst <= e.inst)) break;
        s->starts[i] = s->starts[p];
        i = p;
    }
    s->starts[i] = e;
    return TOPOMAP_OK;
}

static start_entry pop_start(sim *s)
{
    start_entry top = s->starts[0], last = s->starts[--s->nstarts];
    int64_t i = 0, n = s->nstarts;
    for (;;) {
        int64_t c = 2 * i + 1;
        if (c >= n) break;
        if (c + 1 < n && (s->starts[c + 1].t < s->starts[c].t ||
                          (s->starts[c + 1].t == s->starts[c].t && s->starts[c + 1].inst < s->starts[c].inst)))
            c++;
        if (last.t < s->starts[c].t || (last.t == s->starts[c].t && last.inst <= s->starts[c].inst)) break;
        s->starts[i] = s->starts[c];
        i = c;
    }
    if (n > 0) s->starts[i] = last;
    return top;
}

/* BARRIER: move to the next non-empty global stage and release it. */
static int barrier_next(sim *s, double now)
{
    while (++s->g < s->G) {
        int32_t st = s->g % s->S, it = s->g / s->S;
        s->left = s->gptr[st + 1] - s->gptr[st];
        if (s->left == 0) continue;
        for (int64_t k = s->gptr[st]; k < s->gptr[st + 1]; k++) {
            int rc = release(s, it, s->gflows[k], now);
            if (rc) return rc;
        }
        break;
    }
    return TOPOMAP_OK;
}

/* RANKS: rank r is ready for its next stage(s) at `now`: release its sends
   there and count the receives still to come, until one has some. */
static int rank_next(sim *s, int32_t r, double now)
{
    const int32_t *stage = s->fl->stage;
    while (++s->rstage[r] < s->G) {
        int32_t g = s->rstage[r], st = g % s->S, it = g / s->S;
        if (st == 0) {
            s->out_pos[r] = s->gptr[r];
            s->in_pos[r] = s->inptr[r];
        }
        for (; s->out_pos[r] < s->gptr[r + 1] && stage[s->gflows[s->out_pos[r]]] == st; s->out_pos[r]++) {
            int rc = release(s, it, s->gflows[s->out_pos[r]], now);
            if (rc) return rc;
        }
        int64_t left = 0;
        for (; s->in_pos[r] < s->inptr[r + 1] && stage[s->inflows[s->in_pos[r]]] == st; s->in_pos[r]++)
            left += s->finish[(int64_t)it * s->F + s->inflows[s->in_pos[r]]] < 0;
        s->rleft[r] = left;
        if (left) break;
    }
    return TOPOMAP_OK;
}

static int schedule_start(sim *s)
{
    if (s->opt->sync == TOPOMAP_FLOWSIM_BARRIER) {
        s->g = -1;
        return barrier_next(s, 0);
    }
    for (int32_t r = 0; r < s->fl->nranks; r++) {
        s->rstage[r] = -1;
        int rc = rank_next(s, r, 0);
        if (rc) return rc;
    }
    return TOPOMAP_OK;
}

static int finished(sim *s, int64_t inst, int32_t f, double now)
{
    s->finish[inst] = now;
    s->done++;
    if (s->opt->sync == TOPOMAP_FLOWSIM_BARRIER) return --s->left == 0 ? barrier_next(s, now) : TOPOMAP_OK;
    int32_t r = s->fl->dst_rank[f], g = (int32_t)(inst / s->F) * s->S + s->fl->stage[f];
    if (s->rstage[r] == g && --s->rleft[r] == 0) return rank_next(s, r, now);
    return TOPOMAP_OK;
}

/* ---- the event loop ---- */

static int grow_slots(sim *s)
{
    int64_t cap = s->act_cap ? 2 * s->act_cap : 1024;
    transfer *a = realloc(s->act, (size_t)cap * sizeof *a);
    if (a) s->act = a;
    double *t = realloc(s->tfin, (size_t)cap * sizeof *t);
    if (t) s->tfin = t;
    int64_t *n = realloc(s->snext, (size_t)cap * sizeof *n);
    if (n) s->snext = n;
    int64_t *p = realloc(s->sprev, (size_t)cap * sizeof *p);
    if (p) s->sprev = p;
    int64_t *fi = realloc(s->fin_inst, (size_t)cap * sizeof *fi);
    if (fi) s->fin_inst = fi;
    int32_t *af = realloc(s->arr_f, (size_t)cap * sizeof *af);
    if (af) s->arr_f = af;
    if (!a || !t || !n || !p || !fi || !af || topomap_i_iheap_reserve(&s->tq, cap))
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the flow simulator's transfers");
    for (int64_t k = s->act_cap; k < cap; k++) s->snext[k] = k + 1 < cap ? k + 1 : -1;
    s->free_slot = s->act_cap;
    s->act_cap = cap;
    return TOPOMAP_OK;
}

static int add_transfer(sim *s, int64_t inst, int32_t f, double now)
{
    topomap_i_share *sh = &s->sh;
    if (s->free_slot < 0) {
        int rc = grow_slots(s);
        if (rc) return rc;
    }
    int64_t k = s->free_slot;
    s->free_slot = s->snext[k];
    double b = s->fl->bytes[f];
    s->act[k] = (transfer){inst, b, now, f};
    /* without sharing the rate is known now; with it, the re-share after this event sets tfin */
    s->tfin[k] = s->opt->share ? INFINITY : now + b / s->bound[f];
    s->snext[k] = s->fhead[f];
    s->sprev[k] = -1;
    if (s->fhead[f] >= 0) s->sprev[s->fhead[f]] = k;
    s->fhead[f] = k;
    topomap_i_iheap_push(&s->tq, s->tfin, k);
    if (sh->mult[f]++ == 0) {
        if (s->opt->share) sh->rate[f] = 0;
        s->fq_key[f] = sh->rate[f];
        topomap_i_iheap_push(&s->fq, s->fq_key, f);
    }
    s->arr_f[s->narr++] = f;
    if (!s->opt->share) return TOPOMAP_OK;
    /* load stays the sum of mult * rate, which a partial re-share relies on */
    for (int64_t e = s->rptr[f]; e < s->rptr[f + 1]; e++) sh->load[s->rlinks[e]] += sh->rate[f];
    return TOPOMAP_OK;
}

/* The soonest transfer is done: its slot goes back to the free list. */
static int64_t pop_transfer(sim *s)
{
    int64_t k = s->tq.ids[0];
    int32_t f = s->act[k].f;
    topomap_i_iheap_remove(&s->tq, s->tfin, k);
    if (s->sprev[k] >= 0) s->snext[s->sprev[k]] = s->snext[k];
    else s->fhead[f] = s->snext[k];
    if (s->snext[k] >= 0) s->sprev[s->snext[k]] = s->sprev[k];
    s->snext[k] = s->free_slot;
    s->free_slot = k;
    return s->act[k].inst;
}

/* A transfer leaves: its instance's rate no longer loads its links. */
static void depart(sim *s, int32_t f)
{
    topomap_i_share *sh = &s->sh;
    if (--sh->mult[f] == 0) topomap_i_iheap_remove(&s->fq, s->fq_key, f);
    if (!s->opt->share) return;
    for (int64_t k = s->rptr[f]; k < s->rptr[f + 1]; k++) sh->load[s->rlinks[k]] -= sh->rate[f];
}

static void take(sim *s, int32_t f, int32_t *nu)
{
    if (s->umark[f] == s->uepoch) return;
    s->umark[f] = s->uepoch;
    s->ubuf[(*nu)++] = f;
}

static void new_set(sim *s)
{
    if (++s->uepoch == 0) { /* wrapped: old marks could look current */
        memset(s->umark, 0, ((size_t)s->F + 1) * sizeof *s->umark);
        s->uepoch = 1;
    }
}

/* Adds the transferring flows of rate >= thr (a walk of the rate heap that
   stops below thr); returns 0, leaving the set incomplete, once it would
   pass `limit` flows. */
static int take_faster(sim *s, double thr, int64_t limit, int32_t *nu)
{
    const topomap_i_iheap *q = &s->fq;
    int64_t top = 0;
    if (q->n) s->dfs[top++] = 0;
    while (top) {
        int64_t i = s->dfs[--top];
        int32_t f = (int32_t)q->ids[i];
        if (s->fq_key[f] < thr) continue;
        take(s, f, nu);
        if (*nu > limit) return 0;
        if (2 * i + 1 < q->n) s->dfs[top++] = 2 * i + 1;
        if (2 * i + 2 < q->n) s->dfs[top++] = 2 * i + 2;
    }
    return 1;
}

/* Adds every transferring flow of rate >= thr that shares a link with a
   flow that left. */
static void take_beside(sim *s, int64_t nfin, double thr, int32_t *nu)
{
    const topomap_i_share *sh = &s->sh;
    for (int64_t j = 0; j < nfin; j++) {
        int32_t f = (int32_t)(s->fin_inst[j] % s->F);
        for (int64_t k = s->rptr[f]; k < s->rptr[f + 1]; k++)
            for (int64_t e = sh->lptr[s->rlinks[k]]; e < sh->lptr[s->rlinks[k] + 1]; e++) {
                int32_t g = sh->lfl[e];
                if (sh->mult[g] > 0 && sh->rate[g] >= thr) take(s, g, nu);
            }
    }
}

/* Re-share after an event, then give the transfers of the flows whose rate
   changed their new finish times.  The set filled first: the arrivals and
   the flows of rate >= the slowest that left, which needs no check when
   nothing arrived, or, when that is more than the flows beside those that
   left, the arrivals and those flows, checked. */
static void reshare(sim *s, double slowest, int64_t nfin, double now)
{
    topomap_i_share *sh = &s->sh;
    int32_t nu = 0, before = 0;
    int64_t beside = 0;
    for (int64_t j = 0; j < nfin; j++) {
        int32_t f = (int32_t)(s->fin_inst[j] % s->F);
        for (int64_t k = s->rptr[f]; k < s->rptr[f + 1]; k++) beside += sh->lptr[s->rlinks[k] + 1] - sh->lptr[s->rlinks[k]];
    }
    new_set(s);
    for (int64_t a = 0; a < s->narr; a++) take(s, s->arr_f[a], &nu);
    int check = s->narr > 0;
    double thr = slowest * (1 - 1e-9);
    if (!take_faster(s, thr, s->narr + beside, &nu)) {
        new_set(s);
        nu = 0;
        for (int64_t a = 0; a < s->narr; a++) take(s, s->arr_f[a], &nu);
        take_beside(s, nfin, thr, &nu);
        check = 1;
    }
    int full = 0;
    for (int round = 0; nu; round++) {
        for (int32_t i = before; i < nu; i++) s->old_rate[s->ubuf[i]] = sh->rate[s->ubuf[i]];
        before = nu;
        /* every transferring flow: loads from zero, which also drops the rounding of the partial ones */
        full = nu == s->fq.n;
        topomap_i_share_begin(sh);
        topomap_i_share_fill(sh, s->ubuf, nu, full);
        s->recomputes++;
        if (full || !check) break;
        int64_t failed;
        nu = topomap_i_share_check(sh, s->umark, s->uepoch, s->ubuf, nu, &failed);
        if (!failed) break;
        if (nu == before || round + 1 == LOCAL_ROUNDS) /* no headway: fill them all */
            for (int64_t i = 0; i < s->fq.n; i++) take(s, (int32_t)s->fq.ids[i], &nu);
    }
    for (int32_t i = 0; i < nu; i++) {
        int32_t f = s->ubuf[i];
        double r0 = s->old_rate[f], r = sh->rate[f];
        for (int64_t k = s->fhead[f]; k >= 0; k = s->snext[k]) {
            transfer *t = &s->act[k];
            if (t->t0 < now && r0 == r) continue;
            t->rem = fmax(t->rem - r0 * (now - t->t0), 0);
            t->t0 = now;
            s->tfin[k] = now + t->rem / r;
            if (!full) topomap_i_iheap_update(&s->tq, s->tfin, k);
        }
        if (s->fq.pos[f] >= 0 && s->fq_key[f] != r) {
            s->fq_key[f] = r;
            if (!full) topomap_i_iheap_update(&s->fq, s->fq_key, f);
        }
    }
    if (full) {
        topomap_i_iheap_heapify(&s->tq, s->tfin);
        topomap_i_iheap_heapify(&s->fq, s->fq_key);
    }
}

static int run_events(sim *s, const topomap_run_options *run)
{
    const double *bytes = s->fl->bytes;
    double now = 0;
    int rc = schedule_start(s);
    while (!rc) {
        double T = s->tq.n ? s->tfin[s->tq.ids[0]] : INFINITY;
        if (s->nstarts) T = fmin(T, s->starts[0].t);
        if (isinf(T)) break;
        double lim = T + BATCH_TOL * T, slowest = INFINITY;
        int64_t nfin = 0;
        while (s->tq.n && s->tfin[s->tq.ids[0]] <= lim) s->fin_inst[nfin++] = pop_transfer(s);
        now = T;
        s->events++;
        for (int64_t j = 0; j < nfin && !rc; j++) {
            int32_t f = (int32_t)(s->fin_inst[j] % s->F);
            slowest = fmin(slowest, s->sh.rate[f]);
            depart(s, f);
            rc = finished(s, s->fin_inst[j], f, now);
        }
        s->narr = 0;
        while (!rc && s->nstarts && s->starts[0].t <= lim) {
            start_entry e = pop_start(s);
            int32_t f = (int32_t)(e.inst % s->F);
            if (bytes[f] == 0) {
                rc = finished(s, e.inst, f, now);
            } else {
                if (!s->opt->share) s->sh.rate[f] = s->bound[f];
                rc = add_transfer(s, e.inst, f, now);
            }
        }
        if (!rc && s->opt->share && (s->narr || nfin)) reshare(s, slowest, nfin, now);
        if (!rc && run && run->progress && (s->events & 63) == 0 &&
            run->progress(run->progress_ctx, (double)s->done / (double)s->total))
            rc = topomap_i_fail(TOPOMAP_ECANCELED, "flow simulation cancelled");
    }
    if (!rc && s->done != s->total)
        rc = topomap_i_fail(TOPOMAP_EINVAL, "flow simulation stalled with %lld of %lld flows unfinished",
                            (long long)(s->total - s->done), (long long)s->total);
    return rc;
}

static void sim_free(sim *s)
{
    topomap_i_share_free(&s->sh);
    free(s->rptr);
    free(s->rlinks);
    free(s->bound);
    free(s->act);
    free(s->tfin);
    free(s->snext);
    free(s->sprev);
    free(s->fhead);
    free(s->dfs);
    free(s->arr_f);
    free(s->umark);
    topomap_i_iheap_free(&s->tq);
    topomap_i_iheap_free(&s->fq);
    free(s->old_rate);
    free(s->fq_key);
    free(s->fin_inst);
    free(s->starts);
    free(s->gptr);
    free(s->inptr);
    free(s->gflows);
    free(s->inflows);
    free(s->rstage);
    free(s->rleft);
    free(s->out_pos);
    free(s->in_pos);
    free(s->ubuf);
}

/* stage_end and makespan from the finish times. */
static void summarize(const sim *s, topomap_flowsim_result *res)
{
    double prev = 0, span = 0;
    for (int32_t g = 0; g < s->G; g++) res->stage_end[g] = -INFINITY;
    for (int64_t inst = 0; inst < s->total; inst++) {
        int32_t f = (int32_t)(inst % s->F), g = (int32_t)(inst / s->F) * s->S + s->fl->stage[f];
        res->stage_end[g] = fmax(res->stage_end[g], s->finish[inst]);
    }
    for (int32_t g = 0; g < s->G; g++) {
        if (isinf(res->stage_end[g])) res->stage_end[g] = prev;
        prev = res->stage_end[g];
        span = fmax(span, prev);
    }
    res->makespan = span;
}

int topomap_flowsim(const topomap_machine *m, const topomap_flows *flows, const topomap_flowsim_options *opt,
                    const topomap_run_options *run, topomap_flowsim_result *res)
{
    int rc = validate(m, flows, opt);
    if (rc) return rc;
    sim s = {.fl = flows, .opt = opt, .F = (int32_t)flows->nflows, .S = flows->nstages};
    s.G = opt->iterations * s.S;
    s.total = (int64_t)opt->iterations * s.F;
    s.finish = res->finish;
    for (int64_t i = 0; i < s.total; i++) s.finish[i] = -1;
    rc = build_routes(&s, m, res->link_bytes);
    if (!rc) rc = build_groups(&s);
    if (!rc) rc = topomap_i_share_init(&s.sh, &s.routes);
    if (!rc) {
        s.ubuf = malloc(((size_t)s.F + 1) * sizeof *s.ubuf);
        s.old_rate = malloc(((size_t)s.F + 1) * sizeof *s.old_rate);
        s.fq_key = malloc(((size_t)s.F + 1) * sizeof *s.fq_key);
        s.dfs = malloc(((size_t)s.F + 1) * sizeof *s.dfs);
        s.fhead = malloc(((size_t)s.F + 1) * sizeof *s.fhead);
        s.umark = calloc((size_t)s.F + 1, sizeof *s.umark);
        s.fq.max = 1;
        s.free_slot = -1;
        if (!s.ubuf || !s.old_rate || !s.fq_key || !s.dfs || !s.fhead || !s.umark || topomap_i_iheap_reserve(&s.fq, (int64_t)s.F + 1))
            rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the flow simulator");
        else
            for (int32_t f = 0; f < s.F; f++) s.fhead[f] = -1;
    }
    if (!rc) rc = run_events(&s, run);
    if (!rc) {
        summarize(&s, res);
        res->events = s.events;
        res->recomputes = s.recomputes;
    }
    sim_free(&s);
    return rc;
}

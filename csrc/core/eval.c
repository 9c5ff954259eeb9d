/* The evaluator: every metric, in one full pass or incrementally
   (DESIGN.md §3).

   Incremental state: per-link load and message count, the sum and sum of
   squares of congestion over non-zero links, their number, a max tree over
   congestion and a histogram of hop counts.  A move or swap removes the
   moved processes' messages and adds them back at their new places, so it
   costs O(degree x route length x log links).  try_* runs the same code with
   a journal of every overwritten value and rolls it back, so "what if" and
   "do it" can never disagree.  A link whose message count returns to 0 gets
   load exactly 0, so round-off never invents a non-zero link.

   TOPOMAP_EVAL_DISTANCE_ONLY keeps the distance sums alone (qap, bytes,
   messages, edge cut): a message update is one distance lookup and a try
   restores the saved sums, so no journal is needed.  Local searches on J
   (the hierarchy mapper) run an order of magnitude faster that way.

   Both modes take the routes, distances and levels between nodes from a
   table kept per evaluator (eval_pairs.h): a search re-routes the same node
   pairs over and over.  With shares (eval_shares.c), a distance-only
   search judges a try by its change of J without a try at all. */
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include "topomap/error.h"
#include "topomap/eval.h"
#include "eval_deltas.h"
#include "eval_internal.h"
#include "sorted.h"
#ifdef _OPENMP
#include <omp.h>
#endif

static const double unit_weights[4] = {1.0, 1.0, 1.0, 1.0};

static int check_mapping(const topomap_machine *m, const topomap_pattern *p, const int32_t *pe_of)
{
    int32_t npes = topomap_machine_npes(m);
    for (int32_t i = 0; i < p->n; i++)
        if (pe_of[i] < TOPOMAP_UNPLACED || pe_of[i] >= npes)
            return topomap_i_fail(TOPOMAP_EINVAL, "process %d is mapped to PE %d, outside [0, %d) (or -1: unplaced)",
                                  (int)i, (int)pe_of[i], (int)npes);
    return TOPOMAP_OK;
}

static int check_weights(const double *w)
{
    for (int i = 0; i < 4; i++)
        if (!(w[i] >= 0) || !isfinite(w[i]))
            return topomap_i_fail(TOPOMAP_EINVAL, "hybrid weight %d is %g (must be >= 0 and finite)", i, w[i]);
    return TOPOMAP_OK;
}

/* One pass over the messages of processes lo..hi-1.  `count` and `hist` may be NULL. */
static void accumulate(const topomap_machine *m, const topomap_pattern *p, const double *msgs, int32_t lo, int32_t hi,
                       const int32_t *pe_of, double *load, int64_t *count, double *level_bytes, int64_t *hist,
                       int32_t *route_buf, sums *out, int32_t *max_dil)
{
    /* Sums stay in locals: threads' `out` structs may share a cache line. */
    sums s = {0};
    int32_t maxd = 0;
    for (int32_t i = lo; i < hi; i++) {
        int32_t a = pe_of[i], last_nb = -1, last_h = 0, last_level = 0;
        if (a < 0) continue;
        int32_t na = topomap_machine_node_of(m, a);
        double last_dist = 0;
        for (int64_t k = p->indptr[i]; k < p->indptr[i + 1]; k++) {
            double w = p->bytes[k], dist;
            int32_t b = pe_of[p->indices[k]], level, h;
            if (b < 0) continue;
            int32_t nb = topomap_machine_node_of(m, b);
            /* Neighbours sorted by rank often share a node: between different
               nodes the route, distance and level depend on the nodes only,
               so the last inter-node route (still in route_buf) is reused. */
            if (nb != na && nb == last_nb) {
                h = last_h;
                dist = last_dist;
                level = last_level;
            } else {
                h = topomap_machine_pair(m, a, b, route_buf, &dist, &level);
                if (h < 0) { /* only explicit-route machines lack routes */
                    if (!s.unrouted++) s.bad_p = i, s.bad_q = p->indices[k];
                    continue;
                }
                if (nb != na) {
                    last_nb = nb;
                    last_h = h;
                    last_dist = dist;
                    last_level = level;
                }
            }
            double c = msgs ? msgs[k] : 1.0;
            s.total_bytes += w;
            s.messages++;
            s.msgs += c;
            level_bytes[level] += w;
            s.qap += w * dist;
            if (h) { /* different nodes: every route between two nodes has a link */
                s.edge_cut += w;
                s.cut_messages++;
                s.cut_msgs += c;
                for (int32_t r = 0; r < h; r++) load[route_buf[r]] += w;
                if (count)
                    for (int32_t r = 0; r < h; r++) count[route_buf[r]]++;
                s.hop_bytes += w * h;
                s.dilation += h;
                if (h > maxd) maxd = h;
            }
            if (hist) hist[h]++;
        }
    }
    *out = s;
    *max_dil = maxd;
}

static int fail_unrouted(const topomap_machine *m, const sums *s, const int32_t *pe_of)
{
    int32_t a = pe_of[s->bad_p], b = pe_of[s->bad_q];
    return topomap_i_fail(TOPOMAP_EINVAL,
                          "the machine has no route from node %d to node %d (process %d on PE %d -> process %d on PE %d; "
                          "%lld messages lack a route)",
                          (int)topomap_machine_node_of(m, a), (int)topomap_machine_node_of(m, b), (int)s->bad_p, (int)a,
                          (int)s->bad_q, (int)b, (long long)s->unrouted);
}

static void finish(const sums *s, int32_t max_dil, double mc, double avg, double var, int64_t nz,
                   const double *w, topomap_metrics *out)
{
    out->hop_bytes = s->hop_bytes;
    out->dilation = s->dilation;
    out->max_dilation = max_dil;
    out->messages = s->messages;
    out->total_bytes = s->total_bytes;
    out->qap = s->qap;
    out->max_congestion = mc;
    out->nz_links = nz;
    out->nz_congestion_avg = avg;
    out->nz_congestion_var = var > 0 ? var : 0.0; /* running sums can round below 0 */
    out->edge_cut = s->edge_cut;
    out->edge_cut_messages = s->cut_messages;
    out->msgs = s->msgs;
    out->cut_msgs = s->cut_msgs;
    out->hybrid = w[0] * out->hop_bytes + w[1] * mc + w[2] * avg + w[3] * out->nz_congestion_var;
}

/* First process of chunk t (t = T: one past the last) when the messages are
   cut into T nearly equal chunks. */
static int32_t chunk_start(const topomap_pattern *p, int t, int T)
{
    if (t == 0) return 0;
    if (t == T) return p->n;
    return topomap_i_lower_bound_i64(p->indptr, p->n, p->indptr[p->n] / T * t);
}

/* Threads split the messages; each sums into its own link and level arrays,
   added up in thread order afterwards.  Loads are exact for integral byte
   counts below 2^53; otherwise the last bits may depend on the thread count
   (OMP_NUM_THREADS). */
int topomap_evaluate(const topomap_machine *m, const topomap_pattern *p, const int32_t *pe_of,
                     const double *weights, topomap_metrics *out, topomap_eval_detail *detail)
{
    return topomap_evaluate_msgs(m, p, NULL, pe_of, weights, out, detail);
}

int topomap_evaluate_msgs(const topomap_machine *m, const topomap_pattern *p, const double *msgs,
                          const int32_t *pe_of, const double *weights, topomap_metrics *out,
                          topomap_eval_detail *detail)
{
    const double *w = weights ? weights : unit_weights;
    int rc = check_weights(w);
    if (!rc) rc = check_mapping(m, p, pe_of);
    if (rc) return rc;
    int32_t nlinks = topomap_machine_nlinks(m), nlev = topomap_machine_nlevels(m);
    size_t rlen = (size_t)topomap_machine_max_route(m) + 1;
    int T = 1;
#ifdef _OPENMP
    if (p->indptr[p->n] >= (1 << 16)) T = omp_get_max_threads();
    if (T > 64) T = 64;
#endif
    double *load = detail && detail->link_load ? detail->link_load : malloc(((size_t)nlinks + 1) * sizeof *load);
    double *lev = detail && detail->level_bytes ? detail->level_bytes : malloc((size_t)nlev * sizeof *lev);
    double *xload = calloc((size_t)(T - 1) * (size_t)nlinks + 1, sizeof *xload);
    double *xlev = calloc((size_t)(T - 1) * (size_t)nlev + 1, sizeof *xlev);
    int32_t *buf = malloc(rlen * (size_t)T * sizeof *buf);
    sums part[64];
    int32_t maxd[64];
    if (!load || !lev || !xload || !xlev || !buf) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory evaluating %d links", (int)nlinks);
        goto cleanup;
    }
    memset(load, 0, (size_t)nlinks * sizeof *load);
    memset(lev, 0, (size_t)nlev * sizeof *lev);
#ifdef _OPENMP
#pragma omp parallel num_threads(T)
#endif
    {
        int t = 0;
#ifdef _OPENMP
        t = omp_get_thread_num();
#endif
        accumulate(m, p, msgs, chunk_start(p, t, T), chunk_start(p, t + 1, T), pe_of, t ? xload + (size_t)(t - 1) * nlinks : load, NULL,
                   t ? xlev + (size_t)(t - 1) * nlev : lev, NULL, buf + rlen * (size_t)t, &part[t], &maxd[t]);
    }
    sums s = part[0];
    int32_t max_dil = maxd[0];
    for (int t = 1; t < T; t++) {
        const double *xl = xload + (size_t)(t - 1) * nlinks, *xv = xlev + (size_t)(t - 1) * nlev;
        for (int32_t l = 0; l < nlinks; l++) load[l] += xl[l];
        for (int32_t v = 0; v < nlev; v++) lev[v] += xv[v];
        s.hop_bytes += part[t].hop_bytes;
        s.dilation += part[t].dilation;
        s.qap += part[t].qap;
        s.total_bytes += part[t].total_bytes;
        s.edge_cut += part[t].edge_cut;
        s.messages += part[t].messages;
        s.cut_messages += part[t].cut_messages;
        s.msgs += part[t].msgs;
        s.cut_msgs += part[t].cut_msgs;
        if (!s.unrouted && part[t].unrouted) s.bad_p = part[t].bad_p, s.bad_q = part[t].bad_q;
        s.unrouted += part[t].unrouted;
        if (maxd[t] > max_dil) max_dil = maxd[t];
    }
    if (s.unrouted) {
        rc = fail_unrouted(m, &s, pe_of);
        goto cleanup;
    }
    /* Two passes over the links: the exact mean first, then the variance. */
    double s1 = 0, mc = 0;
    int64_t nz = 0;
    for (int32_t l = 0; l < nlinks; l++)
        if (load[l] > 0) {
            double c = load[l] / topomap_machine_link_capacity(m, l);
            s1 += c;
            nz++;
            if (c > mc) mc = c;
        }
    double mean = nz ? s1 / (double)nz : 0.0, dev2 = 0;
    for (int32_t l = 0; l < nlinks; l++)
        if (load[l] > 0) {
            double d = load[l] / topomap_machine_link_capacity(m, l) - mean;
            dev2 += d * d;
        }
    finish(&s, max_dil, mc, mean, nz ? dev2 / (double)nz : 0.0, nz, w, out);
cleanup:
    if (!(detail && detail->link_load)) free(load);
    if (!(detail && detail->level_bytes)) free(lev);
    free(xload);
    free(xlev);
    free(buf);
    return rc;
}

/* ---------------------------------------------------------------- incremental */

static void seg_set(topomap_eval *e, int32_t l, double v)
{
    int64_t i = (int64_t)e->seg_size + l;
    e->seg[i] = v;
    for (i >>= 1; i >= 1; i >>= 1) {
        double a = e->seg[2 * i], b = e->seg[2 * i + 1];
        double mx = a > b ? a : b;
        if (e->seg[i] == mx) break;
        e->seg[i] = mx;
    }
}

static int journal_push(topomap_eval *e, int32_t kind, int32_t index, double value, int64_t count)
{
    if (e->jlen == e->jcap) {
        int64_t cap = e->jcap ? 2 * e->jcap : 256;
        journal_entry *j = realloc(e->journal, (size_t)cap * sizeof *j);
        if (!j) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory in the evaluator journal");
        e->journal = j;
        e->jcap = cap;
    }
    e->journal[e->jlen++] = (journal_entry){kind, index, value, count};
    return TOPOMAP_OK;
}

static int link_add(topomap_eval *e, int32_t l, double dw, int64_t dc)
{
    int rc = journal_push(e, 0, l, e->load[l], e->count[l]);
    if (rc) return rc;
    double cap = topomap_machine_link_capacity(e->m, l);
    if (e->count[l]) {
        double c = e->load[l] / cap;
        e->s1 -= c;
        e->s2 -= c * c;
        e->nz--;
    }
    e->count[l] += dc;
    e->load[l] = e->count[l] ? e->load[l] + dw : 0.0;
    double c = e->count[l] ? e->load[l] / cap : 0.0;
    if (e->count[l]) {
        e->s1 += c;
        e->s2 += c * c;
        e->nz++;
    }
    seg_set(e, l, c);
    return TOPOMAP_OK;
}

static int hist_add(topomap_eval *e, int32_t h, int64_t d)
{
    int rc = journal_push(e, 1, h, 0, e->hist[h]);
    if (rc) return rc;
    e->hist[h] += d;
    return TOPOMAP_OK;
}

static int level_add(topomap_eval *e, int32_t lv, double w)
{
    int rc = journal_push(e, 2, lv, e->level_bytes[lv], 0);
    if (rc) return rc;
    e->level_bytes[lv] += w;
    return TOPOMAP_OK;
}

/* The distance sums of one entry a -> b (both placed) of sw bytes and sc messages. */
static inline void distance_update(topomap_eval *e, sums *s, int32_t a, int32_t b, double sw, double sc, int sign)
{
    const topomap_machine *m = e->m;
    int32_t na = topomap_machine_node_of(m, a), nb = topomap_machine_node_of(m, b);
    double d = na == nb ? topomap_machine_distance(m, a, b) : topomap_i_pairs_distance(&e->pairs, m, a, b, na, nb);
    s->qap += sw * d;
    s->total_bytes += sw;
    s->messages += sign;
    s->msgs += sc;
    if (na != nb) {
        s->edge_cut += sw;
        s->cut_messages += sign;
        s->cut_msgs += sc;
    }
}

/* The route of PE a -> PE b: its hops (*h), links (*route), distance and
   level, and whether it leaves the node (*apart); fails when there is none. */
static int message_route(topomap_eval *e, int32_t a, int32_t b, int32_t *h, const int32_t **route, double *dist,
                         int32_t *level, int *apart)
{
    const topomap_machine *m = e->m;
    int32_t na = topomap_machine_node_of(m, a), nb = topomap_machine_node_of(m, b);
    *route = e->route_buf;
    *h = na == nb ? topomap_machine_pair(m, a, b, e->route_buf, dist, level)
                  : topomap_i_pairs_route(&e->pairs, m, a, b, na, nb, e->route_buf, route, dist, level);
    *apart = na != nb;
    if (*h < 0)
        return topomap_i_fail(TOPOMAP_EINVAL, "the machine has no route from node %d to node %d (PE %d -> PE %d)",
                              (int)na, (int)nb, (int)a, (int)b);
    return TOPOMAP_OK;
}

/* The sums of one entry of sw bytes and sc messages (< 0: removed) on a
   route of h hops. */
static void entry_sums(sums *s, double sw, double sc, int sign, int32_t h, double dist, int apart)
{
    s->qap += sw * dist;
    s->total_bytes += sw;
    s->messages += sign;
    s->msgs += sc;
    if (apart) {
        s->edge_cut += sw;
        s->cut_messages += sign;
        s->cut_msgs += sc;
        s->hop_bytes += sw * h;
        s->dilation += sign * h;
    }
}

/* Add (sign +1) or remove (sign -1) one entry a -> b of w bytes and c
   messages; an entry with an unplaced end is not counted. */
static int message_update(topomap_eval *e, int32_t a, int32_t b, double w, double c, int sign)
{
    if (a < 0 || b < 0) return TOPOMAP_OK;
    if (e->distance_only) {
        distance_update(e, &e->s, a, b, sign * w, sign * c, sign);
        return TOPOMAP_OK;
    }
    double sw = sign * w, dist;
    const int32_t *route;
    int32_t h, level;
    int apart;
    int rc = message_route(e, a, b, &h, &route, &dist, &level, &apart); /* fails only when adding */
    if (!rc) rc = level_add(e, level, sw);
    if (rc) return rc;
    entry_sums(&e->s, sw, sign * c, sign, h, dist, apart);
    for (int32_t r = 0; apart && r < h && !rc; r++) rc = link_add(e, route[r], sw, sign);
    if (rc) return rc;
    return hist_add(e, h, sign);
}

static void rollback(topomap_eval *e)
{
    for (int64_t i = e->jlen - 1; i >= 0; i--) {
        journal_entry *j = &e->journal[i];
        if (j->kind == 0) {
            e->load[j->index] = j->value;
            e->count[j->index] = j->count;
            seg_set(e, j->index, j->count ? j->value / topomap_machine_link_capacity(e->m, j->index) : 0.0);
        } else if (j->kind == 1) {
            e->hist[j->index] = j->count;
        } else {
            e->level_bytes[j->index] = j->value;
        }
    }
    e->jlen = 0;
}

/* The distance-only state: the sums of every message with both ends placed. */
static int create_distance_only(topomap_eval *e)
{
    const topomap_pattern *p = &e->p;
    for (int32_t i = 0; i < p->n; i++) {
        if (e->pe_of[i] < 0) continue;
        for (int64_t k = p->indptr[i]; k < p->indptr[i + 1]; k++)
            if (e->pe_of[p->indices[k]] >= 0)
                distance_update(e, &e->s, e->pe_of[i], e->pe_of[p->indices[k]], p->bytes[k], 1.0, 1);
    }
    return TOPOMAP_OK;
}

int topomap_eval_create(const topomap_machine *m, const topomap_pattern *p, const int32_t *pe_of,
                        const double *weights, topomap_eval **out)
{
    return topomap_eval_create_flags(m, p, pe_of, weights, 0, out);
}

int topomap_eval_create_flags(const topomap_machine *m, const topomap_pattern *p, const int32_t *pe_of,
                              const double *weights, unsigned flags, topomap_eval **out)
{
    const double *w = weights ? weights : unit_weights;
    int rc = check_weights(w);
    if (!rc) rc = check_mapping(m, p, pe_of);
    if (rc) return rc;
    if (flags & ~(unsigned)TOPOMAP_EVAL_DISTANCE_ONLY)
        return topomap_i_fail(TOPOMAP_EINVAL, "unknown evaluator flags 0x%x", flags);
    topomap_eval *e = calloc(1, sizeof *e);
    if (!e) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
    int64_t nnz = p->indptr[p->n];
    e->m = m;
    e->p = *p;
    e->distance_only = (flags & TOPOMAP_EVAL_DISTANCE_ONLY) != 0;
    memcpy(e->w, w, sizeof e->w);
    if (e->distance_only) {
        e->t_indptr = malloc(((size_t)p->n + 1) * sizeof *e->t_indptr);
        e->t_indices = malloc((size_t)nnz * sizeof *e->t_indices + 1);
        e->t_bytes = malloc((size_t)nnz * sizeof *e->t_bytes + 1);
        e->pe_of = malloc((size_t)p->n * sizeof *e->pe_of);
        if (!e->t_indptr || !e->t_indices || !e->t_bytes || !e->pe_of) {
            rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory building the evaluator");
            goto cleanup;
        }
        memcpy(e->pe_of, pe_of, (size_t)p->n * sizeof *pe_of);
        rc = topomap_pattern_transpose(p, e->t_indptr, e->t_indices, e->t_bytes);
        if (!rc) rc = create_distance_only(e);
        if (rc) goto cleanup;
        *out = e;
        return TOPOMAP_OK;
    }
    e->nlinks = topomap_machine_nlinks(m);
    e->nlevels = topomap_machine_nlevels(m);
    e->max_route = topomap_machine_max_route(m);
    e->seg_size = 1;
    while (e->seg_size < e->nlinks) e->seg_size *= 2;
    e->t_indptr = malloc(((size_t)p->n + 1) * sizeof *e->t_indptr);
    e->t_indices = malloc((size_t)nnz * sizeof *e->t_indices + 1);
    e->t_bytes = malloc((size_t)nnz * sizeof *e->t_bytes + 1);
    e->pe_of = malloc((size_t)p->n * sizeof *e->pe_of);
    e->load = calloc((size_t)e->nlinks + 1, sizeof *e->load);
    e->count = calloc((size_t)e->nlinks + 1, sizeof *e->count);
    e->seg = calloc(2 * (size_t)e->seg_size, sizeof *e->seg);
    e->hist = calloc((size_t)e->max_route + 1, sizeof *e->hist);
    e->level_bytes = calloc((size_t)e->nlevels, sizeof *e->level_bytes);
    e->route_buf = malloc(((size_t)e->max_route + 1) * sizeof *e->route_buf);
    if (!e->t_indptr || !e->t_indices || !e->t_bytes || !e->pe_of || !e->load || !e->count || !e->seg ||
        !e->hist || !e->level_bytes || !e->route_buf) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory building the evaluator");
        goto cleanup;
    }
    rc = topomap_pattern_transpose(p, e->t_indptr, e->t_indices, e->t_bytes);
    if (rc) goto cleanup;
    memcpy(e->pe_of, pe_of, (size_t)p->n * sizeof *pe_of);
    int32_t max_dil;
    accumulate(m, p, NULL, 0, p->n, pe_of, e->load, e->count, e->level_bytes, e->hist, e->route_buf, &e->s, &max_dil);
    if (e->s.unrouted) {
        rc = fail_unrouted(m, &e->s, pe_of);
        goto cleanup;
    }
    for (int32_t l = 0; l < e->nlinks; l++)
        if (e->count[l]) {
            double c = e->load[l] / topomap_machine_link_capacity(m, l);
            e->s1 += c;
            e->s2 += c * c;
            e->nz++;
            e->seg[e->seg_size + l] = c;
        }
    for (int64_t i = e->seg_size - 1; i >= 1; i--)
        e->seg[i] = e->seg[2 * i] > e->seg[2 * i + 1] ? e->seg[2 * i] : e->seg[2 * i + 1];
    *out = e;
    return TOPOMAP_OK;
cleanup:
    topomap_eval_destroy(e);
    return rc;
}

void topomap_eval_destroy(topomap_eval *e)
{
    if (!e) return;
    free(e->t_indptr);
    free(e->t_indices);
    free(e->t_bytes);
    free(e->t_msgs);
    free(e->pe_of);
    free(e->load);
    free(e->count);
    free(e->seg);
    free(e->hist);
    free(e->level_bytes);
    free(e->route_buf);
    topomap_i_pairs_free(&e->pairs);
    topomap_i_link_deltas_free(&e->placing);
    free(e->journal);
    topomap_i_eval_shares_free(e);
    free(e);
}

int topomap_eval_set_msgs(topomap_eval *e, const double *msgs)
{
    const topomap_pattern *p = &e->p;
    int64_t nnz = p->indptr[p->n];
    int64_t *ip = NULL;
    int32_t *ix = NULL;
    double *t = NULL;
    int rc = TOPOMAP_OK;
    if (msgs) { /* the transpose orders entries as it did for the bytes: the same permutation */
        topomap_pattern counts = {p->n, p->indptr, p->indices, msgs};
        ip = malloc(((size_t)p->n + 1) * sizeof *ip);
        ix = malloc((size_t)nnz * sizeof *ix + 1);
        t = malloc((size_t)nnz * sizeof *t + 1);
        rc = ip && ix && t ? topomap_pattern_transpose(&counts, ip, ix, t)
                           : topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the message counts");
        if (rc) goto cleanup;
    }
    double total = 0, cut = 0;
    for (int32_t i = 0; i < p->n; i++) {
        int32_t a = e->pe_of[i];
        if (a < 0) continue;
        for (int64_t k = p->indptr[i]; k < p->indptr[i + 1]; k++) {
            int32_t b = e->pe_of[p->indices[k]];
            double c = msgs ? msgs[k] : 1.0;
            if (b < 0) continue;
            total += c;
            if (topomap_machine_node_of(e->m, a) != topomap_machine_node_of(e->m, b)) cut += c;
        }
    }
    free(e->t_msgs);
    e->t_msgs = t;
    t = NULL;
    e->msgs = msgs;
    e->s.msgs = total;
    e->s.cut_msgs = cut;
cleanup:
    free(ip);
    free(ix);
    free(t);
    return rc;
}

/* The metrics of sums s with link sums s1, s2 over nz loaded links, maximum
   congestion mc, and messages up to `longest` hops besides those of the
   histogram. */
static void state_metrics(const topomap_eval *e, const sums *s, int32_t longest, double mc, double s1, double s2,
                          int64_t nz, topomap_metrics *out)
{
    int32_t max_dil = e->max_route;
    while (max_dil > 0 && e->hist[max_dil] == 0) max_dil--;
    if (longest > max_dil) max_dil = longest;
    double avg = nz ? s1 / (double)nz : 0.0;
    finish(s, max_dil, mc, avg, nz ? s2 / (double)nz - avg * avg : 0.0, nz, e->w, out);
}

void topomap_eval_metrics(const topomap_eval *e, topomap_metrics *out)
{
    if (e->distance_only) {
        *out = (topomap_metrics){.hop_bytes = NAN, .dilation = NAN, .max_dilation = -1, .messages = e->s.messages,
                                 .total_bytes = e->s.total_bytes, .qap = e->s.qap, .max_congestion = NAN,
                                 .nz_links = -1, .nz_congestion_avg = NAN, .nz_congestion_var = NAN, .hybrid = NAN,
                                 .edge_cut = e->s.edge_cut, .edge_cut_messages = e->s.cut_messages,
                                 .msgs = e->s.msgs, .cut_msgs = e->s.cut_msgs};
        return;
    }
    state_metrics(e, &e->s, 0, e->nlinks ? e->seg[1] : 0.0, e->s1, e->s2, e->nz, out);
}

const int32_t *topomap_eval_mapping(const topomap_eval *e) { return e->pe_of; }
const double *topomap_eval_link_loads(const topomap_eval *e) { return e->load; }
const double *topomap_eval_level_bytes(const topomap_eval *e) { return e->level_bytes; }

typedef int (*moved_message)(topomap_eval *e, int32_t a, int32_t b, int32_t new_a, int32_t new_b, double w,
                             double c, void *ctx);

/* f(e, a, b, new a, new b, bytes, messages, ctx) for every entry a -> b
   (PEs) with an end that moves if p sat on new_p and q (or -1) on new_q;
   entries between p and q once, from p's side. */
static inline int each_moved(topomap_eval *e, int32_t p, int32_t new_p, int32_t q, int32_t new_q, moved_message f,
                             void *ctx)
{
    const topomap_pattern *pt = &e->p;
    int rc = TOPOMAP_OK;
#define NEWPE(x) ((x) == p ? new_p : (x) == q ? new_q : e->pe_of[x])
    for (int side = 0; side < 2 && !rc; side++) {
        int32_t x = side == 0 ? p : q;
        if (x < 0) break;
        for (int64_t k = pt->indptr[x]; k < pt->indptr[x + 1] && !rc; k++) {
            int32_t y = pt->indices[k];
            if (side == 1 && y == p) continue;
            rc = f(e, e->pe_of[x], e->pe_of[y], NEWPE(x), NEWPE(y), pt->bytes[k], e->msgs ? e->msgs[k] : 1.0, ctx);
        }
        for (int64_t k = e->t_indptr[x]; k < e->t_indptr[x + 1] && !rc; k++) {
            int32_t y = e->t_indices[k];
            if (side == 1 && y == p) continue;
            rc = f(e, e->pe_of[y], e->pe_of[x], NEWPE(y), NEWPE(x), e->t_bytes[k], e->t_msgs ? e->t_msgs[k] : 1.0, ctx);
        }
    }
#undef NEWPE
    return rc;
}

static int move_message(topomap_eval *e, int32_t a, int32_t b, int32_t new_a, int32_t new_b, double w, double c,
                        void *ctx)
{
    (void)ctx;
    int rc = message_update(e, a, b, w, c, -1);
    return rc ? rc : message_update(e, new_a, new_b, w, c, +1);
}

/* Move the messages of p and q as if p sat on new_p and q on new_q (q = -1
   for a single move). */
static int relocate(topomap_eval *e, int32_t p, int32_t new_p, int32_t q, int32_t new_q)
{
    return each_moved(e, p, new_p, q, new_q, move_message, NULL);
}

int topomap_i_link_deltas_init(topomap_i_link_deltas *d, int32_t nlinks)
{
    d->n = 0;
    d->cap = 64;
    d->pair_w = NULL;
    d->pair_seen = NULL;
    d->pairs = NULL;
    d->npairs = 0;
    d->where = malloc(((size_t)nlinks + 1) * sizeof *d->where);
    d->links = malloc((size_t)d->cap * sizeof *d->links);
    d->dw = malloc((size_t)d->cap * sizeof *d->dw);
    if (!d->where || !d->links || !d->dw) {
        topomap_i_link_deltas_free(d);
        return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the link deltas of %d links", (int)nlinks);
    }
    for (int32_t l = 0; l < nlinks; l++) d->where[l] = -1;
    return TOPOMAP_OK;
}

static void pair_sums_free(topomap_i_link_deltas *d)
{
    free(d->pair_w);
    free(d->pair_seen);
    free(d->pairs);
    d->pair_w = NULL;
    d->pair_seen = NULL;
    d->pairs = NULL;
}

void topomap_i_link_deltas_free(topomap_i_link_deltas *d)
{
    free(d->where);
    free(d->links);
    free(d->dw);
    pair_sums_free(d);
    d->where = d->links = NULL;
    d->dw = NULL;
}

/* Add w bytes (< 0: remove) along the links of a route of h links. */
static int delta_links(topomap_i_link_deltas *d, const int32_t *route, int32_t h, double w)
{
    if (d->n + h > d->cap) {
        int64_t cap = 2 * (d->n + h);
        int32_t *links = realloc(d->links, (size_t)cap * sizeof *links);
        if (links) d->links = links;
        double *dw = links ? realloc(d->dw, (size_t)cap * sizeof *dw) : NULL;
        if (!dw) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %lld link deltas", (long long)cap);
        d->dw = dw;
        d->cap = cap;
    }
    for (int32_t r = 0; r < h; r++) {
        int32_t l = route[r];
        if (d->where[l] < 0) {
            d->where[l] = (int32_t)d->n;
            d->links[d->n] = l;
            d->dw[d->n++] = 0;
        }
        d->dw[d->where[l]] += w;
    }
    return TOPOMAP_OK;
}

/* Add w bytes (< 0: remove) along the route of one message a -> b: into the
   pair's sum when the pair has slots (and d room for the sums), else at once. */
static int delta_route(topomap_eval *e, int32_t a, int32_t b, double w, topomap_i_link_deltas *d)
{
    if (a < 0 || b < 0) return TOPOMAP_OK;
    int32_t na = topomap_machine_node_of(e->m, a), nb = topomap_machine_node_of(e->m, b);
    if (na == nb) return TOPOMAP_OK;
    int64_t at = topomap_i_pairs_index(&e->pairs, na, nb);
    if (at < 0 || e->pairs.pair[at].start < 0) { /* the route is not kept (yet) */
        const int32_t *route;
        double dist;
        int32_t level, h = topomap_i_pairs_route(&e->pairs, e->m, a, b, na, nb, e->route_buf, &route, &dist, &level);
        if (h < 0)
            return topomap_i_fail(TOPOMAP_EINVAL, "the machine has no route from node %d to node %d (PE %d -> PE %d)",
                                  (int)na, (int)nb, (int)a, (int)b);
        at = topomap_i_pairs_index(&e->pairs, na, nb);
        if (at < 0 || e->pairs.pair[at].start < 0) return delta_links(d, route, h, w);
    }
    if (!d->pair_w) return delta_links(d, e->pairs.links + e->pairs.pair[at].start, e->pairs.pair[at].hops, w);
    int32_t k = e->pairs.slot[na] * TOPOMAP_I_PAIR_SLOTS + e->pairs.slot[nb];
    if (!d->pair_seen[k]) {
        d->pair_seen[k] = 1;
        d->pairs[d->npairs++] = k;
    }
    d->pair_w[k] += w;
    return TOPOMAP_OK;
}

static int delta_message(topomap_eval *e, int32_t a, int32_t b, int32_t new_a, int32_t new_b, double w, double c,
                         void *d)
{
    (void)c;
    int rc = delta_route(e, a, b, -w, d);
    return rc ? rc : delta_route(e, new_a, new_b, w, d);
}

int topomap_i_eval_link_deltas(topomap_eval *e, int32_t p, int32_t new_p, int32_t q, int32_t new_q,
                               topomap_i_link_deltas *d)
{
    if (e->distance_only) return topomap_i_fail(TOPOMAP_EINVAL, "link deltas need an evaluator with link loads");
    size_t npairs = (size_t)TOPOMAP_I_PAIR_SLOTS * TOPOMAP_I_PAIR_SLOTS;
    if (!d->pair_w && !e->pairs.off) { /* without memory for the sums, every message goes at once */
        d->pair_w = calloc(npairs, sizeof *d->pair_w);
        d->pair_seen = calloc(npairs, sizeof *d->pair_seen);
        d->pairs = malloc(npairs * sizeof *d->pairs);
        if (!d->pair_w || !d->pair_seen || !d->pairs) pair_sums_free(d);
    }
    d->n = 0;
    d->npairs = 0;
    int rc = each_moved(e, p, new_p, q, new_q, delta_message, d);
    /* a pair's route is kept once it is known, whatever the table did since */
    for (int32_t i = 0; i < d->npairs; i++) {
        int32_t k = d->pairs[i];
        int64_t at = (int64_t)(k / TOPOMAP_I_PAIR_SLOTS) * e->pairs.cap + k % TOPOMAP_I_PAIR_SLOTS;
        if (!rc && d->pair_w[k] != 0)
            rc = delta_links(d, e->pairs.links + e->pairs.pair[at].start, e->pairs.pair[at].hops, d->pair_w[k]);
        d->pair_w[k] = 0;
        d->pair_seen[k] = 0;
    }
    for (int64_t i = 0; i < d->n; i++) d->where[d->links[i]] = -1;
    return rc;
}

static int check_process(const topomap_eval *e, int32_t p)
{
    if (p < 0 || p >= e->p.n)
        return topomap_i_fail(TOPOMAP_EINVAL, "process %d is out of range [0, %d)", (int)p, (int)e->p.n);
    return TOPOMAP_OK;
}

static int check_pe(const topomap_eval *e, int32_t pe)
{
    if (pe < TOPOMAP_UNPLACED || pe >= topomap_machine_npes(e->m))
        return topomap_i_fail(TOPOMAP_EINVAL, "PE %d is out of range [0, %d) (or -1: unplace)", (int)pe,
                              (int)topomap_machine_npes(e->m));
    return TOPOMAP_OK;
}

/* Apply (journal == 0) or try (journal == 1) a move or swap. */
static int change(topomap_eval *e, int32_t p, int32_t new_p, int32_t q, int32_t new_q, int journal,
                  topomap_metrics *after)
{
    sums saved = e->s;
    double s1 = e->s1, s2 = e->s2;
    int64_t nz = e->nz;
    /* Applying journals too: a move can fail half-way (no route on an
       explicit-route machine, or no memory for the journal) and must then
       leave the state untouched.  Applies are rare next to tries. */
    e->jlen = 0;
    int rc = relocate(e, p, new_p, q, new_q);
    if (!rc && after) topomap_eval_metrics(e, after);
    if (journal || rc) {
        rollback(e);
        e->s = saved;
        e->s1 = s1;
        e->s2 = s2;
        e->nz = nz;
    } else {
        e->pe_of[p] = new_p;
        if (q >= 0) e->pe_of[q] = new_q;
        if (e->share) {
            topomap_i_eval_reshare(e, p);
            if (q >= 0) topomap_i_eval_reshare(e, q);
        }
    }
    return rc;
}

/* Placing an unplaced process only adds messages: the sums of each, and
   load on the links of its route, gathered per link. */
typedef struct {
    sums s;
    int32_t longest;
} placed_sums;

static int place_message(topomap_eval *e, int32_t a, int32_t b, int32_t new_a, int32_t new_b, double w, double c,
                         void *ctx)
{
    (void)a;
    (void)b;
    if (new_a < 0 || new_b < 0) return TOPOMAP_OK;
    placed_sums *ps = ctx;
    double dist;
    const int32_t *route;
    int32_t h, level;
    int apart;
    int rc = message_route(e, new_a, new_b, &h, &route, &dist, &level, &apart);
    if (rc) return rc;
    entry_sums(&ps->s, w, c, 1, h, dist, apart);
    if (h > ps->longest) ps->longest = h;
    return apart ? delta_links(&e->placing, route, h, w) : TOPOMAP_OK;
}

/* try_move of an unplaced process: the metrics with its messages added,
   from the loads they add to the links they cross (loads only grow, so the
   maximum is the larger of the old one and theirs), without the journal,
   the max tree and the roll-back that a general try makes and undoes.
   Greedy mappers (PTRAM's Alg. 3.1) try every candidate node so. */
static int try_place(topomap_eval *e, int32_t p, int32_t pe, topomap_metrics *after)
{
    if (!e->placing.where) {
        int rc = topomap_i_link_deltas_init(&e->placing, e->nlinks);
        if (rc) return rc;
    }
    topomap_i_link_deltas *d = &e->placing;
    placed_sums ps = {e->s, 0};
    d->n = 0;
    int rc = each_moved(e, p, pe, -1, -1, place_message, &ps);
    double mc = e->nlinks ? e->seg[1] : 0.0, s1 = e->s1, s2 = e->s2;
    int64_t nz = e->nz;
    for (int64_t i = 0; i < d->n; i++) {
        int32_t l = d->links[i];
        double cap = topomap_machine_link_capacity(e->m, l), c = e->load[l] / cap;
        if (e->count[l]) {
            s1 -= c;
            s2 -= c * c;
        } else {
            nz++;
        }
        c = (e->load[l] + d->dw[i]) / cap;
        s1 += c;
        s2 += c * c;
        if (c > mc) mc = c;
        d->where[l] = -1;
    }
    if (!rc) state_metrics(e, &ps.s, ps.longest, mc, s1, s2, nz, after);
    return rc;
}

int topomap_eval_try_move(topomap_eval *e, int32_t p, int32_t pe, topomap_metrics *after)
{
    int rc = check_process(e, p);
    if (!rc) rc = check_pe(e, pe);
    if (rc) return rc;
    if (e->pe_of[p] < 0 && pe >= 0 && !e->distance_only && after) return try_place(e, p, pe, after);
    return change(e, p, pe, -1, -1, 1, after);
}

int topomap_eval_try_swap(topomap_eval *e, int32_t p, int32_t q, topomap_metrics *after)
{
    int rc = check_process(e, p);
    if (!rc) rc = check_process(e, q);
    if (rc) return rc;
    if (p == q) {
        topomap_eval_metrics(e, after);
        return TOPOMAP_OK;
    }
    return change(e, p, e->pe_of[q], q, e->pe_of[p], 1, after);
}

int topomap_eval_move(topomap_eval *e, int32_t p, int32_t pe)
{
    int rc = check_process(e, p);
    if (!rc) rc = check_pe(e, pe);
    if (rc) return rc;
    return change(e, p, pe, -1, -1, 0, NULL);
}

int topomap_eval_swap(topomap_eval *e, int32_t p, int32_t q)
{
    int rc = check_process(e, p);
    if (!rc) rc = check_process(e, q);
    if (rc || p == q) return rc;
    return change(e, p, e->pe_of[q], q, e->pe_of[p], 0, NULL);
}

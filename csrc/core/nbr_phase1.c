/* Phase 1 of Mirsadeghi, Traff, Balaji, Afsahi 2017 (note 002 s2, Alg. 1) for all ranks of a
   distributed graph topology, in synchronous Alg. 1 iterations.

   Instead of each rank's O(Delta^2) matrix M the simulator keeps the global common-
   neighbourhood count C = A A^T over the active edges (note 002 s8): C[p][q] =
   |O_a(p) & O_a(q)|, counted once by bitset popcounts (dense graphs) or pairs of in-
   neighbours (sparse ones), then kept current after each iteration either by decrementing
   C[p][q] for every active in-neighbour q of a removed edge (p, n) or, when that costs more,
   by recounting the rows of the ranks that combined.  Ranks, active out-sets O_a and the
   active in-sets I_a (restricted to ranks still in the loop) are bitsets.

   One iteration t, as every rank runs it (choices not fixed by the paper in brackets):
   1. friends = the ranks q still in the loop with C[p][q] >= theta (friendship only shrinks,
      so last iteration's list is filtered);
   2. a rank without friends leaves the loop (done_iter = t) and sends the rest of O_a
      directly: it can never regain a friend, so it drops out of C's bookkeeping;
   3. Alg. 2 pairs friends (nbr_match.c);
   4. p paired with p' takes CN = O_a(p) & O_a(p') in ascending rank order [the first half is
      the first ceil(|CN|/2) ranks; the lower of p, p' onloads it, the other the rest], and
      both remove CN from O_a [p keeps its direct message to p' even when p' is its
      neighbour: the friend exchange is not an edge message];
   5. [an iteration cap, when given, ends the loop for every rank still in it].
   The loop ends because each iteration with a friendship pairs at least one couple, which
   removes at least theta active edges.

   Cumulative combining (cumulative != 0; beyond the papers: 002 s9 and 000 s9 name it as
   future work, "drop only the offloaded neighbours").  Every rank p holds, per active
   destination d, an origin set O(p, d), at first {p}.  In step 4 p removes from O_a only
   CN_off (what p' takes on) and p' only CN_on; for d in CN_on, O(p, d) gains O(p', d) (p'
   hands those origins' blocks to p in the friend exchange), for d in CN_off p hands O(p, d)
   to p' and drops d.  A destination p took on stays active, so it counts towards p's
   friendships and may be handed on or combined again later; p sends O(p, d) to d after its
   last step that changed it, unless it handed d on.  Each edge's block has one holder at a
   time, so every edge is still delivered exactly once.  A pair never meets again (their
   common set is empty afterwards) and still removes |CN| >= theta active edges, so the loop
   still ends.  The simulator records the same steps (on_idx = what p took on); the final
   direct sends are O_a less what p took on (those go as combined messages); the origin
   sets follow from the steps (topomap.neighborhood.flows). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "nbr_internal.h"
#include "topomap/error.h"
#include "topomap/neighborhood.h"

/* Costs against one popcounted word of a recount: one write of C at a random place, one
   member of an in-set listed and counted (measured at 4K ranks, delta = 0.2). */
#define RANDOM_WRITE_COST 4.0
#define MEMBER_COST 3.0

typedef struct {
    int32_t n, W;
    uint64_t *out, *in; /* n x W bitsets: O_a, and I_a among ranks in the loop */
    uint64_t *onl;      /* cumulative combining only, n x W: the destinations each rank took on */
    int32_t *incount;   /* |I_a(q)| */
    int32_t *C;
    uint8_t *inloop;
    int32_t *list; /* n scratch */
} state;

static inline int bit(const uint64_t *s, int32_t i) { return (int)((s[i >> 6] >> (i & 63)) & 1u); }
static inline void set_bit(uint64_t *s, int32_t i) { s[i >> 6] |= (uint64_t)1 << (i & 63); }
static inline void clear_bit(uint64_t *s, int32_t i) { s[i >> 6] &= ~((uint64_t)1 << (i & 63)); }

/* The members of a bitset (or of a & b when b is given) in ascending order; their count. */
static int32_t members(const uint64_t *a, const uint64_t *b, int32_t W, int32_t *out)
{
    int32_t k = 0;
    for (int32_t w = 0; w < W; w++) {
        uint64_t x = b ? a[w] & b[w] : a[w];
        while (x) {
            out[k++] = (w << 6) + __builtin_ctzll(x);
            x &= x - 1;
        }
    }
    return k;
}

/* Bits set in x, without the libgcc call __builtin_popcountll becomes when the build does
   not target a CPU with POPCNT (the portable default). */
static inline int32_t popcount64(uint64_t x)
{
    x -= (x >> 1) & 0x5555555555555555u;
    x = (x & 0x3333333333333333u) + ((x >> 2) & 0x3333333333333333u);
    x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fu;
    return (int32_t)((x * 0x0101010101010101u) >> 56);
}

static int32_t common(const uint64_t *a, const uint64_t *b, int32_t W)
{
    int32_t c = 0;
    for (int32_t w = 0; w < W; w++) c += popcount64(a[w] & b[w]);
    return c;
}

static uint64_t *row_bits(const state *s, uint64_t *sets, int32_t p) { return sets + (int64_t)p * s->W; }

/* C from scratch: popcounts of all pairs, or for each rank the pairs of its in-neighbours,
   whichever touches fewer words. */
static void count_all(state *s)
{
    int32_t n = s->n;
    double dense = 0.5 * n * (double)n * s->W, sparse = 0;
    for (int32_t q = 0; q < n; q++) sparse += (double)s->incount[q] * s->incount[q];
    if (dense < sparse) {
#pragma omp parallel for schedule(dynamic, 16)
        for (int32_t p = 0; p < n; p++)
            for (int32_t q = p + 1; q < n; q++) {
                int32_t c = common(row_bits(s, s->out, p), row_bits(s, s->out, q), s->W);
                s->C[(int64_t)p * n + q] = c;
                s->C[(int64_t)q * n + p] = c;
            }
        return;
    }
    memset(s->C, 0, sizeof *s->C * (size_t)n * (size_t)n);
    for (int32_t q = 0; q < n; q++) {
        int32_t k = members(row_bits(s, s->in, q), NULL, s->W, s->list);
        for (int32_t i = 0; i < k; i++)
            for (int32_t j = 0; j < k; j++)
                if (i != j) s->C[(int64_t)s->list[i] * n + s->list[j]]++;
    }
}

/* Remove the active edges a -> c for the k ranks c of cn: C[a][b] and C[b][a] lose one for
   each c that b still sends to.  The losses are summed per b first (acc, zero on entry and
   exit; touched: n scratch), so column a of C is written once per b, not once per edge. */
static void remove_edges_counted(state *s, int32_t a, const int32_t *cn, int32_t k, int32_t *acc, int32_t *touched)
{
    int32_t n = s->n, nt = 0;
    for (int32_t j = 0; j < k; j++) {
        int32_t c = cn[j];
        clear_bit(row_bits(s, s->in, c), a);
        s->incount[c]--;
        clear_bit(row_bits(s, s->out, a), c);
        int32_t m = members(row_bits(s, s->in, c), NULL, s->W, s->list);
        for (int32_t i = 0; i < m; i++)
            if (acc[s->list[i]]++ == 0) touched[nt++] = s->list[i];
    }
    for (int32_t i = 0; i < nt; i++) {
        int32_t b = touched[i];
        s->C[(int64_t)a * n + b] -= acc[b];
        s->C[(int64_t)b * n + a] -= acc[b];
        acc[b] = 0;
    }
}

/* Remove the active edges a -> c for the k ranks c of cn, leaving C to a recount. */
static void drop_edges(state *s, int32_t a, const int32_t *cn, int32_t k)
{
    for (int32_t j = 0; j < k; j++) {
        clear_bit(row_bits(s, s->out, a), cn[j]);
        clear_bit(row_bits(s, s->in, cn[j]), a);
        s->incount[cn[j]]--;
    }
}

/* Rows and columns of the changed ranks recounted among the ranks in the loop. */
static void recount(state *s, const int32_t *changed, int32_t nchanged, const uint8_t *is_changed,
                    const int32_t *active, int32_t nactive)
{
    int32_t n = s->n;
#pragma omp parallel for schedule(dynamic, 4)
    for (int32_t i = 0; i < nchanged; i++) {
        int32_t a = changed[i];
        for (int32_t j = 0; j < nactive; j++)
            s->C[(int64_t)a * n + active[j]] =
                common(row_bits(s, s->out, a), row_bits(s, s->out, active[j]), s->W);
    }
    for (int32_t i = 0; i < nchanged; i++) {
        int32_t a = changed[i];
        for (int32_t j = 0; j < nactive; j++)
            if (!is_changed[active[j]]) s->C[(int64_t)active[j] * n + a] = s->C[(int64_t)a * n + active[j]];
    }
}

void topomap_nbr_free(topomap_nbr_result *r)
{
    void *arrays[] = {r->step_ptr,    r->step_iter, r->step_friend, r->on_ptr,      r->on_idx,
                      r->final_ptr,   r->final_idx, r->done_iter,   r->friends0,    r->alg2_rounds,
                      r->it_active,   r->it_pairs,  r->it_rounds,   r->it_recomputed, r->it_messages};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) free(arrays[i]);
    memset(r, 0, sizeof *r);
}

/* Bits of a packed sort-key field holding a rank or a common count (both <= n). */
static int32_t rank_bits(int32_t n)
{
    int32_t b = 1;
    while (b < 31 && ((int64_t)1 << b) <= n) b++;
    return b;
}

static int validate(const topomap_nbr_input *in)
{
    if (in->n < 1) return topomap_i_fail(TOPOMAP_EINVAL, "n must be >= 1, got %d", (int)in->n);
    if (in->theta < 1) return topomap_i_fail(TOPOMAP_EINVAL, "theta must be >= 1, got %d", (int)in->theta);
    if (in->out_ptr[0] != 0) return topomap_i_fail(TOPOMAP_EINVAL, "out_ptr[0] must be 0");
    for (int32_t p = 0; p < in->n; p++) {
        if (in->out_ptr[p + 1] < in->out_ptr[p])
            return topomap_i_fail(TOPOMAP_EINVAL, "out_ptr decreases at rank %d", (int)p);
        for (int64_t k = in->out_ptr[p]; k < in->out_ptr[p + 1]; k++)
            if (in->out_idx[k] < 0 || in->out_idx[k] >= in->n)
                return topomap_i_fail(TOPOMAP_EINVAL, "destination %d of rank %d is outside 0..%d",
                                      (int)in->out_idx[k], (int)p, (int)in->n - 1);
    }
    if (!in->distance) return TOPOMAP_OK;
    if (!in->node) return topomap_i_fail(TOPOMAP_EINVAL, "a node distance needs the node of each rank");
    if (in->nnodes < 1) return topomap_i_fail(TOPOMAP_EINVAL, "nnodes must be >= 1, got %d", (int)in->nnodes);
    for (int32_t p = 0; p < in->n; p++)
        if (in->node[p] < 0 || in->node[p] >= in->nnodes)
            return topomap_i_fail(TOPOMAP_EINVAL, "node %d of rank %d is outside 0..%d", (int)in->node[p], (int)p,
                                  (int)in->nnodes - 1);
    int64_t top = (int64_t)1 << (62 - 2 * rank_bits(in->n));
    for (int32_t a = 0; a < in->nnodes; a++)
        for (int32_t b = 0; b < in->nnodes; b++) {
            int32_t d = in->distance[(int64_t)a * in->nnodes + b];
            /* symmetric costs keep the best friendship preferred from both ends (nbr_match.c) */
            if (d != in->distance[(int64_t)b * in->nnodes + a])
                return topomap_i_fail(TOPOMAP_EINVAL, "the node distance is not symmetric at (%d, %d)", (int)a, (int)b);
            if (d < 0 || d > top)
                return topomap_i_fail(TOPOMAP_EINVAL, "node distance %d at (%d, %d) is outside 0..%lld", (int)d, (int)a,
                                      (int)b, (long long)top);
        }
    return TOPOMAP_OK;
}

typedef struct {
    int32_t *ptr, *iter, *friend_, *rank;
    int64_t *on_start;
    int64_t len, cap;
} steps;

static int push_step(steps *st, int32_t rank, int32_t iter, int32_t fr, int64_t on_start)
{
    if (st->len == st->cap) {
        int64_t cap = st->cap ? 2 * st->cap : 64;
        int32_t *a = realloc(st->rank, sizeof *a * (size_t)cap);
        int32_t *b = a ? realloc(st->iter, sizeof *b * (size_t)cap) : NULL;
        if (a) st->rank = a;
        if (b) st->iter = b;
        int32_t *c = b ? realloc(st->friend_, sizeof *c * (size_t)cap) : NULL;
        if (c) st->friend_ = c;
        int64_t *d = c ? realloc(st->on_start, sizeof *d * (size_t)(cap + 1)) : NULL;
        if (!d) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %lld combining steps", (long long)cap);
        st->on_start = d;
        st->cap = cap;
    }
    st->rank[st->len] = rank;
    st->iter[st->len] = iter;
    st->friend_[st->len] = fr;
    st->on_start[st->len++] = on_start;
    return TOPOMAP_OK;
}

/* Per-iteration statistics, grown as iterations run. */
static int grow_iterations(topomap_nbr_result *r, int32_t need, int32_t *cap)
{
    if (need <= *cap) return TOPOMAP_OK;
    int32_t c = *cap ? 2 * *cap : 16;
    int32_t **ints[] = {&r->it_active, &r->it_pairs, &r->it_rounds, &r->it_recomputed};
    for (int i = 0; i < 4; i++) {
        int32_t *a = realloc(*ints[i], sizeof *a * (size_t)c);
        if (!a) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for iteration statistics");
        *ints[i] = a;
    }
    int64_t *m = realloc(r->it_messages, sizeof *m * (size_t)c);
    if (!m) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for iteration statistics");
    r->it_messages = m;
    *cap = c;
    return TOPOMAP_OK;
}

/* Everything the loop needs besides the state. */
typedef struct {
    int64_t *fptr;
    int32_t *flist, *flen, *active, *changed, *partner, *fin, *ncand, *choice, *old, *cptr, *chooser, *cursor, *acc;
    int64_t *keys;
    uint8_t *is_changed;
} work;

static void free_work(work *w)
{
    void *arrays[] = {w->fptr, w->flist, w->flen, w->active, w->changed, w->partner, w->fin,
                      w->ncand, w->choice, w->old, w->cptr, w->chooser, w->cursor, w->acc, w->keys, w->is_changed};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++) free(arrays[i]);
}

/* Friends of the ranks in the loop (t = 0: a scan of the row, later: last list filtered). */
static int list_friends(const state *s, work *w, int32_t t, int32_t theta)
{
    int32_t n = s->n;
    if (t == 0) {
        int64_t total = 0;
        for (int32_t p = 0; p < n; p++) {
            w->fptr[p] = total;
            for (int32_t q = 0; q < n; q++)
                if (q != p && s->C[(int64_t)p * n + q] >= theta) total++;
        }
        w->fptr[n] = total;
        w->flist = malloc(sizeof *w->flist * (size_t)(total ? total : 1));
        if (!w->flist) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for %lld friendships", (long long)total);
        for (int32_t p = 0; p < n; p++) {
            int32_t k = 0;
            for (int32_t q = 0; q < n; q++)
                if (q != p && s->C[(int64_t)p * n + q] >= theta) w->flist[w->fptr[p] + k++] = q;
            w->flen[p] = k;
        }
        return TOPOMAP_OK;
    }
    for (int32_t p = 0; p < n; p++) {
        if (!s->inloop[p]) continue;
        int32_t *list = w->flist + w->fptr[p], k = 0;
        for (int32_t i = 0; i < w->flen[p]; i++)
            if (s->inloop[list[i]] && s->C[(int64_t)p * n + list[i]] >= theta) list[k++] = list[i];
        w->flen[p] = k;
    }
    return TOPOMAP_OK;
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Pairs of iteration t: record both steps, split CN, take it out of the active sets. */
static int combine_pairs(state *s, work *w, topomap_nbr_result *r, steps *st, int64_t *on_len, int32_t t,
                         int32_t nactive, int32_t *npairs, int *recomputed)
{
    int32_t nchanged = 0;
    double incremental = 0, drops = s->onl ? 1.0 : 2.0; /* active edges each common neighbour loses */
    for (int32_t i = 0; i < nactive; i++) {
        int32_t p = w->active[i], q = w->partner[p];
        if (q < 0) continue;
        w->changed[nchanged++] = p;
        w->is_changed[p] = 1;
        if (p > q) continue;
        int32_t k = members(row_bits(s, s->out, p), row_bits(s, s->out, q), s->W, s->list);
        int32_t first = (k + 1) / 2; /* the lower rank onloads the first ceil(k/2) */
        int rc = push_step(st, p, t, q, *on_len);
        if (rc) return rc;
        memcpy(r->on_idx + *on_len, s->list, sizeof *s->list * (size_t)first);
        *on_len += first;
        if ((rc = push_step(st, q, t, p, *on_len))) return rc;
        memcpy(r->on_idx + *on_len, s->list + first, sizeof *s->list * (size_t)(k - first));
        *on_len += k - first;
        for (int32_t j = 0; j < k; j++) incremental += drops * (MEMBER_COST * s->incount[s->list[j]] + s->W);
        /* each rank of the pair then writes up to nactive entries of C's columns at random */
        incremental += 2.0 * RANDOM_WRITE_COST * nactive;
        (*npairs)++;
    }
    *recomputed = incremental > (double)nchanged * nactive * s->W;
    for (int32_t i = 0; i < nactive; i++) {
        int32_t p = w->active[i], q = w->partner[p];
        if (q < 0 || p > q) continue;
        /* remove_edges_counted reuses s->list; Alg. 2's chooser and ncand arrays are free now */
        int32_t *cn = w->chooser;
        int32_t k = members(row_bits(s, s->out, p), row_bits(s, s->out, q), s->W, cn);
        /* p (the lower rank) onloads cn[:first], q the rest; cumulatively each keeps its own
           half active and drops only the half its friend takes on */
        int32_t first = (k + 1) / 2;
        const int32_t *p_drops = s->onl ? cn + first : cn, *q_drops = cn;
        int32_t p_k = s->onl ? k - first : k, q_k = s->onl ? first : k;
        if (s->onl)
            for (int32_t j = 0; j < k; j++) set_bit(row_bits(s, s->onl, j < first ? p : q), cn[j]);
        if (!*recomputed) {
            remove_edges_counted(s, p, p_drops, p_k, w->acc, w->ncand);
            remove_edges_counted(s, q, q_drops, q_k, w->acc, w->ncand);
            continue;
        }
        drop_edges(s, p, p_drops, p_k);
        drop_edges(s, q, q_drops, q_k);
    }
    if (*recomputed) recount(s, w->changed, nchanged, w->is_changed, w->active, nactive);
    for (int32_t i = 0; i < nchanged; i++) w->is_changed[w->changed[i]] = 0;
    return TOPOMAP_OK;
}

static int run(const topomap_nbr_input *in, state *s, work *w, topomap_nbr_result *r)
{
    int32_t n = in->n;
    int64_t E = in->out_ptr[n];
    steps st = {0};
    int32_t itcap = 0, t = 0;
    int64_t on_len = 0, removed = 0;
    int rc = TOPOMAP_OK;
    count_all(s);
    if ((rc = list_friends(s, w, 0, in->theta))) goto done;
    for (int32_t p = 0; p < n; p++) r->friends0[p] = w->flen[p];
    for (;; t++) {
        if (t > 0 && (rc = list_friends(s, w, t, in->theta))) goto done;
        int32_t nactive = 0;
        int capped = in->max_iterations > 0 && t >= in->max_iterations;
        for (int32_t p = 0; p < n; p++) {
            if (!s->inloop[p]) continue;
            if (w->flen[p] == 0 || capped) {
                s->inloop[p] = 0;
                r->done_iter[p] = t;
                int32_t k = members(row_bits(s, s->out, p), NULL, s->W, s->list);
                for (int32_t i = 0; i < k; i++) {
                    clear_bit(row_bits(s, s->in, s->list[i]), p);
                    s->incount[s->list[i]]--;
                }
            } else {
                w->active[nactive++] = p;
            }
        }
        if (nactive == 0) break;
        if ((rc = grow_iterations(r, t + 1, &itcap))) goto done;
        nbr_match_ctx m = {n,         s->C,       in->node,  w->flist,  w->fptr,   w->flen,   w->active, nactive,
                           w->partner, w->fin,     w->ncand,  w->choice, w->old,    w->cptr,   w->chooser,
                           w->cursor,  w->keys,    in->distance, in->nnodes, rank_bits(n)};
        if ((rc = nbr_match(&m, &r->it_rounds[t], &r->it_messages[t]))) goto done;
        for (int32_t i = 0; i < nactive; i++) r->alg2_rounds[w->active[i]] += w->fin[w->active[i]] + 1;
        int32_t pairs = 0;
        int recomputed = 0;
        int64_t before = on_len;
        if ((rc = combine_pairs(s, w, r, &st, &on_len, t, nactive, &pairs, &recomputed))) goto done;
        removed += (s->onl ? 1 : 2) * (on_len - before);
        r->it_active[t] = nactive;
        r->it_pairs[t] = pairs;
        r->it_recomputed[t] = recomputed;
        if (in->progress && in->progress(in->progress_ctx, E ? (double)removed / (double)E : 1.0)) {
            rc = topomap_i_fail(TOPOMAP_ECANCELED, "neighbourhood phase 1 cancelled at iteration %d", (int)t);
            goto done;
        }
    }
    r->iterations = t;
    /* the steps, grouped by rank in iteration order (a stable counting sort) */
    r->nsteps = st.len;
    r->step_iter = malloc(sizeof *r->step_iter * (size_t)(st.len ? st.len : 1));
    r->step_friend = malloc(sizeof *r->step_friend * (size_t)(st.len ? st.len : 1));
    r->on_ptr = malloc(sizeof *r->on_ptr * (size_t)(st.len + 1));
    int32_t *on_sorted = malloc(sizeof *on_sorted * (size_t)(on_len ? on_len : 1));
    int64_t *slot = malloc(sizeof *slot * (size_t)(n + 1));
    if (!r->step_iter || !r->step_friend || !r->on_ptr || !on_sorted || !slot) {
        free(on_sorted);
        free(slot);
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the pattern");
        goto done;
    }
    memset(r->step_ptr, 0, sizeof *r->step_ptr * (size_t)(n + 1));
    for (int64_t i = 0; i < st.len; i++) r->step_ptr[st.rank[i] + 1]++;
    for (int32_t p = 0; p < n; p++) r->step_ptr[p + 1] += r->step_ptr[p];
    memcpy(slot, r->step_ptr, sizeof *slot * (size_t)(n + 1));
    if (st.len) st.on_start[st.len] = on_len;
    for (int64_t i = 0; i < st.len; i++) {
        int64_t j = slot[st.rank[i]]++;
        r->step_iter[j] = st.iter[i];
        r->step_friend[j] = st.friend_[i];
        r->on_ptr[j + 1] = st.on_start[i + 1] - st.on_start[i];
    }
    r->on_ptr[0] = 0;
    for (int64_t j = 0; j < st.len; j++) r->on_ptr[j + 1] += r->on_ptr[j];
    memcpy(slot, r->step_ptr, sizeof *slot * (size_t)(n + 1));
    for (int64_t i = 0; i < st.len; i++) {
        int64_t j = slot[st.rank[i]]++;
        memcpy(on_sorted + r->on_ptr[j], r->on_idx + st.on_start[i],
               sizeof *on_sorted * (size_t)(st.on_start[i + 1] - st.on_start[i]));
    }
    free(r->on_idx);
    r->on_idx = on_sorted;
    free(slot);
    /* the final direct sends: what is left of O_a, less (cumulatively) what was taken on */
    if (s->onl)
        for (int64_t i = 0; i < (int64_t)n * s->W; i++) s->out[i] &= ~s->onl[i];
    int64_t total = 0;
    for (int32_t p = 0; p < n; p++) {
        r->final_ptr[p] = total;
        total += members(row_bits(s, s->out, p), NULL, s->W, s->list);
    }
    r->final_ptr[n] = total;
    r->final_idx = malloc(sizeof *r->final_idx * (size_t)(total ? total : 1));
    if (!r->final_idx) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for the pattern");
        goto done;
    }
    for (int32_t p = 0; p < n; p++) members(row_bits(s, s->out, p), NULL, s->W, r->final_idx + r->final_ptr[p]);
done:
    free(st.rank);
    free(st.iter);
    free(st.friend_);
    free(st.on_start);
    return rc;
}

int topomap_nbr_phase1(const topomap_nbr_input *in, topomap_nbr_result *r)
{
    double t0 = now();
    memset(r, 0, sizeof *r);
    int rc = validate(in);
    if (rc) return rc;
    int32_t n = in->n;
    int64_t E = in->out_ptr[n];
    state s = {n, (n + 63) / 64, NULL, NULL, NULL, NULL, NULL, NULL, NULL};
    work w = {0};
    size_t N = (size_t)n, bits = N * (size_t)s.W;
    s.out = calloc(bits, sizeof *s.out);
    s.in = calloc(bits, sizeof *s.in);
    s.onl = in->cumulative ? calloc(bits, sizeof *s.onl) : NULL;
    s.incount = calloc(N, sizeof *s.incount);
    s.C = malloc(sizeof *s.C * N * N);
    s.inloop = malloc(N);
    s.list = malloc(sizeof *s.list * N);
    w.fptr = malloc(sizeof *w.fptr * (N + 1));
    w.is_changed = calloc(N, 1);
    int32_t **ints[] = {&w.flen,  &w.active, &w.changed, &w.partner, &w.fin, &w.ncand,
                        &w.choice, &w.old,    &w.chooser, &w.cursor,  &w.acc};
    int ok = s.out && s.in && (s.onl || !in->cumulative) && s.incount && s.C && s.inloop && s.list && w.fptr &&
             w.is_changed;
    for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) ok &= (*ints[i] = calloc(N, sizeof(int32_t))) != NULL;
    ok &= (w.cptr = calloc(N + 1, sizeof *w.cptr)) != NULL;
    ok &= (w.keys = calloc(N, sizeof *w.keys)) != NULL;
    r->n = n;
    r->step_ptr = calloc(N + 1, sizeof *r->step_ptr);
    r->on_idx = malloc(sizeof *r->on_idx * (size_t)(E ? E : 1));
    r->final_ptr = malloc(sizeof *r->final_ptr * (N + 1));
    r->done_iter = calloc(N, sizeof *r->done_iter);
    r->friends0 = calloc(N, sizeof *r->friends0);
    r->alg2_rounds = calloc(N, sizeof *r->alg2_rounds);
    ok &= r->step_ptr && r->on_idx && r->final_ptr && r->done_iter && r->friends0 && r->alg2_rounds;
    if (!ok) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory for phase 1 of %d ranks (C alone takes %.0f MB)", (int)n,
                            4.0 * (double)N * (double)N / 1e6);
        goto cleanup;
    }
    memset(s.inloop, 1, N);
    for (int32_t p = 0; p < n; p++)
        for (int64_t k = in->out_ptr[p]; k < in->out_ptr[p + 1]; k++) {
            int32_t q = in->out_idx[k];
            if (bit(row_bits(&s, s.out, p), q)) {
                rc = topomap_i_fail(TOPOMAP_EINVAL, "rank %d lists destination %d twice", (int)p, (int)q);
                goto cleanup;
            }
            set_bit(row_bits(&s, s.out, p), q);
            set_bit(row_bits(&s, s.in, q), p);
            s.incount[q]++;
        }
    rc = run(in, &s, &w, r);
cleanup:
    free(s.out);
    free(s.in);
    free(s.onl);
    free(s.incount);
    free(s.C);
    free(s.inloop);
    free(s.list);
    free_work(&w);
    r->seconds = now() - t0;
    return rc;
}

/* Alg. 2 of Mirsadeghi et al. 2017 (note 002 s2.4): Hoepman-like distributed pairing of
   friends, run for all ranks in synchronous rounds.  Each round every active rank sends its
   choice to every active friend, then its status (paired / terminal / neither); a rank that
   pairs or turns terminal sends that status and leaves.

   The open choices, fixed here and mirrored by topomap.neighborhood.reference:
   - preference (Lines 4, 17): the friend of smallest path cost first (the node distance when
     given, else the same node before any other when nodes are given), then the most common
     active neighbours, then the lowest rank.  The key is symmetric in the
     pair, so the best-ranked friendship edge is chosen from both ends in round 0 and every
     Alg. 1 iteration pairs at least one couple;
   - Line 11 with several g: the most preferred one;
   - Line 13 drops p'_old from the candidates only; p keeps exchanging with every friend that
     is neither paired nor terminal (F_comm), so sends and receives match;
   - Line 14 reads "terminal iff no candidate is left" (the printed test is inverted). */
#include <stdlib.h>
#include <string.h>

#include "nbr_internal.h"
#include "topomap/error.h"

/* The path cost of friend q for p, smaller preferred: the node distance when given, else
   0 on p's node and 1 elsewhere when nodes are given, else 0.  Symmetric in the pair. */
static int64_t cost(const nbr_match_ctx *m, int32_t p, int32_t q)
{
    if (!m->node) return 0;
    if (m->distance) return m->distance[(int64_t)m->node[p] * m->nnodes + m->node[q]];
    return m->node[p] != m->node[q];
}

/* Whether p prefers friend a to friend b. */
static int prefers(const nbr_match_ctx *m, int32_t p, int32_t a, int32_t b)
{
    int64_t ca = cost(m, p, a), cb = cost(m, p, b);
    if (ca != cb) return ca < cb;
    const int32_t *row = m->C + (int64_t)p * m->n;
    if (row[a] != row[b]) return row[a] > row[b];
    return a < b;
}

/* Candidate drops a rank serves by scanning before it sorts its candidates. */
#define SCANS_BEFORE_SORT 8

/* The preferred candidate of p still active before round k, dropping finished ones; -1 if
   none.  A rank scans its candidates for its first few drops (most pair at once), then sorts
   them by preference and walks a cursor, so later choices cost O(1) each. */
static int32_t best_candidate(nbr_match_ctx *m, int32_t p, int32_t k)
{
    int32_t *list = m->flist + m->fptr[p];
    if (m->cursor[p] >= 0) {
        while (m->cursor[p] < m->ncand[p] && m->fin[list[m->cursor[p]]] >= 0 && m->fin[list[m->cursor[p]]] < k)
            m->cursor[p]++;
        return m->cursor[p] < m->ncand[p] ? list[m->cursor[p]] : -1;
    }
    int32_t best = -1;
    for (int32_t i = 0; i < m->ncand[p]; i++) {
        int32_t q = list[i];
        if (m->fin[q] >= 0 && m->fin[q] < k) {
            list[i--] = list[--m->ncand[p]];
            list[m->ncand[p]] = q;
            continue;
        }
        if (best < 0 || prefers(m, p, q, best)) best = q;
    }
    return best;
}

static int by_key_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x < y) - (x > y);
}

/* Sort p's candidates by preference: the key packs (-cost, weight, -rank) in fields of
   rank_bits each above the cost (nbr_phase1 checks that the largest cost fits). */
static void sort_candidates(nbr_match_ctx *m, int32_t p)
{
    int32_t *list = m->flist + m->fptr[p];
    const int32_t *row = m->C + (int64_t)p * m->n;
    int b = m->rank_bits;
    int64_t mask = ((int64_t)1 << b) - 1, top = (int64_t)1 << (62 - 2 * b);
    for (int32_t i = 0; i < m->ncand[p]; i++) {
        int32_t q = list[i];
        m->keys[i] = ((top - cost(m, p, q)) << (2 * b)) | ((int64_t)row[q] << b) | (mask - q);
    }
    qsort(m->keys, (size_t)m->ncand[p], sizeof *m->keys, by_key_desc);
    for (int32_t i = 0; i < m->ncand[p]; i++) list[i] = (int32_t)(mask - (m->keys[i] & mask));
    m->cursor[p] = 0;
}

static void drop_candidate(nbr_match_ctx *m, int32_t p, int32_t q)
{
    int32_t *list = m->flist + m->fptr[p];
    if (m->cursor[p] >= 0) {
        /* q came from the cursor: retries and Line 11 choices never reach a drop */
        if (m->cursor[p] < m->ncand[p] && list[m->cursor[p]] == q) m->cursor[p]++;
        return;
    }
    for (int32_t i = 0; i < m->ncand[p]; i++)
        if (list[i] == q) {
            list[i] = list[--m->ncand[p]];
            list[m->ncand[p]] = q;
            break;
        }
    /* unsorted: cursor = -1 - drops so far; a few drops are cheaper as scans than a sort */
    if (--m->cursor[p] < -SCANS_BEFORE_SORT) sort_candidates(m, p);
}

/* Line 11: the preferred lower-ranked friend that chose p in the previous round. */
static int32_t lower_chooser(const nbr_match_ctx *m, int32_t p)
{
    int32_t g = -1;
    for (int32_t i = m->cptr[p]; i < m->cptr[p + 1]; i++) {
        int32_t q = m->chooser[i];
        if (q < p && (g < 0 || prefers(m, p, q, g))) g = q;
    }
    return g;
}

/* Bucket the still-active ranks by their choice of this round (counting sort). */
static void index_choosers(nbr_match_ctx *m)
{
    memset(m->cptr, 0, sizeof *m->cptr * (size_t)(m->n + 1));
    for (int32_t i = 0; i < m->nactive; i++) {
        int32_t p = m->active[i];
        if (m->fin[p] < 0 && m->choice[p] >= 0) m->cptr[m->choice[p] + 1]++;
    }
    for (int32_t q = 0; q < m->n; q++) m->cptr[q + 1] += m->cptr[q];
    for (int32_t i = 0; i < m->nactive; i++) {
        int32_t p = m->active[i];
        if (m->fin[p] < 0 && m->choice[p] >= 0) m->chooser[m->cptr[m->choice[p]]++] = p;
    }
    for (int32_t q = m->n; q > 0; q--) m->cptr[q] = m->cptr[q - 1];
    m->cptr[0] = 0;
}

int nbr_match(nbr_match_ctx *m, int32_t *rounds, int64_t *messages)
{
    int64_t bound = 2;
    for (int32_t i = 0; i < m->nactive; i++) {
        int32_t p = m->active[i];
        m->ncand[p] = m->flen[p];
        m->fin[p] = -1;
        m->partner[p] = -1;
        m->cursor[p] = -1;
        bound += m->flen[p] + 1;
    }
    int32_t left = m->nactive, k = 0;
    for (; left > 0; k++) {
        if (k > bound) return topomap_i_fail(TOPOMAP_EINVAL, "Alg. 2 ran %d rounds without finishing", (int)k);
        for (int32_t i = 0; i < m->nactive; i++) {
            int32_t p = m->active[i];
            if (m->fin[p] >= 0) continue;
            int32_t c, o = m->old[p];
            if (k == 0) {
                c = best_candidate(m, p, k);
            } else if (m->fin[o] < 0 && p < o) {
                c = o; /* Line 7: o failed too; the rank order breaks chasing cycles */
            } else if ((c = lower_chooser(m, p)) < 0) {
                drop_candidate(m, p, o);
                c = best_candidate(m, p, k);
            }
            m->choice[p] = c;
        }
        for (int32_t i = 0; i < m->nactive; i++) {
            int32_t p = m->active[i];
            if (m->fin[p] >= 0) continue;
            int32_t c = m->choice[p];
            if (c < 0) {
                m->fin[p] = k;
            } else if (m->choice[c] == p) {
                m->partner[p] = c;
            }
        }
        for (int32_t i = 0; i < m->nactive; i++) {
            int32_t p = m->active[i];
            if (m->fin[p] < 0 && m->partner[p] >= 0) m->fin[p] = k;
            if (m->fin[p] == k) left--;
            m->old[p] = m->choice[p];
        }
        index_choosers(m);
    }
    int64_t msgs = 0;
    for (int32_t i = 0; i < m->nactive; i++) {
        int32_t p = m->active[i];
        const int32_t *list = m->flist + m->fptr[p];
        for (int32_t j = 0; j < m->flen[p]; j++) {
            int32_t q = list[j], last = m->fin[p] < m->fin[q] ? m->fin[p] : m->fin[q];
            msgs += 2 * (int64_t)(last + 1);
        }
    }
    *rounds = k;
    *messages = msgs;
    return TOPOMAP_OK;
}

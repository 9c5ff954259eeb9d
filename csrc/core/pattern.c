/* CSR checks, transposition and construction for the pattern view. */
#define _DEFAULT_SOURCE /* madvise */
#include <math.h>
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include "topomap/error.h"
#include "topomap/pattern.h"

int topomap_pattern_validate(const topomap_pattern *p)
{
    if (p->n < 1) return topomap_i_fail(TOPOMAP_EINVAL, "pattern has n=%d processes", (int)p->n);
    if (p->indptr[0] != 0) return topomap_i_fail(TOPOMAP_EINVAL, "indptr[0] must be 0");
    for (int32_t i = 0; i < p->n; i++) {
        if (p->indptr[i + 1] < p->indptr[i])
            return topomap_i_fail(TOPOMAP_EINVAL, "indptr decreases at process %d", (int)i);
        for (int64_t k = p->indptr[i]; k < p->indptr[i + 1]; k++) {
            int32_t q = p->indices[k];
            if (q < 0 || q >= p->n)
                return topomap_i_fail(TOPOMAP_EINVAL, "process %d sends to %d, out of range [0, %d)",
                                      (int)i, (int)q, (int)p->n);
            if (q == i)
                return topomap_i_fail(TOPOMAP_EINVAL, "process %d sends to itself", (int)i);
            if (!(p->bytes[k] > 0) || !isfinite(p->bytes[k]))
                return topomap_i_fail(TOPOMAP_EINVAL, "message %d -> %d has bytes %g (must be > 0)",
                                      (int)i, (int)q, p->bytes[k]);
        }
    }
    return TOPOMAP_OK;
}

int topomap_pattern_transpose(const topomap_pattern *p, int64_t *t_indptr, int32_t *t_indices,
                              double *t_bytes)
{
    int64_t nnz = p->indptr[p->n];
    int64_t *fill = calloc((size_t)p->n + 1, sizeof *fill);
    if (!fill) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory transposing the pattern");
    for (int64_t k = 0; k < nnz; k++) fill[p->indices[k] + 1]++;
    for (int32_t i = 0; i < p->n; i++) fill[i + 1] += fill[i];
    for (int32_t i = 0; i <= p->n; i++) t_indptr[i] = fill[i];
    for (int32_t i = 0; i < p->n; i++)
        for (int64_t k = p->indptr[i]; k < p->indptr[i + 1]; k++) {
            int64_t at = fill[p->indices[k]]++;
            t_indices[at] = i;
            t_bytes[at] = p->bytes[k];
        }
    free(fill);
    return TOPOMAP_OK;
}

/* ------------------------------------------------------------------ building from entries
 * Why in C: NumPy's construction (argsort of the (sender, receiver) keys, unique,
 * reduceat, then a re-validation with several temporaries) took most of the time
 * of reading a 10^8-byte pattern file.  Here: one checking pass; canonical input
 * (files written in order) is copied as is; otherwise a stable counting sort by
 * sender, then each row is sorted by receiver (insertion sort when short, merge
 * sort when long) and its duplicates summed.  Choices: duplicates are summed in
 * NumPy's order (first value + pairwise sum of the rest, numpy's
 * pairwise_sum with 8 accumulators and blocks of 128) so that every caller of
 * Pattern.from_edges gets the same doubles as before; zero-byte and self entries
 * are dropped before summing, as the NumPy construction did. */

static int64_t topomap_i_id(const void *a, int wide, int64_t k)
{
    return wide ? ((const int64_t *)a)[k] : (int64_t)((const int32_t *)a)[k];
}

static int topomap_i_weight_ok(double w) { return w >= 0 && w < INFINITY; }

/* What topomap_edges_check finds in entries [lo, hi). */
typedef struct {
    int64_t first_bad, self;
    uint64_t first_key, last_key; /* sender << 32 | receiver of the first and last entry */
    int sorted, canonical;
} topomap_i_edges_part;

/* The checks, branch-free per entry over blocks of 4096 so that clean entries run at memory
   speed; a block with a fault is read again for its first one. */
static void topomap_i_edges_range(int32_t n, const topomap_edges *e, int64_t lo, int64_t hi,
                                  topomap_i_edges_part *out)
{
    int64_t row = 0;
    if (e->row_ptr) { /* the row holding entry lo: the last with row_ptr[row] <= lo */
        int64_t a = 0, b = n;
        while (a < b) {
            int64_t mid = a + (b - a + 1) / 2;
            if (e->row_ptr[mid] <= lo) a = mid; else b = mid - 1;
        }
        row = a;
    }
    memset(out, 0, sizeof *out);
    out->first_bad = -1;
    out->sorted = out->canonical = 1;
    if (lo < hi)
        out->first_key = (uint64_t)(e->row_ptr ? row : topomap_i_id(e->src, e->wide, lo)) << 32 |
                         (uint32_t)topomap_i_id(e->dst, e->wide, lo);
    uint64_t prev = 0;
    if (e->row_ptr) { /* row by row: the sender is the row */
        unsigned noncanonical = 0, bad = 0;
        for (int64_t r = row; r < n && e->row_ptr[r] < hi; r++) {
            int64_t a = e->row_ptr[r] > lo ? e->row_ptr[r] : lo, b = e->row_ptr[r + 1] < hi ? e->row_ptr[r + 1] : hi;
            for (int64_t k = a; k < b; k++) {
                int64_t d = topomap_i_id(e->dst, e->wide, k);
                double w = e->bytes[k];
                bad |= ((uint64_t)d >= (uint64_t)n) | !topomap_i_weight_ok(w) |
                       (e->msgs != NULL && !topomap_i_weight_ok(e->msgs[k]));
                uint64_t key = (uint64_t)r << 32 | (uint32_t)d;
                noncanonical |= ((k != lo) & (key <= prev)) | (r == d) | !(w > 0);
                out->self += r == d;
                prev = key;
            }
            if (bad) {
                for (int64_t k = a; k < b; k++) {
                    int64_t d = topomap_i_id(e->dst, e->wide, k);
                    if (d < 0 || d >= n || !topomap_i_weight_ok(e->bytes[k]) ||
                        (e->msgs && !topomap_i_weight_ok(e->msgs[k]))) {
                        out->first_bad = k;
                        return;
                    }
                }
            }
        }
        out->canonical = !noncanonical;
        out->last_key = prev;
        return;
    }
    for (int64_t block = lo; block < hi; block += 4096) {
        int64_t stop = block + 4096 < hi ? block + 4096 : hi;
        unsigned bad = 0, unsorted = 0, noncanonical = 0;
        int64_t self = 0;
        for (int64_t k = block; k < stop; k++) {
            int64_t s = topomap_i_id(e->src, e->wide, k), d = topomap_i_id(e->dst, e->wide, k);
            double w = e->bytes[k];
            bad |= ((uint64_t)s >= (uint64_t)n) | ((uint64_t)d >= (uint64_t)n) | !topomap_i_weight_ok(w) |
                   (e->msgs != NULL && !topomap_i_weight_ok(e->msgs[k]));
            uint64_t key = (uint64_t)s << 32 | (uint32_t)d;
            unsigned later = k != lo; /* the first entry is compared with the previous part by the caller */
            unsorted |= later & ((key >> 32) < (prev >> 32));
            noncanonical |= (later & (key <= prev)) | (s == d) | !(w > 0);
            self += s == d;
            prev = key;
        }
        if (bad) {
            for (int64_t k = block; k < stop; k++) {
                int64_t s = topomap_i_id(e->src, e->wide, k), d = topomap_i_id(e->dst, e->wide, k);
                if (s < 0 || s >= n || d < 0 || d >= n || !topomap_i_weight_ok(e->bytes[k]) ||
                    (e->msgs && !topomap_i_weight_ok(e->msgs[k]))) {
                    out->first_bad = k;
                    return;
                }
            }
        }
        out->sorted &= !unsorted;
        out->canonical &= !noncanonical;
        out->self += self;
    }
    out->last_key = prev;
}

void topomap_edges_check(int32_t n, const topomap_edges *e, topomap_edges_info *info)
{
    enum { MAX_PARTS = 64 };
    topomap_i_edges_part part[MAX_PARTS];
    int T = omp_get_max_threads();
    if (T > MAX_PARTS) T = MAX_PARTS;
    if (e->nnz < ((int64_t)1 << 16)) T = 1; /* not worth a thread */
#pragma omp parallel for num_threads(T)
    for (int t = 0; t < T; t++) topomap_i_edges_range(n, e, e->nnz * t / T, e->nnz * (t + 1) / T, &part[t]);
    info->first_bad = -1;
    info->self_entries = 0;
    info->rows_sorted = info->canonical = 1;
    for (int t = 0; t < T; t++) {
        if (part[t].first_bad >= 0) {
            info->first_bad = part[t].first_bad;
            info->canonical = 0;
            return;
        }
        int empty = e->nnz * t / T == e->nnz * (t + 1) / T;
        if (empty) continue;
        info->self_entries += part[t].self;
        info->rows_sorted &= part[t].sorted;
        info->canonical &= part[t].canonical;
        for (int u = t - 1; u >= 0; u--) { /* the nearest part before with entries */
            if (e->nnz * u / T == e->nnz * (u + 1) / T) continue;
            info->rows_sorted &= (part[t].first_key >> 32) >= (part[u].last_key >> 32);
            info->canonical &= part[t].first_key > part[u].last_key;
            break;
        }
    }
}

/* NumPy's pairwise_sum (numpy/_core/src/umath/loops_utils.h.src) for n > 0 values. */
static double topomap_i_pairwise(const double *a, int64_t n)
{
    if (n < 8) {
        double res = -0.0;
        for (int64_t i = 0; i < n; i++) res += a[i];
        return res;
    }
    if (n <= 128) {
        double r[8];
        int64_t i;
        for (int j = 0; j < 8; j++) r[j] = a[j];
        for (i = 8; i < n - (n % 8); i += 8)
            for (int j = 0; j < 8; j++) r[j] += a[i + j];
        double res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        for (; i < n; i++) res += a[i];
        return res;
    }
    int64_t n2 = n / 2;
    n2 -= n2 % 8;
    return topomap_i_pairwise(a, n2) + topomap_i_pairwise(a + n2, n - n2);
}

/* Scratch of `count` elements of `size` bytes (zeroed with `zero`), backed by huge pages where
   the kernel gives them on request (transparent huge pages in "madvise" mode): the build's
   scratch is written once, so 4 KiB pages cost a fault per 4 KiB, a few percent of a read. */
static void *topomap_i_scratch(size_t count, size_t size, int zero)
{
    const uintptr_t huge = (uintptr_t)2 << 20;
    void *p = zero ? calloc(count, size) : malloc(count * size);
    uintptr_t lo = ((uintptr_t)p + huge - 1) & ~(huge - 1), hi = ((uintptr_t)p + count * size) & ~(huge - 1);
#ifdef MADV_HUGEPAGE
    if (p && hi > lo) (void)madvise((void *)lo, hi - lo, MADV_HUGEPAGE);
#endif
    return p;
}

/* Sort idx[0..c) stably by dst[idx[.]] (tmp: room for c). */
static void topomap_i_sort_by_dst(int64_t *idx, int64_t *tmp, int64_t c, const int32_t *dst)
{
    if (c <= 32) {
        for (int64_t i = 1; i < c; i++) {
            int64_t x = idx[i], j = i;
            for (; j > 0 && dst[idx[j - 1]] > dst[x]; j--) idx[j] = idx[j - 1];
            idx[j] = x;
        }
        return;
    }
    int64_t *from = idx, *to = tmp;
    for (int64_t width = 1; width < c; width *= 2) {
        for (int64_t lo = 0; lo < c; lo += 2 * width) {
            int64_t mid = lo + width < c ? lo + width : c, hi = lo + 2 * width < c ? lo + 2 * width : c;
            int64_t a = lo, b = mid, o = lo;
            while (a < mid && b < hi) to[o++] = dst[from[b]] < dst[from[a]] ? from[b++] : from[a++];
            while (a < mid) to[o++] = from[a++];
            while (b < hi) to[o++] = from[b++];
        }
        int64_t *t = from;
        from = to;
        to = t;
    }
    if (from != idx) memcpy(idx, from, (size_t)c * sizeof *idx);
}

/* Threads for a pass over nnz entries: one below 2^16 entries, not worth a thread's start. */
static int topomap_i_build_threads(int64_t nnz)
{
    enum { MAX_PARTS = 64 };
    int T = omp_get_max_threads();
    if (T > MAX_PARTS) T = MAX_PARTS;
    return nnz < ((int64_t)1 << 16) ? 1 : T;
}

/* Row [lo, hi) of scratch arrays (dst, w, m) sorted in place: the entries kept (receiver not
   the sender i, bytes > 0) moved to the front, then a stable insertion sort by receiver
   (short rows: no index array to go through).  Returns the entries kept. */
static int64_t topomap_i_sort_row_in_place(int32_t i, int32_t *dst, double *w, double *m, int64_t len)
{
    int64_t c = 0;
    for (int64_t k = 0; k < len; k++)
        if (dst[k] != i && w[k] > 0) {
            dst[c] = dst[k];
            w[c] = w[k];
            if (m) m[c] = m[k];
            c++;
        }
    for (int64_t a = 1; a < c; a++) {
        int32_t x = dst[a];
        double xw = w[a], xm = m ? m[a] : 0;
        int64_t b = a;
        for (; b > 0 && dst[b - 1] > x; b--) {
            dst[b] = dst[b - 1];
            w[b] = w[b - 1];
            if (m) m[b] = m[b - 1];
        }
        dst[b] = x;
        w[b] = xw;
        if (m) m[b] = xm;
    }
    return c;
}

/* Canonical rows [r0, r1) of grouped rows (rp, dst, w, m): sort, drop, sum, written from
   position rp[r0] on, so that the ranges of different threads never meet; *count receives
   the entries written.  With `scratch`, (dst, w, m) are the build's own arrays, and short rows
   are sorted where they are.  0 or TOPOMAP_ENOMEM. */
static int topomap_i_canonical_range(int32_t r0, int32_t r1, const int64_t *rp, const int32_t *dst,
                                     const double *w, const double *m, int scratch, int64_t *indptr,
                                     int32_t *indices, double *ow, double *om, int64_t *count)
{
    int64_t longest = 0, out = rp[r0];
    for (int32_t i = r0; i < r1; i++)
        if (rp[i + 1] - rp[i] > longest) longest = rp[i + 1] - rp[i];
    size_t room = (size_t)(longest > 0 ? longest : 1);
    int64_t *idx = malloc(room * sizeof *idx), *tmp = malloc(room * sizeof *tmp);
    double *run = malloc(room * sizeof *run);
    int rc = idx && tmp && run ? TOPOMAP_OK : TOPOMAP_ENOMEM;
    for (int32_t i = r0; i < r1 && !rc; i++) {
        int64_t lo = rp[i], hi = rp[i + 1], c = 0;
        indptr[i] = out;
        int plain = 1;
        for (int64_t k = lo; k < hi && plain; k++)
            plain = dst[k] != i && w[k] > 0 && (k == lo || dst[k] > dst[k - 1]);
        if (plain) {
            memmove(indices + out, dst + lo, (size_t)(hi - lo) * sizeof *indices);
            memmove(ow + out, w + lo, (size_t)(hi - lo) * sizeof *ow);
            if (m) memmove(om + out, m + lo, (size_t)(hi - lo) * sizeof *om);
            out += hi - lo;
            continue;
        }
        if (scratch && hi - lo <= 32) {
            /* the casts: with `scratch` the arrays are the build's own */
            int32_t *sd = (int32_t *)dst + lo;
            double *sw = (double *)w + lo, *sm = m ? (double *)m + lo : NULL;
            c = topomap_i_sort_row_in_place(i, sd, sw, sm, hi - lo);
            for (int64_t a = 0, b; a < c; a = b) {
                for (b = a + 1; b < c && sd[b] == sd[a]; b++) {
                }
                indices[out] = sd[a];
                ow[out] = sw[a] + (b - a > 1 ? topomap_i_pairwise(sw + a + 1, b - a - 1) : 0.0);
                if (m) om[out] = sm[a] + (b - a > 1 ? topomap_i_pairwise(sm + a + 1, b - a - 1) : 0.0);
                out++;
            }
            continue;
        }
        for (int64_t k = lo; k < hi; k++)
            if (dst[k] != i && w[k] > 0) idx[c++] = k;
        topomap_i_sort_by_dst(idx, tmp, c, dst);
        for (int64_t a = 0, b; a < c; a = b) {
            for (b = a + 1; b < c && dst[idx[b]] == dst[idx[a]]; b++) {
            }
            indices[out] = dst[idx[a]];
            ow[out] = w[idx[a]];
            if (m) om[out] = m[idx[a]];
            if (b - a > 1) {
                for (int64_t j = a + 1; j < b; j++) run[j - a - 1] = w[idx[j]];
                ow[out] += topomap_i_pairwise(run, b - a - 1);
                if (m) {
                    for (int64_t j = a + 1; j < b; j++) run[j - a - 1] = m[idx[j]];
                    om[out] += topomap_i_pairwise(run, b - a - 1);
                }
            }
            out++;
        }
    }
    *count = out - rp[r0];
    free(idx);
    free(tmp);
    free(run);
    return rc;
}

/* Canonical rows from grouped rows (rp, dst, w, m), on several threads: each takes a range
   of rows holding about as many entries and writes it where its input starts; the ranges
   then move down over what the rows before dropped.  Every row is read as on one thread, so
   the sums are the same doubles. */
static int topomap_i_canonical_rows(int32_t n, const int64_t *rp, const int32_t *dst, const double *w,
                                    const double *m, int scratch, int64_t *indptr, int32_t *indices, double *ow,
                                    double *om, int64_t *nnz_out)
{
    int T = topomap_i_build_threads(rp[n]), rc = TOPOMAP_OK;
    int32_t first[65];
    int64_t count[64];
    int failed[64] = {0};
    for (int t = 0; t <= T; t++) { /* the first row holding entry rp[n] * t / T or after */
        int64_t at = rp[n] * t / T;
        int32_t a = 0, b = n;
        while (a < b) {
            int32_t mid = a + (b - a) / 2;
            if (rp[mid] < at) a = mid + 1; else b = mid;
        }
        first[t] = t == T ? n : a;
    }
#pragma omp parallel for num_threads(T)
    for (int t = 0; t < T; t++)
        failed[t] = topomap_i_canonical_range(first[t], first[t + 1], rp, dst, w, m, scratch, indptr, indices, ow, om,
                                              &count[t]);
    int64_t out = 0;
    for (int t = 0; t < T; t++) {
        if (failed[t]) {
            rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory sorting the rows of %lld entries", (long long)rp[n]);
            goto cleanup;
        }
        int64_t from = rp[first[t]], c = count[t];
        if (from != out) {
            memmove(indices + out, indices + from, (size_t)c * sizeof *indices);
            memmove(ow + out, ow + from, (size_t)c * sizeof *ow);
            if (m) memmove(om + out, om + from, (size_t)c * sizeof *om);
            for (int32_t i = first[t]; i < first[t + 1]; i++) indptr[i] -= from - out;
        }
        out += c;
    }
    indptr[n] = out;
    *nnz_out = out;
cleanup:
    return rc;
}

/* Entries grouped by sender, stably (entry order within a row), on several threads: each
   counts the senders of its range of entries, then places them after the same senders of
   the ranges before.  rp gets the row starts (n + 1), d32, tw and tm (when msgs) the rows. */
static int topomap_i_group_by_sender(int32_t n, const topomap_edges *e, int64_t *rp, int32_t *d32, double *tw,
                                     double *tm)
{
    int64_t nnz = e->nnz;
    int T = topomap_i_build_threads(nnz);
    if ((int64_t)T * ((int64_t)n + 1) > nnz + n + 1) T = 1; /* histograms larger than the entries */
    int64_t *fill = topomap_i_scratch((size_t)T * ((size_t)n + 1), sizeof *fill, 1);
    if (!fill) return topomap_i_fail(TOPOMAP_ENOMEM, "out of memory grouping %lld entries by sender", (long long)nnz);
#pragma omp parallel num_threads(T)
    {
        int t = omp_get_thread_num();
        int64_t lo = nnz * t / T, hi = nnz * (t + 1) / T, *mine = fill + (size_t)t * ((size_t)n + 1);
        for (int64_t k = lo; k < hi; k++) mine[topomap_i_id(e->src, e->wide, k)]++;
#pragma omp barrier
#pragma omp single
        {
            int64_t at = 0;
            for (int32_t i = 0; i < n; i++) {
                rp[i] = at;
                for (int u = 0; u < T; u++) {
                    int64_t c = fill[(size_t)u * ((size_t)n + 1) + (size_t)i];
                    fill[(size_t)u * ((size_t)n + 1) + (size_t)i] = at;
                    at += c;
                }
            }
            rp[n] = at;
        }
        for (int64_t k = lo; k < hi; k++) {
            int64_t at = mine[topomap_i_id(e->src, e->wide, k)]++;
            d32[at] = (int32_t)topomap_i_id(e->dst, e->wide, k);
            tw[at] = e->bytes[k];
            if (tm) tm[at] = e->msgs[k];
        }
    }
    free(fill);
    return TOPOMAP_OK;
}

/* Row starts (n + 1) of entries grouped by sender in order: row i begins at the first entry
   whose sender is i or more.  Each thread writes the starts of the rows whose first entry (or
   the gap before it) falls in its range of entries, so no two threads write the same start. */
static void topomap_i_row_starts(int32_t n, const topomap_edges *e, int64_t *starts)
{
    int64_t nnz = e->nnz;
#pragma omp parallel for num_threads(topomap_i_build_threads(nnz))
    for (int64_t k = 0; k <= nnz; k++) {
        int64_t from = k == 0 ? 0 : topomap_i_id(e->src, e->wide, k - 1) + 1;
        int64_t to = k == nnz ? n : topomap_i_id(e->src, e->wide, k);
        for (int64_t i = from; i <= to; i++) starts[i] = k; /* rows (sender of k-1, sender of k] start at k */
    }
}

int topomap_pattern_build(int32_t n, const topomap_edges *e, const topomap_edges_info *info, int64_t *indptr,
                          int32_t *indices, double *bytes, double *msgs, int64_t *nnz_out)
{
    int rc = TOPOMAP_OK;
    int64_t nnz = e->nnz, *rp = NULL;
    int32_t *d32 = NULL;
    double *tw = NULL, *tm = NULL;
    if (info->first_bad >= 0) {
        rc = topomap_i_fail(TOPOMAP_EINVAL, "entry %lld has an id out of range or a bad weight",
                            (long long)info->first_bad);
        goto cleanup;
    }
    if (info->canonical) {
        if (e->row_ptr)
            memcpy(indptr, e->row_ptr, ((size_t)n + 1) * sizeof *indptr);
        else
            topomap_i_row_starts(n, e, indptr);
        if ((const void *)indices != e->dst)
            for (int64_t k = 0; k < nnz; k++) indices[k] = (int32_t)topomap_i_id(e->dst, e->wide, k);
        if (bytes != e->bytes) memcpy(bytes, e->bytes, (size_t)nnz * sizeof *bytes);
        if (e->msgs && msgs != e->msgs) memcpy(msgs, e->msgs, (size_t)nnz * sizeof *msgs);
        *nnz_out = nnz;
        goto cleanup;
    }
    if (info->rows_sorted && !e->wide) {
        /* grouped already: rows straight from the input */
        if (!e->row_ptr) {
            rp = malloc(((size_t)n + 1) * sizeof *rp);
            if (!rp) goto nomem;
            topomap_i_row_starts(n, e, rp);
        }
        rc = topomap_i_canonical_rows(n, e->row_ptr ? e->row_ptr : rp, e->dst, e->bytes, e->msgs, 0, indptr, indices,
                                      bytes, msgs, nnz_out);
        goto cleanup;
    }
    rp = topomap_i_scratch((size_t)n + 1, sizeof *rp, 0);
    d32 = topomap_i_scratch((size_t)(nnz > 0 ? nnz : 1), sizeof *d32, 0);
    if (!rp || !d32) goto nomem;
    if (e->row_ptr) { /* grouped already, with wide ids: narrowed */
        memcpy(rp, e->row_ptr, ((size_t)n + 1) * sizeof *rp);
#pragma omp parallel for num_threads(topomap_i_build_threads(nnz))
        for (int64_t k = 0; k < nnz; k++) d32[k] = (int32_t)topomap_i_id(e->dst, e->wide, k);
        rc = topomap_i_canonical_rows(n, rp, d32, e->bytes, e->msgs, 0, indptr, indices, bytes, msgs, nnz_out);
        goto cleanup;
    }
    tw = topomap_i_scratch((size_t)(nnz > 0 ? nnz : 1), sizeof *tw, 0);
    if (e->msgs) tm = topomap_i_scratch((size_t)(nnz > 0 ? nnz : 1), sizeof *tm, 0);
    if (!tw || (e->msgs && !tm)) goto nomem;
    rc = topomap_i_group_by_sender(n, e, rp, d32, tw, tm);
    if (!rc) rc = topomap_i_canonical_rows(n, rp, d32, tw, tm, 1, indptr, indices, bytes, msgs, nnz_out);
    goto cleanup;
nomem:
    rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory grouping %lld entries by sender", (long long)nnz);
cleanup:
    free(rp);
    free(d32);
    free(tw);
    free(tm);
    return rc;
}

int topomap_pattern_build_in_place(const topomap_edges *e, const topomap_edges_info *info)
{
    return info->canonical || (!e->row_ptr && !info->rows_sorted);
}

int topomap_pattern_is_canonical(int32_t n, const int64_t *indptr, int64_t nnz, const int32_t *indices,
                                 const double *bytes)
{
    if (n < 1 || indptr[0] != 0) return 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t lo = indptr[i], hi = indptr[i + 1];
        if (hi < lo || hi > nnz) return 0;
        for (int64_t k = lo; k < hi; k++) {
            int32_t q = indices[k];
            if (q < 0 || q >= n || q == i || (k > lo && q <= indices[k - 1]) || !(bytes[k] > 0) ||
                !(bytes[k] < INFINITY))
                return 0;
        }
    }
    return indptr[n] == nnz;
}

int64_t topomap_first_outside(const int64_t *a, int64_t len, int64_t lo, int64_t hi)
{
    for (int64_t k = 0; k < len; k++)
        if (a[k] < lo || a[k] >= hi) return k;
    return -1;
}

int64_t topomap_first_bad_weight(const double *w, int64_t len)
{
    for (int64_t k = 0; k < len; k++)
        if (!topomap_i_weight_ok(w[k])) return k;
    return -1;
}

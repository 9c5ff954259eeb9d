/* Pattern construction from entries (csrc/core/pattern.c): the checking pass, canonical input
   copied through, counting sort by sender, per-row sort and duplicate sums, rows given by
   row_ptr, 64-bit ids, the canonical-CSR check of Pattern's constructor, and results that do
   not depend on the number of threads. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>
#include "check.h"
#include "topomap/error.h"
#include "topomap/pattern.h"

typedef struct {
    int64_t indptr[16];
    int32_t indices[64];
    double bytes[64], msgs[64];
    int64_t nnz;
} built;

static int build(int32_t n, const topomap_edges *e, topomap_edges_info *info, built *b)
{
    topomap_edges_check(n, e, info);
    if (info->first_bad >= 0) return 1;
    return topomap_pattern_build(n, e, info, b->indptr, b->indices, b->bytes, e->msgs ? b->msgs : NULL, &b->nnz);
}

static void test_canonical_passes_through(void)
{
    int32_t src[] = {0, 0, 2, 3}, dst[] = {1, 3, 0, 2};
    double w[] = {1, 2, 3, 4};
    topomap_edges e = {4, src, dst, 0, w, NULL, NULL};
    topomap_edges_info info;
    built b;
    CHECK(build(4, &e, &info, &b) == 0 && info.canonical && info.rows_sorted && info.self_entries == 0);
    CHECK(b.nnz == 4 && b.indptr[0] == 0 && b.indptr[1] == 2 && b.indptr[2] == 2 && b.indptr[3] == 3 &&
          b.indptr[4] == 4);
    CHECK(memcmp(b.indices, dst, sizeof dst) == 0 && memcmp(b.bytes, w, sizeof w) == 0);
    /* the output may be the input itself */
    int64_t indptr[5], nnz;
    CHECK(topomap_pattern_build(4, &e, &info, indptr, dst, w, NULL, &nnz) == 0 && nnz == 4 && indptr[4] == 4);
    CHECK(topomap_pattern_is_canonical(4, indptr, 4, dst, w));
}

static void test_sort_merge_drop(void)
{
    /* unsorted senders and receivers, duplicates, a self entry and a zero-byte entry */
    int32_t src[] = {2, 0, 2, 0, 1, 0, 2, 0};
    int32_t dst[] = {1, 2, 1, 1, 1, 2, 0, 2};
    double w[] = {1, 2, 4, 8, 16, 32, 0, 64};
    double m[] = {1, 1, 1, 1, 1, 1, 1, 1};
    topomap_edges e = {8, src, dst, 0, w, m, NULL};
    topomap_edges_info info;
    built b;
    CHECK(build(3, &e, &info, &b) == 0 && !info.canonical && !info.rows_sorted && info.self_entries == 1);
    CHECK(b.nnz == 3);
    CHECK(b.indptr[0] == 0 && b.indptr[1] == 2 && b.indptr[2] == 2 && b.indptr[3] == 3);
    CHECK(b.indices[0] == 1 && b.bytes[0] == 8 && b.msgs[0] == 1);
    CHECK(b.indices[1] == 2 && b.bytes[1] == 98 && b.msgs[1] == 3);
    CHECK(b.indices[2] == 1 && b.bytes[2] == 5 && b.msgs[2] == 2); /* 2 -> 0 had zero bytes */
    CHECK(topomap_pattern_is_canonical(3, b.indptr, b.nnz, b.indices, b.bytes));
    /* the same with 64-bit ids */
    int64_t s64[8], d64[8];
    for (int k = 0; k < 8; k++) s64[k] = src[k], d64[k] = dst[k];
    topomap_edges wide = {8, s64, d64, 1, w, m, NULL};
    built b2;
    CHECK(build(3, &wide, &info, &b2) == 0 && b2.nnz == 3);
    CHECK(memcmp(b.indptr, b2.indptr, 4 * sizeof *b.indptr) == 0 && memcmp(b.indices, b2.indices, 3 * 4) == 0 &&
          memcmp(b.bytes, b2.bytes, 3 * 8) == 0 && memcmp(b.msgs, b2.msgs, 3 * 8) == 0);
}

static void test_rows_given(void)
{
    /* row 0: 2 3 2 (unsorted, a duplicate); row 1: nothing; row 2: 2 (self), 0 */
    int64_t row_ptr[] = {0, 3, 3, 5};
    int32_t dst[] = {2, 1, 2, 2, 0};
    double w[] = {1.5, 2, 0.25, 7, 3};
    topomap_edges e = {5, NULL, dst, 0, w, NULL, row_ptr};
    topomap_edges_info info;
    built b;
    CHECK(build(3, &e, &info, &b) == 0 && !info.canonical && info.rows_sorted && info.self_entries == 1);
    CHECK(b.nnz == 3 && b.indptr[1] == 2 && b.indptr[2] == 2 && b.indptr[3] == 3);
    CHECK(b.indices[0] == 1 && b.bytes[0] == 2 && b.indices[1] == 2 && b.bytes[1] == 1.75);
    CHECK(b.indices[2] == 0 && b.bytes[2] == 3);
    /* a long unsorted row goes through the merge sort; duplicates stay in input order */
    enum { D = 200 };
    int64_t rp[52];
    rp[0] = 0;
    for (int i = 1; i < 52; i++) rp[i] = D;
    int32_t cols[D];
    double wd[D];
    for (int k = 0; k < D; k++) cols[k] = 1 + (int32_t)((k * 37) % 50), wd[k] = 1 + k;
    topomap_edges long_row = {D, NULL, cols, 0, wd, NULL, rp};
    int64_t indptr[52], nnz;
    int32_t ix[D];
    double bx[D];
    topomap_edges_check(51, &long_row, &info);
    CHECK(topomap_pattern_build(51, &long_row, &info, indptr, ix, bx, NULL, &nnz) == 0 && nnz == 50);
    double total = 0, expect = 0;
    for (int k = 0; k < nnz; k++) total += bx[k];
    for (int k = 0; k < D; k++) expect += wd[k];
    CHECK(total == expect && topomap_pattern_is_canonical(51, indptr, nnz, ix, bx));
    for (int k = 0; k < nnz; k++) CHECK(ix[k] == k + 1);
}

static void test_invalid_entries(void)
{
    int32_t src[] = {0, 1, 0}, dst[] = {1, 0, 1};
    double w[] = {1, 2, 3}, m[] = {1, 1, 1};
    topomap_edges_info info;
    topomap_edges e = {3, src, dst, 0, w, m, NULL};
    int32_t bad_dst[] = {1, 2, 1};
    e.dst = bad_dst;
    topomap_edges_check(2, &e, &info);
    CHECK(info.first_bad == 1);
    e.dst = dst;
    double cases[] = {-1.0, NAN, INFINITY};
    for (int i = 0; i < 3; i++) {
        w[2] = cases[i];
        topomap_edges_check(2, &e, &info);
        CHECK(info.first_bad == 2);
        w[2] = 3;
        m[0] = cases[i];
        topomap_edges_check(2, &e, &info);
        CHECK(info.first_bad == 0);
        m[0] = 1;
    }
    int64_t wide_src[] = {0, (int64_t)1 << 40, 0}, wide_dst[] = {1, 0, 1};
    topomap_edges wide = {3, wide_src, wide_dst, 1, w, NULL, NULL};
    topomap_edges_check(2, &wide, &info);
    CHECK(info.first_bad == 1);
    int64_t indptr[3], nnz;
    int32_t ix[3];
    double bx[3];
    CHECK(topomap_pattern_build(2, &wide, &info, indptr, ix, bx, NULL, &nnz) == TOPOMAP_EINVAL);
}

static void test_canonical_check(void)
{
    int64_t indptr[] = {0, 2, 2, 3};
    int32_t ix[] = {1, 2, 0};
    double bx[] = {1, 2, 3};
    CHECK(topomap_pattern_is_canonical(3, indptr, 3, ix, bx));
    ix[1] = 1; /* repeated receiver */
    CHECK(!topomap_pattern_is_canonical(3, indptr, 3, ix, bx));
    ix[1] = 0; /* self message */
    CHECK(!topomap_pattern_is_canonical(3, indptr, 3, ix, bx));
    ix[1] = 2;
    bx[2] = 0;
    CHECK(!topomap_pattern_is_canonical(3, indptr, 3, ix, bx));
    bx[2] = 3;
    indptr[3] = 4; /* beyond the entries */
    CHECK(!topomap_pattern_is_canonical(3, indptr, 3, ix, bx));
    indptr[3] = 3;
    indptr[1] = 3;
    indptr[2] = 2; /* decreasing */
    CHECK(!topomap_pattern_is_canonical(3, indptr, 3, ix, bx));
    int64_t a[] = {0, 5, -1};
    CHECK(topomap_first_outside(a, 3, 0, 5) == 1 && topomap_first_outside(a, 1, 0, 5) == -1);
    double w[] = {0, -0.0, 1, NAN};
    CHECK(topomap_first_bad_weight(w, 4) == 3 && topomap_first_bad_weight(w, 3) == -1);
}

/* Large inputs are checked in parts on several threads: an order fault exactly where a part
   ends is seen, as is the first bad entry of a later part. */
static void test_parts(void)
{
    enum { N = 1000, PER = 300, NNZ = N * PER };
    int32_t *src = malloc(NNZ * sizeof *src), *dst = malloc(NNZ * sizeof *dst);
    double *w = malloc(NNZ * sizeof *w);
    int64_t *row_ptr = malloc((N + 1) * sizeof *row_ptr);
    for (int32_t i = 0; i <= N; i++) row_ptr[i] = (int64_t)i * PER;
    for (int64_t k = 0; k < NNZ; k++) {
        src[k] = (int32_t)(k / PER);
        dst[k] = (int32_t)((k % PER) + (k % PER >= k / PER)); /* skip the diagonal: 0..PER without i */
        w[k] = 1 + (double)(k % 7);
    }
    topomap_edges e = {NNZ, src, dst, 0, w, NULL, NULL}, rows = {NNZ, NULL, dst, 0, w, NULL, row_ptr};
    topomap_edges_info info;
    for (int omp_parts = 0; omp_parts < 2; omp_parts++) {
        topomap_edges *x = omp_parts ? &rows : &e;
        topomap_edges_check(N, x, &info);
        CHECK(info.first_bad == -1 && info.canonical && info.rows_sorted && info.self_entries == 0);
        for (int t = 2; t <= 8; t++) { /* swap two neighbours across every possible part boundary */
            int64_t at = (int64_t)NNZ * (t / 2) / t;
            int32_t keep = dst[at - 1];
            dst[at - 1] = dst[at];
            dst[at] = keep;
            topomap_edges_check(N, x, &info);
            CHECK(info.first_bad == -1 && !info.canonical && info.rows_sorted);
            dst[at] = dst[at - 1];
            dst[at - 1] = keep;
        }
        w[NNZ - 5] = -1;
        w[NNZ - 2] = NAN;
        topomap_edges_check(N, x, &info);
        CHECK(info.first_bad == NNZ - 5);
        w[NNZ - 5] = 1;
        w[NNZ - 2] = 1;
    }
    src[NNZ / 2] = src[NNZ / 2 - 1] - 1; /* a sender going back */
    topomap_edges_check(N, &e, &info);
    CHECK(info.first_bad == -1 && !info.rows_sorted && !info.canonical);
    free(src), free(dst), free(w), free(row_ptr);
}

/* The outputs of topomap_pattern_build on `threads` threads, in arrays this allocates. */
typedef struct {
    int64_t *indptr, nnz;
    int32_t *indices;
    double *bytes, *msgs;
} built_big;

static void build_big(int32_t n, const topomap_edges *e, int threads, built_big *b)
{
    topomap_edges_info info;
    omp_set_num_threads(threads);
    topomap_edges_check(n, e, &info);
    b->indptr = malloc(((size_t)n + 1) * sizeof *b->indptr);
    b->indices = malloc((size_t)e->nnz * sizeof *b->indices);
    b->bytes = malloc((size_t)e->nnz * sizeof *b->bytes);
    b->msgs = malloc((size_t)e->nnz * sizeof *b->msgs);
    CHECK(info.first_bad == -1 && !info.canonical);
    CHECK(topomap_pattern_build(n, e, &info, b->indptr, b->indices, b->bytes, e->msgs ? b->msgs : NULL, &b->nnz) == 0);
    CHECK(topomap_pattern_is_canonical(n, b->indptr, b->nnz, b->indices, b->bytes));
}

static void free_big(built_big *b) { free(b->indptr), free(b->indices), free(b->bytes), free(b->msgs); }

/* Grouping by sender and the per-row sums on 2 or 3 threads give the bytes one thread gives:
   unsorted entries (narrow and 64-bit ids), entries grouped by sender, rows given with 64-bit
   ids; with duplicates (summed in entry order), self entries and zero bytes to drop. */
static void test_threads_agree(void)
{
    enum { N = 3000, NNZ = 200000 };
    int32_t *src = malloc(NNZ * sizeof *src), *dst = malloc(NNZ * sizeof *dst);
    int64_t *src64 = malloc(NNZ * sizeof *src64), *dst64 = malloc(NNZ * sizeof *dst64);
    int64_t *row_ptr = calloc(N + 1, sizeof *row_ptr);
    double *w = malloc(NNZ * sizeof *w), *m = malloc(NNZ * sizeof *m);
    uint64_t x = 2024;
    for (int64_t k = 0; k < NNZ; k++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        src[k] = (int32_t)((x >> 33) % N);
        dst[k] = (int32_t)((src[k] + (x >> 20) % 40) % N); /* 40 receivers a row: duplicates, self entries */
        w[k] = (x >> 40) % 11 == 0 ? 0.0 : 0.1 * (double)((x >> 12) % 1000) + 1e-7;
        m[k] = 1 + (double)((x >> 50) % 5) / 3;
    }
    for (int sorted = 0; sorted < 2; sorted++) {
        if (sorted) { /* group by sender (a counting sort of our own), receivers left unsorted */
            int32_t *s2 = malloc(NNZ * sizeof *s2), *d2 = malloc(NNZ * sizeof *d2);
            double *w2 = malloc(NNZ * sizeof *w2), *m2 = malloc(NNZ * sizeof *m2);
            for (int64_t k = 0; k < NNZ; k++) row_ptr[src[k] + 1]++;
            for (int32_t i = 0; i < N; i++) row_ptr[i + 1] += row_ptr[i];
            int64_t *at = malloc((N + 1) * sizeof *at);
            memcpy(at, row_ptr, (N + 1) * sizeof *at);
            for (int64_t k = 0; k < NNZ; k++) {
                int64_t j = at[src[k]]++;
                s2[j] = src[k], d2[j] = dst[k], w2[j] = w[k], m2[j] = m[k];
            }
            memcpy(src, s2, NNZ * sizeof *src), memcpy(dst, d2, NNZ * sizeof *dst);
            memcpy(w, w2, NNZ * sizeof *w), memcpy(m, m2, NNZ * sizeof *m);
            free(s2), free(d2), free(w2), free(m2), free(at);
        }
        for (int64_t k = 0; k < NNZ; k++) src64[k] = src[k], dst64[k] = dst[k];
        topomap_edges cases[3] = {{NNZ, src, dst, 0, w, m, NULL}, {NNZ, src64, dst64, 1, w, NULL, NULL},
                                  {NNZ, NULL, dst64, 1, w, m, row_ptr}};
        for (int c = 0; c < (sorted ? 3 : 2); c++) {
            built_big one, many;
            build_big(N, &cases[c], 1, &one);
            CHECK(one.nnz > NNZ / 4 && one.nnz < NNZ * 9 / 10); /* duplicates merged, zeros and self entries gone */
            for (int threads = 2; threads <= 3; threads++) {
                build_big(N, &cases[c], threads, &many);
                CHECK(many.nnz == one.nnz && !memcmp(many.indptr, one.indptr, (N + 1) * sizeof *one.indptr));
                CHECK(!memcmp(many.indices, one.indices, (size_t)one.nnz * sizeof *one.indices));
                CHECK(!memcmp(many.bytes, one.bytes, (size_t)one.nnz * sizeof *one.bytes));
                CHECK(!cases[c].msgs || !memcmp(many.msgs, one.msgs, (size_t)one.nnz * sizeof *one.msgs));
                free_big(&many);
            }
            free_big(&one);
        }
    }
    omp_set_num_threads(2);
    free(src), free(dst), free(src64), free(dst64), free(row_ptr), free(w), free(m);
}

/* Entries out of sender order are regrouped into the build's scratch, where short rows are
   sorted in place: the result equals, bit for bit, the one of the same rows given grouped
   (row_ptr: sorted through an index array), on 1 and 3 threads, also when the outputs are the
   input arrays themselves (topomap_pattern_build_in_place). */
static void test_regrouped_in_place(void)
{
    enum { N = 5000, NNZ = 100000 };
    int32_t *src = malloc(NNZ * sizeof *src), *dst = malloc(NNZ * sizeof *dst);
    int32_t *gdst = malloc(NNZ * sizeof *gdst), *adst = malloc(NNZ * sizeof *adst);
    int64_t *row_ptr = calloc(N + 1, sizeof *row_ptr), *at = malloc((N + 1) * sizeof *at);
    double *w = malloc(NNZ * sizeof *w), *m = malloc(NNZ * sizeof *m), *gw = malloc(NNZ * sizeof *gw);
    double *gm = malloc(NNZ * sizeof *gm), *aw = malloc(NNZ * sizeof *aw), *am = malloc(NNZ * sizeof *am);
    uint64_t x = 77;
    for (int64_t k = 0; k < NNZ; k++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        src[k] = (int32_t)((x >> 33) % N);
        dst[k] = (int32_t)((src[k] + (x >> 20) % 12) % N); /* 20 entries a row, 12 receivers: duplicates */
        w[k] = (x >> 40) % 13 == 0 ? 0.0 : 0.1 * (double)((x >> 12) % 1000) + 1e-7;
        m[k] = 1 + (double)((x >> 50) % 5) / 3;
    }
    for (int64_t k = 0; k < NNZ; k++) row_ptr[src[k] + 1]++;
    int64_t longest = 0;
    for (int32_t i = 0; i < N; i++) {
        longest = row_ptr[i + 1] > longest ? row_ptr[i + 1] : longest;
        row_ptr[i + 1] += row_ptr[i];
    }
    CHECK(longest > 32); /* rows sorted in place and rows sorted through the index array */
    memcpy(at, row_ptr, (N + 1) * sizeof *at);
    for (int64_t k = 0; k < NNZ; k++) {
        int64_t j = at[src[k]]++;
        gdst[j] = dst[k], gw[j] = w[k], gm[j] = m[k];
    }
    topomap_edges unsorted = {NNZ, src, dst, 0, w, m, NULL}, grouped = {NNZ, NULL, gdst, 0, gw, gm, row_ptr};
    topomap_edges_info info;
    topomap_edges_check(N, &grouped, &info);
    CHECK(!topomap_pattern_build_in_place(&grouped, &info));
    for (int threads = 1; threads <= 3; threads += 2) {
        built_big ref, got;
        build_big(N, &grouped, threads, &ref);
        build_big(N, &unsorted, threads, &got);
        CHECK(got.nnz == ref.nnz && !memcmp(got.indptr, ref.indptr, (N + 1) * sizeof *ref.indptr));
        CHECK(!memcmp(got.indices, ref.indices, (size_t)ref.nnz * sizeof *ref.indices));
        CHECK(!memcmp(got.bytes, ref.bytes, (size_t)ref.nnz * sizeof *ref.bytes));
        CHECK(!memcmp(got.msgs, ref.msgs, (size_t)ref.nnz * sizeof *ref.msgs));
        /* the outputs written over the inputs */
        memcpy(adst, dst, NNZ * sizeof *adst), memcpy(aw, w, NNZ * sizeof *aw), memcpy(am, m, NNZ * sizeof *am);
        topomap_edges alias = {NNZ, src, adst, 0, aw, am, NULL};
        int64_t nnz;
        topomap_edges_check(N, &alias, &info);
        CHECK(topomap_pattern_build_in_place(&alias, &info));
        CHECK(topomap_pattern_build(N, &alias, &info, got.indptr, adst, aw, am, &nnz) == 0 && nnz == ref.nnz);
        CHECK(!memcmp(adst, ref.indices, (size_t)nnz * sizeof *adst));
        CHECK(!memcmp(aw, ref.bytes, (size_t)nnz * sizeof *aw) && !memcmp(am, ref.msgs, (size_t)nnz * sizeof *am));
        free_big(&ref), free_big(&got);
    }
    omp_set_num_threads(2);
    free(src), free(dst), free(gdst), free(adst), free(row_ptr), free(at);
    free(w), free(m), free(gw), free(gm), free(aw), free(am);
}

int main(void)
{
    test_canonical_passes_through();
    test_sort_merge_drop();
    test_rows_given();
    test_invalid_entries();
    test_canonical_check();
    test_parts();
    test_threads_agree();
    test_regrouped_in_place();
    return check_report();
}

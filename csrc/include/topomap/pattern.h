/* The communication pattern as the C core sees it: a read-only CSR view.
   Row p lists the receivers of p's messages; bytes[k] > 0; no self loops. */
#ifndef TOPOMAP_PATTERN_H
#define TOPOMAP_PATTERN_H
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int32_t n;
    const int64_t *indptr;  /* n + 1 */
    const int32_t *indices; /* indptr[n] */
    const double *bytes;    /* indptr[n] */
    /* Optional: the processes' cells on a Cartesian grid of ndims (1-3)
       axes, row i = process i's coordinates, each in [0, 2^20); set when
       the pattern is a stencil of that grid (the mappers' grid option,
       topomap/mappers/grids.py).  NULL: no grid.  Only the node grouping
       (map_nodes.c) reads it. */
    const int32_t *coords;
    int32_t ndims;
} topomap_pattern;

/* Check the CSR invariants; the error message names the first bad entry. */
int topomap_pattern_validate(const topomap_pattern *p);

/* Transpose into caller-owned arrays (indptr n+1, indices/bytes nnz); the
   result lists, for each process, who sends to it. */
int topomap_pattern_transpose(const topomap_pattern *p, int64_t *t_indptr,
                              int32_t *t_indices, double *t_bytes);

/* ---- Building a pattern from its entries (topomap.Pattern.from_edges, the file readers).
   Entry k is a message src[k] -> dst[k] of bytes[k] (and msgs[k]); ids are int32_t, or
   int64_t when `wide`.  With row_ptr, the entries of row i are [row_ptr[i], row_ptr[i+1])
   and src is not read.  The canonical CSR drops self entries (src == dst) and entries of
   zero bytes, sorts each row by receiver and sums duplicates in NumPy's order
   (np.add.reduceat: the first value plus the pairwise sum of the rest), so that the
   result is bit for bit the one of the NumPy construction. */
typedef struct {
    int64_t nnz;
    const void *src;
    const void *dst;
    int wide;
    const double *bytes;
    const double *msgs;     /* optional */
    const int64_t *row_ptr; /* optional, n + 1 */
} topomap_edges;

typedef struct {
    int64_t first_bad;    /* first entry with an id outside [0, n), or bytes or msgs negative,
                             NaN or infinite; -1 when none */
    int64_t self_entries; /* entries with src == dst */
    int rows_sorted;      /* senders non-decreasing (always with row_ptr) */
    int canonical;        /* already canonical: rows in order, receivers strictly increasing,
                             no self entry, every bytes > 0 */
} topomap_edges_info;

/* One pass over the entries: what topomap_pattern_build needs to know. */
void topomap_edges_check(int32_t n, const topomap_edges *e, topomap_edges_info *info);

/* Canonical CSR of valid entries (`info` from topomap_edges_check, first_bad == -1) into
   caller-owned arrays:
   indptr (n + 1), indices, bytes and msgs (room for e->nnz entries; msgs only when e->msgs);
   *nnz_out entries are written.  Canonical input is copied as is, and an output array
   may then be the input array itself.  O(nnz + n) plus O(d log d) per row of d entries
   that is not sorted. */
int topomap_pattern_build(int32_t n, const topomap_edges *e, const topomap_edges_info *info, int64_t *indptr,
                          int32_t *indices, double *bytes, double *msgs, int64_t *nnz_out);

/* 1 when topomap_pattern_build may write its outputs over the input arrays of their type
   (e->dst when not wide, e->bytes, e->msgs): canonical input, copied as is, and entries out
   of sender order (no row_ptr), which are regrouped into scratch arrays before the first
   output is written.  A reader giving its arrays away then needs no fresh ones. */
int topomap_pattern_build_in_place(const topomap_edges *e, const topomap_edges_info *info);

/* 1 when (indptr, indices, bytes) is canonical CSR over n processes: indptr from 0,
   non-decreasing; receivers in [0, n), not the sender, strictly increasing within a row;
   bytes positive and finite. */
int topomap_pattern_is_canonical(int32_t n, const int64_t *indptr, int64_t nnz, const int32_t *indices,
                                 const double *bytes);

/* Index of the first a[k] outside [lo, hi), or -1. */
int64_t topomap_first_outside(const int64_t *a, int64_t len, int64_t lo, int64_t hi);

/* Index of the first negative, NaN or infinite w[k], or -1. */
int64_t topomap_first_bad_weight(const double *w, int64_t len);

#ifdef __cplusplus
}
#endif
#endif

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
} topomap_pattern;

/* Check the CSR invariants; the error message names the first bad entry. */
int topomap_pattern_validate(const topomap_pattern *p);

/* Transpose into caller-owned arrays (indptr n+1, indices/bytes nnz); the
   result lists, for each process, who sends to it. */
int topomap_pattern_transpose(const topomap_pattern *p, int64_t *t_indptr,
                              int32_t *t_indices, double *t_bytes);

#ifdef __cplusplus
}
#endif
#endif

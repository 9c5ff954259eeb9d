/* CSR checks and transposition for the pattern view. */
#include <stdlib.h>
#include <math.h>
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

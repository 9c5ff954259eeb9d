/* Hilbert space-filling curve renumbering (Kumar 2012, §5.5 and the
   "SFC-optimized" alias method of §5.3; notes 001 §4.2-4.3): order the
   allocated nodes of a torus or mesh along a Hilbert curve so that ranks
   that are close are close in the machine (the "SFC rank order").

   The index is Skilling's ("Programming the Hilbert curve", AIP Conf. Proc.
   707, 2004): coordinates -> "transposed" index by the inverse-undo and
   Gray-code steps, then the bits interleaved, most significant axis first.
   Any number of dimensions; ndims * bits <= 64.

   Choices the thesis leaves open:
   - The curve covers the enclosing cube of side 2^bits, bits = ceil(log2 of
     the largest dimension), and ignores wrap-around links.
   - Axis 0 (x, the fastest-varying in node ids) is the most significant
     axis of the curve; the curve starts at the origin.
   - Coordinates of a node come from the shared numbering, node = x0 + d0 *
     (x1 + d1 * x2 ...).

   Complexity: O(ndims * bits) per index; ordering O(count log count). */
#include <stdlib.h>
#include "topomap/error.h"
#include "topomap/map_kumar.h"

int topomap_hilbert_index(int32_t ndims, int32_t bits, const uint32_t *coords, uint64_t *index)
{
    if (ndims < 1 || bits < 0 || bits > 32 || (int64_t)ndims * bits > 64)
        return topomap_i_fail(TOPOMAP_EINVAL,
                              "a Hilbert index needs ndims >= 1, 0 <= bits <= 32 and ndims * bits <= 64 (got %d x %d)",
                              (int)ndims, (int)bits);
    for (int32_t i = 0; i < ndims; i++)
        if (bits < 32 && coords[i] >> bits)
            return topomap_i_fail(TOPOMAP_EINVAL, "coordinate %d = %u is outside [0, 2^%d)", (int)i, (unsigned)coords[i],
                                  (int)bits);
    *index = 0;
    if (bits == 0) return TOPOMAP_OK;
    uint32_t x[64]; /* ndims <= 64 when bits >= 1 */
    for (int32_t i = 0; i < ndims; i++) x[i] = coords[i];
    uint32_t top = (uint32_t)1 << (bits - 1);
    /* inverse undo: reflect or exchange the lower bits axis by axis */
    for (uint32_t q = top; q > 1; q >>= 1) {
        uint32_t p = q - 1;
        for (int32_t i = 0; i < ndims; i++) {
            if (x[i] & q) {
                x[0] ^= p;
            } else {
                uint32_t t = (x[0] ^ x[i]) & p;
                x[0] ^= t;
                x[i] ^= t;
            }
        }
    }
    /* Gray encode */
    for (int32_t i = 1; i < ndims; i++) x[i] ^= x[i - 1];
    uint32_t t = 0;
    for (uint32_t q = top; q > 1; q >>= 1)
        if (x[ndims - 1] & q) t ^= q - 1;
    for (int32_t i = 0; i < ndims; i++) x[i] ^= t;
    uint64_t h = 0;
    for (int32_t b = bits - 1; b >= 0; b--)
        for (int32_t i = 0; i < ndims; i++) h = (h << 1) | ((x[i] >> b) & 1u);
    *index = h;
    return TOPOMAP_OK;
}

typedef struct {
    uint64_t key;
    int32_t pos;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    if (x->key != y->key) return x->key < y->key ? -1 : 1;
    return (x->pos > y->pos) - (x->pos < y->pos);
}

int topomap_hilbert_order(int32_t ndims, const int32_t *dims, int32_t count, const int32_t *nodes, int32_t *order)
{
    if (ndims < 1) return topomap_i_fail(TOPOMAP_EINVAL, "a torus needs >= 1 dimension, got %d", (int)ndims);
    if (count < 0) return topomap_i_fail(TOPOMAP_EINVAL, "node count %d is negative", (int)count);
    int64_t total = 1;
    int32_t bits = 0;
    for (int32_t i = 0; i < ndims; i++) {
        if (dims[i] < 1) return topomap_i_fail(TOPOMAP_EINVAL, "torus dimension %d has size %d", (int)i, (int)dims[i]);
        total *= dims[i];
        if (total > INT32_MAX) return topomap_i_fail(TOPOMAP_EINVAL, "the torus has more than 2^31 - 1 nodes");
        while (((int64_t)1 << bits) < dims[i]) bits++;
    }
    if (bits > 0 && (int64_t)ndims * bits > 64)
        return topomap_i_fail(TOPOMAP_EINVAL, "a Hilbert curve over %d dimensions of %d bits exceeds 64 bits", (int)ndims,
                              (int)bits);
    keyed *k = malloc((size_t)count * sizeof *k + 1);
    uint32_t *c = malloc((size_t)ndims * sizeof *c);
    int rc = TOPOMAP_OK;
    if (!k || !c) {
        rc = topomap_i_fail(TOPOMAP_ENOMEM, "out of memory");
        goto cleanup;
    }
    for (int32_t r = 0; r < count; r++) {
        int32_t v = nodes[r];
        if (v < 0 || v >= total) {
            rc = topomap_i_fail(TOPOMAP_EINVAL, "node %d (entry %d) is outside the torus [0, %lld)", (int)v, (int)r,
                                (long long)total);
            goto cleanup;
        }
        for (int32_t i = 0; i < ndims; i++) {
            c[i] = (uint32_t)(v % dims[i]);
            v /= dims[i];
        }
        rc = topomap_hilbert_index(ndims, bits, c, &k[r].key);
        if (rc) goto cleanup;
        k[r].pos = r;
    }
    qsort(k, (size_t)count, sizeof *k, cmp_keyed);
    for (int32_t r = 0; r < count; r++) order[r] = k[r].pos;
cleanup:
    free(k);
    free(c);
    return rc;
}

/* Division and remainder by a runtime constant without a divide instruction
   (Lemire, Kaser & Kurz 2019, "Faster remainder by direct computation"):
   exact for every 32-bit unsigned dividend and divisor >= 1.  Route
   computation divides by torus sizes on every message; a hardware divide
   costs ~25 cycles, this costs two multiplications. */
#ifndef TOPOMAP_FASTDIV_H
#define TOPOMAP_FASTDIV_H
#include <stdint.h>

typedef struct {
    uint64_t magic;
    uint32_t d;
} topomap_i_fastdiv;

static inline topomap_i_fastdiv topomap_i_fastdiv_make(uint32_t d)
{
    topomap_i_fastdiv f = {UINT64_MAX / d + 1, d};
    return f;
}

static inline uint32_t topomap_i_div(topomap_i_fastdiv f, uint32_t a)
{
    return f.d == 1 ? a : (uint32_t)(((__uint128_t)f.magic * a) >> 64);
}

static inline uint32_t topomap_i_mod(topomap_i_fastdiv f, uint32_t a)
{
    uint64_t low = f.magic * a;
    return (uint32_t)(((__uint128_t)low * f.d) >> 64);
}
#endif

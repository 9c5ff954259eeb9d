/* Seeded pseudo-random numbers: xoshiro256** seeded through splitmix64.
   Same seed, same stream, on every platform. */
#ifndef TOPOMAP_RNG_H
#define TOPOMAP_RNG_H
#include <stdint.h>

typedef struct { uint64_t s[4]; } topomap_rng;

void topomap_rng_seed(topomap_rng *r, uint64_t seed);
/* splitmix64's step: a well-mixed 64-bit value of x (per-call seeds derived
   from one seed and a counter). */
uint64_t topomap_rng_mix(uint64_t x);
uint64_t topomap_rng_next(topomap_rng *r);
/* Uniform integer in [0, bound), bound > 0, without modulo bias. */
uint64_t topomap_rng_below(topomap_rng *r, uint64_t bound);
/* Uniform double in [0, 1). */
double topomap_rng_uniform(topomap_rng *r);
/* Fisher-Yates shuffle of a[0..n). */
void topomap_rng_shuffle_i32(topomap_rng *r, int32_t *a, int64_t n);

#endif

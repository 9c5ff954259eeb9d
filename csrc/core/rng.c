/* xoshiro256** (Blackman & Vigna 2018), state filled by splitmix64 so that
   any 64-bit seed, including 0, gives a good stream. */
#include "topomap/rng.h"

uint64_t topomap_rng_mix(uint64_t x)
{
    uint64_t z = x + 0x9E3779B97F4A7C15ULL;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = topomap_rng_mix(*x);
    *x += 0x9E3779B97F4A7C15ULL;
    return z;
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

void topomap_rng_seed(topomap_rng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&seed);
}

uint64_t topomap_rng_next(topomap_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t topomap_rng_below(topomap_rng *r, uint64_t bound)
{
    /* Lemire's rejection keeps every value equally likely. */
    uint64_t threshold = (0 - bound) % bound;
    for (;;) {
        uint64_t x = topomap_rng_next(r);
        __uint128_t mul = (__uint128_t)x * bound;
        if ((uint64_t)mul >= threshold) return (uint64_t)(mul >> 64);
    }
}

double topomap_rng_uniform(topomap_rng *r)
{
    return (double)(topomap_rng_next(r) >> 11) * 0x1.0p-53;
}

void topomap_rng_shuffle_i32(topomap_rng *r, int32_t *a, int64_t n)
{
    for (int64_t i = n - 1; i > 0; i--) {
        int64_t j = (int64_t)topomap_rng_below(r, (uint64_t)i + 1);
        int32_t t = a[i];
        a[i] = a[j];
        a[j] = t;
    }
}

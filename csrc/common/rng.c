/* rng.c -- xoshiro256** (Blackman & Vigna), seeded through splitmix64. */
#include "common/rng.h"

#include <math.h>

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

void dc_rng_seed(dc_rng *r, uint64_t seed)
{
    uint64_t x = seed;
    int k;
    for (k = 0; k < 4; k++)
        r->s[k] = splitmix64(&x);
    r->has_spare = 0;
    r->spare = 0.0;
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t dc_rng_next(dc_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

double dc_rng_uniform(dc_rng *r)
{
    return (double)(dc_rng_next(r) >> 11) * 0x1.0p-53;
}

double dc_rng_normal(dc_rng *r)
{
    /* Marsaglia's polar method; the second value is kept for the next call */
    double u, v, s, f;
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    do {
        u = 2.0 * dc_rng_uniform(r) - 1.0;
        v = 2.0 * dc_rng_uniform(r) - 1.0;
        s = u * u + v * v;
    } while (s >= 1.0 || s == 0.0);
    f = sqrt(-2.0 * log(s) / s);
    r->spare = v * f;
    r->has_spare = 1;
    return u * f;
}

double dc_rng_cauchy(dc_rng *r, double loc, double scale)
{
    double u;
    do
        u = dc_rng_uniform(r);
    while (u == 0.5 || u == 0.0);
    return loc + scale * tan(3.14159265358979323846 * (u - 0.5));
}

uint64_t dc_rng_below(dc_rng *r, uint64_t bound)
{
    /* Lemire's multiply-shift with rejection: unbiased */
    uint64_t x, threshold = (0 - bound) % bound;
    for (;;) {
        x = dc_rng_next(r);
        {
            uint64_t hi, lo;
            /* 64x64 -> 128 multiply in two halves (portable C11) */
            uint64_t a_lo = x & 0xffffffffu, a_hi = x >> 32;
            uint64_t b_lo = bound & 0xffffffffu, b_hi = bound >> 32;
            uint64_t p0 = a_lo * b_lo, p1 = a_lo * b_hi, p2 = a_hi * b_lo, p3 = a_hi * b_hi;
            uint64_t mid = (p0 >> 32) + (p1 & 0xffffffffu) + (p2 & 0xffffffffu);
            lo = (mid << 32) | (p0 & 0xffffffffu);
            hi = p3 + (p1 >> 32) + (p2 >> 32) + (mid >> 32);
            if (lo >= threshold)
                return hi;
        }
    }
}

void dc_rng_split(dc_rng *r, dc_rng *child)
{
    dc_rng_seed(child, dc_rng_next(r) ^ 0x5851f42d4c957f2dULL);
}

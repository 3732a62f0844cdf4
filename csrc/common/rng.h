/* rng.h -- a per-instance seeded PRNG (xoshiro256** seeded by splitmix64).
 * No global state: each run owns one; the same seed gives the same stream. */
#ifndef DC_RNG_H
#define DC_RNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct dc_rng {
    uint64_t s[4];
    int has_spare;
    double spare;
} dc_rng;

void dc_rng_seed(dc_rng *r, uint64_t seed);
uint64_t dc_rng_next(dc_rng *r);
double dc_rng_uniform(dc_rng *r);               /* [0, 1) with 53 random bits */
double dc_rng_normal(dc_rng *r);                /* standard normal */
double dc_rng_cauchy(dc_rng *r, double loc, double scale);
uint64_t dc_rng_below(dc_rng *r, uint64_t bound); /* uniform in [0, bound), bound > 0 */
/* An independent stream (for sub-engines and restarts). */
void dc_rng_split(dc_rng *r, dc_rng *child);

#endif

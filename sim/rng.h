/*-------------------------------------------------------------------------
 *
 * rng.h
 *		A small seeded generator (xoshiro256**, seeded by splitmix64), so
 *		that a run with the same seed gives the same figures everywhere.
 *
 * Copyright (c) 2026, walscale developers
 *
 *-------------------------------------------------------------------------
 */
#ifndef SIM_RNG_H
#define SIM_RNG_H

#include <stdint.h>

typedef struct Rng
{
	uint64_t	s[4];
} Rng;

static inline uint64_t
rng_rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

static inline void
rng_seed(Rng *rng, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
	{
		uint64_t	z = (seed += UINT64_C(0x9E3779B97F4A7C15));

		z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
		z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
		rng->s[i] = z ^ (z >> 31);
	}
}

static inline uint64_t
rng_next(Rng *rng)
{
	uint64_t   *s = rng->s;
	uint64_t	result = rng_rotl(s[1] * 5, 7) * 9;
	uint64_t	t = s[1] << 17;

	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rng_rotl(s[3], 45);
	return result;
}

/* uniform in [0, 1) */
static inline double
rng_double(Rng *rng)
{
	return (rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

/* uniform in [0, n), n > 0 */
static inline uint64_t
rng_range(Rng *rng, uint64_t n)
{
	return rng_next(rng) % n;
}

#endif							/* SIM_RNG_H */

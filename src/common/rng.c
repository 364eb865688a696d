/* See rng.h. */
#include "common/rng.h"

uint64_t rng_seed(uint64_t seed)
{
	return seed ? seed : 0x9e3779b97f4a7c15ULL;
}

uint64_t rng_next(uint64_t *state)
{
	*state ^= *state >> 12;
	*state ^= *state << 25;
	*state ^= *state >> 27;
	return *state * 0x2545f4914f6cdd1dULL;
}

double rng_uniform(uint64_t *state)
{
	return (double)(rng_next(state) >> 11) / 9007199254740992.0;
}

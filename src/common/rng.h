/* xorshift64*: the one pseudo-random generator of ebb (backoff jitter,
 * the local provider's simulated faults, the simulator's reclaims).
 * Repeatable from a seed, which is what tests and replays need; not for
 * secrets. The state is the caller's: no globals. */
#ifndef EBB_RNG_H
#define EBB_RNG_H

#include <stdint.h>

/* A state from seed; 0 is a valid seed (xorshift needs a nonzero state). */
uint64_t rng_seed(uint64_t seed);
uint64_t rng_next(uint64_t *state);
/* Uniform in [0, 1), 53 bits. */
double rng_uniform(uint64_t *state);

#endif

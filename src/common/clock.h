/* The injected clock. Every module reads time through one of these so that
 * tests and the simulator can move time forward instead of sleeping. */
#ifndef EBB_CLOCK_H
#define EBB_CLOCK_H

#include <stdint.h>

struct clock {
	int64_t (*read_ms)(const struct clock *);
	/* Real clock: an offset added to the wall clock (tests advance it).
	 * Virtual clock: the time itself. */
	int64_t base_ms;
};

void clock_init_real(struct clock *c);
void clock_init_virtual(struct clock *c, int64_t start_ms);
void clock_advance(struct clock *c, int64_t ms);

/* Milliseconds since the Unix epoch, as this clock sees them. */
static inline int64_t clock_now(const struct clock *c) { return c->read_ms(c); }

/* The host's monotonic clock in milliseconds, for measuring intervals that
 * no test needs to move (benchmarks, log timestamps are wall time). */
int64_t clock_monotonic_ms(void);
/* The same in nanoseconds, for what takes less than a millisecond. */
int64_t clock_monotonic_ns(void);

#endif

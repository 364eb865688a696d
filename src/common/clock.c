/* Real and virtual clocks behind one interface (see clock.h). */
#include "common/clock.h"

#include <time.h>

static int64_t ts_ms(clockid_t id)
{
	struct timespec ts;
	clock_gettime(id, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int64_t read_real(const struct clock *c) { return ts_ms(CLOCK_REALTIME) + c->base_ms; }
static int64_t read_virtual(const struct clock *c) { return c->base_ms; }

void clock_init_real(struct clock *c)
{
	c->read_ms = read_real;
	c->base_ms = 0;
}

void clock_init_virtual(struct clock *c, int64_t start_ms)
{
	c->read_ms = read_virtual;
	c->base_ms = start_ms;
}

void clock_advance(struct clock *c, int64_t ms) { c->base_ms += ms; }

int64_t clock_monotonic_ms(void) { return ts_ms(CLOCK_MONOTONIC); }

int64_t clock_monotonic_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

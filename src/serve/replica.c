/* See replica.h. */
#include "serve/replica.h"

#include <stdlib.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/timer.h"

/* How often the store's clock is read again: the two drift apart by
 * well under a millisecond in this time. */
#define CLOCK_EVERY_MS 60000

struct replica {
	struct store *store;
	struct clock *clock;
	struct replica_hooks hooks;
	struct event_base *base;
	struct event *tick, *wake; /* wake: on the store's wake_fd, NULL while broken */
	int leads;
	int64_t clock_read_ms; /* when the store's clock was read (monotonic) */
};

/* The store's clock, read halfway through the round trip. */
static void follow_clock(struct replica *r)
{
	int64_t before = clock_now(r->clock), at, after, offset;

	if (store_now_ms(r->store, &at) != 0)
		return;
	after = clock_now(r->clock);
	offset = at - (before + after) / 2;
	r->clock->base_ms += offset;
	if (r->clock_read_ms == 0 && (offset > 1000 || offset < -1000))
		log_warn("this machine's clock is off the database's: serve keeps the database's",
			 "offset_ms=%lld", (long long)offset);
	r->clock_read_ms = clock_monotonic_ms();
}

static void on_wake(evutil_socket_t fd, short what, void *arg)
{
	struct replica *r = arg;
	int rc = store_woken(r->store);

	(void)fd, (void)what;
	if (rc < 0) {
		log_warn("lost the other serves' word: listening again", "error=\"%s\"", store_error(r->store));
		event_free(r->wake);
		r->wake = NULL;
		return;
	}
	if (rc > 0)
		r->hooks.woken(r->hooks.arg);
}

/* Listens (again): what came meanwhile is not known, so it counts as
 * a word (told: to the hooks). */
static void listen_again(struct replica *r, int told)
{
	int fd = store_wake_fd(r->store);

	if (fd < 0)
		return;
	if (!(r->wake = event_new(r->base, fd, EV_READ | EV_PERSIST, on_wake, r)) || event_add(r->wake, NULL) != 0) {
		if (r->wake)
			event_free(r->wake);
		r->wake = NULL;
		return;
	}
	if (told)
		r->hooks.woken(r->hooks.arg);
}

static void on_tick(evutil_socket_t fd, short what, void *arg)
{
	struct replica *r = arg;
	int rc;

	(void)fd, (void)what;
	/* The leader asks too: whether its lock still holds (store.h). */
	rc = store_lead(r->store);
	if (rc < 0)
		log_error("cannot ask for the leader's lock", "error=\"%s\"", store_error(r->store));
	if (rc == 1 && !r->leads) {
		r->leads = 1;
		log_info("leading: this serve runs the scaler now", "store=%s", store_kind(r->store));
		r->hooks.lead(r->hooks.arg);
	}
	if (!r->wake)
		listen_again(r, 1);
	if (clock_monotonic_ms() - r->clock_read_ms >= CLOCK_EVERY_MS)
		follow_clock(r);
	r->hooks.tick(r->hooks.arg);
	timer_add_ms(r->tick, REPLICA_TICK_MS);
}

struct replica *replica_new(struct event_base *base, struct store *st, struct clock *clock,
			    const struct replica_hooks *hooks, int *leads)
{
	struct replica *r = mem_calloc(1, sizeof *r);

	if (!r)
		return NULL;
	r->store = st;
	r->clock = clock;
	r->hooks = *hooks;
	r->base = base;
	follow_clock(r);
	r->leads = !store_shared(st) || store_lead(st) == 1;
	*leads = r->leads;
	if (!store_shared(st))
		return r;
	if (!(r->tick = evtimer_new(base, on_tick, r))) {
		free(r);
		return NULL;
	}
	timer_add_ms(r->tick, REPLICA_TICK_MS);
	listen_again(r, 0);
	log_info(r->leads ? "leading: this serve runs the scaler" : "following: another serve runs the scaler",
		 "store=%s", store_kind(st));
	return r;
}

void replica_free(struct replica *r)
{
	if (!r)
		return;
	if (r->tick)
		event_free(r->tick);
	if (r->wake)
		event_free(r->wake);
	free(r);
}


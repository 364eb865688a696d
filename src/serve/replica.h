/* One of several serves on one shared store ([postgres] active,
 * docs/HA.md): every serve answers the whole API, and the one that holds
 * the store's lock leads: it alone runs the scaler and the alerts and
 * calls the provider. This module keeps the serve in step with the
 * others: it asks for the lock until it leads (then tells the server,
 * once), keeps time by the store's clock, hears the others' word that a
 * job became ready, and looks at the deadlines they set. */
#ifndef EBB_REPLICA_H
#define EBB_REPLICA_H

#include <event2/event.h>

#include "common/clock.h"
#include "store/store.h"

struct replica;

struct replica_hooks {
	void *arg;
	/* This serve leads from now on. */
	void (*lead)(void *arg);
	/* Another serve's word came (or may have been missed): a job may
	 * be ready, or a deadline nearer. */
	void (*woken)(void *arg);
	/* Every REPLICA_TICK_MS, after the bid for the lead. */
	void (*tick)(void *arg);
};

#define REPLICA_TICK_MS 250

/* Sets clock to the store's when it has one (every store with a clock,
 * shared or not: a standby that takes over keeps the same time). For a
 * shared store, starts asking for the lock and listening; *leads: the
 * serve leads from the start. NULL when out of memory. */
struct replica *replica_new(struct event_base *base, struct store *st, struct clock *clock,
			    const struct replica_hooks *hooks, int *leads);
void replica_free(struct replica *r);

#endif

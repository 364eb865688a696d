/* The provider interface: where instances come from. Each engine is a
 * table of functions, like the store's. */
#ifndef EBB_PROVIDER_H
#define EBB_PROVIDER_H

#include <event2/event.h>
#include <stddef.h>

#include "common/config.h"
#include "common/instance.h"

struct provider;

/* Called for each instance the provider still has, by its provider_ref. */
typedef void (*provider_ref_cb)(void *arg, const char *ref);

struct provider_ops {
	const char *name;
	/* Starts inst (id, offer, gpus set); fills provider_ref and gpu_ids.
	 * -1 with the reason in err: a capacity error or a broken setup. */
	int (*launch)(struct provider *, struct instance *inst, char *err, size_t errsize);
	int (*terminate)(struct provider *, const struct instance *inst);
	int (*list)(struct provider *, provider_ref_cb cb, void *arg);
	/* Takes charge again of an instance a previous serve started, if it
	 * still runs (a restart must not lose a busy worker): 0 if adopted. */
	int (*adopt)(struct provider *, const struct instance *inst);
	/* Simulates a spot reclaim of inst, whose notice serve serves from
	 * now: the instance is killed [local] reclaim_notice later. NULL when
	 * the provider cannot (its reclaims are the cloud's). */
	int (*reclaim)(struct provider *, const struct instance *inst);
	void (*close)(struct provider *);
};

struct provider {
	const struct provider_ops *ops;
};

/* What a provider needs to start a worker that can reach serve. */
struct provider_env {
	const struct config *cfg;
	struct event_base *base;
	const char *server_url;
	const char *worker_token; /* NULL when the API is open */
	/* Called when an instance may have gone, so the scaler looks again. */
	void (*changed)(void *arg);
	void *changed_arg;
	/* Called with changed_arg when the provider starts a simulated spot
	 * reclaim of an instance: serve serves its notice from then on. */
	void (*notice)(void *arg, int64_t instance);
};

/* NULL for kind = none. */
struct provider *provider_open(const struct provider_env *env, char *err, size_t errsize);
struct provider *provider_local_open(const struct provider_env *env, char *err, size_t errsize);

#endif

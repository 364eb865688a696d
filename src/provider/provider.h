/* Providers: where instances come from. Callers use these functions,
 * never a kind's table; provider_open() picks the kind named by
 * [provider] kind from the registry (provider.c), and each kind brings
 * its own section of keys ([local], ...) through the registry's
 * configuration plug-ins.
 *
 * launch, terminate and list are asynchronous: the call starts the work
 * and returns at once, and its completion callback runs later on serve's
 * loop, never from inside the call, so a cloud that takes a minute to
 * answer never blocks the API. A callback runs at most once; none runs
 * after provider_close(). */
#ifndef EBB_PROVIDER_H
#define EBB_PROVIDER_H

#include <event2/event.h>
#include <stddef.h>

#include "common/config.h"
#include "common/instance.h"
#include "common/offer.h"

struct provider;

#define PROVIDER_DATA_MAX 4096

/* What a launch came to. */
struct launch_result {
	int ok;
	int no_capacity;       /* not ok for want of capacity: try another offer or market */
	int passing;           /* not ok for a shortage of its own that passes: try again, nothing rests */
	char ref[256];         /* ok: the provider's own name for it (local: "pid:N") */
	char gpu_ids[128];     /* ok: its GPUs as CUDA_VISIBLE_DEVICES names them */
	/* ok: a JSON object the provider wants back at terminate; "" for none */
	char data[PROVIDER_DATA_MAX + 1];
	char error[300];       /* not ok: why */
};

/* An instance the provider has. */
struct provider_item {
	const char *ref;
	int64_t instance; /* ebb's id, from its tag; 0: none */
	const char *offer; /* an offer it was listed for ("" when it cannot say) */
	int terminating;   /* on its way out: not a leak */
	int stopped;       /* it exists and bills, but runs nothing: to end */
};

typedef void (*launch_cb)(void *arg, int64_t instance, const struct launch_result *r);
/* ok 0: the instance may still run (and bill); error says why. */
typedef void (*terminate_cb)(void *arg, int64_t instance, int ok, const char *error);
/* items: every instance the provider has; error NULL when the list is
 * complete, or why it could not be made (items then empty). */
typedef void (*list_cb)(void *arg, const struct provider_item *items, int n, const char *error);

/* What a provider needs from serve. */
struct provider_env {
	const struct config *cfg;
	struct event_base *base;
	const struct offer *offers; /* the catalogue as configured */
	int noffers;
	const char *server_url;   /* where workers reach serve */
	/* An instance may have gone by itself (a worker exited): the scaler
	 * looks again. */
	void (*changed)(void *arg);
	/* The provider starts a simulated spot reclaim of an instance: serve
	 * serves its notice from now on. */
	void (*notice)(void *arg, int64_t instance);
	void *arg; /* of changed and notice */
};

/* Would provider_open succeed with cfg, as far as the configuration and
 * the files it names can tell: the kind's program, [provider]
 * worker_cacert. 0 (always, for kind = none), or -1 with the reason in
 * err. serve asks before it starts, `ebb config -c` with it. */
int provider_check(const struct config *cfg, char *err, size_t errsize);
/* NULL for kind = none, or on error (with the reason in err). */
struct provider *provider_open(const struct provider_env *env, char *err, size_t errsize);
void provider_close(struct provider *p);
const char *provider_name(const struct provider *p);

/* Starts inst (id, offer, market, gpus, vram_gb set), whose worker
 * authenticates with token (NULL when the API is open). */
void provider_launch(struct provider *p, const struct instance *inst, const char *token, launch_cb done,
		     void *arg);
/* Ends inst (its provider_ref may be empty: the provider never said it),
 * with the data its launch gave (NULL: none). */
void provider_terminate(struct provider *p, const struct instance *inst, const char *data, terminate_cb done,
			void *arg);
void provider_list(struct provider *p, list_cb done, void *arg);
/* Takes charge again of an instance a previous serve started, if it
 * still runs (a restart must not lose a busy worker): 0 if adopted. */
int provider_adopt(struct provider *p, const struct instance *inst);
/* Can the provider simulate a spot reclaim (the local provider)? */
int provider_can_reclaim(const struct provider *p);
/* Simulates a spot reclaim of inst, whose notice serve serves from now:
 * the instance is killed provider_notice_ms() later. */
int provider_reclaim(struct provider *p, const struct instance *inst);
/* Notice to kill of a reclaim the provider simulates, ms; 0: none. */
int64_t provider_notice_ms(const struct provider *p);
/* How often the scaler asks for the list, ms: 0, before every run (a
 * list that costs nothing), or at most once per that time (a cloud's,
 * which costs an API call and seconds). */
int64_t provider_list_interval_ms(const struct provider *p);

/* The kinds' shares of the configuration, for struct conf_plugins. */
extern const struct conf_plugin *const provider_plugins[];

#endif

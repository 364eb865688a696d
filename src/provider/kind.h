/* The contract between the provider front end (provider.c) and each kind
 * of provider, as store/engine.h is the store's. Only provider.c and the
 * kinds include this file.
 *
 * A kind keeps these promises:
 * - launch, terminate and list return at once and call their callback
 *   later, from the loop (an event of env->base), exactly once, unless
 *   the provider is closed first; close cancels what is pending.
 * - launch fills ref with a name that list will report for as long as
 *   the instance exists; a launch that fails for want of capacity says so
 *   (no_capacity), so that the scaler tries another offer or market.
 * - list reports every instance the kind has, launched by this serve or
 *   adopted from an earlier one.
 *
 * To add a kind: a file in provider/ defining a `const struct
 * provider_kind` (its name, its keys, its functions), and its entry in
 * provider.c's registry. */
#ifndef EBB_PROVIDER_KIND_H
#define EBB_PROVIDER_KIND_H

#include <limits.h>

#include "provider/provider.h"

/* The `ebb worker` an instance runs: its arguments (argv[0] is "ebb";
 * argv NULL-terminated, room for a kind's own after argc) and the token it
 * authenticates with, which goes in its environment as EBB_TOKEN, never
 * among its arguments. */
struct worker_cmd {
	const char *argv[32];
	int argc;
	const char *token;  /* NULL when the API is open */
	const char *cacert; /* [provider] worker_cacert made absolute, for EBB_CACERT on this
			     * machine; NULL: the system's CAs */
	char id[32], gpus[16], vram[16], orphan[32], notice[1300];
};

/* The worker command of inst, as every kind starts it. */
void provider_worker_cmd(const struct provider *p, const struct instance *inst, const char *token,
			 struct worker_cmd *w);

struct provider_kind {
	/* Its name ([provider] kind) and its own section of keys. First: the
	 * registry lists these. */
	struct conf_plugin conf;
	/* What the kind needs of the configuration (conf: its section's
	 * values) and the files it names, before it opens: 0, or -1 with the
	 * reason in err. NULL: nothing beyond its keys' own checks. Made by
	 * provider_check and again by provider_open. */
	int (*check)(const struct config *cfg, const void *conf, char *err, size_t errsize);
	/* Sets p->impl; -1 with the reason in err. */
	int (*open)(struct provider *p, char *err, size_t errsize);
	void (*close)(struct provider *p);
	void (*launch)(struct provider *p, const struct instance *inst, const char *token, launch_cb done,
		       void *arg);
	void (*terminate)(struct provider *p, const struct instance *inst, const char *data, terminate_cb done,
			  void *arg);
	void (*list)(struct provider *p, list_cb done, void *arg);
	int (*adopt)(struct provider *p, const struct instance *inst);
	/* NULL: its reclaims are the cloud's, not simulated. */
	int (*reclaim)(struct provider *p, const struct instance *inst);
	int64_t (*notice_ms)(const struct provider *p);
	/* NULL: list is cheap and exact, asked before every scaler run. */
	int64_t (*list_interval_ms)(const struct provider *p);
};

struct provider {
	const struct provider_kind *kind;
	void *impl;
	struct provider_env env; /* server_url points at the copy below */
	char server_url[1100];
	const void *conf; /* the values of the kind's section, or NULL */
	/* [provider] worker_cacert, read at open: its absolute path and its
	 * text (for a kind whose workers run elsewhere); "" and NULL when
	 * not set. */
	char worker_cacert[PATH_MAX];
	char *worker_cacert_pem;
};

#endif

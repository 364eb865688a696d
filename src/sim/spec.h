/* Policy specs for `ebb sim` and `ebb tune`: "NAME[:k=v,...]" read into
 * the policy a replay runs (sim.h). ebb's knobs are overrides of its
 * config, and the policy keeps the settings plan() gets from that config;
 * a baseline's knobs are its own. */
#ifndef EBB_SPEC_H
#define EBB_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "common/offer.h"
#include "policy/plan.h"

struct sim_policy; /* sim_policy.h: the policies' registry */

struct policy {
	const struct sim_policy *kind;
	char spec[512]; /* as given, for the output */
	/* ebb: the config with the policy's overrides applied, and the
	 * settings plan() gets, read from it by plan_settings_from_config()
	 * alone, as serve reads its own */
	struct config cfg;
	struct plan_settings settings;
	/* baselines: one offer and market */
	int offer;
	enum market market;
	/* the kind's own knobs (sim_policy.params_size bytes; NULL: none) */
	void *params;
};

/* Whether the policy launches on every offer (ebb, keda with
 * placement=cheapest, the clairvoyant), not on one. */
int policy_any_offer(const struct policy *p);

/* The specs `ebb sim` replays when given none, into out (room for
 * POLICY_MAX_DEFAULTS): every policy, and with several offers, the
 * variants they run with those. Returns how many. */
#define POLICY_MAX_DEFAULTS 16
int policy_defaults(int several_offers, const char **out);

/* Parses "NAME[:k=v,...]" with the config at config_path (NULL: the
 * defaults), which may name plugins. ebb takes SECTION.KEY=VALUE
 * overrides of that config. */
int policy_parse(const char *spec, const char *config_path, const struct conf_plugins *plugins,
		 struct policy *out, char *err, size_t errsize);
void policy_free(struct policy *p);

#endif

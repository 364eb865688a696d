/* See instance.h. */
#include "common/instance.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonin.h"

static const char *const state_names[INST_NSTATES] = {
	"requested", "booting", "idle", "busy", "draining", "terminated",
};

const char *instance_state_name(enum instance_state s) { return state_names[s]; }

int instance_state_parse(const char *name)
{
	for (int i = 0; i < INST_NSTATES; i++) {
		if (strcmp(name, state_names[i]) == 0)
			return i;
	}
	return -1;
}

json_t *instance_to_json(const struct instance *i, int64_t now_ms)
{
	json_t *o = json_object();

	json_object_set_new(o, "id", json_integer(i->id));
	json_object_set_new(o, "state", json_string(instance_state_name(i->state)));
	json_object_set_new(o, "offer", json_string(i->offer));
	json_object_set_new(o, "market", json_string(market_name(i->market)));
	json_object_set_new(o, "gpus", json_integer(i->gpus));
	json_object_set_new(o, "gpu_ids", json_string(i->gpu_ids));
	json_object_set_new(o, "provider_ref", json_string(i->provider_ref));
	json_object_set_new(o, "launched_at", json_seconds(i->launched_ms));
	json_object_set_new(o, "registered_at", json_seconds(i->registered_ms));
	json_object_set_new(o, "terminated_at", json_seconds(i->terminated_ms));
	json_object_set_new(o, "idle_s", i->state == INST_IDLE && i->idle_since_ms
				 ? json_real((double)(now_ms - i->idle_since_ms) / 1000.0) : json_null());
	json_object_set_new(o, "job", i->job_id ? json_integer(i->job_id) : json_null());
	json_object_set_new(o, "reason", json_string(i->reason));
	json_object_set_new(o, "billed_s", json_real((double)i->billed_ms / 1000.0));
	json_object_set_new(o, "cost_usd", json_real(i->cost));
	json_object_set_new(o, "reclaim_notice", json_boolean(i->reclaim_at_ms != 0));
	json_object_set_new(o, "team", i->team[0] ? json_string(i->team) : json_null());
	return o;
}

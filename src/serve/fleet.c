/* Instance transitions (see fleet.h). */
#include "serve/fleet.h"

#include <stdio.h>
#include <string.h>

#include "serve/ledger.h"
#include "common/log.h"

int fleet_set_state(struct server *s, struct instance *inst, enum instance_state state,
		    const char *reason)
{
	char quoted[400];

	if (ledger_transition(s, inst, state) != 0)
		return -1;
	if (inst->state != state)
		log_info("instance", "id=%lld from=%s to=%s reason=%s", (long long)inst->id,
			 instance_state_name(inst->state), instance_state_name(state),
			 log_quote(quoted, sizeof quoted, reason));
	inst->state = state; /* updated_ms: set by the ledger, the same instant */
	if (state == INST_TERMINATED)
		inst->terminated_ms = inst->updated_ms;
	snprintf(inst->reason, sizeof inst->reason, "%s", reason);
	return s->store->ops->instance_update(s->store, inst);
}

static int load(struct server *s, int64_t id, struct instance *out, struct ebb_error *err)
{
	int rc = s->store->ops->instance_get(s->store, id, out);

	if (rc < 0)
		return error_set(err, 500, "store", NULL, "store: %s", s->store->errmsg);
	if (rc == STORE_NOT_FOUND)
		return error_set(err, 404, "not_found", NULL, "no instance %lld", (long long)id);
	return 0;
}

int fleet_register(struct server *s, int64_t id, struct instance *out, struct ebb_error *err)
{
	if (load(s, id, out, err) != 0)
		return -1;
	if (out->state == INST_TERMINATED || out->state == INST_DRAINING)
		return error_set(err, 409, "instance_gone", NULL, "instance %lld is %s: %s", (long long)id,
				 instance_state_name(out->state), out->reason);
	if (out->state != INST_REQUESTED && out->state != INST_BOOTING)
		return 0; /* a worker that restarted on its instance */
	out->registered_ms = out->idle_since_ms = clock_now(&s->clock);
	out->job_id = 0;
	s->store->ops->offer_stat_add(s->store, &(struct offer_stat){
		.offer = out->offer, .market = out->market, .boots = 1,
		.boot_ms = out->registered_ms - out->launched_ms});
	return fleet_set_state(s, out, INST_IDLE, "worker registered") == 0
		       ? 0 : error_set(err, 500, "store", NULL, "store: %s", s->store->errmsg);
}

void fleet_worker_job(struct server *s, const char *worker, int64_t job_id)
{
	int64_t id = instance_id_of_worker(worker);
	struct instance inst;
	char why[64];

	if (!id || s->store->ops->instance_get(s->store, id, &inst) != 0 ||
	    inst.state == INST_TERMINATED || inst.job_id == job_id)
		return;
	inst.job_id = job_id;
	if (job_id) {
		snprintf(why, sizeof why, "runs job %lld", (long long)job_id);
		fleet_set_state(s, &inst, inst.state == INST_DRAINING ? INST_DRAINING : INST_BUSY, why);
		return;
	}
	inst.idle_since_ms = clock_now(&s->clock);
	if (inst.state == INST_DRAINING)
		fleet_set_state(s, &inst, INST_DRAINING, "draining, its job is done");
	else
		fleet_set_state(s, &inst, INST_IDLE, "no job");
}

int fleet_worker_may_lease(struct server *s, const char *worker)
{
	int64_t id = instance_id_of_worker(worker);
	struct instance inst;

	if (!id || s->store->ops->instance_get(s->store, id, &inst) != 0)
		return 1;
	return inst.state != INST_DRAINING && inst.state != INST_TERMINATED;
}

int fleet_drain(struct server *s, int64_t id, const char *reason, struct instance *out,
		struct ebb_error *err)
{
	if (load(s, id, out, err) != 0)
		return -1;
	if (out->state == INST_TERMINATED)
		return error_set(err, 409, "instance_gone", NULL, "instance %lld is already terminated",
				 (long long)id);
	return fleet_set_state(s, out, INST_DRAINING, reason) == 0
		       ? 0 : error_set(err, 500, "store", NULL, "store: %s", s->store->errmsg);
}

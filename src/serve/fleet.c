/* Instance transitions (see fleet.h). */
#include "serve/fleet.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"

void fleet_init(struct fleet *f, struct store *st, const struct clock *clock, struct ledger *l)
{
	f->store = st;
	f->clock = clock;
	f->ledger = l;
}

int fleet_set_state(struct fleet *f, struct instance *inst, enum instance_state state,
		    const char *reason)
{
	char quoted[400];

	if (ledger_transition(f->ledger, inst, state) != 0)
		return -1;
	if (inst->state != state)
		log_info("instance", "id=%lld from=%s to=%s reason=%s", (long long)inst->id,
			 instance_state_name(inst->state), instance_state_name(state),
			 log_quote(quoted, sizeof quoted, reason));
	inst->state = state; /* updated_ms: set by the ledger, the same instant */
	if (state == INST_TERMINATED)
		inst->terminated_ms = inst->updated_ms;
	snprintf(inst->reason, sizeof inst->reason, "%s", reason);
	return store_instance_update(f->store, inst);
}

int fleet_get(struct fleet *f, int64_t id, struct instance *out, struct ebb_error *err)
{
	int rc = store_instance_get(f->store, id, out);

	if (rc < 0)
		return store_failure(f->store, err);
	if (rc == STORE_NOT_FOUND)
		return error_set(err, 404, "not_found", NULL, "no instance %lld", (long long)id);
	return 0;
}

int fleet_register(struct fleet *f, int64_t id, struct instance *out, struct ebb_error *err)
{
	if (fleet_get(f, id, out, err) != 0)
		return -1;
	if (out->state == INST_TERMINATED || out->state == INST_DRAINING)
		return error_set(err, 409, "instance_gone", NULL, "instance %lld is %s: %s", (long long)id,
				 instance_state_name(out->state), out->reason);
	if (out->state != INST_REQUESTED && out->state != INST_BOOTING)
		return 0; /* a worker that restarted on its instance */
	out->registered_ms = out->idle_since_ms = clock_now(f->clock);
	out->job_id = 0;
	if (store_offer_stat_add(f->store, &(struct offer_stat){
			.offer = out->offer, .market = out->market, .boots = 1,
			.boot_ms = out->registered_ms - out->launched_ms}) != 0 ||
	    fleet_set_state(f, out, INST_IDLE, "worker registered") != 0)
		return store_failure(f->store, err);
	return 0;
}

/* The instance runs job_id now, or nothing (0). */
static int run(struct fleet *f, struct instance *inst, int64_t job_id)
{
	char why[64];

	inst->job_id = job_id;
	if (job_id) {
		snprintf(why, sizeof why, "runs job %lld", (long long)job_id);
		return fleet_set_state(f, inst, inst->state == INST_DRAINING ? INST_DRAINING : INST_BUSY, why);
	}
	inst->idle_since_ms = clock_now(f->clock);
	if (inst->state == INST_DRAINING)
		return fleet_set_state(f, inst, INST_DRAINING, "draining, its job is done");
	return fleet_set_state(f, inst, INST_IDLE, "no job");
}

static int among(int64_t id, const int64_t *ids, int n)
{
	for (int k = 0; k < n; k++)
		if (ids[k] == id)
			return 1;
	return 0;
}

/* The newest job leased on the instance (what it is shown to run), 0
 * when none is, or -1 on a store error. */
static int64_t newest_leased(struct fleet *f, int64_t id)
{
	struct job_on on[INSTANCE_GPUS_MAX];
	int n;

	if (store_job_leased_on(f->store, id, on, INSTANCE_GPUS_MAX, &n) != 0)
		return -1;
	return n ? on[n - 1].id : 0;
}

int fleet_worker_asks(struct fleet *f, int64_t id, const int64_t *running, int nrunning, int64_t *held, int *nheld,
		      struct ebb_error *err)
{
	struct instance inst;
	struct job_on leased[INSTANCE_GPUS_MAX];
	int64_t runs = 0;
	int rc, n = 0;

	*nheld = 0;
	if (!id)
		return 1;
	if ((rc = store_instance_get(f->store, id, &inst)) == STORE_NOT_FOUND)
		return 1;
	if (rc != 0 || (inst.state != INST_TERMINATED &&
			store_job_leased_on(f->store, id, leased, INSTANCE_GPUS_MAX, &n) != 0))
		return store_failure(f->store, err);
	for (int k = 0; k < n; k++) {
		if (among(leased[k].id, running, nrunning))
			runs = leased[k].id;
		else
			held[(*nheld)++] = leased[k].id;
	}
	if (inst.state != INST_TERMINATED && runs != inst.job_id && run(f, &inst, runs) != 0)
		return store_failure(f->store, err);
	return inst.state != INST_DRAINING && inst.state != INST_TERMINATED;
}

int fleet_may_lease(struct fleet *f, int64_t id)
{
	struct instance inst;
	int rc;

	if (!id || (rc = store_instance_get(f->store, id, &inst)) == STORE_NOT_FOUND)
		return 1;
	if (rc != 0)
		return -1;
	return inst.state != INST_DRAINING && inst.state != INST_TERMINATED;
}

int fleet_drain(struct fleet *f, int64_t id, const char *reason, struct instance *out,
		struct ebb_error *err)
{
	if (fleet_get(f, id, out, err) != 0)
		return -1;
	if (out->state == INST_TERMINATED)
		return error_set(err, 409, "instance_gone", NULL, "instance %lld is already terminated",
				 (long long)id);
	return fleet_set_state(f, out, INST_DRAINING, reason) == 0 ? 0 : store_failure(f->store, err);
}

int fleet_lost(struct fleet *f, struct instance *inst, const char *why)
{
	struct offer_stat d = {.offer = inst->offer, .market = inst->market, .lost = 1,
			       .last_lost_ms = clock_now(f->clock)};

	if (store_offer_stat_add(f->store, &d) != 0)
		return -1;
	return fleet_set_state(f, inst, INST_TERMINATED, why);
}

/* A worker that leaves orphaned was lost to serve meanwhile. */
int fleet_leave(struct fleet *f, int64_t id, const char *why, struct instance *out, struct ebb_error *err)
{
	char reason[300];
	int rc;

	if (fleet_get(f, id, out, err) != 0)
		return -1;
	if (out->state == INST_TERMINATED)
		return 0;
	snprintf(reason, sizeof reason, "gone: the worker left (%.200s)", why);
	rc = strcmp(why, WORKER_ORPHANED) == 0 ? fleet_lost(f, out, reason) : fleet_set_state(f, out, INST_TERMINATED, reason);
	return rc == 0 ? 0 : store_failure(f->store, err);
}

/* A run stopped from outside: the instance is going away, and takes no
 * new job; a cloud's reclaim is known to serve from here on, and counts
 * in the offer's observed reclaim rate. */
static int interrupted(struct fleet *f, struct instance *inst, int reclaimed)
{
	if (reclaimed && !inst->reclaim_at_ms)
		inst->reclaim_at_ms = clock_now(f->clock);
	if ((inst->job_id = newest_leased(f, inst->id)) < 0)
		return -1;
	inst->idle_since_ms = clock_now(f->clock);
	return fleet_set_state(f, inst, INST_DRAINING, "its job was interrupted: it is going away");
}

/* A job beside the one the instance is shown to run ended: the same
 * state, its cost split anew among the jobs left (ledger.c). */
static int beside_ended(struct fleet *f, struct instance *inst)
{
	char reason[sizeof inst->reason];

	if (inst->state != INST_BUSY && inst->state != INST_DRAINING)
		return 0;
	snprintf(reason, sizeof reason, "%s", inst->reason);
	return fleet_set_state(f, inst, inst->state, reason);
}

int fleet_on_job(void *arg, const struct job_change *c)
{
	struct fleet *f = arg;
	const struct job *job = c->job;
	struct instance inst;
	int64_t next;
	int rc;

	if (!job->instance || (job->state != JOB_LEASED && c->from != JOB_LEASED))
		return 0;
	if ((rc = store_instance_get(f->store, job->instance, &inst)) == STORE_NOT_FOUND)
		return 0;
	if (rc != 0)
		return -1;
	if (inst.state == INST_TERMINATED)
		return 0;
	if (job->state == JOB_LEASED)
		return inst.job_id == job->id ? 0 : run(f, &inst, job->id);
	/* The lease ended. A run stopped from outside means the instance is
	 * going away; otherwise it runs the jobs still leased on it, or is
	 * idle, unless it had moved on already (its worker asked for another
	 * job). */
	if (c->interrupted)
		return interrupted(f, &inst, c->reclaimed);
	if (inst.job_id != job->id)
		return inst.job_id ? beside_ended(f, &inst) : 0;
	return (next = newest_leased(f, inst.id)) < 0 ? -1 : run(f, &inst, next);
}

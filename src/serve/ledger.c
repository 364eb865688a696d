/* See ledger.h. */
#include "serve/ledger.h"

#include <string.h>

#include "common/log.h"

double ledger_usd_per_ms(const struct server *s, const struct instance *inst)
{
	const struct offer *o = server_offer(s, inst->offer);

	return o && o->price[inst->market] > 0 ? o->price[inst->market] / 3600000.0 : 0;
}

static const char *kind_of(enum instance_state state, int64_t job)
{
	switch (state) {
	case INST_REQUESTED:
	case INST_BOOTING:
		return "boot";
	case INST_BUSY:
		return "job";
	case INST_DRAINING:
		return job ? "job" : "idle";
	case INST_IDLE:
		return "idle";
	default:
		return NULL;
	}
}

/* A job's run on an instance ended: its cost, and what the run says of
 * the offer's speed. */
static void job_run_ended(struct server *s, const struct instance *inst, const struct segment *g)
{
	struct offer_stat d = {.offer = inst->offer, .market = inst->market};
	int64_t run_ms = g->end_ms - g->start_ms;
	struct job job;

	s->store->ops->job_add_cost(s->store, g->job, g->cost);
	if (s->store->ops->job_get(s->store, g->job, &job) != 0)
		return;
	/* A drain during the run split it into two segments: the run is the
	 * attempt's, from its lease. */
	if (job.started_ms > 0 && job.started_ms < g->start_ms)
		run_ms = g->end_ms - job.started_ms;
	if (job.state == JOB_SUCCEEDED && run_ms > 0) {
		d.runs = 1;
		d.items = job.items_done - job.items_start;
		d.run_ms = run_ms;
		/* est_s is the run time on the reference GPU: a speed sample. */
		if (job.est_s > 0 && job.items_start == 0) {
			d.speed_sum = (double)job.est_s * 1000.0 / (double)run_ms;
			d.speed_n = 1;
		}
		s->store->ops->offer_stat_add(s->store, &d);
	}
	job_free(&job);
}

static int terminate(struct server *s, struct instance *inst, int64_t now)
{
	const struct offer *o = server_offer(s, inst->offer);
	struct offer_stat d = {.offer = inst->offer, .market = inst->market};
	int64_t lifetime = now - inst->launched_ms;
	struct segment rest = {.instance = inst->id, .job = 0, .start_ms = now};

	strcpy(rest.kind, "billing");
	/* Still requested: the provider refused the launch, nothing ran and
	 * nothing is billed (no billing minimum). */
	inst->billed_ms = o && inst->state != INST_REQUESTED ? offer_billed_ms(o, lifetime) : lifetime;
	inst->cost = o ? offer_cost(o, inst->market, inst->billed_ms) : 0;
	rest.end_ms = now + (inst->billed_ms - lifetime);
	rest.cost = (double)(rest.end_ms - rest.start_ms) * ledger_usd_per_ms(s, inst);
	d.alive_ms = lifetime;
	d.reclaims = inst->reclaim_at_ms != 0;
	s->store->ops->offer_stat_add(s->store, &d);
	return s->store->ops->segment_open(s->store, &rest);
}

int ledger_transition(struct server *s, struct instance *inst, enum instance_state to)
{
	/* A launch's first segment starts at its launch; the instance keeps the
	 * instant of the change (fleet_set_state), so that its recorded life
	 * and its segments are the same span to the millisecond. */
	int64_t now = to == INST_REQUESTED && inst->launched_ms ? inst->launched_ms : clock_now(&s->clock);
	const char *kind = kind_of(to, inst->job_id);
	struct segment closed;
	int rc = s->store->ops->segment_close(s->store, inst->id, now, ledger_usd_per_ms(s, inst), &closed);

	if (rc < 0)
		return -1;
	inst->updated_ms = now;
	if (rc == 0 && strcmp(closed.kind, "job") == 0 && closed.job)
		job_run_ended(s, inst, &closed);
	if (to == INST_TERMINATED)
		return inst->state == INST_TERMINATED ? 0 : terminate(s, inst, now);
	if (kind) {
		struct segment next = {.instance = inst->id, .job = strcmp(kind, "job") == 0 ? inst->job_id : 0,
				       .start_ms = now};
		strcpy(next.kind, kind);
		return s->store->ops->segment_open(s->store, &next);
	}
	return 0;
}

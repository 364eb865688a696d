/* See ledger.h. */
#include "serve/ledger.h"

#include <math.h>
#include <string.h>

static const struct offer *offer_of(const struct ledger *l, const char *name)
{
	int k = offer_index(l->offers, l->noffers, name);

	return k >= 0 ? &l->offers[k] : NULL;
}

double ledger_usd_per_hour(const struct ledger *l, const char *offer, enum market m)
{
	const struct offer *o = offer_of(l, offer);

	return o && o->price[m] > 0 ? o->price[m] : 0;
}

double ledger_usd_per_ms(const struct ledger *l, const char *offer, enum market m)
{
	return ledger_usd_per_hour(l, offer, m) / 3600000.0;
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

#define DAY_MS (86400LL * 1000)

/* A closed segment into the running sums (store_ledger_add): each UTC day
 * it covers gets its share of its time, GPU time and cost, and the day it
 * ends gets the items a job run did. */
static int add_up(struct ledger *l, const struct instance *inst, const struct segment *g, const char *team,
		  int64_t items)
{
	struct ledger_sum d = {.offer = inst->offer, .market = inst->market, .kind = g->kind, .team = team};
	int64_t len = g->end_ms - g->start_ms, day = g->start_ms / DAY_MS;
	double share = segment_share(g, inst->gpus);

	do {
		int64_t from = g->start_ms > day * DAY_MS ? g->start_ms : day * DAY_MS;
		int64_t to = g->end_ms < (day + 1) * DAY_MS ? g->end_ms : (day + 1) * DAY_MS;
		int64_t part = to > from ? to - from : 0;
		/* Instance time by the segment's share of it. */
		d.ms = llround((double)part * share);
		d.gpu_ms = (double)part * share * (inst->gpus > 0 ? inst->gpus : 1);
		d.cost = len > 0 ? g->cost * (double)part / (double)len : 0;
		d.items = to >= g->end_ms ? items : 0;
		if ((d.ms || d.items) && store_ledger_add(l->store, day, &d) != 0)
			return -1;
	} while (++day * DAY_MS < g->end_ms);
	return 0;
}

/* A job's run on an instance ended: its cost, what the run says of the
 * offer's speed, and its share of the sums. */
static int job_run_ended(struct ledger *l, const struct instance *inst, const struct segment *g)
{
	struct offer_stat d = {.offer = inst->offer, .market = inst->market};
	int64_t run_ms = g->end_ms - g->start_ms;
	struct job job;
	int rc;

	if (store_job_add_cost(l->store, g->job, g->cost) != 0)
		return -1;
	if ((rc = store_job_get(l->store, g->job, &job)) != 0)
		return rc == STORE_NOT_FOUND ? add_up(l, inst, g, "", 0) : -1;
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
	}
	rc = add_up(l, inst, g, job.team, d.items);
	job_free(&job);
	if (rc != 0)
		return -1;
	return d.runs ? store_offer_stat_add(l->store, &d) : 0;
}

static int terminate(struct ledger *l, struct instance *inst, int64_t now)
{
	const struct offer *o = offer_of(l, inst->offer);
	struct offer_stat d = {.offer = inst->offer, .market = inst->market};
	int64_t lifetime = now - inst->launched_ms;
	struct segment rest = {.instance = inst->id, .job = 0, .start_ms = now};

	strcpy(rest.kind, "billing");
	/* Still requested: the provider refused the launch, nothing ran and
	 * nothing is billed (no billing minimum). */
	inst->billed_ms = o && inst->state != INST_REQUESTED ? offer_billed_ms(o, lifetime) : lifetime;
	inst->cost = o ? offer_cost(o, inst->market, inst->billed_ms) : 0;
	rest.end_ms = now + (inst->billed_ms - lifetime);
	rest.cost = (double)(rest.end_ms - rest.start_ms) * ledger_usd_per_ms(l, inst->offer, inst->market);
	d.alive_ms = lifetime;
	d.reclaims = inst->reclaim_at_ms != 0;
	if (store_offer_stat_add(l->store, &d) != 0 || store_segment_open(l->store, &rest) != 0)
		return -1;
	return add_up(l, inst, &rest, inst->team, 0);
}

/* The part of a GPU job id holds: its type's gpu_share, 0 for a job of
 * whole GPUs (or -1 on a store error). */
static double part_of(struct ledger *l, int64_t id)
{
	struct job j;
	double share;
	int rc;

	if (!l->cfg || l->cfg->ntypes == 0)
		return 0;
	if ((rc = store_job_get(l->store, id, &j)) != 0)
		return rc == STORE_NOT_FOUND ? 0 : -1;
	share = config_gpu_share(l->cfg, j.type);
	job_free(&j);
	return share < 1 ? share : 0;
}

/* Segment g holds `want` GPUs of the `left` no other holds, at most
 * those: whole GPUs in gpus, a part of one (beside shared jobs) in
 * gpu_part. */
static void hold(struct segment *g, double want, double left)
{
	double got = want < left ? want : left;

	g->gpus = (int)ceil(got - 1e-9);
	g->gpu_part = fabs(got - round(got)) > 1e-9 ? got : 0;
}

/* A running instance's segments from now: one for each job leased on it,
 * holding that job's GPUs (a shared type's job its part of one), and an
 * idle one holding the GPUs they leave (jobs side by side: each pays for
 * its GPUs, the rest is idle). A job past the instance's GPUs holds none:
 * no time is counted twice. */
static int open_runs(struct ledger *l, const struct instance *inst, int64_t now)
{
	struct segment next = {.instance = inst->id, .start_ms = now};
	struct job_on on[INSTANCE_GPUS_MAX];
	int n, leased;
	double left = inst->gpus > 0 ? inst->gpus : 1, part;

	if (store_job_leased_on(l->store, inst->id, on, INSTANCE_GPUS_MAX, &n) != 0)
		return -1;
	if ((leased = n) == 0) /* the fleet's job, whose lease the store does not hold: all of it */
		on[n++] = (struct job_on){inst->job_id, (int)left};
	strcpy(next.kind, "job");
	for (int k = 0; k < n && left > 1e-9; k++) {
		if ((part = leased ? part_of(l, on[k].id) : 0) < 0)
			return -1;
		hold(&next, part > 0 ? part : on[k].gpus, left);
		next.job = on[k].id;
		left -= next.gpu_part > 0 ? next.gpu_part : next.gpus;
		if (store_segment_open(l->store, &next) != 0)
			return -1;
	}
	if (left < 1e-9)
		return 0;
	strcpy(next.kind, "idle");
	next.job = 0;
	hold(&next, left, left);
	return store_segment_open(l->store, &next);
}

int ledger_transition(struct ledger *l, struct instance *inst, enum instance_state to)
{
	/* A launch's first segment starts at its launch; the instance keeps the
	 * instant of the change (fleet_set_state), so that its recorded life
	 * and its segments are the same span to the millisecond. */
	int64_t now = to == INST_REQUESTED && inst->launched_ms ? inst->launched_ms : clock_now(l->clock);
	double usd_per_ms = ledger_usd_per_ms(l, inst->offer, inst->market);
	const char *kind = kind_of(to, inst->job_id);
	struct segment closed;
	int rc = 0, n = 0;

	/* Every open segment closes (a job's each and an idle one at most):
	 * the jobs on the instance may have changed. */
	while (n++ <= INSTANCE_GPUS_MAX &&
	       (rc = store_segment_close(l->store, inst->id, now, usd_per_ms, inst->gpus, &closed)) == 0) {
		if ((strcmp(closed.kind, "job") == 0 && closed.job ? job_run_ended(l, inst, &closed)
								   : add_up(l, inst, &closed, inst->team, 0)) != 0)
			return -1;
	}
	if (rc < 0)
		return -1;
	inst->updated_ms = now;
	if (to == INST_TERMINATED)
		return inst->state == INST_TERMINATED ? 0 : terminate(l, inst, now);
	if (kind && strcmp(kind, "job") == 0)
		return open_runs(l, inst, now);
	if (kind) {
		struct segment next = {.instance = inst->id, .start_ms = now};
		strcpy(next.kind, kind);
		return store_segment_open(l->store, &next);
	}
	return 0;
}

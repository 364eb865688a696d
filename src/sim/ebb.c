/* ebb's policy in the simulator: plan()'s view built from the simulated
 * queues and fleet, with the settings the policy was read with (spec.h),
 * and its actions carried out on the engine's instances (sim_internal.h). What
 * serve reads from its store, the arrival rates and the gaps behind the
 * auto idle timeout, is kept here as jobs arrive; what it knows of
 * durations, in known.c. With teams, plan()'s preemptions are carried out
 * as serve's worker carries them out, through the checkpoint path, and a
 * team past its monthly budget gets no launch (replay_teams.c). Its spec
 * (spec.h) is overrides of its config, [scaler] and [lane.NAME] keys. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/classes.h"
#include "policy/plan.h"
#include "policy/settings.h"
#include "sim/sim_internal.h"
#include "sim/ebb_internal.h"

/* A job arrived: the arrival rates and the auto idle timeout follow. */
static void ebb_arrival(struct sim *s, int job)
{
	struct ebb_state *e = ebb_of(s);
	const struct plan_settings *st = &s->policy->settings;
	int64_t at = s->trace->jobs[job].submit_ms;
	struct ebb_queue *q = &e->queues[s->jobs[job].cls];

	if (st->arrival_window_ms > 0) {
		known_decay(s, q);
		q->arrived_jobs += 1;
		known_arrived(s, job);
	}
	if (e->last_submit >= 0) {
		e->gaps[e->ngaps % PLAN_IDLE_GAPS] = at - e->last_submit;
		e->ngaps++;
	}
	e->last_submit = at;
	/* The auto timeouts follow the gaps, as in serve; recomputed every
	 * 100 arrivals to keep a million-job replay fast. The gaps in the
	 * order they came: the surplus timeout adds two in a row. */
	if ((st->idle_timeout.ms == CONF_AUTO || st->idle_surplus_ms == CONF_AUTO) && e->ngaps % 100 == 1) {
		int64_t gaps[PLAN_IDLE_GAPS];
		size_t n = e->ngaps < PLAN_IDLE_GAPS ? e->ngaps : PLAN_IDLE_GAPS, oldest = e->ngaps % PLAN_IDLE_GAPS;
		if (n < PLAN_IDLE_GAPS)
			oldest = 0;
		memcpy(gaps, e->gaps + oldest, (n - oldest) * sizeof *gaps);
		memcpy(gaps + (n - oldest), e->gaps, oldest * sizeof *gaps);
		plan_idle_timeouts(st, s->opts->offers, s->opts->noffers, classes_longest_setup_ms(st, NULL), gaps, n,
				   e->idle_timeout_ms,
				   e->idle_surplus_ms, NULL);
	}
}

/* Room for cap instances: its view of the fleet follows the engine's,
 * slot for slot of roster[], and each instance's links. */
static void ebb_grow(struct sim *s, size_t cap)
{
	struct ebb_state *e = ebb_of(s);

	e->fleet = sim_grown(e->fleet, cap, sizeof *e->fleet);
	e->links = sim_grown(e->links, cap, sizeof *e->links);
}

static void ebb_fleet_sync(struct sim *s, int k)
{
	static const enum instance_state map[] = {INST_BOOTING, INST_IDLE, INST_BUSY, INST_TERMINATED};
	const struct sinst *i = &s->inst[k];
	int busy = i->state == S_BUSY;

	/* Launch order is index order, and removals keep the order: roster[]
	 * is sorted. A busy one is shown by its newest job, as serve shows
	 * it, with the GPUs none of its jobs holds: whole ones, a shared GPU's
	 * room left out, as in serve's view. */
	struct plan_instance *p = &ebb_of(s)->fleet[sim_position(s->roster, s->nroster, k)];

	*p = (struct plan_instance){
		.id = k + 1, .offer = i->offer, .market = i->market,
		.state = i->draining ? INST_DRAINING : map[i->state], .running = busy,
		.launched_ms = i->launched, .idle_since_ms = i->idle_since,
		.team_gpus = 1, .free_gpus = busy ? i->free_gpus : 0,
	};
	if (busy) {
		const struct squeue *q = &s->q[s->jobs[i->newest].cls];
		classes_running(p, &(struct running_job){.since_ms = s->jobs[i->newest].since, .until_ms = known_end_ms(s, k),
							 .team = q->team, .gpus = sim_job_gpus(s, i->newest),
							 .priority = q->priority, .lane_rank = q->lane_rank});
	}
}

void ebb_fleet_end(struct sim *s, int k)
{
	ebb_of(s)->fleet[sim_position(s->roster, s->nroster, k)].busy_until_ms = known_end_ms(s, k);
}

/* The job plan() saw on instance k (its newest) stops at its last
 * checkpoint, at once: the replay has no grace period. Back at the head
 * of its queue, as serve requeues it, or, preempted twice in a row,
 * after [scaler] preempt_backoff (serve's delayed job). */
static void preempt(struct sim *s, int k)
{
	int job = k >= 0 && k < s->ninst && s->inst[k].state == S_BUSY ? s->inst[k].newest : -1;
	int again;

	if (job < 0)
		return;
	again = s->jobs[job].preempted;
	sim_interrupt(s, job);
	s->jobs[job].preempted = 1;
	s->result->preemptions++;
	if (s->result->teams)
		s->result->teams[s->trace->jobs[job].team].preempted++;
	if (again && s->policy->settings.preempt_backoff_ms > 0)
		sim_push(s, (struct event){s->now + s->policy->settings.preempt_backoff_ms, EV_RESUME, -1, job});
	else
		sim_enqueue(s, job, 1);
}

/* plan() on the simulated state, and its actions carried out. */
static void ebb_look(struct sim *s)
{
	struct ebb_state *e = ebb_of(s);
	const struct plan_settings *st = &s->policy->settings;
	struct plan_class *classes;
	struct plan_result *res = e->result;
	/* The engine runs jobs side by side on an instance's GPUs, as serve's
	 * workers do. */
	struct plan_view v = {.now_ms = s->now, .settings = st, .idle_timeout_ms = e->idle_timeout_ms,
			      .idle_surplus_ms = e->idle_surplus_ms,
			      .offers = s->opts->offers, .noffers = s->opts->noffers, .no_reasons = 1, .packs = 1,
			      .work_per_launch_s = e->launches ? e->work_done_s / (double)e->launches : 0};
	int nc = 0;

	/* The view's arrays live as long as the replay: grown, never freed
	 * between the million calls of a long trace. */
	if ((size_t)s->nq + 1 > e->cap_classes) {
		e->classes = sim_grown(e->classes, (size_t)s->nq + 1, sizeof *classes);
		e->cap_classes = (size_t)s->nq + 1;
	}
	classes = e->classes;

	for (int c = 0; c < s->nq; c++) {
		struct squeue *q = &s->q[c];
		struct ebb_queue *eq = &e->queues[c];
		struct plan_class *pc;
		double window_s = (double)st->arrival_window_ms / 1000.0;
		int64_t oldest = q->len ? s->trace->jobs[q->items[q->head]].submit_ms : s->now;
		if (window_s > 0)
			known_decay(s, eq);
		/* A class with nothing queued and hardly any arrivals lately
		 * needs nothing: left out, as serve leaves it out. */
		if (!q->len && (window_s <= 0 || eq->arrived_jobs < 1e-3))
			continue;
		/* Room for every queue: classes_find() cannot fail. Each class
		 * with its jobs' GPU share, as serve's view has it: plan() counts
		 * a shared type's capacity in shares. */
		pc = classes_find(classes, &nc, s->nq, st, q->gpus, q->share, 0, q->lane_rank, q->team, oldest);
		classes_add_queued(pc, q->priority, (int64_t)q->len, (int64_t)q->len,
				   (known_estimates(s) ? (double)eq->est_work_ms : q->work_ms) / 1000.0, oldest);
		/* As serve's view, for queued jobs (not arrivals): their type's
		 * handler setup, the config's (no worker measures one here). */
		if (q->len && q->type >= 0 && s->setup_ms)
			classes_add_setup(pc, s->setup_ms[q->type]);
		if (window_s > 0) {
			pc->arrival_jobs_per_s += eq->arrived_jobs / window_s;
			pc->arrival_work_per_s += eq->arrived_work_ms / 1000.0 / window_s;
		}
	}
	v.classes = classes;
	v.nclasses = nc;
	if (s->nteams) {
		sim_teams_month(s);
		v.over_budget = s->over_budget;
	}
	/* plan() takes the fleet whole: without the holes of instances gone. */
	if (s->nroster != s->nup)
		sim_compact(s);
	v.fleet = e->fleet;
	v.nfleet = s->nup;
	plan(&v, res);
	if (res->nomem)
		mem_out("plan()'s scratch");
	for (int a = 0; a < res->n; a++) {
		const struct action *x = &res->actions[a];
		if (x->kind == ACTION_LAUNCH) {
			for (int n = 0; n < x->count; n++) {
				int k = sim_launch(s, x->offer, x->market, e->starting);
				e->launches++;
				if (s->nteams)
					s->inst[k].launch_team = x->team;
			}
		} else if (x->kind == ACTION_PREEMPT) {
			preempt(s, (int)x->instance - 1);
		} else if (x->instance >= 1 && x->instance <= s->ninst) {
			int k = (int)x->instance - 1;
			if (x->kind == ACTION_DRAIN) {
				s->inst[k].draining = 1;
				ebb_fleet_sync(s, k);
			} else if (s->inst[k].state != S_BUSY)
				sim_stop(s, k);
		}
	}
	s->next_policy = min_positive(res->next_ms, s->next_policy);
	/* A new month lifts the budgets: serve's scaler sees it at its next
	 * run; the replay looks then. */
	if (s->over_budget)
		s->next_policy = min_positive(s->month_end_ms, s->next_policy);
}

/* Its arrays, and its first plan: the warm floor is up when the replay
 * starts; it looks again at the first change. */
static void ebb_start(struct sim *s)
{
	struct ebb_state *e = ebb_of(s);
	const struct plan_settings *st = &s->policy->settings;

	known_start(s);
	/* The engine's classes are all made before the replay starts. */
	e->queues = xcalloc((size_t)s->nq + 1, sizeof *e->queues);
	e->result = sim_grown(NULL, 1, sizeof *e->result);
	e->fleet = sim_grown(NULL, 1, sizeof *e->fleet); /* grown with the instances */
	e->last_submit = -1;
	/* Before any gap: the fixed timeout, or auto's least. */
	plan_idle_timeouts(st, s->opts->offers, s->opts->noffers, classes_longest_setup_ms(st, NULL), NULL, 0,
			   e->idle_timeout_ms, e->idle_surplus_ms, NULL);
	/* The floor it keeps at all times is up when the replay starts, as
	 * always-on's fleet is: the warm pool. Made here, not as one of the
	 * engine's looks: the first arrival is looked at at once. */
	e->starting = 1;
	ebb_look(s);
	e->starting = 0;
	s->next_policy = 0;
}

static void ebb_finished(struct sim *s, int job, int64_t ran_ms)
{
	/* As serve's offer statistics count it: the reference work done. */
	ebb_of(s)->work_done_s += (double)ran_ms / 1000.0 * sim_offer(s, &s->inst[s->jobs[job].inst])->speed;
	known_finished(s, job, ran_ms);
}

static void ebb_moved(struct sim *s, int from, int to)
{
	ebb_of(s)->fleet[to] = ebb_of(s)->fleet[from];
}

/* After any change, at most once per [scaler] interval, as serve's
 * scaler runs. */
static int64_t ebb_on_change(const struct sim *s)
{
	return s->last_policy < 0 ? s->now : s->last_policy + s->policy->settings.interval_ms;
}

/* Its warm pool. */
static int64_t ebb_floor(const struct sim *s)
{
	const struct warm_schedule *w = &s->policy->settings.warm;

	return w->n ? warm_floor(w, s->now) : 0;
}

static void ebb_free(struct sim *s)
{
	struct ebb_state *e = ebb_of(s);

	free(e->queues);
	free(e->links);
	free(e->classes);
	free(e->fleet);
	free(e->result);
	known_free(s);
}

/* SECTION.KEY=VALUE on ebb's config; KEY_s=N is read as the duration KEY
 * in seconds, so `lane.standard.wait_target_s=60` works. */
static int set_config(struct policy *p, const char *key, const char *value, char *err, size_t errsize)
{
	const char *dot = strrchr(key, '.');
	char section[200], name[200], seconds[64];
	size_t n;

	/* Copies: the key as given stays whole, to tell a knob given twice. */
	if (!dot || (size_t)(dot - key) >= sizeof section || strlen(dot + 1) >= sizeof name) {
		snprintf(err, errsize, "ebb:%s: expected SECTION.KEY=VALUE, such as scaler.idle_timeout=auto", key);
		return -1;
	}
	snprintf(section, sizeof section, "%.*s", (int)(dot - key), key);
	snprintf(name, sizeof name, "%s", dot + 1);
	/* The replay reads [scaler] and the lanes' wait targets; the offers
	 * and lanes are the --offers file's, for every policy alike, and the
	 * other sections mean nothing to it: an override would do nothing. */
	if (strcmp(section, "scaler") != 0 &&
	    !(strncmp(section, "lane.", 5) == 0 && config_lane_rank(&p->cfg, section + 5) >= 0)) {
		snprintf(err, errsize, "ebb:%s: only [scaler] and [lane.NAME] keys can be set here, NAME one of %s"
			 " (offers and lanes come from the --offers file)", key, p->cfg.lanes);
		return -1;
	}
	if (config_set(&p->cfg, section, name, value, err, errsize) == 0)
		return 0;
	n = strlen(name);
	if (n > 2 && strcmp(name + n - 2, "_s") == 0) {
		name[n - 2] = '\0';
		snprintf(seconds, sizeof seconds, "%ss", value);
		return config_set(&p->cfg, section, name, seconds, err, errsize);
	}
	return -1;
}

static int ebb_check(struct policy *p, const char *spec, int market_given, int offer_given, char *err,
		     size_t errsize)
{
	char why[400];

	(void)market_given;
	(void)offer_given;
	if (config_check(&p->cfg, why, sizeof why) == 0)
		return 0;
	snprintf(err, errsize, "policy %s: %s", spec, why);
	return -1;
}

const struct sim_policy sim_policy_ebb = {
	.name = "ebb",
	.set = set_config,
	.check = ebb_check,
	.any_offer = policy_every_offer,
	.durations = "estimated",
	.teams = 1,
	.picks_stops = 1,
	.state_size = sizeof(struct ebb_state),
	.free = ebb_free,
	.start = ebb_start,
	.look = ebb_look,
	.on_change = ebb_on_change,
	.floor = ebb_floor,
	.arrival = ebb_arrival,
	.queued = known_queued,
	.running = known_running,
	.finished = ebb_finished,
	.changed = ebb_fleet_sync,
	.grow = ebb_grow,
	.moved = ebb_moved,
};

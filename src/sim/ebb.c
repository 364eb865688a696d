/* ebb's policy in the simulator: plan()'s view built from the simulated
 * queues and fleet, with the settings the policy was read with (spec.h),
 * and its actions carried out on the engine's instances (sim_internal.h). What
 * serve reads from its store, the arrival rates and the gaps behind the
 * auto idle timeout, is kept here as jobs arrive; what it knows of
 * durations, in known.c. With teams, plan()'s preemptions are carried out
 * as serve's worker carries them out, through the checkpoint path, and a
 * team past its monthly budget gets no launch (replay_teams.c). */
#include <string.h>

#include "policy/classes.h"
#include "policy/plan.h"
#include "policy/settings.h"
#include "sim/sim_internal.h"

void ebb_start(struct sim *s)
{
	const struct plan_settings *st = &s->policy->settings;

	s->ebb.result = sim_grown(NULL, 1, sizeof *s->ebb.result);
	s->ebb.fleet = sim_grown(NULL, 1, sizeof *s->ebb.fleet); /* grown with the instances */
	s->ebb.last_submit = -1;
	/* Before any gap: the fixed timeout, or auto's least. */
	plan_idle_timeouts(st, s->opts->offers, s->opts->noffers, NULL, 0, s->ebb.idle_timeout_ms, s->ebb.idle_surplus_ms,
			   NULL);
	/* The floor it keeps at all times is up when the replay starts, as
	 * always-on's fleet is: the warm pool. Made here, not as one of the
	 * engine's looks: the first arrival is looked at at once. */
	s->ebb.starting = 1;
	ebb_policy(s);
	s->ebb.starting = 0;
}

void ebb_arrival(struct sim *s, int job)
{
	const struct plan_settings *st = &s->policy->settings;
	int64_t at = s->trace->jobs[job].submit_ms;
	struct squeue *q = &s->q[s->jobs[job].cls];

	if (st->arrival_window_ms > 0) {
		known_decay(s, q);
		q->arrived_jobs += 1;
		known_arrived(s, job);
	}
	if (s->ebb.last_submit >= 0) {
		s->ebb.gaps[s->ebb.ngaps % PLAN_IDLE_GAPS] = at - s->ebb.last_submit;
		s->ebb.ngaps++;
	}
	s->ebb.last_submit = at;
	/* The auto timeouts follow the gaps, as in serve; recomputed every
	 * 100 arrivals to keep a million-job replay fast. The gaps in the
	 * order they came: the surplus timeout adds two in a row. */
	if ((st->idle_timeout.ms == CONF_AUTO || st->idle_surplus_ms == CONF_AUTO) && s->ebb.ngaps % 100 == 1) {
		int64_t gaps[PLAN_IDLE_GAPS];
		size_t n = s->ebb.ngaps < PLAN_IDLE_GAPS ? s->ebb.ngaps : PLAN_IDLE_GAPS, oldest = s->ebb.ngaps % PLAN_IDLE_GAPS;
		if (n < PLAN_IDLE_GAPS)
			oldest = 0;
		memcpy(gaps, s->ebb.gaps + oldest, (n - oldest) * sizeof *gaps);
		memcpy(gaps + (n - oldest), s->ebb.gaps, oldest * sizeof *gaps);
		plan_idle_timeouts(st, s->opts->offers, s->opts->noffers, gaps, n, s->ebb.idle_timeout_ms,
				   s->ebb.idle_surplus_ms, NULL);
	}
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

void ebb_policy(struct sim *s)
{
	const struct plan_settings *st = &s->policy->settings;
	struct plan_class *classes;
	struct plan_result *res = s->ebb.result;
	/* The engine runs jobs side by side on an instance's GPUs, as serve's
	 * workers do. */
	struct plan_view v = {.now_ms = s->now, .settings = st, .idle_timeout_ms = s->ebb.idle_timeout_ms,
			      .idle_surplus_ms = s->ebb.idle_surplus_ms,
			      .offers = s->opts->offers, .noffers = s->opts->noffers, .no_reasons = 1, .packs = 1,
			      .work_per_launch_s = s->ebb.launches ? s->ebb.work_done_s / (double)s->ebb.launches : 0};
	int nc = 0;

	/* The view's arrays live as long as the replay: grown, never freed
	 * between the million calls of a long trace. */
	if ((size_t)s->nq + 1 > s->ebb.cap_classes) {
		s->ebb.classes = sim_grown(s->ebb.classes, (size_t)s->nq + 1, sizeof *classes);
		s->ebb.cap_classes = (size_t)s->nq + 1;
	}
	classes = s->ebb.classes;

	for (int c = 0; c < s->nq; c++) {
		struct squeue *q = &s->q[c];
		struct plan_class *pc;
		double window_s = (double)st->arrival_window_ms / 1000.0;
		int64_t oldest = q->len ? s->trace->jobs[q->items[q->head]].submit_ms : s->now;
		if (window_s > 0)
			known_decay(s, q);
		/* A class with nothing queued and hardly any arrivals lately
		 * needs nothing: left out, as serve leaves it out. */
		if (!q->len && (window_s <= 0 || q->arrived_jobs < 1e-3))
			continue;
		/* Room for every queue: classes_find() cannot fail. */
		pc = classes_find(classes, &nc, s->nq, st, q->gpus, 0, q->lane_rank, q->team, oldest);
		classes_add_queued(pc, q->priority, (int64_t)q->len, (int64_t)q->len,
				   (known_estimates(s) ? (double)q->est_work_ms : q->work_ms) / 1000.0, oldest);
		if (window_s > 0) {
			pc->arrival_jobs_per_s += q->arrived_jobs / window_s;
			pc->arrival_work_per_s += q->arrived_work_ms / 1000.0 / window_s;
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
	v.fleet = s->ebb.fleet;
	v.nfleet = s->nup;
	plan(&v, res);
	if (res->nomem)
		mem_out("plan()'s scratch");
	for (int a = 0; a < res->n; a++) {
		const struct action *x = &res->actions[a];
		if (x->kind == ACTION_LAUNCH) {
			for (int n = 0; n < x->count; n++) {
				int k = sim_launch(s, x->offer, x->market, s->ebb.starting);
				s->ebb.launches++;
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

void ebb_fleet_grow(struct sim *s, size_t cap)
{
	s->ebb.fleet = sim_grown(s->ebb.fleet, cap, sizeof *s->ebb.fleet);
}

void ebb_fleet_sync(struct sim *s, int k)
{
	static const enum instance_state map[] = {INST_BOOTING, INST_IDLE, INST_BUSY, INST_TERMINATED};
	const struct sinst *i = &s->inst[k];
	int busy = i->state == S_BUSY;

	/* Launch order is index order, and removals keep the order: roster[]
	 * is sorted. A busy one is shown by its newest job, as serve shows
	 * it, with the GPUs none of its jobs holds. */
	struct plan_instance *p = &s->ebb.fleet[sim_position(s->roster, s->nroster, k)];

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
	s->ebb.fleet[sim_position(s->roster, s->nroster, k)].busy_until_ms = known_end_ms(s, k);
}

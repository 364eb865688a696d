/* Teams in plan() (see plan.h, docs/TEAMS.md): each team's room under
 * teams_share(), and preemption when a hard limit binds: borrowed GPUs
 * reclaimed for a team owed its quota, and, with preempt_within, a
 * team's lower priority giving way to its higher. */
#include "policy/plan_internal.h"

#include <limits.h>
#include <stdio.h>

/* Each team's room: what teams_share() allows it, less what its running
 * jobs hold. */
void plan_share_teams(struct planner *p)
{
	struct team_share *sh = p->t->shares;

	for (int k = 0; k < p->v->nfleet; k++) {
		const struct plan_instance *i = &p->v->fleet[k];
		if (i->running && i->state != INST_TERMINATED)
			sh[plan_team_of(p, i->team)].used_gpus += i->team_gpus;
	}
	for (int k = 0; k < p->v->nclasses; k++) {
		const struct plan_class *c = &p->v->classes[k];
		sh[plan_team_of(p, c->team)].queued_gpus += c->jobs * (c->gpus > 1 ? c->gpus : 1);
	}
	teams_share(p->s->teams, p->s->nteams, p->s->max_gpus, sh);
	for (int t = 0; t < p->s->nteams; t++)
		p->t->room[t] = sh[t].allowed_gpus - sh[t].used_gpus;
}

/* Could one more instance of the smallest offer start within the hard
 * limits? Then a team owed GPUs is better served by a launch than by
 * taking them from another team. */
static int launch_would_pass_a_limit(const struct planner *p)
{
	int64_t least = -1;

	for (int o = 0; o < p->v->noffers; o++) {
		if (least < 0 || p->v->offers[o].gpus < least)
			least = p->v->offers[o].gpus;
	}
	return least < 0 || p->count + 1 > p->s->max_instances || p->gpus + least > p->s->max_gpus ||
	       (p->s->max_spend_per_hour > 0 && p->spend > p->s->max_spend_per_hour - 1e-9);
}

/* Whose job may be preempted: with over, one of a team holding more
 * than its share now; with within, one of that team's jobs that the
 * class's top jobs outrank and that frees an instance they fit. */
struct victims {
	const int64_t *over;
	const struct plan_class *within;
	int chosen[PLAN_MAX_ACTIONS]; /* the ones already picked */
	int nchosen;
};

static int may_preempt(const struct planner *p, const struct plan_instance *i, const struct victims *v)
{
	const struct plan_class *c = v->within;

	if (v->over)
		return v->over[plan_team_of(p, i->team)] > 0;
	/* Of a lane served before the class's, it would be leased back first. */
	return plan_team_of(p, i->team) == plan_team_of(p, c->team) && i->priority < c->top_priority &&
	       i->lane_rank >= c->lane_rank && plan_fits(&p->v->offers[i->offer], c);
}

/* The next job to preempt: one may_preempt() allows, run past
 * preempt_min_runtime, lowest priority first, then the most recently
 * started; -1 if none. */
static int pick_preempted(struct planner *p, const struct victims *v)
{
	int best = -1;

	for (int k = 0; k < p->v->nfleet; k++) {
		const struct plan_instance *i = &p->v->fleet[k], *b = best >= 0 ? &p->v->fleet[best] : NULL;
		int dup = 0;
		if (!i->running || i->state != INST_BUSY || i->preempting || !may_preempt(p, i, v))
			continue;
		if (p->v->now_ms - i->busy_since_ms < p->s->preempt_min_runtime_ms) {
			/* Look again when it may be. */
			plan_wake_at(p, i->busy_since_ms + p->s->preempt_min_runtime_ms);
			continue;
		}
		for (int j = 0; j < v->nchosen; j++)
			dup |= v->chosen[j] == k;
		if (dup)
			continue;
		if (!b || i->priority < b->priority ||
		    (i->priority == b->priority && i->busy_since_ms > b->busy_since_ms))
			best = k;
	}
	return best;
}

/* The instance of the next job to preempt, counted as chosen; NULL if none. */
static const struct plan_instance *choose_preempted(struct planner *p, struct victims *v)
{
	int k;

	if (v->nchosen == PLAN_MAX_ACTIONS || (k = pick_preempted(p, v)) < 0)
		return NULL;
	v->chosen[v->nchosen++] = k;
	return &p->v->fleet[k];
}

/* GPUs of team t's jobs asked to stop already, of a priority below
 * `below`: they come back without another preemption. */
static int64_t preempting_gpus(const struct planner *p, int t, int below)
{
	int64_t gpus = 0;

	for (int k = 0; k < p->v->nfleet; k++) {
		const struct plan_instance *i = &p->v->fleet[k];
		if (i->running && i->preempting && plan_team_of(p, i->team) == t && i->priority < below)
			gpus += i->team_gpus;
	}
	return gpus;
}

/* What this plan gave team t: the room it had less the room left. */
static int64_t given_to(const struct planner *p, int t)
{
	const struct team_share *sh = &p->t->shares[t];

	return sh->allowed_gpus - sh->used_gpus - p->t->room[t];
}

/* Reclaim, when a limit really binds: a team with queued work within its
 * quota that this plan could give no GPU to (no free instance, no launch
 * within the hard limits), while other teams hold GPUs beyond their share
 * now, gets them back: their jobs are asked to stop at a checkpoint and go
 * back to the queue. */
static void reclaim_borrowed(struct planner *p, struct victims *v)
{
	int64_t owed = 0, over[CONF_MAX_TEAMS + 1];
	const struct plan_instance *i;
	char short_of[120] = "";

	for (int t = 0; t < p->s->nteams; t++) {
		const struct team_share *sh = &p->t->shares[t];
		int64_t want = sh->used_gpus + sh->queued_gpus;
		int64_t quota = want < p->s->teams[t].quota_gpus ? want : p->s->teams[t].quota_gpus;
		int64_t lacking = quota - sh->used_gpus - given_to(p, t);
		over[t] = sh->used_gpus - sh->allowed_gpus;
		if (over[t] > 0) {
			int64_t coming = preempting_gpus(p, t, INT_MAX);
			coming = coming < over[t] ? coming : over[t];
			over[t] -= coming;
			owed -= coming;
		}
		if (sh->queued_gpus > 0 && lacking > 0) {
			owed += lacking;
			if (!short_of[0] && !p->v->no_reasons)
				snprintf(short_of, sizeof short_of, "team %s is owed %lld GPUs of its quota",
					 p->s->teams[t].name, (long long)lacking);
		}
	}
	if (owed <= 0 || !launch_would_pass_a_limit(p))
		return;
	v->over = over;
	while (owed > 0 && (i = choose_preempted(p, v))) {
		int t = plan_team_of(p, i->team);
		over[t] -= i->team_gpus;
		owed -= i->team_gpus;
		plan_add(p, ACTION_PREEMPT, i->offer, 1, i->id,
		    "preempt the job on %lld (team %s, priority %d): its team holds %lld GPUs beyond its share"
		    " now and %s, with no launch within the hard limits", (long long)i->id, p->s->teams[t].name,
		    i->priority, (long long)(over[t] + i->team_gpus), short_of);
	}
	v->over = NULL;
}

/* The class of team t whose top jobs come first: the highest priority,
 * then the lane served first; NULL when t has none queued. */
static const struct plan_class *top_class(const struct planner *p, int t)
{
	const struct plan_class *top = NULL;

	for (int k = 0; k < p->v->nclasses; k++) {
		const struct plan_class *c = &p->v->classes[k];
		if (plan_team_of(p, c->team) != t || c->top_jobs <= 0)
			continue;
		if (!top || c->top_priority > top->top_priority ||
		    (c->top_priority == top->top_priority && c->lane_rank < top->lane_rank))
			top = c;
	}
	return top;
}

/* [team.NAME] preempt_within: a team at its share (its running jobs hold
 * all it may use now, so no launch and no free instance may serve it)
 * whose queued jobs of the highest priority have no GPU coming takes
 * them from its own running jobs of lower priority, lowest first. A team
 * below its share is not: what it may still use is on its way (a launch,
 * a free instance, an instance released once its preempted job left, or
 * a reclaim from another team). */
static void preempt_within_teams(struct planner *p, struct victims *v)
{
	const struct plan_instance *i;

	for (int t = 0; t < p->s->nteams; t++) {
		const struct plan_class *c = top_class(p, t);
		int64_t gpus = c && c->gpus > 1 ? c->gpus : 1, lacking;
		if (!p->s->teams[t].preempt_within || !c)
			continue;
		if (p->t->shares[t].allowed_gpus - p->t->shares[t].used_gpus >= gpus)
			continue;
		lacking = c->top_jobs * gpus - preempting_gpus(p, t, c->top_priority);
		v->within = c;
		while (lacking > 0 && (i = choose_preempted(p, v))) {
			lacking -= gpus;
			plan_add(p, ACTION_PREEMPT, i->offer, 1, i->id,
			    "preempt the job on %lld (team %s, priority %d): the team is at its share and its"
			    " %lld queued jobs of priority %d outrank it (preempt_within), with no launch within"
			    " its share and the hard limits", (long long)i->id, p->s->teams[t].name, i->priority,
			    (long long)c->top_jobs, c->top_priority);
		}
		v->within = NULL;
	}
}

void plan_preempt(struct planner *p)
{
	struct victims v = {0};

	reclaim_borrowed(p, &v);
	preempt_within_teams(p, &v);
}
